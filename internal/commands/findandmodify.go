package commands

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
)

func init() {
	register(findAndModifyCmd, "findAndModify", "findandmodify")
}

func findAndModifyCmd(s *Service, r *Request) (bson.Raw, error) {
	coll, err := collectionArg(r.Cmd)
	if err != nil {
		return nil, err
	}
	const cmd = "findAndModify"
	var spec engine.FindAndModifySpec
	var stmt stmtArgs
	var let bson.Raw
	hasUpdate := false
	err = eachArg(r.Cmd, func(key string, v bson.RawValue) (bool, error) {
		var err error
		switch key {
		case "query":
			spec.Filter, err = argDoc(cmd, key, v)
		case "sort":
			spec.Sort, err = argDoc(cmd, key, v)
		case "fields":
			spec.Fields, err = argDoc(cmd, key, v)
		case "update":
			hasUpdate = true
			spec.Update, spec.Pipeline, err = updateArg(cmd, key, v)
		case "remove":
			spec.Remove, err = argBool(cmd, key, v)
		case "new":
			spec.New, err = argBool(cmd, key, v)
		case "upsert":
			spec.Upsert, err = argBool(cmd, key, v)
		case "arrayFilters":
			spec.ArrayFilters, err = docsArg(cmd, key, v)
		case "hint":
			spec.Hint = v
		case "collation":
			err = mongoerr.New(mongoerr.NotImplemented, "Folio does not support collations yet")
		case "stmtId":
			err = stmt.parse(cmd, key, v)
		case "let":
			let, err = argDoc(cmd, key, v)
		case "bypassDocumentValidation":
			// Folio has no document validators: nothing to bypass.
			_, err = argBool(cmd, key, v)
		default:
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return nil, err
	}
	switch {
	case spec.Remove && hasUpdate:
		return nil, mongoerr.New(mongoerr.FailedToParse, "Cannot specify both an update and remove=true")
	case !spec.Remove && !hasUpdate:
		return nil, mongoerr.New(mongoerr.FailedToParse, "Either an update or remove=true must be specified")
	case spec.Remove && spec.New:
		return nil, mongoerr.New(mongoerr.FailedToParse, "Cannot specify both new=true and remove=true; 'remove' always returns the deleted document")
	case spec.Remove && spec.Upsert:
		return nil, mongoerr.New(mongoerr.FailedToParse, "Cannot specify both upsert=true and remove=true ")
	}
	if spec.Remove {
		s.Ops.Delete.Add(1)
	} else {
		s.Ops.Update.Add(1)
	}
	spec.WriteOptions = writeOptions(r)
	if spec.Let, err = statementVars(let, nil); err != nil {
		return nil, err
	}
	if r.retryable {
		if res, done := r.session.Executed(stmt.first); done {
			return retriedFindAndModify(spec, stmt.first, res)
		}
		spec.Record = r.session.RecordStatements([]int32{stmt.first}, findAndModifyResult(spec))
	}
	res, err := s.Engine.FindAndModify(r.DB, coll, spec)
	if err != nil {
		return nil, err
	}
	switch {
	case res.UpsertedID.Type != 0:
		s.Docs.Inserted.Add(1)
	case spec.Remove:
		s.Docs.Deleted.Add(res.N)
	default:
		s.Docs.Updated.Add(res.N)
	}
	return findAndModifyReply(spec, res), nil
}

// findAndModifyReply is findAndModify's reply: lastErrorObject, value, then
// extra (retriedStmtId for a retry).
func findAndModifyReply(spec engine.FindAndModifySpec, res engine.FindAndModifyResult, extra ...bson.E) bson.Raw {
	leo := bson.D{{Key: "n", Value: int32(res.N)}}
	if !spec.Remove {
		leo = append(leo, bson.E{Key: "updatedExisting", Value: res.UpdatedExisting})
	}
	if res.UpsertedID.Type != 0 {
		leo = append(leo, bson.E{Key: "upserted", Value: res.UpsertedID})
	}
	var value any
	if res.Value != nil {
		value = res.Value
	}
	return marshal(append(bson.D{{Key: "lastErrorObject", Value: leo}, {Key: "value", Value: value}}, extra...))
}
