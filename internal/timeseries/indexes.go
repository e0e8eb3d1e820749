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

// UserIndexKey is the key on the measurements of a buckets' index key
// (BucketIndexKey's inverse); ok is false for a key no user index has.
func UserIndexKey(o Options, key bson.Raw) (bson.Raw, bool) {
	elems, err := key.Elements()
	if err != nil {
		return nil, false
	}
	var d bson.D
	for i := 0; i < len(elems); i++ {
		k, v := elems[i].Key(), elems[i].Value()
		switch {
		case o.MetaField != "" && (k == "meta" || strings.HasPrefix(k, "meta.")):
			d = append(d, bson.E{Key: o.MetaField + k[len("meta"):], Value: v})
		case (k == "control.min."+o.TimeField || k == "control.max."+o.TimeField) && i+1 < len(elems):
			d = append(d, bson.E{Key: o.TimeField, Value: v})
			i++
		default:
			return nil, false
		}
	}
	out, err := bson.Marshal(d)
	return out, err == nil
}
