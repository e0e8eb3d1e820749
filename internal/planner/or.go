package planner

import (
	"github.com/folio-db/folio/internal/collation"
	"slices"

	"github.com/folio-db/folio/internal/query"
)

// orPlans are the index unions of the query (MongoDB's OR stage): one for
// each $or among the conjuncts whose every branch some index bounds. A
// branch is planned with its own conditions and the other conjuncts (a
// match satisfies both), by the best-scoring bounded scan; the union
// yields each document once, whatever branches hold it, in no useful
// order.
func orPlans(indexes []Index, leaves []*query.Node, idColl *collation.Collator, storeByID bool) []*Plan {
	var out []*Plan
	for i, n := range leaves {
		if n.Kind != query.KindOr {
			continue
		}
		outer := slices.Delete(slices.Clone(leaves), i, i+1)
		or := &Plan{}
		for _, br := range n.Children {
			p := bestBounded(indexes, append(slices.Clip(outer), constraintLeaves(br)...), idColl, storeByID)
			if p == nil {
				or = nil
				break
			}
			or.Or = append(or.Or, p)
		}
		if or != nil {
			out = append(out, or)
		}
	}
	return out
}

// bestBounded is the best-scoring scan that bounds the query of leaves
// by key intervals, or nil when no index does; the document store is one
// of the indexes when it is in _id order (storeByID).
func bestBounded(indexes []Index, leaves []*query.Node, idColl *collation.Collator, storeByID bool) *Plan {
	var best *Plan
	if storeByID {
		if best = buildWith(nil, idColl, leaves, nil, nil); best.Intervals == nil {
			best = nil
		}
	}
	indexes = expandWildcards(indexes, leaves)
	for i := range indexes {
		ix := &indexes[i]
		if !holdsEveryMatch(leaves, ix) {
			continue
		}
		p := build(ix, leaves, nil, nil)
		if p.Intervals != nil && (best == nil || Score(p) > Score(best)) {
			best = p
		}
	}
	return best
}
