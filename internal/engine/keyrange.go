package engine

import (
	"bytes"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/planner"
	"github.com/folio-db/folio/internal/rawdoc"
)

// keyRange reports whether the find bounds the keys it reads (min, max).
func (q compiledFind) keyRange() bool {
	return rawdoc.Len(q.min) > 0 || rawdoc.Len(q.max) > 0
}

// planKeyRange plans a find's min and max as MongoDB's planner does, before
// anything else: an index filter of the query's shape drops the hint; the
// key range needs a hinted index (51173; a $natural hint fails with
// NoQueryExecutionPlans "min and max are incompatible with $natural", a
// $natural sort has no solution), whose key pattern each non-empty bound names field by field,
// with no string to compare under another collation than the index's
// (51174); min must come before max in the index's order (51175); the scan
// reads the keys from min, inclusive, to max, exclusive. A $text query,
// which only its text index's scan answers, and a geo index have no key
// range here.
func planKeyRange(c *Collection, q compiledFind, h hintChoice) (*planner.Plan, error) {
	if c.plans.nfilters.Load() > 0 && c.plans.filterFor(q.commandShape()) != nil {
		h = hintChoice{}
	}
	if h.natural != 0 {
		return nil, mongoerr.New(mongoerr.NoQueryExecutionPlans, "error processing query: planner returned error :: caused by :: min and max are incompatible with $natural")
	}
	if q.sort != nil && q.sort.Natural() != 0 {
		return nil, noQuerySolutions()
	}
	if h.ix == nil && !h.idOrder {
		return nil, mongoerr.New(mongoerr.MinMaxWithoutHint, "When using min()/max() a hint of which index to use must be provided")
	}
	if h.ix == nil && c.Clustered() {
		if err := checkClusteredKeyRange(c, q); err != nil {
			return nil, err
		}
	}
	pq := planner.Query{Filter: q.filter, Sort: q.sort, IDCollation: c.DefaultCollator(), Clustered: c.Clustered()}
	var ix *planner.Index
	keyPattern, ixColl := bson.Raw(planner.IDKeyPattern), c.DefaultCollator()
	if h.ix != nil {
		hinted := h.ix.planned()
		if hinted.Wildcard != nil {
			return nil, incompatibleKeyRange()
		}
		ix, keyPattern, ixColl = &hinted, hinted.KeyPattern, hinted.Collation
	}
	sameColl := collation.Equal(q.filter.Collator(), ixColl)
	for _, bound := range []bson.Raw{q.min, q.max} {
		if !boundFits(bound, keyPattern, sameColl) {
			return nil, incompatibleKeyRange()
		}
	}
	if h.ix != nil && h.ix.geoField() >= 0 {
		return nil, mongoerr.New(mongoerr.NotImplemented, "Folio does not support min and max on a 2dsphere or 2d index (its keys are cells and geohashes)")
	}
	if ts, err := q.filter.Text(); err != nil || ts != nil || h.ix != nil && h.ix.text != nil {
		return nil, firstErr(err, noQuerySolutions())
	}
	lo := planner.KeyBound(ix, c.DefaultCollator(), q.min, false)
	hi := planner.KeyBound(ix, c.DefaultCollator(), q.max, true)
	if bytes.Compare(lo, hi) >= 0 {
		return nil, mongoerr.New(mongoerr.MinNotBeforeMax, "The value provided for min() does not come before the value provided for max() in the hinted index")
	}
	p := planner.KeyRange(ix, c.DefaultCollator(), lo, hi, pq)
	if ix == nil && c.Clustered() {
		p.RecordRange(q.min, q.max)
	}
	return p, nil
}

// checkClusteredKeyRange applies MongoDB's rules of a min and max with a
// hint of a clustered collection's clustered index (the planner's
// handleClusteredScanHint), which replace those of an index's: each
// bound fits the cluster key under the query's collation (6137400), and
// min, when both are given, compares below max as documents, strings
// under that collation (6137401).
func checkClusteredKeyRange(c *Collection, q compiledFind) error {
	sameColl := collation.Equal(q.filter.Collator(), c.DefaultCollator())
	for _, bound := range []bson.Raw{q.min, q.max} {
		if !boundFits(bound, planner.IDKeyPattern, sameColl) {
			return mongoerr.New(mongoerr.ClusteredKeyRangeCollation, "The clustered index is not compatible with the values provided for min/max due to the query collation")
		}
	}
	if rawdoc.Len(q.min) > 0 && rawdoc.Len(q.max) > 0 {
		doc := func(d bson.Raw) bson.RawValue { return bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: d} }
		if q.filter.Collator().Compare(doc(q.min), doc(q.max)) >= 0 {
			return mongoerr.New(mongoerr.ClusteredKeyRangeOrder, "max() must be greater than min()")
		}
	}
	return nil
}

// boundFits reports whether a min or max (empty: open) names the fields of
// keyPattern in its order, and, when the query's collation is not the
// index's, holds no string, object or array (indexCompatibleMaxMin).
func boundFits(bound, keyPattern bson.Raw, sameColl bool) bool {
	if rawdoc.Len(bound) == 0 {
		return true
	}
	if !rawdoc.SameKeys(bound, keyPattern) {
		return false
	}
	it := rawdoc.Iterate(bound)
	for {
		_, v, ok := it.Next()
		switch {
		case !ok:
			return true
		case !sameColl && (v.Type == bson.TypeString || v.Type == bson.TypeEmbeddedDocument || v.Type == bson.TypeArray):
			return false
		}
	}
}

func incompatibleKeyRange() error {
	return mongoerr.New(mongoerr.MinMaxIndexIncompatible, "The index chosen is not compatible with min/max")
}
