package commands

import (
	"slices"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/aggregate"
	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

func init() {
	register(insertCmd, insertSpec, "insert")
	register(updateCmd, updateSpec, "update")
	register(deleteCmd, deleteSpec, "delete")
	uncounted("insert", "update", "delete")
	namesCollection("insert", "update", "delete")
}

// batchSpec declares a write command's fields: its statements array
// (docsField), and the fields insert, update and delete share; update and
// delete take let. write_ops.idl types ordered, and a statement's upsert
// and multi, bool (numbers refused), bypassDocumentValidation safeBool.
// https://www.mongodb.com/docs/v7.0/reference/command/insert/,
// https://www.mongodb.com/docs/v7.0/reference/command/update/,
// https://www.mongodb.com/docs/v7.0/reference/command/delete/
func batchSpec(cmd, docsField string, stmt *argSpec) *argSpec {
	s := &argSpec{path: cmd, fields: []argField{
		required(docsField, tArray),
		withDefault("ordered", tStrictBool, 1),
		arg("stmtId", tInt32),
		arg("stmtIds", tArray),
		arg("bypassDocumentValidation", tBool),
		arg("bypassEmptyTsReplacement", tBool),
		collectionUUIDField,
	}}
	if stmt != nil {
		s.fields = append(s.fields, arg("let", tDoc))
		s.subs = []*argSpec{stmt}
	}
	return s
}

var (
	insertSpec = batchSpec("insert", "documents", nil)
	updateSpec = batchSpec("update", "updates", updateStmtSpec)
	deleteSpec = batchSpec("delete", "deletes", deleteStmtSpec)
)

// updateStmtSpec declares an update statement's fields.
var updateStmtSpec = &argSpec{path: "update.updates", fields: []argField{
	required("q", tDoc),
	required("u", tUpdate),
	arg("upsert", tStrictBool),
	arg("multi", tStrictBool),
	arg("arrayFilters", tArray),
	arg("hint", tHint),
	arg("collation", tDoc),
	arg("c", tDoc),
	arg("upsertSupplied", tOptionalBool),
	ignore("sampleId", tAny, "set by a router for query sampling"),
}}

// deleteStmtSpec declares a delete statement's fields.
var deleteStmtSpec = &argSpec{path: "delete.deletes", fields: []argField{
	required("q", tDoc),
	required("limit", tAny),
	arg("hint", tHint),
	arg("collation", tDoc),
}}

// writeOptions are the transaction, write concern and
// bypassDocumentValidation of a write command: the write must be durable
// when acknowledged if its write concern asks for the journal (see
// WriteConcern.Journal). Its updates take their timestamps from the
// cluster clock.
func writeOptions(s *Service, r *Request, c *cmdArgs) engine.WriteOptions {
	wo := engine.WriteOptions{Txn: r.Txn, Journal: r.Args.WriteConcern.Journal(), Ctx: r.Ctx,
		BypassValidation: c.bool("bypassDocumentValidation"), Clock: s.Clock}
	deferDurable(r.op, &wo)
	return wo
}

// deferDurable leaves the wait for durability of a write made with wo,
// outside a transaction, to op's command, which waits once after all its
// statements (run), as MongoDB waits for a command's write concern: a
// batch of N updates waited for N syncs. Without an operation the write
// waits for itself.
func deferDurable(op *activeOp, wo *engine.WriteOptions) {
	if op != nil && wo.Txn == nil {
		op.owesDurable, wo.DeferDurable = true, true
	}
}

// failsBatch reports whether a statement's error fails the whole write
// command rather than being one of its writeErrors: a write conflict; an
// interruption (killOp, maxTimeMS, disconnect, shutdown), which in MongoDB
// "have always failed the whole batch"; HostUnreachable, a storage cluster
// that did not answer or lost its answer to a commit; or an error the
// engine already labelled RetryableWriteError (its frontend's schema
// lease lapsed before the statement committed, as a stepdown interrupts a
// MongoDB write). A driver retries the last two only as the command's
// error. Statements applied before it stay applied.
func failsBatch(err error) bool {
	if err == nil {
		return false
	}
	me := mongoerr.As(err)
	return me.Code == mongoerr.WriteConflict || me.Code == mongoerr.HostUnreachable || mongoerr.IsInterruption(err) ||
		slices.Contains(me.Labels, engine.RetryableWriteError)
}

// writeErrorDoc is one entry of a write reply's writeErrors.
func writeErrorDoc(we engine.WriteError) bson.D {
	d := bson.D{
		{Key: "index", Value: int32(we.Index)},
		{Key: "code", Value: int32(we.Err.Code)},
		{Key: "errmsg", Value: we.Err.Msg},
	}
	return append(d, we.Err.Extra...)
}

// maxReportedErrmsg is the longest message a write error keeps once two
// errors were reported (write_ops_exec's generateError): longer ones are
// emptied, so that a batch of large errors keeps its reply in bounds.
const maxReportedErrmsg = 1 << 20

// writeReply is the reply of insert, update and delete, in MongoDB's
// order: first the fields every write command's reply shares
// (WriteCommandReplyBase, which UpdateCommandReply chains before its own
// fields): n, writeErrors when any statement failed, retriedStmtIds when
// some were retried (retried, see retriedField); then the command-specific
// fields (update's upserted and nModified). A replica set member adds
// electionId and opTime after n (see withOpTime).
func writeReply(n int64, werrs []engine.WriteError, retried []bson.E, extra ...bson.E) bson.Raw {
	start, out := bsoncore.AppendDocumentStart(make([]byte, 0, 64))
	out = bsoncore.AppendInt32Element(out, "n", int32(n))
	if len(werrs) > 0 {
		arr := make(bson.A, len(werrs))
		for i, we := range werrs {
			if i >= 2 && len(we.Err.Msg) > maxReportedErrmsg {
				e := *we.Err
				e.Msg = ""
				we.Err = &e
			}
			arr[i] = writeErrorDoc(we)
		}
		out = appendMarshaled(out, "writeErrors", arr)
	}
	for _, e := range retried {
		out = appendMarshaled(out, e.Key, e.Value)
	}
	for _, e := range extra {
		out = appendMarshaled(out, e.Key, e.Value)
	}
	out, _ = bsoncore.AppendDocumentEnd(out, start)
	return out
}

// appendMarshaled appends the element key: v to a document being built,
// v encoded as bson.Marshal encodes a field's value (an int32, the common
// case, without reflection).
func appendMarshaled(dst []byte, key string, v any) []byte {
	if i, ok := v.(int32); ok {
		return bsoncore.AppendInt32Element(dst, key, i)
	}
	t, val, err := bson.MarshalValue(v)
	if err != nil {
		panic(err)
	}
	return bsoncore.AppendValueElement(dst, key, bsoncore.Value{Type: bsoncore.Type(t), Data: val})
}

// docsArg reads an array of documents (insert's documents, update's
// updates, delete's deletes).
func docsArg(cmd, field string, v bson.RawValue) ([]bson.Raw, error) {
	if v.Type != bson.TypeArray {
		return nil, wrongType(cmd, field, v, "array")
	}
	vals, err := v.Array().Values()
	if err != nil {
		return nil, mongoerr.New(mongoerr.InvalidBSON, "invalid array: %v", err)
	}
	docs := make([]bson.Raw, len(vals))
	for i, d := range vals {
		if d.Type != bson.TypeEmbeddedDocument {
			return nil, wrongType(cmd, field+"."+strconv.Itoa(i), d, "object")
		}
		docs[i] = d.Document()
	}
	return docs, nil
}

// batchArgs are the fields insert, update and delete share.
type batchArgs struct {
	// ts is set when the command writes a time series collection.
	ts      *tsColl
	docs    []bson.Raw
	ordered bool
	// stmtIDs are the statements' ids (see retry.go).
	stmtIDs []int32
	// let is update's or delete's let document (see statementLet).
	let bson.Raw
	// acquireErr is the error of acquiring the collection: the
	// CollectionUUIDMismatch of a collectionUUID the collection does not
	// have, CommandNotSupportedOnView for a view, or InvalidViewDefinition
	// for a name no collection has while the database's views are
	// invalid (see lookupView) (an insert whose
	// implicit creation of the collection is refused fails the same way,
	// see insertCmd). Each statement that
	// runs fails with it, as each acquires the collection in MongoDB
	// (write_ops_exec.cpp handles the acquisition's error as the
	// statement's write error); a retried statement that ran is answered
	// from its session's record first.
	acquireErr error
}

// parseBatch reads a write command's common fields; docsField names its
// statements array. A view cannot be written: each statement fails with
// CommandNotSupportedOnView (a time series collection's view writes its
// buckets).
func parseBatch(s *Service, r *Request, c *cmdArgs, cmdName, docsField string) (string, batchArgs, error) {
	coll, err := collectionArg(c.raw, r.DB)
	var ts *tsColl
	var acquireErr error
	if err == nil {
		// MongoDB checks the namespace may be written (userAllowedWriteNS,
		// a command error), then the UUID as each statement acquires the
		// collection, before it looks for a view: a view has no UUID.
		// A transaction's checks come first (typedRun).
		err = txnWriteAllowed(r, r.DB, coll)
	}
	if err == nil {
		err = writeAllowed(r.DB, coll)
	}
	if err == nil {
		acquireErr = s.checkCollectionUUID(r, c, r.DB, coll)
	}
	if err == nil && acquireErr == nil {
		// a view, or an invalid view catalog met looking for one (a name
		// no collection has), fails the acquisition
		ts, err = s.viewTarget(r, r.DB, coll)
		if mongoerr.Is(err, mongoerr.CommandNotSupportedOnView) || mongoerr.Is(err, mongoerr.InvalidViewDefinition) {
			acquireErr, err = err, nil
		}
	}
	if err != nil {
		return "", batchArgs{}, err
	}
	// In a transaction the first failing statement ends the batch, ordered
	// or not, and the transaction (write_ops_exec.cpp handleError: "If we
	// are in a transaction, we must fail the whole batch").
	a := batchArgs{ts: ts, ordered: c.bool("ordered") || r.Txn != nil, acquireErr: acquireErr}
	var stmts stmtArgs
	a.docs, err = c.docs(docsField)
	if cmdName != "insert" {
		a.let = c.doc("let")
	}
	for _, f := range [...]string{"stmtId", "stmtIds"} {
		if err == nil && c.has(f) {
			err = stmts.parse(cmdName, f, c.value(f))
		}
	}
	if err == nil && (len(a.docs) == 0 || len(a.docs) > maxWriteBatchSize) {
		err = mongoerr.New(mongoerr.InvalidLength, "Write batch sizes must be between 1 and %d. Got %d operations.", maxWriteBatchSize, len(a.docs))
	}
	if err == nil {
		a.stmtIDs, err = stmts.resolve(len(a.docs))
	}
	return coll, a, err
}

func insertCmd(s *Service, r *Request) (bson.Raw, error) {
	coll, a, err := parseBatch(s, r, &r.args, "insert", "documents")
	if err != nil {
		return nil, err
	}
	if err := mongoerr.Interruption(r.Ctx); err != nil {
		return nil, err
	}
	if !r.args.bool("bypassEmptyTsReplacement") {
		for i, d := range a.docs {
			a.docs[i] = s.fillEmptyTimestamps(d)
		}
	}
	if a.ts != nil {
		s.Ops.Insert.Add(int64(len(a.docs)))
		return s.insertTimeseries(r, a.ts, a)
	}
	wo := writeOptions(s, r, &r.args)
	docs := a.docs
	// pos maps the position of a document sent to the engine to its
	// position in the command, when a retry leaves some out.
	var pos []int
	var retried, ids []int32
	if r.retryable {
		ids = a.stmtIDs
		for _, id := range a.stmtIDs {
			if _, done := r.session.Executed(id); done {
				retried = append(retried, id)
			}
		}
		if retried != nil {
			docs, ids, pos = nil, nil, []int{}
			for i, id := range a.stmtIDs {
				if _, done := r.session.Executed(id); !done {
					docs, ids, pos = append(docs, a.docs[i]), append(ids, id), append(pos, i)
				}
			}
		}
		wo.Record = r.session.RecordStatements(ids, insertResult)
	}
	n := 0
	// An insert that fails as a whole shows ninserted: 0.
	r.op.noteInserted(0)
	var werrs []engine.WriteError
	switch {
	case len(docs) == 0:
	case a.acquireErr != nil:
		werrs = acquireWriteErrors(a.acquireErr, docs, a.ordered)
	case r.retryable && s.primaryWrite.on.Load():
		n, werrs, err = s.insertEach(r, coll, docs, ids, a.ordered, wo)
	default:
		n, werrs, err = s.Engine.Insert(r.DB, coll, docs, a.ordered, wo)
	}
	if mongoerr.Is(err, mongoerr.DatabaseDifferCase) {
		// The collection's implicit creation was refused: MongoDB
		// creates it as it acquires the collection for each batch of
		// documents (write_ops_exec.cpp insertBatchAndHandleErrors,
		// makeCollection), so the refusal is each document's write
		// error, as any acquisition's is.
		n, werrs, err = 0, acquireWriteErrors(err, docs, a.ordered), nil
	}
	if err != nil {
		s.Ops.Insert.Add(int64(len(a.docs)))
		return nil, err
	}
	s.Docs.Inserted.Add(int64(n))
	r.op.noteInserted(n)
	if pos != nil {
		for i := range werrs {
			werrs[i].Index = pos[werrs[i].Index]
		}
	}
	s.Ops.Insert.Add(insertsAttempted(len(a.docs), werrs, a.ordered))
	return writeReply(int64(n+len(retried)), werrs, s.retriedField(retried)), nil
}

// insertsAttempted is what an insert adds to opcounters.insert: every
// document of an unordered batch, and of an ordered one the documents up to
// and including the first that failed, since the batch stops there (MongoDB
// counts each document it tries; jstests/core/diagnostics/opcounters_write_cmd.js:
// "ordered insert of N: counted as K + 1 ops"). werrs are in the command's
// positions, the first one first.
func insertsAttempted(n int, werrs []engine.WriteError, ordered bool) int64 {
	if ordered && len(werrs) > 0 {
		return int64(werrs[0].Index + 1)
	}
	return int64(n)
}

// insertEach inserts the documents of a retryable insert (of statement
// ids) one at a time, each under the onPrimaryTransactionalWrite fail
// point, which MongoDB evaluates per document.
func (s *Service) insertEach(r *Request, coll string, docs []bson.Raw, ids []int32, ordered bool, wo engine.WriteOptions) (int, []engine.WriteError, error) {
	n := 0
	var werrs []engine.WriteError
	for i := range docs {
		if err := s.failPrimaryWrite(r); err != nil {
			werrs = append(werrs, engine.WriteError{Index: i, Err: mongoerr.As(err)})
		} else {
			wo.Record = r.session.RecordStatements(ids[i:i+1], insertResult)
			k, ws, err := s.Engine.Insert(r.DB, coll, docs[i:i+1], true, wo)
			if n += k; err != nil {
				return n, werrs, err
			}
			for _, w := range ws {
				w.Index = i
				werrs = append(werrs, w)
			}
		}
		if ordered && len(werrs) > 0 {
			break
		}
	}
	return n, werrs, nil
}

// updateArg reads an update (tUpdate): a document (operators or a
// replacement), or an array of pipeline stages (pipeline true; the
// array's bytes).
func updateArg(v bson.RawValue) (bson.Raw, bool) {
	return bson.Raw(v.Value), v.Type == bson.TypeArray
}

// updateStatement is one entry of update's updates array: the engine's
// statement and its constants (c).
type updateStatement struct {
	engine.UpdateSpec
	constants bson.Raw
	collation bson.Raw
	supplied  bool // upsertSupplied
}

// parseUpdateStatement reads one entry of update's updates array.
func parseUpdateStatement(doc bson.Raw) (updateStatement, error) {
	var u updateStatement
	c, err := parseSub(doc, updateStmtSpec)
	if err != nil {
		return u, err
	}
	u.Filter, u.Upsert, u.Multi, u.Hint = c.doc("q"), c.bool("upsert"), c.bool("multi"), c.value("hint")
	u.Update, u.Pipeline = updateArg(c.value("u"))
	if u.Pipeline {
		// An unknown stage fails the command, not the statement: MongoDB
		// reads the stage names of every statement's pipeline first.
		var stages []bson.Raw
		vals, _ := u.Update.Values()
		for _, v := range vals {
			if st, ok := v.DocumentOK(); ok {
				stages = append(stages, st)
			}
		}
		if err := aggregate.CheckStageNames(stages); err != nil {
			return u, err
		}
	}
	u.constants, u.collation, u.supplied = c.doc("c"), c.doc("collation"), c.bool("upsertSupplied")
	if u.ArrayFilters, err = c.docs("arrayFilters"); err != nil {
		return u, err
	}
	return u, nil
}

// replacementMulti is MongoDB's UpdateDriver rule, checked as the
// statement runs (a write error of that statement, not of the command): a
// replacement updates one document. A time series collection's update
// never reaches it: MongoDB 7.0 translates the update for the buckets
// first, which refuses any replacement with InvalidOptions
// (timeseries.TranslateUpdate).
func (u *updateStatement) replacementMulti() error {
	if u.Multi && !u.Pipeline && !isOperatorDoc(u.Update) {
		return mongoerr.New(mongoerr.FailedToParse, "multi update is not supported for replacement-style update")
	}
	return nil
}

func updateCmd(s *Service, r *Request) (bson.Raw, error) {
	coll, a, err := parseBatch(s, r, &r.args, "update", "updates")
	if err != nil {
		return nil, err
	}
	specs := make([]updateStatement, len(a.docs))
	fill := !r.args.bool("bypassEmptyTsReplacement")
	for i, d := range a.docs {
		if specs[i], err = parseUpdateStatement(d); err != nil {
			return nil, err
		}
		if u := &specs[i]; fill && !u.Pipeline && !isOperatorDoc(u.Update) {
			u.Update = s.fillEmptyTimestamps(u.Update)
		}
	}
	for _, u := range specs {
		if u.Pipeline {
			s.cmdStats.updatePipeline.Add(1)
		}
		if u.ArrayFilters != nil {
			s.cmdStats.updateArrayFilters.Add(1)
		}
	}
	var matched, modified int64
	var upserted bson.A
	var werrs []engine.WriteError
	var retried []int32
	for i, u := range specs {
		// maxTimeMS interrupts a batch between statements, failing the
		// command as MongoDB does.
		if err := mongoerr.Interruption(r.Ctx); err != nil {
			return nil, err
		}
		s.Ops.Update.Add(1)
		u.WriteOptions = writeOptions(s, r, &r.args)
		u.Collation = u.collation
		if r.retryable {
			id := a.stmtIDs[i]
			if res, done := r.session.Executed(id); done {
				res, err := retriedUpdate(res)
				if err != nil {
					return nil, err
				}
				retried = append(retried, id)
				matched += int64(res.N)
				modified += int64(res.NModified)
				if res.Upserted.Type != 0 {
					upserted = append(upserted, bson.D{{Key: "index", Value: int32(i)}, {Key: "_id", Value: res.Upserted}})
				}
				continue
			}
			if u.Multi {
				werrs = append(werrs, engine.WriteError{Index: i, Err: mongoerr.New(mongoerr.InvalidOptions, "Cannot use (or request) retryable writes with multi=true")})
				if a.ordered {
					break
				}
				continue
			}
			u.Record = r.session.RecordStatements(a.stmtIDs[i:i+1], updateResult)
		}
		profiled := s.profileStatement(r, "update", a.docs[i])
		var res engine.UpdateResult
		err = a.acquireErr
		if err == nil {
			err = s.failPrimaryWrite(r)
		}
		if err == nil && a.ts == nil {
			err = u.replacementMulti()
		}
		switch {
		case err != nil:
		case a.ts != nil:
			res, err = s.updateTimeseries(r, a.ts, u, a.let)
		default:
			res, err = updateStatementRun(s, r, coll, u, a.let)
		}
		w := writeCounts{n: res.Matched, nModified: res.Modified}
		if res.UpsertedID.Type != 0 {
			w.nUpserted = 1
		}
		profiled(w, err)
		if failsBatch(err) {
			return nil, err
		}
		if err != nil {
			werrs = append(werrs, engine.WriteError{Index: i, Err: mongoerr.As(err)})
			if a.ordered {
				break
			}
			continue
		}
		matched += res.Matched
		modified += res.Modified
		s.Docs.Updated.Add(res.Matched)
		if res.UpsertedID.Type != 0 {
			s.Docs.Inserted.Add(1)
			matched++
			upserted = append(upserted, bson.D{{Key: "index", Value: int32(i)}, {Key: "_id", Value: res.UpsertedID}})
		}
	}
	// UpdateCommandReply: upserted before nModified.
	var extra []bson.E
	if len(upserted) > 0 {
		extra = append(extra, bson.E{Key: "upserted", Value: upserted})
	}
	extra = append(extra, bson.E{Key: "nModified", Value: int32(modified)})
	return writeReply(matched, werrs, s.retriedField(retried), extra...), nil
}

func deleteCmd(s *Service, r *Request) (bson.Raw, error) {
	coll, a, err := parseBatch(s, r, &r.args, "delete", "deletes")
	if err != nil {
		return nil, err
	}
	stmts := make([]deleteStatement, len(a.docs))
	for i, d := range a.docs {
		stmts[i], err = parseDeleteStatement(d)
		if err != nil {
			return nil, err
		}
	}
	var n int64
	var werrs []engine.WriteError
	var retried []int32
	for i, st := range stmts {
		if err := mongoerr.Interruption(r.Ctx); err != nil {
			return nil, err
		}
		s.Ops.Delete.Add(1)
		wo := writeOptions(s, r, &r.args)
		if r.retryable {
			id := a.stmtIDs[i]
			if res, done := r.session.Executed(id); done {
				retried = append(retried, id)
				n += int64(res.N)
				continue
			}
			if st.limit == 0 {
				werrs = append(werrs, engine.WriteError{Index: i, Err: mongoerr.New(mongoerr.InvalidOptions, "Cannot use (or request) retryable writes with limit=0")})
				if a.ordered {
					break
				}
				continue
			}
			wo.Record = r.session.RecordStatements(a.stmtIDs[i:i+1], deleteResult)
		}
		var removed int64
		wo.Let, err = s.scriptVars(a.let, r, r.Ctx)
		wo.Collation = st.collation
		if err == nil {
			err = a.acquireErr
		}
		if err == nil {
			err = s.failPrimaryWrite(r)
		}
		if err == nil {
			profiled := s.profileStatement(r, "remove", a.docs[i])
			if a.ts != nil {
				removed, err = s.deleteTimeseries(r, a.ts, st.filter, st.limit, st.hint, wo)
			} else {
				removed, err = s.Engine.Delete(r.DB, coll, st.filter, int(st.limit), st.hint, wo)
			}
			profiled(writeCounts{n: removed}, err)
		}
		if failsBatch(err) {
			return nil, err
		}
		s.Docs.Deleted.Add(removed)
		if err != nil {
			// a failed statement adds nothing to n (performDeletes keeps
			// no result for it)
			werrs = append(werrs, engine.WriteError{Index: i, Err: mongoerr.As(err)})
			if a.ordered {
				break
			}
			continue
		}
		n += removed
	}
	return writeReply(n, werrs, s.retriedField(retried)), nil
}

// deleteStatement is one entry of delete's deletes array.
type deleteStatement struct {
	filter    bson.Raw
	limit     int64
	hint      bson.RawValue
	collation bson.Raw
}

// parseDeleteStatement reads one entry of delete's deletes array.
func parseDeleteStatement(d bson.Raw) (deleteStatement, error) {
	var st deleteStatement
	c, err := parseSub(d, deleteStmtSpec)
	if err == nil {
		st.filter, st.hint, st.collation = c.doc("q"), c.value("hint"), c.doc("collation")
		// MongoDB reads limit as a double, any other type as 0 (a
		// multi-delete), and refuses all but 0 and 1
		limit, _ := values.Float64(c.value("limit"))
		switch limit {
		case 0, 1:
			st.limit = int64(limit)
		default:
			err = mongoerr.New(mongoerr.FailedToParse, "The limit field in delete objects must be 0 or 1. Got %s", strconv.FormatFloat(limit, 'g', -1, 64))
		}
	}
	return st, err
}

// isOperatorDoc reports whether an update document starts with an update
// operator ($set...) rather than being a replacement.
func isOperatorDoc(d bson.Raw) bool {
	el, err := d.IndexErr(0)
	if err != nil {
		return false
	}
	k := bsoncore.Element(el).KeyBytes()
	return len(k) > 0 && k[0] == '$'
}

// updateStatementRun runs one update statement with its variables: the
// command's let and the statement's constants, which MongoDB allows only
// on a pipeline update (a write error of the statement otherwise).
func updateStatementRun(s *Service, r *Request, coll string, u updateStatement, let bson.Raw) (engine.UpdateResult, error) {
	if err := s.bindUpdateVars(r, &u, let); err != nil {
		return engine.UpdateResult{}, err
	}
	return s.Engine.Update(r.DB, coll, u.UpdateSpec)
}

// bindUpdateVars binds u's variables: the command's let and u's
// constants, which MongoDB allows only on a pipeline update; with
// upsertSupplied, the constant new is the document an upsert inserts
// (ParsedUpdate::parseRequest's checks).
func (s *Service) bindUpdateVars(r *Request, u *updateStatement, let bson.Raw) error {
	if u.constants != nil && !u.Pipeline {
		return mongoerr.New(mongoerr.UpdateConstantsNotPipeline, "Constant values may only be specified for pipeline updates")
	}
	if u.supplied {
		if !u.Upsert {
			return mongoerr.New(mongoerr.FailedToParse, "cannot specify 'upsertSupplied: true' for a non-upsert operation")
		}
		var ok bool
		if u.constants != nil {
			u.Supplied, ok = u.constants.Lookup("new").DocumentOK()
		}
		if !ok {
			return mongoerr.New(mongoerr.FailedToParse, "the parameter 'upsertSupplied' is set to 'true', but no document was supplied")
		}
	}
	var err error
	u.Let, err = s.scriptVars(statementLet(let, u.constants), r, r.Ctx)
	return err
}
