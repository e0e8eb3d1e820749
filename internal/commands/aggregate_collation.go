package commands

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/mongoerr"
)

// collatedStages are the stages that follow a pipeline's collation: their
// comparisons (filters, expressions, grouping, sorting, partitions,
// bucket boundaries, accumulators) and their reads of other collections
// ($lookup, $graphLookup, $unionWith, $merge's target) use it, or they
// compare nothing. A $geoNear, only ever first, hands its query to the
// engine's find, which compiles it under the pipeline's collation. A time
// series collection's $_internalUnpackBucket compares nothing; the bucket
// filter put before it (timeseries.BucketFilter) compares the buckets'
// meta, which is their measurements', and dates, so under any collation
// it selects every bucket holding a match.
var collatedStages = map[string]bool{
	"$match": true, "$project": true, "$addFields": true, "$set": true, "$unset": true,
	"$replaceRoot": true, "$replaceWith": true, "$redact": true, "$group": true,
	"$sortByCount": true, "$bucket": true, "$bucketAuto": true, "$sort": true,
	"$limit": true, "$skip": true, "$count": true, "$unwind": true, "$sample": true,
	"$lookup": true, "$graphLookup": true, "$unionWith": true, "$facet": true,
	"$setWindowFields": true, "$densify": true, "$fill": true, "$documents": true,
	"$out": true, "$merge": true, "$collStats": true, "$indexStats": true, "$planCacheStats": true,
	"$geoNear":                         true,
	"$_internalInhibitOptimization":    true,
	"$_internalUnpackBucket":           true,
	"$_internalComputeGeoNearDistance": true,
}

// checkPipelineCollation refuses, under a collation other than simple, a
// stage left after the engine's scan that is not known to follow it.
func checkPipelineCollation(coll *collation.Collator, stages []bson.Raw) error {
	if coll == nil {
		return nil
	}
	for _, st := range stages {
		if !collatedStages[Name(st)] {
			return mongoerr.New(mongoerr.NotImplemented, "Folio does not support the stage %s with a collation other than simple yet", Name(st))
		}
	}
	return nil
}
