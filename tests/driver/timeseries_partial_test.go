package driver_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestTimeseriesPartialIndex: a partial index of a time series collection
// whose filter is on the metaField is built on the buckets with the
// filter renamed under meta, keeping the specification as given as its
// originalSpec, which listIndexes shows (MongoDB's
// makeTimeseriesCreateIndexesCommand, createTimeseriesIndexFromBucketsIndex;
// jstests/core/timeseries/timeseries_index_partial.js). Finds through it,
// hinted or not, answer as a plain collection with the same index does.
// A collation with the filter is IndexOptionsConflict, a condition MongoDB
// cannot push down to the buckets 5916301, and one on a measurement,
// which Folio does not translate, NotImplemented.
func TestTimeseriesPartialIndex(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("tspartial")
	createTSColl(t, db, "ts")
	ts, plain := db.Collection("ts"), db.Collection("plain")
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	metas := []any{bson.D{{Key: "s", Value: "a"}, {Key: "n", Value: 1}}, bson.D{{Key: "s", Value: "b"}, {Key: "n", Value: 2}},
		bson.D{{Key: "s", Value: "c"}, {Key: "n", Value: 7}}, bson.D{{Key: "s", Value: "d"}}, nil, 5, 9}
	var docs []any
	for i := range 140 {
		d := bson.D{{Key: "t", Value: base.Add(time.Duration(i*997%86400) * time.Second)}, {Key: "a", Value: i * 7 % 50}, {Key: "i", Value: i}}
		if m := metas[i%len(metas)]; m != nil {
			d = append(d, bson.E{Key: "m", Value: m})
		}
		docs = append(docs, d)
	}
	for _, c := range []*mongo.Collection{ts, plain} {
		if _, err := c.InsertMany(ctx, docs); err != nil {
			t.Fatal(err)
		}
	}
	is := func(docs []bson.Raw) []int32 {
		out := make([]int32, 0, len(docs))
		for _, d := range docs {
			out = append(out, d.Lookup("i").Int32())
		}
		slices.Sort(out)
		return out
	}
	for _, tc := range []struct {
		partial, bucket bson.D
		queries         []bson.D
	}{
		{bson.D{{Key: "m.n", Value: bson.D{{Key: "$gte", Value: 2}}}}, bson.D{{Key: "meta.n", Value: bson.D{{Key: "$gte", Value: 2}}}},
			[]bson.D{{{Key: "m.n", Value: bson.D{{Key: "$gte", Value: 2}}}, {Key: "a", Value: bson.D{{Key: "$lt", Value: 25}}}}, {{Key: "m.n", Value: 7}}}},
		{bson.D{{Key: "m", Value: bson.D{{Key: "$gt", Value: 5}}}}, bson.D{{Key: "meta", Value: bson.D{{Key: "$gt", Value: 5}}}},
			[]bson.D{{{Key: "m", Value: 9}, {Key: "a", Value: bson.D{{Key: "$lt", Value: 40}}}}}},
		{bson.D{{Key: "$or", Value: bson.A{bson.D{{Key: "m.s", Value: "a"}}, bson.D{{Key: "m.s", Value: "c"}}}}},
			bson.D{{Key: "$or", Value: bson.A{bson.D{{Key: "meta.s", Value: "a"}}, bson.D{{Key: "meta.s", Value: "c"}}}}},
			[]bson.D{{{Key: "m.s", Value: "a"}, {Key: "a", Value: bson.D{{Key: "$lt", Value: 30}}}}}},
	} {
		for _, c := range []*mongo.Collection{ts, plain} {
			if err := c.Indexes().DropAll(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}, Options: options.Index().SetName("pa").SetPartialFilterExpression(tc.partial)}); err != nil {
				t.Fatalf("%v: %v", tc.partial, err)
			}
		}
		// listIndexes on the collection: the specification as given;
		// on the buckets: the translated filter and the original.
		var listed, bucketSpecs []bson.Raw
		if cur, err := ts.Indexes().List(ctx); err != nil || cur.All(ctx, &listed) != nil {
			t.Fatal(err)
		}
		if cur, err := db.Collection("system.buckets.ts").Indexes().List(ctx); err != nil || cur.All(ctx, &bucketSpecs) != nil {
			t.Fatal(err)
		}
		want := mustRaw(t, bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "pa"}, {Key: "partialFilterExpression", Value: tc.partial}, {Key: "v", Value: 2}})
		if i := slices.IndexFunc(listed, func(s bson.Raw) bool { return s.Lookup("name").StringValue() == "pa" }); i < 0 || !slices.Equal(listed[i], want) {
			t.Errorf("%v: listIndexes %v, want %v", tc.partial, listed, want)
		}
		i := slices.IndexFunc(bucketSpecs, func(s bson.Raw) bool { return s.Lookup("name").StringValue() == "pa" })
		if i < 0 || !slices.Equal(bucketSpecs[i].Lookup("partialFilterExpression").Document(), mustRaw(t, tc.bucket)) ||
			!slices.Equal(bucketSpecs[i].Lookup("originalSpec").Document(), want) {
			t.Errorf("%v: buckets' listIndexes %v", tc.partial, bucketSpecs)
		}
		for _, q := range tc.queries {
			wantIs := is(findAll(t, plain, q))
			if got := is(findAll(t, ts, q)); !slices.Equal(got, wantIs) {
				t.Errorf("find %v: %v, want %v", q, got, wantIs)
			}
			if got := is(findAll(t, ts, q, options.Find().SetHint("pa"))); !slices.Equal(got, wantIs) {
				t.Errorf("find %v hinted: %v, want %v", q, got, wantIs)
			}
			if got := is(aggregateAll(t, ts, bson.A{bson.D{{Key: "$match", Value: q}}}, options.Aggregate().SetHint(bson.D{{Key: "a", Value: 1}}))); !slices.Equal(got, wantIs) {
				t.Errorf("aggregate %v hinted: %v, want %v", q, got, wantIs)
			}
		}
	}
	create := func(partial bson.D, extra ...bson.E) error {
		spec := append(bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "x"}, {Key: "partialFilterExpression", Value: partial}}, extra...)
		return db.RunCommand(ctx, bson.D{{Key: "createIndexes", Value: "ts"}, {Key: "indexes", Value: bson.A{spec}}}).Err()
	}
	requireError(t, create(bson.D{{Key: "m", Value: 1}}, bson.E{Key: "collation", Value: bson.D{{Key: "locale", Value: "simple"}}}), 85, "IndexOptionsConflict",
		"On a time-series collection, partialFilterExpression and collation arguments are incompatible")
	for _, p := range []bson.D{
		{{Key: "a", Value: bson.D{}}}, {{Key: "a", Value: bson.A{1}}}, {{Key: "a", Value: nil}}, {{Key: "t", Value: 7}},
		{{Key: "a", Value: bson.D{{Key: "$exists", Value: false}}}}, {{Key: "a", Value: bson.D{{Key: "$ne", Value: nil}}}},
		{{Key: "a", Value: bson.Regex{Pattern: "a"}}}, {{Key: "a", Value: bson.D{{Key: "$in", Value: bson.A{nil}}}}},
		{{Key: "$or", Value: bson.A{bson.D{}, bson.D{{Key: "a", Value: bson.D{}}}}}},
	} {
		requireCode(t, create(p), 5916301, "Location5916301")
	}
	requireError(t, create(bson.D{{Key: "m", Value: 1}, {Key: "b", Value: bson.D{{Key: "$lt", Value: 12}}}}), 238, "NotImplemented",
		"Folio does not build partial indexes of time series collections whose partialFilterExpression reads the time field or a measurement field (b)")
	// A meta condition a partial filter may not hold is refused as on
	// the buckets, once translated.
	requireCode(t, create(bson.D{{Key: "m", Value: bson.D{{Key: "$ne", Value: 1}}}}), 67, "CannotCreateIndex")
}

