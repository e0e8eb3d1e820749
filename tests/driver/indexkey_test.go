package driver_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestIndexKeys: {$meta: "indexKey"} (find's projection and an
// aggregation's stages) and find's returnKey give the key of the index
// entry each document was found through, as MongoDB does: the index's
// fields with the entry's values (the element of an array, a hashed
// index's hash), {_id: ...} through the _id index, nothing (returnKey: {})
// for a collection scan or a $text search; a sort by it is illegal (31138).
func TestIndexKeys(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	coll := client.Database("indexkeys").Collection("c")
	for _, keys := range []bson.D{{{Key: "a", Value: 1}, {Key: "b", Value: 1}}, {{Key: "tags", Value: 1}}, {{Key: "h", Value: "hashed"}}, {{Key: "s", Value: 1}}, {{Key: "txt", Value: "text"}}} {
		opts := options.Index()
		if keys[0].Key == "s" {
			opts.SetSparse(true)
		}
		if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: keys, Options: opts}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := coll.InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 10}, {Key: "b", Value: 20}, {Key: "tags", Value: bson.A{"x", "y"}}, {Key: "h", Value: 5}, {Key: "s", Value: 1}, {Key: "txt", Value: "apple pie"}},
		bson.D{{Key: "_id", Value: 2}, {Key: "a", Value: 30}, {Key: "b", Value: 40}, {Key: "tags", Value: bson.A{"z"}}, {Key: "h", Value: 6}},
		bson.D{{Key: "_id", Value: 3}, {Key: "c", Value: 1}},
	}); err != nil {
		t.Fatal(err)
	}
	aggregate := func(pipeline mongo.Pipeline) string {
		t.Helper()
		return docsString(aggregateAll(t, coll, pipeline))
	}
	project := bson.D{{Key: "$project", Value: bson.D{{Key: "ik", Value: bson.D{{Key: "$meta", Value: "indexKey"}}}}}}
	match := func(filter bson.D) bson.D { return bson.D{{Key: "$match", Value: filter}} }
	for _, tc := range []struct {
		name, got, want string
	}{
		{"compound", aggregate(mongo.Pipeline{match(bson.D{{Key: "a", Value: bson.D{{Key: "$gt", Value: 0}}}}), project}),
			`{"_id": {"$numberInt":"1"},"ik": {"a": {"$numberInt":"10"},"b": {"$numberInt":"20"}}} {"_id": {"$numberInt":"2"},"ik": {"a": {"$numberInt":"30"},"b": {"$numberInt":"40"}}}`},
		{"collection scan", aggregate(mongo.Pipeline{match(bson.D{{Key: "c", Value: 1}}), project}), `{"_id": {"$numberInt":"3"}}`},
		{"multikey", aggregate(mongo.Pipeline{match(bson.D{{Key: "tags", Value: "y"}}), project}), `{"_id": {"$numberInt":"1"},"ik": {"tags": "y"}}`},
		{"hashed", aggregate(mongo.Pipeline{match(bson.D{{Key: "h", Value: 5}}), project}), `{"_id": {"$numberInt":"1"},"ik": {"h": {"$numberLong":"4470791281878691347"}}}`},
		{"sparse", aggregate(mongo.Pipeline{match(bson.D{{Key: "s", Value: 1}}), project}), `{"_id": {"$numberInt":"1"},"ik": {"s": {"$numberInt":"1"}}}`},
		{"text", aggregate(mongo.Pipeline{match(bson.D{{Key: "$text", Value: bson.D{{Key: "$search", Value: "apple"}}}}), project}), `{"_id": {"$numberInt":"1"}}`},
		{"after a blocking sort", aggregate(mongo.Pipeline{match(bson.D{{Key: "a", Value: bson.D{{Key: "$gt", Value: 0}}}}), {{Key: "$sort", Value: bson.D{{Key: "b", Value: -1}}}}, {{Key: "$addFields", Value: bson.D{{Key: "k", Value: bson.D{{Key: "$meta", Value: "indexKey"}}}}}}, {{Key: "$project", Value: bson.D{{Key: "k", Value: 1}}}}}),
			`{"_id": {"$numberInt":"2"},"k": {"a": {"$numberInt":"30"},"b": {"$numberInt":"40"}}} {"_id": {"$numberInt":"1"},"k": {"a": {"$numberInt":"10"},"b": {"$numberInt":"20"}}}`},
		{"find projection", docsString(findAll(t, coll, bson.D{{Key: "tags", Value: "z"}}, options.Find().SetProjection(bson.D{{Key: "ik", Value: bson.D{{Key: "$meta", Value: "indexKey"}}}, {Key: "a", Value: 1}}))),
			`{"_id": {"$numberInt":"2"},"a": {"$numberInt":"30"},"ik": {"tags": "z"}}`},
		{"returnKey", docsString(findAll(t, coll, bson.D{{Key: "a", Value: bson.D{{Key: "$gt", Value: 0}}}}, options.Find().SetReturnKey(true).SetProjection(bson.D{{Key: "a", Value: 1}}))),
			`{"a": {"$numberInt":"10"},"b": {"$numberInt":"20"}} {"a": {"$numberInt":"30"},"b": {"$numberInt":"40"}}`},
		{"returnKey, sorted by another field", docsString(findAll(t, coll, bson.D{{Key: "a", Value: bson.D{{Key: "$gt", Value: 0}}}}, options.Find().SetReturnKey(true).SetSort(bson.D{{Key: "h", Value: -1}}))),
			`{"a": {"$numberInt":"30"},"b": {"$numberInt":"40"}} {"a": {"$numberInt":"10"},"b": {"$numberInt":"20"}}`},
		{"returnKey, collection scan", docsString(findAll(t, coll, bson.D{}, options.Find().SetReturnKey(true))), `{} {} {}`},
		{"returnKey, one _id", docsString(findAll(t, coll, bson.D{{Key: "_id", Value: 2}}, options.Find().SetReturnKey(true))), `{"_id": {"$numberInt":"2"}}`},
		{"returnKey, sorted by _id (the whole _id index)", docsString(findAll(t, coll, bson.D{}, options.Find().SetReturnKey(true).SetSort(bson.D{{Key: "_id", Value: -1}}))),
			`{"_id": {"$numberInt":"3"}} {"_id": {"$numberInt":"2"}} {"_id": {"$numberInt":"1"}}`},
		{"returnKey, _id range", docsString(findAll(t, coll, bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: 2}}}}, options.Find().SetReturnKey(true))), `{"_id": {"$numberInt":"2"}} {"_id": {"$numberInt":"3"}}`},
		{"returnKey, $or", docsString(findAll(t, coll, bson.D{{Key: "$or", Value: bson.A{bson.D{{Key: "a", Value: 10}}, bson.D{{Key: "tags", Value: "z"}}}}}, options.Find().SetReturnKey(true))),
			`{"a": {"$numberInt":"10"},"b": {"$numberInt":"20"}} {"tags": "z"}`},
	} {
		if tc.got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, tc.got, tc.want)
		}
	}
	raw, err := client.Database("indexkeys").RunCommand(ctx, bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "a", Value: 10}}}, {Key: "returnKey", Value: true}}}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if stage := raw.Lookup("queryPlanner", "winningPlan", "stage").StringValue(); stage != "RETURN_KEY" {
		t.Errorf("explain of returnKey: %s", raw.Lookup("queryPlanner", "winningPlan"))
	}
	_, err = coll.Aggregate(ctx, mongo.Pipeline{{{Key: "$sort", Value: bson.D{{Key: "k", Value: bson.D{{Key: "$meta", Value: "indexKey"}}}}}}})
	requireCode(t, err, 31138, "")
}

