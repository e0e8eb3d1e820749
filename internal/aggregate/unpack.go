package aggregate

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/timeseries"
)

// unpackStage is $_internalUnpackBucket, the first stage of a time series
// collection's view, or $_unpackBucket, its alias for other products:
// each bucket of system.buckets.<name> becomes its measurements
// (timeseries.Unpacking.Unpack).
type unpackStage struct{ u timeseries.Unpacking }

// parseUnpackBucket reads $_internalUnpackBucket's argument, as MongoDB's
// createFromBsonInternal (timeseries.ParseUnpackSpec).
func parseUnpackBucket(arg bson.RawValue) (stage, error) {
	d, ok := arg.DocumentOK()
	if !ok {
		return nil, mongoerr.New(mongoerr.UnpackSpecNotObject, "%s specification must be an object, got: %s", timeseries.UnpackStage, typeName(arg))
	}
	u, err := timeseries.ParseUnpackSpec(d)
	if err != nil {
		return nil, err
	}
	return &unpackStage{u}, nil
}

// parseExternalUnpackBucket reads $_unpackBucket's argument, as MongoDB's
// createFromBsonExternal (timeseries.ParseExternalUnpackSpec).
func parseExternalUnpackBucket(arg bson.RawValue) (stage, error) {
	d, ok := arg.DocumentOK()
	if !ok {
		return nil, mongoerr.New(mongoerr.UnpackBucketSpecNotObject, "%s specification must be an object, got: %s", timeseries.ExternalUnpackStage, typeName(arg))
	}
	u, err := timeseries.ParseExternalUnpackSpec(d)
	if err != nil {
		return nil, err
	}
	return &unpackStage{u}, nil
}

func (s *unpackStage) run(in Source, _ *runtime) Source {
	return &funcSource{in: in, apply: func(bucket bson.Raw) ([]bson.Raw, error) {
		var out []bson.Raw
		err := s.u.Unpack(bucket, func(m bson.Raw) error {
			out = append(out, append(bson.Raw(nil), m...))
			return nil
		})
		return out, err
	}}
}
