package driver_test

import (
	"context"
	"slices"
	"strings"
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
	// The 30 keys, and the read that finds none past them (count_scan.cpp).
	if docs, keys := stats.Lookup("totalDocsExamined").AsInt64(), stats.Lookup("totalKeysExamined").AsInt64(); docs != 0 || keys != 31 {
		t.Errorf("totalDocsExamined %d, totalKeysExamined %d, want 0 and 31", docs, keys)
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

// TestCoveredBlockingSort: a covered find whose sort the index scan does
// not give sorts the keys and stays covered (PROJECTION_COVERED over SORT
// over IXSCAN, no document examined), answering with the fields in the
// index's order rather than the documents' ({b, a} stored, {a, b}
// returned), as MongoDB does in
// jstests/core/index/covered/covered_index_sort_no_fetch_optimization.js.
func TestCoveredBlockingSort(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	coll := db.Collection("covsort")
	docs := []any{
		bson.D{{Key: "b", Value: 2}, {Key: "a", Value: 1}},
		bson.D{{Key: "b", Value: 1}, {Key: "a", Value: 2}},
		bson.D{{Key: "b", Value: 1}, {Key: "a", Value: 3}},
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	filter := bson.D{{Key: "a", Value: bson.D{{Key: "$gt", Value: 0}}}, {Key: "b", Value: bson.D{{Key: "$gt", Value: 0}}}}
	proj := bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 1}, {Key: "_id", Value: 0}}
	sort := bson.D{{Key: "b", Value: 1}, {Key: "a", Value: -1}}
	find := bson.D{{Key: "find", Value: "covsort"}, {Key: "filter", Value: filter}, {Key: "projection", Value: proj}, {Key: "sort", Value: sort}}
	out, err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: find}, {Key: "verbosity", Value: "executionStats"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	win := out.Lookup("queryPlanner", "winningPlan").Document()
	if win.Lookup("stage").StringValue() != "PROJECTION_COVERED" || win.Lookup("inputStage", "stage").StringValue() != "SORT" ||
		win.Lookup("inputStage", "inputStage", "stage").StringValue() != "IXSCAN" {
		t.Errorf("winning plan %s, want PROJECTION_COVERED over SORT over IXSCAN", win)
	}
	if n := out.Lookup("executionStats", "totalDocsExamined").AsInt64(); n != 0 {
		t.Errorf("totalDocsExamined %d, want 0", n)
	}
	cur, err := coll.Find(ctx, filter, options.Find().SetProjection(proj).SetSort(sort))
	if err != nil {
		t.Fatal(err)
	}
	var got []bson.D
	if err := cur.All(ctx, &got); err != nil {
		t.Fatal(err)
	}
	want := []bson.D{
		{{Key: "a", Value: int32(3)}, {Key: "b", Value: int32(1)}},
		{{Key: "a", Value: int32(2)}, {Key: "b", Value: int32(1)}},
		{{Key: "a", Value: int32(1)}, {Key: "b", Value: int32(2)}},
	}
	if !slices.EqualFunc(got, want, func(g, w bson.D) bool { return slices.Equal(g, w) }) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestCoveredUnboundedField: a covered find answers with an index field
// its filter does not bound, a document lacking the field answering null
// (its key), as MongoDB does in
// jstests/core/index/covered/covered_index_sort_1.js
// (find({}, {foo: 1, _id: 0}).sort({foo: 1}).hint({foo: 1}) is
// PROJECTION_COVERED over IXSCAN, no document examined).
func TestCoveredUnboundedField(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	coll := db.Collection("covunbounded")
	if _, err := coll.InsertMany(ctx, []any{bson.D{{Key: "foo", Value: 1}}, bson.D{{Key: "bar", Value: 2}}, bson.D{{Key: "foo", Value: nil}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "foo", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	proj := bson.D{{Key: "foo", Value: 1}, {Key: "_id", Value: 0}}
	hint := bson.D{{Key: "foo", Value: 1}}
	find := bson.D{{Key: "find", Value: "covunbounded"}, {Key: "filter", Value: bson.D{}}, {Key: "projection", Value: proj},
		{Key: "sort", Value: hint}, {Key: "hint", Value: hint}}
	out, err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: find}, {Key: "verbosity", Value: "executionStats"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if stage := out.Lookup("queryPlanner", "winningPlan", "stage").StringValue(); stage != "PROJECTION_COVERED" {
		t.Errorf("winning plan %s, want PROJECTION_COVERED", out.Lookup("queryPlanner", "winningPlan"))
	}
	if n := out.Lookup("executionStats", "totalDocsExamined").AsInt64(); n != 0 {
		t.Errorf("totalDocsExamined %d, want 0", n)
	}
	cur, err := coll.Find(ctx, bson.D{}, options.Find().SetProjection(proj).SetSort(hint).SetHint(hint))
	if err != nil {
		t.Fatal(err)
	}
	var got []bson.D
	if err := cur.All(ctx, &got); err != nil {
		t.Fatal(err)
	}
	want := []bson.D{{{Key: "foo", Value: nil}}, {{Key: "foo", Value: nil}}, {{Key: "foo", Value: int32(1)}}}
	if !slices.EqualFunc(got, want, func(g, w bson.D) bool { return slices.Equal(g, w) }) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestExplainSortByID: with no filter a find is a COLLSCAN, which shows
// no filter; sorted by _id (here backward) or hinted to the _id index it
// reads the whole _id index, its bounds shown in the scan's order, as
// MongoDB's planner does for a non-clustered collection.
func TestExplainSortByID(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	if _, err := db.Collection("byid").InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 2}}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		find bson.D
		want string
	}{
		{bson.D{{Key: "find", Value: "byid"}},
			`{"stage": "COLLSCAN","direction": "forward"}`},
		{bson.D{{Key: "find", Value: "byid"}, {Key: "sort", Value: bson.D{{Key: "_id", Value: -1}}}},
			`{"stage": "FETCH","inputStage": {"stage": "IXSCAN","keyPattern": {"_id": {"$numberInt":"1"}},"indexName": "_id_","isMultiKey": false,"multiKeyPaths": {"_id": []},"isUnique": true,"isSparse": false,"isPartial": false,"indexVersion": {"$numberInt":"2"},"direction": "backward","indexBounds": {"_id": ["[MaxKey, MinKey]"]}}}`},
		{bson.D{{Key: "find", Value: "byid"}, {Key: "filter", Value: bson.D{{Key: "x", Value: bson.D{{Key: "$eq", Value: 1}}}}}, {Key: "hint", Value: "_id_"}},
			`{"stage": "FETCH","filter": {"x": {"$eq": {"$numberInt":"1"}}},"inputStage": {"stage": "IXSCAN","keyPattern": {"_id": {"$numberInt":"1"}},"indexName": "_id_","isMultiKey": false,"multiKeyPaths": {"_id": []},"isUnique": true,"isSparse": false,"isPartial": false,"indexVersion": {"$numberInt":"2"},"direction": "forward","indexBounds": {"_id": ["[MinKey, MaxKey]"]}}}`},
	} {
		out, err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: tc.find}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		if got := out.Lookup("queryPlanner", "winningPlan").Document().String(); got != tc.want {
			t.Errorf("%v: winning plan\n%s\nwant\n%s", tc.find, got, tc.want)
		}
	}
}

// TestExplainWrites: an update or a delete of one statement is explained
// as an UPDATE or DELETE stage over the plan that finds its documents;
// with executionStats the plan runs and the counts say what the write
// would do (nMatched, nWouldModify, nWouldUpsert; nWouldDelete), while
// nothing is written. A batch of two statements fails with InvalidLength.
// https://www.mongodb.com/docs/v7.0/reference/command/explain/
func TestExplainWrites(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	coll := db.Collection("explainw")
	if _, err := coll.InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}}, bson.D{{Key: "_id", Value: 2}, {Key: "a", Value: 2}},
		bson.D{{Key: "_id", Value: 3}, {Key: "a", Value: 2}, {Key: "b", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	explain := func(verbosity string, cmd bson.D) bson.Raw {
		t.Helper()
		out, err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: cmd}, {Key: "verbosity", Value: verbosity}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	update := func(q, u bson.D, multi, upsert bool) bson.D {
		return bson.D{{Key: "update", Value: "explainw"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: q}, {Key: "u", Value: u}, {Key: "multi", Value: multi}, {Key: "upsert", Value: upsert}}}}}
	}
	remove := func(q bson.D, limit int) bson.D {
		return bson.D{{Key: "delete", Value: "explainw"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: q}, {Key: "limit", Value: limit}}}}}
	}
	set := func(k string, v any) bson.D { return bson.D{{Key: "$set", Value: bson.D{{Key: k, Value: v}}}} }
	a2 := bson.D{{Key: "a", Value: 2}}
	// findAndModify takes the first match in sort order: _id 3 already
	// has b: 1, _id 2 does not.
	fam := func(q bson.D, dir int, u bson.D, upsert bool) bson.D {
		cmd := bson.D{{Key: "findAndModify", Value: "explainw"}, {Key: "query", Value: q}, {Key: "sort", Value: bson.D{{Key: "_id", Value: dir}}}}
		if u == nil {
			return append(cmd, bson.E{Key: "remove", Value: true})
		}
		return append(cmd, bson.E{Key: "update", Value: u}, bson.E{Key: "upsert", Value: upsert})
	}

	out := explain("queryPlanner", update(a2, set("b", 1), true, false))
	win := out.Lookup("queryPlanner", "winningPlan").Document()
	if win.Lookup("stage").StringValue() != "UPDATE" || win.Lookup("inputStage", "inputStage", "indexName").StringValue() != "a_1" {
		t.Fatalf("winning plan %s, want UPDATE over FETCH over the a_1 IXSCAN", win)
	}
	if out.Lookup("executionStats").Type != 0 {
		t.Errorf("queryPlanner verbosity ran the plan: %s", out)
	}
	win = explain("queryPlanner", bson.D{{Key: "findAndModify", Value: "explainw"}, {Key: "query", Value: bson.D{{Key: "b", Value: 1}}},
		{Key: "sort", Value: bson.D{{Key: "c", Value: 1}}}, {Key: "remove", Value: true}}).Lookup("queryPlanner", "winningPlan").Document()
	if win.Lookup("stage").StringValue() != "DELETE" || win.Lookup("inputStage", "stage").StringValue() != "SORT" ||
		win.Lookup("inputStage", "limitAmount").AsInt64() != 1 || win.Lookup("inputStage", "inputStage", "stage").StringValue() != "COLLSCAN" {
		t.Fatalf("sorted findAndModify: winning plan %s, want DELETE over a SORT of limit 1 over COLLSCAN", win)
	}
	// A hint keeps MongoDB from IDHACK, even a hint of the _id index
	// (isIdHackEligibleQuery; jstests find_and_modify_hint.js).
	for _, hint := range []any{bson.D{{Key: "_id", Value: 1}}, "_id_"} {
		win = explain("queryPlanner", bson.D{{Key: "findAndModify", Value: "explainw"}, {Key: "query", Value: bson.D{{Key: "_id", Value: 1}}},
			{Key: "update", Value: bson.D{}}, {Key: "hint", Value: hint}}).Lookup("queryPlanner", "winningPlan").Document()
		if win.Lookup("inputStage", "stage").StringValue() != "FETCH" || win.Lookup("inputStage", "inputStage", "indexName").StringValue() != "_id_" {
			t.Fatalf("findAndModify hinting %v: winning plan %s, want UPDATE over FETCH over the _id_ IXSCAN", hint, win)
		}
	}
	for _, c := range []struct {
		cmd      bson.D
		stage    string
		counts   bson.D
		returned int32 // nReturned: the document findAndModify's stage returns
	}{
		{update(a2, set("b", 1), true, false), "UPDATE", bson.D{{Key: "nMatched", Value: int64(2)}, {Key: "nWouldModify", Value: int64(1)}, {Key: "nWouldUpsert", Value: int64(0)}}, 0},
		{update(a2, set("b", 1), false, false), "UPDATE", bson.D{{Key: "nMatched", Value: int64(1)}, {Key: "nWouldModify", Value: int64(1)}, {Key: "nWouldUpsert", Value: int64(0)}}, 0},
		{update(bson.D{{Key: "a", Value: 9}}, set("b", 1), false, true), "UPDATE", bson.D{{Key: "nMatched", Value: int64(0)}, {Key: "nWouldModify", Value: int64(0)}, {Key: "nWouldUpsert", Value: int64(1)}}, 0},
		{remove(a2, 0), "DELETE", bson.D{{Key: "nWouldDelete", Value: int64(2)}}, 0},
		{remove(bson.D{}, 1), "DELETE", bson.D{{Key: "nWouldDelete", Value: int64(1)}}, 0},
		{fam(a2, -1, set("b", 1), false), "UPDATE", bson.D{{Key: "nMatched", Value: int64(1)}, {Key: "nWouldModify", Value: int64(0)}, {Key: "nWouldUpsert", Value: int64(0)}}, 1},
		{fam(a2, 1, set("b", 1), false), "UPDATE", bson.D{{Key: "nMatched", Value: int64(1)}, {Key: "nWouldModify", Value: int64(1)}, {Key: "nWouldUpsert", Value: int64(0)}}, 1},
		{fam(bson.D{{Key: "a", Value: 9}}, 1, set("b", 1), true), "UPDATE", bson.D{{Key: "nMatched", Value: int64(0)}, {Key: "nWouldModify", Value: int64(0)}, {Key: "nWouldUpsert", Value: int64(1)}}, 0},
		{fam(a2, 1, nil, false), "DELETE", bson.D{{Key: "nWouldDelete", Value: int64(1)}}, 1},
	} {
		stats := explain("executionStats", c.cmd).Lookup("executionStats").Document()
		if n := stats.Lookup("nReturned"); n.Type != bson.TypeInt32 || n.Int32() != c.returned {
			t.Errorf("%v: nReturned %v, want %d", c.cmd, n, c.returned)
		}
		stages := stats.Lookup("executionStages").Document()
		if stages.Lookup("stage").StringValue() != c.stage {
			t.Errorf("%v: executionStages %s", c.cmd, stages)
		}
		for _, want := range c.counts {
			if got := stages.Lookup(want.Key); got.Type != bson.TypeInt32 || int64(got.Int32()) != want.Value.(int64) {
				t.Errorf("%v: %s is %v, want %d", c.cmd, want.Key, got, want.Value)
			}
		}
	}
	n, err := coll.CountDocuments(ctx, bson.D{})
	if err != nil || n != 3 {
		t.Fatalf("after the explains %d documents (%v), want the 3 inserted", n, err)
	}
	if n, _ := coll.CountDocuments(ctx, bson.D{{Key: "b", Value: 1}}); n != 1 {
		t.Fatalf("an explained update or findAndModify wrote: %d documents have b: 1", n)
	}
	err = db.RunCommand(ctx, bson.D{{Key: "explain", Value: bson.D{{Key: "delete", Value: "explainw"},
		{Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "limit", Value: 0}}, bson.D{{Key: "q", Value: bson.D{}}, {Key: "limit", Value: 0}}}}}}}).Err()
	requireCode(t, err, 16, "InvalidLength")

	// On a missing collection the plan is an EOF stage alone, and the
	// explain creates nothing, even of an upsert
	// (explain_writecmd_nonexistent_collection.js).
	missing := func(cmd bson.D) bson.D {
		cmd[0].Value = "explainw_missing"
		return cmd
	}
	for _, cmd := range []bson.D{missing(remove(a2, 0)), missing(update(a2, set("b", 1), false, false)), missing(update(a2, set("b", 1), false, true)),
		missing(fam(a2, 1, nil, false))} {
		out := explain("executionStats", cmd)
		for _, path := range [][]string{{"queryPlanner", "winningPlan"}, {"executionStats", "executionStages"}} {
			if plan := out.Lookup(path...).Document(); plan.Lookup("stage").StringValue() != "EOF" || plan.Lookup("inputStage").Type != 0 {
				t.Errorf("%v on a missing collection: %s %s, want an EOF stage alone", cmd, path[1], plan)
			}
		}
	}
	if names, err := db.ListCollectionNames(ctx, bson.D{{Key: "name", Value: "explainw_missing"}}); err != nil || len(names) != 0 {
		t.Fatalf("explains created the missing collection: %v (%v)", names, err)
	}

	// The command's default verbosity is allPlansExecution: it runs the
	// plan, and its counts are ints while they fit, as MongoDB appends them.
	out, err = db.RunCommand(ctx, bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "explainw"}}}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if n := out.Lookup("executionStats", "nReturned"); n.Type != bson.TypeInt32 || n.Int32() != 3 {
		t.Fatalf("explain without verbosity: executionStats.nReturned %v, want int 3", n)
	}
}

