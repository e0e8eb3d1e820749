package planner

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/keyenc"
	"github.com/folio-db/folio/internal/rawdoc"
)

// KeyRange is the plan of a find's min and max, and of dataSize's range:
// the keys of ix (nil: the document store, an index on _id whose keys
// follow idColl) from lo, inclusive, to hi, exclusive, in the index's
// order (KeyBound encodes both). MongoDB plans such a range as one simple
// range whose explain shows no field bounds. The filter still judges
// every document read; the scan yields q's sort when the index order is
// that sort.
func KeyRange(ix *Index, idColl *collation.Collator, lo, hi []byte, q Query) *Plan {
	p := &Plan{Index: ix, coll: idColl, fields: idFields, keyRange: true, Intervals: []Interval{{Lo: lo, Hi: hi}}}
	if ix != nil {
		p.coll, p.fields, p.multikey = ix.Collation, ix.Fields, ix.Multikey
	}
	p.fieldBounds = make([]fieldBounds, len(p.fields))
	p.sortFields, p.sortDirs = q.sortFor(ix)
	p.sortKeyRange()
	return p
}

// sortKeyRange sets whether a key range scan yields its sort: no field
// is bounded field by field, nor pinned.
func (p *Plan) sortKeyRange() {
	open := make([]bool, len(p.fields))
	p.Sorted, p.Reverse = providesSort(p.fields, open, open, p.multikey, p.sortFields, p.sortDirs)
}

// KeyBound encodes a key range's bound as a key of ix (nil: the document
// store, whose strings follow idColl): bound's values in order, their
// strings as collation keys, as MongoDB strips their names, or
// for an empty bound the first key of the index (or, when upper, the
// last), as MongoDB's finishMinObj and finishMaxObj fill one with MinKey or
// MaxKey, whichever comes first (last) in each field's direction. The caller has checked that
// bound names the fields in order.
func KeyBound(ix *Index, idColl *collation.Collator, bound bson.Raw, upper bool) []byte {
	fields, coll := idFields, idColl
	if ix != nil {
		fields, coll = ix.Fields, ix.Collation
	}
	var key []byte
	if len(bound) == 0 || rawdoc.Len(bound) == 0 {
		for _, f := range fields {
			end := bson.RawValue{Type: bson.TypeMinKey}
			if upper != f.Desc {
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
