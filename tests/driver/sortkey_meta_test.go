package driver_test

import (
	"context"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestSortKeyMeta: {$meta: "sortKey"} in a pipeline is the key array the
// query layer's sort gives each document (SortNode::addSortKeyMetadata):
// after the leading $sort, in memory or by an index, through $unwind and
// at any depth (id_meta_projection.js), with the text score for a
// {$meta: "textScore"} key; after a $sort past a $group it is missing. In
// a find it is read below the top level and inside expressions too. Under
// a collation it stays refused (NotImplemented): MongoDB shows ICU's
// sort key bytes.
func TestSortKeyMeta(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("sortkeymeta")
	coll := db.Collection("c")
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "b", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: bson.A{1, 9}}, {Key: "b", Value: 1}, {Key: "t", Value: "green tea"}},
		bson.D{{Key: "_id", Value: 2}, {Key: "a", Value: 2}, {Key: "b", Value: 0}, {Key: "t", Value: "tea tea tea"}},
		bson.D{{Key: "_id", Value: 3}, {Key: "b", Value: 2}},
	}); err != nil {
		t.Fatal(err)
	}
	show := func(docs []bson.Raw) string {
		var out []string
		for _, d := range docs {
			out = append(out, d.String())
		}
		return strings.Join(out, " ")
	}
	agg := func(pipeline mongo.Pipeline, o ...options.Lister[options.AggregateOptions]) string {
		t.Helper()
		cur, err := coll.Aggregate(ctx, pipeline, o...)
		if err != nil {
			t.Fatal(err)
		}
		var docs []bson.Raw
		if err := cur.All(ctx, &docs); err != nil {
			t.Fatal(err)
		}
		return show(docs)
	}
	sk := bson.D{{Key: "$meta", Value: "sortKey"}}
	keyOnly := bson.D{{Key: "$project", Value: bson.D{{Key: "k", Value: sk}}}}
	for _, tc := range []struct {
		name, got, want string
	}{
		{"leading sort, descending over an array", agg(mongo.Pipeline{{{Key: "$sort", Value: bson.D{{Key: "a", Value: -1}}}}, keyOnly}),
			`{"_id": {"$numberInt":"1"},"k": [{"$numberInt":"9"}]} {"_id": {"$numberInt":"2"},"k": [{"$numberInt":"2"}]} {"_id": {"$numberInt":"3"},"k": [null]}`},
		{"by an index after a match, through unwind, nested", agg(mongo.Pipeline{
			{{Key: "$match", Value: bson.D{{Key: "b", Value: bson.D{{Key: "$lte", Value: 1}}}}}},
			{{Key: "$sort", Value: bson.D{{Key: "b", Value: 1}}}},
			{{Key: "$unwind", Value: "$a"}},
			{{Key: "$project", Value: bson.D{{Key: "_id", Value: 0}, {Key: "a", Value: 1}, {Key: "x.k", Value: sk}}}}}),
			`{"a": {"$numberInt":"2"},"x": {"k": [{"$numberInt":"0"}]}} {"a": {"$numberInt":"1"},"x": {"k": [{"$numberInt":"1"}]}} {"a": {"$numberInt":"9"},"x": {"k": [{"$numberInt":"1"}]}}`},
		{"after a group", agg(mongo.Pipeline{{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$b"}}}}, {{Key: "$sort", Value: bson.D{{Key: "_id", Value: 1}}}}, keyOnly}),
			`{"_id": {"$numberInt":"0"}} {"_id": {"$numberInt":"1"}} {"_id": {"$numberInt":"2"}}`},
		{"find, nested and in an expression", show(findAll(t, coll, bson.D{{Key: "b", Value: bson.D{{Key: "$gt", Value: 0}}}}, options.Find().
			SetProjection(bson.D{{Key: "_id", Value: 1}, {Key: "x", Value: bson.D{{Key: "$concatArrays", Value: bson.A{sk, bson.A{0}}}}}}).SetSort(bson.D{{Key: "b", Value: -1}}))),
			`{"_id": {"$numberInt":"3"},"x": [{"$numberInt":"2"},{"$numberInt":"0"}]} {"_id": {"$numberInt":"1"},"x": [{"$numberInt":"1"},{"$numberInt":"0"}]}`},
	} {
		if tc.got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, tc.got, tc.want)
		}
	}

	// A text score key is the score.
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "t", Value: "text"}}}); err != nil {
		t.Fatal(err)
	}
	cur, err := coll.Aggregate(ctx, mongo.Pipeline{
		{{Key: "$match", Value: bson.D{{Key: "$text", Value: bson.D{{Key: "$search", Value: "tea"}}}}}},
		{{Key: "$sort", Value: bson.D{{Key: "s", Value: bson.D{{Key: "$meta", Value: "textScore"}}}, {Key: "_id", Value: 1}}}},
		{{Key: "$project", Value: bson.D{{Key: "s", Value: bson.D{{Key: "$meta", Value: "textScore"}}}, {Key: "k", Value: sk}}}}})
	if err != nil {
		t.Fatal(err)
	}
	var scored []struct {
		ID int32   `bson:"_id"`
		S  float64 `bson:"s"`
		K  bson.A  `bson:"k"`
	}
	if err := cur.All(ctx, &scored); err != nil {
		t.Fatal(err)
	}
	if len(scored) != 2 || scored[0].ID != 2 {
		t.Fatalf("text search: %+v", scored)
	}
	for _, d := range scored {
		if len(d.K) != 2 || d.K[0] != d.S || d.K[1] != d.ID {
			t.Errorf("text score sort key of %d: %v, score %v", d.ID, d.K, d.S)
		}
	}

	en := options.Collation{Locale: "en"}
	_, err = coll.Aggregate(ctx, mongo.Pipeline{{{Key: "$sort", Value: bson.D{{Key: "a", Value: 1}}}}, keyOnly}, options.Aggregate().SetCollation(&en))
	requireCode(t, err, 238, "NotImplemented")
	_, err = coll.Find(ctx, bson.D{}, options.Find().SetProjection(bson.D{{Key: "k", Value: sk}}).SetSort(bson.D{{Key: "a", Value: 1}}).SetCollation(&en))
	requireCode(t, err, 238, "NotImplemented")
}