// TestExplainCountOfMissingCollection: a count of a missing collection is
// explained as a COUNT stage over an EOF stage, counting nothing, whatever
// its query, skip and limit (getExecutorCount; explain_count.js).
func TestExplainCountOfMissingCollection(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database(testDB)
	for _, cmd := range []bson.D{
		{{Key: "count", Value: "count_missing"}},
		{{Key: "count", Value: "count_missing"}, {Key: "skip", Value: 3}},
		{{Key: "count", Value: "count_missing"}, {Key: "query", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "limit", Value: -3}, {Key: "skip", Value: 4}},
	} {
		out, err := db.RunCommand(t.Context(), bson.D{{Key: "explain", Value: cmd}, {Key: "verbosity", Value: "executionStats"}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range [][]string{{"queryPlanner", "winningPlan"}, {"executionStats", "executionStages"}} {
			plan := out.Lookup(path...).Document()
			if plan.Lookup("stage").StringValue() != "COUNT" || plan.Lookup("inputStage", "stage").StringValue() != "EOF" {
				t.Errorf("%v: %s %s, want COUNT over EOF", cmd, path[1], plan)
			}
		}
		if n, ok := out.Lookup("executionStats", "executionStages", "nCounted").AsInt64OK(); !ok || n != 0 {
			t.Errorf("%v: nCounted %v, want 0", cmd, out.Lookup("executionStats", "executionStages", "nCounted"))
		}
	}
}

// TestGroupDistinctScan checks that a $group by one indexed field and
// nothing else reads one index entry per value, as MongoDB 7.0's
// pipeline_d.cpp turns it into a DISTINCT_SCAN under a
// $groupByDistinctScan (distinct_multikey_dotted_path.js expects the
// DISTINCT_SCAN for [{$group: {_id: "$a.b.c"}}], with and without a
// $match the keys decide), with the $group's results: a missing field is
// the null group. An index holding arrays (multikey) or missing fields
// (sparse) does not serve it: $group groups an array whole and a missing
// field as null.
func TestGroupDistinctScan(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	coll := db.Collection("groupdistinct")
	docs := make([]any, 0, 104)
	for i := range 100 {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "a", Value: bson.D{{Key: "b", Value: bson.D{{Key: "c", Value: i % 4}}}}}, {Key: "t", Value: i % 3}, {Key: "s", Value: i % 2}})
	}
	docs = append(docs, bson.D{{Key: "_id", Value: 100}, {Key: "a", Value: bson.D{{Key: "notRelevant", Value: 1}}}, {Key: "t", Value: bson.A{7, 8}}},
		bson.D{{Key: "_id", Value: 101}, {Key: "a", Value: nil}})
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateMany(ctx, []mongo.IndexModel{
		{Keys: bson.D{{Key: "a.b.c", Value: 1}}}, {Keys: bson.D{{Key: "t", Value: 1}}},
		{Keys: bson.D{{Key: "s", Value: 1}}, Options: options.Index().SetSparse(true)},
	}); err != nil {
		t.Fatal(err)
	}
	gt0 := bson.D{{Key: "$match", Value: bson.D{{Key: "a.b.c", Value: bson.D{{Key: "$gt", Value: 0}}}}}}
	group := func(path string) bson.D { return bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: path}}}} }
	for _, tc := range []struct {
		pipeline bson.A
		groups   int
		distinct bool
	}{
		{bson.A{group("$a.b.c")}, 5, true}, // null, 0..3
		{bson.A{gt0, group("$a.b.c")}, 3, true},
		{bson.A{group("$t")}, 5, false}, // null, 0..2, [7, 8]
		{bson.A{group("$s")}, 3, false}, // null, 0, 1
		{bson.A{bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$a.b.c"}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}}}, 5, false},
	} {
		out, err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: bson.D{{Key: "aggregate", Value: "groupdistinct"}, {Key: "pipeline", Value: tc.pipeline}, {Key: "cursor", Value: bson.D{}}}}, {Key: "verbosity", Value: "executionStats"}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		stages, _ := out.Lookup("stages").Array().Values()
		last := stages[len(stages)-1].Document()
		win := stages[0].Document().Lookup("$cursor", "queryPlanner", "winningPlan").Document()
		stage, _ := win.Lookup("inputStage", "stage").StringValueOK()
		root, _ := last.Lookup("$groupByDistinctScan", "newRoot", "_id").StringValueOK()
		if scanned := stage == "DISTINCT_SCAN"; scanned != tc.distinct || scanned && root != "$a.b.c" {
			t.Errorf("%v: winning plan %s, last stage %s; want a DISTINCT_SCAN: %v", tc.pipeline, win, last, tc.distinct)
		}
		got := aggregateAll(t, coll, tc.pipeline)
		want := aggregateAll(t, coll, tc.pipeline, options.Aggregate().SetHint(bson.D{{Key: "$natural", Value: 1}}))
		if len(got) != tc.groups || groupIDs(got) != groupIDs(want) {
			t.Errorf("%v: groups %s, a collection scan's %s", tc.pipeline, docsString(got), docsString(want))
		}
	}
}

