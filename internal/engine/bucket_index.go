package engine

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/timeseries"
)

// checkBucketKeys applies, to bucket written to c, MongoDB's rule for an
// index of a time series collection's buckets on the bounds of a
// measurement field (control.min.<f>, control.max.<f>): a bucket one of
// whose measurements holds an array along f cannot be keyed (5930501),
// since bounds taken element by element do not bound the values a query
// on f compares. Other collections' documents are not checked.
func (c *Collection) checkBucketKeys(ix *Index, bucket bson.Raw) error {
	if c.Options.Timeseries == nil {
		return nil
	}
	for _, f := range ix.Fields {
		if m, ok := timeseries.BoundedField(f.Path); ok && timeseries.ArrayAlong(bucket, m) {
			return mongoerr.New(mongoerr.IndexedMeasurementArray, "Indexed measurement field contains an array value")
		}
	}
	return nil
}
