package driver_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestCompoundWildcard: a compound wildcard index (MongoDB 7.0), the
// attribute pattern's {tenant: 1, "attrs.$**": 1}, answers queries on its
// regular field with any attribute, and on its regular field alone,
// returning what a collection scan returns; its regular field holds no
// array; its spec is checked as MongoDB checks it.
// https://www.mongodb.com/docs/v7.0/core/indexes/index-types/index-wildcard/index-wildcard-compound/
func TestCompoundWildcard(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	coll := db.Collection("products")
	var docs []any
	for i := range 300 {
		attrs := bson.D{{Key: "color", Value: []string{"red", "green", "blue"}[i%3]}, {Key: "size", Value: i % 7}}
		if i%5 == 0 {
			attrs = append(attrs, bson.E{Key: "tags", Value: bson.A{"sale", fmt.Sprint("t", i%4)}})
		}
		d := bson.D{{Key: "_id", Value: i}, {Key: "tenant", Value: i % 4}, {Key: "attrs", Value: attrs}}
		if i%11 == 0 {
			d = bson.D{{Key: "_id", Value: i}, {Key: "tenant", Value: i % 4}} // no attributes
		}
		docs = append(docs, d)
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	name, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "tenant", Value: 1}, {Key: "attrs.$**", Value: 1}}})
	if err != nil || name != "tenant_1_attrs.$**_1" {
		t.Fatalf("create: %q %v", name, err)
	}
	// matching are the _ids of the documents matching filter, with hint.
	matching := func(filter bson.D, hint any) []string {
		t.Helper()
		return ids(findAll(t, coll, filter, options.Find().SetHint(hint).SetSort(bson.D{{Key: "_id", Value: 1}})))
	}
	for _, tc := range []struct {
		filter bson.D
		index  bool // the planner picks the compound wildcard index
	}{
		{bson.D{{Key: "tenant", Value: 1}, {Key: "attrs.color", Value: "red"}}, true},
		{bson.D{{Key: "tenant", Value: 2}, {Key: "attrs.size", Value: bson.D{{Key: "$gte", Value: 3}, {Key: "$lt", Value: 5}}}}, true},
		{bson.D{{Key: "tenant", Value: bson.D{{Key: "$in", Value: bson.A{0, 3}}}}, {Key: "attrs.tags", Value: "sale"}}, true},
		{bson.D{{Key: "tenant", Value: 0}, {Key: "attrs.tags", Value: bson.D{{Key: "$exists", Value: true}}}}, true},
		{bson.D{{Key: "tenant", Value: 3}}, true},
		{bson.D{{Key: "tenant", Value: 3}, {Key: "attrs", Value: bson.D{{Key: "$exists", Value: false}}}}, true},
		{bson.D{{Key: "attrs.color", Value: "blue"}}, false},
	} {
		want := matching(tc.filter, bson.D{{Key: "$natural", Value: 1}})
		if len(want) == 0 {
			t.Fatalf("%v matches nothing: a weak case", tc.filter)
		}
		if got := matching(tc.filter, nil); !reflect.DeepEqual(got, want) {
			t.Errorf("%v: %v, the collection scan %v", tc.filter, got, want)
		}
		if got := matching(tc.filter, name); tc.index && !reflect.DeepEqual(got, want) {
			t.Errorf("%v hinting %s: %v, the collection scan %v", tc.filter, name, got, want)
		}
		var explain bson.Raw
		if err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "products"}, {Key: "filter", Value: tc.filter}}}}).Decode(&explain); err != nil {
			t.Fatal(err)
		}
		if used := strings.Contains(explain.Lookup("queryPlanner", "winningPlan").String(), name); used != tc.index {
			t.Errorf("%v: the winning plan uses %s: %v, want %v\n%s", tc.filter, name, used, tc.index, explain.Lookup("queryPlanner", "winningPlan"))
		}
	}
	// A count the keys decide.
	n, err := coll.CountDocuments(ctx, bson.D{{Key: "tenant", Value: 1}, {Key: "attrs.color", Value: "red"}})
	if want := len(matching(bson.D{{Key: "tenant", Value: 1}, {Key: "attrs.color", Value: "red"}}, bson.D{{Key: "$natural", Value: 1}})); err != nil || n != int64(want) {
		t.Errorf("count: %d %v, want %d", n, err, want)
	}

	// The regular field holds no array: an insert or an update putting
	// one there fails, and leaves the document as it was.
	_, err = coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1000}, {Key: "tenant", Value: bson.A{1, 2}}})
	requireCode(t, err, 7246301, "")
	_, err = coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "tenant", Value: bson.A{1}}}}})
	requireCode(t, err, 7246301, "")
	if got := matching(bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: bson.A{1, 1000}}}}, {Key: "tenant", Value: 1}}, nil); !reflect.DeepEqual(got, []string{"1"}) {
		t.Errorf("after the refused writes: %v", got)
	}
	arrays := db.Collection("arrays")
	if _, err := arrays.InsertOne(ctx, bson.D{{Key: "k", Value: bson.A{1}}}); err != nil {
		t.Fatal(err)
	}
	_, err = arrays.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "k", Value: 1}, {Key: "v.$**", Value: 1}}})
	requireCode(t, err, 7246301, "")

	// The spec's rules.
	create := func(key bson.D, opts *options.IndexOptionsBuilder) error {
		_, err := db.Collection("specs").Indexes().CreateOne(ctx, mongo.IndexModel{Keys: key, Options: opts})
		return err
	}
	// (the driver names an index in the options it is given: one each)
	excludeA := func() *options.IndexOptionsBuilder {
		return options.Index().SetWildcardProjection(bson.D{{Key: "a", Value: 0}})
	}
	for _, tc := range []struct {
		name string
		key  bson.D
		opts *options.IndexOptionsBuilder
		code int
	}{
		{"two wildcards", bson.D{{Key: "$**", Value: 1}, {Key: "s.$**", Value: 1}}, nil, 7246201},
		{"$** over its other field", bson.D{{Key: "a", Value: 1}, {Key: "$**", Value: 1}}, nil, 67},
		{"a projection keeping the other field", bson.D{{Key: "a", Value: 1}, {Key: "$**", Value: 1}}, options.Index().SetWildcardProjection(bson.D{{Key: "b", Value: 0}}), 7246209},
		{"a subtree holding the other field", bson.D{{Key: "s.x", Value: 1}, {Key: "s.$**", Value: 1}}, nil, 7246204},
		{"a subtree that is the other field", bson.D{{Key: "a", Value: 1}, {Key: "a.$**", Value: 1}}, nil, 7246204},
		{"a projection including a path and one under it", bson.D{{Key: "$**", Value: 1}, {Key: "c", Value: 1}}, options.Index().SetWildcardProjection(bson.D{{Key: "a.b", Value: 1}, {Key: "a.b.c", Value: 1}}), 7246200},
		{"a projection including the other field", bson.D{{Key: "a", Value: 1}, {Key: "$**", Value: 1}}, options.Index().SetWildcardProjection(bson.D{{Key: "a", Value: 1}}), 7246208},
		{"a projection including a prefix of the other field", bson.D{{Key: "a.b", Value: 1}, {Key: "$**", Value: 1}}, options.Index().SetWildcardProjection(bson.D{{Key: "_id", Value: 0}, {Key: "a", Value: 1}}), 7246208},
		{"a projection mixing inclusions and exclusions", bson.D{{Key: "$**", Value: 1}, {Key: "c", Value: 1}}, options.Index().SetWildcardProjection(bson.D{{Key: "c", Value: 0}, {Key: "a", Value: 0}, {Key: "b", Value: 1}}), 7246211},
		{"a projection excluding paths before the other field only", bson.D{{Key: "$**", Value: 1}, {Key: "e.c", Value: 1}}, options.Index().SetWildcardProjection(bson.D{{Key: "_id", Value: 1}, {Key: "e.b", Value: 0}}), 7246210},
		{"a projection on a subtree", bson.D{{Key: "a", Value: 1}, {Key: "s.$**", Value: 1}}, excludeA(), 9},
		{"a hashed field", bson.D{{Key: "a", Value: "hashed"}, {Key: "s.$**", Value: 1}}, nil, 67},
		{"unique", bson.D{{Key: "a", Value: 1}, {Key: "s.$**", Value: 1}}, options.Index().SetUnique(true), 67},
		{"a field typed wildcard", bson.D{{Key: "a", Value: "wildcard"}}, nil, 7246202},
		{"$** typed wildcard", bson.D{{Key: "$**", Value: "wildcard"}}, nil, 67},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireCode(t, create(tc.key, tc.opts), tc.code, "")
		})
	}
	for _, key := range []bson.D{
		{{Key: "a", Value: 1}, {Key: "$**", Value: 1}},
		{{Key: "$**", Value: 1}, {Key: "a", Value: -1}},
	} {
		if err := create(key, excludeA()); err != nil {
			t.Errorf("%v excluding a: %v", key, err)
		}
	}
	// _id excluded beside an inclusion, included beside exclusions.
	if err := create(bson.D{{Key: "$**", Value: 1}, {Key: "other", Value: 1}}, options.Index().SetWildcardProjection(bson.D{{Key: "_id", Value: 0}, {Key: "a", Value: 1}})); err != nil {
		t.Errorf("an inclusion without _id: %v", err)
	}
	if err := create(bson.D{{Key: "$**", Value: 1}, {Key: "another", Value: 1}}, options.Index().SetWildcardProjection(bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 0}, {Key: "another", Value: 0}})); err != nil {
		t.Errorf("an exclusion with _id: %v", err)
	}
	// The same key and projection under another name conflict.
	_, err = db.Collection("specs").Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}, {Key: "$**", Value: 1}}, Options: excludeA().SetName("other")})
	requireCode(t, err, 85, "IndexOptionsConflict")
}

