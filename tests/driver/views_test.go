package driver_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestViews: a view (and a view on it) reads as its expanded aggregation
// through find, count, distinct and aggregate; listCollections reports it;
// writes and index commands fail with 166; cycles and bad pipelines are
// refused; collMod changes it and drop removes it.
func TestViews(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("views")
	if err := db.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	orders := db.Collection("orders")
	var docs []any
	for i := range 20 {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "cust", Value: []string{"ann", "bob", "cy"}[i%3]}, {Key: "amount", Value: i * 10}, {Key: "tags", Value: bson.A{"t" + string(rune('a'+i%2)), "all"}}})
	}
	if _, err := orders.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	big := bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "amount", Value: bson.D{{Key: "$gte", Value: 50}}}}}}, bson.D{{Key: "$project", Value: bson.D{{Key: "cust", Value: 1}, {Key: "amount", Value: 1}, {Key: "tags", Value: 1}}}}}
	if err := db.CreateView(ctx, "big", "orders", big); err != nil {
		t.Fatal(err)
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "create", Value: "bigbob"}, {Key: "viewOn", Value: "big"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "cust", Value: "bob"}}}}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	view := db.Collection("big")
	// find, with filter, sort, skip, limit and projection, equals the
	// expanded aggregation
	got := findAll(t, view, bson.D{{Key: "cust", Value: "ann"}}, options.Find().SetSort(bson.D{{Key: "amount", Value: -1}}).SetSkip(1).SetLimit(2).SetProjection(bson.D{{Key: "amount", Value: 1}}))
	expanded := append(append(bson.A{}, big...),
		bson.D{{Key: "$match", Value: bson.D{{Key: "cust", Value: "ann"}}}},
		bson.D{{Key: "$sort", Value: bson.D{{Key: "amount", Value: -1}}}},
		bson.D{{Key: "$skip", Value: 1}}, bson.D{{Key: "$limit", Value: 2}},
		bson.D{{Key: "$project", Value: bson.D{{Key: "amount", Value: 1}}}})
	cur, err := orders.Aggregate(ctx, expanded)
	if err != nil {
		t.Fatal(err)
	}
	var want []bson.Raw
	if err := cur.All(ctx, &want); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || len(got) != len(want) || got[0].String() != want[0].String() || got[1].String() != want[1].String() {
		t.Errorf("find on the view: %v, want %v", got, want)
	}
	if n, err := view.CountDocuments(ctx, bson.D{{Key: "cust", Value: "bob"}}); err != nil || n != 5 {
		t.Errorf("countDocuments on the view: %d %v", n, err)
	}
	if n, err := db.RunCommand(ctx, bson.D{{Key: "count", Value: "big"}, {Key: "query", Value: bson.D{{Key: "cust", Value: "cy"}}}}).Raw(); err != nil || n.Lookup("n").Int32() != 5 {
		t.Errorf("count on the view: %v %v", n, err)
	}
	vals := view.Distinct(ctx, "tags", bson.D{{Key: "cust", Value: "bob"}})
	var tags []string
	if err := vals.Decode(&tags); err != nil || len(tags) != 3 {
		t.Errorf("distinct on the view: %v %v", tags, err)
	}
	// findOne (limit 1, singleBatch) works on a view
	var one bson.Raw
	if err := view.FindOne(ctx, bson.D{{Key: "cust", Value: "cy"}}, options.FindOne().SetSort(bson.D{{Key: "amount", Value: 1}})).Decode(&one); err != nil || one.Lookup("amount").Int32() != 50 {
		t.Errorf("findOne on the view: %v %v", one, err)
	}
	// a view on the view
	if n, err := db.Collection("bigbob").CountDocuments(ctx, bson.D{}); err != nil || n != 5 {
		t.Errorf("view on a view: %d %v", n, err)
	}
	agg, err := db.Collection("bigbob").Aggregate(ctx, mongo.Pipeline{{{Key: "$group", Value: bson.D{{Key: "_id", Value: nil}, {Key: "total", Value: bson.D{{Key: "$sum", Value: "$amount"}}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	var sums []bson.Raw
	if err := agg.All(ctx, &sums); err != nil || len(sums) != 1 || sums[0].Lookup("total").Int32() != 70+100+130+160+190 {
		t.Errorf("aggregate on a view on a view: %v %v", sums, err)
	}
	// $lookup and $unionWith read views
	lk, err := orders.Aggregate(ctx, mongo.Pipeline{
		{{Key: "$match", Value: bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: bson.A{1, 7}}}}}}},
		{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "bigbob"}, {Key: "localField", Value: "_id"}, {Key: "foreignField", Value: "_id"}, {Key: "as", Value: "inView"}}}},
		{{Key: "$project", Value: bson.D{{Key: "n", Value: bson.D{{Key: "$size", Value: "$inView"}}}}}},
		{{Key: "$unionWith", Value: bson.D{{Key: "coll", Value: "bigbob"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$count", Value: "n"}}}}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var joined []bson.Raw
	if err := lk.All(ctx, &joined); err != nil {
		t.Fatal(err)
	}
	if len(joined) != 3 || joined[0].Lookup("n").Int32() != 0 || joined[1].Lookup("n").Int32() != 1 || joined[2].Lookup("n").Int32() != 5 {
		t.Errorf("$lookup and $unionWith of a view: %v", joined)
	}
	// listCollections
	specs, err := db.ListCollectionSpecifications(ctx, bson.D{{Key: "type", Value: "view"}})
	if err != nil || len(specs) != 2 || specs[0].Name != "big" || specs[0].Type != "view" || specs[0].Options.Lookup("viewOn").StringValue() != "orders" || !specs[0].ReadOnly {
		t.Errorf("listCollections views: %+v %v", specs, err)
	}
	// refusals
	for _, tc := range []struct {
		name string
		cmd  bson.D
		code int
	}{
		{"findAndModify", bson.D{{Key: "findAndModify", Value: "big"}, {Key: "remove", Value: true}}, 166},
		{"createIndexes", bson.D{{Key: "createIndexes", Value: "big"}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "a_1"}}}}}, 166},
		{"listIndexes", bson.D{{Key: "listIndexes", Value: "big"}}, 166},
		{"cycle", bson.D{{Key: "collMod", Value: "big"}, {Key: "viewOn", Value: "bigbob"}, {Key: "pipeline", Value: bson.A{}}}, 5},
		{"bad pipeline", bson.D{{Key: "create", Value: "bad"}, {Key: "viewOn", Value: "orders"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$bogus", Value: 1}}}}}, 40324},
		{"$out in a view", bson.D{{Key: "create", Value: "bad"}, {Key: "viewOn", Value: "orders"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$out", Value: "x"}}}}}, 167},
		{"existing name", bson.D{{Key: "create", Value: "big"}, {Key: "viewOn", Value: "orders"}}, 48},
		{"capped view", bson.D{{Key: "create", Value: "bad"}, {Key: "viewOn", Value: "orders"}, {Key: "capped", Value: true}}, 72},
		{"noCursorTimeout", bson.D{{Key: "find", Value: "big"}, {Key: "noCursorTimeout", Value: true}}, 168},
		{"singleBatch", bson.D{{Key: "find", Value: "big"}, {Key: "singleBatch", Value: true}}, 168},
		{"tailable", bson.D{{Key: "find", Value: "big"}, {Key: "tailable", Value: true}}, 168},
		{"allowPartialResults", bson.D{{Key: "find", Value: "big"}, {Key: "allowPartialResults", Value: true}}, 168},
		{"$natural sort", bson.D{{Key: "find", Value: "big"}, {Key: "sort", Value: bson.D{{Key: "$natural", Value: 1}}}}, 168},
		{"view named system.foo", bson.D{{Key: "create", Value: "system.foo"}, {Key: "viewOn", Value: "orders"}}, 73},
		{"view named with a $", bson.D{{Key: "create", Value: "dollar$"}, {Key: "viewOn", Value: "orders"}}, 73},
		{"view named system.views", bson.D{{Key: "create", Value: "system.views"}, {Key: "viewOn", Value: "orders"}}, 73},
		{"view named system.profile", bson.D{{Key: "create", Value: "system.profile"}, {Key: "viewOn", Value: "orders"}}, 20},
		{"view on buckets", bson.D{{Key: "create", Value: "bad"}, {Key: "viewOn", Value: "system.buckets.orders"}}, 73},
		{"mapReduce", bson.D{{Key: "mapReduce", Value: "big"}, {Key: "map", Value: bson.JavaScript("function(){emit(1,1)}")}, {Key: "reduce", Value: bson.JavaScript("function(k,v){return 1}")}, {Key: "out", Value: bson.D{{Key: "inline", Value: 1}}}}, 166},
		{"validate", bson.D{{Key: "validate", Value: "big"}}, 166},
		{"applyOps", bson.D{{Key: "applyOps", Value: bson.A{bson.D{{Key: "op", Value: "i"}, {Key: "ns", Value: "views.big"}, {Key: "o", Value: bson.D{{Key: "_id", Value: 1}}}}}}}, 166},
		{"collMod of nothing", bson.D{{Key: "collMod", Value: "nothere"}, {Key: "viewOn", Value: "orders"}, {Key: "pipeline", Value: bson.A{}}}, 26},
		{"change stream", bson.D{{Key: "aggregate", Value: "big"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$changeStream", Value: bson.D{}}}}}, {Key: "cursor", Value: bson.D{}}}, 166},
	} {
		want := tc.code
		if testAuth() && (tc.name == "view named system.foo" || tc.name == "view named system.views") {
			// root may not create system collections other than a few:
			// refused before create looks at the name, as MongoDB's
			want = 13
		}
		if got := serverCode(db.RunCommand(ctx, tc.cmd).Err()); got != want {
			t.Errorf("%s: code %d, want %d", tc.name, got, want)
		}
	}
	// insert, update and delete fail each statement as it acquires the
	// collection: write errors of an ok reply (write_ops_exec.cpp), an
	// unordered batch trying every statement
	for _, cmd := range []bson.D{
		{{Key: "insert", Value: "big"}, {Key: "documents", Value: bson.A{bson.D{}, bson.D{}}}, {Key: "ordered", Value: false}},
		{{Key: "update", Value: "big"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 1}}}}}}}}},
		{{Key: "delete", Value: "big"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "limit", Value: 0}}}}},
	} {
		err := db.RunCommand(ctx, cmd).Err()
		var we mongo.WriteException
		want := 1
		if cmd[0].Key == "insert" {
			want = 2
		}
		if !errors.As(err, &we) || len(we.WriteErrors) != want || we.WriteErrors[0].Code != 166 {
			t.Errorf("%s on a view: %v, want %d write errors of code 166", cmd[0].Key, err, want)
		}
	}
	if _, err := db.Collection("big").InsertOne(ctx, bson.D{}); serverCode(err) != 166 {
		t.Errorf("InsertOne on a view: %v, want 166", err)
	}
	// collMod replaces the definition
	if err := db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "big"}, {Key: "viewOn", Value: "orders"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "amount", Value: bson.D{{Key: "$gte", Value: 150}}}}}}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := view.CountDocuments(ctx, bson.D{}); err != nil || n != 5 {
		t.Errorf("after collMod: %d %v", n, err)
	}
	// the pipeline alone: the source stays (with access control on,
	// MongoDB asks for both); a null viewOn changes nothing, a null
	// pipeline (an IDL array<object>, read with BSONElement::Obj()) fails
	pipelineOnly := bson.D{{Key: "collMod", Value: "big"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "amount", Value: bson.D{{Key: "$gte", Value: 170}}}}}}}}}
	err = db.RunCommand(ctx, pipelineOnly).Err()
	if testAuth() {
		if serverCode(err) != 72 {
			t.Errorf("collMod of a view's pipeline alone under access control: %v, want 72", err)
		}
	} else if n, cerr := view.CountDocuments(ctx, bson.D{}); err != nil || cerr != nil || n != 3 {
		t.Errorf("after collMod of the pipeline: %d %v %v", n, err, cerr)
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "big"}, {Key: "viewOn", Value: nil}}).Err(); err != nil {
		t.Errorf("collMod of a view with a null viewOn: %v", err)
	}
	err = db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "big"}, {Key: "viewOn", Value: nil}, {Key: "pipeline", Value: nil}}).Err()
	requireCode(t, err, 10065, "Location10065")
	// drop removes the view, not its collection
	if err := view.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	names, err := db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	// the collections, then the views (TestListCollectionsOrder)
	if len(names) != 3 || names[0] != "orders" || names[1] != "system.views" || names[2] != "bigbob" {
		t.Errorf("collections after the drop: %v", names)
	}
}

