package engine

import (
	"bytes"
	"context"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/keyenc"
	"github.com/folio-db/folio/internal/storage"
)

// indexChanges are the index entries one document write removes and adds.
type indexChanges struct {
	dels [][]byte
	puts [][]byte
	// putVals are the values of puts (see entryValue), one for one.
	putVals [][]byte
	// putIx are the indexes of puts, one for one.
	putIx []*Index
	// uniques are the added entries of unique indexes (and of indexes
	// preparing to be), to check for another document holding the same
	// key.
	uniques []uniqueEntry
	// guards are keys the write deletes so that two writers of one key of
	// an index keyed with the record id conflict (uniqueGuard).
	guards [][]byte
	// flagged reports that the write raised an index's flag (multikey,
	// coarse cells), which the catalog must record.
	flagged bool
}

// uniqueEntry is an entry a write adds to an index that refuses
// duplicates, and lock, the key its writers serialize on: the entry, or
// for an index keyed with the record id the entry without it (the prefix
// every entry of that key starts with).
type uniqueEntry struct {
	entry, lock []byte
	ix          *Index
	key         indexKey
}

// refusesDuplicates reports whether writes check that no other document
// holds a key they add.
func (ix *Index) refusesDuplicates() bool { return ix.Unique || ix.PrepareUnique }

// uniqueGuard is the key the writers of lock, a key of an index keyed with
// the record id, delete in their transactions: two transactions adding
// entries of one key for two documents then write one key, and the store
// makes the second conflict, as it does for an index keyed by value. It
// lies in its own space, 'u' <collID:4> <indexID:4> <keyenc(k1..kn)>, and
// is never set.
func uniqueGuard(lock []byte) []byte {
	return append([]byte{spaceUniqueGuard}, lock[1:]...)
}

// indexChanges computes the index entries that change when the document
// with encoded _id encID goes from old to next (nil old: insert; nil next:
// delete). Entries present in both, built from identical values, are
// left alone. Indexes not public change as their state says
// (index_states.go): a delete-only index only loses entries.
func (c *Collection) indexChanges(encID []byte, old, next bson.Raw) (indexChanges, error) {
	var ch indexChanges
	if old == nil && next != nil && c.Options.IDIndexV1 && holdsDecimal(next.Lookup("_id")) {
		// a new document's key in a version 1 _id index
		return ch, errV1Decimal
	}
	for _, ix := range c.indexesWritten() {
		var oldKeys, newKeys []indexKey
		var err error
		if old != nil {
			if oldKeys, _, err = ix.keys(old); err != nil {
				return ch, err
			}
		}
		if next != nil {
			var multikey bool
			var arrays []uint64
			if err := c.checkBucketKeys(ix, next); err != nil {
				return ch, err
			}
			if newKeys, arrays, multikey, err = ix.keysWithArrays(next); err != nil {
				return ch, err
			}
			// The array components are raised before the flag, so
			// that no catalog entry records the flag without them
			// (loadArrays). A wildcard index reports only the multikey
			// paths the write added, which its catalog entry must
			// record.
			if arrays != nil && ix.raiseArrays(arrays) {
				ch.flagged = true
			}
			if multikey && (!ix.multikey.Swap(true) || ix.wild != nil) {
				ch.flagged = true
			}
			if ix.raiseCoarseCells(newKeys) {
				ch.flagged = true
			}
		}
		for _, k := range oldKeys {
			if !containsKey(newKeys, k) {
				ch.dels = append(ch.dels, indexEntryKey(c.ID, ix, k.enc, encID))
			}
		}
		for _, k := range newKeys {
			if ix.state == stateDeleteOnly || containsKey(oldKeys, k) {
				continue
			}
			entry := indexEntryKey(c.ID, ix, k.enc, encID)
			ch.puts = append(ch.puts, entry)
			ch.putVals = append(ch.putVals, entryValue(encID, k))
			ch.putIx = append(ch.putIx, ix)
			if ix.refusesDuplicates() {
				u := uniqueEntry{entry: entry, lock: entry, ix: ix, key: k}
				if ix.idKeyed {
					u.lock = entry[:len(entry)-len(encID)]
					ch.guards = append(ch.guards, uniqueGuard(u.lock))
				}
				ch.uniques = append(ch.uniques, u)
			}
		}
	}
	return ch, nil
}

