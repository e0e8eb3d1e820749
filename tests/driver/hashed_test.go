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

// winningIndex is the index a find's winning plan scans, and its bounds
// on field, from explain's queryPlanner ("" when the plan scans none).
func winningIndex(t *testing.T, db *mongo.Database, find bson.D, field string) (string, []string) {
	t.Helper()
	out, err := db.RunCommand(context.Background(), bson.D{{Key: "explain", Value: find}, {Key: "verbosity", Value: "executionStats"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	stage := out.Lookup("queryPlanner", "winningPlan")
	for stage.Type == bson.TypeEmbeddedDocument {
		d := stage.Document()
		if name, ok := d.Lookup("indexName").StringValueOK(); ok {
			var bounds []string
			arr, _ := d.Lookup("indexBounds", field).ArrayOK()
			vals, _ := arr.Values()
			for _, v := range vals {
				bounds = append(bounds, v.StringValue())
			}
			return name, bounds
		}
		stage = d.Lookup("inputStage")
	}
	return "", nil
}

// TestHashedIndexes: a hashed index keys MongoDB's hash of the value
// (https://www.mongodb.com/docs/v7.0/core/indexes/index-types/index-hashed/),
// serves equality and $in, not ranges or sorts, and refuses arrays in any
// of its fields.
func TestHashedIndexes(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	coll := db.Collection("hashed")
	name, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: "hashed"}}})
	if err != nil || name != "a_hashed" {
		t.Fatalf("create: %q, %v", name, err)
	}
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "b", Value: 1}, {Key: "c", Value: "hashed"}}}); err != nil {
		t.Fatal(err)
	}
	docs := []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}, {Key: "b", Value: 1}, {Key: "c", Value: "x"}},
		bson.D{{Key: "_id", Value: 2}, {Key: "a", Value: 1.5}, {Key: "b", Value: 1}, {Key: "c", Value: "y"}},
		bson.D{{Key: "_id", Value: 3}, {Key: "a", Value: "one"}, {Key: "b", Value: 1}, {Key: "c", Value: "x"}, {Key: "d", Value: []int{1, 2}}},
		bson.D{{Key: "_id", Value: 4}, {Key: "a", Value: bson.D{{Key: "x", Value: 1}}}},
		bson.D{{Key: "_id", Value: 5}, {Key: "a", Value: nil}},
		bson.D{{Key: "_id", Value: 6}, {Key: "a", Value: int64(2)}, {Key: "b", Value: 2}, {Key: "c", Value: "x"}},
		bson.D{{Key: "_id", Value: 7}},
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		filter bson.D
		index  string
		want   []string
	}{
		{bson.D{{Key: "a", Value: 1}}, "a_hashed", []string{"1"}},
		// 1.5 hashes as 1 (truncated): the filter tells them apart.
		{bson.D{{Key: "a", Value: 1.5}}, "a_hashed", []string{"2"}},
		{bson.D{{Key: "a", Value: 2.0}}, "a_hashed", []string{"6"}},
		{bson.D{{Key: "a", Value: bson.D{{Key: "$in", Value: bson.A{"one", bson.D{{Key: "x", Value: 1}}}}}}}, "a_hashed", []string{"3", "4"}},
		{bson.D{{Key: "a", Value: nil}}, "a_hashed", []string{"5", "7"}},
		{bson.D{{Key: "a", Value: bson.D{{Key: "$gt", Value: 1}}}}, "", []string{"2", "6"}},
		{bson.D{{Key: "b", Value: 1}, {Key: "c", Value: "x"}}, "b_1_c_hashed", []string{"1", "3"}},
	}
	for _, c := range cases {
		find := bson.D{{Key: "find", Value: coll.Name()}, {Key: "filter", Value: c.filter}}
		if got, _ := winningIndex(t, db, find, "a"); got != c.index {
			t.Errorf("%v: plan scans %q, want %q", c.filter, got, c.index)
		}
		got := ids(findAll(t, coll, c.filter, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}})))
		if !slices.Equal(got, c.want) {
			t.Errorf("%v: got %v, want %v", c.filter, got, c.want)
		}
	}
	// The bounds are the hashes (convertShardKeyToHashed(1)).
	if _, bounds := winningIndex(t, db, bson.D{{Key: "find", Value: coll.Name()}, {Key: "filter", Value: bson.D{{Key: "a", Value: 1}}}}, "a"); !slices.Equal(bounds, []string{"[5902408780260971510, 5902408780260971510]"}) {
		t.Errorf("bounds %v", bounds)
	}
	// A sort on the hashed field is not given by the index.
	got := ids(findAll(t, coll, bson.D{{Key: "a", Value: bson.D{{Key: "$in", Value: bson.A{1, 2, 1.5}}}}}, options.Find().SetSort(bson.D{{Key: "a", Value: -1}})))
	if !slices.Equal(got, []string{"6", "2", "1"}) {
		t.Errorf("sorted: %v", got)
	}
	// Arrays on the hashed path, or on the path of another field of a
	// hashed index, are refused, the document left out.
	for _, doc := range []bson.D{
		{{Key: "_id", Value: 10}, {Key: "a", Value: bson.A{1, 2}}},
		{{Key: "_id", Value: 11}, {Key: "c", Value: bson.A{"x"}}},
		{{Key: "_id", Value: 12}, {Key: "b", Value: bson.A{}}},
		{{Key: "_id", Value: 13}, {Key: "b", Value: bson.A{1, 2}}, {Key: "c", Value: "x"}},
	} {
		_, err := coll.InsertOne(ctx, doc)
		requireCode(t, err, 16766, "")
		if !strings.Contains(err.Error(), "hashed indexes do not currently support array values") {
			t.Errorf("message: %v", err)
		}
	}
	for _, set := range []bson.D{{{Key: "a", Value: bson.A{1}}}, {{Key: "b", Value: bson.A{}}}} {
		_, err = coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: set}})
		requireCode(t, err, 16766, "")
	}
	if n, _ := coll.CountDocuments(ctx, bson.D{}); n != 7 {
		t.Errorf("count %d, want 7", n)
	}
	// An index build over an array, in the hashed field or another, fails
	// the same way.
	for _, keys := range []bson.D{{{Key: "d", Value: "hashed"}}, {{Key: "d", Value: 1}, {Key: "e", Value: "hashed"}}} {
		_, err = coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: keys})
		requireCode(t, err, 16766, "")
	}
}

