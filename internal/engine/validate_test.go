package engine

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/storage"
)

// TestValidateCorruptIndex corrupts index entries behind the engine's back
// and checks that Validate names each missing and extra entry with its
// document's _id and, for a missing entry, its key.
func TestValidateCorruptIndex(t *testing.T) {
	e := newTestEngine(t)
	mustCreateIndex(t, e, "v", `{"a": 1}`, false)
	mustCreateIndex(t, e, "v", `{"b": 1, "a": -1}`, false)
	var docs []bson.Raw
	for _, s := range []string{`{"_id": 1, "a": 10, "b": "x"}`, `{"_id": 2, "a": 20, "b": "y"}`, `{"_id": 3, "a": 30}`} {
		docs = append(docs, ext(t, s))
	}
	if _, _, err := e.Insert("test", "v", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	c := e.Collection("test", "v")
	if res := mustValidate(t, e, "v"); res.Records != 3 || res.KeysPerIndex["a_1"] != 3 || res.KeysPerIndex["b_1_a_-1"] != 3 || res.KeysPerIndex["_id_"] != 3 {
		t.Fatalf("clean collection: %+v", res)
	}
	ixA, ixBA := c.Indexes()[0], c.Indexes()[1]
	keysOf := func(ix *Index, doc bson.Raw) []byte {
		keys, _, err := ix.keys(doc)
		if err != nil || len(keys) != 1 {
			t.Fatalf("keys of %s: %v %v", doc, keys, err)
		}
		id := doc.Lookup("_id")
		return indexEntryKey(c.ID, ix, keys[0].enc, docKey(c.ID, id)[5:])
	}
	// Document 2 loses its a_1 entry; a_1 gains an entry for a key no
	// document has, pointing to document 1; b_1_a_-1 gains an entry for a
	// document that does not exist.
	ghost := ext(t, `{"_id": 1, "a": 99}`)
	gone := ext(t, `{"_id": 7, "a": 70, "b": "z"}`)
	rawWrite(t, e, func(tx storage.Txn) error {
		if err := tx.Delete(keysOf(ixA, docs[1])); err != nil {
			return err
		}
		if err := tx.Set(keysOf(ixA, ghost), docKey(c.ID, ghost.Lookup("_id"))[5:]); err != nil {
			return err
		}
		return tx.Set(keysOf(ixBA, gone), docKey(c.ID, gone.Lookup("_id"))[5:])
	})
	res, err := e.Validate(c)
	if err != nil {
		t.Fatal(err)
	}
	if res.Records != 3 || res.KeysPerIndex["a_1"] != 3 || res.KeysPerIndex["b_1_a_-1"] != 4 {
		t.Errorf("counts: records %d, keys %v", res.Records, res.KeysPerIndex)
	}
	if len(res.Missing) != 1 {
		t.Fatalf("missing entries: %+v", res.Missing)
	}
	m := res.Missing[0]
	if m.Index != "a_1" || m.ID.Int32() != 2 || len(m.Key) != 1 || m.Key[0].Key != "a" || m.Key[0].Value.(bson.RawValue).Int32() != 20 {
		t.Errorf("missing entry: %+v", m)
	}
	if len(res.Extra) != 2 {
		t.Fatalf("extra entries: %+v", res.Extra)
	}
	byIndex := map[string]IndexEntry{}
	for _, x := range res.Extra {
		byIndex[x.Index] = x
	}
	if x, ok := byIndex["a_1"]; !ok || x.ID.Int32() != 1 || x.Key != nil {
		t.Errorf("extra a_1 entry: %+v", x)
	}
	if x, ok := byIndex["b_1_a_-1"]; !ok || x.ID.Type != 0 {
		t.Errorf("extra entry of a missing document: %+v", x)
	}
}