// TestTimeseriesPartialTTLIndex: a TTL index on the time field with a
// partial filter on the metaField (MongoDB 6.3 and later;
// jstests/core/timeseries/timeseries_index_ttl_partial.js) is listed as
// given and expires the buckets its filter holds once their newest
// measurement is older than expireAfterSeconds (a bucket holding an
// unexpired measurement stays, as MongoDB's bound on the bucket's
// minimum time widened by bucketMaxSpanSeconds keeps it), and no others.
func TestTimeseriesPartialTTLIndex(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("tspartialttl")
	createTSColl(t, db, "ts")
	ts := db.Collection("ts")
	if _, err := ts.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "t", Value: 1}},
		Options: options.Index().SetName("p").SetPartialFilterExpression(bson.D{{Key: "m", Value: bson.D{{Key: "$gt", Value: 5}}}}).SetExpireAfterSeconds(0)}); err != nil {
		t.Fatal(err)
	}
	var listed []bson.Raw
	if cur, err := ts.Indexes().List(ctx); err != nil || cur.All(ctx, &listed) != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(listed, func(s bson.Raw) bool { return s.Lookup("name").StringValue() == "p" }); i < 0 ||
		!slices.Equal(listed[i].Lookup("key").Document(), mustRaw(t, bson.D{{Key: "t", Value: 1}})) || listed[i].Lookup("expireAfterSeconds").AsInt64() != 0 {
		t.Fatalf("listIndexes: %v", listed)
	}
	// v 3 and 4 share a bucket whose oldest measurement expired and
	// whose newest did not: it stays.
	now := time.Now()
	if _, err := ts.InsertMany(ctx, []any{
		bson.D{{Key: "t", Value: now.Add(-72 * time.Hour)}, {Key: "m", Value: 10}, {Key: "v", Value: 1}},
		bson.D{{Key: "t", Value: now.Add(-72 * time.Hour)}, {Key: "m", Value: 1}, {Key: "v", Value: 2}},
		bson.D{{Key: "t", Value: now.Add(-30 * time.Minute)}, {Key: "m", Value: 10}, {Key: "v", Value: 3}},
		bson.D{{Key: "t", Value: now.Add(10 * time.Minute)}, {Key: "m", Value: 10}, {Key: "v", Value: 4}},
	}); err != nil {
		t.Fatal(err)
	}
	admin := client.Database("admin")
	passes := func() int64 {
		var st bson.Raw
		if err := admin.RunCommand(ctx, bson.D{{Key: "serverStatus", Value: 1}}).Decode(&st); err != nil {
			t.Fatal(err)
		}
		return st.Lookup("metrics", "ttl", "passes").AsInt64()
	}
	start := passes()
	if err := admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: "ttlMonitorSleepSecs", Value: 1}}).Err(); err != nil {
		t.Fatal(err)
	}
	defer admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: "ttlMonitorSleepSecs", Value: 60}})
	// Two passes after the setting, as jstests' TTLUtil.waitForPass.
	for deadline := time.Now().Add(15 * time.Second); passes() < start+2; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no TTL pass")
		}
	}
	var left []int32
	for _, d := range findAll(t, ts, bson.D{}) {
		left = append(left, d.Lookup("v").Int32())
	}
	slices.Sort(left)
	if !slices.Equal(left, []int32{2, 3, 4}) {
		t.Errorf("left %v, want [2 3 4]", left)
	}
}
