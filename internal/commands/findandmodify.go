package commands

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
)

func init() {
	register(findAndModifyCmd, findAndModifySpec, "findAndModify", "findandmodify")
	namesCollection("findAndModify", "findandmodify")
}

// findAndModifySpec declares findAndModify's fields.
// https://www.mongodb.com/docs/v7.0/reference/command/findAndModify/
var findAndModifySpec = &argSpec{path: "findAndModify", fields: []argField{
	arg("query", tDoc),
	arg("sort", tDoc),
	arg("fields", tDoc),
	arg("update", tUpdate),
	arg("remove", tBool),
	arg("new", tBool),
	arg("upsert", tBool),
	arg("arrayFilters", tArray),
	arg("hint", tHint),
	arg("stmtId", tInt32),
	arg("collation", tDoc),
	arg("let", tDoc),
	arg("bypassDocumentValidation", tBool),
	arg("bypassEmptyTsReplacement", tBool),
}}

func findAndModifyCmd(s *Service, r *Request) (bson.Raw, error) {
	coll, spec, stmt, err := parseFindAndModify(s, r, &r.args)
	if err != nil {
		return nil, err
	}
	if spec.Remove {
		s.Ops.Delete.Add(1)
	} else {
		s.Ops.Update.Add(1)
	}
	if spec.Pipeline {
		s.cmdStats.famPipeline.Add(1)
	}
	if spec.ArrayFilters != nil {
		s.cmdStats.famArrayFilters.Add(1)
	}
	if r.retryable {
		if res, done := r.session.Executed(stmt.first); done {
			s.Sessions.Txns.RetriedCommands.Add(1)
			s.Sessions.Txns.RetriedStatements.Add(1)
			return retriedFindAndModify(spec, stmt.first, res)
		}
		spec.Record = r.session.RecordStatements([]int32{stmt.first}, findAndModifyResult(spec))
	}
	if err := s.failPrimaryWrite(r); err != nil {
		return nil, err
	}
	res, err := s.Engine.FindAndModify(r.DB, coll, spec)
	r.op.noteFindAndModify(spec.Remove, res)
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

// parseFindAndModify reads the findAndModify command c of r: its
// collection, which must be writable, the write, and its stmtId.
func parseFindAndModify(s *Service, r *Request, c *cmdArgs) (string, engine.FindAndModifySpec, stmtArgs, error) {
	var spec engine.FindAndModifySpec
	var stmt stmtArgs
	coll, err := collectionArg(c.raw, r.DB)
	if err == nil {
		err = txnWriteAllowed(r, r.DB, coll)
	}
	if err == nil {
		err = s.writable(r, r.DB, coll)
	}
	if err != nil {
		return "", spec, stmt, err
	}
	spec.Filter, spec.Sort, spec.Fields = c.doc("query"), c.doc("sort"), c.doc("fields")
	spec.Remove, spec.New, spec.Upsert, spec.Hint = c.bool("remove"), c.bool("new"), c.bool("upsert"), c.value("hint")
	let := c.doc("let")
	hasUpdate := c.has("update")
	if hasUpdate {
		spec.Update, spec.Pipeline = updateArg(c.value("update"))
		if !spec.Pipeline && !isOperatorDoc(spec.Update) && !c.bool("bypassEmptyTsReplacement") {
			spec.Update = s.fillEmptyTimestamps(spec.Update)
		}
	}
	if spec.ArrayFilters, err = c.docs("arrayFilters"); err != nil {
		return "", spec, stmt, err
	}
	if c.has("stmtId") {
		if err = stmt.parse("findAndModify", "stmtId", c.value("stmtId")); err != nil {
			return "", spec, stmt, err
		}
	}
	switch {
	case spec.Remove && hasUpdate:
		err = mongoerr.New(mongoerr.FailedToParse, "Cannot specify both an update and remove=true")
	case !spec.Remove && !hasUpdate:
		err = mongoerr.New(mongoerr.FailedToParse, "Either an update or remove=true must be specified")
	case spec.Remove && spec.Upsert:
		err = mongoerr.New(mongoerr.FailedToParse, "Cannot specify both upsert=true and remove=true ")
	case spec.Remove && spec.New:
		err = mongoerr.New(mongoerr.FailedToParse, "Cannot specify both new=true and remove=true; 'remove' always returns the deleted document")
	case spec.Remove && c.has("arrayFilters"):
		err = mongoerr.New(mongoerr.FailedToParse, "Cannot specify arrayFilters and remove=true")
	}
	if err != nil {
		return "", spec, stmt, err
	}
	spec.WriteOptions = writeOptions(s, r, c)
	spec.Collation = c.doc("collation")
	spec.Let, err = s.scriptVars(let, r, r.Ctx)
	return coll, spec, stmt, err
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
