package timeseries

import (
	"encoding/binary"
	"math"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/values"
)

// objectIDAt is the ObjectId of second t (Unix time) with its other bytes
// all fill: the least (0) or greatest (0xff) ObjectId of that second.
func objectIDAt(t int64, fill byte) bson.ObjectID {
	var id bson.ObjectID
	if t < 0 {
		t = 0
	}
	if t > 1<<32-1 {
		t = 1<<32 - 1
	}
	binary.BigEndian.PutUint32(id[:4], uint32(t))
	for i := 4; i < len(id); i++ {
		id[i] = fill
	}
	return id
}

func mustDoc(d bson.D) []byte {
	b, err := bson.Marshal(d)
	if err != nil {
		panic(err)
	}
	return b
}

// BucketFilter rewrites a filter on measurements into a filter on their
// buckets that every bucket holding a match passes: conditions on the
// metaField (and its subfields) hold of the bucket's meta, and a range on
// the time field or on a measurement field bounds the bucket's control.min
// and control.max (measurementConds, when o.OneSchema); an $and or $or of
// such filters is an $and or $or of their conditions (orConds). Other
// conditions are left to the filter on the unpacked measurements. nil when
// nothing can be said of the buckets.
func BucketFilter(o Options, match bson.Raw) bson.Raw {
	conds := bucketConds(o, match)
	if len(conds) == 0 {
		return nil
	}
	out, err := bson.Marshal(bson.D{{Key: "$and", Value: conds}})
	if err != nil {
		return nil
	}
	return out
}

// bucketConds are the bucket conditions a filter document implies.
func bucketConds(o Options, match bson.Raw) bson.A {
	elems, err := match.Elements()
	if err != nil {
		return nil
	}
	var out bson.A
	for _, el := range elems {
		k, v := el.Key(), el.Value()
		switch {
		case k == "$and":
			arr, ok := v.ArrayOK()
			if !ok {
				continue
			}
			vals, _ := arr.Values()
			for _, sub := range vals {
				if d, ok := sub.DocumentOK(); ok {
					out = append(out, bucketConds(o, d)...)
				}
			}
		case k == "$or":
			if c := orConds(o, v); c != nil {
				out = append(out, c)
			}
		case o.isMetaPath(k):
			out = append(out, bson.D{{Key: "meta" + k[len(o.MetaField):], Value: v}})
		case k == o.TimeField:
			out = append(out, timeConds(o, v)...)
		case o.OneSchema && fieldPath(k):
			out = append(out, measurementConds(k, v)...)
		}
	}
	return out
}

// orConds is the bucket condition of an $or of filters: the $or of each
// branch's conditions, which every bucket holding a match of that branch
// passes, so every bucket holding a match of the $or passes one of them
// (as MongoDB's BucketSpec::createPredicatesOnBucketLevelField maps an $or
// whose children all have bucket predicates). nil when a branch implies
// nothing of the buckets, and so bounds none.
func orConds(o Options, v bson.RawValue) bson.D {
	arr, ok := v.ArrayOK()
	if !ok {
		return nil
	}
	vals, _ := arr.Values()
	branches := make(bson.A, 0, len(vals))
	for _, sub := range vals {
		d, ok := sub.DocumentOK()
		if !ok {
			return nil
		}
		c := bucketConds(o, d)
		if len(c) == 0 {
			return nil
		}
		branches = append(branches, bson.D{{Key: "$and", Value: c}})
	}
	if len(branches) == 0 {
		return nil
	}
	return bson.D{{Key: "$or", Value: branches}}
}

// fieldPath reports whether k is a path of named fields: no component
// empty or starting with '$'.
func fieldPath(k string) bool {
	for part := range strings.SplitSeq(k, ".") {
		if part == "" || part[0] == '$' {
			return false
		}
	}
	return true
}

