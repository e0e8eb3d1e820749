package driver_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/internal/instance"
)

// TestWildcardIndexes: a wildcard index keys (path, value) for every leaf
// and serves equality, ranges and $exists on any covered path
// (https://www.mongodb.com/docs/v7.0/core/indexes/index-types/index-wildcard/).
func TestWildcardIndexes(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	coll := db.Collection("wild")
	docs := []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}, {Key: "b", Value: bson.D{{Key: "c", Value: "x"}}}},
		bson.D{{Key: "_id", Value: 2}, {Key: "a", Value: bson.A{2, 3, bson.D{{Key: "k", Value: 1}}}}},
		bson.D{{Key: "_id", Value: 3}, {Key: "a", Value: bson.D{}}, {Key: "b", Value: bson.A{}}},
		bson.D{{Key: "_id", Value: 4}, {Key: "b", Value: bson.D{{Key: "c", Value: "y"}, {Key: "d", Value: 5}}}},
		bson.D{{Key: "_id", Value: 5}, {Key: "a", Value: bson.A{bson.A{1, 2}}}},
		bson.D{{Key: "_id", Value: 6}, {Key: "a", Value: nil}},
	}
	if _, err := coll.InsertMany(ctx, docs[:3]); err != nil {
		t.Fatal(err)
	}
	name, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "$**", Value: 1}}})
	if err != nil || name != "$**_1" {
		t.Fatalf("create: %q %v", name, err)
	}
	if _, err := coll.InsertMany(ctx, docs[3:]); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		filter bson.D
		index  bool
		want   []string
	}{
		{bson.D{{Key: "a", Value: 1}}, true, []string{"1"}},
		{bson.D{{Key: "a", Value: 3}}, true, []string{"2"}},
		{bson.D{{Key: "a", Value: bson.D{{Key: "$gte", Value: 1}, {Key: "$lt", Value: 3}}}}, true, []string{"1", "2"}},
		{bson.D{{Key: "a.k", Value: 1}}, true, []string{"2"}},
		{bson.D{{Key: "b.c", Value: bson.D{{Key: "$in", Value: bson.A{"x", "y"}}}}}, true, []string{"1", "4"}},
		{bson.D{{Key: "b", Value: bson.D{{Key: "$exists", Value: true}}}}, true, []string{"1", "3", "4"}},
		{bson.D{{Key: "a", Value: bson.D{{Key: "$exists", Value: true}}}}, true, []string{"1", "2", "3", "5", "6"}},
		{bson.D{{Key: "b.d", Value: bson.D{{Key: "$gt", Value: 1}}}}, true, []string{"4"}},
		// $lte: {} is equality with the empty object, keyed as itself
		// (planner_ixselect's canUseWildcardIndex); $gte: {} is not.
		{bson.D{{Key: "a", Value: bson.D{{Key: "$lte", Value: bson.D{}}}}}, true, []string{"3"}},
		{bson.D{{Key: "a", Value: bson.D{{Key: "$gte", Value: bson.D{}}}}}, false, []string{"2", "3"}},
		{bson.D{{Key: "a", Value: bson.D{{Key: "$elemMatch", Value: bson.D{{Key: "$gte", Value: 2}, {Key: "$lt", Value: 3}}}}}}, true, []string{"2"}},
		// $type bounds the path's values; an object is keyed below it
		// (jstests/core/index/wildcard/wildcard_index_type.js).
		{bson.D{{Key: "a", Value: bson.D{{Key: "$type", Value: "number"}}}}, true, []string{"1", "2"}},
		{bson.D{{Key: "b", Value: bson.D{{Key: "$type", Value: "object"}}}}, true, []string{"1", "4"}},
		{bson.D{{Key: "a", Value: bson.A{1, 2}}}, false, []string{"5"}},
		{bson.D{{Key: "a", Value: nil}}, false, []string{"4", "6"}},
		{bson.D{{Key: "b", Value: bson.D{{Key: "c", Value: "x"}}}}, false, []string{"1"}},
		{bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: 4}}}}, false, []string{"5", "6"}},
	}
	for _, c := range cases {
		find := bson.D{{Key: "find", Value: coll.Name()}, {Key: "filter", Value: c.filter}}
		got, bounds := winningIndex(t, db, find, "$_path")
		if (got == "$**_1") != c.index {
			t.Errorf("%v: plan scans %q", c.filter, got)
		}
		if c.index && (len(bounds) == 0 || !strings.HasPrefix(bounds[0], `["`+c.filter[0].Key+`"`)) {
			t.Errorf("%v: $_path bounds %v", c.filter, bounds)
		}
		ids := ids(findAll(t, coll, c.filter, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}})))
		if !slices.Equal(ids, c.want) {
			t.Errorf("%v: got %v, want %v", c.filter, ids, c.want)
		}
	}
	// $exists on a path holding objects also reads the paths below it.
	_, bounds := winningIndex(t, db, bson.D{{Key: "find", Value: coll.Name()}, {Key: "filter", Value: bson.D{{Key: "b", Value: bson.D{{Key: "$exists", Value: true}}}}}}, "$_path")
	if want := []string{`["b", "b"]`, `["b.", "b/")`}; !slices.Equal(bounds, want) {
		t.Errorf("$exists bounds %v, want %v", bounds, want)
	}
	// A range on a multikey path is not intersected: 2 < a < 3 holds of
	// [2, 3] through different elements.
	got := ids(findAll(t, coll, bson.D{{Key: "a", Value: bson.D{{Key: "$gt", Value: 2}, {Key: "$lt", Value: 3}}}}))
	if !slices.Equal(got, []string{"2"}) {
		t.Errorf("multikey range: %v", got)
	}
	// Updates move the keys.
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 7}}}}); err != nil {
		t.Fatal(err)
	}
	if got := ids(findAll(t, coll, bson.D{{Key: "a", Value: 7}})); !slices.Equal(got, []string{"1"}) {
		t.Errorf("after update: %v", got)
	}
	if got := ids(findAll(t, coll, bson.D{{Key: "a", Value: 1}})); len(got) != 0 {
		t.Errorf("stale key: %v", got)
	}
}

