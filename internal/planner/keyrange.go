package planner

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/keyenc"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/values"
)

// KeyRange is the plan of a find's min and max, and of dataSize's range:
// the keys of ix (nil: the document store, an index on _id whose keys
// follow idColl) from lo, inclusive, to hi, exclusive, in the index's
// order (KeyBound encodes both). MongoDB plans such a range as one simple
// range whose explain shows no field bounds. The filter still judges
// every document read; the scan yields q's sort when the index order is
// that sort and the index is not multikey.
func KeyRange(ix *Index, idColl *collation.Collator, lo, hi []byte, q Query) *Plan {
	p := &Plan{Index: ix, coll: idColl, fields: idFields, keyRange: true, Intervals: []Interval{{Lo: lo, Hi: hi}}}
	if ix != nil {
		p.coll, p.fields, p.multikey = ix.Collation, ix.Fields, ix.Multikey
	}
	p.fieldBounds = make([]fieldBounds, len(p.fields))
	p.sort = q.sortFor(ix)
	p.sortKeyRange()
	return p
}

// RecordRange records the min and max (either may be empty) a key range
// of a clustered collection's documents was given: its CLUSTERED_IXSCAN
// shows their values as minRecord and maxRecord, as MongoDB's bounded
// collection scan of a hint of the cluster key does.
func (p *Plan) RecordRange(min, max bson.Raw) {
	first := func(d bson.Raw) bson.RawValue {
		if rawdoc.Len(d) == 0 {
			return bson.RawValue{}
		}
		return d.Index(0).Value()
	}
	p.minRecord, p.maxRecord = first(min), first(max)
}

// sortKeyRange sets whether a key range scan yields its sort. No field is
// pinned to one value, and every field counts as bounded: on a multikey
// index a range of keys meets a document at a key that need not be its
// sort key, so, as in MongoDB, it yields no sort.
func (p *Plan) sortKeyRange() {
	single, bounded := make([]bool, len(p.fields)), make([]bool, len(p.fields))
	for i := range bounded {
		bounded[i] = true
	}
	p.Sorted, p.Reverse = providesSort(p.fields, p.fieldBounds, single, bounded, arrays{multikey: p.multikey}, false, p.sort)
}

// KeyBound encodes a key range's bound as a key of ix (nil: the document
// store, whose strings follow idColl): bound's values in order, their
// strings as collation keys, as MongoDB strips their names. An empty bound
// is filled as MongoDB's finishMinObj and finishMaxObj fill it: a min with
// MinKey for each field whose key pattern value is not a number or whose
// integer part is positive, MaxKey for the others (a max the other way
// round), which is the first (last) key of the index but for a fractional
// value such as 0.5. The caller has checked that bound names the fields
// in order.
func KeyBound(ix *Index, idColl *collation.Collator, bound bson.Raw, upper bool) []byte {
	fields, coll, pattern := idFields, idColl, bson.Raw(IDKeyPattern)
	if ix != nil {
		fields, coll, pattern = ix.Fields, ix.Collation, ix.KeyPattern
	}
	var key []byte
	if len(bound) == 0 || rawdoc.Len(bound) == 0 {
		it := rawdoc.Iterate(pattern)
		for _, f := range fields {
			_, dir, _ := it.Next()
			n, isNum := values.Float64(dir)
			end := bson.RawValue{Type: bson.TypeMinKey}
			if upper == (!isNum || int64(n) > 0) {
				end.Type = bson.TypeMaxKey
			}
			key = keyenc.AppendField(key, end, f.Desc)
		}
		return key
	}
	it := rawdoc.Iterate(bound)
	for _, f := range fields {
		_, v, ok := it.Next()
		if !ok {
			break
		}
		key = keyenc.AppendField(key, coll.Transform(v), f.Desc)
	}
	return key
}
