package driver_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// explainStats runs explain with executionStats on a find and returns the
// winning plan's index name ("" for none) and the counts.
func explainStats(t *testing.T, db *mongo.Database, find bson.D) (index string, keys, docs, returned int64) {
	t.Helper()
	var out struct {
		QueryPlanner struct {
			WinningPlan bson.Raw `bson:"winningPlan"`
		} `bson:"queryPlanner"`
		ExecutionStats struct {
			NReturned         int64 `bson:"nReturned"`
			TotalKeysExamined int64 `bson:"totalKeysExamined"`
			TotalDocsExamined int64 `bson:"totalDocsExamined"`
		} `bson:"executionStats"`
	}
	cmd := bson.D{{Key: "explain", Value: find}, {Key: "verbosity", Value: "executionStats"}}
	if err := db.RunCommand(context.Background(), cmd).Decode(&out); err != nil {
		t.Fatal(err)
	}
	for stage := out.QueryPlanner.WinningPlan; stage != nil; {
		if name, ok := stage.Lookup("indexName").StringValueOK(); ok {
			index = name
		}
		stage, _ = stage.Lookup("inputStage").DocumentOK()
	}
	s := out.ExecutionStats
	return index, s.TotalKeysExamined, s.TotalDocsExamined, s.NReturned
}

// TestIndexedReadsExamineOnlyTheirResults checks the planner's promise on
// 5000 documents: an indexed equality, a 20-document page of an
// index-ordered sort and an anchored prefix regex examine as many keys and
// documents as they return; the regex, whose bounds are its strings' range
// and the regex itself, examines as well the key after the range, in the
// gap between them (as MongoDB's index bounds checker does).
func TestIndexedReadsExamineOnlyTheirResults(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	coll := db.Collection("ix")
	docs := make([]any, 5000)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i % 50}, {Key: "b", Value: i}, {Key: "path", Value: fmt.Sprintf(",root,%d,%d,", i%10, i)}}
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateMany(ctx, []mongo.IndexModel{
		{Keys: bson.D{{Key: "a", Value: 1}}},
		{Keys: bson.D{{Key: "b", Value: -1}}},
		{Keys: bson.D{{Key: "path", Value: 1}}},
	}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		find  bson.D
		index string
		n     int64
		// skipped are the documents a page reads and skips; gaps the
		// keys examined between intervals.
		skipped, gaps int64
	}{
		{"equality", bson.D{{Key: "find", Value: "ix"}, {Key: "filter", Value: bson.D{{Key: "a", Value: 7}}}}, "a_1", 100, 0, 0},
		{"sorted page", bson.D{{Key: "find", Value: "ix"}, {Key: "sort", Value: bson.D{{Key: "b", Value: 1}}}, {Key: "skip", Value: 40}, {Key: "limit", Value: 20}}, "b_-1", 20, 40, 0},
		{"prefix regex", bson.D{{Key: "find", Value: "ix"}, {Key: "filter", Value: bson.D{{Key: "path", Value: bson.Regex{Pattern: "^,root,3,"}}}}}, "path_1", 500, 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			index, keys, docs, n := explainStats(t, db, tc.find)
			if index != tc.index || n != tc.n {
				t.Fatalf("index %q returned %d, want %q and %d", index, n, tc.index, tc.n)
			}
			if read := n + tc.skipped; keys != read+tc.gaps || docs != read {
				t.Fatalf("examined %d keys and %d documents for %d results", keys, docs, n+tc.skipped)
			}
		})
	}
}

// TestConcurrentUpsertsOnUniqueKey checks that concurrent upserts of one
// unique key create one document: the losers of the insert race retry as
// updates, as MongoDB does.
func TestConcurrentUpsertsOnUniqueKey(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	coll := client.Database(testDB).Collection("users")
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "email", Value: 1}}, Options: options.Index().SetUnique(true)}); err != nil {
		t.Fatal(err)
	}
	const clients = 16
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			_, err := coll.UpdateOne(ctx, bson.D{{Key: "email", Value: "a@b.c"}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}, options.UpdateOne().SetUpsert(true))
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	var docs []struct {
		N int `bson:"n"`
	}
	cur, err := coll.Find(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cur.All(ctx, &docs); err != nil || len(docs) != 1 || docs[0].N != clients {
		t.Fatalf("documents %+v (%v), want one with n = %d", docs, err, clients)
	}
}

