package engine

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/values"
)

// TestDistinctScan checks that a distinct on a field of an index whose
// keys decide the filter (the first field of any such index without a
// filter) reads one entry per value of the fields up to it (explain:
// PROJECTION_COVERED over DISTINCT_SCAN), fetching only the documents of
// null keys (a missing field indexes as null), and returns what a
// collection scan's distinct returns.
// https://www.mongodb.com/docs/manual/reference/explain-results/
func TestDistinctScan(t *testing.T) {
	e := newTestEngine(t)
	mustCreateIndex(t, e, "ds", `{"a": 1}`, false)
	mustCreateIndex(t, e, "ds", `{"c": -1, "b": 1}`, false)
	mustCreateIndex(t, e, "ds", `{"t": 1}`, false)
	var docs []bson.Raw
	for i := range 300 {
		d := bson.D{{Key: "_id", Value: int32(i)}, {Key: "a", Value: int32(i % 5)}, {Key: "b", Value: int32(i % 3)}, {Key: "c", Value: float64(i % 4)}, {Key: "t", Value: bson.A{i % 2}}}
		switch i {
		case 7:
			d[1].Value = int64(2) // equal to the int 2: one value
		case 8:
			d = d[:1] // missing fields contribute nothing
		case 9:
			d[1].Value = nil
		}
		docs = append(docs, bsonDoc(d))
	}
	if _, _, err := e.Insert("test", "ds", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		key, filter string
		scan        bool
		keys        int64 // totalKeysExamined of a distinct scan
	}{
		// 0..4 once each, then every null key (two documents).
		{"a", `{}`, true, 7},
		// Per value of c, a key with b = 0 fails its check and seeks to
		// b = 1; the null key of the document missing both fails too.
		{"c", `{"b": 1}`, true, 4*2 + 1},
		{"c", `{"c": {"$gte": 2}}`, true, 2},
		{"a", `{"a": {"$type": "number"}}`, false, 0},
		// Without a filter a multikey index serves: its null key (the
		// document missing t, fetched), then 0 and 1.
		{"t", `{}`, true, 3},
		{"b", `{}`, false, 0},
		// A field after others: one key per (c, b) pair the bounds hold.
		{"b", `{"c": 1}`, true, 3},
		{"b", `{"c": {"$gte": 2}}`, true, 6},
		{"t", `{"t": 1}`, false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.key+tc.filter, func(t *testing.T) {
			o := FindOptions{Filter: ext(t, tc.filter)}
			want, err := e.Distinct("test", "ds", tc.key, FindOptions{Filter: o.Filter, Hint: ext(t, `{"h": {"$natural": 1}}`).Lookup("h")})
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.Distinct("test", "ds", tc.key, o)
			if err != nil || len(got) != len(want) {
				t.Fatalf("distinct %v (%v), collection scan %v", got, err, want)
			}
			for i := range got {
				if !values.Equal(got[i], want[i]) {
					t.Fatalf("distinct %v, collection scan %v", got, want)
				}
			}
			out, err := e.ExplainDistinct("test", "ds", tc.key, o, ExecutionStats)
			if err != nil {
				t.Fatal(err)
			}
			doc := bson.Raw(bsonDoc(out))
			win := doc.Lookup("queryPlanner", "winningPlan").Document()
			isScan := win.Lookup("stage").StringValue() == "PROJECTION_COVERED" && win.Lookup("inputStage", "stage").StringValue() == "DISTINCT_SCAN"
			if isScan != tc.scan {
				t.Fatalf("winning plan %s, distinct scan %v", win, tc.scan)
			}
			if tc.scan {
				stats := doc.Lookup("executionStats").Document()
				if n := stats.Lookup("nReturned").AsInt64(); n != int64(len(want)) {
					t.Errorf("nReturned %d, want %d", n, len(want))
				}
				if n := stats.Lookup("totalKeysExamined").AsInt64(); n != tc.keys {
					t.Errorf("totalKeysExamined %d, want %d", n, tc.keys)
				}
			}
		})
	}
}
