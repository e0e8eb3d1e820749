package driver_test

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// TestOutTimeseries: $out with timeseries options (MongoDB 7.0.3) creates
// a time series collection holding the pipeline's documents as
// measurements, and replaces one's content, with or without the options;
// the source collection is the oracle of what the target holds. A refused
// or failed $out leaves the target as it was and no temporary collection.
func TestOutTimeseries(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("tsout")
	src := db.Collection("src")
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var docs []any
	for i := range 2500 {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "ts", Value: t0.Add(time.Duration(i) * time.Minute)},
			{Key: "host", Value: "h" + string(rune('a'+i%4))}, {Key: "v", Value: i}})
	}
	if _, err := src.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	out := func(spec any, pipeline ...bson.D) error {
		cur, err := src.Aggregate(ctx, append(mongo.Pipeline(pipeline), bson.D{{Key: "$out", Value: spec}}))
		if err == nil {
			err = cur.Close(ctx)
		}
		return err
	}
	// same compares the target's measurements with the source's documents
	// matching filter: the same fields and values, time and meta first.
	same := func(filter bson.D) {
		t.Helper()
		byID := options.Find().SetSort(bson.D{{Key: "_id", Value: 1}})
		got, want := findAll(t, db.Collection("metrics"), bson.D{}, byID), findAll(t, src, filter, byID)
		if len(got) != len(want) || !reflect.DeepEqual(unordered(t, got), unordered(t, want)) {
			t.Fatalf("metrics holds %d measurements, want %d\n got %v\nwant %v", len(got), len(want), head(got), head(want))
		}
	}
	info := func(name string) bson.Raw {
		t.Helper()
		cur, err := db.ListCollections(ctx, bson.D{{Key: "name", Value: name}})
		if err != nil {
			t.Fatal(err)
		}
		var infos []bson.Raw
		if err := cur.All(ctx, &infos); err != nil || len(infos) != 1 {
			t.Fatalf("listCollections %s: %v %v", name, infos, err)
		}
		return infos[0]
	}

	tsOpts := bson.D{{Key: "timeField", Value: "ts"}, {Key: "metaField", Value: "host"}}
	if err := out(bson.D{{Key: "db", Value: "tsout"}, {Key: "coll", Value: "metrics"}, {Key: "timeseries", Value: tsOpts}}); err != nil {
		t.Fatal(err)
	}
	same(bson.D{})
	m := info("metrics")
	if m.Lookup("type").StringValue() != "timeseries" ||
		m.Lookup("options", "timeseries").String() != `{"timeField": "ts","metaField": "host","granularity": "seconds","bucketMaxSpanSeconds": {"$numberInt":"3600"}}` {
		t.Errorf("listCollections of metrics: %s", m)
	}
	// 4 hosts, each with a measurement every 4 minutes for 2500 minutes:
	// a bucket an hour a host, about 4 × 2500/60.
	if !testAuth() {
		n, err := db.Collection("system.buckets.metrics").CountDocuments(ctx, bson.D{})
		if err != nil || n < 164 || n > 172 {
			t.Errorf("%d buckets for 2500 measurements, %v", n, err)
		}
	}
	indexes := func() []string {
		t.Helper()
		specs, err := db.Collection("metrics").Indexes().ListSpecifications(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, s := range specs {
			names = append(names, s.Name)
		}
		return names
	}
	if got := indexes(); !reflect.DeepEqual(got, []string{"host_1_ts_1"}) {
		t.Errorf("the new time series collection's indexes: %v", got)
	}
	if _, err := db.Collection("metrics").Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "host", Value: 1}}}); err != nil {
		t.Fatal(err)
	}

	// The string form replaces the content of an existing time series
	// collection, keeping its options and indexes; so does the document
	// form with the same options, however given.
	few := bson.D{{Key: "$match", Value: bson.D{{Key: "v", Value: bson.D{{Key: "$lt", Value: 100}}}}}}
	if err := out("metrics", few); err != nil {
		t.Fatal(err)
	}
	same(bson.D{{Key: "v", Value: bson.D{{Key: "$lt", Value: 100}}}})
	if got := indexes(); !reflect.DeepEqual(got, []string{"host_1_ts_1", "host_1"}) {
		t.Errorf("indexes after a replacement: %v", got)
	}
	sameOpts := bson.D{{Key: "timeField", Value: "ts"}, {Key: "metaField", Value: "host"}, {Key: "granularity", Value: "seconds"}, {Key: "bucketMaxSpanSeconds", Value: nil}}
	if err := out(bson.D{{Key: "db", Value: "tsout"}, {Key: "coll", Value: "metrics"}, {Key: "timeseries", Value: sameOpts}}); err != nil {
		t.Fatal(err)
	}
	same(bson.D{})

	// Refusals, each leaving metrics whole.
	if err := db.CreateCollection(ctx, "plain"); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateView(ctx, "view", "src", mongo.Pipeline{}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateCollection(ctx, "capped", options.CreateCollection().SetCapped(true).SetSizeInBytes(4096)); err != nil {
		t.Fatal(err)
	}
	with := func(coll string, opts bson.D) bson.D {
		return bson.D{{Key: "db", Value: "tsout"}, {Key: "coll", Value: coll}, {Key: "timeseries", Value: opts}}
	}
	dupDB := bson.Raw(bsoncore.NewDocumentBuilder().AppendString("db", "tsout").AppendString("coll", "x").AppendString("db", "tsout").Build())
	for _, tc := range []struct {
		name string
		spec any
		code int
	}{
		{"other options", with("metrics", bson.D{{Key: "timeField", Value: "ts"}}), 7406103},
		{"other granularity", with("metrics", append(tsOpts, bson.E{Key: "granularity", Value: "hours"})), 7406103},
		{"a collection", with("plain", tsOpts), 7268700},
		{"a view", with("view", tsOpts), 7268700},
		{"a view without options", "view", 166},
		{"a capped collection", "capped", 17152},
		{"no time field", with("new", bson.D{{Key: "metaField", Value: "host"}}), 40414},
		{"a null time field", with("new", bson.D{{Key: "timeField", Value: nil}}), 40414},
		{"an unknown option", with("new", bson.D{{Key: "timeField", Value: "ts"}, {Key: "x", Value: 1}}), 40415},
		{"a span of 0", with("new", bson.D{{Key: "timeField", Value: "ts"}, {Key: "bucketMaxSpanSeconds", Value: 0.5}, {Key: "bucketRoundingSeconds", Value: 0.5}}), 51024},
		{"a span without rounding", with("new", bson.D{{Key: "timeField", Value: "ts"}, {Key: "bucketMaxSpanSeconds", Value: 100}}), 72},
		{"a granularity of days", with("new", bson.D{{Key: "timeField", Value: "ts"}, {Key: "granularity", Value: "days"}}), 2},
		{"a granularity of 1", with("new", bson.D{{Key: "timeField", Value: "ts"}, {Key: "granularity", Value: 1}}), 14},
		{"timeseries not a document", bson.D{{Key: "db", Value: "tsout"}, {Key: "coll", Value: "new"}, {Key: "timeseries", Value: "ts"}}, 14},
		{"no db", bson.D{{Key: "coll", Value: "new"}}, 40414},
		{"a null coll", bson.D{{Key: "db", Value: "tsout"}, {Key: "coll", Value: nil}}, 40414},
		{"db twice", dupDB, 40413},
		{"an unknown field", bson.D{{Key: "db", Value: "tsout"}, {Key: "coll", Value: "new"}, {Key: "x", Value: 1}}, 40415},
		{"a number", 1, 16990},
		{"a dollar", "$new", 20},
		{"too long", strings.Repeat("n", 250), 20},
		{"a buckets name too long", with(strings.Repeat("n", 240), tsOpts), 20},
		{"a system collection", "system.new", 17385},
		{"admin", bson.D{{Key: "db", Value: "admin"}, {Key: "coll", Value: "new"}}, 31321},
		{"an empty name", "", 73},
		{"a measurement without its time", with("new", bson.D{{Key: "timeField", Value: "v"}}), 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.code == 17385 && testAuth() {
				// the test user has no privilege on system collections
				tc.code = 13
			}
			requireCode(t, out(tc.spec), tc.code, "")
		})
	}
	same(bson.D{})
	// A failed $out into the existing collection leaves it whole.
	requireCode(t, out("metrics", bson.D{{Key: "$project", Value: bson.D{{Key: "ts", Value: 0}}}}), 2, "BadValue")
	same(bson.D{})
	names, err := db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	if want := []string{"capped", "metrics", "plain", "src", "system.buckets.metrics", "system.views", "view"}; !reflect.DeepEqual(names, want) {
		t.Errorf("collections after the refusals: %v, want %v", names, want)
	}
}