// TestWildcardProjection: a path prefix or a wildcardProjection limits
// what the index covers; _id only when included.
func TestWildcardProjection(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	coll := db.Collection("wildproj")
	if _, err := coll.InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: bson.D{{Key: "x", Value: 1}}}, {Key: "b", Value: 1}, {Key: "c", Value: 1}},
		bson.D{{Key: "_id", Value: 2}, {Key: "a", Value: bson.D{{Key: "x", Value: 2}}}, {Key: "b", Value: 2}, {Key: "c", Value: 2}},
	}); err != nil {
		t.Fatal(err)
	}
	models := []mongo.IndexModel{
		{Keys: bson.D{{Key: "a.$**", Value: 1}}},
		{Keys: bson.D{{Key: "$**", Value: 1}}, Options: options.Index().SetName("incl").SetWildcardProjection(bson.D{{Key: "b", Value: 1}, {Key: "_id", Value: 1}})},
	}
	if _, err := coll.Indexes().CreateMany(ctx, models); err != nil {
		t.Fatal(err)
	}
	specs, err := coll.Indexes().ListSpecifications(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 3 || specs[1].Name != "a.$**_1" || specs[2].Name != "incl" {
		t.Fatalf("specs %v", specs)
	}
	cases := []struct {
		filter bson.D
		index  string
	}{
		{bson.D{{Key: "a.x", Value: 1}}, "a.$**_1"},
		{bson.D{{Key: "b", Value: 1}}, "incl"},
		{bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: bson.A{1, 5}}}}}, ""},
		{bson.D{{Key: "c", Value: 1}}, ""},
	}
	for _, c := range cases {
		find := bson.D{{Key: "find", Value: coll.Name()}, {Key: "filter", Value: c.filter}}
		got, _ := winningIndex(t, db, find, "$_path")
		if c.index == "" && strings.Contains(got, "$") || c.index != "" && got != c.index {
			t.Errorf("%v: plan scans %q, want %q", c.filter, got, c.index)
		}
		if n, err := coll.CountDocuments(ctx, c.filter); err != nil || n != 1 {
			t.Errorf("%v: count %d %v", c.filter, n, err)
		}
	}
	// A hinted wildcard index answers for a path it covers; hinting it
	// for a query on no such path finds no plan, as in MongoDB's
	// jstests/core/index/wildcard/wildcard_index_hint.js.
	hinted := findAll(t, coll, bson.D{{Key: "a.x", Value: 2}}, options.Find().SetHint("a.$**_1"))
	if got := ids(hinted); !slices.Equal(got, []string{"2"}) {
		t.Errorf("hinted: %v", got)
	}
	_, err = coll.Find(ctx, bson.D{{Key: "b", Value: 1}}, options.Find().SetHint("a.$**_1"))
	requireCode(t, err, 291, "NoQueryExecutionPlans")
	errCases := []struct {
		name  string
		model mongo.IndexModel
		code  int
	}{
		{"unique", mongo.IndexModel{Keys: bson.D{{Key: "$**", Value: 1}}, Options: options.Index().SetUnique(true).SetName("u")}, 67},
		{"sparse", mongo.IndexModel{Keys: bson.D{{Key: "$**", Value: 1}}, Options: options.Index().SetSparse(true).SetName("s")}, 67},
		{"projection on a prefix", mongo.IndexModel{Keys: bson.D{{Key: "a.$**", Value: 1}}, Options: options.Index().SetWildcardProjection(bson.D{{Key: "b", Value: 1}}).SetName("p")}, 9},
		{"projection elsewhere", mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}, Options: options.Index().SetWildcardProjection(bson.D{{Key: "b", Value: 1}})}, 2},
		{"empty projection", mongo.IndexModel{Keys: bson.D{{Key: "$**", Value: 1}}, Options: options.Index().SetWildcardProjection(bson.D{}).SetName("e")}, 9},
		{"mixed projection", mongo.IndexModel{Keys: bson.D{{Key: "$**", Value: 1}}, Options: options.Index().SetWildcardProjection(bson.D{{Key: "b", Value: 1}, {Key: "c", Value: 0}}).SetName("m")}, 31254},
		{"a computed projection", mongo.IndexModel{Keys: bson.D{{Key: "$**", Value: 1}}, Options: options.Index().SetWildcardProjection(bson.D{{Key: "b", Value: "x"}}).SetName("c")}, 51271},
		{"compound over its other field", mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}, {Key: "$**", Value: 1}}}, 67},
	}
	for _, c := range errCases {
		t.Run(c.name, func(t *testing.T) {
			_, err := coll.Indexes().CreateOne(ctx, c.model)
			requireCode(t, err, c.code, "")
		})
	}
	// An inclusion may exclude _id explicitly, as in a find projection;
	// listIndexes gives the projection as created.
	noID := db.Collection("wildnoid")
	if _, err := noID.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "$**", Value: 1}},
		Options: options.Index().SetWildcardProjection(bson.D{{Key: "c", Value: true}, {Key: "_id", Value: false}})}); err != nil {
		t.Fatal(err)
	}
	cur, err := noID.Indexes().List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var noIDSpecs []bson.Raw
	if err := cur.All(ctx, &noIDSpecs); err != nil {
		t.Fatal(err)
	}
	if len(noIDSpecs) != 2 || noIDSpecs[1].Lookup("wildcardProjection").String() != `{"c": true,"_id": false}` {
		t.Errorf("wildcard index without _id: %v", noIDSpecs)
	}
	// {_id: 1} alone indexes _id alone; "_id.$**" the subtree of _id.
	ids := db.Collection("wildid")
	if _, err := ids.InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: bson.D{{Key: "k", Value: 1}}}, {Key: "a", Value: 1}},
		bson.D{{Key: "_id", Value: bson.D{{Key: "k", Value: 2}}}, {Key: "a", Value: 2}},
	}); err != nil {
		t.Fatal(err)
	}
	for _, m := range []mongo.IndexModel{
		{Keys: bson.D{{Key: "$**", Value: 1}}, Options: options.Index().SetName("only_id").SetWildcardProjection(bson.D{{Key: "_id", Value: 1}})},
		{Keys: bson.D{{Key: "_id.$**", Value: 1}}},
	} {
		if _, err := ids.Indexes().CreateOne(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	for _, hint := range []string{"only_id", "_id.$**_1"} {
		got := findAll(t, ids, bson.D{{Key: "_id.k", Value: 2}}, options.Find().SetHint(hint))
		if len(got) != 1 || got[0].Lookup("a").Int32() != 2 {
			t.Errorf("_id.k 2 hinting %s: %v", hint, got)
		}
		_, err := ids.Find(ctx, bson.D{{Key: "a", Value: 2}}, options.Find().SetHint(hint))
		requireCode(t, err, 291, "NoQueryExecutionPlans")
	}
	// The nested form of a projection is its dotted form: {a: {x: 1}}
	// covers a.x alone.
	nested := db.Collection("wildnest")
	if _, err := nested.InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: bson.D{{Key: "x", Value: 1}, {Key: "y", Value: 1}}}},
		bson.D{{Key: "_id", Value: 2}, {Key: "a", Value: bson.D{{Key: "x", Value: 2}, {Key: "y", Value: 2}}}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := nested.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "$**", Value: 1}},
		Options: options.Index().SetName("nested").SetWildcardProjection(bson.D{{Key: "a", Value: bson.D{{Key: "x", Value: 1}}}})}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path  string
		index string
	}{{"a.x", "nested"}, {"a.y", ""}} {
		find := bson.D{{Key: "find", Value: nested.Name()}, {Key: "filter", Value: bson.D{{Key: c.path, Value: 1}}}}
		if got, _ := winningIndex(t, db, find, "$_path"); got != c.index && !(c.index == "" && !strings.Contains(got, "$")) {
			t.Errorf("%s: plan scans %q, want %q", c.path, got, c.index)
		}
	}
}