// groupIDs are the _ids of a $group's documents, sorted.
func groupIDs(docs []bson.Raw) string {
	keys := make([]string, len(docs))
	for i, d := range docs {
		keys[i] = d.Lookup("_id").String()
	}
	slices.Sort(keys)
	return strings.Join(keys, " ")
}

// TestCoveredMultikey checks covered reads over a multikey index
// (jstests/core/query/covered_multikey.js): a projection of fields no
// document held an array under, with a filter the keys decide, reads the
// keys alone (PROJECTION_COVERED over IXSCAN, no document examined), each
// document once however many of its keys match; a projected field under
// an array fetches, and answers the array.
func TestCoveredMultikey(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	coll := db.Collection("covered_multikey")
	if _, err := coll.InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}, {Key: "b", Value: bson.A{1, 2, 3}}, {Key: "c", Value: 3}, {Key: "d", Value: 5}},
		bson.D{{Key: "_id", Value: 2}, {Key: "a", Value: bson.A{1, 2, 3}}, {Key: "b", Value: 1}, {Key: "c", Value: 4}, {Key: "d", Value: 6}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 1}, {Key: "c", Value: -1}, {Key: "d", Value: -1}}}); err != nil {
		t.Fatal(err)
	}
	run := func(filter, projection bson.D) (stages []string, docsExamined int64, docs []bson.Raw) {
		t.Helper()
		find := bson.D{{Key: "find", Value: "covered_multikey"}, {Key: "filter", Value: filter}, {Key: "projection", Value: projection},
			{Key: "sort", Value: bson.D{{Key: "c", Value: -1}, {Key: "d", Value: -1}}}}
		out, err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: find}, {Key: "verbosity", Value: "executionStats"}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		for st := out.Lookup("queryPlanner", "winningPlan").Document(); st != nil; {
			stages = append(stages, st.Lookup("stage").StringValue())
			in, ok := st.Lookup("inputStage").DocumentOK()
			if !ok {
				break
			}
			st = in
		}
		cur, err := coll.Find(ctx, filter, options.Find().SetProjection(projection).SetSort(bson.D{{Key: "c", Value: -1}, {Key: "d", Value: -1}}))
		if err != nil {
			t.Fatal(err)
		}
		if err := cur.All(ctx, &docs); err != nil {
			t.Fatal(err)
		}
		return stages, out.Lookup("executionStats", "totalDocsExamined").AsInt64(), docs
	}

	stages, examined, docs := run(bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 1}}, bson.D{{Key: "_id", Value: 0}, {Key: "c", Value: 1}, {Key: "d", Value: 1}})
	if !slices.Equal(stages, []string{"PROJECTION_COVERED", "IXSCAN"}) || examined != 0 {
		t.Errorf("stages %v, totalDocsExamined %d, want PROJECTION_COVERED over IXSCAN and 0", stages, examined)
	}
	if len(docs) != 2 || docs[0].String() != `{"c": {"$numberInt":"4"},"d": {"$numberInt":"6"}}` || docs[1].String() != `{"c": {"$numberInt":"3"},"d": {"$numberInt":"5"}}` {
		t.Errorf("documents %v, want {c: 4, d: 6}, {c: 3, d: 5}", docs)
	}

	// b >= 1 matches three keys of document 1: it is returned once.
	stages, examined, docs = run(bson.D{{Key: "a", Value: 1}, {Key: "b", Value: bson.D{{Key: "$gte", Value: 1}}}}, bson.D{{Key: "_id", Value: 0}, {Key: "c", Value: 1}, {Key: "d", Value: 1}})
	if stages[0] != "PROJECTION_COVERED" || examined != 0 || len(docs) != 2 {
		t.Errorf("stages %v, totalDocsExamined %d, %d documents, want PROJECTION_COVERED, 0 and 2", stages, examined, len(docs))
	}

	stages, _, docs = run(bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 2}}, bson.D{{Key: "_id", Value: 0}, {Key: "b", Value: 1}})
	if !slices.Contains(stages, "FETCH") || len(docs) != 1 || docs[0].Lookup("b").Type != bson.TypeArray {
		t.Errorf("stages %v, documents %v, want a FETCH and {b: [1, 2, 3]}", stages, docs)
	}
}

