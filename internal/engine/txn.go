package engine

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/oplog"
	"github.com/folio-db/folio/internal/storage"
)

// TransientTransactionError is the error label that tells drivers to retry
// the whole transaction; RetryableWriteError the one that tells them a
// write may be retried.
const (
	TransientTransactionError = "TransientTransactionError"
	RetryableWriteError       = "RetryableWriteError"
)

// Txn is a multi-document transaction with snapshot isolation: one
// storage transaction begun at Begin, whose snapshot its reads see with its
// own writes, which it buffers until Commit applies them atomically. The
// storage transaction's commit fails when another commit (of this engine or
// of another over the same store) wrote one of its keys since it began:
// the transaction then fails with WriteConflict and is aborted. Within one
// engine, write intents find most conflicts earlier, at the write: writing
// a document another open transaction wrote, or one committed since the
// snapshot, fails with WriteConflict at once (first writer wins), and
// writers outside transactions wait for the transaction that wrote a
// document to end. A Txn serves one operation at a time.
type Txn struct {
	e  *Engine
	tx storage.Txn
	// wrote is set once tx holds a write.
	wrote bool
	// changed are the collections whose documents it updated or deleted
	// (Collection.changed), once per write.
	changed []*Collection
	// keys are the document keys written, each holding an intent.
	keys [][]byte
	// uniques are the unique-index entries the transaction adds, checked
	// again at commit; uniqueKeys the keys (uniqueEntry.lock) it holds an
	// intent on (claimUnique).
	uniques    []txnUnique
	uniqueKeys [][]byte
	// flagged are the collections whose indexes' flags (multikey, coarse
	// cells) the transaction raised, whose catalog entries the commit
	// records.
	flagged []*Collection
	// changes are the index changes with puts, whose seek hints the
	// commit invalidates.
	changes []indexChanges
	// created are the collections the transaction created (with the
	// indexes it built on them), by nsKey, in creation order in
	// createdOrder: seen only by the transaction until it commits.
	created      map[string]*Collection
	createdOrder []*Collection
	// resolved are the catalog's collections the transaction's writes
	// found in its snapshot (resolve).
	resolved []*Collection
	// images are the index lists of the collections written (txn_schema.go).
	images []txnImage
	// ops are the oplog operations of the writes, in order, and
	// preImages the documents before those on collections that record
	// them.
	ops       []oplog.Op
	preImages []txnPreImage
	// inserted are the documents inserted by reference that the
	// transaction changes, as inserted, by their insert entries' stamps:
	// the commit writes them beside those entries (resolveInsertEntry).
	inserted []insertedDoc
	ended    bool
	done     chan struct{} // closed when the transaction ends
}

// insertedDoc is a document as inserted by reference, and its insert
// entry's stamp.
type insertedDoc struct {
	stamp uint64
	doc   bson.Raw
}

type txnUnique struct {
	c *Collection
	// encID is the record id the entry points to, prev the one of the
	// document before it moved (nil: it did not).
	encID, prev []byte
	u           uniqueEntry
}

// intents records which open transaction wrote each document key, and
// which added each key of a unique index (uniqueEntry.lock).
type intents struct {
	mu    sync.Mutex
	owner map[string]*Txn
}

// Begin starts a transaction on a snapshot of the current state.
func (e *Engine) Begin() (*Txn, error) {
	tx, err := e.kv.Begin()
	if err != nil {
		return nil, err
	}
	return &Txn{e: e, tx: tx, done: make(chan struct{})}, nil
}

// writeConflict is MongoDB's WriteConflict, labelled for driver retries.
func writeConflict() *mongoerr.Error {
	err := mongoerr.New(mongoerr.WriteConflict, "Write conflict during plan execution and yielding is disabled. :: Please retry your operation or multi-document transaction.")
	err.Labels = []string{TransientTransactionError}
	return err
}

// claim takes the write intent on a document key: it fails with
// WriteConflict when another open transaction holds it, or when the
// document changed since the snapshot.
func (t *Txn) claim(key []byte) error {
	e := t.e
	held := e.locks.lock(key)
	defer held.unlock()
	owner := e.intentOwner([][]byte{key})
	if owner == t {
		return nil
	}
	if owner != nil {
		return writeConflict()
	}
	latest, inLatest, err := e.kv.Get(key)
	if err != nil {
		return err
	}
	// Not written by t yet (it holds no intent): t's snapshot.
	seen, inSnap, err := t.tx.Get(key)
	if err != nil {
		return err
	}
	if inLatest != inSnap || !bytes.Equal(latest, seen) {
		return writeConflict()
	}
	e.intents.mu.Lock()
	e.intents.owner[string(key)] = t
	e.intents.mu.Unlock()
	t.keys = append(t.keys, slices.Clone(key))
	return nil
}

