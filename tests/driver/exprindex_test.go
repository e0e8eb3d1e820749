package driver_test

import (
	"context"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestExprUsesIndex: an $expr comparing a field with a constant, or in a
// $lookup's pipeline with one of its let variables, reads an index on a
// field that never held an array (MongoDB's RewriteExpr, since 5.0), and
// finds what a collection scan finds.
func TestExprUsesIndex(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("exprindex")
	items, orders := db.Collection("items"), db.Collection("orders")
	var docs []any
	for i := range 2000 {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "sku", Value: i % 200}, {Key: "tags", Value: bson.A{i % 3}}})
	}
	docs = append(docs, bson.D{{Key: "_id", Value: "missing"}}, bson.D{{Key: "_id", Value: "null"}, {Key: "sku", Value: nil}})
	if _, err := items.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"sku", "tags"} {
		if _, err := db.RunCommand(ctx, bson.D{{Key: "createIndexes", Value: "items"}, {Key: "indexes", Value: bson.A{
			bson.D{{Key: "key", Value: bson.D{{Key: key, Value: 1}}}, {Key: "name", Value: key}}}}}).Raw(); err != nil {
			t.Fatal(err)
		}
	}

	for _, tt := range []struct {
		filter  string
		keys    int64 // keys examined; -1: a collection scan
		matched int
	}{
		{`{"$expr": {"$eq": ["$sku", 7]}}`, 10, 10},
		{`{"$expr": {"$gt": [2, "$sku"]}}`, 22, 22},
		{`{"$expr": {"$lt": ["$sku", null]}}`, 2, 1},
		{`{"$expr": {"$and": [{"$gte": ["$sku", 10]}, {"$lt": ["$sku", 12]}]}}`, 20, 20},
		{`{"$expr": {"$eq": ["$tags", [1]]}}`, -1, 667},
		{`{"$expr": {"$eq": ["$sku", "$_id"]}}`, -1, 200},
	} {
		var filter bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(tt.filter), false, &filter); err != nil {
			t.Fatal(err)
		}
		explain, err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "items"}, {Key: "filter", Value: filter}}}, {Key: "verbosity", Value: "executionStats"}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		stats := explain.Lookup("executionStats")
		keys := stats.Document().Lookup("totalKeysExamined").AsInt64()
		if tt.keys < 0 {
			if keys != 0 || stats.Document().Lookup("totalDocsExamined").AsInt64() != 2002 {
				t.Errorf("%s: %s, want a collection scan", tt.filter, stats)
			}
		} else if keys != tt.keys {
			t.Errorf("%s: %d keys examined, want %d", tt.filter, keys, tt.keys)
		}
		byID := options.Find().SetSort(bson.D{{Key: "_id", Value: 1}})
		got := findAll(t, items, filter, byID)
		scanned := findAll(t, items, filter, byID, options.Find().SetHint(bson.D{{Key: "$natural", Value: 1}}))
		if len(got) != tt.matched || docsString(got) != docsString(scanned) {
			t.Errorf("%s: %d documents, want %d; indexed %s, scanned %s", tt.filter, len(got), tt.matched, docsString(got), docsString(scanned))
		}
	}

	// A $lookup's pipeline compares with its let variable: each order
	// reads its items through the sku index.
	seedOrders(t, orders, 50)
	skuOps := func() int64 { return indexOps(t, items, "sku") }
	before := skuOps()
	pipeline := bson.A{
		bson.D{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "items"}, {Key: "let", Value: bson.D{{Key: "s", Value: "$sku"}}},
			{Key: "pipeline", Value: bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "$expr", Value: bson.D{{Key: "$eq", Value: bson.A{"$sku", "$$s"}}}}}}}, bson.D{{Key: "$project", Value: bson.D{{Key: "_id", Value: 1}}}}}},
			{Key: "as", Value: "items"}}}},
		bson.D{{Key: "$project", Value: bson.D{{Key: "n", Value: bson.D{{Key: "$size", Value: "$items"}}}}}},
	}
	out := aggregateAll(t, orders, pipeline)
	if used := skuOps() - before; used != 50 {
		t.Errorf("the sku index served %d reads of the $lookup, want 50", used)
	}
	for _, d := range out {
		id := d.Lookup("_id").AsInt64()
		want := int64(10)
		if id*3 >= 200 {
			want = 0
		}
		if n := d.Lookup("n").AsInt64(); n != want {
			t.Errorf("order %d: %d items, want %d", id, n, want)
		}
	}
}

