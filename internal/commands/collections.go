package commands

import (
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
	mayList, err := s.listableCollections(r)
	if err != nil {
		return nil, err
	}
	var batch []bson.Raw
	for _, c := range s.Engine.Collections(r.DB) {
		if !mayList(c.Name) {
			continue
		}
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
