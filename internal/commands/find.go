package commands

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
)

func init() {
	register(findCmd, "find")
}

// unsupportedFindOptions are find options Folio does not implement yet; a
// truthy value fails clearly instead of being ignored.
var unsupportedFindOptions = map[string]bool{
	"tailable": true, "awaitData": true, "returnKey": true, "showRecordId": true,
	"min": true, "max": true, "collation": true, "oplogReplay": true,
}

func nonNegative(field string, n int64) error {
	if n < 0 {
		return mongoerr.New(mongoerr.Code(51024), "BSON field '%s' value must be >= 0, actual value '%d'", field, n)
	}
	return nil
}

func findCmd(s *Service, r *Request) (bson.Raw, error) {
	s.Ops.Query.Add(1)
	coll, err := collectionArg(r.Cmd)
	if err != nil {
		return nil, err
	}
	var o engine.FindOptions
	var batchSize int64
	var single bool
	err = eachArg(r.Cmd, func(key string, v bson.RawValue) (bool, error) {
		var err error
		switch key {
		case "filter":
			o.Filter, err = argDoc("find", key, v)
		case "sort":
			o.Sort, err = argDoc("find", key, v)
		case "projection":
			o.Projection, err = argDoc("find", key, v)
		case "skip":
			if o.Skip, err = argInt("find", key, v); err == nil {
				err = nonNegative(key, o.Skip)
			}
		case "limit":
			if o.Limit, err = argInt("find", key, v); err == nil {
				err = nonNegative(key, o.Limit)
			}
		case "batchSize":
			if batchSize, err = argInt("find", key, v); err == nil {
				err = nonNegative(key, batchSize)
			}
		case "singleBatch":
			single, err = argBool("find", key, v)
		case "allowDiskUse":
			o.AllowDiskUse, err = argBool("find", key, v)
		case "hint":
			err = checkHint(v)
		case "noCursorTimeout", "allowPartialResults", "let", "readOnce", "$_requestResumeToken", "$_resumeAfter":
		default:
			if !unsupportedFindOptions[key] {
				return false, nil
			}
			if on, _ := argBool("find", key, v); on || v.Type == bson.TypeEmbeddedDocument {
				err = mongoerr.New(mongoerr.NotImplemented, "Folio does not support the find option '%s' yet", key)
			}
		}
		return true, err
	})
	if err != nil {
		return nil, err
	}
	cur, err := s.Engine.Find(r.DB, coll, o)
	if err != nil {
		return nil, err
	}
	return s.serveFirstBatch(r.DB, coll, cur, batchSize, single)
}

// checkHint accepts the hints that name an index Folio has: the _id index
// (by key or name) and $natural; others fail as in MongoDB.
func checkHint(v bson.RawValue) error {
	switch v.Type {
	case bson.TypeString:
		if v.StringValue() == "_id_" {
			return nil
		}
	case bson.TypeEmbeddedDocument:
		elems, err := v.Document().Elements()
		if err == nil && len(elems) == 0 {
			return nil
		}
		if err == nil && len(elems) == 1 && (elems[0].Key() == "_id" || elems[0].Key() == "$natural") {
			return nil
		}
	default:
		return wrongType("find", "hint", v, "object")
	}
	return mongoerr.New(mongoerr.BadValue, "error processing query: planner returned error :: caused by :: hint provided does not correspond to an existing index")
}
