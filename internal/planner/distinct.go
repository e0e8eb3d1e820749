package planner

// DistinctScan is the plan of a distinct on the field key (MongoDB's
// DISTINCT_SCAN): a scan of an index led by key, not multikey, whose keys
// decide the filter (see CountScan), reading one entry per value of that
// field and skipping the others; the best-scoring such index, the hinted
// one only, or nil when none qualifies.
func DistinctScan(cat Catalog, q Query, key string) *Plan {
	if q.HintID || q.Filter.Collator() != nil {
		// Under a collation, values equal by it are one distinct value:
		// the engine collects and groups them.
		return nil
	}
	leaves := constraintLeaves(q.Filter.Root())
	indexes := cat.Indexes()
	if q.Hint != nil {
		indexes = []Index{*q.Hint}
	}
	var best *Plan
	for i := range indexes {
		ix := &indexes[i]
		if ix.Wildcard != nil || ix.Multikey || ix.Fields[0].Path != key || ix.Fields[0].Hashed || positional(ix.Fields[0].Parts) || !holdsEveryMatch(leaves, ix) {
			continue
		}
		p := build(ix, leaves, sortReq{})
		if p.setExact(q.Filter.Root()); !p.exact {
			continue
		}
		if best == nil || Score(p) > Score(best) {
			best = p
		}
	}
	if best != nil {
		best.distinct = key
	}
	return best
}

// Distinct is the field a DistinctScan plan reads the values of, or "".
func (p *Plan) Distinct() string { return p.distinct }
