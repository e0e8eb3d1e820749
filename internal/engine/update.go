package engine

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/storage"
	"github.com/folio-db/folio/internal/update"
)

// UpdateSpec is one update statement.
type UpdateSpec struct {
	Filter bson.Raw
	// Update is an update document, or with Pipeline an array of stages.
	Update   bson.Raw
	Pipeline bool
	// OplogDiff: Update is an update oplog entry's $v: 2 diff (applyOps).
	OplogDiff    bool
	ArrayFilters []bson.Raw
	Hint         bson.RawValue
	Multi        bool
	Upsert       bool
	// Supplied (upsertSupplied) is the document an upsert inserts in
	// place of the update's result: a replacement of the query's seed.
	Supplied bson.Raw
	WriteOptions
}

// UpdateResult reports an update statement's effect. UpsertedID is set
// (non-zero Type) when the statement inserted a document.
type UpdateResult struct {
	Matched    int64
	Modified   int64
	UpsertedID bson.RawValue
}

// maxUpsertAttempts bounds how often an upsert that lost an insert race
// (DuplicateKey on _id) is retried as an update, as MongoDB retries.
const maxUpsertAttempts = 3

// Update applies one update statement to db.coll. Each matching document
// is updated atomically on its own; Modified counts only real changes.
func (e *Engine) Update(db, coll string, u UpdateSpec) (UpdateResult, error) {
	return e.update(db, coll, u, true)
}

// update is Update; user: the write is a client's, refused on a namespace
// clients may not write (userWritable).
func (e *Engine) update(db, coll string, u UpdateSpec, user bool) (UpdateResult, error) {
	f, err := e.writeFilter(u.Txn, db, coll, u.Filter, u.WriteOptions, u.Upsert)
	if err != nil {
		return UpdateResult{}, err
	}
	var upd updater
	if u.OplogDiff {
		upd, err = compileDiffUpdate(u.Update)
	} else {
		upd, err = compileUpdate(u.Update, u.ArrayFilters, u.Pipeline, coll, u.Let, f.Collator(), u.Clock)
	}
	if err != nil {
		return UpdateResult{}, err
	}
	if user {
		if err := e.userWritable(db, coll); err != nil {
			return UpdateResult{}, err
		}
	}
	c, err := e.writable(u.Ctx, u.Txn, db, coll, u.Upsert, cappedInTxn)
	if err != nil || c == nil {
		return UpdateResult{}, err
	}
	defer c.mu.RUnlock()
	if idHackWrite(c, f, u.Hint, nil, positional(upd)) {
		opStatsIn(u.Ctx).noteUnplanned()
	}
	var res UpdateResult
	for attempt := 1; ; attempt++ {
		res, err = e.updateMatching(c, u, f, upd)
		if err != nil || res.Matched > 0 || !u.Upsert {
			break
		}
		res.UpsertedID, err = e.upsert(c, u, upd)
		if !mongoerr.Is(err, mongoerr.DuplicateKey) || attempt == maxUpsertAttempts {
			break
		}
	}
	if (res.Modified > 0 || res.UpsertedID.Type != 0) && u.Txn == nil {
		err = firstErr(err, e.ackDurable(u.WriteOptions))
	}
	return res, err
}

func (e *Engine) updateMatching(c *Collection, u UpdateSpec, f *query.Filter, upd updater) (UpdateResult, error) {
	var res UpdateResult
	err := e.forEachMatch(u.Ctx, c, writeQuery(f, u.WriteOptions), u.Hint, u.Txn, func(key []byte, examined *OpStats) (bool, error) {
		matched, what, err := e.rewrite(u.Ctx, c, key, f, u.Txn, u.Record, examined, func(cur bson.Raw, pos int) (bson.Raw, change, error) {
			next, delta, modified, err := upd.Apply(cur, pos, false)
			if err == nil && modified {
				err = checkUpdatedDepth(next)
			}
			if err == nil && modified {
				err = e.validate(c, cur, next, u.BypassValidation)
			}
			if err == nil && modified {
				err = c.checkShardKeyUpdate(cur, next, f, u.Multi, u.Txn != nil || u.Record != nil)
			}
			if err != nil || !modified {
				return nil, kept, err
			}
			return next, changeOf(upd, delta), nil
		})
		if matched {
			res.Matched++
		}
		if (what.kind == replace || what.kind == substitute) && err == nil {
			res.Modified++
		}
		return err == nil && (u.Multi || res.Matched == 0), err
	})
	return res, err
}

// upsert inserts the document an update builds from the filter's equality
// conditions (or u.Supplied replacing them), returning its _id.
func (e *Engine) upsert(c *Collection, u UpdateSpec, upd updater) (bson.RawValue, error) {
	seed, err := update.UpsertSeed(u.Filter, isReplacement(upd))
	if err != nil {
		return bson.RawValue{}, err
	}
	if u.Supplied != nil {
		if upd, err = update.Compile(u.Supplied, update.Options{}); err != nil {
			return bson.RawValue{}, err
		}
	}
	doc, _, _, err := upd.Apply(seed, -1, true)
	if err == nil {
		err = checkUpserted(doc)
	}
	if err == nil {
		err = checkUpsertSize(doc)
	}
	if err != nil {
		return bson.RawValue{}, err
	}
	return e.insertOne(u.Ctx, c, doc, u.Txn, stmtRec{rec: u.Record}, u.BypassValidation)
}

// insertOne stores one new document, failing with DuplicateKey when its _id
// exists, and returns its _id. Outside a transaction sr records it.
func (e *Engine) insertOne(ctx context.Context, c *Collection, doc bson.Raw, txn *Txn, sr stmtRec, bypass bool) (bson.RawValue, error) {
	if err := e.CheckUserWrite(ctx, c.DB, c.Name); err != nil {
		return bson.RawValue{}, err
	}
	doc, id, err := prepareInsert(doc)
	if err == nil {
		err = e.validate(c, nil, doc, bypass)
	}
	var key []byte
	if err == nil {
		key, err = c.recordKey(doc)
	}
	if err != nil {
		return bson.RawValue{}, err
	}
	absent := func(r storage.Reader) error {
		if _, exists, err := r.Get(key); err != nil || !exists {
			return err
		}
		return duplicateIDError(c, id)
	}
	if txn != nil {
		if err := absent(txn.tx); err != nil {
			return bson.RawValue{}, err
		}
		return id, txn.write(c, key, nil, doc, replaced)
	}
	return id, e.writeOne(ctx, c, key, sr, func(tx storage.Txn) (old, next bson.Raw, what change, err error) {
		return nil, doc, replaced, absent(tx)
	})
}
