package driver_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/internal/instance"
)

// Collations as the MongoDB manual describes them:
// https://www.mongodb.com/docs/v7.0/reference/collation/ and
// https://www.mongodb.com/docs/v7.0/core/index-case-insensitive/.

var (
	caseInsensitive = &options.Collation{Locale: "en", Strength: 2}
	numeric         = &options.Collation{Locale: "en", NumericOrdering: true}
)

func names(t *testing.T, docs []bson.Raw) []string {
	t.Helper()
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.Lookup("name").StringValue()
	}
	return out
}

func seedNames(t *testing.T, coll *mongo.Collection, ns ...string) {
	t.Helper()
	docs := make([]any, len(ns))
	for i, n := range ns {
		docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "name", Value: n}}
	}
	if _, err := coll.InsertMany(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
}

func TestCollationFindSortCountDistinct(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	coll := client.Database(testDB).Collection("coll_find")
	seedNames(t, coll, "cafe", "Cafe", "CAFE", "café", "b", "10", "9")

	// Strength 2 ignores case, not diacritics.
	got := names(t, findAll(t, coll, bson.D{{Key: "name", Value: "cafe"}}, options.Find().SetCollation(caseInsensitive).SetSort(bson.D{{Key: "_id", Value: 1}})))
	if want := []string{"cafe", "Cafe", "CAFE"}; !slices.Equal(got, want) {
		t.Errorf("strength 2 equality: %v, want %v", got, want)
	}
	// Without a collation the comparison is binary.
	if got := names(t, findAll(t, coll, bson.D{{Key: "name", Value: "cafe"}})); !slices.Equal(got, []string{"cafe"}) {
		t.Errorf("simple equality: %v", got)
	}
	// $in, $ne and ranges follow the collation too.
	got = names(t, findAll(t, coll, bson.D{{Key: "name", Value: bson.D{{Key: "$in", Value: bson.A{"CAFÉ", "B"}}}}}, options.Find().SetCollation(caseInsensitive).SetSort(bson.D{{Key: "_id", Value: 1}})))
	if want := []string{"café", "b"}; !slices.Equal(got, want) {
		t.Errorf("$in: %v, want %v", got, want)
	}
	n, err := coll.CountDocuments(ctx, bson.D{{Key: "name", Value: bson.D{{Key: "$ne", Value: "CAFE"}}}}, options.Count().SetCollation(caseInsensitive))
	if err != nil || n != 4 {
		t.Errorf("$ne count: %d %v, want 4", n, err)
	}
	// Numeric ordering sorts digit runs by value: "9" before "10".
	got = names(t, findAll(t, coll, bson.D{{Key: "name", Value: bson.D{{Key: "$lt", Value: "a"}}}}, options.Find().SetCollation(numeric).SetSort(bson.D{{Key: "name", Value: 1}})))
	if want := []string{"9", "10"}; !slices.Equal(got, want) {
		t.Errorf("numericOrdering sort: %v, want %v", got, want)
	}
	// ICU's tertiary order: lower case first, then accents after.
	got = names(t, findAll(t, coll, bson.D{{Key: "name", Value: bson.D{{Key: "$regex", Value: "^[cC]"}}}}, options.Find().SetCollation(&options.Collation{Locale: "en"}).SetSort(bson.D{{Key: "name", Value: 1}})))
	if want := []string{"cafe", "Cafe", "CAFE", "café"}; !slices.Equal(got, want) {
		t.Errorf("en sort: %v, want %v", got, want)
	}
	// distinct keeps one of the values equal under the collation.
	var vals []string
	res := coll.Distinct(ctx, "name", bson.D{{Key: "name", Value: bson.D{{Key: "$gte", Value: "c"}}}}, options.Distinct().SetCollation(caseInsensitive))
	if err := res.Decode(&vals); err != nil || len(vals) != 2 || !strings.EqualFold(vals[0], "cafe") || vals[1] != "café" {
		t.Errorf("distinct: %v %v", vals, err)
	}
}

func TestCollationWrites(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	coll := client.Database(testDB).Collection("coll_writes")
	seedNames(t, coll, "a", "A", "b")
	ur, err := coll.UpdateMany(ctx, bson.D{{Key: "name", Value: "a"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "hit", Value: true}}}}, options.UpdateMany().SetCollation(caseInsensitive))
	if err != nil || ur.MatchedCount != 2 {
		t.Fatalf("updateMany: %+v %v", ur, err)
	}
	var doc bson.M
	err = coll.FindOneAndUpdate(ctx, bson.D{{Key: "name", Value: "B"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}, options.FindOneAndUpdate().SetCollation(caseInsensitive)).Decode(&doc)
	if err != nil || doc["name"] != "b" {
		t.Fatalf("findAndModify: %v %v", doc, err)
	}
	dr, err := coll.DeleteMany(ctx, bson.D{{Key: "name", Value: "A"}}, options.DeleteMany().SetCollation(caseInsensitive))
	if err != nil || dr.DeletedCount != 2 {
		t.Fatalf("deleteMany: %+v %v", dr, err)
	}
}

// caseInsensitiveNames creates coll_default in db with the
// case-insensitive default collation, holding the names Ann, ann and Bob.
func caseInsensitiveNames(t *testing.T, db *mongo.Database) *mongo.Collection {
	t.Helper()
	if err := db.CreateCollection(t.Context(), "coll_default", options.CreateCollection().SetCollation(caseInsensitive)); err != nil {
		t.Fatal(err)
	}
	coll := db.Collection("coll_default")
	seedNames(t, coll, "Ann", "ann", "Bob")
	return coll
}

func TestCollationDefaultAndIndexes(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	coll := caseInsensitiveNames(t, db)
	// The collection's default applies to a find naming no collation...
	if got := findAll(t, coll, bson.D{{Key: "name", Value: "ANN"}}); len(got) != 2 {
		t.Errorf("default collation find: %d documents, want 2", len(got))
	}
	// ...and {locale: "simple"} opts out of it.
	if got := findAll(t, coll, bson.D{{Key: "name", Value: "ANN"}}, options.Find().SetCollation(&options.Collation{Locale: "simple"})); len(got) != 0 {
		t.Errorf("simple collation find: %d documents, want 0", len(got))
	}
	// listCollections reports the normalized collation, version 57.1.
	specs, err := db.ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: "coll_default"}})
	if err != nil || len(specs) != 1 {
		t.Fatal(specs, err)
	}
	want := bson.D{{Key: "locale", Value: "en"}, {Key: "caseLevel", Value: false}, {Key: "caseFirst", Value: "off"}, {Key: "strength", Value: int32(2)},
		{Key: "numericOrdering", Value: false}, {Key: "alternate", Value: "non-ignorable"}, {Key: "maxVariable", Value: "punct"},
		{Key: "normalization", Value: false}, {Key: "backwards", Value: false}, {Key: "version", Value: "57.1"}}
	if got := specs[0].Options.Lookup("collation"); !bsonEqual(got.Document(), mustRaw(t, want)) {
		t.Errorf("listCollections collation: %v", got)
	}
	// An index inherits the default collation; listIndexes reports it.
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "name", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	ixs, err := coll.Indexes().ListSpecifications(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, ix := range ixs {
		if ix.Name == "name_1" {
			found = true
			raw, _ := bson.Marshal(ix)
			_ = raw
		}
	}
	if !found {
		t.Fatal("name_1 missing")
	}
	cur, err := coll.Indexes().List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var raws []bson.Raw
	if err := cur.All(ctx, &raws); err != nil {
		t.Fatal(err)
	}
	if c := raws[1].Lookup("collation"); !bsonEqual(c.Document(), mustRaw(t, want)) {
		t.Errorf("listIndexes collation: %v", raws[1])
	}
	// The _id index follows the default collation too: "X" and "x" are
	// one _id.
	if c := raws[0].Lookup("collation"); !bsonEqual(c.Document(), mustRaw(t, want)) {
		t.Errorf("listIndexes _id collation: %v", raws[0])
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "x"}}); err != nil {
		t.Fatal(err)
	}
	_, err = coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "X"}})
	requireCode(t, err, 11000, "")
	if got := findAll(t, coll, bson.D{{Key: "_id", Value: "X"}}); len(got) != 1 || got[0].Lookup("_id").StringValue() != "x" {
		t.Errorf("_id lookup under the default collation: %v", got)
	}
	if got := findAll(t, coll, bson.D{{Key: "_id", Value: "X"}}, options.Find().SetCollation(&options.Collation{Locale: "simple"})); len(got) != 0 {
		t.Errorf("_id lookup under the simple collation: %v", got)
	}
}

