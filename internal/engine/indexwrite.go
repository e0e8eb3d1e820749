package engine

import (
	"bytes"

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
// left alone.
func (c *Collection) indexChanges(encID []byte, old, next bson.Raw) (indexChanges, error) {
	var ch indexChanges
	for _, ix := range c.Indexes() {
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
			// A wildcard index reports only the multikey paths the
			// write added, which its catalog entry must record.
			if multikey && (!ix.multikey.Swap(true) || ix.wild != nil) {
				ch.multikey = true
			}
		}
		for _, k := range oldKeys {
			if !containsKey(newKeys, k) {
				ch.dels = append(ch.dels, indexEntryKey(c.ID, ix, k.enc, encID))
			}
		}
		for _, k := range newKeys {
			if containsKey(oldKeys, k) {
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
// same batch. The caller holds the locks of the unique entries.
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

// stage adds ch to b.
func (ch indexChanges) stage(b storage.Batch) error {
	for _, k := range ch.dels {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	for i, k := range ch.puts {
		if err := b.Set(k, ch.putVals[i]); err != nil {
			return err
		}
	}
	return nil
}

// persistMultikey adds c's catalog entry, with the current multikey flags,
// to b. Writers call it when they made an index multikey; metaMu orders
// their catalog writes.
func (e *Engine) persistMultikey(b storage.Batch, c *Collection) error {
	c.metaMu.Lock()
	defer c.metaMu.Unlock()
	return putCatalogEntry(b, c)
}

// invalidateHints removes the seek hints the puts of ch fall into; writers
// call it before and after their commit.
func (ch indexChanges) invalidateHints() {
	for i, k := range ch.puts {
		ch.putIx[i].hints.invalidate(k)
	}
}
