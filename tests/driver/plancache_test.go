package driver_test

import (
	"context"
	"net"
	"os"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// planCacheEntries runs $planCacheStats on coll.
func planCacheEntries(t *testing.T, coll *mongo.Collection) []bson.Raw {
	t.Helper()
	cur, err := coll.Aggregate(context.Background(), bson.A{bson.D{{Key: "$planCacheStats", Value: bson.D{}}}})
	if err != nil {
		t.Fatalf("$planCacheStats: %v", err)
	}
	var out []bson.Raw
	if err := cur.All(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPlanCache drives the plan cache through the driver: a query with two
// candidate indexes makes an inactive entry, a second activates it
// ($planCacheStats, manual "Query Plans": plan cache entry state); explain
// shows the entry's queryHash and planCacheKey without using the cache;
// planCacheClear empties it by shape or whole.
func TestPlanCache(t *testing.T) {
	client, in := startServer(t)
	ctx := context.Background()
	db := client.Database("pc")
	coll := db.Collection("c")
	var docs []bson.Raw
	for i := range 300 {
		docs = append(docs, mustRaw(t, bson.D{{Key: "_id", Value: int32(i)}, {Key: "a", Value: int32(i % 10)}, {Key: "b", Value: int32(i)}}))
	}
	seed(t, coll, docs)
	for _, k := range []string{"a", "b"} {
		if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: k, Value: 1}}}); err != nil {
			t.Fatal(err)
		}
	}
	q := bson.D{{Key: "a", Value: 3}, {Key: "b", Value: bson.D{{Key: "$gte", Value: 290}}}}
	if got := findAll(t, coll, q); len(got) != 1 {
		t.Fatalf("found %d, want 1", len(got))
	}
	entries := planCacheEntries(t, coll)
	if len(entries) != 1 {
		t.Fatalf("%d entries, want 1", len(entries))
	}
	ent := entries[0]
	if ent.Lookup("isActive").Boolean() || ent.Lookup("version").StringValue() != "1" {
		t.Fatalf("first entry: %v", ent)
	}
	// host is the machine's name and the server's port, as MongoDB's
	// getHostNameCachedAndPort
	hostname, _ := os.Hostname()
	_, port, _ := net.SplitHostPort(in.Addr())
	if got := ent.Lookup("host").StringValue(); got != hostname+":"+port {
		t.Fatalf("host %q, want %q", got, hostname+":"+port)
	}
	if ent.Lookup("works").Type != bson.TypeInt64 || ent.Lookup("timeOfCreation").Type != bson.TypeDateTime {
		t.Fatalf("works or timeOfCreation of the wrong type: %v", ent)
	}
	if got := ent.Lookup("createdFromQuery", "query").Document(); !bsonEqual(got, mustRaw(t, q)) {
		t.Fatalf("createdFromQuery.query %v", got)
	}
	if name := ent.Lookup("cachedPlan", "inputStage", "indexName").StringValue(); name != "b_1" {
		t.Fatalf("cached plan on %q, want b_1: %v", name, ent)
	}
	findAll(t, coll, bson.D{{Key: "b", Value: bson.D{{Key: "$gte", Value: 295}}}, {Key: "a", Value: 5}})
	if ent = planCacheEntries(t, coll)[0]; !ent.Lookup("isActive").Boolean() {
		t.Fatalf("entry after the second query: %v", ent)
	}

	var explain bson.Raw
	if err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "a", Value: 1}, {Key: "b", Value: bson.D{{Key: "$gte", Value: 7}}}}}}}}).Decode(&explain); err != nil {
		t.Fatal(err)
	}
	qp := explain.Lookup("queryPlanner").Document()
	if qp.Lookup("queryHash").StringValue() != ent.Lookup("queryHash").StringValue() ||
		qp.Lookup("planCacheKey").StringValue() != ent.Lookup("planCacheKey").StringValue() {
		t.Fatalf("explain's queryHash/planCacheKey %v, entry's %v", qp, ent)
	}
	if n := len(planCacheEntries(t, coll)); n != 1 {
		t.Fatalf("explain changed the cache: %d entries", n)
	}

	// planCacheClear with a query of another shape leaves the entry;
	// with one of its shape (other values) removes it.
	run := func(cmd bson.D) error { return db.RunCommand(ctx, cmd).Err() }
	if err := run(bson.D{{Key: "planCacheClear", Value: "c"}, {Key: "query", Value: bson.D{{Key: "a", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	if n := len(planCacheEntries(t, coll)); n != 1 {
		t.Fatalf("clearing another shape left %d entries", n)
	}
	if err := run(bson.D{{Key: "planCacheClear", Value: "c"}, {Key: "query", Value: bson.D{{Key: "b", Value: bson.D{{Key: "$gte", Value: 1}}}, {Key: "a", Value: 9}}}}); err != nil {
		t.Fatal(err)
	}
	if n := len(planCacheEntries(t, coll)); n != 0 {
		t.Fatalf("clearing the shape left %d entries", n)
	}
	findAll(t, coll, q)
	if err := run(bson.D{{Key: "planCacheClear", Value: "c"}}); err != nil {
		t.Fatal(err)
	}
	if n := len(planCacheEntries(t, coll)); n != 0 {
		t.Fatalf("planCacheClear left %d entries", n)
	}
	if err := run(bson.D{{Key: "planCacheClear", Value: "missing"}}); err != nil {
		t.Fatalf("planCacheClear of a missing collection: %v", err)
	}
}

// TestPlanCacheErrors checks the errors of planCacheClear and
// $planCacheStats as MongoDB 7.0 raises them.
func TestPlanCacheErrors(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("pc")
	if _, err := db.Collection("c").InsertOne(ctx, bson.D{{Key: "a", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateView(ctx, "v", "c", mongo.Pipeline{}); err != nil {
		t.Fatal(err)
	}
	stages := func(coll string, pipeline bson.A) error {
		_, err := db.Collection(coll).Aggregate(ctx, pipeline)
		return err
	}
	cases := []struct {
		name string
		err  func() error
		code int
	}{
		{"clear: sort without query", func() error {
			return db.RunCommand(ctx, bson.D{{Key: "planCacheClear", Value: "c"}, {Key: "sort", Value: bson.D{{Key: "a", Value: 1}}}}).Err()
		}, 2},
		// plan_cache_commands::canonicalize's BadValue for a field of
		// another type or an empty collation
		{"clear: query not an object", func() error {
			return db.RunCommand(ctx, bson.D{{Key: "planCacheClear", Value: "c"}, {Key: "query", Value: 1}}).Err()
		}, 2},
		{"setFilter: sort not an object", func() error {
			return db.RunCommand(ctx, bson.D{{Key: "planCacheSetFilter", Value: "c"}, {Key: "query", Value: bson.D{}}, {Key: "sort", Value: "a"}, {Key: "indexes", Value: bson.A{"a_1"}}}).Err()
		}, 2},
		{"setFilter: empty collation", func() error {
			return db.RunCommand(ctx, bson.D{{Key: "planCacheSetFilter", Value: "c"}, {Key: "query", Value: bson.D{}}, {Key: "collation", Value: bson.D{}}, {Key: "indexes", Value: bson.A{"a_1"}}}).Err()
		}, 2},
		{"setFilter: a view", func() error {
			return db.RunCommand(ctx, bson.D{{Key: "planCacheSetFilter", Value: "v"}, {Key: "query", Value: bson.D{}}, {Key: "indexes", Value: bson.A{"a_1"}}}).Err()
		}, 166},
		{"listFilters: a view", func() error {
			return db.RunCommand(ctx, bson.D{{Key: "planCacheListFilters", Value: "v"}}).Err()
		}, 166},
		{"clear: bad query", func() error {
			return db.RunCommand(ctx, bson.D{{Key: "planCacheClear", Value: "c"}, {Key: "query", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$bogus", Value: 1}}}}}}).Err()
		}, 2},
		{"clear: unknown field", func() error {
			return db.RunCommand(ctx, bson.D{{Key: "planCacheClear", Value: "c"}, {Key: "bogus", Value: 1}}).Err()
		}, 40415},
		{"stats: not first", func() error {
			return stages("c", bson.A{bson.D{{Key: "$match", Value: bson.D{}}}, bson.D{{Key: "$planCacheStats", Value: bson.D{}}}})
		}, 40602},
		{"stats: not an object", func() error { return stages("c", bson.A{bson.D{{Key: "$planCacheStats", Value: 1}}}) }, 9},
		{"stats: not empty", func() error {
			return stages("c", bson.A{bson.D{{Key: "$planCacheStats", Value: bson.D{{Key: "x", Value: 1}}}}})
		}, 9},
		{"stats: missing collection", func() error { return stages("missing", bson.A{bson.D{{Key: "$planCacheStats", Value: bson.D{}}}}) }, 50933},
		{"setFilter: no indexes", func() error {
			return db.RunCommand(ctx, bson.D{{Key: "planCacheSetFilter", Value: "c"}, {Key: "query", Value: bson.D{}}}).Err()
		}, 2},
		{"setFilter: no query", func() error {
			return db.RunCommand(ctx, bson.D{{Key: "planCacheSetFilter", Value: "c"}, {Key: "indexes", Value: bson.A{"a_1"}}}).Err()
		}, 2},
		{"setFilter: empty indexes", func() error {
			return db.RunCommand(ctx, bson.D{{Key: "planCacheSetFilter", Value: "c"}, {Key: "query", Value: bson.D{}}, {Key: "indexes", Value: bson.A{}}}).Err()
		}, 2},
		{"setFilter: missing collection", func() error {
			return db.RunCommand(ctx, bson.D{{Key: "planCacheSetFilter", Value: "missing"}, {Key: "query", Value: bson.D{}}, {Key: "indexes", Value: bson.A{"a_1"}}}).Err()
		}, 2},
		{"clearFilters: sort without query", func() error {
			return db.RunCommand(ctx, bson.D{{Key: "planCacheClearFilters", Value: "c"}, {Key: "sort", Value: bson.D{{Key: "a", Value: 1}}}}).Err()
		}, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { requireCode(t, tc.err(), tc.code, "") })
	}
	// An empty key pattern names no index: the whole command fails
	// (MongoDB's SetFilter::set) and no filter is set.
	err := db.RunCommand(ctx, bson.D{{Key: "planCacheSetFilter", Value: "c"}, {Key: "query", Value: bson.D{}}, {Key: "indexes", Value: bson.A{"a_1", bson.D{}}}}).Err()
	requireError(t, err, 2, "BadValue", "index specification cannot be empty")
	var list struct{ Filters []bson.Raw }
	if err := db.RunCommand(ctx, bson.D{{Key: "planCacheListFilters", Value: "c"}}).Decode(&list); err != nil || len(list.Filters) != 0 {
		t.Fatalf("planCacheListFilters after the refused filter: %v, %v", err, list.Filters)
	}
}

// TestIndexFilters sets, lists and clears an index filter through the
// driver and sees explain report it (manual, planCacheSetFilter).
func TestIndexFilters(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("pc")
	coll := db.Collection("c")
	seed(t, coll, []bson.Raw{mustRaw(t, bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 2}})})
	for _, k := range []string{"a", "b"} {
		if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: k, Value: 1}}}); err != nil {
			t.Fatal(err)
		}
	}
	run := func(cmd bson.D) bson.Raw {
		t.Helper()
		var out bson.Raw
		if err := db.RunCommand(ctx, cmd).Decode(&out); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
		return out
	}
	q := bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 2}}
	run(bson.D{{Key: "planCacheSetFilter", Value: "c"}, {Key: "query", Value: q}, {Key: "indexes", Value: bson.A{bson.D{{Key: "b", Value: 1}}}}})
	list := run(bson.D{{Key: "planCacheListFilters", Value: "c"}})
	filters, _ := list.Lookup("filters").Array().Values()
	if len(filters) != 1 || filters[0].Document().Lookup("indexes", "0", "b").Type == 0 {
		t.Fatalf("planCacheListFilters: %v", list)
	}
	explain := run(bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "b", Value: 5}, {Key: "a", Value: 7}}}}}})
	qp := explain.Lookup("queryPlanner").Document()
	if !qp.Lookup("indexFilterSet").Boolean() || qp.Lookup("winningPlan", "inputStage", "indexName").StringValue() != "b_1" {
		t.Fatalf("explain under the filter: %v", qp)
	}
	if got := findAll(t, coll, q); len(got) != 1 {
		t.Fatalf("found %d, want 1", len(got))
	}
	run(bson.D{{Key: "planCacheClearFilters", Value: "c"}})
	list = run(bson.D{{Key: "planCacheListFilters", Value: "c"}})
	if filters, _ := list.Lookup("filters").Array().Values(); len(filters) != 0 {
		t.Fatalf("filters left: %v", list)
	}

	// A collation is part of the shape: a filter set with one applies to
	// the queries under it alone, is listed with it, and is cleared by it.
	ci := bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: 2}}
	run(bson.D{{Key: "planCacheSetFilter", Value: "c"}, {Key: "query", Value: q}, {Key: "collation", Value: ci}, {Key: "indexes", Value: bson.A{"b_1"}}})
	list = run(bson.D{{Key: "planCacheListFilters", Value: "c"}})
	filters, _ = list.Lookup("filters").Array().Values()
	if len(filters) != 1 || filters[0].Document().Lookup("collation", "locale").StringValue() != "en" ||
		filters[0].Document().Lookup("collation", "strength").AsInt64() != 2 {
		t.Fatalf("planCacheListFilters with a collation: %v", list)
	}
	// filtered checks whether explain of {b: 5, a: 7} on coll under
	// collation (nil: none given) says an index filter applies.
	filtered := func(coll string, collation any, want bool) {
		t.Helper()
		find := bson.D{{Key: "find", Value: coll}, {Key: "filter", Value: bson.D{{Key: "b", Value: 5}, {Key: "a", Value: 7}}}}
		if collation != nil {
			find = append(find, bson.E{Key: "collation", Value: collation})
		}
		qp := run(bson.D{{Key: "explain", Value: find}}).Lookup("queryPlanner").Document()
		if qp.Lookup("indexFilterSet").Boolean() != want {
			t.Fatalf("explain on %s with collation %v: %v, want indexFilterSet %v", coll, collation, qp, want)
		}
	}
	filtered("c", ci, true)
	filtered("c", nil, false)
	run(bson.D{{Key: "planCacheClearFilters", Value: "c"}, {Key: "query", Value: q}})
	if filters, _ := run(bson.D{{Key: "planCacheListFilters", Value: "c"}}).Lookup("filters").Array().Values(); len(filters) != 1 {
		t.Fatalf("clearing without the collation cleared the filter set with it: %d left", len(filters))
	}
	run(bson.D{{Key: "planCacheClearFilters", Value: "c"}, {Key: "query", Value: q}, {Key: "collation", Value: ci}})
	if filters, _ := run(bson.D{{Key: "planCacheListFilters", Value: "c"}}).Lookup("filters").Array().Values(); len(filters) != 0 {
		t.Fatalf("clearing with the collation left %d filters", len(filters))
	}
	run(bson.D{{Key: "planCacheClear", Value: "c"}, {Key: "query", Value: q}, {Key: "collation", Value: ci}})

	// A shape names the collation its command gave, not the collection's
	// default a query inherits (MongoDB's encodeForPlanCacheCommand
	// encodes only a user-specified collation; jstest
	// index_filter_collation.js): on a collection with a default
	// collation, a filter set without one applies to the queries that
	// give none or the simple one, not to those naming the default.
	if err := db.CreateCollection(ctx, "ci", options.CreateCollection().SetCollation(&options.Collation{Locale: "en", Strength: 2})); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b"} {
		if _, err := db.Collection("ci").Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: k, Value: 1}}}); err != nil {
			t.Fatal(err)
		}
	}
	run(bson.D{{Key: "planCacheSetFilter", Value: "ci"}, {Key: "query", Value: q}, {Key: "indexes", Value: bson.A{"b_1"}}})
	filters, _ = run(bson.D{{Key: "planCacheListFilters", Value: "ci"}}).Lookup("filters").Array().Values()
	if len(filters) != 1 || filters[0].Document().Lookup("collation").Type != 0 {
		t.Fatalf("planCacheListFilters on a collection with a default collation: %v", filters)
	}
	filtered("ci", nil, true)
	filtered("ci", bson.D{{Key: "locale", Value: "simple"}}, true)
	filtered("ci", bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: 2}}, false)
	// planCacheClear without a collation names the same queries: it drops
	// the entry of a query that gave none.
	run(bson.D{{Key: "planCacheClearFilters", Value: "ci"}})
	for range 2 {
		findAll(t, db.Collection("ci"), bson.D{{Key: "b", Value: 5}, {Key: "a", Value: 7}})
	}
	if n := len(planCacheEntries(t, db.Collection("ci"))); n != 1 {
		t.Fatalf("%d plan cache entries on ci, want 1", n)
	}
	run(bson.D{{Key: "planCacheClear", Value: "ci"}, {Key: "query", Value: q}})
	if n := len(planCacheEntries(t, db.Collection("ci"))); n != 0 {
		t.Fatalf("planCacheClear without a collation left %d entries of a query that gave none", n)
	}
}

