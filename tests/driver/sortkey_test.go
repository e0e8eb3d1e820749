package driver_test

import (
	"context"
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestSortKeyProjection: a find's {$meta: "sortKey"} field is the
// document's key under the find's sort, an array of each sort field's key
// as the sort compares it (jstests/core/query/sort/sortl.js), whether the
// sort is in memory or an index's, kept under returnKey; without a sort
// it is BadValue, and findAndModify refuses it (BadValue, as
// getExecutorUpdate and getExecutorDelete do).
func TestSortKeyProjection(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("sortkeyproj")
	coll := db.Collection("c")
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "b", Value: 1}, {Key: "a", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: bson.A{1, 9}}, {Key: "b", Value: 1}},
		bson.D{{Key: "_id", Value: 2}, {Key: "a", Value: 2}, {Key: "b", Value: 0}},
		bson.D{{Key: "_id", Value: 3}, {Key: "b", Value: 1}},
	}); err != nil {
		t.Fatal(err)
	}
	sk := bson.D{{Key: "k", Value: bson.D{{Key: "$meta", Value: "sortKey"}}}}
	for _, tc := range []struct {
		name, got, want string
	}{
		{"in memory, descending", docsString(findAll(t, coll, bson.D{}, options.Find().SetProjection(append(bson.D{{Key: "_id", Value: 1}}, sk...)).SetSort(bson.D{{Key: "a", Value: -1}}))),
			`{"_id": {"$numberInt":"1"},"k": [{"$numberInt":"9"}]} {"_id": {"$numberInt":"2"},"k": [{"$numberInt":"2"}]} {"_id": {"$numberInt":"3"},"k": [null]}`},
		{"by an index", docsString(findAll(t, coll, bson.D{{Key: "b", Value: 1}}, options.Find().SetProjection(append(bson.D{{Key: "_id", Value: 1}}, sk...)).SetSort(bson.D{{Key: "b", Value: 1}, {Key: "a", Value: 1}}).SetHint("b_1_a_1"))),
			`{"_id": {"$numberInt":"3"},"k": [{"$numberInt":"1"},null]} {"_id": {"$numberInt":"1"},"k": [{"$numberInt":"1"},{"$numberInt":"1"}]}`},
		{"returnKey", docsString(findAll(t, coll, bson.D{{Key: "b", Value: 0}}, options.Find().SetProjection(sk).SetSort(bson.D{{Key: "_id", Value: 1}}).SetHint("b_1_a_1").SetReturnKey(true))),
			`{"b": {"$numberInt":"0"},"a": {"$numberInt":"2"},"k": [{"$numberInt":"2"}]}`},
	} {
		if tc.got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, tc.got, tc.want)
		}
	}
	_, err := coll.Find(ctx, bson.D{}, options.Find().SetProjection(sk))
	requireCode(t, err, 2, "BadValue") // cannot use sortKey $meta projection without a sort
	err = db.RunCommand(ctx, bson.D{{Key: "findAndModify", Value: "c"}, {Key: "query", Value: bson.D{{Key: "_id", Value: 2}}},
		{Key: "update", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}}, {Key: "sort", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "fields", Value: sk}}).Err()
	requireCode(t, err, 2, "BadValue")
}

// TestSortByRandVal: a sort by {$meta: "randVal"} is taken, as MongoDB's
// SortPattern takes it (jstests/core/query/sort/sort_with_meta_operator.js):
// the documents of a find or an aggregation carry no randVal metadata, so
// its keys are all missing and the other keys order the documents, which
// no index order stands in for.
func TestSortByRandVal(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	coll := client.Database("sortrandval").Collection("c")
	if _, err := coll.InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "p", Value: 1}}, bson.D{{Key: "_id", Value: -1}, {Key: "p", Value: -2}},
		bson.D{{Key: "_id", Value: -2}, {Key: "p", Value: -1}}, bson.D{{Key: "_id", Value: 2}, {Key: "p", Value: 2}},
	}); err != nil {
		t.Fatal(err)
	}
	// An index whose order a sort by {_id: randVal, p: 1} would take
	// were the randVal key read as _id.
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "_id", Value: -1}, {Key: "p", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	rv := bson.D{{Key: "$meta", Value: "randVal"}}
	ids := func(docs []bson.Raw) []int32 {
		var out []int32
		for _, d := range docs {
			out = append(out, d.Lookup("_id").Int32())
		}
		return out
	}
	agg := func(sort bson.D) []bson.Raw {
		cur, err := coll.Aggregate(ctx, mongo.Pipeline{{{Key: "$sort", Value: sort}}})
		if err != nil {
			t.Fatal(err)
		}
		var docs []bson.Raw
		if err := cur.All(ctx, &docs); err != nil {
			t.Fatal(err)
		}
		return docs
	}
	byP := []int32{-1, -2, 1, 2}
	for _, tc := range []struct {
		name string
		got  []int32
		want []int32
	}{
		{"find, randVal alone", ids(findAll(t, coll, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: rv}}))), nil},
		{"find, after p", ids(findAll(t, coll, bson.D{}, options.Find().SetSort(bson.D{{Key: "p", Value: 1}, {Key: "_id", Value: rv}}))), byP},
		{"find, before p (not the _id index's order)", ids(findAll(t, coll, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: rv}, {Key: "p", Value: 1}}))), byP},
		{"aggregate, after p", ids(agg(bson.D{{Key: "p", Value: 1}, {Key: "_id", Value: rv}})), byP},
		{"aggregate, randVal twice", ids(agg(bson.D{{Key: "p", Value: rv}, {Key: "_id", Value: rv}})), nil},
	} {
		if tc.want == nil {
			if len(tc.got) != 4 {
				t.Errorf("%s: %v", tc.name, tc.got)
			}
		} else if !slices.Equal(tc.got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

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
	agg := func(pipeline mongo.Pipeline, o ...options.Lister[options.AggregateOptions]) string {
		t.Helper()
		return docsString(aggregateAll(t, coll, pipeline, o...))
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
		{"find, nested and in an expression", docsString(findAll(t, coll, bson.D{{Key: "b", Value: bson.D{{Key: "$gt", Value: 0}}}}, options.Find().
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
