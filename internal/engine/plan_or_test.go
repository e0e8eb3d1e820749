package engine

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// TestIndexUnion checks that a $or whose branches indexes bound reads the
// union of their scans (explain: FETCH over OR over one IXSCAN per
// branch), fetching each document once even when several branches hold
// it, and that dropping any of the indexes kills its cursor.
// https://www.mongodb.com/docs/manual/reference/operator/query/or/#-or-clauses-and-indexes
func TestIndexUnion(t *testing.T) {
	e := newTestEngine(t)
	mustCreateIndex(t, e, "u", `{"a": 1}`, false)
	mustCreateIndex(t, e, "u", `{"b": 1}`, false)
	var docs []bson.Raw
	for i := range 140 {
		docs = append(docs, bsonDoc(bson.D{{Key: "_id", Value: int32(i)}, {Key: "a", Value: int32(i % 10)}, {Key: "b", Value: int32(i % 7)}}))
	}
	if _, _, err := e.Insert("test", "u", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	// a = 1: 14 documents, b = 2: 20, both (i = 51, 121): 2.
	o := FindOptions{Filter: ext(t, `{"$or": [{"a": 1}, {"b": 2}]}`)}
	out, err := e.Explain("test", "u", o, ExecutionStats)
	if err != nil {
		t.Fatal(err)
	}
	doc := bson.Raw(bsonDoc(out))
	win := doc.Lookup("queryPlanner", "winningPlan").Document()
	or := findStage(win, "OR")
	if win.Lookup("stage").StringValue() != "FETCH" || or == nil {
		t.Fatalf("winning plan %s, want FETCH over OR", win)
	}
	scans, _ := or.Lookup("inputStages").Array().Values()
	if len(scans) != 2 || scans[0].Document().Lookup("indexName").StringValue() != "a_1" || scans[1].Document().Lookup("indexName").StringValue() != "b_1" {
		t.Errorf("OR inputStages %v, want IXSCANs of a_1 and b_1", scans)
	}
	stats := doc.Lookup("executionStats").Document()
	for _, c := range []struct {
		field string
		want  int64
	}{{"nReturned", 32}, {"totalKeysExamined", 34}, {"totalDocsExamined", 32}} {
		if got := stats.Lookup(c.field).AsInt64(); got != c.want {
			t.Errorf("%s %d, want %d", c.field, got, c.want)
		}
	}
	want := findIDsIn(t, e, "u", o, `{"$natural": 1}`)
	if got := findIDsIn(t, e, "u", o, ""); len(got) != len(want) || len(got) != 32 {
		t.Errorf("union returned %d documents, collection scan %d", len(got), len(want))
	}

	cur, err := e.Find("test", "u", FindOptions{Filter: o.Filter})
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	if _, err := e.DropIndexes("test", "u", []string{"b_1"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := cur.(*scanCursor).Restore(); !mongoerr.Is(err, mongoerr.QueryPlanKilled) {
		t.Errorf("restore after dropping b_1: %v, want QueryPlanKilled", err)
	}
}