// TestCompoundWildcardPrefixSort: a compound wildcard index read on its
// fields before the wildcard provides a sort on them, though each
// document has a key per wildcard path (the scan drops the repeats, which
// come in the same order): those fields never hold arrays
// (jstests/core/index/wildcard/compound_wildcard_index_prefix.js). A sort
// reaching past the wildcard is blocking. (Each sort orders the
// documents fully, b being distinct.)
func TestCompoundWildcardPrefixSort(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	coll := db.Collection("cwiprefix")
	for i := 4; i >= 0; i-- {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i % 2}, {Key: "b", Value: -i}, {Key: "sub", Value: bson.D{{Key: "x", Value: i}, {Key: "y", Value: bson.A{i, i + 1}}}}, {Key: "c", Value: i * 3}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 1}, {Key: "sub.$**", Value: 1}, {Key: "c", Value: 1}}, Options: options.Index().SetName("cwi")}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		filter, sort bson.D
		blocking     bool
	}{
		{bson.D{{Key: "a", Value: 1}}, bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 1}}, false},
		{bson.D{{Key: "a", Value: 1}}, bson.D{{Key: "b", Value: -1}}, false},
		{bson.D{{Key: "a", Value: bson.D{{Key: "$gte", Value: 0}}}}, bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 1}}, false},
		{bson.D{{Key: "a", Value: 1}}, bson.D{{Key: "a", Value: 1}, {Key: "c", Value: 1}}, true},
	} {
		find := bson.D{{Key: "find", Value: coll.Name()}, {Key: "filter", Value: c.filter}, {Key: "sort", Value: c.sort}, {Key: "hint", Value: "cwi"}}
		out, err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: find}, {Key: "verbosity", Value: "queryPlanner"}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		if plan := out.Lookup("queryPlanner", "winningPlan").String(); strings.Contains(plan, `"SORT"`) != c.blocking {
			t.Errorf("%v sort %v: plan %s", c.filter, c.sort, plan)
		}
		got := ids(findAll(t, coll, c.filter, options.Find().SetSort(c.sort).SetHint("cwi")))
		want := ids(findAll(t, coll, c.filter, options.Find().SetSort(c.sort).SetHint(bson.D{{Key: "$natural", Value: 1}})))
		if !slices.Equal(got, want) {
			t.Errorf("%v sort %v: got %v, want %v", c.filter, c.sort, got, want)
		}
	}
}