// claimUnique checks the entry u that the document with record id encID
// (moving from prev, nil: it does not move) adds to a unique index of c,
// and takes the write intent on its key. A holder the transaction sees
// fails the write with DuplicateKey; another open transaction holding the
// intent, or a commit since the snapshot giving the key to a document the
// transaction did not write, fails it with WriteConflict, as MongoDB's
// unique indexes conflict on the key's entry
// (jstests/core/txns/transactions_write_conflicts_unique_indexes.js).
func (t *Txn) claimUnique(c *Collection, u uniqueEntry, encID, prev []byte) error {
	e := t.e
	held := e.uniqueLocks.lock(u.lock)
	defer held.unlock()
	if owner := e.intentOwner([][]byte{u.lock}); owner != nil && owner != t {
		return writeConflict()
	}
	if err := u.checkFree(c, t.tx, encID, prev); err != nil {
		return err
	}
	taken, err := u.heldBy(e.kv, t.takenFrom(c, encID, prev))
	if err != nil {
		return err
	}
	if taken {
		return writeConflict()
	}
	e.intents.mu.Lock()
	if e.intents.owner[string(u.lock)] == nil {
		e.intents.owner[string(u.lock)] = t
		t.uniqueKeys = append(t.uniqueKeys, slices.Clone(u.lock))
	}
	e.intents.mu.Unlock()
	return nil
}

// takenFrom reports, of a unique entry's value in the latest committed
// state, whether it holds the key for a document other than the one with
// record id encID (moving from prev) that the transaction did not write:
// one whose entry its view no longer has, it removed itself.
func (t *Txn) takenFrom(c *Collection, encID, prev []byte) func(holder []byte) bool {
	return func(holder []byte) bool {
		if !heldByOther(holder, encID, prev) {
			return false
		}
		return t.e.intentOwner([][]byte{docKeyFromEncodedID(c.ID, entryID(holder))}) != t
	}
}

// cappedInTxn is MongoDB's refusal of a transaction's write to the capped
// collection c, which its write paths raise once they have the collection,
// whether or not a document matches (checkIfTransactionOnCappedColl).
func cappedInTxn(c *Collection) error {
	return mongoerr.New(mongoerr.OperationNotSupportedInTransaction, "Collection '%s.%s' is a capped collection. Writes in transactions are not allowed on capped collections.", c.DB, c.Name)
}

// write buffers one document's change from old to next (nil for absent)
// with its index entries, after claiming the document and checking unique
// indexes against the transaction's view.
func (t *Txn) write(c *Collection, key []byte, old, next bson.Raw, what change) error {
	if t.ended {
		return mongoerr.New(mongoerr.NoSuchTransaction, "Transaction has been aborted.")
	}
	if c.capped != nil {
		return cappedInTxn(c)
	}
	newKey, prev, ch, err := c.writeChanges(key, old, next)
	if err != nil {
		return err
	}
	if err := t.noteImage(c); err != nil {
		return err
	}
	if err := t.claim(key); err != nil {
		return err
	}
	encID, moved := idFromDocKey(newKey), prev != nil
	if moved {
		if err := t.claim(newKey); err != nil {
			return err
		}
	}
	for _, u := range ch.uniques {
		if err := t.claimUnique(c, u, encID, prev); err != nil {
			return err
		}
		t.uniques = append(t.uniques, txnUnique{c: c, encID: slices.Clone(encID), prev: prev, u: u})
	}
	if next == nil || moved {
		err = t.tx.Delete(key)
	}
	if next != nil && err == nil {
		err = t.tx.Set(newKey, c.stored(next))
	}
	if err == nil {
		err = ch.stage(t.tx)
	}
	if err != nil {
		return err
	}
	t.wrote = true
	if old != nil {
		t.changed = append(t.changed, c)
	}
	if what.inserted != 0 {
		t.inserted = append(t.inserted, insertedDoc{stamp: what.inserted, doc: slices.Clone(old)})
	}
	if t.e.oplog != nil && c.replicated() {
		if old != nil && c.preImages.Load() {
			t.preImages = append(t.preImages, txnPreImage{index: len(t.ops), doc: old})
		}
		t.ops = append(t.ops, docOp(c, old, next, what, nil))
	}
	if ch.flagged {
		t.flagged = append(t.flagged, c)
	}
	if len(ch.puts) > 0 {
		t.changes = append(t.changes, ch)
	}
	return nil
}

// Commit applies the transaction's writes atomically and durably. A unique
// key taken meanwhile by another writer of this engine fails the commit
// with DuplicateKey; a write conflict in storage fails it with
// WriteConflict (labelled TransientTransactionError). Either way the
// transaction is then aborted.
func (t *Txn) Commit() error { return t.CommitRecorded(context.Background(), nil) }

