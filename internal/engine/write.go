package engine

import (
	"context"
	"errors"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/storage"
)

// change is what a rewrite does to the document it examined.
type change int

const (
	keep change = iota
	replace
	remove
)

// rewrite is the one way an existing document changes. Under the lock of
// the document's key it re-reads the latest committed version and, when that
// still matches f, lets decide choose its next state, committing it in one
// batch. It reports whether the document still matched. Because every writer
// re-reads under the lock, concurrent updates of a document are serialized
// and none is lost, and a document claimed by one findAndModify no longer
// matches for the next.
//
// In a transaction the document is read from the transaction's view and its
// change buffered there instead.
func (e *Engine) rewrite(ctx context.Context, c *Collection, key []byte, f *query.Filter, txn *Txn, rec Recorder,
	decide func(cur bson.Raw, pos int) (bson.Raw, change, error)) (bool, error) {
	var r storage.Reader = e.kv
	write := func(cur, next bson.Raw) error { return e.writeDoc(c, key, cur, next, stmtRec{rec: rec}) }
	if txn != nil {
		r = txn.view
		write = func(cur, next bson.Raw) error { return txn.write(c, key, cur, next) }
	} else {
		unlock, err := e.lockWritable(ctx, key)
		if err != nil {
			return false, err
		}
		defer unlock()
	}
	cur, found, err := r.Get(key)
	if err != nil || !found {
		return false, err
	}
	ok, pos, err := f.MatchErr(cur)
	if !ok || err != nil {
		return false, err
	}
	next, what, err := decide(cur, pos)
	if err != nil || what == keep {
		return true, err
	}
	if what == remove {
		next = nil
	}
	return true, write(cur, next)
}

// lockWritable locks keys for a write outside any transaction, once no open
// transaction holds an intent on them; it returns the unlock function. The
// wait for a transaction ends early, nothing locked, when ctx ends.
func (e *Engine) lockWritable(ctx context.Context, keys ...[]byte) (func(), error) {
	var unlock func()
	lock := func() { unlock = e.locks.lock(keys...) }
	lock()
	if err := e.waitForIntents(ctx, keys, func() { unlock() }, lock); err != nil {
		return nil, err
	}
	return unlock, nil
}

// writeDoc commits one document's change from old to next (nil for absent)
// together with its index entries and its statement's record (sr) in one
// batch, after checking unique indexes. The caller holds the document's
// lock; unique-entry locks are taken after it, always in that order.
func (e *Engine) writeDoc(c *Collection, key []byte, old, next bson.Raw, sr stmtRec) error {
	encID := idFromDocKey(key)
	ch, err := c.indexChanges(encID, old, next)
	if err != nil {
		return err
	}
	if len(ch.uniques) > 0 {
		unlock := e.uniqueLocks.lock(uniqueKeys(ch)...)
		defer unlock()
		if err := e.checkUnique(c, encID, ch, nil); err != nil {
			return err
		}
	}
	b := e.kv.NewBatch()
	defer b.Close()
	applied := func() {}
	if c.capped != nil {
		c.capped.mu.Lock()
		defer c.capped.mu.Unlock()
		if applied, err = e.stageCapped(b, c, encID, old, next); err != nil {
			if errors.Is(err, errEvicted) {
				return nil
			}
			return err
		}
	}
	if next == nil {
		err = b.Delete(key)
	} else {
		err = b.Set(key, next)
	}
	if err == nil {
		err = ch.stage(b)
	}
	if err == nil && ch.multikey {
		err = e.persistMultikey(b, c)
	}
	if err == nil {
		err = sr.stage(b, old, next)
	}
	if err == nil {
		ch.invalidateHints()
		err = e.commit(b)
		ch.invalidateHints()
	}
	if err != nil {
		return err
	}
	sr.committed()
	applied()
	return nil
}

// forEachMatch calls fn with the storage key of each document of c matching
// f in a snapshot taken when it starts, in plan order, until fn returns
// false; fn rewrites the document (see rewrite), which re-reads and
// re-matches it under its lock. The scan stops with the interruption's
// error once ctx ends; a document fn is changing is always finished first.
// A single _id outside a transaction is not read here at all: fn gets its
// key, and rewrite's read under the lock is the only one.
func (e *Engine) forEachMatch(ctx context.Context, c *Collection, f *query.Filter, hint bson.RawValue, txn *Txn, fn func(key []byte) (bool, error)) error {
	p, _, err := e.planFind(ctx, c, compiledFind{filter: f}, hint, txn, 0)
	if err != nil {
		return err
	}
	if txn == nil && p.IDPoint() {
		_, err := fn(docKeyFromEncodedID(c.ID, p.Intervals[0].Lo))
		return err
	}
	scan, err := e.openScan(c, p, f, txn, ctx, &scanStats{})
	if err != nil {
		return err
	}
	defer scan.close()
	for {
		doc, _, err := scan.next()
		if doc == nil || err != nil {
			return err
		}
		more, err := fn(c.docKey(documentID(doc)))
		if !more || err != nil {
			return err
		}
	}
}
