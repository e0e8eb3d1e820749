package driver_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestTimeseriesAgainstPlain: a time series collection answers finds,
// counts, aggregations and deletes as a plain collection holding the same
// documents does (the oracle), while storing them in a few buckets.
func TestTimeseriesAgainstPlain(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("tsdb")
	opts := options.CreateCollection().SetTimeSeriesOptions(options.TimeSeries().SetTimeField("ts").SetMetaField("meta").SetGranularity("seconds"))
	if err := db.CreateCollection(ctx, "weather", opts); err != nil {
		t.Fatal(err)
	}
	ts, plain := db.Collection("weather"), db.Collection("plain")
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var docs []any
	for i := range 3000 {
		d := bson.D{{Key: "_id", Value: i}, {Key: "ts", Value: t0.Add(time.Duration(i/3) * time.Minute)},
			{Key: "meta", Value: bson.D{{Key: "sensor", Value: i % 3}, {Key: "site", Value: "s" + fmt.Sprint(i%3/2)}}},
			{Key: "temp", Value: float64(i%97) / 2}}
		if i%10 == 0 {
			d = append(d, bson.E{Key: "note", Value: "ten"})
		}
		docs = append(docs, d)
	}
	// In batches, and some one by one, as clients insert.
	for _, c := range []*mongo.Collection{ts, plain} {
		if _, err := c.InsertMany(ctx, docs[:2900]); err != nil {
			t.Fatal(err)
		}
		for _, d := range docs[2900:] {
			if _, err := c.InsertOne(ctx, d); err != nil {
				t.Fatal(err)
			}
		}
	}
	// 1000 measurements a minute apart for each sensor, in buckets of at
	// most an hour. (Folio's built-in roles grant no privilege on
	// system.buckets yet: under access control the count is skipped.)
	nBuckets, err := int64(51), error(nil)
	if !testAuth() {
		nBuckets, err = db.Collection("system.buckets.weather").CountDocuments(ctx, bson.D{})
	}
	if err != nil || nBuckets < 48 || nBuckets > 60 {
		t.Errorf("%d buckets for 3000 measurements of 3 sensors, %v", nBuckets, err)
	}
	var m bson.Raw
	if err := ts.FindOne(ctx, bson.D{{Key: "_id", Value: 10}}).Decode(&m); err != nil {
		t.Fatal(err)
	}
	if got := keysOf(t, m); !reflect.DeepEqual(got, []string{"ts", "meta", "_id", "temp", "note"}) {
		t.Errorf("a measurement's fields: %v", got)
	}
	bySort := bson.D{{Key: "$sort", Value: bson.D{{Key: "_id", Value: 1}}}}
	queries := []mongo.Pipeline{
		{{{Key: "$match", Value: bson.D{{Key: "meta.sensor", Value: 1}, {Key: "ts", Value: bson.D{{Key: "$gte", Value: t0.Add(100 * time.Minute)}, {Key: "$lt", Value: t0.Add(160 * time.Minute)}}}}}}, bySort},
		{{{Key: "$match", Value: bson.D{{Key: "meta", Value: bson.D{{Key: "sensor", Value: 2}, {Key: "site", Value: "s1"}}}}}}, bySort},
		{{{Key: "$match", Value: bson.D{{Key: "ts", Value: t0.Add(500 * time.Minute)}}}}, bySort},
		{{{Key: "$match", Value: bson.D{{Key: "note", Value: "ten"}, {Key: "temp", Value: bson.D{{Key: "$gt", Value: 20}}}}}}, bySort},
		{{{Key: "$match", Value: bson.D{{Key: "meta.site", Value: "s0"}}}},
			{{Key: "$group", Value: bson.D{{Key: "_id", Value: bson.D{{Key: "$dateTrunc", Value: bson.D{{Key: "date", Value: "$ts"}, {Key: "unit", Value: "hour"}}}}}, {Key: "avg", Value: bson.D{{Key: "$avg", Value: "$temp"}}}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}},
			{{Key: "$sort", Value: bson.D{{Key: "_id", Value: 1}}}}},
		{{{Key: "$count", Value: "n"}}},
	}
	for i, q := range queries {
		got, want := aggregateAll(t, ts, q), aggregateAll(t, plain, q)
		// A measurement's fields come time and meta first; compare the
		// fields, not their order.
		if len(want) == 0 || !reflect.DeepEqual(unordered(t, got), unordered(t, want)) {
			t.Errorf("query %d: time series %d results, plain %d\n got %v\nwant %v", i, len(got), len(want), head(got), head(want))
		}
	}
	// A match on the meta value and a time range reads only the buckets
	// that may hold matches (the profiler counts the documents read).
	if err := db.RunCommand(ctx, bson.D{{Key: "profile", Value: 2}}).Err(); err != nil {
		t.Fatal(err)
	}
	aggregateAll(t, ts, queries[0])
	entries := profileEntries(t, db)
	// The buckets of the hour and the hour before (the buckets are an
	// hour long), of each of the 3 sensors: the default index, on the
	// whole meta value and the time, does not serve meta.sensor.
	if last := entries[len(entries)-1]; last.Lookup("docsExamined").AsInt64() > 9 {
		t.Errorf("a one-hour range of one sensor read %d of %d buckets: %s", last.Lookup("docsExamined").AsInt64(), nBuckets, last)
	}
	// An index on the meta value and the time serves the same match: the
	// plan scans it (the plan trial, counted as in MongoDB, also ran the
	// _id range).
	name, err := ts.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "meta.sensor", Value: 1}, {Key: "ts", Value: 1}}})
	if err != nil || name != "meta.sensor_1_ts_1" {
		t.Fatalf("createIndex: %q %v", name, err)
	}
	// The first is the index MongoDB 6.3 and later create with the
	// collection.
	specs, err := ts.Indexes().ListSpecifications(ctx)
	if err != nil || len(specs) != 2 || specs[0].Name != "meta_1_ts_1" || specs[0].KeysDocument.String() != `{"meta": {"$numberInt":"1"},"ts": {"$numberInt":"1"}}` ||
		specs[1].KeysDocument.String() != `{"meta.sensor": {"$numberInt":"1"},"ts": {"$numberInt":"1"}}` {
		t.Errorf("listIndexes: %v %v", specs, err)
	}
	_, err = ts.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "ts", Value: 1}}, Options: options.Index().SetUnique(true)})
	requireCode(t, err, 72, "InvalidOptions")
	// MongoDB refuses a text index before reading its key, also on the
	// metaField (makeTimeseriesCreateIndexesCommand).
	_, err = ts.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "meta.sensor", Value: "text"}}})
	requireError(t, err, 72, "InvalidOptions", "Text indexes are not supported on time-series collections")
	if err := db.RunCommand(ctx, bson.D{{Key: "profile", Value: 2}}).Err(); err != nil {
		t.Fatal(err)
	}
	if got, want := aggregateAll(t, ts, queries[0]), aggregateAll(t, plain, queries[0]); !reflect.DeepEqual(unordered(t, got), unordered(t, want)) {
		t.Errorf("query 0 through the index: %d results, plain %d", len(got), len(want))
	}
	entries = profileEntries(t, db)
	if last := entries[len(entries)-2]; last.Lookup("docsExamined").AsInt64() > 9 || last.Lookup("keysExamined").AsInt64() == 0 || last.Lookup("planSummary").StringValue() != "IXSCAN { meta.sensor: 1, control.min.ts: 1, control.max.ts: 1 }" {
		t.Errorf("a one-hour range of one sensor with an index: %s", last)
	}
	// collMod changes an index of the measurements by its key or name;
	// a TTL is refused (jstests/core/timeseries/timeseries_collmod.js).
	collModIndex := func(index bson.D) (bson.Raw, error) {
		return db.RunCommand(ctx, bson.D{{Key: "collMod", Value: ts.Name()}, {Key: "index", Value: index}}).Raw()
	}
	byKey := bson.E{Key: "keyPattern", Value: bson.D{{Key: "meta.sensor", Value: 1}, {Key: "ts", Value: 1}}}
	if res, err := collModIndex(bson.D{byKey, {Key: "hidden", Value: true}}); err != nil || !res.Lookup("hidden_new").Boolean() {
		t.Errorf("collMod hiding an index by its key: %s %v", res, err)
	}
	var hidden []bson.Raw
	if cur, err := ts.Indexes().List(ctx); err != nil || cur.All(ctx, &hidden) != nil || len(hidden) != 2 || !hidden[1].Lookup("hidden").Boolean() {
		t.Errorf("listIndexes after hiding: %v %v", hidden, err)
	}
	if res, err := collModIndex(bson.D{{Key: "name", Value: "meta.sensor_1_ts_1"}, {Key: "hidden", Value: false}}); err != nil || res.Lookup("hidden_new").Boolean() {
		t.Errorf("collMod showing an index by its name: %s %v", res, err)
	}
	// A hint of the key on the measurements names the index.
	hinted, err := ts.Find(ctx, bson.D{{Key: "meta.sensor", Value: 1}}, options.Find().SetHint(bson.D{{Key: "meta.sensor", Value: 1}, {Key: "ts", Value: 1}}))
	if n := 0; err == nil {
		for hinted.Next(ctx) {
			n++
		}
		if n != 1000 {
			t.Errorf("a find hinting the index: %d measurements of sensor 1, want 1000", n)
		}
	} else {
		t.Errorf("a find hinting the index by its key: %v", err)
	}
	_, err = collModIndex(bson.D{byKey, {Key: "expireAfterSeconds", Value: 100}})
	requireCode(t, err, 72, "InvalidOptions")
	_, err = collModIndex(bson.D{{Key: "keyPattern", Value: bson.D{{Key: "meta", Value: -1}}}, {Key: "hidden", Value: true}})
	requireCode(t, err, 27, "IndexNotFound")
	if err := ts.Indexes().DropWithKey(ctx, bson.D{{Key: "meta.sensor", Value: 1}, {Key: "ts", Value: 1}}); err != nil {
		t.Errorf("dropIndex by key: %v", err)
	}
	// Without it, the time range is a range of the clustered buckets' _id.
	if err := db.RunCommand(ctx, bson.D{{Key: "profile", Value: 2}}).Err(); err != nil {
		t.Fatal(err)
	}
	aggregateAll(t, ts, queries[0])
	entries = profileEntries(t, db)
	if last := entries[len(entries)-1]; last.Lookup("planSummary").StringValue() != "CLUSTERED_IXSCAN" {
		t.Errorf("a one-hour range without an index: %s", last)
	}
	filter := bson.D{{Key: "meta.sensor", Value: 0}, {Key: "ts", Value: bson.D{{Key: "$lt", Value: t0.Add(30 * time.Minute)}}}}
	for _, c := range []*mongo.Collection{ts, plain} {
		n, err := c.CountDocuments(ctx, filter)
		if err != nil || n != 30 {
			t.Errorf("%s count %d, %v", c.Name(), n, err)
		}
	}
	// Deletes: many across buckets, one, and a whole bucket's worth.
	for _, del := range []struct {
		filter bson.D
		one    bool
	}{
		{bson.D{{Key: "temp", Value: bson.D{{Key: "$gt", Value: 40}}}}, false},
		{bson.D{{Key: "meta.sensor", Value: 1}}, true},
		{bson.D{{Key: "meta.sensor", Value: 2}, {Key: "ts", Value: bson.D{{Key: "$lt", Value: t0.Add(200 * time.Minute)}}}}, false},
	} {
		var counts [2]int64
		for i, c := range []*mongo.Collection{ts, plain} {
			var res *mongo.DeleteResult
			var err error
			if del.one {
				res, err = c.DeleteOne(ctx, del.filter)
			} else {
				res, err = c.DeleteMany(ctx, del.filter)
			}
			if err != nil {
				t.Fatal(err)
			}
			counts[i] = res.DeletedCount
		}
		if counts[0] != counts[1] || counts[0] == 0 {
			t.Errorf("delete %v: time series %d, plain %d", del.filter, counts[0], counts[1])
		}
	}
	if del := aggregateAll(t, ts, mongo.Pipeline{bySort}); !reflect.DeepEqual(len(del), len(aggregateAll(t, plain, mongo.Pipeline{bySort}))) {
		t.Errorf("after the deletes: %d measurements, plain %d", len(del), len(aggregateAll(t, plain, mongo.Pipeline{bySort})))
	}
	// The deleted one is the first of sensor 1 in either.
	for _, c := range []*mongo.Collection{ts, plain} {
		if err := c.FindOne(ctx, bson.D{{Key: "_id", Value: 1}}).Err(); err != mongo.ErrNoDocuments {
			t.Errorf("%s: deleteOne left _id 1: %v", c.Name(), err)
		}
	}
}

