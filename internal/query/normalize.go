package query

import (
	"slices"
	"strings"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/values"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// Normalized is the filter as MongoDB 7.0's explain reports it
// (parsedQuery, and a stage's filter): the tree MatchExpression::optimize
// leaves, its lists sorted as sortMatchExpressionTree sorts them, each node
// serialized by its own rule ({a: 5} is {a: {$eq: 5}}, {a: {$ne: 5}} is
// {a: {$not: {$eq: 5}}}, two clauses are a $and). An $expr's expression is
// shown as written unless exprShown knows its form, and a $jsonSchema as
// its schema.
func (f *Filter) Normalized() bson.D {
	return serializeNode(normalize(f.root))
}

// Shown is filter, a filter or a part of one, as explain shows it: parsed
// under let and coll and normalized, or as written when it does not parse
// (a part reading let variables it was not given).
func Shown(filter bson.Raw, let *expr.Let, coll *collation.Collator) any {
	f, err := CompileCollated(filter, let, coll)
	if err != nil {
		return filter
	}
	return f.Normalized()
}

// normalize is a copy of n's tree as MongoDB's optimizer leaves it: an
// $expr of a constant that is true is a $and of no clauses; a $and
// (an $or) absorbs the clauses of the $ands ($ors) among its clauses,
// appending them after its own, and drops clauses always true (always
// false); a list of one clause is that clause ($nor: its negation); a $and
// holding a clause always false is one, as is an $or of none; an $or of
// two or more equalities or regexes on one path is a $in; a $in of one
// value is an equality (of one regex, a regex). Then each list is sorted
// by compareClauses, its clauses first.
func normalize(n *Node) *Node {
	out := normalizeNode(n)
	sortTree(out)
	return out
}

func normalizeNode(n *Node) *Node {
	c := *n
	if len(n.Children) > 0 {
		c.Children = make([]*Node, 0, len(n.Children))
		for _, ch := range n.Children {
			c.Children = append(c.Children, normalizeNode(ch))
		}
	}
	switch c.Kind {
	case KindAnd, KindOr:
		return normalizeList(&c)
	case KindNor:
		if len(c.Children) == 1 {
			return not(c.Children[0])
		}
	case KindExpr:
		if exprTriviallyTrue(&c) {
			return &Node{Kind: KindAnd}
		}
	case KindIn:
		eqs, res := inOperands(&c)
		switch {
		case len(eqs) == 1 && len(res) == 0:
			return leaf(KindEq, c.Path, eqs[0], nil)
		case len(eqs) == 0 && len(res) == 1:
			return leaf(KindRegex, c.Path, res[0], nil)
		}
	}
	return &c
}

// normalizeList applies ListOfMatchExpression's optimizer to $and or $or n,
// whose clauses are normalized.
func normalizeList(n *Node) *Node {
	kept := n.Children[:0:0]
	var absorbed []*Node
	for _, c := range n.Children {
		if c.Kind == n.Kind {
			absorbed = append(absorbed, c.Children...)
			continue
		}
		kept = append(kept, c)
	}
	kept = append(kept, absorbed...)
	isAnd := n.Kind == KindAnd
	kept = slices.DeleteFunc(kept, func(c *Node) bool {
		if isAnd {
			return triviallyTrue(c)
		}
		return triviallyFalse(c)
	})
	switch {
	case len(kept) == 0 && !isAnd:
		return &Node{Kind: KindAlwaysFalse}
	case len(kept) == 1:
		return kept[0]
	}
	for _, c := range kept {
		if isAnd && triviallyFalse(c) {
			return &Node{Kind: KindAlwaysFalse}
		}
		if !isAnd && triviallyTrue(c) {
			return &Node{Kind: KindAlwaysTrue}
		}
	}
	if !isAnd && equalitiesOnOnePath(kept) {
		return orAsIn(kept)
	}
	n.Children = kept
	return n
}

// exprTriviallyTrue reports whether $expr n is a constant that is true,
// which ExprMatchExpression's optimizer replaces with a $and of no clauses
// (always true; isTriviallyTrue), so a $and drops it and explain shows
// nothing of it.
func exprTriviallyTrue(n *Node) bool {
	e := n.expr.e
	return e.IsConstant() && values.Truthy(e.Constant())
}

func triviallyTrue(n *Node) bool {
	return n.Kind == KindAlwaysTrue || n.Kind == KindAnd && len(n.Children) == 0
}

func triviallyFalse(n *Node) bool {
	return n.Kind == KindAlwaysFalse || n.Kind == KindOr && len(n.Children) == 0
}

// sortTree sorts, below n and then at n, the clauses of each $and, $or
// and $nor and the conditions of each $elemMatch on values.
func sortTree(n *Node) {
	for _, c := range n.Children {
		sortTree(c)
	}
	switch n.Kind {
	case KindAnd, KindOr, KindNor, KindElemMatchValue:
		slices.SortStableFunc(n.Children, compareClauses)
	}
}

// inOperands are $in n's equalities, sorted (under its collation) with
// duplicates dropped, and its regexes in the order written, as
// InMatchExpression keeps them.
func inOperands(n *Node) (eqs, res []bson.RawValue) {
	arr, _ := n.Value.Array().Values()
	for _, v := range arr {
		if v.Type == bson.TypeRegex {
			res = append(res, v)
		} else {
			eqs = append(eqs, v)
		}
	}
	cmp := values.Compare
	if n.coll != nil {
		cmp = func(a, b bson.RawValue) int { return values.Compare(n.coll.Transform(a), n.coll.Transform(b)) }
	}
	slices.SortStableFunc(eqs, cmp)
	return slices.CompactFunc(eqs, func(a, b bson.RawValue) bool { return cmp(a, b) == 0 }), res
}

// serializeNode is n as MatchExpression::serialize writes it.
func serializeNode(n *Node) bson.D {
	switch n.Kind {
	case KindAnd, KindOr, KindNor:
		if len(n.Children) == 0 {
			if n.Kind == KindOr {
				return bson.D{{Key: "$alwaysFalse", Value: int32(1)}}
			}
			return bson.D{}
		}
		list := make(bson.A, len(n.Children))
		for i, c := range n.Children {
			list[i] = serializeNode(c)
		}
		return bson.D{{Key: n.Kind.String(), Value: list}}
	case KindNot:
		c := n.Children[0]
		if c.Kind == KindAnd && len(c.Children) == 0 {
			return bson.D{{Key: "$alwaysFalse", Value: int32(1)}}
		}
		if c.Kind == KindAnd && len(c.Children) == 1 {
			c = c.Children[0]
		}
		if pathNode(c) {
			return bson.D{{Key: c.Path, Value: bson.D{{Key: "$not", Value: rightHandSide(c)}}}}
		}
		return bson.D{{Key: "$nor", Value: bson.A{serializeNode(c)}}}
	case KindAlwaysTrue, KindAlwaysFalse:
		return bson.D{{Key: n.Kind.String(), Value: int32(1)}}
	case KindExpr:
		// An expression its optimizer folds to a constant serializes as
		// ExpressionConstant does, {$const: value}.
		if e := n.expr.e; e.IsConstant() && e.Constant().Type != 0 {
			return bson.D{{Key: "$expr", Value: bson.D{{Key: "$const", Value: e.Constant()}}}}
		}
		return bson.D{{Key: "$expr", Value: exprShown(n.Value)}}
	case KindJSONSchema:
		return bson.D{{Key: n.Kind.String(), Value: n.Value}}
	case KindSchemaMinProperties, KindSchemaMaxProperties:
		return bson.D{{Key: n.Kind.String(), Value: n.count}}
	case KindWhere:
		code, _ := n.Value.StringValueOK()
		if n.Value.Type == bson.TypeJavaScript {
			code = n.Value.JavaScript()
		}
		return bson.D{{Key: "$where", Value: bson.JavaScript(code)}}
	case KindText:
		t := n.text
		return bson.D{{Key: "$text", Value: bson.D{
			{Key: "$search", Value: t.Search}, {Key: "$language", Value: t.language()},
			{Key: "$caseSensitive", Value: t.CaseSensitive}, {Key: "$diacriticSensitive", Value: t.DiacriticSensitive},
		}}}
	}
	return bson.D{{Key: n.Path, Value: rightHandSide(n)}}
}

// pathNode reports whether n is one of MongoDB's PathMatchExpressions,
// which a $not keeps under their path ({a: {$not: {...}}}); the negation of
// any other is a $nor of one clause.
func pathNode(n *Node) bool {
	switch n.Kind {
	case KindAnd, KindOr, KindNor, KindNot, KindAlwaysTrue, KindAlwaysFalse, KindExpr,
		KindJSONSchema, KindWhere, KindText, KindSchemaMinProperties, KindSchemaMaxProperties:
		return false
	}
	return true
}

// rightHandSide is a path node's operator document, or, for a $not or
// $and inside an $elemMatch on values, theirs merged ({$not: {$gt: 1,
// $lt: 5}}).
func rightHandSide(n *Node) bson.D {
	switch n.Kind {
	case KindNot:
		return bson.D{{Key: "$not", Value: rightHandSide(n.Children[0])}}
	case KindAnd:
		return mergedRightHandSides(n.Children)
	case KindExists:
		return bson.D{{Key: "$exists", Value: true}}
	case KindIn:
		eqs, res := inOperands(n)
		list := make(bson.A, 0, len(eqs)+len(res))
		for _, v := range eqs {
			list = append(list, v)
		}
		for _, v := range res {
			list = append(list, v)
		}
		return bson.D{{Key: "$in", Value: list}}
	case KindRegex:
		pattern, options := n.Value.Regex()
		d := bson.D{{Key: "$regex", Value: pattern}}
		if options != "" {
			d = append(d, bson.E{Key: "$options", Value: options})
		}
		return d
	case KindMod:
		return bson.D{{Key: "$mod", Value: bson.A{n.mod[0], n.mod[1]}}}
	case KindSize:
		return bson.D{{Key: "$size", Value: int32(n.size)}}
	case KindType:
		return bson.D{{Key: "$type", Value: n.types.serialized()}}
	case KindBitsAllSet, KindBitsAnySet, KindBitsAllClear, KindBitsAnyClear:
		list := make(bson.A, len(n.bits))
		for i, p := range n.bits {
			list[i] = int32(p)
		}
		return bson.D{{Key: n.Kind.String(), Value: list}}
	case KindElemMatchObject:
		return bson.D{{Key: "$elemMatch", Value: serializeNode(n.Children[0])}}
	case KindElemMatchValue:
		return bson.D{{Key: "$elemMatch", Value: mergedRightHandSides(n.Children)}}
	case KindGeo:
		// the operator document as written (see parseGeo)
		elems, _ := bson.Raw(n.Value.Value).Elements()
		d := make(bson.D, len(elems))
		for i, e := range elems {
			d[i] = bson.E{Key: e.Key(), Value: e.Value()}
		}
		return d
	}
	return bson.D{{Key: n.Kind.String(), Value: n.Value}}
}

// mergedRightHandSides is the operator documents of conditions on one
// value merged into one ({$lt: 5, $gt: 1}).
func mergedRightHandSides(conds []*Node) bson.D {
	var d bson.D
	for _, c := range conds {
		d = append(d, rightHandSide(c)...)
	}
	return d
}

// exprShown is an $expr's expression as MongoDB serializes it once
// optimized, for the expressions whose optimization changes nothing but
// how literals are written: a comparison ($eq, $ne, $gt, $gte, $lt, $lte,
// $cmp) or $in of two operands, each a field path or variable (as
// written), a $literal, or a literal holding no $-prefixed string or field
// name (both shown {$const: v}), and an $and or $or of two or more such
// comparisons. Any other expression is shown as written.
func exprShown(v bson.RawValue) any {
	if shown, ok := exprForm(v, true); ok {
		return shown
	}
	return v
}

// exprComparisons are the operators exprShown knows with two operands:
// the comparisons, and $in, whose optimize folds only constant operands.
var exprComparisons = map[string]bool{"$eq": true, "$ne": true, "$gt": true, "$gte": true, "$lt": true, "$lte": true, "$cmp": true, "$in": true}

// exprForm is exprShown's form of v, a comparison or (top, where
// logical) an $and or $or of comparisons, and whether v is one.
func exprForm(v bson.RawValue, logical bool) (any, bool) {
	op, arg, ok := oneField(v)
	if !ok {
		return nil, false
	}
	args, ok := arg.ArrayOK()
	if !ok {
		return nil, false
	}
	vals, err := args.Values()
	if err != nil {
		return nil, false
	}
	out := make(bson.A, len(vals))
	switch {
	case exprComparisons[op] && len(vals) == 2:
		for i, a := range vals {
			if s, ok := a.StringValueOK(); ok && strings.HasPrefix(s, "$") {
				out[i] = s
				continue
			}
			if lit, ok := literalOperand(a); ok {
				a = lit
			} else if !plainLiteral(a) {
				return nil, false
			}
			out[i] = bson.D{{Key: "$const", Value: a}}
		}
	case logical && (op == "$and" || op == "$or") && len(vals) >= 2:
		for i, a := range vals {
			if out[i], ok = exprForm(a, false); !ok {
				return nil, false
			}
		}
	default:
		return nil, false
	}
	return bson.D{{Key: op, Value: out}}, true
}

// literalOperand is v's operand when v is {$literal: x} or {$const: x}.
func literalOperand(v bson.RawValue) (bson.RawValue, bool) {
	key, x, ok := oneField(v)
	return x, ok && (key == "$literal" || key == "$const")
}

// oneField is the name and value of v's one field, when v is a document
// of exactly one field.
func oneField(v bson.RawValue) (string, bson.RawValue, bool) {
	doc, ok := v.DocumentOK()
	if !ok {
		return "", bson.RawValue{}, false
	}
	elems, err := doc.Elements()
	if err != nil || len(elems) != 1 {
		return "", bson.RawValue{}, false
	}
	return elems[0].Key(), elems[0].Value(), true
}

// plainLiteral reports whether v is a value an expression reads as itself:
// no string in it starts with "$" and no field name of a document in it
// does.
func plainLiteral(v bson.RawValue) bool {
	switch v.Type {
	case bson.TypeString:
		return !strings.HasPrefix(v.StringValue(), "$")
	case bson.TypeEmbeddedDocument, bson.TypeArray:
		elems, err := bson.Raw(v.Value).Elements()
		if err != nil {
			return false
		}
		for _, e := range elems {
			if v.Type == bson.TypeEmbeddedDocument && strings.HasPrefix(e.Key(), "$") || !plainLiteral(e.Value()) {
				return false
			}
		}
	}
	return true
}

// NormalizedConjuncts are the clauses of the $and of clauses as MongoDB's
// optimizer leaves it before planning: a nested $and's clauses are its own,
// an $or of one clause is that clause and a $in of one value an equality.
// The planner reads the equalities pinning an index's prefix fields (a text
// index's, which must all be pinned) from these.
func NormalizedConjuncts(clauses []*Node) []*Node {
	n := normalizeNode(&Node{Kind: KindAnd, Children: clauses})
	if n.Kind == KindAnd {
		return n.Children
	}
	return []*Node{n}
}