// TestSubPipelineMatchMoves: a $match after a $project, $addFields or
// $sort in a $lookup's or $unionWith's pipeline moves to its start, as
// MongoDB optimizes the pipeline it builds for each read, $expr included
// when it reads only fields the stages leave alone, so that the read of
// the foreign collection takes it through an index.
func TestSubPipelineMatchMoves(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("submatch")
	items, orders := db.Collection("items"), db.Collection("orders")
	var docs []any
	for i := range 400 {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "sku", Value: i % 40}, {Key: "x", Value: i % 7}})
	}
	if _, err := items.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if _, err := items.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "sku", Value: 1}}, Options: options.Index().SetName("sku")}); err != nil {
		t.Fatal(err)
	}
	seedOrders(t, orders, 20)
	skuOps := func() int64 { return indexOps(t, items, "sku") }
	for _, tt := range []struct {
		pipeline string
		reads    int64 // reads of the sku index
	}{
		{`[{"$lookup": {"from": "items", "let": {"s": "$sku"}, "as": "j", "pipeline": [{"$project": {"sku": 1}}, {"$match": {"$expr": {"$eq": ["$sku", "$$s"]}}}]}}]`, 20},
		{`[{"$lookup": {"from": "items", "let": {"s": "$sku"}, "as": "j", "pipeline": [{"$sort": {"x": 1, "_id": 1}}, {"$addFields": {"y": 1}}, {"$match": {"$expr": {"$eq": ["$$s", "$sku"]}}}]}}]`, 20},
		{`[{"$unionWith": {"coll": "items", "pipeline": [{"$set": {"q": 1}}, {"$match": {"sku": {"$lt": 2}}}]}}, {"$sort": {"sku": 1, "_id": 1, "x": 1}}]`, 1},
		// a $match reading what the $project writes stays after it
		{`[{"$lookup": {"from": "items", "let": {"s": "$sku"}, "as": "j", "pipeline": [{"$project": {"sku": "$x"}}, {"$match": {"$expr": {"$eq": ["$sku", "$$s"]}}}]}}]`, 0},
	} {
		var pipeline bson.A
		if err := bson.UnmarshalExtJSON([]byte(`{"p": `+tt.pipeline+`}`), false, &struct{ P *bson.A }{&pipeline}); err != nil {
			t.Fatal(err)
		}
		before := skuOps()
		got := aggregateAll(t, orders, pipeline)
		if used := skuOps() - before; used != tt.reads {
			t.Errorf("%s: the sku index served %d reads, want %d", tt.pipeline, used, tt.reads)
		}
		// the oracle: nothing moves past $_internalInhibitOptimization
		inhibited := strings.ReplaceAll(tt.pipeline, `"pipeline": [`, `"pipeline": [{"$_internalInhibitOptimization": {}}, `)
		inhibited = strings.ReplaceAll(inhibited, `}}, {"$match"`, `}}, {"$_internalInhibitOptimization": {}}, {"$match"`)
		var plain bson.A
		if err := bson.UnmarshalExtJSON([]byte(`{"p": `+inhibited+`}`), false, &struct{ P *bson.A }{&plain}); err != nil {
			t.Fatal(err)
		}
		if want := aggregateAll(t, orders, plain); docsString(got) != docsString(want) {
			t.Errorf("%s:\n got %s\nwant %s", tt.pipeline, docsString(got), docsString(want))
		}
	}
}

// seedOrders inserts n orders {_id: i, sku: 3i}.
func seedOrders(t *testing.T, orders *mongo.Collection, n int) {
	t.Helper()
	var ords []any
	for i := range n {
		ords = append(ords, bson.D{{Key: "_id", Value: i}, {Key: "sku", Value: i * 3}})
	}
	if _, err := orders.InsertMany(context.Background(), ords); err != nil {
		t.Fatal(err)
	}
}

// indexOps is how many operations $indexStats says used coll's index name.
func indexOps(t *testing.T, coll *mongo.Collection, name string) int64 {
	t.Helper()
	for _, s := range aggregateAll(t, coll, bson.A{bson.D{{Key: "$indexStats", Value: bson.D{}}}}) {
		if s.Lookup("name").StringValue() == name {
			return s.Lookup("accesses", "ops").AsInt64()
		}
	}
	t.Fatalf("no index %s", name)
	return 0
}