func bsonEqual(a, b bson.Raw) bool { return string(a) == string(b) }

// TestPlanCacheCollation follows jstests/core/collation_plan_cache.js: an
// entry made by a query under a collation records it in
// createdFromQuery, fully spelled.
func TestPlanCacheCollation(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("pccoll")
	coll := db.Collection("c")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "a", Value: "foo"}, {Key: "b", Value: 5}}); err != nil {
		t.Fatal(err)
	}
	enUS := &options.Collation{Locale: "en_US"}
	for _, ix := range []mongo.IndexModel{
		{Keys: bson.D{{Key: "a", Value: 1}}, Options: options.Index().SetCollation(enUS)},
		{Keys: bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 1}}, Options: options.Index().SetCollation(enUS)},
		{Keys: bson.D{{Key: "b", Value: 1}}, Options: options.Index().SetCollation(&options.Collation{Locale: "fr_CA"})},
	} {
		if _, err := coll.Indexes().CreateOne(ctx, ix); err != nil {
			t.Fatal(err)
		}
	}
	q := bson.D{{Key: "a", Value: "foo"}, {Key: "b", Value: 5}}
	findAll(t, coll, q, options.Find().SetCollation(enUS))
	entries := planCacheEntries(t, coll)
	if len(entries) != 1 {
		t.Fatalf("%d entries, want 1", len(entries))
	}
	from := entries[0].Lookup("createdFromQuery").Document()
	want := mustRaw(t, bson.D{{Key: "locale", Value: "en_US"}, {Key: "caseLevel", Value: false}, {Key: "caseFirst", Value: "off"}, {Key: "strength", Value: int32(3)},
		{Key: "numericOrdering", Value: false}, {Key: "alternate", Value: "non-ignorable"}, {Key: "maxVariable", Value: "punct"}, {Key: "normalization", Value: false},
		{Key: "backwards", Value: false}, {Key: "version", Value: "57.1"}})
	if got, ok := from.Lookup("collation").DocumentOK(); !ok || !bsonEqual(got, want) {
		t.Errorf("createdFromQuery %s, want its collation %s", from, want)
	}
	// A string where the fr_CA index on b cannot take it keeps the shape
	// (queryHash) but not the plan cache key: the index discriminators
	// record which conditions fit each index's collation.
	keys := func(filter bson.D) (string, string) {
		var out bson.Raw
		cmd := bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: filter}, {Key: "collation", Value: enUS}}
		if err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: cmd}, {Key: "verbosity", Value: "queryPlanner"}}).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return out.Lookup("queryPlanner", "queryHash").StringValue(), out.Lookup("queryPlanner", "planCacheKey").StringValue()
	}
	h1, k1 := keys(q)
	h2, k2 := keys(bson.D{{Key: "a", Value: "foo"}, {Key: "b", Value: "bar"}})
	h3, k3 := keys(bson.D{{Key: "a", Value: "x"}, {Key: "b", Value: 7}})
	if h1 != h2 || k1 == k2 || h1 != h3 || k1 != k3 {
		t.Errorf("queryHash %s %s %s, planCacheKey %s %s %s: want one hash, the string b's key apart", h1, h2, h3, k1, k2, k3)
	}
}