// containsKey reports whether keys hold key, built from identical values.
func containsKey(keys []indexKey, key indexKey) bool {
	for _, k := range keys {
		if bytes.Equal(k.enc, key.enc) && sameValues(k.vals, key.vals) {
			return true
		}
	}
	return false
}

// uniqueKeys lists the unique entries of several changes, for locking.
func uniqueKeys(chs ...indexChanges) [][]byte {
	var keys [][]byte
	for _, ch := range chs {
		for _, u := range ch.uniques {
			keys = append(keys, u.lock)
		}
	}
	return keys
}

// checkUnique fails with DuplicateKey when an entry ch adds to a unique
// index is held by another document, committed or staged earlier in the
// same transaction; prev (nil: none) is the record id the document moves
// from, whose entries are its own. The caller holds the locks of the unique entries, so
// it reads the latest committed state, where a writer of this engine that
// held them has committed: a commit of another engine after the caller's
// transaction began makes that transaction's commit conflict, since it
// writes the same entry.
func (e *Engine) checkUnique(c *Collection, encID, prev []byte, ch indexChanges, staged map[string][]byte) error {
	for _, u := range ch.uniques {
		if other, ok := staged[string(u.lock)]; ok && !bytes.Equal(other, encID) {
			return duplicateKeyError(c, u.ix, u.key)
		}
		if err := u.checkFree(c, e.kv, encID, prev); err != nil {
			return err
		}
	}
	return nil
}

// checkFree fails with DuplicateKey when r holds u's key (of collection
// c) for a document other than the one with record id encID, which moves
// from record id prev (nil: it does not move).
func (u uniqueEntry) checkFree(c *Collection, r storage.Reader, encID, prev []byte) error {
	taken, err := u.heldBy(r, func(holder []byte) bool { return heldByOther(holder, encID, prev) })
	if err != nil || !taken {
		return err
	}
	return duplicateKeyError(c, u.ix, u.key)
}

// heldBy reports whether r holds u's key for a document other reports
// true of (given the entry's value): the entry's holder, or for an index
// keyed with the record id any entry of the key.
func (u uniqueEntry) heldBy(r storage.Reader, other func(holder []byte) bool) (bool, error) {
	if !u.ix.idKeyed {
		holder, ok, err := r.Get(u.entry)
		return err == nil && ok && other(holder), err
	}
	it, err := r.NewIter(u.lock, keyenc.PrefixEnd(u.lock))
	if err != nil {
		return false, err
	}
	for ok := it.First(); ok; ok = it.Next() {
		if other(it.Value()) {
			return true, it.Close()
		}
	}
	return false, firstErr(it.Error(), it.Close())
}

// heldByOther reports whether the unique entry whose value is holder
// belongs to a document other than the one with record id encID, which
// moves from record id prev (nil: it does not move).
func heldByOther(holder, encID, prev []byte) bool {
	id := entryID(holder)
	return !bytes.Equal(id, encID) && (prev == nil || !bytes.Equal(id, prev))
}

// writeChanges are the index changes of the document at key going from
// old to next (nil for absent), with the key it is then stored at: key,
// unless next has other shard key values, when the document moves from
// record id prev (nil when it does not move) to newKey's.
func (c *Collection) writeChanges(key []byte, old, next bson.Raw) (newKey, prev []byte, ch indexChanges, err error) {
	if newKey, err = c.movedKey(key, next); err != nil {
		return nil, nil, indexChanges{}, err
	}
	encID := idFromDocKey(newKey)
	if bytes.Equal(newKey, key) {
		ch, err = c.indexChanges(encID, old, next)
		return newKey, nil, ch, err
	}
	prev = slices.Clone(idFromDocKey(key))
	ch, err = c.moveChanges(prev, encID, old, next)
	return newKey, prev, ch, err
}

// moveChanges are the index changes of a document that moves from record
// id oldID (as old) to newID (as next): all of old's entries go, all of
// next's come; a unique entry both hold is rewritten to point to newID.
func (c *Collection) moveChanges(oldID, newID []byte, old, next bson.Raw) (indexChanges, error) {
	gone, err := c.indexChanges(oldID, old, nil)
	if err != nil {
		return indexChanges{}, err
	}
	ch, err := c.indexChanges(newID, nil, next)
	ch.dels = gone.dels
	ch.guards = append(ch.guards, gone.guards...)
	return ch, err
}

