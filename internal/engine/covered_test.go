package engine

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/storage"
)

// TestCoveredRead checks that a projection of index fields the filter
// decides is answered from the index entries without fetching a document
// (explain: PROJECTION_COVERED over IXSCAN, totalDocsExamined 0), with
// the stored values' types and the fields in key order, as MongoDB's
// covered projections answer; that an update changing only a value's type
// rewrites the entry; and that an entry holding the _id alone (written
// before entries kept the key's values) still answers, by a fetch.
// https://www.mongodb.com/docs/manual/core/query-optimization/#covered-query
func TestCoveredRead(t *testing.T) {
	e := newTestEngine(t)
	mustCreateIndex(t, e, "cv", `{"a": 1, "b": 1}`, false)
	docs := []bson.Raw{
		ext(t, `{"_id": 1, "b": "x", "a": {"$numberInt": "1"}, "c": 1}`),
		ext(t, `{"_id": 2, "b": "y", "a": {"$numberLong": "2"}}`),
		ext(t, `{"_id": 3, "b": "z", "a": {"$numberDouble": "3.5"}}`),
		ext(t, `{"_id": 4, "b": "w", "a": {"$numberDecimal": "4"}}`),
		ext(t, `{"_id": 5, "b": 7, "a": 5}`),
	}
	if _, _, err := e.Insert("test", "cv", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	o := FindOptions{Filter: ext(t, `{"a": {"$gte": 1}, "b": {"$gt": "a"}}`), Projection: ext(t, `{"b": 1, "a": 1, "_id": 0}`)}
	read := func(wantDocs int64, want ...string) {
		t.Helper()
		out, err := e.Explain("test", "cv", o, ExecutionStats)
		if err != nil {
			t.Fatal(err)
		}
		doc := bson.Raw(bsonDoc(out))
		win := doc.Lookup("queryPlanner", "winningPlan").Document()
		if win.Lookup("stage").StringValue() != "PROJECTION_COVERED" || win.Lookup("inputStage", "stage").StringValue() != "IXSCAN" {
			t.Fatalf("winning plan %s, want PROJECTION_COVERED over IXSCAN", win)
		}
		if n := doc.Lookup("executionStats", "totalDocsExamined").AsInt64(); n != wantDocs {
			t.Errorf("totalDocsExamined %d, want %d", n, wantDocs)
		}
		cur, err := e.Find("test", "cv", o)
		if err != nil {
			t.Fatal(err)
		}
		defer cur.Close()
		for i := 0; ; i++ {
			d, err := cur.Next()
			if err != nil {
				t.Fatal(err)
			}
			if d == nil {
				if i != len(want) {
					t.Errorf("%d results, want %d", i, len(want))
				}
				return
			}
			if i >= len(want) || d.String() != ext(t, want[i]).String() {
				t.Errorf("result %d: %s, want %s", i, d, want[min(i, len(want)-1)])
			}
		}
	}
	read(0,
		`{"a": {"$numberInt": "1"}, "b": "x"}`,
		`{"a": {"$numberLong": "2"}, "b": "y"}`,
		`{"a": {"$numberDouble": "3.5"}, "b": "z"}`,
		`{"a": {"$numberDecimal": "4"}, "b": "w"}`)

	// 1 becomes 1.0: the key's encoding stays, its entry is rewritten.
	if _, err := e.Update("test", "cv", UpdateSpec{Filter: ext(t, `{"_id": 1}`), Update: ext(t, `{"$set": {"a": 1.0}}`)}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"a": {"$numberDouble": "1.0"}, "b": "x"}`,
		`{"a": {"$numberLong": "2"}, "b": "y"}`,
		`{"a": {"$numberDouble": "3.5"}, "b": "z"}`,
		`{"a": {"$numberDecimal": "4"}, "b": "w"}`,
	}
	read(0, want...)

	// Document 2's entry loses its values, as an older Folio wrote it.
	c := e.Collection("test", "cv")
	ix := c.FindIndex("a_1_b_1")
	keys, _, err := ix.keys(docs[1])
	if err != nil || len(keys) != 1 {
		t.Fatal(keys, err)
	}
	encID := docKey(c.ID, docs[1].Lookup("_id"))[5:]
	rawWrite(t, e, func(tx storage.Txn) error { return tx.Set(indexEntryKey(c.ID, ix, keys[0].enc, encID), encID) })
	read(1, want...)
}
