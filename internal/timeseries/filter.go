package timeseries

import (
	"encoding/binary"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
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
// the time field bounds the bucket's control.min and control.max. Other
// conditions are left to the filter on the unpacked measurements. nil
// when nothing can be said of the buckets.
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
		case o.MetaField != "" && (k == o.MetaField || strings.HasPrefix(k, o.MetaField+".")):
			out = append(out, bson.D{{Key: "meta" + k[len(o.MetaField):], Value: v}})
		case k == o.TimeField:
			out = append(out, timeConds(o, v)...)
		}
	}
	return out
}

// timeConds bounds a bucket's time range by a condition on the time
// field: a date, or a document of $eq, $gt, $gte, $lt and $lte on dates.
// The bucket's _id, whose time is the bucket's start, is bounded too, so
// that the scan of the buckets (kept in _id order) reads only the span.
func timeConds(o Options, v bson.RawValue) bson.A {
	lo, hi := "control.min."+o.TimeField, "control.max."+o.TimeField
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
