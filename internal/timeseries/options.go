// Package timeseries holds MongoDB's time series model: a collection's
// options, the buckets its measurements are stored in (one document per
// meta value and span of time, each field a column), and the rewriting
// of a filter on measurements into one on buckets.
// https://www.mongodb.com/docs/v7.0/core/timeseries-collections/
package timeseries

import (
	"math"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// BucketsPrefix starts the name of the collection holding a time series
// collection's buckets: system.buckets.<name>.
const BucketsPrefix = "system.buckets."

// MaxMeasurements is how many measurements a bucket holds at most, as
// MongoDB's timeseriesBucketMaxCount.
const MaxMeasurements = 1000

// Options are a time series collection's timeseries options.
type Options struct {
	TimeField string
	// MetaField is "" when the collection has none.
	MetaField string
	// Granularity is seconds, minutes or hours; "" with custom bucketing
	// (BucketRoundingSeconds set).
	Granularity           string
	BucketMaxSpanSeconds  int64
	BucketRoundingSeconds int64
	// Collator is the collection's default collation (nil: simple),
	// under which a bucket's control.min and control.max order strings,
	// as MongoDB's bucket catalog computes them with the collection's
	// collator; the bucket's meta and field names stay bytewise. It is
	// not one of the options the collection stores.
	Collator *collation.Collator
	// OneSchema says each bucket holds measurements of one schema, so
	// that the bucket filter may bound measurement fields by the buckets'
	// control.min and control.max: a time series collection not marked
	// as possibly holding mixed-schema buckets, or an unpacking stage
	// given assumeNoMixedSchemaData. Not one of the stored options.
	OneSchema bool
}

// Same reports whether o and p are the same stored options (their
// collators aside).
func (o Options) Same(p Options) bool {
	p.Collator, p.OneSchema = o.Collator, o.OneSchema
	return o == p
}

// granularities are MongoDB's: each one's bucket span and the rounding
// of a bucket's start.
var granularities = map[string][2]int64{
	"seconds": {3600, 60},
	"minutes": {86400, 3600},
	"hours":   {2592000, 86400},
}

// maxSpan is the largest bucketMaxSpanSeconds and bucketRoundingSeconds
// MongoDB accepts (365 days).
const maxSpan = 31536000

// Parse reads and checks a timeseries options document, create's or
// $out's, path naming it in errors ("create.timeseries"). It is an IDL
// struct: a null field is absent, a field given twice is refused, and
// bucketMaxSpanSeconds and bucketRoundingSeconds are safeInt (a double
// truncated, a decimal rounded half to even) within [1, 31536000].
func Parse(d bson.Raw, path string) (Options, error) {
	var o Options
	elems, err := d.Elements()
	if err != nil {
		return o, err
	}
	var hasMaxSpan, hasRounding bool
	seen := map[string]bool{}
	for _, el := range elems {
		v, key := el.Value(), el.Key()
		if seen[key] {
			return o, mongoerr.New(mongoerr.IDLDuplicateField, "BSON field '%s.%s' is a duplicate field", path, key)
		}
		seen[key] = true
		switch key {
		case "timeField", "metaField", "granularity":
			if v.Type == bson.TypeNull {
				seen[key] = false // absent
				continue
			}
			s, ok := v.StringValueOK()
			if !ok {
				return o, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.%s' is the wrong type '%s', expected type 'string'", path, key, values.TypeName(v.Type))
			}
			switch key {
			case "timeField":
				o.TimeField = s
			case "metaField":
				o.MetaField = s
			default:
				if _, ok := granularities[s]; !ok {
					return o, mongoerr.New(mongoerr.BadValue, "Enumeration value '%s' for field '%s.granularity' is not a valid value.", s, path)
				}
				o.Granularity = s
			}
		case "bucketMaxSpanSeconds", "bucketRoundingSeconds":
			if v.Type == bson.TypeNull {
				seen[key] = false // absent
				continue
			}
			n, err := readSpan(v, path, key)
			if err != nil {
				return o, err
			}
			if key == "bucketMaxSpanSeconds" {
				o.BucketMaxSpanSeconds, hasMaxSpan = n, true
			} else {
				o.BucketRoundingSeconds, hasRounding = n, true
			}
		default:
			return o, mongoerr.New(mongoerr.IDLUnknownField, "BSON field '%s.%s' is an unknown field.", path, key)
		}
	}
	switch {
	case !seen["timeField"]:
		return o, mongoerr.MissingField(path + ".timeField")
	case o.TimeField == "":
		return o, mongoerr.New(mongoerr.InvalidOptions, "The 'timeField' cannot be empty")
	case strings.Contains(o.TimeField, "."):
		return o, mongoerr.New(mongoerr.InvalidOptions, "The 'timeField' cannot contain embedded fields")
	case strings.IndexByte(o.TimeField, 0) >= 0, strings.IndexByte(o.MetaField, 0) >= 0:
		// the fields name keys of the buckets, which no BSON key can hold
		return o, mongoerr.New(mongoerr.BadValue, "The 'timeField' and 'metaField' cannot contain a null byte")
	case o.TimeField == "_id":
		return o, mongoerr.New(mongoerr.InvalidOptions, "The 'timeField' cannot be '_id'")
	case o.MetaField == "_id":
		return o, mongoerr.New(mongoerr.InvalidOptions, "The 'metaField' cannot be '_id'")
	case strings.Contains(o.MetaField, "."):
		return o, mongoerr.New(mongoerr.InvalidOptions, "The 'metaField' cannot contain embedded fields")
	case o.MetaField != "" && o.MetaField == o.TimeField:
		return o, mongoerr.New(mongoerr.InvalidOptions, "The 'metaField' cannot be the same as the 'timeField'")
	case o.Granularity != "" && hasMaxSpan && o.BucketMaxSpanSeconds != granularities[o.Granularity][0]:
		// With a granularity, the bucketing parameters may only be its
		// own (listCollections' form, as mongorestore sends it back).
		return o, mongoerr.New(mongoerr.InvalidOptions, "Timeseries 'bucketMaxSpanSeconds' is not configurable to a value other than the default of %d for the provided granularity", granularities[o.Granularity][0])
	case o.Granularity != "" && hasRounding && o.BucketRoundingSeconds != granularities[o.Granularity][1]:
		return o, mongoerr.New(mongoerr.InvalidOptions, "Timeseries 'bucketRoundingSeconds' is not configurable to a value other than the default of %d for the provided granularity", granularities[o.Granularity][1])
	case o.Granularity != "":
		hasMaxSpan = false
	case hasMaxSpan != hasRounding:
		return o, mongoerr.New(mongoerr.InvalidOptions, "Timeseries 'bucketMaxSpanSeconds' and 'bucketRoundingSeconds' need to be set alongside each other")
	case hasMaxSpan && o.BucketMaxSpanSeconds != o.BucketRoundingSeconds:
		return o, mongoerr.New(mongoerr.InvalidOptions, "Timeseries 'bucketRoundingSeconds' needs to be equal to 'bucketMaxSpanSeconds'")
	}
	if !hasMaxSpan {
		if o.Granularity == "" {
			o.Granularity = "seconds"
		}
		g := granularities[o.Granularity]
		o.BucketMaxSpanSeconds, o.BucketRoundingSeconds = g[0], g[1]
	}
	return o, nil
}

// readSpan reads bucketMaxSpanSeconds or bucketRoundingSeconds, the field key
// of the document at path, as MongoDB 7.0's IDL reads them: a safeInt (any
// number, a double truncated, a decimal rounded half to even) its
// validator bounds to [1, 31536000], refusing another value with
// IDLValueOutOfRange (51024), as 7.0's throwComparisonError does (7.1 made
// it BadValue).
func readSpan(v bson.RawValue, path, key string) (int64, error) {
	if !v.IsNumber() {
		return 0, mongoerr.WrongNumberType(path+"."+key, values.TypeName(v.Type))
	}
	n := max(math.MinInt32, min(math.MaxInt32, expr.SafeLong(v))) // safeNumberInt
	switch {
	case n < 1:
		return 0, mongoerr.New(mongoerr.IDLValueOutOfRange, "BSON field '%s.%s' value must be >= 1, actual value '%d'", path, key, n)
	case n > maxSpan:
		return 0, mongoerr.New(mongoerr.IDLValueOutOfRange, "BSON field '%s.%s' value must be <= %d, actual value '%d'", path, key, maxSpan, n)
	}
	return n, nil
}

// Document is o as listCollections shows it: timeField, metaField when
// set, granularity or bucketRoundingSeconds, bucketMaxSpanSeconds.
func (o Options) Document() bson.D {
	d := bson.D{{Key: "timeField", Value: o.TimeField}}
	if o.MetaField != "" {
		d = append(d, bson.E{Key: "metaField", Value: o.MetaField})
	}
	if o.Granularity != "" {
		d = append(d, bson.E{Key: "granularity", Value: o.Granularity})
	} else {
		d = append(d, bson.E{Key: "bucketRoundingSeconds", Value: int32(o.BucketRoundingSeconds)})
	}
	return append(d, bson.E{Key: "bucketMaxSpanSeconds", Value: int32(o.BucketMaxSpanSeconds)})
}

// UnpackStage is the name of the stage that unpacks buckets into
// measurements, the first of a time series collection's view.
const UnpackStage = "$_internalUnpackBucket"

// UnpackSpec is the argument of the view's unpacking stage for o, as
// MongoDB 7.0 stores it in system.views (timeseries::generateViewPipeline):
// timeField, metaField, bucketMaxSpanSeconds. A view stored by an older
// Folio with exclude: [] still parses (ParseUnpackSpec).
func (o Options) UnpackSpec() bson.D {
	d := bson.D{{Key: "timeField", Value: o.TimeField}}
	if o.MetaField != "" {
		d = append(d, bson.E{Key: "metaField", Value: o.MetaField})
	}
	return append(d, bson.E{Key: "bucketMaxSpanSeconds", Value: int32(o.BucketMaxSpanSeconds)})
}

// Unpacking is the argument of an unpacking stage: the options it reads
// the buckets with and which fields each measurement keeps.
type Unpacking struct {
	Options
	// Fields are the top-level fields named by include or exclude: with
	// Include the only ones kept (the time and meta fields among them),
	// else the ones dropped.
	Fields  []string
	Include bool
	// Computed are top-level fields of the bucket (set by a stage before
	// the unpacking) copied onto each of its measurements, after the
	// others; the metaField among them is not the bucket's meta.
	Computed []string
}

// keeps reports whether a measurement keeps field f.
func (u Unpacking) keeps(f string) bool {
	return slices.Contains(u.Fields, f) == u.Include
}

// unpackCodes are the codes with which an unpacking stage refuses a bad
// timeField, metaField or assumeNoMixedSchemaData: the two stages read the
// three fields alike, each with codes of its own.
type unpackCodes struct {
	timeNotString, metaNotString, metaDotted, assumeCleanNotBool mongoerr.Code
}

var (
	internalUnpackCodes = unpackCodes{mongoerr.UnpackTimeFieldNotString, mongoerr.UnpackMetaFieldNotString, mongoerr.UnpackMetaFieldDotted, mongoerr.UnpackAssumeCleanNotBool}
	externalUnpackCodes = unpackCodes{mongoerr.UnpackBucketTimeFieldNotString, mongoerr.UnpackBucketMetaFieldNotString, mongoerr.UnpackBucketMetaFieldDotted, mongoerr.UnpackBucketAssumeCleanNotBool}
)

// read sets u's field key (timeField, metaField or
// assumeNoMixedSchemaData) from v.
func (c unpackCodes) read(key string, v bson.RawValue, u *Unpacking) error {
	switch key {
	case "timeField":
		s, ok := v.StringValueOK()
		if !ok {
			return mongoerr.New(c.timeNotString, "timeField field must be a string, got: %s", values.TypeName(v.Type))
		}
		u.TimeField = s
	case "metaField":
		s, ok := v.StringValueOK()
		if !ok {
			return mongoerr.New(c.metaNotString, "metaField field must be a string, got: %s", values.TypeName(v.Type))
		}
		if strings.Contains(s, ".") {
			return mongoerr.New(c.metaDotted, "metaField field must be a single-element field path")
		}
		u.MetaField = s
	default:
		b, ok := v.BooleanOK()
		if !ok {
			return mongoerr.New(c.assumeCleanNotBool, "assumeClean field must be a bool, got: %s", values.TypeName(v.Type))
		}
		u.OneSchema = b
	}
	return nil
}

// fieldNames reads an unpacking parameter (what) that is an array of
// top-level field names, refusing another value, an element that is not
// a string, or a dotted one, with the parameter's codes.
func fieldNames(v bson.RawValue, what string, notArray, notString, dotted mongoerr.Code) ([]string, error) {
	arr, ok := v.ArrayOK()
	if !ok {
		return nil, mongoerr.New(notArray, "%s field must be an array, got: %s", what, values.TypeName(v.Type))
	}
	vals, err := arr.Values()
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(vals))
	for _, f := range vals {
		s, ok := f.StringValueOK()
		if !ok {
			return nil, mongoerr.New(notString, "%s field element must be a string, got: %s", what, values.TypeName(f.Type))
		}
		if strings.Contains(s, ".") {
			return nil, mongoerr.New(dotted, "%s field element must be a single-element field path", what)
		}
		names = append(names, s)
	}
	return names, nil
}