// unordered decodes docs as maps: their fields without their order.
func unordered(t *testing.T, docs []bson.Raw) []bson.M {
	t.Helper()
	out := make([]bson.M, len(docs))
	for i, d := range docs {
		if err := bson.Unmarshal(d, &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func head(docs []bson.Raw) []bson.Raw {
	return docs[:min(len(docs), 3)]
}

// TestTimeseriesCollection: listCollections describes a time series
// collection and its buckets; what MongoDB refuses is refused with its
// codes; drop removes both.
func TestTimeseriesCollection(t *testing.T) {
	client := connect(t, startInstance(t, replSetConfig()))
	ctx := context.Background()
	db := client.Database("tsdb2")
	run := func(cmd bson.D) error { return db.RunCommand(ctx, cmd).Err() }
	create := func(tsOpts bson.D, more ...bson.E) error {
		return run(append(bson.D{{Key: "create", Value: "m"}, {Key: "timeseries", Value: tsOpts}}, more...))
	}
	for _, tc := range []struct {
		opts bson.D
		more []bson.E
		code int
	}{
		{bson.D{{Key: "metaField", Value: "m"}}, nil, 40414},
		{bson.D{{Key: "timeField", Value: "t"}, {Key: "metaField", Value: "t"}}, nil, 72},
		{bson.D{{Key: "timeField", Value: "t"}, {Key: "granularity", Value: "days"}}, nil, 2},
		{bson.D{{Key: "timeField", Value: "t"}, {Key: "bucketMaxSpanSeconds", Value: 60}}, nil, 72},
		{bson.D{{Key: "timeField", Value: "t"}, {Key: "bucketMaxSpanSeconds", Value: 60}, {Key: "bucketRoundingSeconds", Value: 30}}, nil, 72},
		{bson.D{{Key: "timeField", Value: "t"}, {Key: "granularity", Value: "hours"}, {Key: "bucketMaxSpanSeconds", Value: 60}, {Key: "bucketRoundingSeconds", Value: 60}}, nil, 72},
		{bson.D{{Key: "timeField", Value: "a.b"}}, nil, 72},
		{bson.D{{Key: "timeField", Value: "t"}, {Key: "other", Value: 1}}, nil, 40415},
		{bson.D{{Key: "timeField", Value: "t"}}, []bson.E{{Key: "capped", Value: true}, {Key: "size", Value: 4096}}, 72},
		{bson.D{{Key: "timeField", Value: "t"}}, []bson.E{{Key: "validationLevel", Value: "strict"}}, 72},
		{bson.D{{Key: "timeField", Value: "t"}}, []bson.E{{Key: "idIndex", Value: bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "name", Value: "_id_"}}}}, 72},
		{bson.D{{Key: "timeField", Value: "t"}, {Key: "bucketMaxSpanSeconds", Value: 0}, {Key: "bucketRoundingSeconds", Value: 0}}, nil, 51024},
		{bson.D{{Key: "timeField", Value: "t"}, {Key: "timeField", Value: "u"}}, nil, 40413},
		// timeseries takes no option but storageEngine,
		// indexOptionDefaults, collation and expireAfterSeconds
		{bson.D{{Key: "timeField", Value: "t"}}, []bson.E{{Key: "validator", Value: bson.D{}}}, 72},
		{bson.D{{Key: "timeField", Value: "t"}}, []bson.E{{Key: "autoIndexId", Value: true}}, 72},
		{bson.D{{Key: "timeField", Value: "t"}}, []bson.E{{Key: "size", Value: 4096}}, 72},
		{bson.D{{Key: "timeField", Value: "t"}}, []bson.E{{Key: "viewOn", Value: "x"}, {Key: "pipeline", Value: bson.A{}}}, 72},
		// an expiry in milliseconds beyond the time since the epoch
		{bson.D{{Key: "timeField", Value: "t"}}, []bson.E{{Key: "expireAfterSeconds", Value: int64(1) << 62}}, 72},
		{bson.D{{Key: "timeField", Value: "t"}}, []bson.E{{Key: "expireAfterSeconds", Value: int64(1) << 40}}, 72},
	} {
		requireCode(t, create(tc.opts, tc.more...), tc.code, "")
	}
	requireCode(t, run(bson.D{{Key: "create", Value: "system.buckets.m"}}), 20, "IllegalOperation")
	spec := bson.D{{Key: "timeField", Value: "t"}, {Key: "metaField", Value: "host"}, {Key: "bucketMaxSpanSeconds", Value: 600}, {Key: "bucketRoundingSeconds", Value: 600}}
	if err := create(spec, bson.E{Key: "expireAfterSeconds", Value: 3600}); err != nil {
		t.Fatal(err)
	}
	if err := create(spec, bson.E{Key: "expireAfterSeconds", Value: 3600}); err != nil {
		t.Errorf("creating it again with the same options: %v", err)
	}
	requireCode(t, create(bson.D{{Key: "timeField", Value: "t2"}}), 48, "NamespaceExists")
	// the same timeseries options, other storage options
	requireCode(t, create(spec), 48, "NamespaceExists")
	requireCode(t, create(spec, bson.E{Key: "expireAfterSeconds", Value: 3600}, bson.E{Key: "collation", Value: bson.D{{Key: "locale", Value: "fr"}}}), 48, "NamespaceExists")
	// listCollections shows the options create takes with timeseries, in
	// MongoDB's order.
	se := bson.D{{Key: "wiredTiger", Value: bson.D{}}}
	if err := run(bson.D{{Key: "create", Value: "se"}, {Key: "timeseries", Value: bson.D{{Key: "timeField", Value: "t"}}}, {Key: "expireAfterSeconds", Value: 60},
		{Key: "storageEngine", Value: se}, {Key: "indexOptionDefaults", Value: bson.D{{Key: "storageEngine", Value: se}}}, {Key: "collation", Value: bson.D{{Key: "locale", Value: "fr"}}}}); err != nil {
		t.Fatal(err)
	}
	var seInfo []bson.Raw
	if cur, err := db.ListCollections(ctx, bson.D{{Key: "name", Value: "se"}}); err != nil || cur.All(ctx, &seInfo) != nil || len(seInfo) != 1 {
		t.Fatalf("listCollections se: %v %v", seInfo, err)
	}
	if opts := seInfo[0].Lookup("options").Document(); !slices.Equal(keysOf(t, opts), []string{"storageEngine", "indexOptionDefaults", "collation", "expireAfterSeconds", "timeseries"}) ||
		opts.Lookup("collation", "locale").StringValue() != "fr" || opts.Lookup("storageEngine").String() != `{"wiredTiger": {}}` {
		t.Errorf("listCollections options of se: %s", opts)
	}
	if err := db.Collection("se").Drop(ctx); err != nil {
		t.Fatal(err)
	}
	requireCode(t, run(bson.D{{Key: "collMod", Value: "m"}, {Key: "expireAfterSeconds", Value: int64(1) << 40}}), 72, "InvalidOptions")
	requireCode(t, run(bson.D{{Key: "collMod", Value: "system.buckets.m"}, {Key: "expireAfterSeconds", Value: 10}}), 73, "InvalidNamespace")
	if err := run(bson.D{{Key: "create", Value: "m2"}, {Key: "timeseries", Value: bson.D{{Key: "timeField", Value: "t"}}}, {Key: "capped", Value: false}}); err != nil {
		t.Errorf("create with timeseries and capped: false: %v", err)
	}
	if err := db.Collection("m2").Drop(ctx); err != nil {
		t.Fatal(err)
	}
	cur, err := db.ListCollections(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var infos []bson.Raw
	if err := cur.All(ctx, &infos); err != nil {
		t.Fatal(err)
	}
	found := map[string]bson.Raw{}
	for _, in := range infos {
		found[in.Lookup("name").StringValue()] = in
	}
	m := found["m"]
	if m == nil || m.Lookup("type").StringValue() != "timeseries" || m.Lookup("options", "expireAfterSeconds").AsInt64() != 3600 ||
		m.Lookup("options", "timeseries").String() != `{"timeField": "t","metaField": "host","bucketRoundingSeconds": {"$numberInt":"600"},"bucketMaxSpanSeconds": {"$numberInt":"600"}}` {
		t.Errorf("listCollections of m: %s", m)
	}
	if found["system.buckets.m"] == nil {
		t.Errorf("no system.buckets.m in %v", infos)
	}
	coll := db.Collection("m")
	_, err = coll.InsertOne(ctx, bson.D{{Key: "host", Value: "a"}, {Key: "v", Value: 1}})
	requireCode(t, err, 2, "BadValue")
	_, err = coll.InsertOne(ctx, bson.D{{Key: "t", Value: "yesterday"}})
	requireCode(t, err, 2, "BadValue")
	sess, err := client.StartSession()
	if err != nil {
		t.Fatal(err)
	}
	_, err = sess.WithTransaction(ctx, func(sctx context.Context) (any, error) {
		return coll.InsertOne(sctx, bson.D{{Key: "t", Value: time.Now()}})
	})
	requireCode(t, err, 263, "OperationNotSupportedInTransaction")
	sess.EndSession(ctx)
	// An old measurement expires with its bucket; a new one stays.
	now := time.Now()
	if _, err := coll.InsertMany(ctx, []any{bson.D{{Key: "t", Value: now.Add(-3 * time.Hour)}, {Key: "host", Value: "a"}}, bson.D{{Key: "t", Value: now}, {Key: "host", Value: "a"}}}); err != nil {
		t.Fatal(err)
	}
	if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: "ttlMonitorSleepSecs", Value: 1}}).Err(); err != nil {
		t.Fatal(err)
	}
	defer client.Database("admin").RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: "ttlMonitorSleepSecs", Value: 60}})
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := coll.CountDocuments(ctx, bson.D{})
		if err == nil && n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the expired measurement stayed: %d measurements, %v", n, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := coll.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	names, err := db.ListCollectionNames(ctx, bson.D{})
	if err != nil || len(names) != 0 && !(len(names) == 1 && names[0] == "system.views") {
		t.Errorf("after drop: %v %v", names, err)
	}
}

