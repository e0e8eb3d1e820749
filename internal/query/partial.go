package query

import (
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/geo"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// partialMaxDepth is MongoDB's internalPartialFilterExpressionMaxDepth.
const partialMaxDepth = 4

// CheckPartial refuses a partialFilterExpression MongoDB does not build an
// index with (CannotCreateIndex): its tree may hold only equalities,
// ranges, {$exists: true}, $type, $in and $geoWithin or $geoIntersects,
// under $and and $or, at most partialMaxDepth levels deep. Negations ($ne,
// $nin, $not, $nor, {$exists: false}) and the other operators are refused.
// Every $and counts as a level, one of a single clause too: the root is
// the filter's only clause when it has one, as MongoDB's parse returns it,
// so {$and: [{$and: [{$and: [{x: 3}]}]}]} is four levels deep.
func (f *Filter) CheckPartial() error {
	return checkPartial(f.root, 0)
}

func checkPartial(n *Node, level int) error {
	if level+1 > partialMaxDepth {
		return mongoerr.New(mongoerr.CannotCreateIndex, "partialFilterExpression depth may not exceed %d", partialMaxDepth)
	}
	switch n.Kind {
	case KindAnd, KindOr:
		for _, c := range n.Children {
			if err := checkPartial(c, level+1); err != nil {
				return err
			}
		}
		return nil
	case KindEq, KindLt, KindLte, KindGt, KindGte, KindExists, KindType, KindIn:
		return nil
	case KindGeo:
		if n.geo.Op != geo.Near {
			return nil
		}
	}
	var b strings.Builder
	debugNode(&b, n, 0)
	return mongoerr.New(mongoerr.CannotCreateIndex, "Expression not supported in partial index: %s", b.String())
}

// debugNode writes n in the form of MongoDB's MatchExpression debugString:
// one line per node, indented four spaces per level.
func debugNode(b *strings.Builder, n *Node, indent int) {
	b.WriteString(strings.Repeat("    ", indent))
	switch {
	case n.Kind == KindAnd || n.Kind == KindOr || n.Kind == KindNor || n.Kind == KindNot:
		b.WriteString(n.Kind.String() + "\n")
		for _, c := range n.Children {
			debugNode(b, c, indent+1)
		}
		return
	case n.Kind == KindExists:
		b.WriteString(n.Path + " exists")
	case n.Kind == KindRegex:
		pattern, options := n.Value.Regex()
		b.WriteString(n.Path + " regex /" + pattern + "/" + options)
	case n.Value.Type != 0:
		b.WriteString(n.Path + " " + n.Kind.String() + " " + values.Shell(n.Value))
	default:
		b.WriteString(strings.TrimSpace(n.Path + " " + n.Kind.String()))
	}
	b.WriteString("\n")
}

// Equivalent reports whether f and o are one filter once MongoDB
// normalizes them (parseAndNormalize, then MatchExpression::equivalent),
// as index signatures compare partial filters: a $and or $or within one
// of its kind is flattened into it, one of a single clause is that
// clause, a $and's clauses are sorted as MongoDB sorts them
// (sortedClauses) and compared in that order, a $or's match in any order,
// and operands compare as values (2 and 2.0 alike, a $in as a set, a
// $type as its types).
func (f *Filter) Equivalent(o *Filter) bool {
	return equivalentNodes(normalizedNode(f.root), normalizedNode(o.root))
}

func normalizedNode(n *Node) *Node {
	if n.Kind != KindAnd && n.Kind != KindOr {
		return n
	}
	kids := make([]*Node, 0, len(n.Children))
	for _, c := range n.Children {
		if c = normalizedNode(c); c.Kind == n.Kind {
			kids = append(kids, c.Children...)
		} else {
			kids = append(kids, c)
		}
	}
	if len(kids) == 1 {
		return kids[0]
	}
	cp := *n
	cp.Children = kids
	return &cp
}

func equivalentNodes(a, b *Node) bool {
	if a.Kind != b.Kind || a.Path != b.Path {
		return false
	}
	switch a.Kind {
	case KindAnd:
		if len(a.Children) != len(b.Children) {
			return false
		}
		as, bs := sortedClauses(a.Children), sortedClauses(b.Children)
		for i := range as {
			if !equivalentNodes(as[i], bs[i]) {
				return false
			}
		}
		return true
	case KindOr:
		// matched as a set: MongoDB's optimizer turns an $or of
		// equalities on one path into a $in, whose values are a set
		if len(a.Children) != len(b.Children) {
			return false
		}
		used := make([]bool, len(b.Children))
	next:
		for _, ca := range a.Children {
			for j, cb := range b.Children {
				if !used[j] && equivalentNodes(ca, cb) {
					used[j] = true
					continue next
				}
			}
			return false
		}
		return true
	case KindEq, KindLt, KindLte, KindGt, KindGte:
		return sameValue(a.Value, b.Value)
	case KindIn:
		av, err1 := a.Value.Array().Values()
		bv, err2 := b.Value.Array().Values()
		return err1 == nil && err2 == nil && subsetOf(av, bv) && subsetOf(bv, av)
	case KindType:
		return a.types == b.types
	case KindExists:
		return values.Truthy(a.Value) == values.Truthy(b.Value)
	}
	return a.Value.Equal(b.Value)
}

// sortedClauses orders a $and's clauses as MongoDB's sortTree does
// before two filters are compared clause by clause (compareClauses).
func sortedClauses(clauses []*Node) []*Node {
	out := slices.Clone(clauses)
	slices.SortStableFunc(out, compareClauses)
	return out
}

// sameValue reports whether two operands compare equal, as woCompare does.
func sameValue(a, b bson.RawValue) bool {
	return values.Compare(a, b) == 0
}

func subsetOf(a, b []bson.RawValue) bool {
	for _, v := range a {
		if !slices.ContainsFunc(b, func(w bson.RawValue) bool { return sameValue(v, w) }) {
			return false
		}
	}
	return true
}