// TestCoveredNullQuery checks equalities to null over an index that is not
// multikey (jstests/core/cover_null_queries.js): a projection of _id alone
// reads the keys alone (PROJECTION_COVERED over IXSCAN), as does a count;
// a projection of another index field fetches, so that a document lacking
// it answers without it, not with the null its key holds.
func TestCoveredNullQuery(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	coll := db.Collection("cover_null")
	if _, err := coll.InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}, {Key: "b", Value: 1}},
		bson.D{{Key: "_id", Value: 3}, {Key: "a", Value: nil}, {Key: "b", Value: 1}},
		bson.D{{Key: "_id", Value: 4}, {Key: "a", Value: nil}, {Key: "b", Value: nil}},
		bson.D{{Key: "_id", Value: 6}, {Key: "b", Value: 2}},
		bson.D{{Key: "_id", Value: 7}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 1}, {Key: "_id", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	null := bson.D{{Key: "a", Value: nil}}
	explain := func(cmd bson.D) (stages []string, docsExamined int64) {
		t.Helper()
		out, err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: cmd}, {Key: "verbosity", Value: "executionStats"}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		for st := out.Lookup("queryPlanner", "winningPlan").Document(); st != nil; {
			stages = append(stages, st.Lookup("stage").StringValue())
			in, ok := st.Lookup("inputStage").DocumentOK()
			if !ok {
				break
			}
			st = in
		}
		return stages, out.Lookup("executionStats", "totalDocsExamined").AsInt64()
	}
	find := func(projection bson.D) []bson.Raw {
		t.Helper()
		cur, err := coll.Find(ctx, null, options.Find().SetProjection(projection).SetSort(bson.D{{Key: "_id", Value: 1}}).SetHint(bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 1}, {Key: "_id", Value: 1}}))
		if err != nil {
			t.Fatal(err)
		}
		var docs []bson.Raw
		if err := cur.All(ctx, &docs); err != nil {
			t.Fatal(err)
		}
		return docs
	}

	id := bson.D{{Key: "_id", Value: 1}}
	stages, examined := explain(bson.D{{Key: "find", Value: "cover_null"}, {Key: "filter", Value: null}, {Key: "projection", Value: id}})
	if !slices.Equal(stages, []string{"PROJECTION_COVERED", "IXSCAN"}) || examined != 0 {
		t.Errorf("find stages %v, totalDocsExamined %d, want PROJECTION_COVERED over IXSCAN and 0", stages, examined)
	}
	if docs := find(id); len(docs) != 4 || docs[3].String() != `{"_id": {"$numberInt":"7"}}` {
		t.Errorf("find {a: null} {_id: 1}: %v, want _id 3, 4, 6, 7", docs)
	}

	idB := bson.D{{Key: "_id", Value: 1}, {Key: "b", Value: 1}}
	stages, _ = explain(bson.D{{Key: "find", Value: "cover_null"}, {Key: "filter", Value: null}, {Key: "projection", Value: idB}})
	if !slices.Contains(stages, "FETCH") {
		t.Errorf("find {_id: 1, b: 1} stages %v, want a FETCH", stages)
	}
	if docs := find(idB); len(docs) != 4 || docs[3].String() != `{"_id": {"$numberInt":"7"}}` || docs[2].Lookup("b").Int32() != 2 {
		t.Errorf("find {a: null} {_id: 1, b: 1}: %v, want {_id: 7} last, without b", docs)
	}

	count := bson.D{{Key: "count", Value: "cover_null"}, {Key: "query", Value: null}}
	var counted struct{ N int64 }
	if err := db.RunCommand(ctx, count).Decode(&counted); err != nil || counted.N != 4 {
		t.Fatalf("count %d (%v), want 4", counted.N, err)
	}
	if stages, examined = explain(count); slices.Contains(stages, "FETCH") || examined != 0 {
		t.Errorf("count stages %v, totalDocsExamined %d, want no FETCH and 0", stages, examined)
	}
}