// TestViewNamesAreNotShadowed: no command makes a collection of a view's
// name, which would shadow the view: create refuses it (NamespaceExists,
// naming a time series collection as such), mapReduce does not write into
// it (CommandNotSupportedOnView).
func TestViewNamesAreNotShadowed(t *testing.T) {
	client, _ := startServer(t)
	ctx := t.Context()
	db := client.Database(testDB)
	if _, err := db.Collection("a").InsertOne(ctx, bson.D{{Key: "x", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []bson.D{
		{{Key: "create", Value: "v"}, {Key: "viewOn", Value: "a"}, {Key: "pipeline", Value: bson.A{}}},
		{{Key: "create", Value: "ts"}, {Key: "timeseries", Value: bson.D{{Key: "timeField", Value: "t"}}}},
	} {
		if err := db.RunCommand(ctx, cmd).Err(); err != nil {
			t.Fatal(err)
		}
	}
	err := db.RunCommand(ctx, bson.D{{Key: "create", Value: "v"}}).Err()
	requireCode(t, err, 48, "NamespaceExists")
	if !strings.Contains(err.Error(), "A view already exists. NS: "+testDB+".v") {
		t.Errorf("create over a view: %v", err)
	}
	err = db.RunCommand(ctx, bson.D{{Key: "create", Value: "ts"}}).Err()
	if requireCode(t, err, 48, "NamespaceExists"); !strings.Contains(err.Error(), "A timeseries collection already exists") {
		t.Errorf("create over a time series collection: %v", err)
	}
	for _, out := range []any{"v", bson.D{{Key: "merge", Value: "v"}}} {
		err = db.RunCommand(ctx, bson.D{{Key: "mapReduce", Value: "a"}, {Key: "map", Value: bson.JavaScript("function() { emit(1, 1) }")},
			{Key: "reduce", Value: bson.JavaScript("function(k, v) { return 1 }")}, {Key: "out", Value: out}}).Err()
		requireCode(t, err, 166, "CommandNotSupportedOnView")
	}
	names, err := db.ListCollectionNames(ctx, bson.D{{Key: "name", Value: bson.D{{Key: "$in", Value: bson.A{"v", "ts"}}}}})
	if slices.Sort(names); err != nil || !slices.Equal(names, []string{"ts", "v"}) {
		t.Fatalf("namespaces v and ts: %v (%v), want one each", names, err)
	}
}

// TestViewDistinctPaths: a distinct on a view reads the values at its key
// as a distinct on a collection does (arrays on the way traversed, a
// trailing array expanded, a numeric part indexing), so that a view with
// an empty pipeline answers as its collection
// (jstests/core/views/views_distinct_with_arrays.js).
func TestViewDistinctPaths(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	coll := db.Collection("vdp")
	if _, err := coll.InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: bson.A{bson.D{{Key: "b", Value: 1}}, bson.D{{Key: "b", Value: 2}}}}},
		bson.D{{Key: "_id", Value: 2}, {Key: "a", Value: bson.D{{Key: "b", Value: bson.A{3, bson.A{4}}}}}},
		bson.D{{Key: "_id", Value: 3}, {Key: "a", Value: bson.A{bson.A{bson.D{{Key: "b", Value: 5}}}}}},
		bson.D{{Key: "_id", Value: 4}, {Key: "x", Value: bson.A{1, bson.A{2}}}},
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateView(ctx, "vdpv", "vdp", bson.A{}); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"a.b", "a", "x", "a.0.b", "a.0", "nothere"} {
		var want, got []bson.RawValue
		if err := coll.Distinct(ctx, key, bson.D{}).Decode(&want); err != nil {
			t.Fatal(err)
		}
		if err := db.Collection("vdpv").Distinct(ctx, key, bson.D{{Key: "_id", Value: bson.D{{Key: "$lt", Value: 10}}}}).Decode(&got); err != nil {
			t.Fatal(err)
		}
		sorted := func(vs []bson.RawValue) []string {
			out := make([]string, len(vs))
			for i, v := range vs {
				out[i] = v.String()
			}
			slices.Sort(out)
			return out
		}
		if w, g := sorted(want), sorted(got); !slices.Equal(w, g) {
			t.Errorf("distinct %q on the view: %v, on the collection %v", key, g, w)
		}
	}
}

