package engine

import "time"

// A multi-document transaction computes a document's index entries when
// its statement runs but commits them later, possibly after index state
// changes this frontend loaded meanwhile (a build that went public, its
// backfill having missed the transaction's uncommitted documents). So a
// transaction remembers, for each collection it writes, the index lists
// it wrote with, and its commit holds those collections' locks shared (as
// single writes do for their whole run) and fails with WriteConflict,
// which drivers retry, when a list changed: a transaction thus never
// commits entries computed with an image older than the one in force, and
// the schema lease's invariant covers it like any write.

// txnImage is the index lists of a collection as a transaction wrote it.
type txnImage struct {
	c                *Collection
	public, building *[]*Index
}

// noteImage records c's index lists at a write of the transaction, or
// fails with WriteConflict when they changed since its earlier writes.
func (t *Txn) noteImage(c *Collection) error {
	if c.pending.Load() {
		return nil // the transaction's own collection: no other writer
	}
	for _, im := range t.images {
		if im.c == c {
			if im.public != c.indexes.Load() || im.building != c.building.Load() {
				return writeConflict()
			}
			return nil
		}
	}
	t.images = append(t.images, txnImage{c: c, public: c.indexes.Load(), building: c.building.Load()})
	return nil
}

// lockImages read-locks the collections the transaction wrote, for its
// commit, failing with WriteConflict when one was dropped or its index
// lists changed since the transaction wrote it, or a reload is changing
// them now: it does not wait for that reload, which may itself wait for a
// writer that waits for this transaction to end.
func (t *Txn) lockImages() (func(), error) {
	locked := 0
	unlock := func() {
		for _, im := range t.images[:locked] {
			im.c.mu.RUnlock()
		}
	}
	for _, im := range t.images {
		if !im.c.mu.TryRLock() {
			unlock()
			return nil, writeConflict()
		}
		locked++
		if im.c.dropped || im.c.frozen.Load() || im.public != im.c.indexes.Load() || im.building != im.c.building.Load() {
			unlock()
			return nil, writeConflict()
		}
	}
	return unlock, nil
}

// catalogCommitWait bounds how long a transaction's commit waits for the
// catalog lock.
const catalogCommitWait = 200 * time.Millisecond

// lockCatalogForCommit takes e.cat.mu for a transaction's commit, giving
// up after catalogCommitWait: the holder may be a reload waiting for a
// writer that waits for the committing transaction's intents.
func (e *Engine) lockCatalogForCommit() bool {
	deadline := time.Now().Add(catalogCommitWait)
	for !e.cat.mu.TryLock() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}