// TestConcurrentCreateIndexJoins: application instances starting together
// each create their indexes, spelled their own way (name given or not, the
// simple collation named or not, as mongorestore sends an index its oplog
// entry created, a text index): every createIndexes succeeds, as MongoDB's
// waits for the build of the same index under way, and each index is
// built once; the same through two frontends of one store, where a
// request waits for the build another frontend started.
func TestConcurrentCreateIndexJoins(t *testing.T) {
	t.Run("one server", func(t *testing.T) {
		client, _ := startServer(t)
		createIndexJoins(t, []*mongo.Client{client})
	})
	t.Run("two frontends", func(t *testing.T) {
		createIndexJoins(t, startFrontends(t, 2))
	})
}

// createIndexJoins runs TestConcurrentCreateIndexJoins' requests through
// clients in turn.
func createIndexJoins(t *testing.T, clients []*mongo.Client) {
	ctx := context.Background()
	coll := clients[0].Database(testDB).Collection("starts")
	docs := make([]any, 5000)
	for i := range docs {
		docs[i] = bson.D{{Key: "k", Value: i % 97}, {Key: "t", Value: fmt.Sprintf("word%d", i%89)}}
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	// models returns the i-th spelling; each client builds its own, since
	// the driver fills in the options it is given.
	models := func(i int) []mongo.IndexModel {
		return [][]mongo.IndexModel{
			{{Keys: bson.D{{Key: "k", Value: 1}}}, {Keys: bson.D{{Key: "t", Value: "text"}}}},
			{{Keys: bson.D{{Key: "k", Value: 1}}, Options: options.Index().SetName("k_1")}},
			{{Keys: bson.D{{Key: "k", Value: 1}}, Options: options.Index().SetCollation(&options.Collation{Locale: "simple"})}, {Keys: bson.D{{Key: "t", Value: "text"}}, Options: options.Index().SetName("t_text")}},
		}[i%3]
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			c := clients[i%len(clients)].Database(testDB).Collection("starts")
			if _, err := c.Indexes().CreateMany(ctx, models(i)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	specs, err := coll.Indexes().ListSpecifications(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	if fmt.Sprint(names) != "[_id_ k_1 t_text]" {
		t.Fatalf("indexes %v, want [_id_ k_1 t_text]", names)
	}
}

// TestCurrentOp checks that currentOp lists the operations in progress,
// filtered like a query: here, itself.
func TestCurrentOp(t *testing.T) {
	client, _ := startServer(t)
	var out struct {
		Inprog []struct {
			Op      string   `bson:"op"`
			Active  bool     `bson:"active"`
			Command bson.Raw `bson:"command"`
		} `bson:"inprog"`
	}
	cmd := bson.D{{Key: "currentOp", Value: 1}, {Key: "command.currentOp", Value: bson.D{{Key: "$exists", Value: true}}}}
	if err := client.Database("admin").RunCommand(context.Background(), cmd).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if len(out.Inprog) != 1 || out.Inprog[0].Op != "command" || !out.Inprog[0].Active {
		t.Fatalf("inprog %+v, want the currentOp command itself", out.Inprog)
	}
	err := client.Database("test").RunCommand(context.Background(), bson.D{{Key: "currentOp", Value: 1}}).Err()
	if serverCode(err) != 13 {
		t.Fatalf("currentOp outside admin: %v, want 13", err)
	}
}

// TestElemMatchValueUsesIndex: {a: {$elemMatch: {<ops>}}} is bounded by
// what its operators say of one element, intersected even on a multikey
// index (MongoDB's index_bounds_builder for ELEM_MATCH_VALUE;
// jstests/core/index/wildcard/wildcard_index_multikey.js expects an
// IXSCAN for {a: {$elemMatch: {$gte: 10, $lte: 40}}}).
func TestElemMatchValueUsesIndex(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	coll := db.Collection("emv")
	docs := make([]any, 200)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "a", Value: bson.A{i, i + 1000}}}
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	filter := bson.D{{Key: "a", Value: bson.D{{Key: "$elemMatch", Value: bson.D{{Key: "$gte", Value: 10}, {Key: "$lt", Value: 20}}}}}}
	index, keys, examined, n := explainStats(t, db, bson.D{{Key: "find", Value: "emv"}, {Key: "filter", Value: filter}})
	if index != "a_1" || n != 10 || keys != 10 || examined != 10 {
		t.Fatalf("index %q returned %d, examined %d keys and %d documents; want a_1 and 10 of each", index, n, keys, examined)
	}
	// Outside $elemMatch, different elements may satisfy each bound:
	// [5, 1005] matches a > 900 and a < 10.
	got := ids(findAll(t, coll, bson.D{{Key: "a", Value: bson.D{{Key: "$gt", Value: 900}, {Key: "$lt", Value: 10}}}}))
	if len(got) != 10 {
		t.Fatalf("range outside $elemMatch matched %v", got)
	}
	got = ids(findAll(t, coll, bson.D{{Key: "a", Value: bson.D{{Key: "$elemMatch", Value: bson.D{{Key: "$gt", Value: 900}, {Key: "$lt", Value: 10}}}}}}))
	if len(got) != 0 {
		t.Fatalf("$elemMatch matched %v", got)
	}
}

// TestTypeUsesIndex: {a: {$type: <t>}} scans the class of each type it
// names (MongoDB's index_bounds_builder for TYPE_OPERATOR: explain shows
// ["", {}) for strings), the filter then judging each document.
func TestTypeUsesIndex(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	coll := db.Collection("tyx")
	docs := make([]any, 300)
	for i := range docs {
		var v any = i
		switch i % 3 {
		case 1:
			v = fmt.Sprint(i)
		case 2:
			v = bson.A{true, fmt.Sprint(i)}
		}
		docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "a", Value: v}}
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	find := bson.D{{Key: "find", Value: "tyx"}, {Key: "filter", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$type", Value: "string"}}}}}}
	index, keys, examined, n := explainStats(t, db, find)
	if index != "a_1" || n != 200 || keys != 200 || examined != 200 {
		t.Fatalf("index %q returned %d, examined %d keys and %d documents; want a_1 and 200 of each", index, n, keys, examined)
	}
	if _, bounds := winningIndex(t, db, find, "a"); !slices.Equal(bounds, []string{`["", {})`}) {
		t.Fatalf("bounds %v", bounds)
	}
	if got := ids(findAll(t, coll, bson.D{{Key: "a", Value: bson.D{{Key: "$type", Value: "bool"}}}})); len(got) != 100 {
		t.Fatalf("$type bool matched %d", len(got))
	}
}

// TestDropIndexesReply: dropIndexes answers nIndexesWas, and when it drops
// every index ("*", or a list whose first name is "*") also msg, as
// MongoDB's dropReadyIndexes does (drop_indexes.cpp).
func TestDropIndexesReply(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database(testDB)
	coll := db.Collection("dropreply")
	if _, err := coll.Indexes().CreateMany(context.Background(), []mongo.IndexModel{{Keys: bson.D{{Key: "a", Value: 1}}}, {Keys: bson.D{{Key: "b", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		index any
		want  string
	}{
		{"a_1", `{"nIndexesWas": {"$numberInt":"3"},"ok": {"$numberDouble":"1.0"}}`},
		{"*", `{"nIndexesWas": {"$numberInt":"2"},"msg": "non-_id indexes dropped for collection","ok": {"$numberDouble":"1.0"}}`},
		{"*", `{"nIndexesWas": {"$numberInt":"1"},"msg": "non-_id indexes dropped for collection","ok": {"$numberDouble":"1.0"}}`},
		// a list starting with "*" is read as "*" alone
		{bson.A{"*", "a_1"}, `{"nIndexesWas": {"$numberInt":"1"},"msg": "non-_id indexes dropped for collection","ok": {"$numberDouble":"1.0"}}`},
	} {
		reply, err := runRaw(t, db, bson.D{{Key: "dropIndexes", Value: "dropreply"}, {Key: "index", Value: c.index}})
		if err != nil {
			t.Fatal(err)
		}
		if got := withoutClusterTime(t, reply).String(); got != c.want {
			t.Errorf("dropIndexes %v: %s, want %s", c.index, got, c.want)
		}
	}
}
