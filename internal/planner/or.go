package planner

import (
	"github.com/folio-db/folio/internal/collation"
	"slices"

	"github.com/folio-db/folio/internal/query"
)

// orPlans are the index unions of the query (MongoDB's OR stage): one for
// each $or among the conjuncts whose every branch some index bounds.
func orPlans(indexes []Index, leaves []*query.Node, idColl *collation.Collator, storeByID bool) []*Plan {
	var out []*Plan
	for i, n := range leaves {
		if n.Kind != query.KindOr {
			continue
		}
		if or := union(indexes, leaves, i, nil, nil, idColl, storeByID); or != nil {
			out = append(out, or)
		}
	}
	return out
}

// union is the index union of leaves[i], an $or, or nil when a branch has
// no bounded scan. A branch is planned with its own conditions and the
// other conjuncts (a match satisfies both), by the best-scoring bounded
// scan; the union yields each document once, whatever branches hold it,
// in no useful order. text, when set, is the scan of textBranch, the
// branch holding the $text clause: the union reads it first, so that a
// document it shares with another branch carries its score (MongoDB's
// fts_projection.js, SERVER-12173), and is that scan alone when the $or
// has no other branch (MongoDB drops an $or of one clause); the branches
// of an $or among the $or's are then its own (query.OrBranches).
func union(indexes []Index, leaves []*query.Node, i int, textBranch *query.Node, text *Plan, idColl *collation.Collator, storeByID bool) *Plan {
	outer := slices.Delete(slices.Clone(leaves), i, i+1)
	or := &Plan{}
	if text != nil {
		or.Or = append(or.Or, text)
	}
	branches := leaves[i].Children
	if text != nil {
		branches = query.OrBranches(leaves[i])
	}
	for _, br := range branches {
		if text != nil && br == textBranch {
			continue
		}
		if text != nil && bestBounded(indexes, constraintLeaves(br), idColl, storeByID) == nil {
			// MongoDB indexes each branch of an $or by its own
			// conditions (the other conjuncts may only narrow a scan
			// it has), and a $text query has no plan without one.
			return nil
		}
		p := bestBounded(indexes, append(slices.Clip(outer), constraintLeaves(br)...), idColl, storeByID)
		if p == nil {
			return nil
		}
		or.Or = append(or.Or, p)
	}
	if text != nil && len(or.Or) == 1 {
		return text
	}
	return or
}

// bestBounded is the best-scoring scan that bounds the query of leaves
// by key intervals, or nil when no index does; the document store is one
// of the indexes when it is in _id order (storeByID).
func bestBounded(indexes []Index, leaves []*query.Node, idColl *collation.Collator, storeByID bool) *Plan {
	var best *Plan
	if storeByID {
		if best = buildWith(nil, idColl, leaves, sortReq{}); best.Intervals == nil {
			best = nil
		}
	}
	indexes = expandWildcards(indexes, leaves)
	for i := range indexes {
		ix := &indexes[i]
		if !holdsEveryMatch(leaves, ix) {
			continue
		}
		p := build(ix, leaves, sortReq{})
		if p.Intervals != nil && (best == nil || Score(p) > Score(best)) {
			best = p
		}
	}
	return best
}