// A unique index with strength 2 treats "A" and "a" as the same key
// (https://www.mongodb.com/docs/v7.0/core/index-case-insensitive/).
func TestCollationUniqueIndex(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	coll := client.Database(testDB).Collection("coll_unique")
	_, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "name", Value: 1}},
		Options: options.Index().SetUnique(true).SetCollation(caseInsensitive)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "name", Value: "A"}}); err != nil {
		t.Fatal(err)
	}
	_, err = coll.InsertOne(ctx, bson.D{{Key: "name", Value: "a"}})
	requireCode(t, err, 11000, "")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "name", Value: "á"}}); err != nil {
		t.Fatalf("a diacritic differs at strength 2: %v", err)
	}
}

// A case-insensitive lookup through a strength-2 index examines only the
// matching keys, as a plain equality does; a query with another collation
// cannot use the index's string bounds.
func TestCollationIndexScan(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	coll := db.Collection("coll_scan")
	var docs []any
	for i := 0; i < 1000; i++ {
		name := "user" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune('a'+i/26))
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "name", Value: name}})
	}
	docs = append(docs, bson.D{{Key: "_id", Value: 1000}, {Key: "name", Value: "Target"}}, bson.D{{Key: "_id", Value: 1001}, {Key: "name", Value: "TARGET"}}, bson.D{{Key: "_id", Value: 1002}, {Key: "name", Value: "target"}})
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "name", Value: 1}}, Options: options.Index().SetCollation(caseInsensitive)}); err != nil {
		t.Fatal(err)
	}
	explain := func(coll *options.Collation) bson.Raw {
		cmd := bson.D{{Key: "find", Value: "coll_scan"}, {Key: "filter", Value: bson.D{{Key: "name", Value: "tArGeT"}}}}
		if coll != nil {
			cmd = append(cmd, bson.E{Key: "collation", Value: coll})
		}
		var out bson.Raw
		if err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: cmd}, {Key: "verbosity", Value: "executionStats"}}).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	out := explain(caseInsensitive)
	stats := out.Lookup("executionStats").Document()
	if n := stats.Lookup("nReturned").AsInt64(); n != 3 {
		t.Errorf("nReturned %d, want 3", n)
	}
	t.Logf("strength-2 lookup: nReturned %d, totalKeysExamined %d, totalDocsExamined %d of %d documents",
		stats.Lookup("nReturned").AsInt64(), stats.Lookup("totalKeysExamined").AsInt64(), stats.Lookup("totalDocsExamined").AsInt64(), len(docs))
	if k := stats.Lookup("totalKeysExamined").AsInt64(); k > 4 {
		t.Errorf("totalKeysExamined %d, want at most 4 (the 3 matches and the end of the range)", k)
	}
	if !strings.Contains(out.Lookup("queryPlanner", "winningPlan").String(), `"collation"`) {
		t.Errorf("IXSCAN without collation: %s", out.Lookup("queryPlanner", "winningPlan"))
	}
	// queryPlanner shows the query's collation after parsedQuery, fully
	// spelled (collation.js "Explain of find should include query
	// collation"), and none under the simple collation.
	qp := out.Lookup("queryPlanner").Document()
	keys := []string{}
	if els, err := qp.Elements(); err == nil {
		for _, e := range els[:4] {
			keys = append(keys, e.Key())
		}
	}
	if s := qp.Lookup("collation", "strength"); !slices.Equal(keys, []string{"namespace", "indexFilterSet", "parsedQuery", "collation"}) || s.AsInt64() != 2 || qp.Lookup("collation", "version").StringValue() != "57.1" {
		t.Errorf("queryPlanner %v: %s", keys, qp)
	}
	// The simple collation cannot use the strength-2 index for a string.
	out = explain(&options.Collation{Locale: "simple"})
	if _, err := out.LookupErr("queryPlanner", "collation"); err == nil {
		t.Errorf("simple query with a collation: %s", out.Lookup("queryPlanner"))
	}
	if s := out.Lookup("queryPlanner", "winningPlan").String(); strings.Contains(s, "IXSCAN") {
		t.Errorf("simple query used the collated index: %s", s)
	}
	if n := out.Lookup("executionStats", "nReturned").AsInt64(); n != 0 {
		t.Errorf("simple nReturned %d, want 0", n)
	}
	// Sorting through the index under its collation.
	got := names(t, findAll(t, coll, bson.D{{Key: "name", Value: bson.D{{Key: "$gte", Value: "t"}}}}, options.Find().SetCollation(caseInsensitive).SetSort(bson.D{{Key: "name", Value: 1}}).SetLimit(3)))
	if len(got) != 3 || !strings.EqualFold(got[0], "target") {
		t.Errorf("collated index sort: %v", got)
	}
}

func TestCollationErrors(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	for _, tc := range []struct {
		coll any
		code int
		name string
	}{
		{bson.D{{Key: "locale", Value: "xx"}}, 2, "BadValue"},
		{bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: 9}}, 9, "FailedToParse"},
		{bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: "2"}}, 14, "TypeMismatch"},
		{bson.D{{Key: "locale", Value: "en"}, {Key: "bogus", Value: 1}}, 9, "FailedToParse"},
		{bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: 2}, {Key: "caseFirst", Value: "upper"}}, 2, "BadValue"},
		{bson.D{{Key: "locale", Value: "ja"}, {Key: "strength", Value: 4}, {Key: "alternate", Value: "shifted"}}, 238, "NotImplemented"},
		{bson.D{{Key: "strength", Value: 2}}, 4, "NoSuchKey"},
	} {
		err := db.RunCommand(ctx, bson.D{{Key: "find", Value: "c"}, {Key: "collation", Value: tc.coll}}).Err()
		requireCode(t, err, tc.code, tc.name)
	}
	// 2d and text keys take no collation, given or inherited
	en := bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: 2}}
	if err := db.CreateCollection(ctx, "collated", options.CreateCollection().SetCollation(&options.Collation{Locale: "en"})); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		coll string
		key  bson.D
		opts bson.D
	}{
		{"c", bson.D{{Key: "loc", Value: "2d"}}, bson.D{{Key: "collation", Value: en}}},
		{"c", bson.D{{Key: "t", Value: "text"}}, bson.D{{Key: "collation", Value: en}}},
		{"collated", bson.D{{Key: "loc", Value: "2d"}}, nil},
		{"collated", bson.D{{Key: "t", Value: "text"}}, nil},
	} {
		spec := append(bson.D{{Key: "key", Value: tc.key}, {Key: "name", Value: "i"}}, tc.opts...)
		err := db.RunCommand(ctx, bson.D{{Key: "createIndexes", Value: tc.coll}, {Key: "indexes", Value: bson.A{spec}}}).Err()
		requireCode(t, err, 67, "CannotCreateIndex")
	}
}

