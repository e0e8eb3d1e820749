package engine

import (
	"bytes"
	"fmt"
	"slices"
	"sort"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// ValidateResult is what the validate command reports.
type ValidateResult struct {
	Records      int64
	KeysPerIndex map[string]int64
	// Missing are the entries the documents' keys call for that their
	// index lacks; Extra the entries no document's key accounts for (or
	// that point to another document).
	Missing, Extra []IndexEntry
	// Errors describe documents that cannot be indexed.
	Errors []string
}

// IndexEntry names one index entry: its index, the _id of its document
// (the zero value when the entry points to no document) and its key, field
// by field. The key encoding cannot be read back, so an extra entry's key
// is nil: only a missing entry's key is known, from its document.
type IndexEntry struct {
	Index string
	ID    bson.RawValue
	Key   bson.D
}

// expectedEntry is an index entry a document's key calls for.
type expectedEntry struct {
	encID []byte
	id    bson.RawValue
	index *Index
	key   indexKey
}

// Validate checks c's indexes against its documents both ways, on one
// snapshot: every key of every document has its entry, and every entry
// belongs to a document that has that key.
func (e *Engine) Validate(c *Collection) (ValidateResult, error) {
	res := ValidateResult{KeysPerIndex: map[string]int64{idIndexName: 0}}
	snap := e.kv.NewSnapshot()
	defer snap.Close()
	ixs := c.Indexes()
	if c.shard != nil {
		ixs = append(slices.Clip(ixs), c.shard.idIndex) // counts the _id index's keys
	}
	expected := map[string]expectedEntry{} // entry key -> what it should hold
	lo, hi := docSpan(c.ID)
	it, err := snap.NewIter(lo, hi)
	if err != nil {
		return res, err
	}
	var buf []byte
	for it.First(); it.Valid(); it.Next() {
		res.Records++
		if c.shard == nil {
			res.KeysPerIndex[idIndexName]++
		}
		encID := append([]byte(nil), idFromDocKey(it.Key())...)
		doc, err := docOf(it.Value(), &buf)
		if err != nil {
			res.Errors = append(res.Errors, fmt.Sprintf("the document stored at %x cannot be read: %v", it.Key(), err))
			continue
		}
		id := doc.Lookup("_id")
		id.Value = append([]byte(nil), id.Value...)
		if k, err := c.recordKey(doc); err != nil || !bytes.Equal(k, it.Key()) {
			res.Errors = append(res.Errors, fmt.Sprintf("the document with _id %s is not stored at its key in the collection's order", id))
		}
		for _, ix := range ixs {
			keys, _, err := ix.keys(doc)
			if err != nil {
				res.Errors = append(res.Errors, fmt.Sprintf("document with _id %s cannot be indexed by %s: %v", id, ix.Name, err))
				continue
			}
			for _, k := range keys {
				k.vals = copyValues(k.vals)
				expected[string(indexEntryKey(c.ID, ix, k.enc, encID))] = expectedEntry{encID: encID, id: id, index: ix, key: k}
			}
		}
	}
	if err := firstErr(it.Error(), it.Close()); err != nil {
		return res, err
	}
	for _, ix := range ixs {
		lo, hi := indexSpan(c.ID, ix.ID)
		it, err := snap.NewIter(lo, hi)
		if err != nil {
			return res, err
		}
		for it.First(); it.Valid(); it.Next() {
			res.KeysPerIndex[ix.Name]++
			want, ok := expected[string(it.Key())]
			// An entry holds the document's _id and the key's values
			// (or, written before they were kept, the _id alone).
			if v := entryValues(it.Value()); ok && bytes.Equal(want.encID, entryID(it.Value())) && (v == nil || bytes.Equal(v, entryValues(entryValue(want.encID, want.key)))) {
				delete(expected, string(it.Key()))
				continue
			}
			extra := IndexEntry{Index: ix.Name}
			if doc, found, err := getDoc(snap, docKeyFromEncodedID(c.ID, entryID(it.Value())), &buf); err != nil {
				return res, err
			} else if found {
				extra.ID = bson.Raw(doc).Lookup("_id")
			}
			res.Extra = append(res.Extra, extra)
		}
		if err := firstErr(it.Error(), it.Close()); err != nil {
			return res, err
		}
	}
	// Entry keys start with the index id: sorted, the missing entries come
	// index by index, each in key order.
	missing := make([]string, 0, len(expected))
	for k := range expected {
		missing = append(missing, k)
	}
	sort.Strings(missing)
	for _, k := range missing {
		want := expected[k]
		key := make(bson.D, len(want.index.Fields))
		for i, f := range want.index.Fields {
			v := want.key.vals[i]
			if v.Type == 0 {
				v = bson.RawValue{Type: bson.TypeNull}
			}
			key[i] = bson.E{Key: f.Path, Value: v}
		}
		res.Missing = append(res.Missing, IndexEntry{Index: want.index.Name, ID: want.id, Key: key})
	}
	return res, nil
}

// copyValues copies values out of an iterator's buffers.
func copyValues(vals []bson.RawValue) []bson.RawValue {
	out := make([]bson.RawValue, len(vals))
	for i, v := range vals {
		out[i] = bson.RawValue{Type: v.Type, Value: append([]byte(nil), v.Value...)}
	}
	return out
}