// TestTimeseriesBucketsPrivileges: under access control, the buckets
// collection (system.buckets.*) is reachable through the roles MongoDB
// grants it to (readAnyDatabase, root and the others with an
// any_system_buckets privilege), not through a database's readWrite; the
// time series itself is reachable through both.
func TestTimeseriesBucketsPrivileges(t *testing.T) {
	root, in := startAuthServer(t)
	ctx := context.Background()
	db := root.Database("tsauth")
	if err := db.CreateCollection(ctx, "w", options.CreateCollection().SetTimeSeriesOptions(options.TimeSeries().SetTimeField("t"))); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("w").InsertOne(ctx, bson.D{{Key: "t", Value: time.Now()}, {Key: "v", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if n, err := db.Collection("system.buckets.w").CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
		t.Fatalf("root reading the buckets: %d, %v", n, err)
	}
	mustRunRaw(t, db, bson.D{{Key: "createUser", Value: "rw"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{"readWrite"}}})
	mustRunRaw(t, root.Database("admin"), bson.D{{Key: "createUser", Value: "any"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{"readAnyDatabase"}}})
	rw := connectAs(t, in, "rw", "pw", "tsauth", "").Database("tsauth")
	if n, err := rw.Collection("w").CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
		t.Fatalf("readWrite reading the time series: %d, %v", n, err)
	}
	_, err := rw.Collection("system.buckets.w").CountDocuments(ctx, bson.D{})
	requireCode(t, err, 13, "Unauthorized")
	anyDB := connectAs(t, in, "any", "pw", "admin", "").Database("tsauth")
	if n, err := anyDB.Collection("system.buckets.w").CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
		t.Fatalf("readAnyDatabase reading the buckets: %d, %v", n, err)
	}
}

// TestTimeseriesMetaUpdates: updates of a time series collection as
// MongoDB 7.0 allows them, of the metaField alone in the buckets a filter
// on the metaField selects, counting measurements; and MongoDB's refusals
// (InvalidOptions, 72) of everything else.
func TestTimeseriesMetaUpdates(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("tsupd")
	if err := db.CreateCollection(ctx, "u", options.CreateCollection().SetTimeSeriesOptions(options.TimeSeries().SetTimeField("t").SetMetaField("tags"))); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateCollection(ctx, "nometa", options.CreateCollection().SetTimeSeriesOptions(options.TimeSeries().SetTimeField("t"))); err != nil {
		t.Fatal(err)
	}
	coll := db.Collection("u")
	now := time.Now().Truncate(time.Millisecond)
	var docs []any
	for i, host := range []string{"a", "a", "a", "b", "b"} {
		docs = append(docs, bson.D{{Key: "t", Value: now.Add(time.Duration(i) * time.Second)}, {Key: "tags", Value: bson.D{{Key: "host", Value: host}, {Key: "dc", Value: "x"}}}, {Key: "v", Value: i}})
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	res, err := coll.UpdateMany(ctx, bson.D{{Key: "tags.host", Value: "a"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "tags.dc", Value: "y"}}}})
	if err != nil || res.MatchedCount != 3 || res.ModifiedCount != 3 {
		t.Fatalf("update of host a: %+v %v", res, err)
	}
	if n, _ := coll.CountDocuments(ctx, bson.D{{Key: "tags.dc", Value: "y"}, {Key: "tags.host", Value: "a"}}); n != 3 {
		t.Errorf("%d measurements of host a in dc y, want 3", n)
	}
	res, err = coll.UpdateMany(ctx, bson.D{{Key: "$or", Value: bson.A{bson.D{{Key: "tags.host", Value: "b"}}, bson.D{{Key: "tags.dc", Value: "nowhere"}}}}},
		bson.D{{Key: "$rename", Value: bson.D{{Key: "tags.dc", Value: "tags.region"}}}})
	if err != nil || res.MatchedCount != 2 || res.ModifiedCount != 2 {
		t.Fatalf("rename for host b: %+v %v", res, err)
	}
	res, err = coll.UpdateMany(ctx, bson.D{{Key: "tags.host", Value: "b"}}, bson.D{{Key: "$rename", Value: bson.D{{Key: "tags.dc", Value: "tags.region"}}}})
	if err != nil || res.MatchedCount != 2 || res.ModifiedCount != 0 {
		t.Errorf("a rename with nothing to rename: %+v %v", res, err)
	}
	// A new measurement of host a's old meta starts a new bucket.
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "t", Value: now}, {Key: "tags", Value: bson.D{{Key: "host", Value: "a"}, {Key: "dc", Value: "x"}}}}); err != nil {
		t.Fatal(err)
	}
	if n, _ := coll.CountDocuments(ctx, bson.D{{Key: "tags.dc", Value: "x"}}); n != 1 {
		t.Errorf("%d measurements in dc x, want the new one", n)
	}
	if n, _ := db.Collection("system.buckets.u").CountDocuments(ctx, bson.D{}); n != 3 {
		t.Errorf("%d buckets, want 3", n)
	}
	// A $jsonSchema requiring the metaField alone selects on the buckets'
	// meta (MongoDB 7.0's translateQuery renames its required fields).
	res, err = coll.UpdateMany(ctx, bson.D{{Key: "$jsonSchema", Value: bson.D{{Key: "required", Value: bson.A{"tags"}}, {Key: "properties", Value: bson.D{{Key: "tags", Value: bson.D{{Key: "required", Value: bson.A{"region"}}}}}}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "tags.r", Value: true}}}})
	if err != nil || res.MatchedCount != 2 || res.ModifiedCount != 2 {
		t.Errorf("update by $jsonSchema: %+v %v", res, err)
	}
	update := func(coll string, stmt bson.D) error {
		return db.RunCommand(ctx, bson.D{{Key: "update", Value: coll}, {Key: "updates", Value: bson.A{stmt}}}).Err()
	}
	set := bson.D{{Key: "$set", Value: bson.D{{Key: "tags.k", Value: 1}}}}
	byHost := bson.D{{Key: "tags.host", Value: "a"}}
	for _, tc := range []struct {
		coll string
		stmt bson.D
		msg  string
	}{
		{"u", bson.D{{Key: "q", Value: byHost}, {Key: "u", Value: set}}, "non-multi update"},
		{"u", bson.D{{Key: "q", Value: byHost}, {Key: "u", Value: set}, {Key: "multi", Value: true}, {Key: "upsert", Value: true}}, "upsert"},
		{"nometa", bson.D{{Key: "q", Value: bson.D{}}, {Key: "u", Value: set}, {Key: "multi", Value: true}}, "does not have a metaField"},
		{"u", bson.D{{Key: "q", Value: bson.D{{Key: "v", Value: 1}}}, {Key: "u", Value: set}, {Key: "multi", Value: true}}, "querying on a field that is not the metaField 'tags'"},
		{"u", bson.D{{Key: "q", Value: bson.D{{Key: "$and", Value: bson.A{byHost, bson.D{{Key: "t", Value: now}}}}}}, {Key: "u", Value: set}, {Key: "multi", Value: true}}, "querying on a field that is not the metaField"},
		{"u", bson.D{{Key: "q", Value: byHost}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "v", Value: 1}}}}}, {Key: "multi", Value: true}}, "updates a field that is not the metaField 'tags'"},
		{"u", bson.D{{Key: "q", Value: byHost}, {Key: "u", Value: bson.D{{Key: "$rename", Value: bson.D{{Key: "tags.dc", Value: "dc"}}}}}, {Key: "multi", Value: true}}, "updates a field that is not the metaField"},
		{"u", bson.D{{Key: "q", Value: byHost}, {Key: "u", Value: bson.A{bson.D{{Key: "$set", Value: bson.D{{Key: "tags.k", Value: 1}}}}}}, {Key: "multi", Value: true}}, "using a pipeline update"},
		// the translation refuses a replacement before the update driver's
		// FailedToParse of a multi replacement
		{"u", bson.D{{Key: "q", Value: byHost}, {Key: "u", Value: bson.D{{Key: "f2", Value: 7}}}, {Key: "multi", Value: true}}, "using a replacement document"},
		{"u", bson.D{{Key: "q", Value: byHost}, {Key: "u", Value: bson.D{}}, {Key: "multi", Value: true}}, "using a replacement document"},
		{"u", bson.D{{Key: "q", Value: bson.D{{Key: "$jsonSchema", Value: bson.D{{Key: "required", Value: bson.A{"tags", "t"}}}}}}, {Key: "u", Value: set}, {Key: "multi", Value: true}}, "querying on a field that is not the metaField"},
		{"u", bson.D{{Key: "q", Value: bson.D{{Key: "$jsonSchema", Value: bson.D{{Key: "properties", Value: bson.D{{Key: "v", Value: bson.D{}}}}}}}}, {Key: "u", Value: set}, {Key: "multi", Value: true}}, "querying on a field that is not the metaField"},
		{"u", bson.D{{Key: "q", Value: bson.D{{Key: "$expr", Value: bson.D{{Key: "$eq", Value: bson.A{"$tags.host", "a"}}}}}}, {Key: "u", Value: set}, {Key: "multi", Value: true}}, "Cannot use $expr"},
	} {
		err := update(tc.coll, tc.stmt)
		requireCode(t, err, 72, "InvalidOptions")
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%v: %v, want %q", tc.stmt, err, tc.msg)
		}
	}
}