// CommitRecorded is Commit with rec, when set, staging the session's record
// of the commit in the commit's storage transaction, and the commit's time
// noted in the OpStats of ctx (the commitTransaction's). A transaction that
// wrote nothing commits nothing and records nothing, as in MongoDB.
func (t *Txn) CommitRecorded(ctx context.Context, rec Recorder) error {
	if t.ended {
		return mongoerr.New(mongoerr.NoSuchTransaction, "Transaction has been aborted.")
	}
	defer t.end()
	if !t.wrote && len(t.createdOrder) == 0 {
		return nil
	}
	e := t.e
	if len(t.createdOrder) > 0 {
		// The catalog lock is taken before any document lock, as drop and
		// rename take it before the collection's, so that no collection
		// of the same name appears between this check and the commit.
		// A reload holding it may wait for a writer that waits for this
		// transaction: the commit then fails (transiently) rather than
		// wait (lockCatalogForCommit).
		if !e.lockCatalogForCommit() {
			return writeConflict()
		}
		defer e.cat.mu.Unlock()
		for _, c := range t.createdOrder {
			if e.cat.colls[nsKey(c.DB, c.Name)] != nil {
				return writeConflict()
			}
		}
	}
	unlockImages, err := t.lockImages()
	if err != nil {
		return err
	}
	imagesLocked := true
	defer func() {
		if imagesLocked {
			unlockImages()
		}
	}()
	held := e.locks.lock(t.keys...)
	defer held.unlock()
	entries := make([][]byte, len(t.uniques))
	for i, u := range t.uniques {
		entries[i] = u.u.lock
	}
	if len(entries) > 0 {
		heldUnique := e.uniqueLocks.lock(entries...)
		defer heldUnique.unlock()
	}
	for _, u := range t.uniques {
		// The entry must still be ours in the view: a later write of the
		// transaction may have removed it again.
		if mine, ok, err := t.tx.Get(u.u.entry); err != nil || !ok || !bytes.Equal(entryID(mine), u.encID) {
			if err != nil {
				return err
			}
			continue
		}
		taken, err := u.u.heldBy(e.kv, t.takenFrom(u.c, u.encID, u.prev))
		if err != nil {
			return err
		}
		if taken {
			return duplicateKeyError(u.c, u.u.ix, u.u.key)
		}
	}
	for _, c := range t.flagged {
		if err := e.persistIndexFlags(t.tx, c); err != nil {
			return err
		}
	}
	if err := t.stageCreated(t.tx); err != nil {
		return err
	}
	if rec != nil {
		if err := rec.Stage(t.tx, nil); err != nil {
			return err
		}
	}
	if err := e.logTxn(t.tx, t.ops, t.preImages, sessionOf(rec, -1)); err != nil {
		return err
	}
	unlockRefs := e.lockRefs(len(t.inserted) > 0, false)
	for _, ins := range t.inserted {
		if err := e.resolveInsertEntry(t.tx, ins.stamp, ins.doc); err != nil {
			unlockRefs()
			return err
		}
	}
	for _, ch := range t.changes {
		ch.invalidateHints()
	}
	err = e.commit(t.tx)
	unlockRefs()
	for _, ch := range t.changes {
		ch.invalidateHints()
	}
	// installCreated may reload the image, which locks collections.
	unlockImages()
	imagesLocked = false
	if errors.Is(err, storage.ErrWriteConflict) {
		return writeConflict()
	}
	if err != nil {
		return err
	}
	noteCommit(ctx, t.tx)
	for _, c := range t.changed {
		c.changed.Add(1)
	}
	if err := t.installCreated(); err != nil {
		return err
	}
	if rec != nil {
		rec.Committed()
	}
	return e.Durable(true)
}

// Abort discards the transaction's writes.
func (t *Txn) Abort() {
	if !t.ended {
		t.end()
	}
}

// end releases the intents and the storage transaction and wakes waiting
// writers.
func (t *Txn) end() {
	t.ended = true
	e := t.e
	e.intents.mu.Lock()
	for _, k := range slices.Concat(t.keys, t.uniqueKeys) {
		if e.intents.owner[string(k)] == t {
			delete(e.intents.owner, string(k))
		}
	}
	e.intents.mu.Unlock()
	close(t.done)
	t.tx.Rollback()
}

// intentOwner is the open transaction holding an intent on one of keys,
// nil for none.
func (e *Engine) intentOwner(keys [][]byte) *Txn {
	e.intents.mu.Lock()
	defer e.intents.mu.Unlock()
	for _, k := range keys {
		if o := e.intents.owner[string(k)]; o != nil {
			return o
		}
	}
	return nil
}