// TestDBRefIndexKey: a key path may name a DBRef's fields ($ref, $id, $db)
// after its first part, as validateKeyPattern allows; the index serves an
// equality on them (jstests/core/write/update/update_arraymatch8.js).
func TestDBRefIndexKey(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	coll := client.Database("dbrefkeys").Collection("c")
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "owner.$id", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "owner", Value: bson.D{{Key: "$ref", Value: "users"}, {Key: "$id", Value: 7}}}},
		bson.D{{Key: "_id", Value: 2}, {Key: "owner", Value: bson.D{{Key: "$ref", Value: "users"}, {Key: "$id", Value: 8}}}},
	}); err != nil {
		t.Fatal(err)
	}
	filter := bson.D{{Key: "owner.$id", Value: 8}}
	var got []bson.M
	cur, err := coll.Find(ctx, filter)
	if err == nil {
		err = cur.All(ctx, &got)
	}
	if err != nil || len(got) != 1 || got[0]["_id"] != int32(2) {
		t.Fatalf("find by owner.$id: %v, %v", got, err)
	}
	var plan bson.Raw
	if plan, err = client.Database("dbrefkeys").RunCommand(ctx, bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: filter}}}}).Raw(); err != nil {
		t.Fatal(err)
	}
	if s := plan.Lookup("queryPlanner", "winningPlan").String(); !strings.Contains(s, "owner.$id_1") {
		t.Fatalf("winning plan %s, want the owner.$id_1 index", s)
	}
}

