package engine

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/storage"
)

// TestIndexKeyOfOldEntry: the index key of a document found through an
// entry holding the _id alone (written before entries kept the key's
// values) is the document's key the entry's key starts with: for a
// multikey index, the array element the scan met.
func TestIndexKeyOfOldEntry(t *testing.T) {
	e := newTestEngine(t)
	mustCreateIndex(t, e, "ik", `{"a": 1, "b": 1}`, false)
	doc := ext(t, `{"_id": 1, "a": [3, 1], "b": "x"}`)
	if _, _, err := e.Insert("test", "ik", []bson.Raw{doc}, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	c := e.Collection("test", "ik")
	ix := c.FindIndex("a_1_b_1")
	keys, _, err := ix.keys(doc)
	if err != nil || len(keys) != 2 {
		t.Fatal(keys, err)
	}
	encID := docKey(c.ID, doc.Lookup("_id"))[5:]
	for _, k := range keys {
		rawWrite(t, e, func(tx storage.Txn) error { return tx.Set(indexEntryKey(c.ID, ix, k.enc, encID), encID) })
	}
	cur, err := e.Find("test", "ik", FindOptions{Filter: ext(t, `{"a": {"$gte": 3}}`), Projection: ext(t, `{"k": {"$meta": "indexKey"}}`)})
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	got, err := cur.Next()
	if err != nil || got == nil {
		t.Fatal(got, err)
	}
	if want := ext(t, `{"a": 3, "b": "x"}`); got.Lookup("k").String() != want.String() {
		t.Errorf("got %s, want k %s", got, want)
	}
}
