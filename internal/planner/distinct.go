package planner

import "github.com/folio-db/folio/internal/query"

// DistinctScan is the plan of a distinct on the field key (MongoDB's
// DISTINCT_SCAN), reading one entry per value of key and skipping the
// others, or nil when no index qualifies; a hint restricts the choice to
// the hinted index. As MongoDB's getExecutorDistinct chooses:
//   - without a filter (getDistinctNodeIndex), an index led by key in
//     ascending or descending order, not partial, without a collation (the
//     query's is simple here: its keys would fold values the query tells
//     apart), holding neither text nor geo fields, multikey or not (each element of an array is an entry,
//     and distinct counts elements), the one of fewest fields;
//   - with a filter (turnIxscanIntoDistinctIxscan), an index holding key
//     at any position, not multikey (MongoDB needs key's path not
//     multikey: Folio keeps no per-path flags), whose keys decide the
//     filter (see CountScan), the best scoring; the scan then skips to the
//     next value of the fields up to key's.
//
// For a $group by key (Query.GroupDistinct) an unfiltered scan takes no
// multikey or sparse index either.
func DistinctScan(cat Catalog, q Query, key string) *Plan {
	if q.HintID || q.Filter.Collator() != nil {
		// Under a collation, values equal by it are one distinct value:
		// the engine collects and groups them.
		return nil
	}
	root := q.Filter.Root()
	unfiltered := root == nil || root.Kind == query.KindAnd && len(root.Children) == 0
	leaves := constraintLeaves(root)
	indexes := cat.Indexes()
	if q.Hint != nil {
		indexes = []Index{*q.Hint}
	}
	var best *Plan
	bestPos := 0
	for i := range indexes {
		ix := &indexes[i]
		pos := distinctField(ix, key)
		if pos < 0 {
			continue
		}
		if unfiltered {
			if q.GroupDistinct && (ix.Multikey || ix.Sparse) {
				continue
			}
			if pos != 0 || ix.Partial != nil || ix.Collation != nil || !plainFields(ix) || best != nil && len(ix.Fields) >= len(best.Index.Fields) {
				continue
			}
			best, bestPos = build(ix, nil, sortReq{}), pos
			continue
		}
		if ix.Multikey || !holdsEveryMatch(leaves, ix) {
			continue
		}
		p := build(ix, leaves, sortReq{})
		if p.setExact(root); !p.exact {
			continue
		}
		if best == nil || Score(p) > Score(best) {
			best, bestPos = p, pos
		}
	}
	if best != nil {
		best.distinct, best.distinctPos = key, bestPos
	}
	return best
}

// distinctField is the position of key among ix's fields when a distinct
// scan may read its values there (not hashed, not through an array
// position, not a wildcard index's), else -1.
func distinctField(ix *Index, key string) int {
	if ix.Wildcard != nil {
		return -1
	}
	for i, f := range ix.Fields {
		if f.Path == key {
			if f.Hashed || f.Text || f.Geo || f.Flat || positional(f.Parts) {
				return -1
			}
			return i
		}
	}
	return -1
}

// plainFields reports whether ix is a B-tree or hashed index (MongoDB's
// INDEX_BTREE, INDEX_HASHED): no text or geo field.
func plainFields(ix *Index) bool {
	for _, f := range ix.Fields {
		if f.Text || f.Geo || f.Flat {
			return false
		}
	}
	return true
}

// Distinct is the field a DistinctScan plan reads the values of, or "".
func (p *Plan) Distinct() string { return p.distinct }

// DistinctField is the position among the index's fields of the field a
// DistinctScan plan reads.
func (p *Plan) DistinctField() int { return p.distinctPos }
