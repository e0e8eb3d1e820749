package engine

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/storage"
)

// change is what a write does to a document: its kind and, for an update
// whose operators logged it, the oplog diff (update.Update.Apply). Without
// one, the oplog diffs the two states.
type change struct {
	kind  changeKind
	delta []byte
	// inserted is the stamp of the insert entry that refers to the
	// document changed, which the change must write into it (insertMark);
	// 0 for none.
	inserted uint64
}

// changeKind is what a rewrite does to the document it examined.
type changeKind int

const (
	keep changeKind = iota
	// replace is a new state the update operators (or an update pipeline)
	// made, or an insert.
	replace
	// substitute is a replacement document (update's replacement form).
	substitute
	remove
)

// The changes without a delta.
var (
	kept        = change{kind: keep}
	replaced    = change{kind: replace}
	substituted = change{kind: substitute}
	removed     = change{kind: remove}
)

// rewrite is the one way an existing document changes. It reads the
// document and, when it matches f, lets decide choose its next state, and
// reports whether it matched and what decide chose. Outside a transaction
// it does so in a storage transaction under the document's lock (see
// writeOne): on a write conflict it reads, matches and decides again, so
// concurrent updates of a document are serialized and none is lost, and a
// document claimed by one findAndModify no longer matches for the next.
// decide may run more than once; only its last run was committed.
//
// In a transaction the document is read from the transaction's view and its
// change buffered there instead.
//
// examined is nil when a scan read the document; otherwise (the one _id a
// filter names, read only here) rewrite counts the document there when it
// finds it, as MongoDB's IDHACK counts a fetched document and none when the
// _id is absent.
func (e *Engine) rewrite(ctx context.Context, c *Collection, key []byte, f *query.Filter, txn *Txn, rec Recorder, examined *OpStats,
	decide func(cur bson.Raw, pos int) (bson.Raw, change, error)) (matched bool, what change, err error) {
	var buf []byte
	read := func(r storage.Reader) (old, next bson.Raw, err error) {
		matched, what = false, kept
		cur, mark, found, err := getMarkedDoc(r, key, &buf)
		if err != nil || !found {
			return nil, nil, err
		}
		if examined != nil {
			examined.DocsExamined++
			examined.idKeyRead(c.Clustered())
			examined = nil // once, however often a write conflict has it read again
		}
		ok, pos, err := f.MatchErr(cur)
		if !ok || err != nil {
			return nil, nil, err
		}
		matched = true
		next, what, err = decide(cur, pos)
		if err != nil || what.kind == keep {
			return nil, nil, err
		}
		if err := e.CheckUserWrite(ctx, c.DB, c.Name); err != nil {
			return nil, nil, err
		}
		if what.kind == remove {
			next = nil
		}
		what.inserted = mark
		return cur, next, nil
	}
	if txn != nil {
		old, next, err := read(txn.tx)
		if err == nil && what.kind != keep {
			err = txn.write(c, key, old, next, what)
		}
		return matched, what, err
	}
	err = e.writeOne(ctx, c, key, stmtRec{rec: rec}, func(tx storage.Txn) (old, next bson.Raw, w change, err error) {
		old, next, err = read(tx)
		return old, next, what, err
	})
	return matched, what, err
}

// lockWritable locks keys for a write outside any transaction, once no open
// transaction holds an intent on them; it returns the hold to release. The
// wait for a transaction ends early, nothing locked, when ctx ends.
func (e *Engine) lockWritable(ctx context.Context, keys ...[]byte) (*hold, error) {
	for {
		h := e.locks.lock(keys...)
		owner := e.intentOwner(keys)
		if owner == nil {
			return h, nil
		}
		h.unlock()
		var interrupted <-chan struct{}
		if ctx != nil {
			interrupted = ctx.Done()
		}
		select {
		case <-owner.done:
		case <-interrupted:
			return nil, mongoerr.Interruption(ctx)
		}
	}
}

// writeOne is a write of the document at key outside a multi-document
// transaction. Under the document's lock (and a capped collection's
// writer lock), in a storage transaction retried on conflict, read reads
// what it needs in tx and returns the document's current and next state
// (nil for absent) and what the change is (keep: nothing to do), and
// commitDoc commits the change with sr's record.
func (e *Engine) writeOne(ctx context.Context, c *Collection, key []byte, sr stmtRec,
	read func(tx storage.Txn) (old, next bson.Raw, what change, err error)) error {
	h, err := e.lockWritable(ctx, key)
	if err != nil {
		return err
	}
	defer h.unlock()
	if c.capped != nil {
		c.capped.mu.Lock()
		defer c.capped.mu.Unlock()
	}
	flagged := false
	st := opStatsIn(ctx)
	return e.retry(ctx, func(tx storage.Txn) error {
		old, next, what, err := read(tx)
		if err != nil || what.kind == keep {
			return err
		}
		return e.commitDoc(tx, c, key, old, next, what, sr, &flagged, st)
	})
}