// TestTimeseriesMetaPositionalUpdate: a positional "$" in an update of
// the metaField takes the array element the filter matched in each bucket,
// as MongoDB's translated update on the buckets does
// (timeseries_update.js).
func TestTimeseriesMetaPositionalUpdate(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("tspos")
	if err := db.CreateCollection(ctx, "u", options.CreateCollection().SetTimeSeriesOptions(options.TimeSeries().SetTimeField("t").SetMetaField("tag"))); err != nil {
		t.Fatal(err)
	}
	coll := db.Collection("u")
	now := time.Now().Truncate(time.Millisecond)
	if _, err := coll.InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "t", Value: now}, {Key: "tag", Value: bson.A{1, 2, 2}}},
		bson.D{{Key: "_id", Value: 2}, {Key: "t", Value: now}, {Key: "tag", Value: bson.A{2, 3, 4}}},
		bson.D{{Key: "_id", Value: 3}, {Key: "t", Value: now}, {Key: "tag", Value: bson.A{5}}},
	}); err != nil {
		t.Fatal(err)
	}
	res, err := coll.UpdateMany(ctx, bson.D{{Key: "tag", Value: 2}}, bson.D{{Key: "$set", Value: bson.D{{Key: "tag.$", Value: 1000}}}})
	if err != nil || res.MatchedCount != 2 || res.ModifiedCount != 2 {
		t.Fatalf("positional update: %+v %v", res, err)
	}
	for id, want := range map[int]string{1: "[1 1000 2]", 2: "[1000 3 4]", 3: "[5]"} {
		var got struct{ Tag []int }
		if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&got); err != nil {
			t.Fatal(err)
		}
		if s := fmt.Sprint(got.Tag); s != want {
			t.Errorf("_id %d: tag %s, want %s", id, s, want)
		}
	}
}

