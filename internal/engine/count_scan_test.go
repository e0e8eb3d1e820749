package engine

import (
	"math"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestCountScan checks that a count whose filter the keys of an index
// decide counts keys without fetching a document (explain: COUNT over
// COUNT_SCAN for one interval, over IXSCAN for several), a negation ($ne,
// $nin, $not of a comparison) on a field without arrays among them, by
// its complement; that other counts fetch, and that both count what a
// collection scan counts.
// https://www.mongodb.com/docs/manual/reference/explain-results/
func TestCountScan(t *testing.T) {
	e := newTestEngine(t)
	mustCreateIndex(t, e, "n", `{"a": 1, "b": -1}`, false)
	var docs []bson.Raw
	for i := range 200 {
		d := bson.D{{Key: "_id", Value: int32(i)}, {Key: "a", Value: int32(i % 10)}, {Key: "b", Value: float64(i % 7)}}
		switch {
		case i%9 == 0:
			d = bson.D{{Key: "_id", Value: int32(i)}, {Key: "b", Value: "s"}}
		case i%50 == 1:
			// NaN sorts below -inf in the index but is less than nothing.
			d[1].Value, d[2].Value = math.NaN(), math.NaN()
		}
		docs = append(docs, bsonDoc(d))
	}
	if _, _, err := e.Insert("test", "n", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		filter, hint string
		stage        string // under COUNT
		docsExamined bool
	}{
		{`{"a": 3}`, ``, "COUNT_SCAN", false},
		{`{"a": 3, "b": {"$gte": 2}}`, ``, "COUNT_SCAN", false},
		{`{"a": {"$gt": 2, "$lte": 6}}`, ``, "COUNT_SCAN", false},
		{`{"a": {"$lt": 4}}`, ``, "COUNT_SCAN", false},
		{`{"a": 3, "b": {"$lte": 4}}`, ``, "COUNT_SCAN", false},
		{`{"a": {"$in": [1, 4, 8]}}`, ``, "IXSCAN", false},
		{`{"b": {"$lt": 3}}`, `"a_1_b_-1"`, "IXSCAN", false},
		// null, undefined or missing: [undefined] and [null] decide it on an
		// index that is not multikey (cover_null_queries.js).
		{`{"a": null}`, ``, "IXSCAN", false},
		{`{"a": {"$ne": 3}}`, ``, "IXSCAN", false},
		{`{"a": {"$nin": [1, null]}}`, ``, "IXSCAN", false},
		{`{"a": {"$not": {"$gt": 4}}, "b": {"$ne": 2}}`, ``, "IXSCAN", false},
		{`{"a": {"$not": {"$lt": false}}}`, ``, "COUNT_SCAN", false},
		{`{"a": {"$not": {"$lt": {"$numberDouble": "NaN"}}}}`, ``, "FETCH", true},
		{`{"a": 3, "_id": {"$lt": 50}}`, ``, "FETCH", true},
		{`{"b": 2}`, ``, "COLLSCAN", true},
	}
	for _, tc := range tests {
		t.Run(tc.filter, func(t *testing.T) {
			o := FindOptions{Filter: ext(t, tc.filter)}
			if tc.hint != "" {
				o.Hint = ext(t, `{"h": `+tc.hint+`}`).Lookup("h")
			}
			want, err := e.Count("test", "n", FindOptions{Filter: o.Filter, Hint: ext(t, `{"h": {"$natural": 1}}`).Lookup("h")})
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.Count("test", "n", o)
			if err != nil || got != want {
				t.Fatalf("count %d (%v), collection scan counts %d", got, err, want)
			}
			out, err := e.ExplainCount("test", "n", o, ExecutionStats)
			if err != nil {
				t.Fatal(err)
			}
			doc := bson.Raw(bsonDoc(out))
			win := doc.Lookup("queryPlanner", "winningPlan").Document()
			if win.Lookup("stage").StringValue() != "COUNT" || win.Lookup("inputStage", "stage").StringValue() != tc.stage {
				t.Fatalf("winning plan %s, want COUNT over %s", win, tc.stage)
			}
			stats := doc.Lookup("executionStats").Document()
			if n := stats.Lookup("executionStages", "nCounted").AsInt64(); n != want {
				t.Errorf("nCounted %d, want %d", n, want)
			}
			if docs := stats.Lookup("totalDocsExamined").AsInt64(); (docs > 0) != tc.docsExamined {
				t.Errorf("totalDocsExamined %d", docs)
			}
		})
	}
}

// TestCountedFind checks a find whose documents no one reads
// (FindOptions.Counted, a pipeline's $count after its $match): when the
// keys decide the filter it yields one empty document per match without
// fetching, and its explain is the count's input alone (COUNT_SCAN or
// IXSCAN, no COUNT stage), as MongoDB plans such a pipeline under
// IS_COUNT; other filters are read as a find reads them.
func TestCountedFind(t *testing.T) {
	e := newTestEngine(t)
	mustCreateIndex(t, e, "n", `{"a": 1, "b": -1}`, false)
	var docs []bson.Raw
	for i := range 100 {
		docs = append(docs, bsonDoc(bson.D{{Key: "_id", Value: int32(i)}, {Key: "a", Value: int32(i % 10)}, {Key: "b", Value: float64(i % 7)}}))
	}
	if _, _, err := e.Insert("test", "n", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		filter string
		want   int
		stage  string
		empty  bool // the documents are {}
	}{
		{`{"a": 3}`, 10, "COUNT_SCAN", true},
		{`{"a": {"$gt": 2, "$lte": 6}}`, 40, "COUNT_SCAN", true},
		{`{"a": {"$in": [1, 4, 8]}}`, 30, "IXSCAN", true},
		{`{"a": 3, "_id": {"$lt": 50}}`, 5, "FETCH", false},
		{`{"b": 2}`, 14, "COLLSCAN", false},
	} {
		o := FindOptions{Filter: ext(t, tc.filter), Counted: true}
		cur, err := e.Find("test", "n", o)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for {
			doc, err := cur.Next()
			if err != nil {
				t.Fatal(err)
			}
			if doc == nil {
				break
			}
			n++
			if (len(doc) == 5) != tc.empty {
				t.Errorf("%s: document %s", tc.filter, doc)
			}
		}
		cur.Close()
		if n != tc.want {
			t.Errorf("%s: %d documents, want %d", tc.filter, n, tc.want)
		}
		out, err := e.Explain("test", "n", o, ExecutionStats)
		if err != nil {
			t.Fatal(err)
		}
		doc := bson.Raw(bsonDoc(out))
		if stage := doc.Lookup("queryPlanner", "winningPlan", "stage").StringValue(); stage != tc.stage {
			t.Errorf("%s: winning plan %s, want %s", tc.filter, doc.Lookup("queryPlanner", "winningPlan"), tc.stage)
		}
		stats := doc.Lookup("executionStats").Document()
		if got := stats.Lookup("nReturned").AsInt64(); got != int64(tc.want) {
			t.Errorf("%s: nReturned %d, want %d", tc.filter, got, tc.want)
		}
		if docs := stats.Lookup("totalDocsExamined").AsInt64(); (docs == 0) != tc.empty {
			t.Errorf("%s: totalDocsExamined %d", tc.filter, docs)
		}
	}
}

// TestCountScanMultikey checks that a count whose filter the keys of a
// multikey index decide counts each document once however many of its
// keys lie in the bounds (MongoDB's COUNT_SCAN drops the record ids it has
// seen on a multikey index), with skip and limit too, and that a filter
// the keys do not decide there (two ranges on one field) is fetched.
func TestCountScanMultikey(t *testing.T) {
	e := newTestEngine(t)
	mustCreateIndex(t, e, "m", `{"a": 1}`, false)
	var docs []bson.Raw
	for i := range 60 {
		// each document keyed by up to three values, 0..9
		d := bson.D{{Key: "_id", Value: int32(i)}, {Key: "a", Value: bson.A{int32(i % 10), int32((i + 3) % 10), int32(i % 10)}}}
		if i%7 == 0 {
			d[1].Value = int32(i % 10)
		}
		docs = append(docs, bsonDoc(d))
	}
	if _, _, err := e.Insert("test", "m", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		filter      string
		skip, limit int64
		stage       string // under COUNT
	}{
		{`{"a": {"$gte": 2}}`, 0, 0, "COUNT_SCAN"},
		{`{"a": {"$lt": 5}}`, 3, 20, "COUNT_SCAN"},
		{`{"a": 4}`, 0, 0, "COUNT_SCAN"},
		{`{"a": {"$in": [1, 4, 5]}}`, 0, 10, "IXSCAN"},
		{`{"a": {"$gt": 2, "$lt": 6}}`, 0, 0, "FETCH"},
	}
	for _, tc := range tests {
		t.Run(tc.filter, func(t *testing.T) {
			o := FindOptions{Filter: ext(t, tc.filter), Skip: tc.skip, Limit: tc.limit}
			natural := o
			natural.Hint = ext(t, `{"h": {"$natural": 1}}`).Lookup("h")
			want, err := e.Count("test", "m", natural)
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.Count("test", "m", o)
			if err != nil || got != want {
				t.Fatalf("count %d (%v), collection scan counts %d", got, err, want)
			}
			out, err := e.ExplainCount("test", "m", o, ExecutionStats)
			if err != nil {
				t.Fatal(err)
			}
			doc := bson.Raw(bsonDoc(out))
			win := doc.Lookup("queryPlanner", "winningPlan").Document()
			if win.Lookup("inputStage", "stage").StringValue() != tc.stage {
				t.Fatalf("winning plan %s, want COUNT over %s", win, tc.stage)
			}
			if n := doc.Lookup("executionStats", "executionStages", "nCounted").AsInt64(); n != want {
				t.Errorf("nCounted %d, want %d", n, want)
			}
		})
	}
}
