package engine

import (
	"bytes"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

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
	// uniques are the added entries of unique indexes, to check for
	// another document holding the same key.
	uniques []uniqueEntry
	// multikey reports that the write made an index multikey, which the
	// catalog must record in the same batch.
	multikey bool
}

type uniqueEntry struct {
	entry []byte
	ix    *Index
	key   indexKey
}

// indexChanges computes the index entries that change when the document
// with encoded _id encID goes from old to next (nil old: insert; nil next:
// delete). Entries present in both, built from identical values, are
// left alone. Indexes not public change as their state says
// (index_states.go): a delete-only index only loses entries.
func (c *Collection) indexChanges(encID []byte, old, next bson.Raw) (indexChanges, error) {
	var ch indexChanges
	public := c.Indexes()
	all := public
	if b := c.Building(); len(b) > 0 {
		all = append(slices.Clip(public), b...)
	}
	for _, ix := range all {
		var oldKeys, newKeys []indexKey
		var err error
		if old != nil {
			if oldKeys, _, err = ix.keys(old); err != nil {
				return ch, err
			}
		}
		if next != nil {
			var multikey bool
			if newKeys, multikey, err = ix.keys(next); err != nil {
				return ch, err
			}
			if multikey && !ix.multikey.Swap(true) {
				ch.multikey = true
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
			if ix.Unique {
				ch.uniques = append(ch.uniques, uniqueEntry{entry: entry, ix: ix, key: k})
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
			keys = append(keys, u.entry)
		}
	}
	return keys
}

// checkUnique fails with DuplicateKey when an entry ch adds to a unique
// index is held by another document, committed or staged earlier in the
// same transaction. The caller holds the locks of the unique entries, so
// it reads the latest committed state, where a writer of this engine that
// held them has committed: a commit of another engine after the caller's
// transaction began makes that transaction's commit conflict, since it
// writes the same entry.
func (e *Engine) checkUnique(c *Collection, encID []byte, ch indexChanges, staged map[string][]byte) error {
	for _, u := range ch.uniques {
		if other, ok := staged[string(u.entry)]; ok && !bytes.Equal(other, encID) {
			return duplicateKeyError(c, u.ix, u.key)
		}
		holder, ok, err := e.kv.Get(u.entry)
		if err != nil {
			return err
		}
		if ok && !bytes.Equal(entryID(holder), encID) {
			return duplicateKeyError(c, u.ix, u.key)
		}
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
	return nil
}

// persistMultikey records in tx the multikey flags c's indexes have in
// this frontend's image, in the stored catalog entry as tx reads it
// (another frontend may have changed it since this image was loaded), with
// the next catalog version so that the other frontends reload it; tx then
// conflicts with any catalog change committed meanwhile. Writers call it
// when they made an index multikey; metaMu orders their catalog writes.
func (e *Engine) persistMultikey(tx storage.Txn, c *Collection) error {
	c.metaMu.Lock()
	defer c.metaMu.Unlock()
	raw, ok, err := tx.Get(catalogKey(c.DB, c.Name))
	if err != nil || !ok {
		return err // dropped: nothing to record
	}
	var ent catalogEntry
	if err := bson.Unmarshal(raw, &ent); err != nil {
		return err
	}
	if uint32(ent.ID) != c.ID {
		return nil
	}
	changed := false
	mine := append(slices.Clone(c.Indexes()), c.Building()...)
	for i, si := range ent.Indexes {
		for _, ix := range mine {
			if ix.ID == uint32(si.ID) && ix.Multikey() && !si.Multikey {
				ent.Indexes[i].Multikey, changed = true, true
			}
		}
	}
	if !changed {
		return nil
	}
	v, err := readVersion(tx)
	if err != nil {
		return err
	}
	if err := setVersion(tx, v+1); err != nil {
		return err
	}
	return putEntry(tx, c.DB, c.Name, ent)
}

// invalidateHints removes the seek hints the puts of ch fall into; writers
// call it before and after their commit.
func (ch indexChanges) invalidateHints() {
	for i, k := range ch.puts {
		ch.putIx[i].hints.invalidate(k)
	}
}
