package query

import (
	"cmp"
	"slices"
	"strings"

	"github.com/folio-db/folio/internal/geo"
)

// MongoDB normalizes a query's tree before it matches a document for a
// positional update or projection (CanonicalQuery's MatchExpression::
// normalize): the optimizer replaces a $and or $or of one clause by the
// clause and hoists the clauses of a $and nested in a $and to the end of
// its parent's, then sortTree orders each $and's clauses by
// matchExpressionComparator. A $and reports the array position
// (MatchDetails' elemMatchKey) of the last clause that recorded one, so it
// is the clause last in that order, not in the filter's, whose position a
// `$` names: {a: {$gt: 1, $lt: 3}} on a: [1, 2, 3] evaluates $lt (index 0)
// before $gt (index 1) and updates a.1, and {b: 5, a: 2} takes b's
// position. Folio evaluates the clauses as written; rankPositions gives
// each clause its rank in MongoDB's order (posRank), and a $and reports
// the position of its matching clause of highest rank.

// matchTypeRank is a node's place in MongoDB 7.0's MatchExpression::
// MatchType enumeration, the first key of matchExpressionComparator. A
// $in of one value ranks as the equality (or regex) it becomes (an $or
// MongoDB's optimizer makes a $in is one already: orAsIn).
func matchTypeRank(n *Node) int {
	switch n.Kind {
	case KindAnd:
		return 0
	case KindOr:
		return 1
	case KindElemMatchObject:
		return 2
	case KindElemMatchValue:
		return 3
	case KindSize:
		return 4
	case KindEq:
		return 5
	case KindLte:
		return 6
	case KindLt:
		return 7
	case KindGt:
		return 8
	case KindGte:
		return 9
	case KindRegex:
		return 10
	case KindMod:
		return 11
	case KindExists:
		return 12
	case KindIn:
		if n.in != nil && len(n.in.sorted)+len(n.in.regexes) == 1 {
			if len(n.in.regexes) == 1 {
				return 10
			}
			return 5
		}
		return 13
	case KindBitsAllSet:
		return 14
	case KindBitsAllClear:
		return 15
	case KindBitsAnySet:
		return 16
	case KindBitsAnyClear:
		return 17
	case KindNot:
		return 19
	case KindNor:
		return 20
	case KindType:
		return 21
	case KindGeo:
		if n.geo != nil && n.geo.Op == geo.Near {
			return 27
		}
		return 22
	case KindWhere:
		return 23
	case KindExpr:
		return 24
	case KindAlwaysFalse:
		return 25
	case KindAlwaysTrue:
		return 26
	case KindText:
		return 28
	}
	return 29 // $jsonSchema and its internal expressions come after
}

// compareClauses orders clauses as matchExpressionComparator does: by
// MatchType, path, then their clauses and their number of clauses; the
// operand does not count, so clauses of one kind on one path keep their
// order ({$and: [{a: {$type: 1}}, {a: {$type: 2}}]} and its reverse are
// two filters: index_signature.js, SERVER-47661). Clauses MongoDB finds
// equal but Folio holds as two kinds (an equality and a $in of one value)
// are then ordered by kind, so that a tie is always between like clauses.
func compareClauses(x, y *Node) int {
	if c := cmp.Compare(matchTypeRank(x), matchTypeRank(y)); c != 0 {
		return c
	}
	if c := strings.Compare(x.Path, y.Path); c != 0 {
		return c
	}
	xc, yc := x.Children, y.Children
	for i := range min(len(xc), len(yc)) {
		if c := compareClauses(xc[i], yc[i]); c != 0 {
			return c
		}
	}
	if c := cmp.Compare(len(xc), len(yc)); c != 0 {
		return c
	}
	return cmp.Compare(x.Kind, y.Kind)
}

// hoisted is the clause MongoDB's optimizer leaves in c's place: c less
// its wrappers of one clause ($and, or an $or it does not make a $in).
func hoisted(c *Node) *Node {
	for (c.Kind == KindAnd || c.Kind == KindOr) && len(c.Children) == 1 {
		c = c.Children[0]
	}
	return c
}

// rankPositions sets the posRank of the clauses of each $and of root's
// tree: its place in MongoDB's normalized $and. A $and whose clauses
// MongoDB hoists into its parent's is marked absorbed, its clauses ranked
// among its parent's.
func rankPositions(root *Node) {
	Walk(root, func(n *Node) bool {
		if n.Kind != KindAnd || n.absorbed {
			return true
		}
		var buf [8]*Node
		clauses := andClauses(n, buf[:0])
		slices.SortStableFunc(clauses, compareClauses)
		for i, c := range clauses {
			c.posRank = int32(i)
		}
		return true
	})
}

// andClauses appends the clauses of $and n as MongoDB's optimizer leaves
// them: each clause, less its wrappers of one clause, in place, then the
// clauses of the $ands among them, appended in turn. The $ands it passes
// through, wrappers of one clause too, are marked absorbed.
func andClauses(n *Node, out []*Node) []*Node {
	for _, c := range n.Children {
		if h := hoisted(c); h.Kind != KindAnd {
			out = append(out, h)
		}
	}
	for _, c := range n.Children {
		for w := c; w != hoisted(c); w = w.Children[0] {
			w.absorbed = w.Kind == KindAnd
		}
		if h := hoisted(c); h.Kind == KindAnd {
			h.absorbed = true
			out = andClauses(h, out)
		}
	}
	return out
}

// matchAnd evaluates $and n's clauses in the filter's order; the position
// it reports is that of the matching clause of highest posRank that
// recorded one, and rank that rank (-1 with no position).
func (n *Node) matchAnd(doc []byte) (ok bool, pos int, rank int32) {
	pos, rank = -1, -1
	for _, c := range n.Children {
		c = hoisted(c)
		var p int
		r := c.posRank
		if c.Kind == KindAnd {
			ok, p, r = c.matchAnd(doc)
		} else {
			ok, p = c.matchDoc(doc)
		}
		if !ok {
			return false, -1, -1
		}
		if p >= 0 && r >= rank {
			pos, rank = p, r
		}
	}
	return true, pos, rank
}
