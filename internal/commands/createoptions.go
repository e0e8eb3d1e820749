package commands

import (
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
)

// unsupportedCreateOptions are create options MongoDB accepts that Folio
// does not implement yet: they fail with NotImplemented naming the option
// rather than being ignored.
var unsupportedCreateOptions = map[string]bool{
	"viewOn": true, "pipeline": true, "timeseries": true, "validator": true, "clusteredIndex": true,
	"encryptedFields": true, "collation": true, "changeStreamPreAndPostImages": true, "expireAfterSeconds": true,
}

// validationLevels and validationActions are the values MongoDB's create
// accepts for validationLevel and validationAction.
var (
	validationLevels  = map[string]bool{"off": true, "strict": true, "moderate": true}
	validationActions = map[string]bool{"error": true, "warn": true}
)

// maxCappedSize is the largest capped collection size MongoDB accepts (1 PB).
const maxCappedSize = 1 << 50

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

// notImplementedCreateOption is the error for a create option Folio does not
// honour.
func notImplementedCreateOption(name string) error {
	return mongoerr.New(mongoerr.NotImplemented, "Folio does not support the create option '%s' yet", name)
}

// parseCreateOption reads one create option into opts.
func parseCreateOption(opts *engine.CollectionOptions, key string, v bson.RawValue) (bool, error) {
	var err error
	switch key {
	case "capped":
		opts.Capped, err = argBool("create", key, v)
	case "size":
		if opts.Size, err = argInt("create", key, v); err == nil {
			err = checkCreateBound(key, opts.Size, 1, maxCappedSize)
		}
	case "max":
		if opts.Max, err = argInt("create", key, v); err == nil {
			err = checkCreateBound(key, opts.Max, math.MinInt64, math.MaxInt32)
		}
		if opts.Max <= 0 {
			// MongoDB stores a max of 0 or less as 2^31-1.
			opts.Max = math.MaxInt32
		}
	case "autoIndexId":
		var b bool
		if b, err = argBool("create", key, v); err == nil && !b {
			// Folio always keeps documents in _id order: it cannot do
			// without the _id index.
			return true, notImplementedCreateOption("autoIndexId: false")
		}
		opts.AutoIndexID = &b
	case "temp":
		// Temporary collections are dropped at restart, which Folio does
		// not do.
		if opts.Temp, err = argBool("create", key, v); err == nil && opts.Temp {
			return true, notImplementedCreateOption("temp: true")
		}
	case "flags":
		// Deprecated; MongoDB ignores it.
		_, err = argInt("create", key, v)
	case "storageEngine":
		opts.StorageEngine, err = argDoc("create", key, v)
	case "indexOptionDefaults":
		var d bson.Raw
		if d, err = argDoc("create", key, v); err == nil {
			err = eachField(d, "create.indexOptionDefaults", func(k string, v bson.RawValue) (bool, error) {
				if k != "storageEngine" {
					return false, nil
				}
				var err error
				opts.IndexStorageEngine, err = argDoc("create.indexOptionDefaults", k, v)
				return true, err
			})
		}
	case "validationLevel", "validationAction":
		var val string
		if val, err = argString("create", key, v); err != nil {
			return true, err
		}
		allowed := validationLevels
		if key == "validationAction" {
			allowed = validationActions
		}
		if !allowed[val] {
			return true, mongoerr.New(mongoerr.BadValue, "Enumeration value '%s' for field 'create.%s' is not a valid value.", val, key)
		}
		if key == "validationLevel" {
			opts.ValidationLevel = val
		} else {
			opts.ValidationAction = val
		}
	case "idIndex":
		var d bson.Raw
		if d, err = argDoc("create", key, v); err != nil {
			return true, err
		}
		spec, err := parseIndexSpec(d, false)
		if err != nil {
			return true, err
		}
		if !isIDIndexPattern(spec.Key) {
			return true, mongoerr.New(mongoerr.BadValue, "The field 'key' for an _id index must be {_id: 1}, but got %s", spec.Key)
		}
		if spec.Name != "_id_" {
			return true, notImplementedCreateOption("idIndex.name")
		}
	default:
		if unsupportedCreateOptions[key] {
			return true, notImplementedCreateOption(key)
		}
		return false, nil
	}
	return true, err
}