// aggregate follows the collation in $match, $sort and $group's keys
// (https://www.mongodb.com/docs/v7.0/reference/method/db.collection.aggregate/,
// "Specify a Collation"), in expressions and accumulators, and in its reads
// of other collections.
func TestCollationAggregate(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	coll := client.Database(testDB).Collection("coll_agg")
	seedNames(t, coll, "cafe", "Cafe", "CAFE", "b", "B", "a")
	pipeline := bson.A{
		bson.D{{Key: "$project", Value: bson.D{{Key: "name", Value: 1}}}},
		bson.D{{Key: "$match", Value: bson.D{{Key: "name", Value: bson.D{{Key: "$gte", Value: "B"}}}}}},
		bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$name"}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}},
		bson.D{{Key: "$sort", Value: bson.D{{Key: "_id", Value: -1}}}},
	}
	cur, err := coll.Aggregate(ctx, pipeline, options.Aggregate().SetCollation(caseInsensitive))
	if err != nil {
		t.Fatal(err)
	}
	var got []struct {
		ID string `bson:"_id"`
		N  int32  `bson:"n"`
	}
	if err := cur.All(ctx, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !strings.EqualFold(got[0].ID, "cafe") || got[0].N != 3 || !strings.EqualFold(got[1].ID, "b") || got[1].N != 2 {
		t.Errorf("collated $group: %+v", got)
	}
	// Without a collation every spelling is its own group, and binary
	// order puts every lower-case name at or above "B".
	cur, err = coll.Aggregate(ctx, pipeline)
	if err != nil {
		t.Fatal(err)
	}
	if err := cur.All(ctx, &got); err != nil || len(got) != 6 {
		t.Errorf("simple $group: %+v %v", got, err)
	}
	// Expressions, accumulators and reads of other collections follow it
	// too (https://www.mongodb.com/docs/v7.0/reference/collation/#operations-that-support-collation).
	foreign := client.Database(testDB).Collection("coll_agg_x")
	seedNames(t, foreign, "CAFE", "b")
	matched := func(c *options.Collation, stages ...bson.D) []bson.Raw {
		t.Helper()
		pipeline := bson.A{}
		for _, st := range stages {
			pipeline = append(pipeline, st)
		}
		opts := options.Aggregate()
		if c != nil {
			opts.SetCollation(c)
		}
		return aggregateAll(t, coll, pipeline, opts)
	}
	lookup := bson.D{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "coll_agg_x"}, {Key: "localField", Value: "name"}, {Key: "foreignField", Value: "name"}, {Key: "as", Value: "m"}}}}
	onlyMatched := bson.D{{Key: "$match", Value: bson.D{{Key: "m.0", Value: bson.D{{Key: "$exists", Value: true}}}}}}
	if n := len(matched(caseInsensitive, lookup, onlyMatched)); n != 5 {
		t.Errorf("collated $lookup: %d documents found a match, want 5", n)
	}
	if n := len(matched(nil, lookup, onlyMatched)); n != 2 {
		t.Errorf("simple $lookup: %d documents found a match, want 2", n)
	}
	eq := bson.D{{Key: "$match", Value: bson.D{{Key: "$expr", Value: bson.D{{Key: "$eq", Value: bson.A{"$name", "CAFE"}}}}}}}
	if n := len(matched(caseInsensitive, bson.D{{Key: "$project", Value: bson.D{{Key: "name", Value: 1}}}}, eq)); n != 3 {
		t.Errorf("collated $expr: %d documents, want 3", n)
	}
	set := bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: nil}, {Key: "s", Value: bson.D{{Key: "$addToSet", Value: "$name"}}}, {Key: "min", Value: bson.D{{Key: "$min", Value: "$name"}}}}}}
	out := matched(caseInsensitive, set)
	// Binary order would give six distinct names and "B" as the least.
	if vals, _ := out[0].Lookup("s").Array().Values(); len(vals) != 3 || out[0].Lookup("min").StringValue() != "a" {
		t.Errorf("collated $addToSet/$min: %s", out[0])
	}
}

// A collection's default collation and an index's survive a restart: the
// stored keys keep following them.
func TestCollationRestart(t *testing.T) {
	cfg := instance.Config{Addr: "127.0.0.1:0", DBPath: t.TempDir()}
	first, err := instance.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	client := dial(t, first)
	db := client.Database(testDB)
	if err := db.CreateCollection(ctx, "kept", options.CreateCollection().SetCollation(caseInsensitive)); err != nil {
		t.Fatal(err)
	}
	coll := db.Collection("kept")
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "name", Value: 1}}, Options: options.Index().SetUnique(true)}); err != nil {
		t.Fatal(err)
	}
	seedNames(t, coll, "Ann")
	client.Disconnect(ctx)
	client = dial(t, restart(t, first, cfg))
	coll = client.Database(testDB).Collection("kept")
	if got := findAll(t, coll, bson.D{{Key: "name", Value: "ANN"}}); len(got) != 1 {
		t.Errorf("default collation after restart: %d documents", len(got))
	}
	_, err = coll.InsertOne(ctx, bson.D{{Key: "name", Value: "ann"}})
	requireCode(t, err, 11000, "")
}

// A find's projection follows its collation: computed fields compare
// under it, and so does $elemMatch.
func TestCollationProjection(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	coll := client.Database(testDB).Collection("coll_proj")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "name", Value: "cafe"}, {Key: "tags", Value: bson.A{"x", "Cafe"}}}); err != nil {
		t.Fatal(err)
	}
	proj := bson.D{{Key: "e", Value: bson.D{{Key: "$eq", Value: bson.A{"$name", "CAFE"}}}}, {Key: "tags", Value: bson.D{{Key: "$elemMatch", Value: bson.D{{Key: "$eq", Value: "CAFE"}}}}}}
	for _, tc := range []struct {
		coll *options.Collation
		want string
	}{
		// An $elemMatch field comes after the others (MongoDB 4.4+).
		{caseInsensitive, `{"_id": {"$numberInt":"1"},"e": true,"tags": ["Cafe"]}`},
		{nil, `{"_id": {"$numberInt":"1"},"e": false}`},
	} {
		opts := options.FindOne().SetProjection(proj)
		if tc.coll != nil {
			opts.SetCollation(tc.coll)
		}
		got, err := coll.FindOne(ctx, bson.D{}, opts).Raw()
		if err != nil {
			t.Fatal(err)
		}
		if got.String() != tc.want {
			t.Errorf("collation %v: %s, want %s", tc.coll, got, tc.want)
		}
	}
}