// TestViewCollStatsStopsResolution: resolving a view stops at a view
// whose pipeline starts with $collStats, which then describes the
// namespace that view is on, itself a view or not, as MongoDB's
// view_catalog_helpers::resolveView returns early
// (jstests/core/views/views_coll_stats.js).
func TestViewCollStatsStopsResolution(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	collStats := bson.D{{Key: "$collStats", Value: bson.D{{Key: "latencyStats", Value: bson.D{}}}}}
	if err := db.CreateView(ctx, "csa", "csb", bson.A{collStats, bson.D{{Key: "$match", Value: bson.D{}}}}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateView(ctx, "csb", "csc", bson.A{collStats}); err != nil {
		t.Fatal(err)
	}
	for view, want := range map[string]string{"csa": "csb", "csb": "csc"} {
		cur, err := db.Collection(view).Aggregate(ctx, bson.A{})
		if err != nil {
			t.Fatalf("aggregate on %s: %v", view, err)
		}
		var docs []bson.Raw
		if err := cur.All(ctx, &docs); err != nil {
			t.Fatalf("aggregate on %s: %v", view, err)
		}
		if len(docs) != 1 || docs[0].Lookup("ns").StringValue() != testDB+"."+want {
			t.Errorf("aggregate on %s: %v, want the latencyStats of %s", view, docs, want)
		}
	}
}

// TestViewTextAfterMatch: a find on $text over a view whose pipeline ends
// with a $match fails with 17313, as MongoDB checks the place of a $match
// on $text when it parses the resolved pipeline, before its optimizer joins
// adjacent $match stages; over a view with an empty pipeline it searches.
func TestViewTextAfterMatch(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	coll := db.Collection("vtext")
	if _, err := coll.InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 1}, {Key: "t", Value: "hello world"}}, bson.D{{Key: "_id", Value: 2}, {Key: "t", Value: "bye"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "t", Value: "text"}}}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateView(ctx, "vtextm", "vtext", bson.A{bson.D{{Key: "$match", Value: bson.D{}}}}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateView(ctx, "vtexti", "vtext", bson.A{}); err != nil {
		t.Fatal(err)
	}
	text := bson.D{{Key: "$text", Value: bson.D{{Key: "$search", Value: "hello"}}}}
	for _, filter := range []bson.D{text, {{Key: "$and", Value: bson.A{text}}}} {
		err := db.RunCommand(ctx, bson.D{{Key: "find", Value: "vtextm"}, {Key: "filter", Value: filter}}).Err()
		requireCode(t, err, 17313, "Location17313")
	}
	cur, err := db.Collection("vtexti").Find(ctx, text)
	if err != nil {
		t.Fatal(err)
	}
	var docs []bson.Raw
	if err := cur.All(ctx, &docs); err != nil || len(docs) != 1 || docs[0].Lookup("_id").Int32() != 1 {
		t.Errorf("$text over an identity view: %v %v", docs, err)
	}
}

