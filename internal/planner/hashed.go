package planner

import (
	"bytes"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/hashkey"
	"github.com/folio-db/folio/internal/keyenc"
	"github.com/folio-db/folio/internal/query"
)

// hashedBounds are the bounds on a hashed field: the hashes of an
// equality's (an $expr's $_internalExprEq's too) or $in list's values, as
// points; null's for {$exists:
// false}, every hash for {$exists: true}. A hashed index orders keys
// by hash, so it bounds neither ranges nor regexes and yields no sort
// (MongoDB's planner uses it for equality and $in only); values that
// collide or truncate to one hash (1 and 1.5) share a point, and the
// filter still judges every document fetched. An index with a collation
// coll hashes its strings' collation keys, so the operands are hashed so
// too (leaves holds only those that fit coll).
func hashedBounds(leaves []*query.Node, f Field, coll *collation.Collator) fieldBounds {
	var all fieldBounds
	for _, n := range leaves {
		if path, ok := notExistsPath(n); ok {
			if path == f.Path {
				// {$exists: false}: a missing field hashes as null.
				fb, _ := hashedPoints([]bson.RawValue{nullValue})
				return fb
			}
			continue
		}
		if n.Path != f.Path {
			continue
		}
		var vals []bson.RawValue
		switch n.Kind {
		case query.KindExists:
			// {$exists: true}: every hash, the filter judging each
			// document (MongoDB scans the whole hashed field).
			all = extremeBounds(query.KindGte, bson.TypeMinKey, false, false)
			continue
		case query.KindEq, query.KindExprEq:
			vals = []bson.RawValue{n.Value}
		case query.KindIn:
			var err error
			if vals, err = n.Value.Array().Values(); err != nil {
				continue
			}
		default:
			continue
		}
		for i := range vals {
			vals[i] = coll.Transform(vals[i])
		}
		if fb, ok := hashedPoints(vals); ok {
			return fb
		}
	}
	return all
}

// hashedPoints turns equality values into points of their hashes. Null
// also matches missing fields (which index as null's hash) and undefined.
// A regex cannot be a point, and neither can an array: a hashed field
// never holds one, and an array operand matches none of its elements.
func hashedPoints(vals []bson.RawValue) (fieldBounds, bool) {
	fb := fieldBounds{point: true}
	add := func(v bson.RawValue) {
		h := bson.RawValue{Type: bson.TypeInt64, Value: bsoncore.AppendInt64(nil, hashkey.Hash(v))}
		enc := keyenc.AppendField(nil, h, false)
		fb.ivs = append(fb.ivs, fieldInterval{lo: enc, hi: keyenc.PrefixEnd(enc), loVal: h, hiVal: h, loIncl: true, hiIncl: true})
	}
	for _, v := range vals {
		switch v.Type {
		case bson.TypeRegex, bson.TypeArray:
			return fieldBounds{}, false
		case bson.TypeNull, bson.TypeUndefined:
			add(undefinedValue)
			add(nullValue)
			continue
		}
		add(v)
	}
	slices.SortFunc(fb.ivs, func(a, b fieldInterval) int { return bytes.Compare(a.lo, b.lo) })
	fb.ivs = slices.CompactFunc(fb.ivs, func(a, b fieldInterval) bool { return bytes.Equal(a.lo, b.lo) })
	return fb, true
}