// TestCollationAgainstICU runs collations of internal/collation's ICU
// corpus (every string of a collation, in ICU's order, one class of equal
// strings a line) through the driver: a sort without an index, a scan of an
// index with the collation, distinct and an equality match must all follow
// ICU's classes.
func TestCollationAgainstICU(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	data, err := os.ReadFile(filepath.Join("..", "..", "internal", "collation", "testdata", "icu.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for n, block := range strings.Split(strings.TrimSpace(string(data)), "\n\n") {
		lines := strings.Split(block, "\n")
		header := strings.TrimPrefix(lines[0], "collation ")
		// Every collation with an option or locale the others lack, and
		// every fifth of the rest.
		if n%5 != 0 && !strings.Contains(header, "caseFirst") && !strings.Contains(header, "space") {
			continue
		}
		var spec bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(header), false, &spec); err != nil {
			t.Fatal(err)
		}
		class := map[string]int{}
		var docs []any
		var biggest []string
		for i, line := range lines[1:] {
			var members []string
			for rest := strings.TrimSpace(line); rest != ""; rest = strings.TrimSpace(rest) {
				q, err := strconv.QuotedPrefix(rest)
				if err != nil {
					t.Fatal(err)
				}
				s, _ := strconv.Unquote(q)
				class[s] = i
				members = append(members, s)
				docs = append(docs, bson.D{{Key: "_id", Value: len(docs)}, {Key: "s", Value: s}})
				rest = rest[len(q):]
			}
			if len(members) > len(biggest) {
				biggest = members
			}
		}
		coll := client.Database(testDB).Collection(fmt.Sprintf("icu_%d", n))
		if _, err := coll.InsertMany(ctx, docs); err != nil {
			t.Fatal(err)
		}
		if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "s", Value: 1}}, Options: options.Index().SetName("s_icu").SetCollation(collationOf(t, spec))}); err != nil {
			t.Fatal(err)
		}
		check := func(how string, got []bson.Raw) {
			t.Helper()
			if len(got) != len(docs) {
				t.Errorf("%s %s: %d documents, want %d", header, how, len(got), len(docs))
				return
			}
			for i := 1; i < len(got); i++ {
				a, b := got[i-1].Lookup("s").StringValue(), got[i].Lookup("s").StringValue()
				if class[a] > class[b] {
					t.Errorf("%s %s: %q before %q, ICU sorts it after", header, how, a, b)
				}
			}
		}
		sorted := options.Find().SetCollation(collationOf(t, spec)).SetSort(bson.D{{Key: "s", Value: 1}})
		check("sort", findAll(t, coll, bson.D{{Key: "s", Value: bson.D{{Key: "$exists", Value: true}}}}, sorted.SetHint(bson.D{{Key: "$natural", Value: 1}})))
		check("index scan", findAll(t, coll, bson.D{}, options.Find().SetCollation(collationOf(t, spec)).SetSort(bson.D{{Key: "s", Value: 1}}).SetHint("s_icu")))
		var vals []string
		if err := coll.Distinct(ctx, "s", bson.D{}, options.Distinct().SetCollation(collationOf(t, spec))).Decode(&vals); err != nil || len(vals) != len(lines)-1 {
			t.Errorf("%s distinct: %d values (%v), ICU has %d classes", header, len(vals), err, len(lines)-1)
		}
		if got := findAll(t, coll, bson.D{{Key: "s", Value: biggest[len(biggest)-1]}}, options.Find().SetCollation(collationOf(t, spec)).SetHint("s_icu")); len(got) != len(biggest) {
			t.Errorf("%s: %q matches %d strings, ICU %d (%q)", header, biggest[len(biggest)-1], len(got), len(biggest), biggest)
		}
	}
}

// collationOf is a collation document as the driver's options.
func collationOf(t *testing.T, spec bson.Raw) *options.Collation {
	t.Helper()
	var c options.Collation
	elems, err := spec.Elements()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range elems {
		v := e.Value()
		switch e.Key() {
		case "locale":
			c.Locale = v.StringValue()
		case "strength":
			c.Strength = int(v.AsInt64())
		case "caseLevel":
			c.CaseLevel = v.Boolean()
		case "caseFirst":
			c.CaseFirst = v.StringValue()
		case "alternate":
			c.Alternate = v.StringValue()
		case "maxVariable":
			c.MaxVariable = v.StringValue()
		case "numericOrdering":
			c.NumericOrdering = v.Boolean()
		case "backwards":
			c.Backwards = v.Boolean()
		default:
			t.Fatalf("collation field %s", e.Key())
		}
	}
	return &c
}

// TestUpdateOperatorsFollowCollation: the operators that compare values
// ($addToSet, $pull, $pullAll, $min, $max, $push's $sort) and arrayFilters
// follow the statement's collation, or the collection's default, as in
// MongoDB; without one they compare binary.
func TestUpdateOperatorsFollowCollation(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	caseless := &options.Collation{Locale: "en", Strength: 2}
	if err := db.CreateCollection(ctx, "ci", options.CreateCollection().SetCollation(caseless)); err != nil {
		t.Fatal(err)
	}
	doc := bson.D{{Key: "_id", Value: 1}, {Key: "tags", Value: bson.A{"Apple", "banana", "Cherry"}}, {Key: "name", Value: "apple"}, {Key: "s", Value: bson.A{}}}
	tests := []struct {
		name    string
		update  bson.D
		filters []any
		want    string // the document after, as Extended JSON
	}{
		{"$addToSet of an equal string", bson.D{{Key: "$addToSet", Value: bson.D{{Key: "tags", Value: "APPLE"}}}}, nil,
			`{"_id":1,"tags":["Apple","banana","Cherry"],"name":"apple","s":[]}`},
		{"$pull of an equal string", bson.D{{Key: "$pull", Value: bson.D{{Key: "tags", Value: "APPLE"}}}}, nil,
			`{"_id":1,"tags":["banana","Cherry"],"name":"apple","s":[]}`},
		{"$pull by a condition", bson.D{{Key: "$pull", Value: bson.D{{Key: "tags", Value: bson.D{{Key: "$in", Value: bson.A{"BANANA"}}}}}}}, nil,
			`{"_id":1,"tags":["Apple","Cherry"],"name":"apple","s":[]}`},
		{"$pullAll", bson.D{{Key: "$pullAll", Value: bson.D{{Key: "tags", Value: bson.A{"cherry", "APPLE"}}}}}, nil,
			`{"_id":1,"tags":["banana"],"name":"apple","s":[]}`},
		{"$max orders by the collation", bson.D{{Key: "$max", Value: bson.D{{Key: "name", Value: "Banana"}}}}, nil,
			`{"_id":1,"tags":["Apple","banana","Cherry"],"name":"Banana","s":[]}`},
		{"$min of an equal string keeps the value", bson.D{{Key: "$min", Value: bson.D{{Key: "name", Value: "APPLE"}}}}, nil,
			`{"_id":1,"tags":["Apple","banana","Cherry"],"name":"apple","s":[]}`},
		{"$push with $sort", bson.D{{Key: "$push", Value: bson.D{{Key: "s", Value: bson.D{{Key: "$each", Value: bson.A{"b", "a", "B"}}, {Key: "$sort", Value: 1}}}}}}, nil,
			`{"_id":1,"tags":["Apple","banana","Cherry"],"name":"apple","s":["a","b","B"]}`},
		{"arrayFilters", bson.D{{Key: "$set", Value: bson.D{{Key: "tags.$[t]", Value: "x"}}}}, []any{bson.D{{Key: "t", Value: "CHERRY"}}},
			`{"_id":1,"tags":["Apple","banana","x"],"name":"apple","s":[]}`},
	}
	check := func(t *testing.T, c *mongo.Collection, want string) {
		t.Helper()
		var got bson.Raw
		if err := c.FindOne(ctx, bson.D{}).Decode(&got); err != nil {
			t.Fatal(err)
		}
		var w bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(want), false, &w); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, w) {
			t.Fatalf("got %s, want %s", got, want)
		}
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// the collection's default collation
			c := db.Collection("ci")
			if _, err := c.DeleteMany(ctx, bson.D{}); err != nil {
				t.Fatal(err)
			}
			if _, err := c.InsertOne(ctx, doc); err != nil {
				t.Fatal(err)
			}
			opts := options.UpdateOne()
			if tc.filters != nil {
				opts.SetArrayFilters(tc.filters)
			}
			if _, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, tc.update, opts); err != nil {
				t.Fatal(err)
			}
			check(t, c, tc.want)
			// the statement's collation, through findAndModify
			plain := db.Collection("plain")
			if _, err := plain.DeleteMany(ctx, bson.D{}); err != nil {
				t.Fatal(err)
			}
			if _, err := plain.InsertOne(ctx, doc); err != nil {
				t.Fatal(err)
			}
			fo := options.FindOneAndUpdate().SetCollation(caseless)
			if tc.filters != nil {
				fo.SetArrayFilters(tc.filters)
			}
			if err := plain.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: 1}}, tc.update, fo).Err(); err != nil {
				t.Fatal(err)
			}
			check(t, plain, tc.want)
		})
	}
	// without a collation, binary comparison: "APPLE" is another value
	plain := db.Collection("binary")
	if _, err := plain.InsertOne(ctx, doc); err != nil {
		t.Fatal(err)
	}
	if _, err := plain.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$addToSet", Value: bson.D{{Key: "tags", Value: "APPLE"}}}, {Key: "$max", Value: bson.D{{Key: "name", Value: "Banana"}}}}); err != nil {
		t.Fatal(err)
	}
	check(t, plain, `{"_id":1,"tags":["Apple","banana","Cherry","APPLE"],"name":"apple","s":[]}`)
}

