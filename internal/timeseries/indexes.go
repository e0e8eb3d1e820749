package timeseries

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// Secondary indexes of a time series collection are indexes of its
// buckets, as in MongoDB: a key on the metaField (or a subfield) indexes
// the buckets' meta; a key on the time field indexes control.min and
// control.max of it (in the key's direction), which the bucket filter's
// time bounds read.

// BucketIndexKey is the buckets' key of an index key on the measurements,
// as MongoDB's createBucketsIndexSpecFromTimeseriesIndexSpec maps it: the
// time field in a direction is control.min and control.max of it (max
// first when descending), the metaField or a subfield meta or meta.<path>,
// a measurement field f in a direction control.min.f and control.max.f
// likewise, and a 2dsphere key on f data.f as a 2dsphere_bucket key. An
// empty key, a hint ($natural, $hint), or another kind of key on the time
// or a measurement field is BadValue. Which of these Folio can build is
// the index creation's concern.
func BucketIndexKey(o Options, key bson.Raw) (bson.Raw, error) {
	elems, err := key.Elements()
	if err != nil {
		return nil, err
	}
	if len(elems) == 0 {
		return nil, mongoerr.New(mongoerr.BadValue, "Empty object is not a valid index spec")
	}
	if k := elems[0].Key(); k == "$hint" || k == "$natural" {
		return nil, mongoerr.New(mongoerr.BadValue, "Invalid index spec (perhaps it's a valid hint, that was incorrectly passed to createBucketsSpecFromTimeseriesSpec): %s", key)
	}
	var d bson.D
	for _, el := range elems {
		k, v := el.Key(), el.Value()
		switch {
		case k == o.TimeField:
			if !v.IsNumber() {
				return nil, mongoerr.New(mongoerr.BadValue, "Invalid index spec for time-series collection: %s. Indexes on the time field must be ascending or descending (numbers only): %s", key, values.ShellElement(k, v))
			}
			d = appendControlPair(d, k, v)
		case o.isMetaPath(k):
			d = append(d, bson.E{Key: "meta" + k[len(o.MetaField):], Value: v})
		case v.Type == bson.TypeString && v.StringValue() == "2dsphere":
			d = append(d, bson.E{Key: "data." + k, Value: bucketGeo})
		case !v.IsNumber():
			return nil, mongoerr.New(mongoerr.BadValue, "Invalid index spec for time-series collection: %s. Indexes on measurement fields must be ascending or descending (numbers only), or '2dsphere': %s", key, values.ShellElement(k, v))
		default:
			d = appendControlPair(d, k, v)
		}
	}
	return bson.Marshal(d)
}

// HasMeasurementKey reports whether key, an index key on the measurements,
// has a field other than the time field and the metaField (or a subfield
// of it).
func HasMeasurementKey(o Options, key bson.Raw) bool {
	elems, _ := key.Elements()
	for _, el := range elems {
		if k := el.Key(); k != o.TimeField && !o.isMetaPath(k) {
			return true
		}
	}
	return false
}

// isMetaPath reports whether the dotted path k is the metaField or a
// subfield of it.
func (o Options) isMetaPath(k string) bool {
	return o.MetaField != "" && (k == o.MetaField || strings.HasPrefix(k, o.MetaField+"."))
}

// appendControlPair appends the buckets' key fields of field f in v's
// direction: control.min.f, control.max.f ascending, control.max.f,
// control.min.f descending.
func appendControlPair(d bson.D, f string, v bson.RawValue) bson.D {
	lo, hi := bson.E{Key: controlMin + f, Value: v}, bson.E{Key: controlMax + f, Value: v}
	if n, _ := v.AsFloat64OK(); n < 0 {
		lo, hi = hi, lo
	}
	return append(d, lo, hi)
}

// UserIndexKey is the key on the measurements of a buckets' index key,
// as MongoDB's createTimeseriesIndexSpecFromBucketsIndexSpec maps it back
// for listIndexes: control.min.<timeField> is the time field in its
// direction (control.max.<timeField> adds nothing), meta and meta.<path>
// the metaField, and a control.min.<f>, control.max.<f> pair of one
// ascending direction (control.max then control.min when descending) the
// measurement field f, and a data.<f> 2dsphere_bucket key f's 2dsphere
// key. ok is false for any other key, an index no user
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
		case strings.HasPrefix(k, "data.") && v.Type == bson.TypeString && v.StringValue() == bucketGeo:
			d = append(d, bson.E{Key: k[len("data."):], Value: "2dsphere"})
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

// BoundedField is the measurement field f whose bound path is the
// buckets' field path p (control.min.f or control.max.f).
func BoundedField(p string) (string, bool) {
	if f, ok := strings.CutPrefix(p, controlMin); ok {
		return f, true
	}
	return strings.CutPrefix(p, controlMax)
}

// bucketGeo is the kind of a buckets' key of a 2dsphere key on a
// measurement field.
const bucketGeo = "2dsphere_bucket"

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
