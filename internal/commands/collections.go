package commands

import (
	"math"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
)

func init() {
	register(createCmd, "create")
	register(dropCmd, "drop")
	register(dropDatabaseCmd, "dropDatabase")
	register(listCollectionsCmd, "listCollections")
	registerAdmin(renameCollectionCmd, "renameCollection")
}

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
		return mongoerr.New(mongoerr.Code(51024), "BSON field '%s' value must be >= %d, actual value '%d'", field, lo, n)
	case n > hi && hi == math.MaxInt32:
		return mongoerr.New(mongoerr.Code(51024), "BSON field '%s' value must be < %d, actual value '%d'", field, hi+1, n)
	case n > hi:
		return mongoerr.New(mongoerr.Code(51024), "BSON field '%s' value must be <= %d, actual value '%d'", field, hi, n)
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

func createCmd(s *Service, r *Request) (bson.Raw, error) {
	name, err := collectionArg(r.Cmd)
	if err != nil {
		return nil, err
	}
	var opts engine.CollectionOptions
	err = eachArg(r.Cmd, func(key string, v bson.RawValue) (bool, error) {
		return parseCreateOption(&opts, key, v)
	})
	if err != nil {
		return nil, err
	}
	if opts.Capped {
		if opts.Size <= 0 {
			return nil, mongoerr.New(mongoerr.InvalidOptions, "the 'size' field is required when 'capped' is true")
		}
		// MongoDB rounds a capped collection's size up to a multiple of 256.
		opts.Size = (opts.Size + 255) / 256 * 256
	} else {
		opts.Size, opts.Max = 0, 0
	}
	return nil, s.Engine.CreateCollection(r.DB, name, opts)
}

func dropCmd(s *Service, r *Request) (bson.Raw, error) {
	name, err := collectionArg(r.Cmd)
	if err != nil {
		return nil, err
	}
	c := s.Engine.Collection(r.DB, name)
	existed, err := s.Engine.DropCollection(r.DB, name)
	if err != nil || !existed || c == nil {
		return nil, err
	}
	return marshal(bson.D{{Key: "nIndexesWas", Value: int32(len(c.Indexes()) + 1)}, {Key: "ns", Value: r.DB + "." + name}}), nil
}

func dropDatabaseCmd(s *Service, r *Request) (bson.Raw, error) {
	return nil, s.Engine.DropDatabase(r.DB)
}

// collectionInfo is a collection as listCollections describes it.
func collectionInfo(c *engine.Collection, nameOnly bool) bson.D {
	if nameOnly {
		return bson.D{{Key: "name", Value: c.Name}, {Key: "type", Value: "collection"}}
	}
	return bson.D{
		{Key: "name", Value: c.Name},
		{Key: "type", Value: "collection"},
		{Key: "options", Value: c.Options.Doc()},
		{Key: "info", Value: bson.D{
			{Key: "readOnly", Value: false},
			{Key: "uuid", Value: bson.Binary{Subtype: bson.TypeBinaryUUID, Data: c.UUID[:]}},
		}},
		{Key: "idIndex", Value: idIndexSpec()},
	}
}

func idIndexSpec() bson.D {
	return bson.D{{Key: "v", Value: int32(2)}, {Key: "key", Value: bson.D{{Key: "_id", Value: int32(1)}}}, {Key: "name", Value: "_id_"}}
}

func listCollectionsCmd(s *Service, r *Request) (bson.Raw, error) {
	var filter bson.Raw
	var nameOnly bool
	batchSize := int64(noBatchSize)
	err := eachArg(r.Cmd, func(key string, v bson.RawValue) (bool, error) {
		var err error
		switch key {
		case "filter":
			filter, err = argDoc("listCollections", key, v)
		case "nameOnly":
			nameOnly, err = argBool("listCollections", key, v)
		case "cursor":
			var c bson.Raw
			if c, err = argDoc("listCollections", key, v); err == nil {
				batchSize, err = cursorBatchSize("listCollections", c)
			}
		case "authorizedCollections", "includePendingDrops":
		default:
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return nil, err
	}
	f, err := query.Compile(filter)
	if err != nil {
		return nil, err
	}
	var batch []bson.Raw
	for _, c := range s.Engine.Collections(r.DB) {
		doc := marshal(collectionInfo(c, nameOnly))
		if f.Match(doc) {
			batch = append(batch, doc)
		}
	}
	return s.serveList(r, "$cmd.listCollections", batch, batchSize)
}

// renameCollectionCmd runs {renameCollection: "db.from", to: "db.to",
// dropTarget: bool} on the admin database.
func renameCollectionCmd(s *Service, r *Request) (bson.Raw, error) {
	from, err := argString("renameCollection", "renameCollection", r.Cmd.Lookup("renameCollection"))
	if err != nil {
		return nil, err
	}
	var to string
	var dropTarget bool
	err = eachArg(r.Cmd, func(key string, v bson.RawValue) (bool, error) {
		var err error
		switch key {
		case "to":
			to, err = argString("renameCollection", key, v)
		case "dropTarget":
			dropTarget, err = argBool("renameCollection", key, v)
		case "stayTemp":
		default:
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return nil, err
	}
	fromDB, fromColl, ok1 := strings.Cut(from, ".")
	toDB, toColl, ok2 := strings.Cut(to, ".")
	if !ok1 || !ok2 || fromColl == "" || toColl == "" {
		return nil, mongoerr.New(mongoerr.InvalidNamespace, "Invalid namespace specified '%s'", to)
	}
	return nil, s.Engine.RenameCollection(fromDB, fromColl, toDB, toColl, dropTarget)
}