// TestValidatorFollowsCollation: a validator compares strings under the
// collection's default collation, as in MongoDB.
func TestValidatorFollowsCollation(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	validator := bson.D{{Key: "status", Value: bson.D{{Key: "$in", Value: bson.A{"active", "done"}}}}}
	if err := db.CreateCollection(ctx, "ci", options.CreateCollection().SetValidator(validator).SetCollation(&options.Collation{Locale: "en", Strength: 2})); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateCollection(ctx, "binary", options.CreateCollection().SetValidator(validator)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("ci").InsertOne(ctx, bson.D{{Key: "status", Value: "ACTIVE"}}); err != nil {
		t.Fatalf("caseless validator refused ACTIVE: %v", err)
	}
	_, err := db.Collection("binary").InsertOne(ctx, bson.D{{Key: "status", Value: "ACTIVE"}})
	requireCode(t, err, 121, "DocumentValidationFailure")
}

// TestViewCollationNotInherited: a view created without a collation reads
// under the simple one, not its collection's default, and refuses an
// operation naming another; one created with a collation reads under it,
// as in MongoDB.
func TestViewCollationNotInherited(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	caseless := &options.Collation{Locale: "en", Strength: 2}
	if err := db.CreateCollection(ctx, "fruit", options.CreateCollection().SetCollation(caseless)); err != nil {
		t.Fatal(err)
	}
	seed(t, db.Collection("fruit"), []bson.Raw{mustRaw(t, bson.D{{Key: "_id", Value: 1}, {Key: "x", Value: "apple"}}), mustRaw(t, bson.D{{Key: "_id", Value: 2}, {Key: "x", Value: "Apple"}})})
	if err := db.CreateView(ctx, "plainview", "fruit", mongo.Pipeline{}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateView(ctx, "ciview", "fruit", mongo.Pipeline{}, options.CreateView().SetCollation(caseless)); err != nil {
		t.Fatal(err)
	}
	filter := bson.D{{Key: "x", Value: "apple"}}
	if got := findAll(t, db.Collection("fruit"), filter); len(got) != 2 {
		t.Fatalf("collection under its caseless default: %d documents, want 2", len(got))
	}
	if got := findAll(t, db.Collection("plainview"), filter); len(got) != 1 {
		t.Fatalf("view without a collation: %d documents, want 1 (the simple collation)", len(got))
	}
	if got := findAll(t, db.Collection("ciview"), filter); len(got) != 2 {
		t.Fatalf("view with a caseless collation: %d documents, want 2", len(got))
	}
	_, err := db.Collection("plainview").Find(ctx, filter, options.Find().SetCollation(caseless))
	requireCode(t, err, 167, "OptionNotSupportedOnView")
	// A view a $lookup reads under another collation: MongoDB 7.0's
	// collatorCompatibleWithPipeline names it right after its message.
	_, err = db.Collection("fruit").Aggregate(ctx, mongo.Pipeline{{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "plainview"}, {Key: "localField", Value: "x"}, {Key: "foreignField", Value: "x"}, {Key: "as", Value: "r"}}}}})
	requireError(t, err, 167, "OptionNotSupportedOnView", "Cannot override a view's default collation"+testDB+".plainview")
}

// TestEmptyCollation: a command's collation {} names none, so the
// collection's default applies, in reads and writes alike, as MongoDB
// parses a collation only when it is not empty; an index's or a new
// collection's {} is refused (BadValue, and NoSuchKey for the missing
// locale).
func TestEmptyCollation(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	caseInsensitiveNames(t, db)
	empty := bson.D{}
	ann := bson.D{{Key: "name", Value: "ANN"}}
	count := func(cmd bson.D, path ...string) int64 {
		t.Helper()
		raw, err := db.RunCommand(ctx, cmd).Raw()
		if err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
		return raw.Lookup(path...).AsInt64()
	}
	if n := count(bson.D{{Key: "count", Value: "coll_default"}, {Key: "query", Value: ann}, {Key: "collation", Value: empty}}, "n"); n != 2 {
		t.Errorf("count: %d, want 2", n)
	}
	raw, err := db.RunCommand(ctx, bson.D{{Key: "find", Value: "coll_default"}, {Key: "filter", Value: ann}, {Key: "collation", Value: empty}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if docs, _ := raw.Lookup("cursor", "firstBatch").Array().Values(); len(docs) != 2 {
		t.Errorf("find: %d documents, want 2", len(docs))
	}
	raw, err = db.RunCommand(ctx, bson.D{{Key: "distinct", Value: "coll_default"}, {Key: "key", Value: "name"}, {Key: "collation", Value: empty}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if vals, _ := raw.Lookup("values").Array().Values(); len(vals) != 2 {
		t.Errorf("distinct: %v, want two names", vals)
	}
	raw, err = db.RunCommand(ctx, bson.D{{Key: "aggregate", Value: "coll_default"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$match", Value: ann}}}},
		{Key: "cursor", Value: bson.D{}}, {Key: "collation", Value: empty}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if docs, _ := raw.Lookup("cursor", "firstBatch").Array().Values(); len(docs) != 2 {
		t.Errorf("aggregate: %d documents, want 2", len(docs))
	}
	if n := count(bson.D{{Key: "update", Value: "coll_default"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: ann},
		{Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "seen", Value: true}}}}}, {Key: "multi", Value: true}, {Key: "collation", Value: empty}}}}}, "nModified"); n != 2 {
		t.Errorf("update: %d modified, want 2", n)
	}
	if n := count(bson.D{{Key: "delete", Value: "coll_default"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: ann},
		{Key: "limit", Value: 0}, {Key: "collation", Value: empty}}}}}, "n"); n != 2 {
		t.Errorf("delete: %d deleted, want 2", n)
	}

	index := bson.D{{Key: "createIndexes", Value: "coll_default"}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "name", Value: 1}}},
		{Key: "name", Value: "name_1"}, {Key: "collation", Value: empty}}}}}
	requireCode(t, db.RunCommand(ctx, index).Err(), 2, "BadValue")
	requireCode(t, db.RunCommand(ctx, bson.D{{Key: "create", Value: "other"}, {Key: "collation", Value: empty}}).Err(), 4, "NoSuchKey")
}

