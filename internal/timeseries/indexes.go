package timeseries

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// Secondary indexes of a time series collection are indexes of its
// buckets, as in MongoDB: a key on the metaField (or a subfield) indexes
// the buckets' meta; a key on the time field indexes control.min and
// control.max of it (in the key's direction), which the bucket filter's
// time bounds read.

// BucketIndexKey is the buckets' key of an index a user asks for on the
// measurements.
func BucketIndexKey(o Options, key bson.Raw) (bson.Raw, error) {
	elems, err := key.Elements()
	if err != nil {
		return nil, err
	}
	var d bson.D
	for _, el := range elems {
		k, v := el.Key(), el.Value()
		switch {
		case o.MetaField != "" && (k == o.MetaField || strings.HasPrefix(k, o.MetaField+".")):
			d = append(d, bson.E{Key: "meta" + k[len(o.MetaField):], Value: v})
		case k == o.TimeField && v.IsNumber():
			lo, hi := bson.E{Key: "control.min." + k, Value: v}, bson.E{Key: "control.max." + k, Value: v}
			if n, _ := v.AsFloat64OK(); n < 0 {
				lo, hi = hi, lo
			}
			d = append(d, lo, hi)
		default:
			return nil, mongoerr.New(mongoerr.NotImplemented, "Folio indexes a time series collection on its metaField and timeField only, not on %q", k)
		}
	}
	return bson.Marshal(d)
}

// UserIndexKey is the key on the measurements of a buckets' index key,
// as MongoDB's createTimeseriesIndexSpecFromBucketsIndexSpec maps it back
// for listIndexes: control.min.<timeField> is the time field in its
// direction (control.max.<timeField> adds nothing), meta and meta.<path>
// the metaField, and a control.min.<f>, control.max.<f> pair of one
// ascending direction (control.max then control.min when descending) the
// measurement field f. ok is false for any other key, an index no user
// index of the measurements has (listIndexes leaves it out).
func UserIndexKey(o Options, key bson.Raw) (bson.Raw, bool) {
	elems, err := key.Elements()
	if err != nil {
		return nil, false
	}
	minTime, maxTime := controlMin+o.TimeField, controlMax+o.TimeField
	var d bson.D
	for i := 0; i < len(elems); i++ {
		k, v := elems[i].Key(), elems[i].Value()
		switch {
		case k == minTime:
			if !v.IsNumber() {
				return nil, false
			}
			d = append(d, bson.E{Key: o.TimeField, Value: v})
		case k == maxTime:
		case o.MetaField != "" && (k == "meta" || strings.HasPrefix(k, "meta.")):
			d = append(d, bson.E{Key: o.MetaField + k[len("meta"):], Value: v})
		default:
			if i+1 == len(elems) {
				return nil, false
			}
			next := elems[i+1]
			first, _ := v.AsFloat64OK()
			second, _ := next.Value().AsFloat64OK()
			f, ok := controlPair(k, next.Key(), first >= 0)
			if !ok || first != second {
				return nil, false
			}
			d = append(d, bson.E{Key: f, Value: next.Value()})
			i++
		}
	}
	out, err := bson.Marshal(d)
	return out, err == nil
}

const controlMin, controlMax = "control.min.", "control.max."

// controlPair is the measurement field f of the buckets' key fields a, b
// when they are control.min.f, control.max.f (ascending) or control.max.f,
// control.min.f (descending).
func controlPair(a, b string, ascending bool) (string, bool) {
	lo, hi := controlMin, controlMax
	if !ascending {
		lo, hi = hi, lo
	}
	f, ok := strings.CutPrefix(a, lo)
	if !ok || b != hi+f {
		return "", false
	}
	return f, true
}