// TestAmbiguousNumericFieldIndexKey follows update_numeric_field_name.js:
// with an index on a.0.c, a document in which "0" both indexes a's first
// element and names a field of one of a's embedded documents is refused
// with 16746 (btree_key_generator.cpp), on update and insert, and the
// stored document stays as it was.
func TestAmbiguousNumericFieldIndexKey(t *testing.T) {
	client, _ := startServer(t)
	coll := client.Database(testDB).Collection("numeric_field_name")
	ctx := t.Context()
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 0}, {Key: "a", Value: bson.A{bson.D{}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a.0.c", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	ambiguous := func(err error) bool {
		var we mongo.WriteException
		return errors.As(err, &we) && len(we.WriteErrors) == 1 && we.WriteErrors[0].Code == 16746 &&
			strings.HasPrefix(we.WriteErrors[0].Message, "Ambiguous field name found in array")
	}
	for _, path := range []string{"a.0.0", "a.0.0.b"} {
		_, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 0}}, bson.D{{Key: "$set", Value: bson.D{{Key: path, Value: 1}}}})
		if !ambiguous(err) {
			t.Fatalf("$set %s: %v, want 16746", path, err)
		}
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: bson.A{bson.D{{Key: "0", Value: 1}}}}}); !ambiguous(err) {
		t.Fatalf("insert: %v, want 16746", err)
	}
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 0}}, bson.D{{Key: "$set", Value: bson.D{{Key: "a.1.b.0.0", Value: 1}}}}); err != nil {
		t.Fatalf("$set a.1.b.0.0: %v", err)
	}
	var got bson.Raw
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: 0}}).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if want := `{"_id": {"$numberInt":"0"},"a": [{},{"b": {"0": {"0": {"$numberInt":"1"}}}}]}`; got.String() != want {
		t.Fatalf("stored %s, want %s", got, want)
	}
}

// TestReturnKeyCovered: a returnKey find reads only index keys when its
// index decides the filter and gives the sort (return_key.js): MongoDB's
// plan is RETURN_KEY over the IXSCAN, with no FETCH and no document
// examined; a sort on another field, a filter the keys do not decide, or
// a sortKey field needs the documents.
func TestReturnKeyCovered(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("returnkeycovered")
	coll := db.Collection("c")
	if _, err := coll.InsertMany(ctx, []any{
		bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 3}},
		bson.D{{Key: "a", Value: 2}, {Key: "b", Value: 2}},
		bson.D{{Key: "a", Value: 3}, {Key: "b", Value: 1}},
	}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b"} {
		if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: k, Value: 1}}}); err != nil {
			t.Fatal(err)
		}
	}
	chain := func(plan bson.Raw) string {
		var names []string
		for plan != nil {
			names = append(names, plan.Lookup("stage").StringValue())
			plan, _ = plan.Lookup("inputStage").DocumentOK()
		}
		return strings.Join(names, " ")
	}
	for _, tc := range []struct {
		name     string
		find     bson.D
		want     string // the winning plan's stages, top down
		docs     string
		docsExam int32
	}{
		{"index order", bson.D{{Key: "hint", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "sort", Value: bson.D{{Key: "a", Value: -1}}}}, "RETURN_KEY IXSCAN", `{"a": {"$numberInt":"3"}} {"a": {"$numberInt":"2"}} {"a": {"$numberInt":"1"}}`, 0},
		{"range", bson.D{{Key: "filter", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$gte", Value: 2}}}}}}, "RETURN_KEY IXSCAN", `{"a": {"$numberInt":"2"}} {"a": {"$numberInt":"3"}}`, 0},
		{"in-memory sort", bson.D{{Key: "hint", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "sort", Value: bson.D{{Key: "b", Value: 1}}}}, "RETURN_KEY SORT FETCH IXSCAN", `{"a": {"$numberInt":"3"}} {"a": {"$numberInt":"2"}} {"a": {"$numberInt":"1"}}`, 3},
		{"filter beyond the keys", bson.D{{Key: "filter", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$gte", Value: 2}}}, {Key: "b", Value: 1}}}, {Key: "hint", Value: bson.D{{Key: "a", Value: 1}}}}, "RETURN_KEY FETCH IXSCAN", `{"a": {"$numberInt":"3"}}`, 2},
		{"sortKey field", bson.D{{Key: "filter", Value: bson.D{{Key: "a", Value: 2}}}, {Key: "sort", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "projection", Value: bson.D{{Key: "k", Value: bson.D{{Key: "$meta", Value: "sortKey"}}}}}}, "RETURN_KEY FETCH IXSCAN", `{"a": {"$numberInt":"2"},"k": [{"$numberInt":"2"}]}`, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			find := append(bson.D{{Key: "find", Value: "c"}, {Key: "returnKey", Value: true}}, tc.find...)
			var reply struct {
				Cursor struct {
					FirstBatch []bson.Raw `bson:"firstBatch"`
				} `bson:"cursor"`
			}
			if err := db.RunCommand(ctx, find).Decode(&reply); err != nil {
				t.Fatal(err)
			}
			if got := docsString(reply.Cursor.FirstBatch); got != tc.docs {
				t.Errorf("documents %s, want %s", got, tc.docs)
			}
			ex, err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: find}, {Key: "verbosity", Value: "executionStats"}}).Raw()
			if err != nil {
				t.Fatal(err)
			}
			if got := chain(ex.Lookup("queryPlanner", "winningPlan").Document()); got != tc.want {
				t.Errorf("plan %s, want %s", got, tc.want)
			}
			if got := ex.Lookup("executionStats", "totalDocsExamined").Int32(); got != tc.docsExam {
				t.Errorf("totalDocsExamined %d, want %d", got, tc.docsExam)
			}
		})
	}
}