// ParseUnpackSpec reads the argument of $_internalUnpackBucket as MongoDB
// 7.0's DocumentSourceInternalUnpackBucket::createFromBsonInternal does,
// field by field in order and with its codes; timeField and
// bucketMaxSpanSeconds are required. includeMinTimeAsMetadata,
// includeMaxTimeAsMetadata, eventFilter and wholeBucketFilter, which
// Folio does not apply, are refused (NotImplemented) once checked;
// usesExtendedRange and fixedBuckets only allow rewrites, which change
// no result.
func ParseUnpackSpec(d bson.Raw) (Unpacking, error) {
	var u Unpacking
	elems, err := d.Elements()
	if err != nil {
		return u, err
	}
	var hasFields, hasTime, hasSpan bool
	for _, el := range elems {
		v, key := el.Value(), el.Key()
		switch key {
		case "include", "exclude":
			if hasFields {
				return u, mongoerr.New(mongoerr.UnpackIncludeAndExclude, "The $_internalUnpackBucket stage expects at most one of include/exclude parameters to be specified")
			}
			names, err := fieldNames(v, "include or exclude", mongoerr.UnpackFieldsNotArray, mongoerr.UnpackFieldNotString, mongoerr.UnpackFieldDotted)
			if err != nil {
				return u, err
			}
			for _, s := range names {
				if !slices.Contains(u.Fields, s) {
					u.Fields = append(u.Fields, s)
				}
			}
			u.Include, hasFields = key == "include", true
		case "assumeNoMixedSchemaData", "timeField", "metaField":
			if err := internalUnpackCodes.read(key, v, &u); err != nil {
				return u, err
			}
			hasTime = hasTime || key == "timeField"
		case "bucketMaxSpanSeconds":
			n, ok := v.Int32OK()
			if !ok {
				return u, mongoerr.New(mongoerr.UnpackSpanNotInt, "bucketMaxSpanSeconds field must be an integer, got: %s", values.TypeName(v.Type))
			}
			if n <= 0 {
				return u, mongoerr.New(mongoerr.UnpackSpanNotPositive, "bucketMaxSpanSeconds field must be greater than zero")
			}
			u.BucketMaxSpanSeconds, hasSpan = int64(n), true
		case "computedMetaProjFields":
			names, err := fieldNames(v, "computedMetaProjFields", mongoerr.UnpackComputedNotArray, mongoerr.UnpackComputedNotString, mongoerr.UnpackComputedDotted)
			if err != nil {
				return u, err
			}
			u.Computed = append(u.Computed, names...)
		case "includeMinTimeAsMetadata", "includeMaxTimeAsMetadata", "usesExtendedRange", "fixedBuckets":
			b, ok := v.BooleanOK()
			if !ok {
				code := map[string]mongoerr.Code{"includeMinTimeAsMetadata": mongoerr.UnpackMinTimeNotBool, "includeMaxTimeAsMetadata": mongoerr.UnpackMaxTimeNotBool,
					"usesExtendedRange": mongoerr.UnpackExtendedRangeNotBool, "fixedBuckets": mongoerr.UnpackFixedBucketsNotBool}[key]
				return u, mongoerr.New(code, "%s field must be a bool, got: %s", key, values.TypeName(v.Type))
			}
			if b && strings.HasPrefix(key, "include") {
				return u, mongoerr.New(mongoerr.NotImplemented, "Folio does not support the %s option of %s", key, UnpackStage)
			}
		case "eventFilter", "wholeBucketFilter":
			if _, ok := v.DocumentOK(); !ok {
				code := mongoerr.UnpackEventFilterNotObject
				if key == "wholeBucketFilter" {
					code = mongoerr.UnpackWholeBucketFilterNotObject
				}
				return u, mongoerr.New(code, "%s field must be an object, got: %s", key, values.TypeName(v.Type))
			}
			return u, mongoerr.New(mongoerr.NotImplemented, "Folio does not support the %s option of %s", key, UnpackStage)
		default:
			return u, mongoerr.New(mongoerr.UnpackUnknownParameter, "unrecognized parameter to %s: %s", UnpackStage, key)
		}
	}
	if !hasTime {
		return u, mongoerr.New(mongoerr.UnpackNoTimeField, "The %s stage requires a timeField parameter", UnpackStage)
	}
	if !hasSpan {
		return u, mongoerr.New(mongoerr.UnpackNoSpan, "The %s stage requires a bucketMaxSpanSeconds parameter", UnpackStage)
	}
	return u, nil
}

