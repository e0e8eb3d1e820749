package commands

import (
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/sessions"
)

// A retryable write (a txnNumber without autocommit) runs each statement
// at most once: a statement whose write committed in an earlier attempt
// (same lsid, txnNumber and statement id) is not applied again, and its
// original result is reported, with its id in retriedStmtIds. The results
// are kept in the session's durable record (package sessions), written in
// the batch of the statement's own write, so this holds across lost
// replies, restarts and crashes. The command is parsed and checked in full
// before any statement is looked up, as MongoDB does.

// stmtArgs are a write command's statement ids: stmtIds, one per
// statement, or stmtId, the first of consecutive ones (0 by default).
type stmtArgs struct {
	first int32
	ids   []int32
	set   bool // stmtId given
}

// parse reads the stmtId or stmtIds field.
func (a *stmtArgs) parse(cmd, key string, v bson.RawValue) error {
	switch key {
	case "stmtId":
		n, ok := v.Int32OK()
		if !ok {
			return wrongType(cmd, key, v, "int")
		}
		a.first, a.set = n, true
	case "stmtIds":
		if v.Type != bson.TypeArray {
			return wrongType(cmd, key, v, "array")
		}
		vals, err := v.Array().Values()
		if err != nil {
			return mongoerr.New(mongoerr.InvalidBSON, "invalid array: %v", err)
		}
		a.ids = make([]int32, len(vals))
		for i, e := range vals {
			n, ok := e.Int32OK()
			if !ok {
				return wrongType(cmd, key, e, "int")
			}
			a.ids[i] = n
		}
	}
	return nil
}

// resolve returns the id of each of n statements.
func (a stmtArgs) resolve(n int) ([]int32, error) {
	switch {
	case a.ids != nil && a.set:
		return nil, mongoerr.New(mongoerr.InvalidOptions, "May not specify both stmtId and stmtIds in write command")
	case a.ids != nil && len(a.ids) != n:
		return nil, mongoerr.New(mongoerr.InvalidLength, "Number of statement ids must match the number of batch entries. Got %d statement ids but %d operations.", len(a.ids), n)
	case a.ids != nil:
		return a.ids, nil
	}
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = a.first + int32(i)
	}
	return ids, nil
}

// retriedField is retriedStmtIds when some statements were retried, which
// serverStatus counts.
func (s *Service) retriedField(retried []int32) []bson.E {
	if len(retried) == 0 {
		return nil
	}
	s.Sessions.Txns.RetriedCommands.Add(1)
	s.Sessions.Txns.RetriedStatements.Add(int64(len(retried)))
	return []bson.E{{Key: "retriedStmtIds", Value: retried}}
}

// docID is the _id of a document the engine wrote, owned.
func docID(doc bson.Raw) bson.RawValue {
	v := doc.Lookup("_id")
	v.Value = slices.Clone(v.Value)
	return v
}

// insertResult is what an inserted document's statement did.
func insertResult(engine.Write) sessions.Result {
	return sessions.Result{Op: sessions.OpInsert, N: 1}
}

// deleteResult is what a delete statement did.
func deleteResult(engine.Write) sessions.Result {
	return sessions.Result{Op: sessions.OpDelete, N: 1}
}

// updateResult is what an update statement did: modify a document, or
// insert one as an upsert.
func updateResult(w engine.Write) sessions.Result {
	if w.Old == nil {
		return sessions.Result{Op: sessions.OpInsert, N: 1, Upserted: docID(w.New)}
	}
	return sessions.Result{Op: sessions.OpUpdate, N: 1, NModified: 1}
}

// findAndModifyResult returns what a findAndModify statement did; the
// record keeps the unprojected document the command returns, which a retry
// projects again (as MongoDB keeps the image in its oplog). An upsert's
// record keeps the document it inserted whatever new asked, as the insert's
// oplog entry holds it: a retry asking for the new document gets it
// (parseOplogEntryForFindAndModify).
func findAndModifyResult(spec engine.FindAndModifySpec) func(engine.Write) sessions.Result {
	return func(w engine.Write) sessions.Result {
		switch {
		case spec.Remove:
			return sessions.Result{Op: sessions.OpDelete, N: 1, Value: slices.Clone(w.Old)}
		case w.Old == nil:
			return sessions.Result{Op: sessions.OpInsert, N: 1, Upserted: docID(w.New), Value: slices.Clone(w.New)}
		}
		r := sessions.Result{Op: sessions.OpUpdate, N: 1, UpdatedExisting: true, Value: slices.Clone(w.Old)}
		if spec.New {
			r.Value = slices.Clone(w.New)
		}
		return r
	}
}

