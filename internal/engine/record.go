package engine

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/storage"
)

// Recorder adds a session's record of what a write did to the write's own
// storage transaction, so that the write and its record commit together or
// not at all: a retried write then finds the record exactly when the write
// is there (MongoDB's config.transactions; package sessions implements it).
type Recorder interface {
	// Stage adds to tx the record of writes, the documents tx changes. It
	// is called last, just before tx commits, again for each retry of a
	// conflicting write; a transaction's commit calls it with no writes.
	Stage(tx storage.Txn, writes []Write) error
	// Committed tells that the transaction of the latest Stage committed.
	Committed()
}

// Write is one document a transaction changes, from Old to New (nil for
// absent), for the statement at position Index of the engine call (the
// document's position for Insert, 0 for the one statement of Update,
// Delete and FindAndModify).
type Write struct {
	Index    int
	Old, New bson.Raw
}

// stmtRec is where one document write is recorded: rec, when set, and the
// statement's position in the call.
type stmtRec struct {
	rec   Recorder
	index int
}

// stage records the change of one document from old to next in tx.
func (s stmtRec) stage(tx storage.Txn, old, next bson.Raw) error {
	if s.rec == nil {
		return nil
	}
	return s.rec.Stage(tx, []Write{{Index: s.index, Old: old, New: next}})
}

// unloggedRetryable is MongoDB's refusal of a recorded (retryable) write's
// change to a collection whose writes its oplog does not log, those of the
// local database and of a database's system.profile (isReplicated): the op
// observer fails a write carrying a statement id there (OpObserverImpl::onInserts, logOperation), so the
// statement fails once its document and index checks passed, and nothing
// is written.
func unloggedRetryable(c *Collection) error {
	if IsReplicated(c.DB, c.Name) {
		return nil
	}
	return mongoerr.New(mongoerr.IllegalOperation, "retryable writes is not supported for unreplicated ns: %s.%s", c.DB, c.Name)
}

func (s stmtRec) committed() {
	if s.rec != nil {
		s.rec.Committed()
	}
}