// TestViewSearchReadBySubPipeline: a view whose first stage is a $geoNear
// or a $text $match reads, through $lookup, $unionWith and $graphLookup,
// as an aggregate on it does: MongoDB resolves the view into the stage's
// sub-pipeline, the view's stages first (a $lookup's equality match and a
// $graphLookup's match after them), so the view's search runs on its
// collection, and the sub-pipeline's stages may read the $text scores; an
// explain that runs the pipeline reads the views alike. A $geoNear of the
// sub-pipeline's own is then not first (40602).
func TestViewSearchReadBySubPipeline(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	pts, local := db.Collection("vsearch_pts"), db.Collection("vsearch_local")
	if _, err := pts.Indexes().CreateMany(ctx, []mongo.IndexModel{{Keys: doc("loc", "2d")}, {Keys: doc("s", "text")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := pts.InsertMany(ctx, []any{
		doc("_id", 1, "loc", bson.A{5, 5}, "k", 1, "s", "red apple"), doc("_id", 2, "loc", bson.A{1, 1}, "k", 1, "s", "green pear"),
		doc("_id", 3, "loc", bson.A{3, 3}, "k", 2, "s", "red car"),
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := local.InsertMany(ctx, []any{doc("_id", "a", "k", 1), doc("_id", "b", "k", 2)}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateView(ctx, "vsearch_near", "vsearch_pts", bson.A{doc("$geoNear", doc("near", bson.A{0, 0}, "distanceField", "d"))}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateView(ctx, "vsearch_red", "vsearch_pts", bson.A{doc("$match", doc("$text", doc("$search", "red")))}); err != nil {
		t.Fatal(err)
	}
	matched := func(pipeline bson.A) string {
		var out []string
		for _, d := range aggregateAll(t, local, pipeline) {
			out = append(out, d.Lookup("_id").StringValue()+":"+d.Lookup("r").String())
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		view, want string
	}{
		{"vsearch_near", `a:[{"$numberInt":"2"},{"$numberInt":"1"}] b:[{"$numberInt":"3"}]`},
		{"vsearch_red", `a:[{"$numberInt":"1"}] b:[{"$numberInt":"3"}]`},
	} {
		lookup := bson.A{doc("$lookup", doc("from", c.view, "localField", "k", "foreignField", "k", "as", "r")), doc("$set", doc("r", "$r._id"))}
		if got := matched(lookup); got != c.want {
			t.Errorf("$lookup of %s: %s, want %s", c.view, got, c.want)
		}
		lookup = bson.A{doc("$lookup", doc("from", c.view, "let", doc("k", "$k"), "pipeline", bson.A{doc("$match", doc("$expr", doc("$eq", bson.A{"$k", "$$k"})))}, "as", "r")), doc("$set", doc("r", "$r._id"))}
		if got := matched(lookup); got != c.want {
			t.Errorf("$lookup with a pipeline of %s: %s, want %s", c.view, got, c.want)
		}
		graph := bson.A{doc("$graphLookup", doc("from", c.view, "startWith", "$k", "connectFromField", "k", "connectToField", "k", "as", "r")),
			doc("$set", doc("r", doc("$sortArray", doc("input", "$r._id", "sortBy", 1))))}
		want := strings.ReplaceAll(c.want, `{"$numberInt":"2"},{"$numberInt":"1"}`, `{"$numberInt":"1"},{"$numberInt":"2"}`)
		if got := matched(graph); got != want {
			t.Errorf("$graphLookup of %s: %s, want %s", c.view, got, want)
		}
	}
	union := aggregateAll(t, local, bson.A{doc("$match", doc("_id", "none")), doc("$unionWith", "vsearch_near")})
	if got := ids(union); !slices.Equal(got, []string{"2", "3", "1"}) {
		t.Errorf("$unionWith of the $geoNear view: %v", got)
	}
	// An explain that runs the pipeline reads the view as the aggregate does.
	for _, verbosity := range []string{"executionStats", "allPlansExecution"} {
		raw, err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: bson.D{{Key: "aggregate", Value: "vsearch_local"},
			{Key: "pipeline", Value: bson.A{doc("$match", doc("_id", "none")), doc("$unionWith", "vsearch_near")}}, {Key: "cursor", Value: bson.D{}}}},
			{Key: "verbosity", Value: verbosity}}).Raw()
		if err != nil {
			t.Fatalf("explain %s of a $unionWith of the $geoNear view: %v", verbosity, err)
		}
		stages, _ := raw.Lookup("stages").Array().Values()
		if n := len(stages); n != 2 || stages[1].Document().Lookup("nReturned").AsInt64() != 3 {
			t.Errorf("explain %s of a $unionWith of the $geoNear view: %s", verbosity, raw)
		}
	}
	// The view's $text search comes first: the sub-pipeline reads its scores.
	scored := aggregateAll(t, local, bson.A{doc("$match", doc("_id", "none")),
		doc("$unionWith", doc("coll", "vsearch_red", "pipeline", bson.A{doc("$project", doc("sc", doc("$meta", "textScore")))}))})
	if len(scored) != 2 || scored[0].Lookup("sc").Double() <= 0 || scored[1].Lookup("sc").Double() <= 0 {
		t.Errorf("$unionWith reading the text scores of the $text view: %s", docsString(scored))
	}
	_, err := local.Aggregate(ctx, bson.A{doc("$lookup", doc("from", "vsearch_near", "pipeline", bson.A{doc("$geoNear", doc("near", bson.A{0, 0}, "distanceField", "e"))}, "as", "r"))})
	requireCode(t, err, 40602, "Location40602")
}

// TestViewFailingConstant: MongoDB checks a view's pipeline by parsing it
// (view_catalog_helpers::validatePipeline), not optimizing it, so a
// constant expression that fails is accepted, and fails the reads of the
// view, whose pipeline is optimized.
func TestViewFailingConstant(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("viewconst")
	if err := db.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	pipeline := bson.A{bson.D{{Key: "$project", Value: bson.D{{Key: "f", Value: bson.D{{Key: "$concatArrays", Value: bson.A{123}}}}}}}}
	if err := db.CreateView(ctx, "v", "c", pipeline); err != nil {
		t.Fatal(err)
	}
	_, err := db.Collection("v").Find(ctx, bson.D{})
	requireError(t, err, 28664, "", "Failed to optimize pipeline :: caused by :: $concatArrays only supports arrays, not int")
}

// TestInvalidViewCatalog: while system.views holds a definition MongoDB's
// view catalog does not load (here a collation that does not parse), a
// command naming a collection that does not exist fails with
// InvalidViewDefinition (182), as CollectionCatalog::lookupView checks the
// catalog before looking the name up, while commands on collections still
// run; removing the definition restores the views.
func TestInvalidViewCatalog(t *testing.T) {
	client, in := startServer(t)
	ctx := context.Background()
	db := client.Database("invalidviewcatalog")
	if _, err := db.Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateView(ctx, "v", "c", bson.A{}); err != nil {
		t.Fatal(err)
	}
	bad := bson.D{{Key: "_id", Value: "invalidviewcatalog.bad"}, {Key: "viewOn", Value: "c"}, {Key: "pipeline", Value: bson.A{}}, {Key: "collation", Value: bson.D{{Key: "locale", Value: "xx"}}}}
	applier := anyActionClient(t, client, in)
	apply := func(op bson.D) {
		t.Helper()
		if err := applier.Database("admin").RunCommand(ctx, bson.D{{Key: "applyOps", Value: bson.A{op}}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	apply(bson.D{{Key: "op", Value: "i"}, {Key: "ns", Value: "invalidviewcatalog.system.views"}, {Key: "o", Value: bad}})
	for _, cmd := range []bson.D{
		{{Key: "listCollections", Value: 1}},
		{{Key: "find", Value: "missing"}},
		{{Key: "find", Value: "v"}},
		{{Key: "count", Value: "v"}},
		{{Key: "create", Value: "newcoll"}},
	} {
		var se mongo.ServerError
		if err := db.RunCommand(ctx, cmd).Err(); !errors.As(err, &se) || !se.HasErrorCode(182) {
			t.Errorf("%v: %v, want InvalidViewDefinition", cmd, err)
		}
	}
	if n, err := db.Collection("c").CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
		t.Errorf("count on the collection: %d, %v", n, err)
	}
	// a missing name is dropped as MongoDB drops it, a view's drop fails
	if err := db.Collection("missing").Drop(ctx); err != nil {
		t.Errorf("drop of a missing name: %v", err)
	}
	var se mongo.ServerError
	if err := db.Collection("v").Drop(ctx); !errors.As(err, &se) || !se.HasErrorCode(182) {
		t.Errorf("drop of a view: %v, want InvalidViewDefinition", err)
	}
	// an insert into a collection that does not exist fails its statement
	_, err := db.Collection("missing").InsertOne(ctx, bson.D{})
	var we mongo.WriteException
	if !errors.As(err, &we) || len(we.WriteErrors) != 1 || we.WriteErrors[0].Code != 182 {
		t.Errorf("insert into a missing collection: %v, want a write error 182", err)
	}
	apply(bson.D{{Key: "op", Value: "d"}, {Key: "ns", Value: "invalidviewcatalog.system.views"}, {Key: "o", Value: bson.D{{Key: "_id", Value: "invalidviewcatalog.bad"}}}})
	if n, err := db.Collection("v").CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
		t.Errorf("count on the view after the removal: %d, %v", n, err)
	}
}

// TestCollModViewOnBuckets: collMod cannot point a view at another
// collection's buckets: InvalidNamespace (73), the view unchanged.
func TestCollModViewOnBuckets(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	if err := db.CreateView(ctx, "vbuckets", "c", bson.A{}); err != nil {
		t.Fatal(err)
	}
	err := db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "vbuckets"}, {Key: "viewOn", Value: "system.buckets.x"}, {Key: "pipeline", Value: bson.A{}}}).Err()
	var se mongo.ServerError
	if !errors.As(err, &se) || !se.HasErrorCode(73) {
		t.Errorf("collMod: %v, want InvalidNamespace", err)
	}
	specs, err := db.ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: "vbuckets"}})
	if err != nil || len(specs) != 1 || specs[0].Options.Lookup("viewOn").StringValue() != "c" {
		t.Errorf("the view after the failed collMod: %v, %v", specs, err)
	}
}