// TestGeoNearFollowsCollation: $geoNear's query compares strings under
// the aggregation's collation, the command's or the collection's default
// (jstests/core/collation.js, "$geoNear should return correct results").
func TestGeoNearFollowsCollation(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	stage := doc("$geoNear", doc("near", geoPoint(0, 0), "distanceField", "dist", "spherical", true, "query", doc("str", "ABC")))
	place := doc("geo", geoPoint(0, 0), "str", "abc")
	plain := db.Collection("geonear_coll")
	if _, err := plain.InsertOne(ctx, place); err != nil {
		t.Fatal(err)
	}
	if _, err := plain.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: doc("geo", "2dsphere")}); err != nil {
		t.Fatal(err)
	}
	if n := len(aggregateAll(t, plain, bson.A{stage})); n != 0 {
		t.Errorf("simple collation: %d documents, want 0", n)
	}
	if n := len(aggregateAll(t, plain, bson.A{stage}, options.Aggregate().SetCollation(caseInsensitive))); n != 1 {
		t.Errorf("caseless collation: %d documents, want 1", n)
	}
	// A collection's default collation leaves its geo index simple here
	// (created with the simple collation), and the query follows it.
	if err := db.CreateCollection(ctx, "geonear_ci", options.CreateCollection().SetCollation(caseInsensitive)); err != nil {
		t.Fatal(err)
	}
	ci := db.Collection("geonear_ci")
	if _, err := ci.InsertOne(ctx, place); err != nil {
		t.Fatal(err)
	}
	if _, err := ci.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: doc("geo", "2dsphere"), Options: options.Index().SetCollation(&options.Collation{Locale: "simple"})}); err != nil {
		t.Fatal(err)
	}
	if n := len(aggregateAll(t, ci, bson.A{stage})); n != 1 {
		t.Errorf("collection default: %d documents, want 1", n)
	}
	if n := len(aggregateAll(t, ci, bson.A{stage}, options.Aggregate().SetCollation(&options.Collation{Locale: "simple"}))); n != 0 {
		t.Errorf("simple over the default: %d documents, want 0", n)
	}
}

// TestGeoIndexCollation: a 2dsphere index takes a collation, its own or
// the collection's default; its S2 cells are numbers, its other fields'
// strings collation keys, which an equality before the geo field pins
// only under the same collation (jstests/core/collation.js, $geoNear and
// $nearSphere sections).
func TestGeoIndexCollation(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	if err := db.CreateCollection(ctx, "geo_ci", options.CreateCollection().SetCollation(caseInsensitive)); err != nil {
		t.Fatal(err)
	}
	coll := db.Collection("geo_ci")
	if _, err := coll.InsertMany(ctx, []any{
		doc("_id", 1, "str", "abc", "geo", geoPoint(0, 0)),
		doc("_id", 2, "str", "ABC", "geo", geoPoint(1, 1)),
		doc("_id", 3, "str", "x", "geo", geoPoint(0, 0)),
	}); err != nil {
		t.Fatal(err)
	}
	for _, keys := range []bson.D{doc("geo", "2dsphere"), doc("str", 1, "geo", "2dsphere")} {
		if err := coll.Indexes().DropAll(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: keys}); err != nil {
			t.Fatalf("%v under the collection's collation: %v", keys, err)
		}
		near := doc("str", "ABC", "geo", doc("$nearSphere", doc("$geometry", geoPoint(0, 0))))
		if got := idSet(findAll(t, coll, near)); !slices.Equal(got, []int{1, 2}) {
			t.Errorf("%v: $nearSphere found %v, want [1 2]", keys, got)
		}
		stage := doc("$geoNear", doc("near", geoPoint(0, 0), "distanceField", "d", "query", doc("str", "ABC")))
		if got := idSet(aggregateAll(t, coll, bson.A{stage})); !slices.Equal(got, []int{1, 2}) {
			t.Errorf("%v: $geoNear found %v, want [1 2]", keys, got)
		}
		within := doc("str", "ABC", "geo", doc("$geoWithin", doc("$centerSphere", bson.A{bson.A{0, 0}, 0.1})))
		if got := idSet(findAll(t, coll, within, options.Find().SetCollation(&options.Collation{Locale: "simple"}))); !slices.Equal(got, []int{2}) {
			t.Errorf("%v: simple $geoWithin found %v, want [2]", keys, got)
		}
		var v bson.Raw
		if err := db.RunCommand(ctx, doc("validate", "geo_ci")).Decode(&v); err != nil || !v.Lookup("valid").Boolean() {
			t.Errorf("%v: validate %s %v", keys, v, err)
		}
	}
}

// TestWildcardIndexCollation follows jstests/core/index/wildcard/
// wildcard_index_collation.js: a wildcard index inherits the collection's
// default collation and keys its values' strings by it, while its paths
// compare bytewise ("a.b" is not "A.B"); a query under another collation
// reads no string bounds from it. Every plan answers alike.
func TestWildcardIndexCollation(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	strength1 := &options.Collation{Locale: "en_US", Strength: 1}
	if err := db.CreateCollection(ctx, "wild_ci", options.CreateCollection().SetCollation(strength1)); err != nil {
		t.Fatal(err)
	}
	coll := db.Collection("wild_ci")
	if _, err := coll.InsertMany(ctx, []any{
		doc("_id", 1, "a", doc("b", "string", "c", "STRING"), "d", "sTrInG", "e", 5),
		doc("_id", 2, "a", doc("b", "STRING", "c", "string"), "d", "StRiNg", "e", 5),
		doc("_id", 3, "A", doc("B", "string", "C", "STRING"), "d", "sTrInG", "E", 5),
		doc("_id", 4, "A", doc("B", "STRING", "C", "string"), "d", "other", "E", 5),
	}); err != nil {
		t.Fatal(err)
	}
	for _, keys := range []bson.D{doc("$**", 1), doc("$**", 1, "b", 1)} {
		if err := coll.Indexes().DropAll(ctx); err != nil {
			t.Fatal(err)
		}
		opts := options.Index()
		if len(keys) > 1 {
			opts.SetWildcardProjection(doc("b", 0))
		}
		name, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: keys, Options: opts})
		if err != nil {
			t.Fatalf("%v under the collection's collation: %v", keys, err)
		}
		for _, tc := range []struct {
			filter bson.D
			simple bool
			want   []int
		}{
			{doc("a.b", "string"), false, []int{1, 2}},
			{doc("A.B", "string"), false, []int{3, 4}},
			{doc("d", "STRING"), false, []int{1, 2, 3}},
			{doc("d", doc("$gt", "otheR")), false, []int{1, 2, 3}},
			{doc("e", 5), false, []int{1, 2}},
			{doc("d", "sTrInG"), true, []int{1, 3}},
		} {
			for _, h := range []any{nil, name, doc("$natural", 1)} {
				fo := options.Find()
				if tc.simple {
					fo.SetCollation(&options.Collation{Locale: "simple"})
				}
				if h != nil && !(tc.simple && h == name) {
					fo.SetHint(h)
				}
				if got := idSet(findAll(t, coll, tc.filter, fo)); !slices.Equal(got, tc.want) {
					t.Errorf("%v: %v hint %v: found %v, want %v", keys, tc.filter, h, got, tc.want)
				}
			}
		}
		var v bson.Raw
		if err := db.RunCommand(ctx, doc("validate", "wild_ci")).Decode(&v); err != nil || !v.Lookup("valid").Boolean() {
			t.Errorf("%v: validate %s %v", keys, v, err)
		}
	}
}