// TestIndexKindsSurviveRestart: hashed, wildcard and compound wildcard
// indexes, and a wildcard index's multikey paths, are stored with the
// catalog: after a restart a range on a multikey path is still not
// intersected, and the indexes still answer and refuse.
func TestIndexKindsSurviveRestart(t *testing.T) {
	cfg := instance.Config{Addr: "127.0.0.1:0", DBPath: t.TempDir()}
	first, err := instance.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	client := dial(t, first)
	coll := client.Database(testDB).Collection("kinds")
	if _, err := coll.Indexes().CreateMany(t.Context(), []mongo.IndexModel{
		{Keys: bson.D{{Key: "$**", Value: 1}}, Options: options.Index().SetWildcardProjection(bson.D{{Key: "a", Value: 1}})},
		{Keys: bson.D{{Key: "h", Value: "hashed"}}},
		{Keys: bson.D{{Key: "n", Value: 1}, {Key: "m.$**", Value: 1}}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertMany(t.Context(), []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: bson.A{2, 3}}, {Key: "h", Value: "x"}, {Key: "n", Value: 1}, {Key: "m", Value: bson.D{{Key: "k", Value: 1}}}},
		bson.D{{Key: "_id", Value: 2}, {Key: "a", Value: 2.5}, {Key: "h", Value: "y"}, {Key: "n", Value: 2}, {Key: "m", Value: bson.D{{Key: "k", Value: 2}}}},
	}); err != nil {
		t.Fatal(err)
	}
	_ = client.Disconnect(t.Context())
	if err := first.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	second := startInstance(t, cfg)
	client = connect(t, second)
	db := client.Database(testDB)
	coll = db.Collection("kinds")
	filter := bson.D{{Key: "a", Value: bson.D{{Key: "$gt", Value: 2}, {Key: "$lt", Value: 3}}}}
	if name, bounds := winningIndex(t, db, bson.D{{Key: "find", Value: "kinds"}, {Key: "filter", Value: filter}}, "a"); name != "$**_1" || len(bounds) != 1 || strings.Contains(bounds[0], "(2, 3)") {
		t.Errorf("after restart: %q %v, want the wildcard index without intersected bounds", name, bounds)
	}
	if got := ids(findAll(t, coll, filter, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))); !slices.Equal(got, []string{"1", "2"}) {
		t.Errorf("multikey range after restart: %v", got)
	}
	hashed := bson.D{{Key: "h", Value: "y"}}
	if name, _ := winningIndex(t, db, bson.D{{Key: "find", Value: "kinds"}, {Key: "filter", Value: hashed}}, "h"); name != "h_hashed" {
		t.Errorf("hashed after restart: plan scans %q", name)
	}
	if got := ids(findAll(t, coll, hashed)); !slices.Equal(got, []string{"2"}) {
		t.Errorf("hashed after restart: %v", got)
	}
	compound := bson.D{{Key: "n", Value: 1}, {Key: "m.k", Value: 1}}
	if name, _ := winningIndex(t, db, bson.D{{Key: "find", Value: "kinds"}, {Key: "filter", Value: compound}}, "m.k"); name != "n_1_m.$**_1" {
		t.Errorf("compound wildcard after restart: plan scans %q", name)
	}
	if got := ids(findAll(t, coll, compound)); !slices.Equal(got, []string{"1"}) {
		t.Errorf("compound wildcard after restart: %v", got)
	}
	_, err = coll.InsertOne(t.Context(), bson.D{{Key: "n", Value: bson.A{3}}})
	requireCode(t, err, 7246301, "")
}