// TestHashedIndexSpecs: MongoDB's rules on hashed key patterns.
func TestHashedIndexSpecs(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	coll := client.Database(testDB).Collection("hashspecs")
	cases := []struct {
		name   string
		model  mongo.IndexModel
		code   int
		inName string
	}{
		{"two hashed", mongo.IndexModel{Keys: bson.D{{Key: "a", Value: "hashed"}, {Key: "b", Value: "hashed"}}}, 31303, `A maximum of one index field is allowed to be hashed but found 2 for 'key' { a: "hashed", b: "hashed" }`},
		{"unique", mongo.IndexModel{Keys: bson.D{{Key: "a", Value: "hashed"}}, Options: options.Index().SetUnique(true)}, 16764, "cannot guarantee uniqueness"},
		{"unknown plugin", mongo.IndexModel{Keys: bson.D{{Key: "a", Value: "hash"}}}, 67, "Unknown index plugin 'hash'"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := coll.Indexes().CreateOne(ctx, c.model)
			requireCode(t, err, c.code, "")
			if !strings.Contains(err.Error(), c.inName) {
				t.Errorf("error %v, want it to mention %q", err, c.inName)
			}
		})
	}
	// Hashed first, ascending after; sparse and partial are allowed.
	for _, m := range []mongo.IndexModel{
		{Keys: bson.D{{Key: "a", Value: "hashed"}, {Key: "b", Value: -1}}},
		{Keys: bson.D{{Key: "s", Value: "hashed"}}, Options: options.Index().SetSparse(true)},
		{Keys: bson.D{{Key: "_id", Value: "hashed"}}},
	} {
		if _, err := coll.Indexes().CreateOne(ctx, m); err != nil {
			t.Errorf("%v: %v", m.Keys, err)
		}
	}
	// A sparse hashed index holds no entry for a document missing it.
	if _, err := coll.InsertMany(ctx, []any{bson.D{{Key: "s", Value: 1}}, bson.D{{Key: "t", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	n, err := coll.CountDocuments(ctx, bson.D{}, options.Count().SetHint("s_hashed"))
	if err != nil || n != 1 {
		t.Errorf("sparse count %d, %v", n, err)
	}
}

// TestShardCollectionHashed: a hashed shard key builds the hashed index
// on an empty collection, or uses an existing one.
func TestShardCollectionHashed(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	admin := client.Database("admin")
	if err := admin.RunCommand(ctx, bson.D{{Key: "shardCollection", Value: "s.h"}, {Key: "key", Value: bson.D{{Key: "a", Value: "hashed"}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	specs, err := client.Database("s").Collection("h").Indexes().ListSpecifications(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 2 || specs[1].Name != "a_hashed" {
		t.Fatalf("indexes %v", specs)
	}
	full := client.Database("s").Collection("full")
	if _, err := full.InsertOne(ctx, bson.D{{Key: "u", Value: "x"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := full.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "u", Value: "hashed"}, {Key: "v", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	if err := admin.RunCommand(ctx, bson.D{{Key: "shardCollection", Value: "s.full"}, {Key: "key", Value: bson.D{{Key: "u", Value: "hashed"}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	// A range key is not served by a hashed index.
	err = admin.RunCommand(ctx, bson.D{{Key: "shardCollection", Value: "s.other"}, {Key: "key", Value: bson.D{{Key: "u", Value: 1}}}}).Err()
	if err != nil {
		t.Fatal(err) // empty collection: the index is created
	}
	other := client.Database("s").Collection("full2")
	if _, err := other.InsertOne(ctx, bson.D{{Key: "u", Value: "x"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "u", Value: "hashed"}}}); err != nil {
		t.Fatal(err)
	}
	err = admin.RunCommand(ctx, bson.D{{Key: "shardCollection", Value: "s.full2"}, {Key: "key", Value: bson.D{{Key: "u", Value: 1}}}}).Err()
	requireCode(t, err, 72, "InvalidOptions")
}

// TestIndexKindsExamineMatchesOnly: on a generated corpus, an equality on
// a hashed index and on a wildcard path examines the matching keys only
// (explain's totalKeysExamined), not the collection.
func TestIndexKindsExamineMatchesOnly(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	coll := db.Collection("corpus")
	if _, err := coll.Indexes().CreateMany(ctx, []mongo.IndexModel{
		{Keys: bson.D{{Key: "h", Value: "hashed"}}},
		{Keys: bson.D{{Key: "w.$**", Value: 1}}},
	}); err != nil {
		t.Fatal(err)
	}
	docs := make([]any, 2000)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "h", Value: i % 100}, {Key: "w", Value: bson.D{{Key: "k", Value: i % 50}}}}
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		filter bson.D
		keys   int32
	}{
		{bson.D{{Key: "h", Value: 7}}, 20},
		{bson.D{{Key: "h", Value: bson.D{{Key: "$in", Value: bson.A{7, 8}}}}}, 40},
		{bson.D{{Key: "w.k", Value: 7}}, 40},
	} {
		out, err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "corpus"}, {Key: "filter", Value: c.filter}}}, {Key: "verbosity", Value: "executionStats"}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		stats := out.Lookup("executionStats").Document()
		keys, _ := stats.Lookup("totalKeysExamined").AsInt64OK()
		returned, _ := stats.Lookup("nReturned").AsInt64OK()
		if keys < int64(c.keys) || keys > int64(c.keys)+2 || returned != int64(c.keys) {
			t.Errorf("%v: %d keys examined, %d returned, want %d", c.filter, keys, returned, c.keys)
		}
	}
}