// TestHashedIndexCollation follows jstests/core/index/hashed/
// hashed_index_collation.js: a hashed index takes a collation, its own or
// the collection's default, and hashes its strings' collation keys, so an
// equality under the same collation finds every string equal under it
// through the index; a query under another collation cannot use the
// hashed bounds for a string, and field names stay case sensitive.
func TestHashedIndexCollation(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	strength1 := &options.Collation{Locale: "en_US", Strength: 1}
	coll := db.Collection("hashed_coll")
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: doc("a.b", "hashed", "a.c", 1, "a.e", -1), Options: options.Index().SetCollation(strength1)}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertMany(ctx, []any{
		doc("_id", 0, "a", doc("b", "string", "c", "STRING", "e", 5)),
		doc("_id", 1, "a", doc("b", "STRING", "c", "string", "e", 5)),
		doc("_id", 2, "A", doc("B", "string", "C", "STRING", "E", 5)),
		doc("_id", 3, "a", doc("b", "strinG", "c", "other", "e", 5)),
	}); err != nil {
		t.Fatal(err)
	}
	hint := "a.b_hashed_a.c_1_a.e_-1"
	for _, tc := range []struct {
		filter bson.D
		opts   *options.FindOptionsBuilder
		want   []int
	}{
		{doc("a.b", "string", "a.c", "string"), options.Find().SetCollation(strength1), []int{0, 1}},
		{doc("a.b", "String"), options.Find().SetCollation(strength1), []int{0, 1, 3}},
		{doc("a.b", doc("$in", bson.A{"STRINg", 7})), options.Find().SetCollation(strength1), []int{0, 1, 3}},
		{doc("a.b", "string"), options.Find(), []int{0}},
		{doc("A.B", "STRING"), options.Find().SetCollation(strength1), []int{2}},
	} {
		for _, h := range []any{nil, hint, doc("$natural", 1)} {
			opts := *tc.opts
			if h != nil {
				opts.SetHint(h)
			}
			if got := idSet(findAll(t, coll, tc.filter, &opts)); !slices.Equal(got, tc.want) {
				t.Errorf("%v hint %v: found %v, want %v", tc.filter, h, got, tc.want)
			}
		}
	}
	// The index bounds the hashed field only under its own collation.
	var plan bson.Raw
	if err := db.RunCommand(ctx, doc("explain", doc("find", "hashed_coll", "filter", doc("a.b", "STRING"), "collation", doc("locale", "en_US", "strength", 1)))).Decode(&plan); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan.String(), `"IXSCAN"`) {
		t.Errorf("no IXSCAN under the index's collation: %s", plan)
	}
	// A hashed index on a collection with a default collation inherits it.
	if err := db.CreateCollection(ctx, "hashed_ci", options.CreateCollection().SetCollation(caseInsensitive)); err != nil {
		t.Fatal(err)
	}
	ci := db.Collection("hashed_ci")
	if _, err := ci.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: doc("h", "hashed")}); err != nil {
		t.Fatal(err)
	}
	if _, err := ci.InsertMany(ctx, []any{doc("_id", 0, "h", "abc"), doc("_id", 1, "h", "ABC"), doc("_id", 2, "h", "abd")}); err != nil {
		t.Fatal(err)
	}
	if got := idSet(findAll(t, ci, doc("h", "aBc"), options.Find().SetHint("h_hashed"))); !slices.Equal(got, []int{0, 1}) {
		t.Errorf("default collation: found %v, want [0 1]", got)
	}
	var v bson.Raw
	if err := db.RunCommand(ctx, doc("validate", "hashed_ci")).Decode(&v); err != nil || !v.Lookup("valid").Boolean() {
		t.Errorf("validate %s %v", v, err)
	}
}

// TestLookupInternalCollation follows
// jstests/aggregation/sources/lookup/lookup_foreign_collation.js: a
// $lookup's _internalCollation, when given, is the collation of its
// foreign side (the equality match and the sub-pipeline), whatever the
// command's or the collections' defaults; nested $lookups each take their
// own.
func TestLookupInternalCollation(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	strength1 := &options.Collation{Locale: "en_US", Strength: 1}
	simple := &options.Collation{Locale: "simple"}
	for _, name := range []string{"lfc_local", "lfc_local_ci", "lfc_foreign", "lfc_foreign_ci"} {
		opts := options.CreateCollection()
		if strings.HasSuffix(name, "_ci") {
			opts.SetCollation(strength1)
		}
		if err := db.CreateCollection(ctx, name, opts); err != nil {
			t.Fatal(err)
		}
		ids := "abcde"
		if strings.HasPrefix(name, "lfc_foreign") {
			ids = "aBcDe"
		}
		for _, id := range ids {
			if _, err := db.Collection(name).InsertOne(ctx, doc("_id", string(id))); err != nil {
				t.Fatal(err)
			}
		}
	}
	matched := func(local string, cmd *options.Collation, lookup bson.D) string {
		t.Helper()
		opts := options.Aggregate()
		if cmd != nil {
			opts.SetCollation(cmd)
		}
		var b strings.Builder
		for _, d := range aggregateAll(t, db.Collection(local), bson.A{doc("$lookup", lookup), doc("$sort", doc("_id", 1))}, opts) {
			vals, _ := d.Lookup("m").Array().Values()
			b.WriteString(strconv.Itoa(len(vals)))
		}
		return b.String()
	}
	for _, local := range []string{"lfc_local", "lfc_local_ci"} {
		for _, foreign := range []string{"lfc_foreign", "lfc_foreign_ci"} {
			for _, cmd := range []*options.Collation{nil, simple, strength1} {
				for _, tt := range []struct {
					coll *options.Collation
					want string
				}{{strength1, "11111"}, {simple, "10101"}} {
					eqForm := doc("from", foreign, "localField", "_id", "foreignField", "_id", "as", "m", "_internalCollation", tt.coll)
					pipeForm := doc("from", foreign, "let", doc("l", "$_id"), "pipeline", bson.A{doc("$match", doc("$expr", doc("$eq", bson.A{"$_id", "$$l"})))}, "as", "m", "_internalCollation", tt.coll)
					for _, lookup := range []bson.D{eqForm, pipeForm} {
						if got := matched(local, cmd, lookup); got != tt.want {
							t.Errorf("%s -> %s, command %v, $lookup %v: matches %s, want %s", local, foreign, cmd, tt.coll, got, tt.want)
						}
					}
				}
			}
		}
	}
	// A nested $lookup under the simple collation inside a caseless one.
	inner := doc("from", "lfc_local", "let", doc("l", "$_id"), "pipeline", bson.A{doc("$match", doc("$expr", doc("$eq", bson.A{"$_id", "$$l"})))}, "as", "m2", "_internalCollation", simple)
	outer := doc("from", "lfc_foreign", "let", doc("l", "$_id"), "as", "m", "_internalCollation", strength1,
		"pipeline", bson.A{doc("$match", doc("$expr", doc("$eq", bson.A{"$_id", "$$l"}))), doc("$lookup", inner)})
	var got []string
	for _, d := range aggregateAll(t, db.Collection("lfc_local"), bson.A{doc("$lookup", outer), doc("$sort", doc("_id", 1))}) {
		m := d.Lookup("m", "0")
		vals, _ := m.Document().Lookup("m2").Array().Values()
		got = append(got, m.Document().Lookup("_id").StringValue()+strconv.Itoa(len(vals)))
	}
	if want := []string{"a1", "B0", "c1", "D0", "e1"}; !slices.Equal(got, want) {
		t.Errorf("nested $lookups: %v, want %v", got, want)
	}
	_, err := db.Collection("lfc_local").Aggregate(ctx, bson.A{doc("$lookup", doc("from", "lfc_foreign", "localField", "_id", "foreignField", "_id", "as", "m", "_internalCollation", "en"))})
	requireCode(t, err, 10065, "")
}