// commitDoc commits in tx one document's change from old to next (nil for
// absent) together with its index entries, the catalog entry when it
// raised an index's flag, a capped collection's insertion order and evictions, and
// its statement's record (sr) and its oplog entry (what says whether an
// update replaced the document), after checking unique indexes; a new
// shard key value moves the document to its new key. The caller
// holds the document's lock (and a capped collection's writer lock);
// unique-entry locks are taken after it, always in that order. flagged
// carries, across the retries of one write, that it raised an index's
// flag: the catalog must record it whichever try commits. Once committed,
// the index keys it added and removed count in st (nil: nowhere).
func (e *Engine) commitDoc(tx storage.Txn, c *Collection, key []byte, old, next bson.Raw, what change, sr stmtRec, flagged *bool, st *OpStats) error {
	newKey, prev, ch, err := c.writeChanges(key, old, next)
	if err == nil {
		err = e.checkKeyLengths(newKey, ch)
	}
	if err != nil {
		return err
	}
	encID, moved := idFromDocKey(newKey), prev != nil
	*flagged = *flagged || ch.flagged
	if len(ch.uniques) > 0 {
		held := e.uniqueLocks.lock(uniqueKeys(ch)...)
		defer held.unlock()
		if err := e.checkUnique(c, encID, prev, ch, nil); err != nil {
			return err
		}
	}
	applied := func() {}
	if c.capped != nil {
		if applied, err = e.stageCapped(tx, c, encID, old, next); err != nil {
			return err
		}
	}
	if next == nil || moved {
		err = tx.Delete(key)
	}
	if next != nil && err == nil {
		err = tx.Set(newKey, c.stored(next))
	}
	if err == nil {
		err = ch.stage(tx)
	}
	if err == nil && *flagged {
		err = e.persistIndexFlags(tx, c)
	}
	if err == nil && sr.rec != nil {
		err = unloggedRetryable(c)
	}
	if err == nil {
		err = sr.stage(tx, old, next)
	}
	if err == nil {
		err = e.logDoc(tx, c, old, next, what, sr.session())
	}
	unlockRefs := e.lockRefs(what.inserted != 0, false)
	if err == nil && what.inserted != 0 {
		err = e.resolveInsertEntry(tx, what.inserted, old)
	}
	if err == nil {
		ch.invalidateHints()
		err = e.commit(tx)
		ch.invalidateHints()
	}
	unlockRefs()
	if err != nil {
		return err
	}
	st.wrote(old, next, ch)
	sr.committed()
	applied()
	if old != nil {
		c.changed.Add(1)
	}
	return nil
}

// forEachMatch calls fn with the storage key of each document of c matching
// q's filter in a snapshot taken when it starts, in plan order, until fn returns
// false; fn rewrites the document (see rewrite), which re-reads and
// re-matches it under its lock. The scan stops with the interruption's
// error once ctx ends; a document fn is changing is always finished first.
// A single _id outside a transaction is not read here at all: fn gets its
// key and the operation's OpStats as examined, and rewrite's read under the
// lock is the only one, counted there if it finds the document; examined
// is nil for the documents of a scan, which counted them.
func (e *Engine) forEachMatch(ctx context.Context, c *Collection, q compiledFind, hint bson.RawValue, txn *Txn, fn func(key []byte, examined *OpStats) (bool, error)) error {
	f := q.filter
	p, _, err := e.planFind(ctx, c, q, hint, txn, 0)
	if err != nil {
		return err
	}
	st := opStatsOf(ctx)
	st.ran(c, p, false)
	if txn == nil && p.IDPoint() {
		_, err := fn(docKeyFromEncodedID(c.ID, p.Intervals[0].Lo), st)
		return err
	}
	scan, err := e.openScan(c, p, f, txn, ctx, st)
	if err != nil {
		return err
	}
	defer scan.close()
	for {
		doc, _, err := scan.next()
		if doc == nil || err != nil {
			return err
		}
		key, err := c.recordKey(doc)
		if err != nil {
			return err
		}
		more, err := fn(key, nil)
		if !more || err != nil {
			return err
		}
	}
}