// ExternalUnpackStage is $_unpackBucket, the unpacking stage MongoDB lets
// other products run on a buckets collection: $_internalUnpackBucket
// taking only timeField, metaField and assumeNoMixedSchemaData.
const ExternalUnpackStage = "$_unpackBucket"

// ParseExternalUnpackSpec reads the argument of $_unpackBucket as MongoDB
// 7.0's DocumentSourceInternalUnpackBucket::createFromBsonExternal does;
// its buckets span the seconds granularity's 3600 seconds.
func ParseExternalUnpackSpec(d bson.Raw) (Unpacking, error) {
	var u Unpacking
	elems, err := d.Elements()
	if err != nil {
		return u, err
	}
	var hasTime bool
	for _, el := range elems {
		v, key := el.Value(), el.Key()
		switch key {
		case "timeField", "metaField", "assumeNoMixedSchemaData":
			if err := externalUnpackCodes.read(key, v, &u); err != nil {
				return u, err
			}
			hasTime = hasTime || key == "timeField"
		default:
			return u, mongoerr.New(mongoerr.UnpackBucketUnknownParameter, "unrecognized parameter to %s: %s", ExternalUnpackStage, key)
		}
	}
	if !hasTime {
		return u, mongoerr.New(mongoerr.UnpackBucketNoTimeField, "The %s stage requires a timeField parameter", ExternalUnpackStage)
	}
	u.BucketMaxSpanSeconds = granularities["seconds"][0]
	return u, nil
}