// measurementConds bounds a bucket's control.min and control.max of f, the
// path of a measurement field, by a condition on f: a number or a date,
// or a document of $eq, $gt, $gte, $lt and $lte on them (other operators
// and values say nothing of the buckets). They hold of every bucket that
// holds a match because a bucket keeps one schema: f (each element, for
// an array) has one canonical type class in all its measurements, so
// control.min.f and control.max.f are of that class and bound it, element
// by element for arrays, which the conditions traverse as the query on
// the measurements does. Numbers and dates compare alike under every
// collation. A dotted path reads the bounds through objects and arrays as
// it reads a measurement, since they keep its structure. NaN, the least
// number, may be a bucket's minimum below matching values, so a condition
// on the minimum passes it too.
func measurementConds(f string, v bson.RawValue) bson.A {
	if _, isOps := v.DocumentOK(); !isOps {
		return boundConds(f, "$eq", v)
	}
	elems, _ := v.Document().Elements()
	var out bson.A
	for _, op := range elems {
		if k := op.Key(); k == "$eq" || k == "$gt" || k == "$gte" || k == "$lt" || k == "$lte" {
			out = append(out, boundConds(f, k, op.Value())...)
		}
	}
	return out
}

// boundConds are the conditions on f's control bounds that {f: {op: v}}
// implies, none unless v is a date or a number other than NaN.
func boundConds(f, op string, v bson.RawValue) bson.A {
	number := values.IsNumber(v.Type) && !values.IsNaN(v)
	if !number && v.Type != bson.TypeDateTime {
		return nil
	}
	lo, hi := controlMin+f, controlMax+f
	min := func(op string) bson.D {
		c := bson.D{{Key: lo, Value: bson.D{{Key: op, Value: v}}}}
		if number {
			return bson.D{{Key: "$or", Value: bson.A{c, bson.D{{Key: lo, Value: math.NaN()}}}}}
		}
		return c
	}
	switch op {
	case "$eq":
		return bson.A{min("$lte"), bson.D{{Key: hi, Value: bson.D{{Key: "$gte", Value: v}}}}}
	case "$gt", "$gte":
		return bson.A{bson.D{{Key: hi, Value: bson.D{{Key: op, Value: v}}}}}
	default:
		return bson.A{min(op)}
	}
}

// timeConds bounds a bucket's time range by a condition on the time
// field: a date, or a document of $eq, $gt, $gte, $lt and $lte on dates.
// The bucket's _id, whose time is the bucket's start, is bounded too, so
// that the scan of the buckets (kept in _id order) reads only the span.
func timeConds(o Options, v bson.RawValue) bson.A {
	lo, hi := controlMin+o.TimeField, controlMax+o.TimeField
	if v.Type == bson.TypeDateTime {
		v = bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: mustDoc(bson.D{{Key: "$eq", Value: v}})}
	}
	ops, ok := v.DocumentOK()
	if !ok {
		return nil
	}
	elems, _ := ops.Elements()
	var out bson.A
	for _, op := range elems {
		d := op.Value()
		if d.Type != bson.TypeDateTime {
			continue
		}
		t := d.Time().Unix()
		// A bucket starting at s holds times in [s, s+maxSpan).
		after := bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: objectIDAt(t-o.BucketMaxSpanSeconds, 0)}}}}
		before := bson.D{{Key: "_id", Value: bson.D{{Key: "$lte", Value: objectIDAt(t, 0xff)}}}}
		switch op.Key() {
		case "$eq":
			out = append(out, bson.D{{Key: hi, Value: bson.D{{Key: "$gte", Value: d}}}}, bson.D{{Key: lo, Value: bson.D{{Key: "$lte", Value: d}}}}, after, before)
		case "$gt", "$gte":
			out = append(out, bson.D{{Key: hi, Value: bson.D{{Key: op.Key(), Value: d}}}}, after)
		case "$lt", "$lte":
			out = append(out, bson.D{{Key: lo, Value: bson.D{{Key: op.Key(), Value: d}}}}, before)
		}
	}
	return out
}