// checkKeyLengths refuses a document whose key, or one of the index
// entries it adds, is longer than the store writes (storage.KeyLimit),
// before any of its writes is staged.
func (e *Engine) checkKeyLengths(key []byte, ch indexChanges) error {
	if e.maxKey == 0 {
		return nil
	}
	n := len(key)
	for _, k := range ch.puts {
		n = max(n, len(k))
	}
	if n > e.maxKey {
		return storage.KeyTooLong(n, e.maxKey)
	}
	return nil
}

// stage adds ch to tx.
func (ch indexChanges) stage(tx storage.Txn) error {
	for _, k := range ch.dels {
		if err := tx.Delete(k); err != nil {
			return err
		}
	}
	for i, k := range ch.puts {
		if err := tx.Set(k, ch.putVals[i]); err != nil {
			return err
		}
	}
	for _, k := range ch.guards {
		if err := tx.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// persistIndexFlags makes the flags (multikey, coarse cells) c's indexes have in this
// frontend's image known to every frontend before the write that raised
// them commits: it records them in the stored catalog entry, with a new
// catalog version, in a transaction of its own, then waits until every
// live frontend has loaded that version (at once when there is no other).
// So no frontend plans a query with an index it believes is not multikey
// over a snapshot holding the array that made it multikey (the planner may
// intersect bounds of a non-multikey index). The write's own transaction
// stages nothing: it would only conflict with that catalog change. metaMu
// orders writers raising the flags of one collection.
func (e *Engine) persistIndexFlags(_ storage.Txn, c *Collection) error {
	c.metaMu.Lock()
	defer c.metaMu.Unlock()
	var v uint64
	changed := false
	err := e.retry(context.Background(), func(tx storage.Txn) error {
		var err error
		if v, changed, err = stageIndexFlags(tx, c); err != nil || !changed {
			return err
		}
		return tx.Commit()
	})
	if err != nil || !changed {
		return err
	}
	return e.awaitVersion(v)
}

// storedEntryOf is c's catalog entry as tx reads it, raw (a copy) and
// decoded; ok is false when there is none or it is another collection's
// (c was dropped, the name reused).
func storedEntryOf(tx storage.Txn, c *Collection) (raw []byte, ent catalogEntry, ok bool, err error) {
	raw, ok, err = tx.Get(catalogKey(c.DB, c.Name))
	if err != nil || !ok {
		return nil, ent, false, err
	}
	raw = bytes.Clone(raw)
	if err := bson.Unmarshal(raw, &ent); err != nil {
		return nil, ent, false, err
	}
	return raw, ent, uint32(ent.ID) == c.ID, nil
}

// stageIndexFlags stages in tx the stored entry of c with the flags
// of c's image, and the next catalog version, which it returns, unless the
// entry has them already (or c was dropped).
func stageIndexFlags(tx storage.Txn, c *Collection) (uint64, bool, error) {
	_, ent, ok, err := storedEntryOf(tx, c)
	if err != nil || !ok {
		return 0, false, err
	}
	changed := false
	mine := append(slices.Clone(c.Indexes()), c.Building()...)
	for i, si := range ent.Indexes {
		for _, ix := range mine {
			if ix.ID != uint32(si.ID) {
				continue
			}
			if ix.Multikey() && !si.Multikey {
				ent.Indexes[i].Multikey, changed = true, true
			}
			if ix.coarseCells.Load() && si.LeafCells {
				ent.Indexes[i].LeafCells, changed = false, true
			}
			if arrays := ix.fieldArrays(); arrays != nil && newBits(si.FieldArrays, arrays) {
				ent.Indexes[i].FieldArrays, changed = arrays, true
			}
			if ix.wild != nil {
				if paths := ix.wild.multikeyPaths(); len(paths) > len(si.MultikeyPaths) {
					ent.Indexes[i].MultikeyPaths, changed = paths, true
				}
			}
		}
	}
	if !changed {
		return 0, false, nil
	}
	v, err := readVersion(tx)
	if err == nil {
		err = setVersion(tx, v+1)
	}
	if err == nil {
		err = putEntry(tx, c.DB, c.Name, ent)
	}
	return v + 1, err == nil, err
}

// invalidateHints removes the seek hints the puts of ch fall into; writers
// call it before and after their commit.
func (ch indexChanges) invalidateHints() {
	for i, k := range ch.puts {
		ch.putIx[i].hints.invalidate(k)
	}
}