// TestWildcardText: {"$**": "text"} is a text index on every string
// field, not a wildcard index.
func TestWildcardText(t *testing.T) {
	client, _ := startServer(t)
	coll := client.Database(testDB).Collection("wt")
	if _, err := coll.Indexes().CreateOne(t.Context(), mongo.IndexModel{Keys: bson.D{{Key: "$**", Value: "text"}}}); err != nil {
		t.Fatal(err)
	}
	specs, err := coll.Indexes().ListSpecifications(t.Context())
	if err != nil || len(specs) != 2 {
		t.Fatalf("listIndexes: %v %v", specs, err)
	}
	if got := specs[1].KeysDocument.String(); got != `{"_fts": "text","_ftsx": {"$numberInt":"1"}}` {
		t.Errorf("key %s", got)
	}
}

// TestWildcardCountCoveredMultikey: on a path no document holds an array
// at, a wildcard index's keys decide equalities and ranges, so a count is
// a COUNT_SCAN and a projection of that field alone is covered; explain
// shows the arrays along the scanned path (multiKeyPaths).
func TestWildcardCountCoveredMultikey(t *testing.T) {
	client, _ := startServer(t)
	ctx := t.Context()
	db := client.Database(testDB)
	indexed, plain := db.Collection("wcc"), db.Collection("wcc_plain")
	if _, err := indexed.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "$**", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	var docs []any
	for i := 0; i < 60; i++ {
		d := bson.D{{Key: "_id", Value: i}, {Key: "n", Value: i % 7}, {Key: "s", Value: bson.D{{Key: "x", Value: i % 5}}}}
		if i%10 == 0 {
			d = append(d, bson.E{Key: "arr", Value: bson.A{bson.D{{Key: "y", Value: i}}, bson.D{{Key: "y", Value: i + 1}}}})
		}
		if i%13 == 0 {
			d[1].Value = "text"
		}
		docs = append(docs, d)
	}
	for _, c := range []*mongo.Collection{indexed, plain} {
		if _, err := c.InsertMany(ctx, docs); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []bson.D{
		{{Key: "n", Value: 3}},
		{{Key: "n", Value: bson.D{{Key: "$gte", Value: 2}, {Key: "$lt", Value: 5}}}},
		{{Key: "s.x", Value: bson.D{{Key: "$in", Value: bson.A{1, 4}}}}},
	} {
		want, err := plain.CountDocuments(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var ex bson.Raw
		cmd := bson.D{{Key: "explain", Value: bson.D{{Key: "count", Value: indexed.Name()}, {Key: "query", Value: f}}}, {Key: "verbosity", Value: "executionStats"}}
		if err := db.RunCommand(ctx, cmd).Decode(&ex); err != nil {
			t.Fatal(err)
		}
		// One interval is a COUNT_SCAN; an $in's several, a COUNT over the
		// index scan alone, as in MongoDB.
		if stage := ex.Lookup("queryPlanner", "winningPlan", "inputStage", "stage").StringValue(); stage != "COUNT_SCAN" && (f[0].Key != "s.x" || stage != "IXSCAN") {
			t.Errorf("count %v: %s", f, ex.Lookup("queryPlanner", "winningPlan"))
		}
		// A range's COUNT_SCAN starts and ends at its values under the
		// pinned path.
		if r, ok := f[0].Value.(bson.D); ok && f[0].Key == "n" && r[0].Key == "$gte" {
			b := ex.Lookup("queryPlanner", "winningPlan", "inputStage", "indexBounds")
			if b.Document().String() != `{"startKey": {"$_path": "n","n": {"$numberInt":"2"}},"startKeyInclusive": true,"endKey": {"$_path": "n","n": {"$numberInt":"5"}},"endKeyInclusive": false}` {
				t.Errorf("count %v: COUNT_SCAN bounds %s", f, b)
			}
		}
		if got, err := indexed.CountDocuments(ctx, f); err != nil || got != want {
			t.Errorf("count %v: %d %v, want %d", f, got, err, want)
		}
		path := f[0].Key
		proj := bson.D{{Key: path, Value: 1}, {Key: "_id", Value: 0}}
		if !strings.Contains(path, ".") {
			cmd = bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: indexed.Name()}, {Key: "filter", Value: f}, {Key: "projection", Value: proj}}}, {Key: "verbosity", Value: "executionStats"}}
			if err := db.RunCommand(ctx, cmd).Decode(&ex); err != nil {
				t.Fatal(err)
			}
			if stage := ex.Lookup("queryPlanner", "winningPlan", "stage").StringValue(); stage != "PROJECTION_COVERED" {
				t.Errorf("find %v: %s", f, ex.Lookup("queryPlanner", "winningPlan"))
			}
			if n, _ := ex.Lookup("executionStats", "totalDocsExamined").AsInt64OK(); n != 0 {
				t.Errorf("find %v examined %d documents: %s", f, n, ex.Lookup("executionStats"))
			}
		}
		got := findAll(t, indexed, f, options.Find().SetProjection(proj).SetSort(bson.D{{Key: path, Value: 1}}))
		wantDocs := findAll(t, plain, f, options.Find().SetProjection(proj).SetSort(bson.D{{Key: path, Value: 1}}))
		if fmt.Sprint(got) != fmt.Sprint(wantDocs) {
			t.Errorf("find %v: %v, want %v", f, got, wantDocs)
		}
	}
	// A path under an array: multikey, so the documents are fetched.
	var ex bson.Raw
	cmd := bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: indexed.Name()}, {Key: "filter", Value: bson.D{{Key: "arr.y", Value: 11}}}}}}
	if err := db.RunCommand(ctx, cmd).Decode(&ex); err != nil {
		t.Fatal(err)
	}
	scan := ex.Lookup("queryPlanner", "winningPlan", "inputStage").Document()
	if mk := scan.Lookup("multiKeyPaths").String(); mk != `{"$_path": [],"arr.y": ["arr"]}` || !scan.Lookup("isMultiKey").Boolean() {
		t.Errorf("multiKeyPaths: %s", scan)
	}
}

