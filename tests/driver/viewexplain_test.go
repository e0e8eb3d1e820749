package driver_test

import (
	"context"
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestExplainOnView: a find, count, distinct or aggregate on a view is
// explained as the aggregation it runs, as MongoDB explains it: over the
// collection under the view, its plan reading that collection's index.
func TestExplainOnView(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("viewexplain")
	c := db.Collection("c")
	if _, err := c.InsertMany(ctx, []any{bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 1}}, bson.D{{Key: "a", Value: 2}, {Key: "b", Value: 2}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateView(ctx, "v", "c", mongo.Pipeline{{{Key: "$match", Value: bson.D{{Key: "b", Value: bson.D{{Key: "$gt", Value: 0}}}}}}}); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []bson.D{
		{{Key: "find", Value: "v"}, {Key: "filter", Value: bson.D{{Key: "a", Value: 2}}}},
		{{Key: "count", Value: "v"}, {Key: "query", Value: bson.D{{Key: "a", Value: 2}}}},
		{{Key: "distinct", Value: "v"}, {Key: "key", Value: "b"}, {Key: "query", Value: bson.D{{Key: "a", Value: 2}}}},
		{{Key: "aggregate", Value: "v"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "a", Value: 2}}}}}}, {Key: "cursor", Value: bson.D{}}},
	} {
		raw, err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: cmd}, {Key: "verbosity", Value: "executionStats"}}).Raw()
		if err != nil {
			t.Fatalf("explain %v: %v", cmd, err)
		}
		planner, err := raw.LookupErr("stages", "0", "$cursor", "queryPlanner")
		if err != nil {
			planner, err = raw.LookupErr("queryPlanner")
		}
		if err != nil {
			t.Fatalf("explain %v: no queryPlanner in %s", cmd, raw)
		}
		if ns := planner.Document().Lookup("namespace").StringValue(); ns != "viewexplain.c" {
			t.Errorf("explain %v: namespace %q, want the collection under the view", cmd[0], ns)
		}
		if ix := planner.Document().Lookup("winningPlan", "inputStage", "indexName"); ix.Type == 0 || ix.StringValue() != "a_1" {
			t.Errorf("explain %v: winning plan %s", cmd[0], planner.Document().Lookup("winningPlan"))
		}
	}
}

// TestViewCollation: a view created with a collation reads under it
// (finds, counts, aggregates); a command naming another collation is
// refused with 167, the same one is taken; a view on it must have its
// collation; listCollections shows it and collMod keeps it.
func TestViewCollation(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("viewcoll")
	if _, err := db.Collection("people").InsertMany(ctx, []any{bson.D{{Key: "name", Value: "Ann"}}, bson.D{{Key: "name", Value: "ann"}}, bson.D{{Key: "name", Value: "Bob"}}}); err != nil {
		t.Fatal(err)
	}
	ci := bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: 2}}
	run := func(cmd bson.D) (bson.Raw, error) { return db.RunCommand(ctx, cmd).Raw() }
	if _, err := run(bson.D{{Key: "create", Value: "v"}, {Key: "viewOn", Value: "people"}, {Key: "pipeline", Value: bson.A{}}, {Key: "collation", Value: ci}}); err != nil {
		t.Fatal(err)
	}
	v := db.Collection("v")
	if n, err := v.CountDocuments(ctx, bson.D{{Key: "name", Value: "ANN"}}); err != nil || n != 2 {
		t.Errorf("count under the view's collation: %d %v", n, err)
	}
	if n, err := db.Collection("people").CountDocuments(ctx, bson.D{{Key: "name", Value: "ANN"}}); err != nil || n != 0 {
		t.Errorf("count on the collection, simple: %d %v", n, err)
	}
	cur, err := v.Find(ctx, bson.D{{Key: "name", Value: "ann"}})
	if err != nil {
		t.Fatal(err)
	}
	var found []bson.Raw
	if err := cur.All(ctx, &found); err != nil || len(found) != 2 {
		t.Errorf("find under the view's collation: %d %v", len(found), err)
	}
	_, err = run(bson.D{{Key: "find", Value: "v"}, {Key: "filter", Value: bson.D{}}, {Key: "collation", Value: bson.D{{Key: "locale", Value: "fr"}}}})
	requireCode(t, err, 167, "OptionNotSupportedOnView")
	if _, err := run(bson.D{{Key: "find", Value: "v"}, {Key: "filter", Value: bson.D{}}, {Key: "collation", Value: ci}}); err != nil {
		t.Errorf("find naming the view's own collation: %v", err)
	}
	_, err = run(bson.D{{Key: "create", Value: "w"}, {Key: "viewOn", Value: "v"}, {Key: "pipeline", Value: bson.A{}}})
	requireCode(t, err, 167, "OptionNotSupportedOnView")
	if _, err := run(bson.D{{Key: "create", Value: "w"}, {Key: "viewOn", Value: "v"}, {Key: "pipeline", Value: bson.A{}}, {Key: "collation", Value: ci}}); err != nil {
		t.Errorf("a view on the view with its collation: %v", err)
	}
	if _, err := run(bson.D{{Key: "collMod", Value: "v"}, {Key: "viewOn", Value: "people"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$match", Value: bson.D{}}}}}}); err != nil {
		t.Fatal(err)
	}
	specs, err := db.ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: "v"}})
	if err != nil || len(specs) != 1 {
		t.Fatal(specs, err)
	}
	if c, err := specs[0].Options.LookupErr("collation", "strength"); err != nil || c.AsInt64() != 2 {
		t.Errorf("listCollections of the view after collMod: %s", specs[0].Options)
	}
	// An aggregation reading the view through $lookup, $unionWith or
	// $graphLookup must run under the view's collation.
	lookup := bson.D{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "v"}, {Key: "localField", Value: "name"}, {Key: "foreignField", Value: "name"}, {Key: "as", Value: "same"}}}}
	nested := bson.D{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "people"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$unionWith", Value: "v"}}}}, {Key: "as", Value: "u"}}}}
	for _, stage := range []bson.D{lookup, nested} {
		_, err = run(bson.D{{Key: "aggregate", Value: "people"}, {Key: "pipeline", Value: bson.A{stage}}, {Key: "cursor", Value: bson.D{}}})
		requireCode(t, err, 167, "OptionNotSupportedOnView")
	}
	raw, err := run(bson.D{{Key: "aggregate", Value: "people"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "name", Value: "Bob"}}}}, lookup}}, {Key: "cursor", Value: bson.D{}}, {Key: "collation", Value: ci}})
	if err != nil {
		t.Fatal(err)
	}
	if docs, _ := raw.Lookup("cursor", "firstBatch").Array().Values(); len(docs) != 1 {
		t.Errorf("$lookup from the view under its collation: %s", raw)
	}
}

