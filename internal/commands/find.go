package commands

import (
	"math"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/expr"
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

// findArgs is a parsed find command.
type findArgs struct {
	engine.FindOptions
	batchSize int64 // noBatchSize when absent
	single    bool
	tailable  bool
	awaitData bool
	noTimeout bool
}

// parseFind reads a find command's fields.
func parseFind(cmd bson.Raw) (findArgs, error) {
	a := findArgs{batchSize: noBatchSize}
	o := &a.FindOptions
	var let bson.Raw
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
			if o.Skip, err = argSafeInt64("find", key, v); err == nil {
				err = nonNegative(key, o.Skip)
			}
		case "limit":
			if o.Limit, err = argSafeInt64("find", key, v); err == nil {
				err = nonNegative(key, o.Limit)
			}
		case "batchSize":
			a.batchSize, err = argBatchSize("find", key, v)
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
		case "noCursorTimeout":
			a.noTimeout, err = argBool("find", key, v)
		case "let":
			let, err = argDoc("find", key, v)
		case "allowPartialResults", "readOnce":
			// Meaningful only across shards, and a storage cache hint.
			_, err = argBool("find", key, v)
		case "$_requestResumeToken", "$_resumeAfter":
			if on, _ := argBool("find", key, v); on || v.Type == bson.TypeEmbeddedDocument {
				err = mongoerr.New(mongoerr.NotImplemented, "Folio does not support the find option '%s' yet", key)
			}
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
	if err == nil && let != nil {
		// The variables are evaluated once the command has parsed.
		o.Let, err = expr.Bind(let, time.Now())
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
		return s.serveTailable(r, r.DB, coll, tc, b, a.batchSize, a.awaitData, a.noTimeout)
	}
	a.Txn = r.Txn
	a.Batched = true // the reply copies each batch
	cur, err := s.Engine.Find(r.DB, coll, a.FindOptions)
	if err != nil {
		return nil, err
	}
	fb := firstBatch{
		size: a.batchSize, defaultSize: defaultFirstBatch, single: a.single, noTimeout: a.noTimeout,
		empty: s.Engine.Collection(r.DB, coll) == nil,
	}
	if a.single {
		// A single batch without a batchSize is bounded by size only.
		fb.defaultSize = math.MaxInt64
	}
	return s.serveFirstBatch(r, r.DB, coll, cur, b, fb)
}