// TestWildcardPlanCachePath: one wildcard index is a candidate per queried
// path; the plan cache keeps the path of the winner, so a query of the
// same shape runs the plan that won (the scan of the selective path c),
// not another candidate of the index.
func TestWildcardPlanCachePath(t *testing.T) {
	client, _ := startServer(t)
	ctx := t.Context()
	db := client.Database("wcpath")
	coll := db.Collection("c")
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "$**", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	var docs []any
	for i := 0; i < 500; i++ {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "a", Value: 1}, {Key: "b", Value: 1}, {Key: "c", Value: i}})
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "profile", Value: 2}}).Err(); err != nil {
		t.Fatal(err)
	}
	for v := 10; v < 13; v++ {
		if got := findAll(t, coll, bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 1}, {Key: "c", Value: v}}); len(got) != 1 {
			t.Fatalf("c=%d: %v", v, got)
		}
	}
	var summaries []string
	for _, e := range profileEntries(t, db) {
		if s, ok := e.Lookup("planSummary").StringValueOK(); ok && e.Lookup("op").StringValue() == "query" {
			summaries = append(summaries, s)
		}
	}
	want := "IXSCAN { $_path: 1, c: 1 }"
	if len(summaries) != 3 || summaries[0] != want || summaries[2] != want {
		t.Errorf("plan summaries %q, want each %q", summaries, want)
	}
}

