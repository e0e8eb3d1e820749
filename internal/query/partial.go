package query

import (
	"strings"

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