// retriedUpdate is what an executed statement did for an update retrying
// it, as MongoDB's parseOplogEntryForUpdate reads the statement's oplog
// entry: an insert was an upsert, an update modified its document, and a
// delete cannot have been an update. A record written before Folio kept
// the kind of change is taken as it is.
func retriedUpdate(res sessions.Result) (sessions.Result, error) {
	switch res.Op {
	case sessions.OpInsert:
		return sessions.Result{Op: res.Op, N: 1, Upserted: res.Upserted}, nil
	case sessions.OpUpdate:
		return sessions.Result{Op: res.Op, N: 1, NModified: 1}, nil
	case sessions.OpDelete:
		return res, mongoerr.New(mongoerr.RetryUpdateOfDelete, "update retry request is not compatible with previous write in the transaction of type: d")
	}
	return res, nil
}

// checkFindAndModifyRetry refuses a findAndModify retrying a statement
// whose change it could not have made, or whose document the record did
// not keep (validateFindAndModifyRetryability): a delete only by a
// remove, an insert only by an upsert; a delete or an update not made by
// findAndModify kept no image of its document.
func checkFindAndModifyRetry(spec engine.FindAndModifySpec, res sessions.Result) error {
	const incompatible = "findAndModify retry request is not compatible with previous write in the transaction of type: %c"
	switch {
	case res.Op == sessions.OpDelete && !spec.Remove:
		return mongoerr.New(mongoerr.RetryFindAndModifyOfDelete, incompatible, res.Op)
	case res.Op == sessions.OpDelete && res.Value == nil:
		return mongoerr.New(mongoerr.RetryFindAndModifyNoPreImage, "No pre-image available for findAndModify retry request")
	case res.Op == sessions.OpInsert && !spec.Upsert:
		return mongoerr.New(mongoerr.RetryFindAndModifyOfInsert, incompatible, res.Op)
	case res.Op == sessions.OpUpdate && res.Value == nil && spec.New:
		return mongoerr.New(mongoerr.RetryFindAndModifyNoPostImage, "findAndModify retry request wants the document after update returned, but only before update document is stored")
	case res.Op == sessions.OpUpdate && res.Value == nil:
		return mongoerr.New(mongoerr.RetryFindAndModifyNoPreImageOfUpdate, "findAndModify retry request wants the document before update returned, but only after update document is stored")
	}
	return nil
}

// retriedFindAndModify rebuilds the reply of an executed findAndModify
// from the change its statement made (parseOplogEntryForFindAndModify): a
// delete's or an update's stored document, an update's updatedExisting
// even to a remove, an insert's _id and, to a retry asking for the new
// document, the document it stored.
func retriedFindAndModify(spec engine.FindAndModifySpec, stmt int32, res sessions.Result) (bson.Raw, error) {
	if err := checkFindAndModifyRetry(spec, res); err != nil {
		return nil, err
	}
	switch res.Op {
	case sessions.OpUpdate:
		spec.Remove = false
	case sessions.OpInsert:
		if !spec.New {
			res.Value = nil
		}
	}
	out := engine.FindAndModifyResult{N: int64(res.N), UpdatedExisting: res.UpdatedExisting, UpsertedID: res.Upserted, Value: res.Value}
	if out.Value != nil && len(spec.Fields) > 0 {
		proj, err := query.CompileProjection(spec.Fields)
		if err != nil {
			return nil, err
		}
		if out.Value, err = proj.Apply(out.Value, -1); err != nil {
			return nil, err
		}
	}
	return findAndModifyReply(spec, out, bson.E{Key: "retriedStmtId", Value: stmt}), nil
}