// TestCountScanUnderCollation: a count whose every condition bounds an
// index with a collation (its collation, or no string) counts its keys
// without fetching: a COUNT_SCAN showing the index's collation
// (jstests/core/collation.js "Explain of COUNT_SCAN stage should include
// index collation"), or, over strings, the IXSCAN of collation keys.
func TestCountScanUnderCollation(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	if err := db.CreateCollection(ctx, "countscan_ci", options.CreateCollection().SetCollation(caseInsensitive)); err != nil {
		t.Fatal(err)
	}
	coll := db.Collection("countscan_ci")
	for i, v := range []any{"foo", "FOO", "Foo", "bar", 5, 5, 6} {
		if _, err := coll.InsertOne(ctx, doc("_id", i, "a", v)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: doc("a", 1)}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		query bson.D
		coll  *options.Collation
		n     int64
		stage string
	}{
		{doc("a", 5), nil, 2, "COUNT_SCAN"},
		{doc("a", 5), &options.Collation{Locale: "simple"}, 2, "COUNT_SCAN"},
		{doc("a", "foo"), nil, 3, "IXSCAN"},
		{doc("a", doc("$gte", "BAR")), nil, 4, "IXSCAN"},
		// the simple collation cannot take the index's keys for a string
		{doc("a", "foo"), &options.Collation{Locale: "simple"}, 1, "COLLSCAN"},
	} {
		cmd := bson.D{{Key: "count", Value: "countscan_ci"}, {Key: "query", Value: tt.query}}
		if tt.coll != nil {
			cmd = append(cmd, bson.E{Key: "collation", Value: tt.coll})
		}
		var out bson.Raw
		if err := db.RunCommand(ctx, doc("explain", cmd, "verbosity", "executionStats")).Decode(&out); err != nil {
			t.Fatal(err)
		}
		stages := out.Lookup("executionStats", "executionStages")
		in := stages.Document().Lookup("inputStage").Document()
		if n := stages.Document().Lookup("nCounted").AsInt64(); n != tt.n || in.Lookup("stage").StringValue() != tt.stage {
			t.Errorf("%v %v: counted %d over %s, want %d over %s", tt.query, tt.coll, n, in.Lookup("stage"), tt.n, tt.stage)
		}
		if tt.stage != "COLLSCAN" {
			if c, ok := in.Lookup("collation", "strength").AsInt64OK(); !ok || c != 2 {
				t.Errorf("%v: %s without the index's collation", tt.query, in)
			}
			if d := out.Lookup("executionStats", "totalDocsExamined").AsInt64(); d != 0 {
				t.Errorf("%v: %d documents examined, want none", tt.query, d)
			}
		}
	}
}

// TestTimeseriesCollation: a time series collection's reads and deletes
// follow the collection's default collation, or the command's, and so do
// its buckets' control bounds: a find,
// count or aggregation unpacks the buckets under it (the unpacking
// compares nothing), and a delete matches its measurements under it, as
// any delete does, instead of bytewise.
func TestTimeseriesCollation(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	simple := &options.Collation{Locale: "simple"}
	setup := func(name string, def *options.Collation) *mongo.Collection {
		t.Helper()
		opts := options.CreateCollection().SetTimeSeriesOptions(options.TimeSeries().SetTimeField("t").SetMetaField("m"))
		if def != nil {
			opts.SetCollation(def)
		}
		if err := db.CreateCollection(ctx, name, opts); err != nil {
			t.Fatal(err)
		}
		coll := db.Collection(name)
		base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
		for i, m := range []string{"a", "A", "b", "B", "a"} {
			if _, err := coll.InsertOne(ctx, doc("t", base.Add(time.Duration(i)*time.Minute), "m", m, "v", i)); err != nil {
				t.Fatal(err)
			}
		}
		return coll
	}
	ci := setup("ts_ci", caseInsensitive)
	if n, err := ci.CountDocuments(ctx, doc("m", "A")); err != nil || n != 3 {
		t.Errorf("count under the default: %d %v, want 3", n, err)
	}
	if n := len(findAll(t, ci, doc("m", "A"), options.Find().SetCollation(simple))); n != 1 {
		t.Errorf("find under simple: %d, want 1", n)
	}
	if n := len(aggregateAll(t, ci, bson.A{doc("$group", doc("_id", "$m"))})); n != 2 {
		t.Errorf("$group under the default: %d groups, want 2", n)
	}
	res, err := ci.DeleteMany(ctx, doc("m", "A", "v", doc("$gte", 0)))
	if err != nil || res.DeletedCount != 3 {
		t.Fatalf("delete under the default: %+v %v, want 3", res, err)
	}
	// control.max orders strings under the collection's collation
	// (timeseries_collation.js): "10" above "5" under numericOrdering.
	numeric := &options.Collation{Locale: "en", NumericOrdering: true}
	nc := setup("ts_num", numeric)
	if _, err := nc.InsertOne(ctx, doc("t", time.Date(2024, 1, 1, 0, 10, 0, 0, time.UTC), "m", "a", "s", "10")); err != nil {
		t.Fatal(err)
	}
	if _, err := nc.InsertOne(ctx, doc("t", time.Date(2024, 1, 1, 0, 11, 0, 0, time.UTC), "m", "a", "s", "5")); err != nil {
		t.Fatal(err)
	}
	var bucket bson.Raw
	if err := db.Collection("system.buckets.ts_num").FindOne(ctx, doc("meta", "a", "control.max.s", doc("$exists", true))).Decode(&bucket); err != nil {
		t.Fatal(err)
	}
	if got := bucket.Lookup("control", "max", "s").StringValue(); got != "10" {
		t.Errorf("control.max.s %q under numericOrdering, want \"10\"", got)
	}
	plain := setup("ts_plain", nil)
	if res, err := plain.DeleteMany(ctx, doc("m", "B"), options.DeleteMany().SetCollation(caseInsensitive)); err != nil || res.DeletedCount != 2 {
		t.Errorf("delete under the command's collation: %+v %v, want 2", res, err)
	}
	if res, err := plain.DeleteMany(ctx, doc("m", "A")); err != nil || res.DeletedCount != 1 {
		t.Errorf("delete under simple: %+v %v, want 1", res, err)
	}
	if n, err := plain.CountDocuments(ctx, doc()); err != nil || n != 2 {
		t.Errorf("left: %d %v, want 2", n, err)
	}
}