// TestTimeseriesWriteHints: a delete or update of a time series
// collection reads its buckets through the statement's hint, a key on the
// measurements naming the buckets' index of it; a hint no index has fails
// the statement with BadValue and writes nothing
// (timeseries_delete_hint.js).
func TestTimeseriesWriteHints(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("tshint")
	if err := db.CreateCollection(ctx, "h", options.CreateCollection().SetTimeSeriesOptions(options.TimeSeries().SetTimeField("time").SetMetaField("tag"))); err != nil {
		t.Fatal(err)
	}
	coll := db.Collection("h")
	if _, err := coll.Indexes().CreateMany(ctx, []mongo.IndexModel{{Keys: bson.D{{Key: "tag", Value: 1}}}, {Keys: bson.D{{Key: "time", Value: 1}, {Key: "tag", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	now := time.Now().Truncate(time.Millisecond)
	var docs []any
	for _, tag := range []string{"A", "B", "C", "D", "E"} {
		docs = append(docs, bson.D{{Key: "time", Value: now}, {Key: "tag", Value: tag}})
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	for _, hint := range []any{"test_hint", bson.D{{Key: "test_hint", Value: 1}}, bson.D{{Key: "tag", Value: -1}}} {
		_, err := coll.DeleteMany(ctx, bson.D{{Key: "tag", Value: "A"}}, options.DeleteMany().SetHint(hint))
		requireCode(t, err, 2, "")
		_, err = coll.UpdateMany(ctx, bson.D{{Key: "tag", Value: "A"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "tag", Value: "Z"}}}}, options.UpdateMany().SetHint(hint))
		requireCode(t, err, 2, "")
	}
	if n, _ := coll.CountDocuments(ctx, bson.D{{Key: "tag", Value: "A"}}); n != 1 {
		t.Fatalf("%d measurements of tag A after refused writes, want 1", n)
	}
	for i, hint := range []any{bson.D{{Key: "tag", Value: 1}}, bson.D{{Key: "time", Value: 1}, {Key: "tag", Value: 1}}, "time_1_tag_1", bson.D{{Key: "$natural", Value: -1}}} {
		tag := string(rune('A' + i))
		res, err := coll.DeleteMany(ctx, bson.D{{Key: "tag", Value: tag}}, options.DeleteMany().SetHint(hint))
		if err != nil || res.DeletedCount != 1 {
			t.Errorf("delete of %s with hint %v: %+v %v", tag, hint, res, err)
		}
	}
	if n, _ := coll.CountDocuments(ctx, bson.D{}); n != 1 {
		t.Errorf("%d measurements left, want 1", n)
	}
}

// TestTimeseriesRawBucketIndexes: listIndexes and $indexStats of a time
// series collection show an index made on its buckets directly with its
// key on the measurements (a control.min.y, control.max.y pair is y), and
// leave out one with no such key, as MongoDB's
// createTimeseriesIndexesFromBucketsIndexes does (timeseries_index_spec.js).
func TestTimeseriesRawBucketIndexes(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("tsraw")
	createTSColl(t, db, "r")
	buckets := db.Collection("system.buckets.r")
	if _, err := buckets.Indexes().CreateMany(ctx, []mongo.IndexModel{
		{Keys: bson.D{{Key: "control.min.y", Value: 1}, {Key: "control.max.y", Value: 1}}, Options: options.Index().SetName("y")},
		{Keys: bson.D{{Key: "control.max.z", Value: -1}, {Key: "control.min.z", Value: -1}}, Options: options.Index().SetName("z")},
		{Keys: bson.D{{Key: "data.w", Value: 1}}, Options: options.Index().SetName("w")},
	}); err != nil {
		t.Fatal(err)
	}
	coll := db.Collection("r")
	specs, err := coll.Indexes().ListSpecifications(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, sp := range specs {
		got = append(got, sp.Name+" "+sp.KeysDocument.String())
	}
	want := `m_1_t_1 {"m": {"$numberInt":"1"},"t": {"$numberInt":"1"}}|y {"y": {"$numberInt":"1"}}|z {"z": {"$numberInt":"-1"}}`
	if strings.Join(got, "|") != want {
		t.Errorf("listIndexes\n%s\nwant\n%s", strings.Join(got, "|"), want)
	}
	cur, err := coll.Aggregate(ctx, mongo.Pipeline{{{Key: "$indexStats", Value: bson.D{}}}, {{Key: "$sort", Value: bson.D{{Key: "name", Value: 1}}}}})
	if err != nil {
		t.Fatal(err)
	}
	var stats []bson.Raw
	if err := cur.All(ctx, &stats); err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for _, st := range stats {
		got = append(got, st.Lookup("name").StringValue()+" "+st.Lookup("key").Document().String())
	}
	if strings.Join(got, "|") != want {
		t.Errorf("$indexStats\n%s\nwant\n%s", strings.Join(got, "|"), want)
	}
}

// TestTimeseriesIndexKeyMapping: index keys on a time series collection
// map to its buckets as MongoDB's createBucketsIndexSpecFromTimeseriesIndexSpec
// maps them: a text index is InvalidOptions, a key with no buckets' form
// CannotCreateIndex, and dropIndexes of one IndexNotFound; a key on a
// measurement field names its control.min/control.max index, which a
// hint, collMod and dropIndexes reach when one was made on the buckets.
func TestTimeseriesIndexKeyMapping(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("tskeys")
	createTSColl(t, db, "k")
	coll := db.Collection("k")
	now := time.Now().Truncate(time.Millisecond)
	if _, err := coll.InsertMany(ctx, []any{bson.D{{Key: "t", Value: now}, {Key: "m", Value: 1}, {Key: "y", Value: 1}}, bson.D{{Key: "t", Value: now}, {Key: "m", Value: 2}, {Key: "y", Value: 2}}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key  bson.D
		code int
	}{
		{bson.D{{Key: "m", Value: "text"}}, 72},
		{bson.D{{Key: "t", Value: "hashed"}}, 67},
		{bson.D{{Key: "y", Value: "hashed"}}, 67},
		// a 2dsphere index of y's points, which are numbers
		{bson.D{{Key: "y", Value: "2dsphere"}}, 183934},
	} {
		_, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: tc.key})
		requireCode(t, err, tc.code, "")
	}
	// A partial filter that is no object is refused as the conversion to
	// the buckets reads it, before the specification's validation (14 on
	// a plain collection; timeseries_index_partial.js).
	partial := db.RunCommand(ctx, bson.D{{Key: "createIndexes", Value: "k"}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "y", Value: 1}}}, {Key: "name", Value: "y_1"}, {Key: "partialFilterExpression", Value: 123}}}}})
	requireError(t, partial.Err(), 10065, "", "invalid parameter: expected an object (partialFilterExpression)")
	// The sparse option, true or false, is refused on a key with a
	// measurement field and taken on the time and meta fields
	// (makeTimeseriesCreateIndexesCommand; jstests/core/timeseries/ddl/
	// timeseries_sparse_index.js).
	for _, tc := range []struct {
		key    bson.D
		sparse bool
		code   int
	}{
		{bson.D{{Key: "y", Value: 1}}, true, 72},
		{bson.D{{Key: "y", Value: -1}}, false, 72},
		{bson.D{{Key: "t", Value: 1}, {Key: "y", Value: 1}}, true, 72},
		{bson.D{{Key: "m", Value: 1}, {Key: "t", Value: -1}}, true, 0},
		{bson.D{{Key: "m.a", Value: 1}}, false, 0},
	} {
		err := db.RunCommand(ctx, bson.D{{Key: "createIndexes", Value: "k"}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: tc.key}, {Key: "name", Value: "sparse"}, {Key: "sparse", Value: tc.sparse}}}}}).Err()
		if tc.code == 0 {
			if err != nil {
				t.Errorf("sparse %v on %v: %v", tc.sparse, tc.key, err)
			} else if err := db.RunCommand(ctx, bson.D{{Key: "dropIndexes", Value: "k"}, {Key: "index", Value: "sparse"}}).Err(); err != nil {
				t.Fatal(err)
			}
			continue
		}
		requireError(t, err, tc.code, "InvalidOptions", "Sparse indexes are not supported on time-series measurements")
	}
	// _id is a measurement field: {_id: 1} and {_id: -1} index its
	// buckets' control.min._id and control.max._id under the names asked
	// for, not the _id index's rules.
	for _, dir := range []int{1, -1} {
		key := bson.D{{Key: "_id", Value: dir}}
		name, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: key})
		if want := fmt.Sprintf("_id_%d", dir); err != nil || name != want {
			t.Fatalf("createIndex %v: %q %v, want %q", key, name, err, want)
		}
		var bucketKey bson.Raw
		var specs []bson.Raw
		if cur, err := db.Collection("system.buckets.k").Indexes().List(ctx); err != nil || cur.All(ctx, &specs) != nil {
			t.Fatalf("listIndexes of the buckets: %v", err)
		}
		for _, spec := range specs {
			if spec.Lookup("name").StringValue() == name {
				bucketKey = spec.Lookup("key").Document()
			}
		}
		if want := map[int]string{1: `{"control.min._id": {"$numberInt":"1"},"control.max._id": {"$numberInt":"1"}}`, -1: `{"control.max._id": {"$numberInt":"-1"},"control.min._id": {"$numberInt":"-1"}}`}[dir]; bucketKey.String() != want {
			t.Errorf("buckets' key of %v: %s, want %s", key, bucketKey, want)
		}
		cur, err := coll.Find(ctx, bson.D{}, options.Find().SetHint(key))
		var found []bson.Raw
		if err != nil || cur.All(ctx, &found) != nil || len(found) != 2 {
			t.Errorf("find hinting %v: %d measurements, %v", key, len(found), err)
		}
		if err := coll.Indexes().DropWithKey(ctx, key); err != nil {
			t.Errorf("dropIndex %v: %v", key, err)
		}
	}
	requireCode(t, db.RunCommand(ctx, bson.D{{Key: "dropIndexes", Value: "k"}, {Key: "index", Value: bson.D{{Key: "y", Value: "hashed"}}}}).Err(), 27, "IndexNotFound")
	requireCode(t, db.RunCommand(ctx, bson.D{{Key: "dropIndexes", Value: "k"}, {Key: "index", Value: bson.D{{Key: "y", Value: 1}}}}).Err(), 27, "IndexNotFound")
	if _, err := db.Collection("system.buckets.k").Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "control.min.y", Value: 1}, {Key: "control.max.y", Value: 1}}, Options: options.Index().SetName("y")}); err != nil {
		t.Fatal(err)
	}
	res, err := coll.DeleteMany(ctx, bson.D{{Key: "y", Value: 1}}, options.DeleteMany().SetHint(bson.D{{Key: "y", Value: 1}}))
	if err != nil || res.DeletedCount != 1 {
		t.Errorf("delete hinted by the buckets' index of y: %+v %v", res, err)
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "k"}, {Key: "index", Value: bson.D{{Key: "keyPattern", Value: bson.D{{Key: "y", Value: 1}}}, {Key: "hidden", Value: true}}}}).Err(); err != nil {
		t.Errorf("collMod of the index of y: %v", err)
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "dropIndexes", Value: "k"}, {Key: "index", Value: bson.D{{Key: "y", Value: 1}}}}).Err(); err != nil {
		t.Errorf("dropIndexes of the index of y: %v", err)
	}
}

// TestTimeseriesCollModBucketing: collMod makes a time series collection's
// buckets coarser, as MongoDB 7.0 allows (granularity seconds to minutes to
// hours, or equal bucketMaxSpanSeconds and bucketRoundingSeconds no smaller
// than before); listCollections, the view, the bucketing of new
// measurements and time range queries follow.
func TestTimeseriesCollModBucketing(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("tsmod")
	if err := db.CreateCollection(ctx, "g", options.CreateCollection().SetTimeSeriesOptions(options.TimeSeries().SetTimeField("t").SetMetaField("m"))); err != nil {
		t.Fatal(err)
	}
	collMod := func(ts bson.D) error {
		return db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "g"}, {Key: "timeseries", Value: ts}}).Err()
	}
	tsOptions := func() string {
		specs, err := db.ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: "g"}})
		if err != nil || len(specs) != 1 {
			t.Fatalf("listCollections: %v %v", specs, err)
		}
		return specs[0].Options.Lookup("timeseries").String()
	}
	if err := collMod(bson.D{{Key: "granularity", Value: "minutes"}}); err != nil {
		t.Fatal(err)
	}
	if got := tsOptions(); got != `{"timeField": "t","metaField": "m","granularity": "minutes","bucketMaxSpanSeconds": {"$numberInt":"86400"}}` {
		t.Errorf("after granularity minutes: %s", got)
	}
	// Two measurements three hours apart now share a bucket (a day's span).
	day := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	coll := db.Collection("g")
	for _, h := range []int{1, 4} {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "t", Value: day.Add(time.Duration(h) * time.Hour)}, {Key: "m", Value: "x"}}); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := db.Collection("system.buckets.g").CountDocuments(ctx, bson.D{}); n != 1 {
		t.Errorf("%d buckets for two measurements 3 hours apart at granularity minutes, want 1", n)
	}
	if n, _ := coll.CountDocuments(ctx, bson.D{{Key: "t", Value: bson.D{{Key: "$gte", Value: day.Add(3 * time.Hour)}}}}); n != 1 {
		t.Errorf("time range query: %d, want 1", n)
	}
	for _, tc := range []struct {
		ts   bson.D
		code int
		msg  string
	}{
		{bson.D{{Key: "granularity", Value: "seconds"}}, 72, "Invalid transition for timeseries.granularity"},
		{bson.D{{Key: "granularity", Value: "hours"}, {Key: "bucketRoundingSeconds", Value: 86400}}, 72, "not configurable alongside the granularity"},
		{bson.D{{Key: "bucketMaxSpanSeconds", Value: 100000}}, 72, "need to be set alongside each other"},
		{bson.D{{Key: "bucketMaxSpanSeconds", Value: 100000}, {Key: "bucketRoundingSeconds", Value: 90000}}, 72, "needs to be equal"},
		{bson.D{{Key: "bucketMaxSpanSeconds", Value: 1000}, {Key: "bucketRoundingSeconds", Value: 1000}}, 72, "needs to be equal or greater"},
		{bson.D{{Key: "granularity", Value: "weeks"}}, 2, "not a valid value"},
		// the IDL's range check of a span, as MongoDB 7.0's (51024)
		{bson.D{{Key: "bucketMaxSpanSeconds", Value: 31536001}, {Key: "bucketRoundingSeconds", Value: 31536001}}, 51024, "value must be <= 31536000, actual value '31536001'"},
		// a null granularity is absent, as the IDL reads it
		{bson.D{{Key: "granularity", Value: nil}}, 72, "need to be set alongside each other"},
	} {
		err := collMod(tc.ts)
		requireCode(t, err, tc.code, "")
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%v: %v, want %q", tc.ts, err, tc.msg)
		}
	}
	if err := collMod(bson.D{{Key: "bucketMaxSpanSeconds", Value: 100000}, {Key: "bucketRoundingSeconds", Value: 100000}}); err != nil {
		t.Fatal(err)
	}
	if got := tsOptions(); got != `{"timeField": "t","metaField": "m","bucketRoundingSeconds": {"$numberInt":"100000"},"bucketMaxSpanSeconds": {"$numberInt":"100000"}}` {
		t.Errorf("after custom bucketing: %s", got)
	}
	if _, err := db.Collection("plain").InsertOne(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	err := db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "plain"}, {Key: "timeseries", Value: bson.D{{Key: "granularity", Value: "hours"}}}}).Err()
	requireCode(t, err, 72, "InvalidOptions")
}

