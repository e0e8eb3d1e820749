package engine

import (
	"slices"
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

// TestCoveredReadBlockingSort checks that a covered read keeps covering
// under a sort its scan does not give when the sort names only fields the
// results hold, as MongoDB sorts the index keys below its
// PROJECTION_COVERED (jstests/core/index/covered/
// covered_index_sort_no_fetch_optimization.js): explain shows
// PROJECTION_COVERED over SORT over IXSCAN, no document is examined, and
// the results have the fields in key order whatever the documents' order.
// A sort on a field the results lack fetches.
func TestCoveredReadBlockingSort(t *testing.T) {
	e := newTestEngine(t)
	mustCreateIndex(t, e, "cs", `{"a": 1, "b": 1}`, false)
	docs := []bson.Raw{
		ext(t, `{"_id": 1, "b": 2, "a": 1, "c": 3}`),
		ext(t, `{"_id": 2, "b": 1, "a": 2, "c": 2}`),
		ext(t, `{"_id": 3, "b": 1, "a": 3, "c": 1}`),
		ext(t, `{"_id": 4, "b": 2, "a": 4, "c": 0}`),
	}
	if _, _, err := e.Insert("test", "cs", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	filter := ext(t, `{"a": {"$gte": 1}, "b": {"$gte": 0}}`)
	tests := []struct {
		proj, sort string
		stages     []string
		docs       int64
		want       []string
	}{
		{`{"a": 1, "b": 1, "_id": 0}`, `{"b": 1, "a": -1}`, []string{"PROJECTION_COVERED", "SORT", "IXSCAN"}, 0,
			[]string{`{"a": 3, "b": 1}`, `{"a": 2, "b": 1}`, `{"a": 4, "b": 2}`, `{"a": 1, "b": 2}`}},
		{`{"b": 1, "_id": 0}`, `{"b": -1}`, []string{"PROJECTION_COVERED", "SORT", "IXSCAN"}, 0,
			[]string{`{"b": 2}`, `{"b": 2}`, `{"b": 1}`, `{"b": 1}`}},
		{`{"a": 1, "b": 1, "_id": 0}`, `{"c": 1}`, []string{"PROJECTION_SIMPLE", "SORT", "FETCH", "IXSCAN"}, 4,
			[]string{`{"b": 2, "a": 4}`, `{"b": 1, "a": 3}`, `{"b": 1, "a": 2}`, `{"b": 2, "a": 1}`}},
		{`{"a": 1, "_id": 0}`, `{"b": 1, "a": 1}`, []string{"PROJECTION_SIMPLE", "SORT", "FETCH", "IXSCAN"}, 4,
			[]string{`{"a": 2}`, `{"a": 3}`, `{"a": 1}`, `{"a": 4}`}},
	}
	for _, tt := range tests {
		o := FindOptions{Filter: filter, Projection: ext(t, tt.proj), Sort: ext(t, tt.sort)}
		out, err := e.Explain("test", "cs", o, ExecutionStats)
		if err != nil {
			t.Fatal(err)
		}
		doc := bson.Raw(bsonDoc(out))
		var stages []string
		for st := doc.Lookup("queryPlanner", "winningPlan").Document(); st != nil; {
			stages = append(stages, st.Lookup("stage").StringValue())
			in, ok := st.Lookup("inputStage").DocumentOK()
			if !ok {
				break
			}
			st = in
		}
		if !slices.Equal(stages, tt.stages) {
			t.Errorf("%s sorted by %s: stages %v, want %v", tt.proj, tt.sort, stages, tt.stages)
		}
		if n := doc.Lookup("executionStats", "totalDocsExamined").AsInt64(); n != tt.docs {
			t.Errorf("%s sorted by %s: totalDocsExamined %d, want %d", tt.proj, tt.sort, n, tt.docs)
		}
		var got, want []string
		for _, d := range findDocs(t, e, "cs", o) {
			got = append(got, d.String())
		}
		for _, w := range tt.want {
			want = append(want, ext(t, w).String())
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s sorted by %s: %v, want %v", tt.proj, tt.sort, got, want)
		}
	}
}

// TestCoveredReadUnbounded checks that a covered read answers with index
// fields the filter leaves unbounded, a document lacking one answering
// null, its key, as MongoDB's PROJECTION_COVERED does
// (jstests/core/index/covered/covered_index_sort_1.js covers
// find({}, {foo: 1, _id: 0}).hint({foo: 1}) over documents without foo);
// a hashed field, whose keys are no values, still fetches.
func TestCoveredReadUnbounded(t *testing.T) {
	e := newTestEngine(t)
	docs := []bson.Raw{
		ext(t, `{"_id": 1, "foo": 1, "a": 1}`),
		ext(t, `{"_id": 2, "bar": 2, "a": 1}`),
		ext(t, `{"_id": 3, "foo": null, "a": 1}`),
		ext(t, `{"_id": 4, "a": 1, "foo": {"x": 1}}`),
	}
	if _, _, err := e.Insert("test", "ub", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		key, filter string
		top         string
		docs        int64
		want        []string
	}{
		{`{"foo": 1}`, `{}`, "PROJECTION_COVERED", 0, []string{`{"foo": null}`, `{"foo": null}`, `{"foo": 1}`, `{"foo": {"x": 1}}`}},
		{`{"a": 1, "foo": 1}`, `{"a": 1}`, "PROJECTION_COVERED", 0, []string{`{"foo": null}`, `{"foo": null}`, `{"foo": 1}`, `{"foo": {"x": 1}}`}},
		{`{"a": 1, "foo": "hashed"}`, `{"a": 1}`, "PROJECTION_SIMPLE", 4, []string{`{"foo": 1}`, `{}`, `{"foo": null}`, `{"foo": {"x": 1}}`}},
	} {
		if _, err := e.CreateIndexes("test", "ub", []IndexSpec{{Key: ext(t, tt.key), ExpireAfter: -1}}, nil); err != nil {
			t.Fatal(err)
		}
		o := FindOptions{Filter: ext(t, tt.filter), Projection: ext(t, `{"foo": 1, "_id": 0}`), Hint: ext(t, `{"h": `+tt.key+`}`).Lookup("h")}
		out, err := e.Explain("test", "ub", o, ExecutionStats)
		if err != nil {
			t.Fatal(err)
		}
		doc := bson.Raw(bsonDoc(out))
		if top := doc.Lookup("queryPlanner", "winningPlan", "stage").StringValue(); top != tt.top {
			t.Errorf("%s: top stage %s, want %s", tt.key, top, tt.top)
		}
		if n := doc.Lookup("executionStats", "totalDocsExamined").AsInt64(); n != tt.docs {
			t.Errorf("%s: totalDocsExamined %d, want %d", tt.key, n, tt.docs)
		}
		var got, want []string
		for _, d := range findDocs(t, e, "ub", o) {
			got = append(got, d.String())
		}
		for _, w := range tt.want {
			want = append(want, ext(t, w).String())
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", tt.key, got, want)
		}
	}
}
