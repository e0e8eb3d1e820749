package commands

import (
	"math"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/timeseries"
	"github.com/folio-db/folio/internal/values"
)

// createSpec declares create's fields.
// https://www.mongodb.com/docs/v7.0/reference/command/create/
var createSpec = &argSpec{path: "create", fields: []argField{
	arg("capped", tBool),
	arg("size", tSafe),
	arg("max", tSafe),
	arg("autoIndexId", tBool),
	// Temporary collections are dropped at restart, which Folio does not
	// do.
	refuseTrue("temp", tBool, "temporary collections"),
	ignore("flags", tLong, "deprecated; MongoDB ignores it"),
	arg("storageEngine", tDoc),
	arg("indexOptionDefaults", tDoc),
	arg("validationLevel", tString),
	arg("validationAction", tString),
	arg("idIndex", tDoc),
	arg("viewOn", tString),
	arg("pipeline", tArray),
	arg("timeseries", tDoc),
	arg("validator", tDoc),
	arg("clusteredIndex", tSafeBoolOrDoc),
	refuse("encryptedFields", tDoc, "queryable encryption"),
	arg("collation", tDoc),
	arg("changeStreamPreAndPostImages", tDoc),
	arg("expireAfterSeconds", tLong),
}, subs: []*argSpec{indexOptionDefaultsSpec, preAndPostImagesSpecs["create"]}}

// indexOptionDefaultsSpec declares create's indexOptionDefaults.
var indexOptionDefaultsSpec = &argSpec{path: "create.indexOptionDefaults", fields: []argField{
	arg("storageEngine", tDoc),
}}

// validationLevels and validationActions are the values MongoDB's create
// accepts for validationLevel and validationAction.
var (
	validationLevels  = map[string]bool{"off": true, "strict": true, "moderate": true}
	validationActions = map[string]bool{"error": true, "warn": true}
)

// checkCreateBound applies the bounds of create's IDL validators.
func checkCreateBound(field string, n, lo, hi int64) error {
	switch {
	case n < lo:
		return mongoerr.New(mongoerr.IDLValueOutOfRange, "BSON field '%s' value must be >= %d, actual value '%d'", field, lo, n)
	case n > hi && hi == math.MaxInt32:
		return mongoerr.New(mongoerr.IDLValueOutOfRange, "BSON field '%s' value must be < %d, actual value '%d'", field, hi+1, n)
	case n > hi:
		return mongoerr.New(mongoerr.IDLValueOutOfRange, "BSON field '%s' value must be <= %d, actual value '%d'", field, hi, n)
	}
	return nil
}

// cappedMaxDocs is a capped collection's max as MongoDB stores it: 0 or
// less (no limit) as 2^31-1.
func cappedMaxDocs(n int64) int64 {
	if n <= 0 {
		return math.MaxInt32
	}
	return n
}

// notImplementedCreateOption is the error for a create option Folio does not
// honour.
func notImplementedCreateOption(name string) error {
	return mongoerr.New(mongoerr.NotImplemented, "Folio does not support the create option '%s' yet", name)
}

