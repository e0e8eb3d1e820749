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
	"returnKey": true, "showRecordId": true, "min": true, "max": true, "collation": true, "oplogReplay": true,
}

func nonNegative(field string, n int64) error {
	if n < 0 {
		return mongoerr.New(mongoerr.Code(51024), "BSON field '%s' value must be >= 0, actual value '%d'", field, n)
	}
	return nil
}

// findArgs is a parsed find command.
type findArgs struct {
	engine.FindOptions
	batchSize int64
	single    bool
	tailable  bool
	awaitData bool
}

// parseFind reads a find command's fields.
func parseFind(cmd bson.Raw) (findArgs, error) {
	var a findArgs
	o := &a.FindOptions
	err := eachArg(cmd, func(key string, v bson.RawValue) (bool, error) {
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
			if a.batchSize, err = argInt("find", key, v); err == nil {
				err = nonNegative(key, a.batchSize)
			}
		case "singleBatch":
			a.single, err = argBool("find", key, v)
		case "tailable":
			a.tailable, err = argBool("find", key, v)
		case "awaitData":
			a.awaitData, err = argBool("find", key, v)
		case "allowDiskUse":
			o.AllowDiskUse, err = argBool("find", key, v)
		case "hint":
			o.Hint = v
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
	if err == nil && a.awaitData && !a.tailable {
		err = mongoerr.New(mongoerr.FailedToParse, "Cannot set 'awaitData' without also setting 'tailable'")
	}
	return a, err
}

func findCmd(s *Service, r *Request) (bson.Raw, error) {
	s.Ops.Query.Add(1)
	coll, err := collectionArg(r.Cmd)
	if err != nil {
		return nil, err
	}
	a, err := parseFind(r.Cmd)
	if err != nil {
		return nil, err
	}
	b := &binding{r.Ctx}
	a.Ctx = b
	if a.tailable {
		tc, err := s.Engine.Tail(r.DB, coll, a.FindOptions)
		if err != nil {
			return nil, err
		}
		return s.serveTailable(r.DB, coll, tc, b, a.batchSize, a.awaitData)
	}
	a.Txn = r.Txn
	cur, err := s.Engine.Find(r.DB, coll, a.FindOptions)
	if err != nil {
		return nil, err
	}
	return s.serveFirstBatch(r, coll, cur, b, a.batchSize, a.single)
}
