package driver_test

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestExplainIndexUnionCountScanCovered checks three plan shapes through
// the driver: a $or whose clauses each have an index reads their union
// (FETCH over OR over one IXSCAN per clause); a count whose filter an
// index decides counts keys without fetching (COUNT over COUNT_SCAN,
// totalDocsExamined 0); a projection of indexed fields the filter bounds,
// _id excluded, reads the keys alone (PROJECTION_COVERED over IXSCAN); a
// distinct on an index's first field reads one key per value
// (PROJECTION_COVERED over DISTINCT_SCAN).
// https://www.mongodb.com/docs/manual/reference/operator/query/or/#-or-clauses-and-indexes
// https://www.mongodb.com/docs/manual/reference/explain-results/
// https://www.mongodb.com/docs/manual/core/query-optimization/#covered-query
func TestExplainIndexUnionCountScanCovered(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	coll := db.Collection("stages")
	docs := make([]any, 300)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i % 30}, {Key: "b", Value: i % 7}}
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateMany(ctx, []mongo.IndexModel{{Keys: bson.D{{Key: "a", Value: 1}}}, {Keys: bson.D{{Key: "b", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	explain := func(cmd bson.D) bson.Raw {
		t.Helper()
		out, err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: cmd}, {Key: "verbosity", Value: "executionStats"}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		return out
	}

	// a = 4: 10 documents; b = 5: 43; both: 1 (i = 124).
	or := bson.D{{Key: "$or", Value: bson.A{bson.D{{Key: "a", Value: 4}}, bson.D{{Key: "b", Value: 5}}}}}
	out := explain(bson.D{{Key: "find", Value: "stages"}, {Key: "filter", Value: or}})
	win := out.Lookup("queryPlanner", "winningPlan").Document()
	if win.Lookup("stage").StringValue() != "FETCH" || win.Lookup("inputStage", "stage").StringValue() != "OR" {
		t.Fatalf("winning plan %s, want FETCH over OR", win)
	}
	scans, _ := win.Lookup("inputStage", "inputStages").Array().Values()
	if len(scans) != 2 || scans[0].Document().Lookup("indexName").StringValue() != "a_1" || scans[1].Document().Lookup("indexName").StringValue() != "b_1" {
		t.Errorf("OR inputStages %v", scans)
	}
	stats := out.Lookup("executionStats").Document()
	if n, docs := stats.Lookup("nReturned").AsInt64(), stats.Lookup("totalDocsExamined").AsInt64(); n != 52 || docs != 52 {
		t.Errorf("nReturned %d, totalDocsExamined %d, want 52 and 52", n, docs)
	}

	count := bson.D{{Key: "count", Value: "stages"}, {Key: "query", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$gte", Value: 10}, {Key: "$lt", Value: 13}}}}}}
	var counted struct{ N int64 }
	if err := db.RunCommand(ctx, count).Decode(&counted); err != nil || counted.N != 30 {
		t.Fatalf("count %d (%v), want 30", counted.N, err)
	}
	out = explain(count)
	win = out.Lookup("queryPlanner", "winningPlan").Document()
	if win.Lookup("stage").StringValue() != "COUNT" || win.Lookup("inputStage", "stage").StringValue() != "COUNT_SCAN" {
		t.Fatalf("winning plan %s, want COUNT over COUNT_SCAN", win)
	}
	bounds := win.Lookup("inputStage", "indexBounds").Document()
	if bounds.Lookup("startKey", "a").AsInt64() != 10 || !bounds.Lookup("startKeyInclusive").Boolean() ||
		bounds.Lookup("endKey", "a").AsInt64() != 13 || bounds.Lookup("endKeyInclusive").Boolean() {
		t.Errorf("COUNT_SCAN bounds %s, want [{a: 10}, {a: 13})", bounds)
	}
	stats = out.Lookup("executionStats").Document()
	if docs, keys := stats.Lookup("totalDocsExamined").AsInt64(), stats.Lookup("totalKeysExamined").AsInt64(); docs != 0 || keys != 30 {
		t.Errorf("totalDocsExamined %d, totalKeysExamined %d, want 0 and 30", docs, keys)
	}

	find := bson.D{{Key: "find", Value: "stages"}, {Key: "filter", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$in", Value: bson.A{3, 4}}}}}},
		{Key: "projection", Value: bson.D{{Key: "a", Value: 1}, {Key: "_id", Value: 0}}}}
	out = explain(find)
	win = out.Lookup("queryPlanner", "winningPlan").Document()
	if win.Lookup("stage").StringValue() != "PROJECTION_COVERED" || win.Lookup("inputStage", "stage").StringValue() != "IXSCAN" {
		t.Fatalf("winning plan %s, want PROJECTION_COVERED over IXSCAN", win)
	}
	stats = out.Lookup("executionStats").Document()
	if n, docs := stats.Lookup("nReturned").AsInt64(), stats.Lookup("totalDocsExamined").AsInt64(); n != 20 || docs != 0 {
		t.Errorf("nReturned %d, totalDocsExamined %d, want 20 and 0", n, docs)
	}
	cur, err := coll.Find(ctx, bson.D{{Key: "a", Value: bson.D{{Key: "$in", Value: bson.A{3, 4}}}}}, options.Find().SetProjection(bson.D{{Key: "a", Value: 1}, {Key: "_id", Value: 0}}))
	if err != nil {
		t.Fatal(err)
	}
	var got []bson.Raw
	if err := cur.All(ctx, &got); err != nil || len(got) != 20 {
		t.Fatalf("%d documents (%v), want 20", len(got), err)
	}
	if keys, _ := got[0].Elements(); len(keys) != 1 || got[0].Lookup("a").Type != bson.TypeInt32 || got[0].Lookup("a").Int32() != 3 {
		t.Errorf("first document %s, want {a: 3} (int)", got[0])
	}

	out = explain(bson.D{{Key: "distinct", Value: "stages"}, {Key: "key", Value: "b"}})
	win = out.Lookup("queryPlanner", "winningPlan").Document()
	if win.Lookup("stage").StringValue() != "PROJECTION_COVERED" || win.Lookup("inputStage", "stage").StringValue() != "DISTINCT_SCAN" {
		t.Fatalf("winning plan %s, want PROJECTION_COVERED over DISTINCT_SCAN", win)
	}
	stats = out.Lookup("executionStats").Document()
	if n, keys := stats.Lookup("nReturned").AsInt64(), stats.Lookup("totalKeysExamined").AsInt64(); n != 7 || keys != 7 {
		t.Errorf("nReturned %d, totalKeysExamined %d, want 7 and 7", n, keys)
	}
	var bs []int32
	if err := coll.Distinct(ctx, "b", bson.D{}).Decode(&bs); err != nil || len(bs) != 7 || bs[0] != 0 || bs[6] != 6 {
		t.Errorf("distinct b: %v (%v), want 0..6", bs, err)
	}
}