// parseCreateOptions reads the parsed fields of a create of the
// collection db.name.
func parseCreateOptions(c *cmdArgs, db, name string) (engine.CollectionOptions, error) {
	var opts engine.CollectionOptions
	var err error
	opts.Capped = c.bool("capped")
	// size and max are safeInt64s: a fraction is truncated.
	if c.has("size") {
		opts.Size = c.safeInt("size")
		err = checkCreateBound("size", opts.Size, 1, maxCappedSize)
	}
	if err == nil && c.has("max") {
		opts.Max = c.safeInt("max")
		err = checkCreateBound("max", opts.Max, math.MinInt64, math.MaxInt32)
		opts.Max = cappedMaxDocs(opts.Max)
	}
	if err != nil {
		return opts, err
	}
	if c.has("autoIndexId") {
		b := c.bool("autoIndexId")
		opts.AutoIndexID = &b
	}
	opts.StorageEngine = c.doc("storageEngine")
	if d := c.doc("indexOptionDefaults"); d != nil {
		ioc, err := parseSub(d, indexOptionDefaultsSpec)
		if err != nil {
			return opts, err
		}
		opts.IndexStorageEngine = ioc.doc("storageEngine")
	}
	for _, key := range [...]string{"validationLevel", "validationAction"} {
		if !c.has(key) {
			continue
		}
		val := c.str(key)
		allowed := validationLevels
		if key == "validationAction" {
			allowed = validationActions
		}
		if !allowed[val] {
			return opts, mongoerr.New(mongoerr.BadValue, "Enumeration value '%s' for field 'create.%s' is not a valid value.", val, key)
		}
		if key == "validationLevel" {
			opts.ValidationLevel = val
		} else {
			opts.ValidationAction = val
		}
	}
	if d := c.doc("changeStreamPreAndPostImages"); d != nil {
		if opts.PreAndPostImages, err = parsePreAndPostImages(d, "create"); err != nil {
			return opts, err
		}
	}
	var defaultColl *collation.Collator
	if d := c.doc("collation"); d != nil {
		if defaultColl, err = collation.Parse(d); err != nil {
			return opts, err
		}
		// The simple collation is the default: nothing is stored.
		if defaultColl != nil {
			opts.Collation = defaultColl.Document()
		}
	}
	if v := c.doc("validator"); len(v) > 5 {
		if _, err := query.CompileValidator(v, nil); err != nil {
			return opts, err
		}
		opts.Validator = v
	}
	var clustered *clusteredIndexOption
	if c.has("clusteredIndex") {
		// (with timeseries, only a buckets collection's:
		// checkTimeseriesCreateOptions)
		buckets := strings.HasPrefix(name, timeseries.BucketsPrefix)
		var on bool
		if clustered, on, err = parseClusteredIndex(c.value("clusteredIndex")); err != nil {
			return opts, err
		}
		switch {
		case clustered != nil && buckets, clustered == nil && on && !buckets:
			return opts, mongoerr.New(mongoerr.ClusteredIndexLegacyFormat, "The 'clusteredIndex' legacy format {clusteredIndex: <bool>} is only supported for specific internal collections and vice versa")
		case !on && buckets:
			// Folio clusters every time series collection's buckets by
			// their timeseries options.
			return opts, notImplementedCreateOption("clusteredIndex: false on a time series buckets collection")
		case clustered != nil:
			opts.ClusteredIndex = clustered.spec()
		}
	}
	if c.has("expireAfterSeconds") {
		// A clustered collection's TTL: documents whose _id is a date
		// older than this many seconds expire.
		if opts.ClusteredIndex == nil && !c.has("timeseries") {
			return opts, mongoerr.New(mongoerr.InvalidOptions, "'expireAfterSeconds' requires clustering to be enabled")
		}
		n, err := c.long("expireAfterSeconds")
		if err != nil {
			return opts, err
		}
		// a clustered collection's is checked with its clusteredIndex
		if clustered == nil {
			if err := checkClusteredTTL(n); err != nil {
				return opts, err
			}
		}
		opts.ExpireAfterSeconds = &n
	}
	if d := c.doc("idIndex"); d != nil {
		if c.has("autoIndexId") {
			// create's typedRun, before it validates the spec
			return opts, mongoerr.New(mongoerr.InvalidOptions, "'idIndex' is not allowed with 'autoIndexId': %s", values.ShellDoc(d))
		}
		spec, err := parseIndexSpec(d, false, false, false)
		if err != nil {
			return opts, err
		}
		if !isIDIndexPattern(spec.Key) {
			return opts, mongoerr.New(mongoerr.BadValue, "The field 'key' for an _id index must be {_id: 1}, but got %s", spec.Key)
		}
		// Its name is always _id_ (IndexCatalogImpl::_fixIndexSpec names
		// an index of key {_id: 1} so), and its collation, given, must
		// be the collection's: the simple one when the collection has
		// none.
		if spec.Collation != nil {
			idColl, err := collation.Parse(spec.Collation)
			if err != nil {
				return opts, err
			}
			if !collation.Equal(defaultColl, idColl) {
				return opts, mongoerr.New(mongoerr.BadValue, "'idIndex' must have the same collation as the collection.")
			}
		}
		if opts.ClusteredIndex != nil {
			// A clustered collection has no _id index to describe.
			return opts, mongoerr.New(mongoerr.InvalidOptions, "The 'clusteredIndex' option is not supported with the 'idIndex' option")
		}
		if spec.Version == 1 {
			if opts.Collation != nil {
				// the _id index would take the collection's collation,
				// which a version 1 index cannot have
				return opts, notImplementedCreateOption("idIndex.v: 1 with a collation")
			}
			opts.IDIndexV1 = true
		}
	}
	if clustered != nil {
		if err := checkClusteredIndex(clustered, opts.AutoIndexID, opts.ExpireAfterSeconds); err != nil {
			return opts, err
		}
		if opts.Capped {
			return opts, notImplementedCreateOption("clusteredIndex with capped")
		}
	}
	if b := opts.AutoIndexID; b != nil && !*b && opts.ClusteredIndex == nil {
		// Only a collection that needs an _id index (not a clustered
		// one) is refused, and on a replicated namespace with MongoDB's
		// error (DatabaseImpl::createCollection).
		if engine.IsReplicated(db, name) {
			return opts, mongoerr.New(mongoerr.AutoIndexIDReplicated, "autoIndexId:false is not allowed for collection %s.%s because it can be replicated", db, name)
		}
		// Folio keeps documents in _id order and an _id unique: it
		// cannot do without the _id index.
		return opts, notImplementedCreateOption("autoIndexId: false")
	}
	return opts, nil
}

// checkClusteredTTL applies MongoDB's check of a clustered (or time
// series) collection's expireAfterSeconds (validateExpireAfterSeconds,
// kClusteredTTLIndex): not negative, and, in milliseconds, neither
// overflowing nor beyond the time since the epoch (InvalidOptions).
func checkClusteredTTL(n int64) error {
	switch {
	case n < 0:
		return mongoerr.New(mongoerr.InvalidOptions, "TTL index 'expireAfterSeconds' option cannot be less than 0")
	case n > math.MaxInt64/1000 || n*1000 > time.Now().UnixMilli():
		return mongoerr.New(mongoerr.InvalidOptions, "TTL index 'expireAfterSeconds' option must be within an acceptable range, try a lower number")
	}
	return nil
}

// preAndPostImagesSpecs declare changeStreamPreAndPostImages of create and
// collMod: {enabled: <bool>}.
var preAndPostImagesSpecs = map[string]*argSpec{
	"create":  {path: "create.changeStreamPreAndPostImages", fields: []argField{required("enabled", tStrictBool)}},
	"collMod": {path: "collMod.changeStreamPreAndPostImages", fields: []argField{required("enabled", tStrictBool)}},
}

// parsePreAndPostImages reads changeStreamPreAndPostImages of cmd.
func parsePreAndPostImages(d bson.Raw, cmd string) (bool, error) {
	c, err := parseSub(d, preAndPostImagesSpecs[cmd])
	if err != nil {
		return false, err
	}
	return c.bool("enabled"), nil
}
