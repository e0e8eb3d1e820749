package engine

import (
	"bytes"
	"fmt"
)

// ValidateResult is what the validate command reports.
type ValidateResult struct {
	Records      int64
	KeysPerIndex map[string]int64
	// Errors describe every inconsistency found: an index entry missing
	// for a document's key, or an entry whose document does not exist or
	// no longer has that key.
	Errors []string
}

// Validate checks c's indexes against its documents both ways, on one
// snapshot: every key of every document has its entry, and every entry
// belongs to a document that has that key.
func (e *Engine) Validate(c *Collection) (ValidateResult, error) {
	res := ValidateResult{KeysPerIndex: map[string]int64{idIndexName: 0}}
	snap := e.kv.NewSnapshot()
	defer snap.Close()
	ixs := c.Indexes()
	expected := map[string][]byte{} // entry key -> encoded _id
	lo, hi := docSpan(c.ID)
	it, err := snap.NewIter(lo, hi)
	if err != nil {
		return res, err
	}
	for it.First(); it.Valid(); it.Next() {
		res.Records++
		res.KeysPerIndex[idIndexName]++
		encID := idFromDocKey(it.Key())
		for _, ix := range ixs {
			keys, _, err := ix.keys(it.Value())
			if err != nil {
				res.Errors = append(res.Errors, fmt.Sprintf("document %x cannot be indexed by %s: %v", encID, ix.Name, err))
				continue
			}
			for _, k := range keys {
				expected[string(indexEntryKey(c.ID, ix, k.enc, encID))] = append([]byte(nil), encID...)
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
			switch {
			case !ok:
				res.Errors = append(res.Errors, fmt.Sprintf("index %s has an extra entry %x for document %x", ix.Name, it.Key(), it.Value()))
			case !bytes.Equal(want, it.Value()):
				res.Errors = append(res.Errors, fmt.Sprintf("index %s entry %x points to document %x instead of %x", ix.Name, it.Key(), it.Value(), want))
			}
			delete(expected, string(it.Key()))
		}
		if err := firstErr(it.Error(), it.Close()); err != nil {
			return res, err
		}
	}
	for k, id := range expected {
		res.Errors = append(res.Errors, fmt.Sprintf("missing index entry %x for document %x", k, id))
	}
	return res, nil
}
