package commands

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

func init() {
	register(createIndexesCmd, "createIndexes")
	register(dropIndexesCmd, "dropIndexes", "deleteIndexes")
	register(listIndexesCmd, "listIndexes")
}

// maxTTLSeconds is the largest expireAfterSeconds MongoDB accepts.
const maxTTLSeconds = 2147483647

// parseIndexSpec reads one entry of createIndexes' indexes array.
func parseIndexSpec(doc bson.Raw) (engine.IndexSpec, error) {
	spec := engine.IndexSpec{ExpireAfter: -1}
	invalid := func(field string) error {
		return mongoerr.New(mongoerr.InvalidIndexSpecificationOption,
			"The field '%s' is not valid for an index specification. Specification: %s", field, doc)
	}
	err := eachField(doc, "createIndexes.indexes", func(key string, v bson.RawValue) (bool, error) {
		var err error
		switch key {
		case "key":
			spec.Key, err = argDoc("createIndexes.indexes", key, v)
		case "name":
			spec.Name, err = argString("createIndexes.indexes", key, v)
		case "unique":
			spec.Unique, err = argBool("createIndexes.indexes", key, v)
		case "sparse":
			spec.Sparse, err = argBool("createIndexes.indexes", key, v)
		case "hidden":
			spec.Hidden, err = argBool("createIndexes.indexes", key, v)
		case "partialFilterExpression":
			spec.Partial, err = argDoc("createIndexes.indexes", key, v)
		case "expireAfterSeconds":
			n, ok := values.Int64(v)
			if !ok {
				if f, isNum := values.Float64(v); isNum {
					n, ok = int64(f), true
				}
			}
			if !ok || n < 0 || n > maxTTLSeconds {
				return true, mongoerr.New(mongoerr.CannotCreateIndex,
					"TTL index 'expireAfterSeconds' option must be within an acceptable range, try a lower number")
			}
			spec.ExpireAfter = n
		case "v", "background", "ns", "dropDups":
		case "collation", "weights", "default_language", "language_override", "textIndexVersion",
			"2dsphereIndexVersion", "bits", "min", "max", "wildcardProjection", "storageEngine", "clustered":
			err = mongoerr.New(mongoerr.NotImplemented, "Folio does not support the index option '%s' yet", key)
		default:
			return true, invalid(key)
		}
		return true, err
	})
	if err != nil {
		return spec, err
	}
	if spec.Key == nil {
		return spec, mongoerr.New(mongoerr.FailedToParse, "The 'key' field is a required property of an index specification")
	}
	if spec.ExpireAfter >= 0 {
		if elems, _ := spec.Key.Elements(); len(elems) != 1 {
			return spec, mongoerr.New(mongoerr.CannotCreateIndex, "TTL indexes are single-field indexes, compound indexes do not support TTL. Index spec: %s", doc)
		}
	}
	return spec, nil
}

func createIndexesCmd(s *Service, r *Request) (bson.Raw, error) {
	coll, err := collectionArg(r.Cmd)
	if err != nil {
		return nil, err
	}
	var specs []engine.IndexSpec
	err = eachArg(r.Cmd, func(key string, v bson.RawValue) (bool, error) {
		switch key {
		case "indexes":
			docs, err := docsArg("createIndexes", key, v)
			if err != nil {
				return true, err
			}
			for _, d := range docs {
				spec, err := parseIndexSpec(d)
				if err != nil {
					return true, err
				}
				specs = append(specs, spec)
			}
		case "commitQuorum":
		default:
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	if len(specs) == 0 {
		return nil, mongoerr.New(mongoerr.BadValue, "Must specify at least one index to create")
	}
	res, err := s.Engine.CreateIndexes(r.DB, coll, specs, func(done, total int64) error {
		r.op.setProgress("Index Build: scanning collection", done, total)
		return mongoerr.Interruption(r.Ctx)
	})
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
		return nil, mongoerr.New(mongoerr.Code(40414), "BSON field 'dropIndexes.index' is missing but a required field")
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
	c := s.Engine.Collection(r.DB, name)
	if c == nil {
		return nil, mongoerr.New(mongoerr.NamespaceNotFound, "ns does not exist: %s.%s", r.DB, name)
	}
	docs := []bson.Raw{marshal(idIndexSpec())}
	for _, ix := range c.Indexes() {
		docs = append(docs, ix.Spec)
	}
	return oneBatchCursor(r.DB+"."+name, docs), nil
}