// TestTimeseriesStats: collStats, $collStats and $indexStats of a time
// series collection describe its buckets, as MongoDB 7.0's do: a
// timeseries section (bucketsNs, bucketCount, avgBucketSize, unscaled) in
// place of count and avgObjSize, the bucket count as $collStats' count,
// no _id index, and $indexStats' keys on the measurements, after spec.
func TestTimeseriesStats(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("tsstats")
	if err := db.CreateCollection(ctx, "m", options.CreateCollection().SetTimeSeriesOptions(options.TimeSeries().SetTimeField("t").SetMetaField("host"))); err != nil {
		t.Fatal(err)
	}
	coll := db.Collection("m")
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var docs []any
	for i := range 12 {
		docs = append(docs, bson.D{{Key: "t", Value: base.Add(time.Duration(i) * time.Minute)}, {Key: "host", Value: i % 3}, {Key: "v", Value: i}})
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "t", Value: -1}}}); err != nil {
		t.Fatal(err)
	}
	buckets, err := db.Collection("system.buckets.m").CountDocuments(ctx, bson.D{})
	if err != nil || buckets != 3 {
		t.Fatalf("%d buckets (%v), want one per host", buckets, err)
	}
	stats := func(scale int32) bson.Raw {
		t.Helper()
		raw, err := db.RunCommand(ctx, bson.D{{Key: "collStats", Value: "m"}, {Key: "scale", Value: scale}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	st := stats(1)
	if got := st.Lookup("ns").StringValue(); got != "tsstats.m" {
		t.Errorf("ns %q", got)
	}
	for _, absent := range []string{"count", "avgObjSize"} {
		if _, err := st.LookupErr(absent); err == nil {
			t.Errorf("collStats has %s: %s", absent, st)
		}
	}
	ts := st.Lookup("timeseries").Document()
	size := st.Lookup("size").AsInt64()
	if ts.Lookup("bucketsNs").StringValue() != "tsstats.system.buckets.m" || ts.Lookup("bucketCount").AsInt64() != buckets ||
		ts.Lookup("avgBucketSize").AsInt64() != size/buckets {
		t.Errorf("timeseries section %s, size %d", ts, size)
	}
	if n := st.Lookup("nindexes").AsInt64(); n != 2 {
		t.Errorf("nindexes %d, want the two secondary indexes", n)
	}
	// the buckets list the same indexes, on their own fields, and no _id
	bucketIndexes, err := db.Collection("system.buckets.m").Indexes().ListSpecifications(ctx)
	if err != nil || len(bucketIndexes) != 2 || bucketIndexes[0].Name != "host_1_t_1" {
		t.Errorf("indexes of the buckets: %v (%v)", bucketIndexes, err)
	}
	if names := fmt.Sprint(st.Lookup("indexSizes").Document()); strings.Contains(names, "_id_") || !strings.Contains(names, "t_-1") {
		t.Errorf("indexSizes %s", names)
	}
	if scaled := stats(2); !bytes.Equal(scaled.Lookup("timeseries").Value, ts) || scaled.Lookup("size").AsInt64() != size/2 {
		t.Errorf("scaled by 2: %s", scaled)
	}

	cur, err := coll.Aggregate(ctx, mongo.Pipeline{{{Key: "$collStats", Value: bson.D{{Key: "count", Value: bson.D{}}, {Key: "storageStats", Value: bson.D{}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	var got []bson.Raw
	if err := cur.All(ctx, &got); err != nil || len(got) != 1 {
		t.Fatalf("$collStats: %v %v", got, err)
	}
	if got[0].Lookup("ns").StringValue() != "tsstats.m" || got[0].Lookup("count").AsInt64() != buckets ||
		!bytes.Equal(got[0].Lookup("storageStats", "timeseries").Value, ts) {
		t.Errorf("$collStats: %s", got[0])
	}

	cur, err = coll.Aggregate(ctx, mongo.Pipeline{{{Key: "$indexStats", Value: bson.D{}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := cur.All(ctx, &got); err != nil {
		t.Fatal(err)
	}
	var shown []string
	for _, d := range got {
		elems, _ := d.Elements()
		var keys []string
		for _, el := range elems {
			keys = append(keys, el.Key())
		}
		shown = append(shown, fmt.Sprintf("%s %s %v", d.Lookup("name").StringValue(), d.Lookup("key"), keys))
	}
	want := []string{
		`host_1_t_1 {"host": {"$numberInt":"1"},"t": {"$numberInt":"1"}} [name host accesses spec key]`,
		`t_-1 {"t": {"$numberInt":"-1"}} [name host accesses spec key]`,
	}
	if strings.Join(shown, "\n") != strings.Join(want, "\n") {
		t.Errorf("$indexStats:\n%s\nwant\n%s", strings.Join(shown, "\n"), strings.Join(want, "\n"))
	}
}

// TestTimeseriesExecStats: collStats' timeseries section counts what
// inserts did to the buckets, as MongoDB's bucket catalog does: buckets
// inserted and updated, opened for a new meta value, closed when full,
// when a measurement falls past or before their span or changes a field's
// type class (a schema change), commits and
// measurements committed; a drop starts the counts again.
func TestTimeseriesExecStats(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("tsexec")
	create := func() *mongo.Collection {
		t.Helper()
		if err := db.CreateCollection(ctx, "m", options.CreateCollection().SetTimeSeriesOptions(options.TimeSeries().SetTimeField("t").SetMetaField("host"))); err != nil {
			t.Fatal(err)
		}
		return db.Collection("m")
	}
	coll := create()
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(host int, d time.Duration) bson.D {
		return bson.D{{Key: "t", Value: base.Add(d)}, {Key: "host", Value: host}}
	}
	var docs []any
	for i := range 12 {
		docs = append(docs, at(i%3, time.Duration(i)*time.Minute)) // a bucket per host
	}
	full := make([]any, 1000)
	for i := range full {
		full[i] = at(2, 12*time.Minute+time.Duration(i)*time.Second) // fills host 2's, then opens one
	}
	// a field changing its type class closes the bucket (a schema change)
	schema := []any{append(at(3, 0), bson.E{Key: "v", Value: 1}), append(at(3, time.Second), bson.E{Key: "v", Value: "x"})}
	for _, batch := range [][]any{docs, {at(0, 30*time.Minute)}, {at(0, 2*time.Hour)}, {at(1, -time.Hour)}, full, schema} {
		if _, err := coll.InsertMany(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	section := func() string {
		t.Helper()
		raw, err := db.RunCommand(ctx, bson.D{{Key: "collStats", Value: "m"}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		elems, _ := raw.Lookup("timeseries").Document().Elements()
		var out []string
		for _, el := range elems {
			if el.Key() != "bucketsNs" && el.Key() != "avgBucketSize" {
				out = append(out, fmt.Sprintf("%s=%v", el.Key(), el.Value().AsInt64()))
			}
		}
		return strings.Join(out, " ")
	}
	want := "bucketCount=8 numBucketInserts=8 numBucketUpdates=2 numBucketsOpenedDueToMetadata=4 numBucketsClosedDueToCount=1 " +
		"numBucketsClosedDueToSchemaChange=1 numBucketsClosedDueToSize=0 numBucketsClosedDueToTimeForward=1 numBucketsClosedDueToTimeBackward=1 " +
		"numBucketsClosedDueToMemoryThreshold=0 numCommits=10 numWaits=0 numMeasurementsCommitted=1017 avgNumMeasurementsPerCommit=101"
	if got := section(); got != want {
		t.Errorf("timeseries section\n%s\nwant\n%s", got, want)
	}
	if err := coll.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	create()
	want = "bucketCount=0 numBucketInserts=0 numBucketUpdates=0 numBucketsOpenedDueToMetadata=0 numBucketsClosedDueToCount=0 " +
		"numBucketsClosedDueToSchemaChange=0 numBucketsClosedDueToSize=0 numBucketsClosedDueToTimeForward=0 numBucketsClosedDueToTimeBackward=0 " +
		"numBucketsClosedDueToMemoryThreshold=0 numCommits=0 numWaits=0 numMeasurementsCommitted=0"
	if got := section(); got != want {
		t.Errorf("after a drop\n%s\nwant\n%s", got, want)
	}
	// dropping the database, or the buckets collection itself, starts
	// them again too
	for _, drop := range []func() error{
		func() error { return db.Drop(ctx) },
		func() error { return db.Collection("system.buckets.m").Drop(ctx) },
	} {
		if _, err := db.Collection("m").InsertMany(ctx, docs); err != nil {
			t.Fatal(err)
		}
		if err := drop(); err != nil {
			t.Fatal(err)
		}
		if err := db.Collection("m").Drop(ctx); err != nil {
			t.Fatal(err)
		}
		create()
		if got := section(); got != want {
			t.Errorf("after a database or buckets drop\n%s\nwant\n%s", got, want)
		}
	}
}

// createTSColl creates the time series collection db.name with time
// field t and meta field m.
func createTSColl(t *testing.T, db *mongo.Database, name string) {
	t.Helper()
	opts := options.CreateCollection().SetTimeSeriesOptions(options.TimeSeries().SetTimeField("t").SetMetaField("m"))
	if err := db.CreateCollection(context.Background(), name, opts); err != nil {
		t.Fatal(err)
	}
}

// TestTimeseriesBucketValidator: the buckets collection of a time series
// collection has MongoDB's validator of bucket documents, which
// listCollections shows; the buckets Folio writes (inserts, a delete's
// rewrite, a meta update) all pass it, and a malformed bucket written
// straight to the buckets collection (mongorestore's testdata has such a
// dump) fails with DocumentValidationFailure unless validation is
// bypassed.
func TestTimeseriesBucketValidator(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("tsv")
	createTSColl(t, db, "v")
	coll, buckets := db.Collection("v"), db.Collection("system.buckets.v")
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var docs []any
	for i := range 500 {
		d := bson.D{{Key: "t", Value: t0.Add(time.Duration(i) * 17 * time.Minute)}, {Key: "v", Value: i}}
		if i%3 != 0 {
			d = append(d, bson.E{Key: "m", Value: bson.D{{Key: "host", Value: i % 3}}})
		}
		if i%5 == 0 {
			d = append(d, bson.E{Key: "nested", Value: bson.D{{Key: "a", Value: bson.A{1, "x"}}}})
		}
		docs = append(docs, d)
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.DeleteMany(ctx, bson.D{{Key: "v", Value: bson.D{{Key: "$mod", Value: bson.A{7, 0}}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.UpdateMany(ctx, bson.D{{Key: "m.host", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "m.host", Value: 4}}}}); err != nil {
		t.Fatal(err)
	}
	var info bson.Raw
	cur, err := db.ListCollections(ctx, bson.D{{Key: "name", Value: "system.buckets.v"}})
	if err == nil && cur.Next(ctx) {
		info = cur.Current
		cur.Close(ctx)
	}
	validator, ok := info.Lookup("options", "validator").DocumentOK()
	const want = `{"$jsonSchema": {"bsonType": "object","required": ["_id","control","data"],"properties": {"_id": {"bsonType": "objectId"},` +
		`"control": {"bsonType": "object","required": ["version","min","max"],"properties": {"version": {"bsonType": "number"},` +
		`"min": {"bsonType": "object","required": ["t"],"properties": {"t": {"bsonType": "date"}}},` +
		`"max": {"bsonType": "object","required": ["t"],"properties": {"t": {"bsonType": "date"}}},` +
		`"closed": {"bsonType": "bool"},"count": {"bsonType": "number","minimum": {"$numberInt":"1"}}},"additionalProperties": false},` +
		`"data": {"bsonType": "object"},"meta": {}},"additionalProperties": false}}`
	if !ok || validator.String() != want {
		t.Fatalf("system.buckets.v's validator: %s (%v)", info, err)
	}
	total, err := buckets.CountDocuments(ctx, bson.D{})
	if err != nil || total < 10 {
		t.Fatalf("%d buckets, %v", total, err)
	}
	if n, err := buckets.CountDocuments(ctx, bson.D{{Key: "$nor", Value: bson.A{validator}}}); err != nil || n != 0 {
		t.Errorf("%d of %d buckets fail the validator, %v", n, total, err)
	}
	bad := bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "x", Value: 1}}
	_, err = buckets.InsertOne(ctx, bad)
	requireCode(t, err, 121, "DocumentValidationFailure")
	if _, err := buckets.InsertOne(ctx, bad, options.InsertOne().SetBypassDocumentValidation(true)); err != nil {
		t.Errorf("a bucket written with bypassDocumentValidation: %v", err)
	}
}

// TestTimeseriesMixedSchemaBuckets: a bucket whose field holds values of
// several types (as buckets MongoDB 5.1 and earlier wrote; mongorestore
// brings them, after collMod's timeseriesBucketsMayHaveMixedSchemaData)
// is refused until collMod's flag (true or false, on a time series
// collection only) says the buckets may hold such; then it answers queries
// as a plain collection of its measurements does, the bucket filter no
// longer bounding measurement fields by the buckets' control.min and max.
func TestTimeseriesMixedSchemaBuckets(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("tsmix")
	createTSColl(t, db, "mix")
	if err := db.CreateCollection(ctx, "plain"); err != nil {
		t.Fatal(err)
	}
	collMod := func(coll string, v any) error {
		return db.RunCommand(ctx, bson.D{{Key: "collMod", Value: coll}, {Key: "timeseriesBucketsMayHaveMixedSchemaData", Value: v}}).Err()
	}
	// the bucket of mongo-tools' mixed-schema test: a is "a" and 1
	var bucket bson.D
	const bucketJSON = `{"_id":{"$oid":"65a6eb806ffc9fa4280ecac4"},"control":{"version":1,"min":{"_id":{"$oid":"65a6eba7e6d2e848e08c3750"},"t":{"$date":"2024-01-16T20:48:00Z"},"a":1},` +
		`"max":{"_id":{"$oid":"65a6eba7e6d2e848e08c3751"},"t":{"$date":"2024-01-16T20:48:39.448Z"},"a":"a"}},"meta":0,` +
		`"data":{"_id":{"0":{"$oid":"65a6eba7e6d2e848e08c3750"},"1":{"$oid":"65a6eba7e6d2e848e08c3751"}},"t":{"0":{"$date":"2024-01-16T20:48:39.448Z"},"1":{"$date":"2024-01-16T20:48:39.448Z"}},"a":{"0":"a","1":1}}}`
	if err := bson.UnmarshalExtJSON([]byte(bucketJSON), false, &bucket); err != nil {
		t.Fatal(err)
	}
	// Until collMod marks the collection, a bucket of mixed schemas is
	// refused (MongoDB's time series op observer), whatever the bypass.
	_, err := db.Collection("system.buckets.mix").InsertOne(ctx, bucket, options.InsertOne().SetBypassDocumentValidation(true))
	requireCode(t, err, 408, "CannotInsertTimeseriesBucketsWithMixedSchema")
	for _, v := range []bool{true, false, true} {
		if err := collMod("mix", v); err != nil {
			t.Fatal(err)
		}
	}
	requireCode(t, collMod("mix", "yes"), 14, "TypeMismatch")
	requireCode(t, collMod("plain", true), 72, "InvalidOptions")
	if _, err := db.Collection("system.buckets.mix").InsertOne(ctx, bucket); err != nil {
		t.Fatal(err)
	}
	cur, err := db.Collection("mix").Find(ctx, bson.D{})
	var all []bson.D
	if err == nil {
		err = cur.All(ctx, &all)
	}
	if err != nil || len(all) != 2 {
		t.Fatalf("the bucket's measurements: %v, %v", all, err)
	}
	for _, m := range all {
		if _, err := db.Collection("plain").InsertOne(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	for _, filter := range []bson.D{
		{{Key: "a", Value: bson.D{{Key: "$gt", Value: 0}}}},
		{{Key: "a", Value: bson.D{{Key: "$lt", Value: "b"}}}},
		{{Key: "a", Value: bson.D{{Key: "$gte", Value: 1}, {Key: "$lte", Value: 1}}}},
		{{Key: "a", Value: "a"}},
		{{Key: "a", Value: bson.D{{Key: "$type", Value: "string"}}}},
		{{Key: "a", Value: bson.D{{Key: "$lt", Value: 1}}}},
		{{Key: "a", Value: bson.D{{Key: "$gt", Value: "a"}}}},
	} {
		var got, want []bson.Raw
		for _, c := range []struct {
			name string
			out  *[]bson.Raw
		}{{"mix", &got}, {"plain", &want}} {
			// (a plain collection stores _id first)
			cur, err := db.Collection(c.name).Find(ctx, filter, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetProjection(bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}}))
			if err == nil {
				err = cur.All(ctx, c.out)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%v: time series %v, plain %v", filter, got, want)
		}
	}
}

// TestTimeseriesBucketsClustered: MongoDB clusters a time series
// collection's buckets by _id and says so in the form it keeps for the
// collections it clusters itself: listCollections shows clusteredIndex:
// true among the options in MongoDB's order and no idIndex, listIndexes
// no _id index, and the oplog's create entry the same options, which
// create takes back to make the buckets collection alone (applyOps,
// mongorestore). Each form of clusteredIndex is refused where the other
// belongs.
func TestTimeseriesBucketsClustered(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("tsclu")
	opts := options.CreateCollection().SetTimeSeriesOptions(options.TimeSeries().SetTimeField("t").SetMetaField("m")).SetExpireAfterSeconds(86400)
	if err := db.CreateCollection(ctx, "w", opts); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("w").InsertOne(ctx, bson.D{{Key: "t", Value: time.Now()}, {Key: "m", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	listed := func(name string) bson.Raw {
		t.Helper()
		specs, err := db.ListCollections(ctx, bson.D{{Key: "name", Value: name}})
		if err != nil || !specs.Next(ctx) {
			t.Fatalf("listCollections %s: %v", name, err)
		}
		defer specs.Close(ctx)
		return specs.Current
	}
	info := listed("system.buckets.w")
	bucketOpts := info.Lookup("options").Document()
	if got := keysOf(t, bucketOpts); !slices.Equal(got, []string{"validator", "clusteredIndex", "expireAfterSeconds", "timeseries"}) || !bucketOpts.Lookup("clusteredIndex").Boolean() {
		t.Errorf("options of system.buckets.w: %s", bucketOpts)
	}
	if _, err := info.LookupErr("idIndex"); err == nil {
		t.Errorf("system.buckets.w lists an idIndex: %s", info)
	}
	specs, err := db.Collection("system.buckets.w").Indexes().ListSpecifications(ctx)
	if err != nil || len(specs) != 1 || specs[0].Name != "m_1_t_1" {
		t.Errorf("indexes of system.buckets.w: %v %v", specs, err)
	}
	var entry bson.Raw
	err = client.Database("local").Collection("oplog.rs").FindOne(ctx, bson.D{{Key: "ns", Value: "tsclu.$cmd"}, {Key: "o.create", Value: "system.buckets.w"}}).Decode(&entry)
	if err != nil {
		t.Fatal(err)
	}
	create := entry.Lookup("o").Document()
	if got := keysOf(t, create); !slices.Equal(got, []string{"create", "validator", "clusteredIndex", "expireAfterSeconds", "timeseries"}) {
		t.Errorf("the oplog's create of system.buckets.w: %s", create)
	}
	// The entry's command creates the buckets collection alone.
	cmd := bson.D{{Key: "create", Value: "system.buckets.alone"}}
	elems, _ := create.Elements()
	for _, e := range elems[1:] {
		cmd = append(cmd, bson.E{Key: e.Key(), Value: e.Value()})
	}
	if err := db.RunCommand(ctx, cmd).Err(); err != nil {
		t.Fatal(err)
	}
	alone := listed("system.buckets.alone")
	if !bytes.Equal(alone.Lookup("options").Value, bucketOpts) {
		t.Errorf("options of system.buckets.alone %s, want %s", alone.Lookup("options"), bucketOpts)
	}
	if names, err := db.ListCollectionNames(ctx, bson.D{{Key: "name", Value: "alone"}}); err != nil || len(names) != 0 {
		t.Errorf("create of system.buckets.alone made %v, %v", names, err)
	}
	var bucket bson.Raw
	if err := db.Collection("system.buckets.w").FindOne(ctx, bson.D{}).Decode(&bucket); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("system.buckets.alone").InsertOne(ctx, bucket); err != nil {
		t.Errorf("a bucket of w into system.buckets.alone: %v", err)
	}
	run := func(cmd bson.D) error { return db.RunCommand(ctx, cmd).Err() }
	ts := bson.E{Key: "timeseries", Value: bson.D{{Key: "timeField", Value: "t"}}}
	spec := bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "unique", Value: true}}
	requireCode(t, run(bson.D{{Key: "create", Value: "plain"}, {Key: "clusteredIndex", Value: true}}), 5979703, "Location5979703")
	requireCode(t, run(bson.D{{Key: "create", Value: "system.buckets.b"}, {Key: "clusteredIndex", Value: spec}, ts}), 5979703, "Location5979703")
	requireCode(t, run(bson.D{{Key: "create", Value: "system.buckets.b"}, ts}), 238, "NotImplemented")
	requireCode(t, run(bson.D{{Key: "create", Value: "tsc"}, {Key: "clusteredIndex", Value: true}, ts}), 72, "InvalidOptions")
	if err := run(bson.D{{Key: "create", Value: "plain"}, {Key: "clusteredIndex", Value: false}}); err != nil {
		t.Fatal(err)
	}
	if _, err := listed("plain").LookupErr("idIndex"); err != nil {
		t.Errorf("a collection created with clusteredIndex: false has no idIndex: %s", listed("plain"))
	}
}

// TestTimeseriesSeparateInserts: measurements inserted one command at a
// time into one bucket, which each insert reads back and extends, keep
// the bucket whole whatever the lengths of their values.
func TestTimeseriesSeparateInserts(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	if err := db.CreateCollection(ctx, "ts_sep", options.CreateCollection().SetTimeSeriesOptions(options.TimeSeries().SetTimeField("t").SetMetaField("m"))); err != nil {
		t.Fatal(err)
	}
	coll := db.Collection("ts_sep")
	base := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	vals := []string{"1", "10", "5", "aa", "b"}
	for i, v := range vals {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "t", Value: base.Add(time.Duration(i) * time.Second)}, {Key: "m", Value: 42}, {Key: "v", Value: v}}); err != nil {
			t.Fatalf("insert %d: %v", i, err)
		}
	}
	if n, err := coll.CountDocuments(ctx, bson.D{{Key: "t", Value: bson.D{{Key: "$gte", Value: base.Add(4 * time.Second)}}}}); err != nil || n != 1 {
		t.Errorf("the last measurement by time: %d %v, want 1", n, err)
	}
	if n, err := coll.CountDocuments(ctx, bson.D{}); err != nil || n != int64(len(vals)) {
		t.Errorf("%d measurements %v, want %d", n, err, len(vals))
	}
}

// TestTimeseriesMeasurementIndex: an index on a measurement field indexes
// the buckets' control.min and control.max of it (MongoDB's
// createBucketsIndexSpecFromTimeseriesIndexSpec), listIndexes shows it on
// the measurements, and a range or equality on the field reads only the
// buckets whose bounds allow a match, through the index: the answers are a
// plain collection's of the same measurements, whatever their types. A
// measurement holding an array along the field cannot be indexed
// (5930501), on insert as when the index is built.
func TestTimeseriesMeasurementIndex(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("tsmeasure")
	createTSColl(t, db, "w")
	ts, plain := db.Collection("w"), db.Collection("plain")
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var docs []any
	for i := range 2000 {
		// temp rises with time, so each bucket holds a narrow range; a
		// few measurements hold other types, which open buckets of their
		// own, or none. NaN, the least number, makes its bucket's
		// minimum: those are early, where no range below is asked.
		var temp any = float64(i) / 10
		switch i % 50 {
		case 7:
			if i < 400 {
				temp = math.NaN()
			}
		case 11:
			temp = bson.D{{Key: "c", Value: i}}
		case 13:
			temp = "warm"
		case 17:
			temp = nil
		case 19:
			temp = int64(i / 10)
		}
		d := bson.D{{Key: "_id", Value: i}, {Key: "t", Value: t0.Add(time.Duration(i) * time.Minute)}, {Key: "m", Value: i % 2}}
		if i%50 != 23 {
			d = append(d, bson.E{Key: "temp", Value: temp})
		}
		docs = append(docs, d)
	}
	for _, c := range []*mongo.Collection{ts, plain} {
		if _, err := c.InsertMany(ctx, docs); err != nil {
			t.Fatal(err)
		}
	}
	name, err := ts.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "temp", Value: 1}}})
	if err != nil || name != "temp_1" {
		t.Fatalf("createIndex on a measurement: %q %v", name, err)
	}
	specs, err := ts.Indexes().ListSpecifications(ctx)
	if err != nil || len(specs) != 2 || specs[1].KeysDocument.String() != `{"temp": {"$numberInt":"1"}}` {
		t.Errorf("listIndexes: %v %v", specs, err)
	}
	// A 2dsphere index of a measurement is built (TestTimeseriesGeoIndex).
	if _, err = ts.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "loc", Value: "2dsphere"}}}); err != nil {
		t.Fatalf("createIndex 2dsphere on a measurement: %v", err)
	}
	if err = ts.Indexes().DropOne(ctx, "loc_2dsphere"); err != nil {
		t.Fatal(err)
	}
	gt := func(op string, v any) bson.D { return bson.D{{Key: "temp", Value: bson.D{{Key: op, Value: v}}}} }
	filters := []bson.D{
		gt("$gt", 195),
		gt("$gte", 150.5),
		gt("$lt", 3),
		gt("$lte", int64(0)),
		{{Key: "temp", Value: 100}},
		{{Key: "temp", Value: bson.D{{Key: "$gt", Value: 50}, {Key: "$lt", Value: 52}}}},
		{{Key: "temp.c", Value: 111}},
		{{Key: "temp.c", Value: bson.D{{Key: "$gt", Value: 1500}}}},
		{{Key: "temp", Value: math.NaN()}},
		{{Key: "temp", Value: "warm"}},
		{{Key: "temp", Value: nil}},
		{{Key: "$and", Value: bson.A{gt("$gt", 20), gt("$lt", 21)}}, {Key: "m", Value: 1}},
	}
	// The measurements matched, by _id (NaN equals no value in Go).
	ids := func(c *mongo.Collection, f bson.D) []string {
		var out []string
		for _, d := range findAll(t, c, f, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}})) {
			out = append(out, d.Lookup("_id").String())
		}
		return out
	}
	for _, f := range filters {
		got, want := ids(ts, f), ids(plain, f)
		if len(want) == 0 || !reflect.DeepEqual(got, want) {
			t.Errorf("%v: time series %v, plain %v", f, got, want)
		}
	}
	// A narrow range reads a few buckets of the ~60, through the index.
	if err := db.RunCommand(ctx, bson.D{{Key: "profile", Value: 2}}).Err(); err != nil {
		t.Fatal(err)
	}
	findAll(t, ts, filters[5])
	entries := profileEntries(t, db)
	last := entries[len(entries)-1]
	if n := last.Lookup("docsExamined").AsInt64(); n == 0 || n > 4 {
		t.Errorf("a range of temp read %d buckets: %s", n, last)
	}
	if plan := last.Lookup("planSummary").StringValue(); !strings.Contains(plan, "IXSCAN") || !strings.Contains(plan, "control.min.temp") {
		t.Errorf("a range of temp: plan %q", plan)
	}
	arrays := bson.D{{Key: "t", Value: t0}, {Key: "m", Value: 0}, {Key: "temp", Value: bson.A{1, 2}}}
	_, err = ts.InsertOne(ctx, arrays)
	requireCode(t, err, 5930501, "")
	if err := ts.Indexes().DropOne(ctx, "temp_1"); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.InsertOne(ctx, arrays); err != nil {
		t.Fatal(err)
	}
	_, err = ts.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "temp", Value: -1}}})
	requireCode(t, err, 5930501, "")
}