// Modify applies collMod's timeseries document to o, as MongoDB 7.0 does:
// a coarser granularity (seconds to minutes, minutes to hours), or equal
// bucketMaxSpanSeconds and bucketRoundingSeconds no smaller than the
// current ones. It reports whether the options changed.
func Modify(o Options, mod bson.Raw) (Options, bool, error) {
	elems, err := mod.Elements()
	if err != nil {
		return o, false, err
	}
	var target string
	var span, rounding int64
	seen := map[string]bool{}
	for _, el := range elems {
		v, key := el.Value(), el.Key()
		if seen[key] {
			return o, false, mongoerr.New(mongoerr.IDLDuplicateField, "BSON field 'collMod.timeseries.%s' is a duplicate field", key)
		}
		seen[key] = true
		switch key {
		case "granularity":
			if v.Type == bson.TypeNull || v.Type == bson.TypeUndefined {
				seen[key] = false // absent, as the IDL reads a null
				continue
			}
			s, ok := v.StringValueOK()
			if !ok {
				return o, false, mongoerr.WrongType("collMod.timeseries.granularity", values.TypeName(v.Type), "string")
			}
			if _, known := granularities[s]; !known {
				return o, false, mongoerr.New(mongoerr.BadValue, "Enumeration value '%s' for field 'collMod.timeseries.granularity' is not a valid value.", s)
			}
			target = s
		case "bucketMaxSpanSeconds", "bucketRoundingSeconds":
			if v.Type == bson.TypeNull || v.Type == bson.TypeUndefined {
				seen[key] = false
				continue
			}
			n, err := readSpan(v, "collMod.timeseries", key)
			if err != nil {
				return o, false, err
			}
			if key == "bucketMaxSpanSeconds" {
				span = n
			} else {
				rounding = n
			}
		default:
			return o, false, mongoerr.New(mongoerr.IDLUnknownField, "BSON field 'collMod.timeseries.%s' is an unknown field.", key)
		}
	}
	badTransition := mongoerr.New(mongoerr.InvalidOptions, "Invalid transition for timeseries.granularity. Can only transition from 'seconds' to 'minutes' or 'minutes' to 'hours'.")
	next := o
	if target != "" {
		g := granularities[target]
		switch {
		case span != 0 && span != g[0]:
			return o, false, mongoerr.New(mongoerr.InvalidOptions, "Timeseries 'bucketMaxSpanSeconds' is not configurable to a value other than the default for the provided granularity")
		case rounding != 0:
			return o, false, mongoerr.New(mongoerr.InvalidOptions, "Timeseries 'bucketRoundingSeconds' is not configurable alongside the granularity parameter")
		case o.Granularity == target:
			return o, false, nil
		case o.Granularity == "minutes" && target != "hours", o.Granularity == "hours":
			return o, false, badTransition
		}
		next.Granularity, next.BucketMaxSpanSeconds, next.BucketRoundingSeconds = target, g[0], g[1]
	} else {
		switch {
		case span == 0 || rounding == 0:
			return o, false, mongoerr.New(mongoerr.InvalidOptions, "Timeseries 'bucketMaxSpanSeconds' and 'bucketRoundingSeconds' need to be set alongside each other")
		case span != rounding:
			return o, false, mongoerr.New(mongoerr.InvalidOptions, "Timeseries 'bucketRoundingSeconds' needs to be equal to 'bucketMaxSpanSeconds'")
		}
		next.Granularity, next.BucketMaxSpanSeconds, next.BucketRoundingSeconds = "", span, rounding
	}
	switch {
	case next.BucketMaxSpanSeconds == o.BucketMaxSpanSeconds && next.BucketRoundingSeconds == o.BucketRoundingSeconds:
		return o, false, nil
	case next.BucketMaxSpanSeconds < o.BucketMaxSpanSeconds:
		return o, false, mongoerr.New(mongoerr.InvalidOptions, "Timeseries 'bucketMaxSpanSeconds' needs to be equal or greater to transition")
	case next.BucketRoundingSeconds < o.BucketRoundingSeconds:
		return o, false, mongoerr.New(mongoerr.InvalidOptions, "Timeseries 'bucketRoundingSeconds' needs to be equal or greater to transition")
	}
	return next, true, nil
}
