package aggregate

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/timeseries"
)

// unpackStage is $_internalUnpackBucket, the first stage of a time series
// collection's view: each bucket of system.buckets.<name> becomes its
// measurements (timeseries.Unpack). Its argument is {timeField,
// metaField, bucketMaxSpanSeconds}, as MongoDB stores it.
type unpackStage struct{ o timeseries.Options }

func parseUnpackBucket(arg bson.RawValue) (stage, error) {
	d, ok := arg.DocumentOK()
	if !ok {
		return nil, mongoerr.New(mongoerr.BadValue, "$_internalUnpackBucket specification must be an object, got %s", typeName(arg))
	}
	o, err := timeseries.ParseUnpackSpec(d)
	if err != nil {
		return nil, err
	}
	return &unpackStage{o}, nil
}

func (s *unpackStage) run(in Source, _ *runtime) Source {
	return &funcSource{in: in, apply: func(bucket bson.Raw) ([]bson.Raw, error) {
		var out []bson.Raw
		err := timeseries.Unpack(s.o, bucket, func(m bson.Raw) error {
			out = append(out, append(bson.Raw(nil), m...))
			return nil
		})
		return out, err
	}}
}