// TestExplainRefusesWriteConcern: an aggregate with explain takes no
// writeConcern (FailedToParse), as MongoDB's aggregation request check.
func TestExplainRefusesWriteConcern(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database(testDB)
	for _, wc := range []string{`{}`, `{"w": 1}`, `{"w": "majority"}`} {
		cmd := mustExt(t, `{"aggregate": "x", "pipeline": [], "explain": true, "writeConcern": `+wc+`}`)
		requireCode(t, db.RunCommand(context.Background(), cmd).Err(), 9, "FailedToParse")
	}
	if err := db.RunCommand(context.Background(), mustExt(t, `{"aggregate": "x", "pipeline": [], "explain": true}`)).Err(); err != nil {
		t.Fatal(err)
	}
}

// viewOverSparseIndex makes db.v, a view of db.c, of two documents,
// {i: 1} and {i: 2, x: 1}, the second alone in the sparse index x_1.
func viewOverSparseIndex(t *testing.T, db *mongo.Database) {
	t.Helper()
	ctx := context.Background()
	c := db.Collection("c")
	if _, err := c.InsertMany(ctx, []any{bson.D{{Key: "i", Value: 1}}, bson.D{{Key: "i", Value: 2}, {Key: "x", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "x", Value: 1}}, Options: options.Index().SetSparse(true)}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateView(ctx, "v", "c", mongo.Pipeline{}); err != nil {
		t.Fatal(err)
	}
}

// TestCountOnViewHint: a count on a view hands its hint to the aggregation
// it runs, as MongoDB's countCommandAsAggregationCommand does: a hint of a
// sparse index of the collection under the view is followed even when it
// misses documents (jstests/core/query/count/count_hint.js), one naming no
// index is refused with BadValue.
func TestCountOnViewHint(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("countviewhint")
	viewOverSparseIndex(t, db)
	count := func(hint any) (int64, error) {
		raw, err := db.RunCommand(ctx, bson.D{{Key: "count", Value: "v"}, {Key: "hint", Value: hint}}).Raw()
		if err != nil {
			return 0, err
		}
		return raw.Lookup("n").AsInt64(), nil
	}
	for _, hint := range []any{"x_1", bson.D{{Key: "x", Value: 1}}} {
		if n, err := count(hint); err != nil || n != 1 {
			t.Errorf("count on the view hinting the sparse index %v: %d %v, want 1", hint, n, err)
		}
	}
	if n, err := count(bson.D{{Key: "$natural", Value: 1}}); err != nil || n != 2 {
		t.Errorf("count on the view hinting $natural: %d %v, want 2", n, err)
	}
	_, err := count(bson.D{{Key: "bad", Value: 1}, {Key: "hint", Value: 1}})
	requireCode(t, err, 2, "BadValue")
}

// TestLeadingLimitBoundsScan: a pipeline whose first stages after its
// $match are a $limit, or a $skip and a $limit, reads only as many
// documents as they let through, as MongoDB pushes the $limit (after
// moving it before the $skip) into the query: so does a find on a view
// with a limit, which runs as such a pipeline (views_aggregation.js,
// whose $cursor returns one document for [{$limit: 1}, {$match: ...}]);
// after a $sort, a $skip and a $limit bound the sort to their sum.
func TestLeadingLimitBoundsScan(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("leadinglimit")
	c := db.Collection("c")
	var docs []any
	for i := range 300 {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i % 3}})
	}
	if _, err := c.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateView(ctx, "v", "c", mongo.Pipeline{}); err != nil {
		t.Fatal(err)
	}
	stage := func(name string, v any) bson.D { return bson.D{{Key: name, Value: v}} }
	for _, tc := range []struct {
		cmd      bson.D
		examined int64
		ids      []int32
	}{
		{bson.D{{Key: "find", Value: "v"}, {Key: "limit", Value: 2}}, 2, []int32{0, 1}},
		{bson.D{{Key: "find", Value: "v"}, {Key: "filter", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "skip", Value: 1}, {Key: "limit", Value: 2}}, 8, []int32{4, 7}},
		{bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{stage("$limit", 1), stage("$match", bson.D{{Key: "a", Value: 1}})}}, {Key: "cursor", Value: bson.D{}}}, 1, nil},
		{bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{stage("$skip", 3), stage("$limit", 2)}}, {Key: "cursor", Value: bson.D{}}}, 5, []int32{3, 4}},
		{bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{stage("$match", bson.D{{Key: "a", Value: 2}}), stage("$limit", 3), stage("$project", bson.D{{Key: "_id", Value: 1}})}}, {Key: "cursor", Value: bson.D{}}}, 9, []int32{2, 5, 8}},
	} {
		raw, err := db.RunCommand(ctx, tc.cmd).Raw()
		if err != nil {
			t.Fatalf("%v: %v", tc.cmd, err)
		}
		var got []int32
		batch, _ := raw.Lookup("cursor", "firstBatch").Array().Values()
		for _, d := range batch {
			got = append(got, d.Document().Lookup("_id").Int32())
		}
		if !slices.Equal(got, tc.ids) {
			t.Errorf("%v: _ids %v, want %v", tc.cmd, got, tc.ids)
		}
		raw, err = db.RunCommand(ctx, bson.D{{Key: "explain", Value: tc.cmd}, {Key: "verbosity", Value: "executionStats"}}).Raw()
		if err != nil {
			t.Fatalf("explain %v: %v", tc.cmd, err)
		}
		stats, err := raw.LookupErr("stages", "0", "$cursor", "executionStats")
		if err != nil {
			t.Fatalf("explain %v: no $cursor stage in %s", tc.cmd, raw)
		}
		if n := stats.Document().Lookup("totalDocsExamined").AsInt64(); n != tc.examined {
			t.Errorf("explain %v: %d documents examined, want %d", tc.cmd, n, tc.examined)
		}
	}
	// A $sort, $skip k, $limit n keeps the top k+n documents.
	find := bson.D{{Key: "find", Value: "v"}, {Key: "sort", Value: bson.D{{Key: "a", Value: -1}, {Key: "_id", Value: 1}}}, {Key: "skip", Value: 2}, {Key: "limit", Value: 3}}
	raw, err := db.RunCommand(ctx, find).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if got := raw.Lookup("cursor", "firstBatch").String(); got != `[{"_id": {"$numberInt":"8"},"a": {"$numberInt":"2"}},{"_id": {"$numberInt":"11"},"a": {"$numberInt":"2"}},{"_id": {"$numberInt":"14"},"a": {"$numberInt":"2"}}]` {
		t.Errorf("find sorted with a skip and a limit on the view: %s", got)
	}
	raw, err = db.RunCommand(ctx, bson.D{{Key: "explain", Value: find}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if n := raw.Lookup("stages", "0", "$cursor", "queryPlanner", "winningPlan", "limitAmount"); n.Type == 0 || n.AsInt64() != 5 {
		t.Errorf("explain of the sorted find with a skip and a limit: SORT limitAmount %s, want 5 in %s", n, raw)
	}
}

// TestDistinctOnViewHint: a distinct on a view hands its hint to the
// aggregation it runs, as a count does (ParsedDistinct::asAggregationCommand
// in the versions whose distinct takes a hint; views_distinct.js): a sparse
// index hinted yields the values of the documents it holds, explain shows
// it, and one naming no index is refused with BadValue.
func TestDistinctOnViewHint(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("distinctviewhint")
	viewOverSparseIndex(t, db)
	distinct := bson.D{{Key: "distinct", Value: "v"}, {Key: "key", Value: "i"}, {Key: "hint", Value: "x_1"}}
	raw, err := db.RunCommand(ctx, distinct).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if vals := raw.Lookup("values").String(); vals != `[{"$numberInt":"2"}]` {
		t.Errorf("distinct on the view hinting the sparse index: values %s, want [2]", vals)
	}
	raw, err = db.RunCommand(ctx, bson.D{{Key: "explain", Value: distinct}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if ix := raw.Lookup("stages", "0", "$cursor", "queryPlanner", "winningPlan", "inputStage", "indexName"); ix.Type == 0 || ix.StringValue() != "x_1" {
		t.Errorf("explain of the hinted distinct on the view: %s", raw)
	}
	err = db.RunCommand(ctx, bson.D{{Key: "distinct", Value: "v"}, {Key: "key", Value: "i"}, {Key: "hint", Value: bson.D{{Key: "bad", Value: 1}}}}).Err()
	requireCode(t, err, 2, "BadValue")
}