// TestAggregateCountScan: a pipeline whose stage after the $match reads
// nothing of the documents ($count, a $group by a constant summing
// constants) counts the index keys that decide the $match without
// fetching, as MongoDB plans it under IS_COUNT (pipeline_d.cpp: "If we
// don't need any fields from the input document, performing a count is
// faster"): its $cursor shows a COUNT_SCAN (jstests/core/index/
// index_count_scan.js); a $group reading a field still fetches.
func TestAggregateCountScan(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	coll := db.Collection("aggcount")
	docs := make([]any, 300)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i % 30}}
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	match := bson.D{{Key: "$match", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$gte", Value: 10}, {Key: "$lt", Value: 13}}}}}}
	for _, tc := range []struct {
		next  bson.D
		field string
		want  int64
		stage string
	}{
		{bson.D{{Key: "$count", Value: "n"}}, "n", 30, "COUNT_SCAN"},
		{bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: nil}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}}, "n", 30, "COUNT_SCAN"},
		{bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: nil}, {Key: "n", Value: bson.D{{Key: "$sum", Value: "$a"}}}}}}, "n", 330, "FETCH"},
	} {
		pipeline := bson.A{match, tc.next}
		cur, err := coll.Aggregate(ctx, pipeline)
		if err != nil {
			t.Fatal(err)
		}
		var got []bson.Raw
		if err := cur.All(ctx, &got); err != nil || len(got) != 1 || got[0].Lookup(tc.field).AsInt64() != tc.want {
			t.Fatalf("%v: %v (%v), want %s %d", tc.next, got, err, tc.field, tc.want)
		}
		out, err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: bson.D{{Key: "aggregate", Value: "aggcount"}, {Key: "pipeline", Value: pipeline}, {Key: "cursor", Value: bson.D{}}}},
			{Key: "verbosity", Value: "executionStats"}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		cursor := out.Lookup("stages", "0", "$cursor").Document()
		if stage := cursor.Lookup("queryPlanner", "winningPlan", "stage").StringValue(); stage != tc.stage {
			t.Errorf("%v: winning plan %s, want %s", tc.next, cursor.Lookup("queryPlanner", "winningPlan"), tc.stage)
		}
		stats := cursor.Lookup("executionStats").Document()
		wantDocs := int64(0)
		if tc.stage == "FETCH" {
			wantDocs = 30
		}
		if n, docs := stats.Lookup("nReturned").AsInt64(), stats.Lookup("totalDocsExamined").AsInt64(); n != 30 || docs != wantDocs {
			t.Errorf("%v: nReturned %d, totalDocsExamined %d, want 30 and %d", tc.next, n, docs, wantDocs)
		}
	}
}

