package commands

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
)

func init() {
	register(createIndexesCmd, "createIndexes")
	register(dropIndexesCmd, "dropIndexes", "deleteIndexes")
	register(listIndexesCmd, "listIndexes")
}

func createIndexesCmd(s *Service, r *Request) (bson.Raw, error) {
	coll, err := collectionArg(r.Cmd)
	if err != nil {
		return nil, err
	}
	var docs []bson.Raw
	var ignoreUnknown, haveIndexes bool
	err = eachArg(r.Cmd, func(key string, v bson.RawValue) (bool, error) {
		var err error
		switch key {
		case "indexes":
			docs, err = docsArg("createIndexes", key, v)
			haveIndexes = true
		case "ignoreUnknownIndexOptions":
			ignoreUnknown, err = argBool("createIndexes", key, v)
		case "commitQuorum", "v":
		default:
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return nil, err
	}
	if !haveIndexes {
		return nil, mongoerr.New(mongoerr.IDLFailedToParse, "BSON field 'createIndexes.indexes' is missing but a required field")
	}
	specs := make([]engine.IndexSpec, 0, len(docs))
	for _, d := range docs {
		spec, err := parseIndexSpec(d, ignoreUnknown)
		if err != nil {
			return nil, err
		}
		specs = append(specs, spec)
	}
	if len(specs) == 0 {
		return nil, mongoerr.New(mongoerr.BadValue, "Must specify at least one index to create")
	}
	var res engine.CreateIndexesResult
	if r.Txn != nil {
		res, err = r.Txn.CreateIndexes(r.DB, coll, specs)
	} else {
		res, err = s.Engine.CreateIndexes(r.DB, coll, specs, func(done, total int64) error {
			r.op.setProgress("Index Build: scanning collection", done, total)
			return mongoerr.Interruption(r.Ctx)
		})
	}
	if err != nil {
		return nil, err
	}
	d := bson.D{
		{Key: "numIndexesBefore", Value: int32(res.Before)},
		{Key: "numIndexesAfter", Value: int32(res.After)},
		{Key: "createdCollectionAutomatically", Value: res.CreatedCollection},
	}
	if res.Before == res.After {
		d = append(d, bson.E{Key: "note", Value: "all indexes already exist"})
	}
	return marshal(d), nil
}

func dropIndexesCmd(s *Service, r *Request) (bson.Raw, error) {
	coll, err := collectionArg(r.Cmd)
	if err != nil {
		return nil, err
	}
	var names []string
	var byKey bson.Raw
	have := false
	err = eachArg(r.Cmd, func(key string, v bson.RawValue) (bool, error) {
		if key != "index" {
			return false, nil
		}
		have = true
		switch v.Type {
		case bson.TypeString:
			names = []string{v.StringValue()}
		case bson.TypeEmbeddedDocument:
			byKey = v.Document()
		case bson.TypeArray:
			vals, _ := v.Array().Values()
			for _, n := range vals {
				if n.Type != bson.TypeString {
					return true, wrongType("dropIndexes", "index", n, "string")
				}
				names = append(names, n.StringValue())
			}
		default:
			return true, wrongType("dropIndexes", "index", v, "string")
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	if !have {
		return nil, mongoerr.New(mongoerr.IDLFailedToParse, "BSON field 'dropIndexes.index' is missing but a required field")
	}
	was, err := s.Engine.DropIndexes(r.DB, coll, names, byKey)
	if err != nil {
		return nil, err
	}
	return marshal(bson.D{{Key: "nIndexesWas", Value: int32(was)}}), nil
}

func listIndexesCmd(s *Service, r *Request) (bson.Raw, error) {
	name, err := collectionArg(r.Cmd)
	if err != nil {
		return nil, err
	}
	batchSize := int64(noBatchSize)
	err = eachArg(r.Cmd, func(key string, v bson.RawValue) (bool, error) {
		if key != "cursor" {
			return false, nil
		}
		c, err := argDoc("listIndexes", key, v)
		if err == nil {
			batchSize, err = cursorBatchSize("listIndexes", c)
		}
		return true, err
	})
	if err != nil {
		return nil, err
	}
	c := s.Engine.Collection(r.DB, name)
	if c == nil {
		return nil, mongoerr.New(mongoerr.NamespaceNotFound, "ns does not exist: %s.%s", r.DB, name)
	}
	docs := []bson.Raw{marshal(idIndexSpec())}
	for _, ix := range c.Indexes() {
		docs = append(docs, ix.Spec)
	}
	return s.serveList(r, name, docs, batchSize)
}