// TestWildcardPositionalPath: a numeric component after a path holding
// arrays names an array position or a field, and a wildcard index keys an
// element under the array's own path, so a query on such a path reads
// the keys under each path it may be stored at and filters what it
// fetches (MongoDB's generateFieldNameOrArrayIndexPathSet;
// jstests/core/index/wildcard/wildcard_index_empty_arrays.js hints the
// index for "c.0"). An element that may be an array in an array, which
// the index keys as a whole value, is left to other plans.
func TestWildcardPositionalPath(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	coll := db.Collection("wildpos")
	docs := []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "c", Value: bson.A{}}, {Key: "d", Value: bson.D{{Key: "e", Value: bson.A{5, 6}}}}},
		bson.D{{Key: "_id", Value: 2}, {Key: "c", Value: bson.A{1, 2}}, {Key: "d", Value: bson.D{{Key: "e", Value: bson.A{}}}}},
		bson.D{{Key: "_id", Value: 3}, {Key: "c", Value: bson.A{5, 1}}, {Key: "f", Value: bson.A{bson.D{{Key: "g", Value: bson.A{}}}}}},
		bson.D{{Key: "_id", Value: 4}, {Key: "c", Value: bson.A{bson.D{{Key: "0", Value: 1}}}}},
		bson.D{{Key: "_id", Value: 5}, {Key: "c", Value: bson.D{{Key: "0", Value: 1}}}},
		bson.D{{Key: "_id", Value: 6}, {Key: "x", Value: bson.A{bson.D{{Key: "y", Value: bson.A{bson.D{{Key: "z", Value: 1}}}}}}}},
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "$**", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	hint := bson.D{{Key: "$**", Value: 1}}
	for _, c := range []struct {
		filter bson.D
		want   []string
		paths  []string
	}{
		{bson.D{{Key: "c.0", Value: 1}}, []string{"2", "4", "5"}, []string{`["c", "c"]`, `["c.0", "c.0"]`}},
		{bson.D{{Key: "c.1", Value: bson.D{{Key: "$gte", Value: 1}}}}, []string{"2", "3"}, []string{`["c", "c"]`, `["c.1", "c.1"]`}},
		{bson.D{{Key: "c.1", Value: bson.D{{Key: "$in", Value: bson.A{2, 7}}}}}, []string{"2"}, []string{`["c", "c"]`, `["c.1", "c.1"]`}},
	} {
		find := bson.D{{Key: "find", Value: coll.Name()}, {Key: "filter", Value: c.filter}, {Key: "hint", Value: hint}}
		if name, bounds := winningIndex(t, db, find, "$_path"); name != "$**_1" || !slices.Equal(bounds, c.paths) {
			t.Errorf("%v: plan scans %q with $_path bounds %v, want %v", c.filter, name, bounds, c.paths)
		}
		opts := options.Find().SetSort(bson.D{{Key: "_id", Value: 1}})
		if got := ids(findAll(t, coll, c.filter, opts.SetHint(hint))); !slices.Equal(got, c.want) {
			t.Errorf("%v hinted: got %v, want %v", c.filter, got, c.want)
		}
		if got := ids(findAll(t, coll, c.filter, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetHint(bson.D{{Key: "$natural", Value: 1}}))); !slices.Equal(got, c.want) {
			t.Errorf("%v scanned: got %v, want %v", c.filter, got, c.want)
		}
	}
	// A position followed by more of the path, or a condition looking
	// inside the element ($elemMatch, $type): the element may be an array
	// in an array, keyed whole, so no plan on the index.
	for _, filter := range []bson.D{
		{{Key: "c.0.0", Value: 1}},
		{{Key: "f.0.g", Value: bson.A{}}},
		{{Key: "x.0.y.0.z", Value: 1}},
		{{Key: "c.0", Value: bson.D{{Key: "$elemMatch", Value: bson.D{{Key: "$gte", Value: 1}}}}}},
		{{Key: "c.0", Value: bson.D{{Key: "$type", Value: "number"}}}},
	} {
		err := db.RunCommand(ctx, bson.D{{Key: "find", Value: coll.Name()}, {Key: "filter", Value: filter}, {Key: "hint", Value: hint}}).Err()
		requireCode(t, err, 291, "")
	}
}