// TestCollModViewUnderAuth: with access control on, a collMod giving
// viewOn without pipeline (or the reverse) fails with InvalidOptions (72)
// and MongoDB's message, as its authorization check (checkAuthForCollMod)
// does before the command looks at the namespace: on a collection too; with
// both it modifies the view.
func TestCollModViewUnderAuth(t *testing.T) {
	root, _ := startAuthServer(t)
	ctx := context.Background()
	db := root.Database(testDB)
	if err := db.CreateView(ctx, "vauth", "c", bson.A{}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateCollection(ctx, "cauth"); err != nil {
		t.Fatal(err)
	}
	const want = "Must specify both 'viewOn' and 'pipeline' when modifying a view and auth is enabled"
	for _, cmd := range []bson.D{
		{{Key: "collMod", Value: "vauth"}, {Key: "viewOn", Value: "d"}},
		{{Key: "collMod", Value: "vauth"}, {Key: "pipeline", Value: bson.A{}}},
		{{Key: "collMod", Value: "cauth"}, {Key: "viewOn", Value: "d"}},
		{{Key: "collMod", Value: "vauth"}, {Key: "viewOn", Value: "d"}, {Key: "validator", Value: bson.D{}}},
	} {
		err := db.RunCommand(ctx, cmd).Err()
		var se mongo.CommandError
		if !errors.As(err, &se) || se.Code != 72 || se.Message != want {
			t.Errorf("%v: %v, want 72 %q", cmd, err, want)
		}
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "vauth"}, {Key: "viewOn", Value: "d"}, {Key: "pipeline", Value: bson.A{}}}).Err(); err != nil {
		t.Errorf("collMod with both: %v", err)
	}
}
