package query

import (
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/values"
)

// exprMatch is a compiled {$expr: <expression>} clause. $$NOW is fixed when
// the filter is compiled, so it is the same for every document of one
// query, as in MongoDB.
type exprMatch struct {
	e   *expr.Expr
	ctx *expr.Context
}

// parseExpr compiles the operand of $expr as an aggregation expression in
// the scope of the command's let variables (the root scope when there are
// none), its comparisons following the filter's collation, in a
// validator's scope for a validator.
func parseExpr(v bson.RawValue, env *parseEnv) (*Node, error) {
	scope, ctx := expr.NewScope(), &expr.Context{Clock: expr.Clock{Now: time.Now()}}
	if env.let != nil {
		scope, ctx = env.let.Scope, env.let.Ctx
	}
	if env.coll != nil {
		scope = scope.Collated(env.coll)
	}
	if env.validator {
		scope = scope.InValidator()
	}
	e, err := expr.Compile(v, scope)
	if err != nil {
		return nil, err
	}
	n := &Node{Kind: KindExpr, Value: v, expr: &exprMatch{e: e, ctx: ctx}}
	if env.validator {
		return n, nil // a validator reads no index
	}
	// MongoDB's ExprMatchExpression::optimize puts beside the $expr the
	// conditions it implies of fields (RewriteExpr), which an index can
	// bound; the $expr still judges every document. Only constants are
	// known here, the command's let variables among them.
	c, ok := e.Rewrite(nil)
	if !ok {
		return n, nil
	}
	return &Node{Kind: KindAnd, Children: []*Node{n, condNode(c)}}, nil
}

// condNode is the filter node of the condition c.
func condNode(c expr.Cond) *Node {
	switch c.Op {
	case "$and", "$or":
		n := &Node{Kind: KindAnd}
		if c.Op == "$or" {
			n.Kind = KindOr
		}
		for _, cc := range c.Conds {
			n.Children = append(n.Children, condNode(cc))
		}
		return n
	}
	return leaf(condKinds[c.Op], c.Path, c.Value, nil)
}

// condKinds are the $_internalExpr kinds of the comparisons of a Cond.
var condKinds = map[string]Kind{"$eq": KindExprEq, "$gt": KindExprGt, "$gte": KindExprGte, "$lt": KindExprLt, "$lte": KindExprLte}

// exprCompares is a $_internalExpr comparison of the value at n's path:
// true when an array lies along the path (the $expr judges those),
// otherwise the value (missing where the path ends) compared with n's
// operand in the expression language's order under n's collation, as
// MongoDB's InternalExprComparisonMatchExpression matches.
func (n *Node) exprCompares(doc []byte) bool {
	v := bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}
	for _, p := range n.walk.path {
		switch v.Type {
		case bson.TypeArray:
			return true
		case bson.TypeEmbeddedDocument:
			v = rawdoc.Lookup(v.Value, p.name)
		default:
			v = bson.RawValue{}
		}
	}
	return n.exprComparesValue(v)
}

// exprComparesValue is exprCompares of the value v found at n's path.
func (n *Node) exprComparesValue(v bson.RawValue) bool {
	if v.Type == bson.TypeArray {
		return true
	}
	c := n.coll.Compare(v, n.Value)
	switch n.Kind {
	case KindExprEq:
		return c == 0
	case KindExprGt:
		return c > 0
	case KindExprGte:
		return c >= 0
	case KindExprLt:
		return c < 0
	}
	return c <= 0
}

// parseSampleRate is {$sampleRate: rate}: each document matches with
// probability rate, as MongoDB rewrites it, {$expr: {$lt: [{$rand: {}},
// rate]}}, a constant false at 0 and true at 1.
func parseSampleRate(v bson.RawValue, env *parseEnv) (*Node, error) {
	if !values.IsNumber(v.Type) {
		return nil, mongoerr.New(mongoerr.BadValue, "argument to $sampleRate must be a numeric type")
	}
	rate, _ := values.Float64(v)
	var e bson.RawValue
	switch {
	case !(rate >= 0 && rate <= 1):
		return nil, mongoerr.New(mongoerr.BadValue, "numeric argument to $sampleRate must be in [0, 1]")
	case rate == 0 || rate == 1:
		e = bson.RawValue{Type: bson.TypeBoolean, Value: bsoncore.AppendBoolean(nil, rate == 1)}
	default:
		doc, err := bson.Marshal(bson.D{{Key: "$lt", Value: bson.A{bson.D{{Key: "$rand", Value: bson.D{}}}, rate}}})
		if err != nil {
			return nil, err
		}
		e = bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}
	}
	return parseExpr(e, env)
}

// exprFailure carries an evaluation error out of a match: MongoDB fails the
// whole query when $expr fails on a document (a $divide by zero, a type
// error), so the error unwinds to MatchErr.
type exprFailure struct{ err error }

// matches reports whether the expression is truthy for doc: false, null,
// missing, undefined and numeric zero (of any type, decimal zeros with any
// exponent included) are false, everything else is true.
func (m *exprMatch) matches(doc []byte) bool {
	v, err := m.e.Eval(m.ctx, doc)
	if err != nil {
		panic(exprFailure{err})
	}
	return values.Truthy(v)
}

// CondFilter is the filter document of the condition c: {path:
// {$_internalExprEq: value}}, or {$and: [...]} and {$or: [...]} of those.
func CondFilter(c expr.Cond) bson.Raw {
	start, doc := bsoncore.AppendDocumentStart(nil)
	switch c.Op {
	case "$and", "$or":
		astart, arr := bsoncore.AppendArrayElementStart(doc, c.Op)
		for i, cc := range c.Conds {
			arr = bsoncore.AppendDocumentElement(arr, strconv.Itoa(i), CondFilter(cc))
		}
		doc, _ = bsoncore.AppendArrayEnd(arr, astart)
	default:
		ostart, op := bsoncore.AppendDocumentElementStart(doc, c.Path)
		op = bsoncore.AppendValueElement(op, condKinds[c.Op].String(), bsoncore.Value{Type: bsoncore.Type(c.Value.Type), Data: c.Value.Value})
		doc, _ = bsoncore.AppendDocumentEnd(op, ostart)
	}
	doc, _ = bsoncore.AppendDocumentEnd(doc, start)
	return doc
}