// TestCoveredNegation: on an index without arrays, the bounds of a
// negation ($nin, $ne, $not of a comparison) are the exact complement of
// its operand's, as MongoDB's index_bounds_builder makes a NOT's bounds
// EXACT: a projection of the field is covered (jstests/core/index/covered/
// covered_index_simple_3.js 3.8, where a document without the field
// answers with null from its key), and a count reads the keys alone.
func TestCoveredNegation(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	coll := db.Collection("covered_simple_3")
	var docs []any
	for i := range 10 {
		docs = append(docs, bson.D{{Key: "foo", Value: i}})
	}
	for i := range 5 {
		docs = append(docs, bson.D{{Key: "bar", Value: i}})
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "bar", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	nin := bson.D{{Key: "bar", Value: bson.D{{Key: "$nin", Value: bson.A{1, 3}}}}}
	proj := bson.D{{Key: "bar", Value: 1}, {Key: "_id", Value: 0}}
	out, err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "covered_simple_3"}, {Key: "filter", Value: nin},
		{Key: "projection", Value: proj}, {Key: "hint", Value: bson.D{{Key: "bar", Value: 1}}}}}, {Key: "verbosity", Value: "executionStats"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if win := out.Lookup("queryPlanner", "winningPlan").Document(); win.Lookup("stage").StringValue() != "PROJECTION_COVERED" {
		t.Errorf("winning plan %s, want PROJECTION_COVERED", win)
	}
	if n, docs := out.Lookup("executionStats", "nReturned").AsInt64(), out.Lookup("executionStats", "totalDocsExamined").AsInt64(); n != 13 || docs != 0 {
		t.Errorf("nReturned %d, totalDocsExamined %d, want 13 and 0", n, docs)
	}
	cur, err := coll.Find(ctx, nin, options.Find().SetProjection(proj).SetHint(bson.D{{Key: "bar", Value: 1}}))
	if err != nil {
		t.Fatal(err)
	}
	var got []bson.Raw
	if err := cur.All(ctx, &got); err != nil || len(got) != 13 {
		t.Fatalf("%d documents (%v), want 13", len(got), err)
	}
	// the ten documents without bar come first, keyed null
	if got[0].Lookup("bar").Type != bson.TypeNull || got[12].Lookup("bar").AsInt64() != 4 {
		t.Errorf("documents %v, want ten {bar: null}, then 0, 2, 4", got)
	}
	n, err := coll.CountDocuments(ctx, bson.D{{Key: "bar", Value: bson.D{{Key: "$ne", Value: 2}}}})
	if err != nil || n != 14 {
		t.Errorf("count of bar != 2: %d (%v), want 14", n, err)
	}
}
