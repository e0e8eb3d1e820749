package driver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestClusteredCollection: a collection created with clusteredIndex stores
// and finds documents as any other, lists its clustered index in its
// options without a separate idIndex, and listIndexes shows the _id index
// as clustered (https://www.mongodb.com/docs/v7.0/core/clustered-collections/).
func TestClusteredCollection(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	err := db.CreateCollection(ctx, "clu", options.CreateCollection().SetClusteredIndex(bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "unique", Value: true}, {Key: "name", Value: "byId"}}))
	if err != nil {
		t.Fatal(err)
	}
	coll := db.Collection("clu")
	if _, err := coll.InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 2}}, bson.D{{Key: "_id", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	if got := ids(findAll(t, coll, bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: 1}}}})); len(got) != 2 || got[0] != "1" {
		t.Fatalf("find: %v", got)
	}
	specs, err := db.ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: "clu"}})
	if err != nil || len(specs) != 1 {
		t.Fatalf("listCollections: %v %v", specs, err)
	}
	if specs[0].IDIndex.Name != "" {
		t.Errorf("a clustered collection lists an idIndex: %v", specs[0].IDIndex)
	}
	ci := specs[0].Options.Lookup("clusteredIndex").Document()
	want := `{"v": {"$numberInt":"2"},"key": {"_id": {"$numberInt":"1"}},"name": "byId","unique": true}`
	if ci.String() != want {
		t.Errorf("clusteredIndex option %s, want %s", ci, want)
	}
	// expireAfterSeconds: listed after clusteredIndex, as a long
	if err := db.CreateCollection(ctx, "expiring", options.CreateCollection().SetClusteredIndex(bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "unique", Value: true}}).SetExpireAfterSeconds(3600)); err != nil {
		t.Fatal(err)
	}
	exp, err := db.ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: "expiring"}})
	if err != nil || len(exp) != 1 {
		t.Fatalf("listCollections: %v %v", exp, err)
	}
	if keys := exp[0].Options.String(); keys != `{"clusteredIndex": {"v": {"$numberInt":"2"},"key": {"_id": {"$numberInt":"1"}},"name": "_id_","unique": true},"expireAfterSeconds": {"$numberLong":"3600"}}` {
		t.Errorf("options of a clustered collection with expiry: %s", keys)
	}
	requireCode(t, db.CreateCollection(ctx, "neg", options.CreateCollection().SetClusteredIndex(bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "unique", Value: true}}).SetExpireAfterSeconds(-1)), 72, "InvalidOptions")
	cur, err := coll.Indexes().List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var idx []bson.Raw
	if err := cur.All(ctx, &idx); err != nil {
		t.Fatal(err)
	}
	if len(idx) != 1 || !idx[0].Lookup("clustered").Boolean() || idx[0].Lookup("name").StringValue() != "byId" {
		t.Errorf("listIndexes: %v", idx)
	}
	for _, tc := range []struct {
		spec bson.D
		code int
	}{
		{bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "unique", Value: false}}, 5979700},
		{bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "unique", Value: true}}, 197},
		{bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "unique", Value: true}, {Key: "v", Value: 12345}}, 5979704},
	} {
		err := db.CreateCollection(ctx, "clu2", options.CreateCollection().SetClusteredIndex(tc.spec))
		requireCode(t, err, tc.code, "")
	}
	// The boolean form is a safeBool: a zero of any numeric type asks for
	// a collection that is not clustered; other numbers, like true, for
	// the legacy form only MongoDB's own collections take.
	for i, zero := range []any{false, int32(0), int64(0), 0.0, bson.NewDecimal128(0x3040000000000000, 0)} {
		name := fmt.Sprintf("plain%d", i)
		if err := db.RunCommand(ctx, bson.D{{Key: "create", Value: name}, {Key: "clusteredIndex", Value: zero}}).Err(); err != nil {
			t.Fatalf("clusteredIndex: %v: %v", zero, err)
		}
		if specs, err := db.ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: name}}); err != nil || len(specs) != 1 || specs[0].IDIndex.Name != "_id_" {
			t.Errorf("clusteredIndex: %v made %+v (%v), want a collection with an _id index", zero, specs, err)
		}
	}
	for _, truthy := range []any{true, 1.0, int64(2)} {
		requireCode(t, db.RunCommand(ctx, bson.D{{Key: "create", Value: "legacy"}, {Key: "clusteredIndex", Value: truthy}}).Err(), 5979703, "")
	}
	requireCode(t, db.RunCommand(ctx, bson.D{{Key: "create", Value: "legacy"}, {Key: "clusteredIndex", Value: "x"}}).Err(), 14, "TypeMismatch")
	// without enableTestCommands a clustered collection cannot be capped,
	// checked before size
	err = db.RunCommand(ctx, bson.D{{Key: "create", Value: "capcl"}, {Key: "clusteredIndex", Value: bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "unique", Value: true}}}, {Key: "capped", Value: true}, {Key: "size", Value: 10}}).Err()
	requireError(t, err, 6127800, "Location6127800", "Clustered capped collection only available with 'enableTestCommands' server parameter")
}

// TestClusteredExplain: on a clustered collection a query by _id scans the
// documents in _id order, which explain calls CLUSTERED_IXSCAN, with the
// bounds it reads; other collections keep IDHACK and the _id index scan.
func TestClusteredExplain(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	if err := db.CreateCollection(ctx, "cluexp", options.CreateCollection().SetClusteredIndex(bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "unique", Value: true}})); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("plain").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	explain := func(coll string, filter bson.D) bson.Raw {
		t.Helper()
		reply, err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: coll}, {Key: "filter", Value: filter}}}, {Key: "verbosity", Value: "queryPlanner"}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		return reply.Lookup("queryPlanner", "winningPlan").Document()
	}
	rng := explain("cluexp", bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: 1}, {Key: "$lt", Value: 5}}}})
	if rng.Lookup("stage").StringValue() != "CLUSTERED_IXSCAN" || rng.Lookup("direction").StringValue() != "forward" ||
		rng.Lookup("minRecord").Int32() != 1 || rng.Lookup("maxRecord").Int32() != 5 {
		t.Errorf("range on a clustered collection: %s", rng)
	}
	if got := explain("cluexp", bson.D{{Key: "_id", Value: 3}}).Lookup("stage").StringValue(); got != "CLUSTERED_IXSCAN" {
		t.Errorf("point on a clustered collection: %s", got)
	}
	if got := explain("plain", bson.D{{Key: "_id", Value: 1}}).Lookup("stage").StringValue(); got != "IDHACK" {
		t.Errorf("point on a plain collection: %s", got)
	}
}

// TestCollModExpireAfterSeconds: collMod changes, and "off" removes, the
// expireAfterSeconds of a clustered or time series collection, which the
// TTL monitor then applies; other collections refuse it.
func TestCollModExpireAfterSeconds(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("collmodttl")
	run := func(cmd bson.D) error { return db.RunCommand(ctx, cmd).Err() }
	if err := run(bson.D{{Key: "create", Value: "cl"}, {Key: "clusteredIndex", Value: bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "unique", Value: true}}}, {Key: "expireAfterSeconds", Value: 3600}}); err != nil {
		t.Fatal(err)
	}
	if err := run(bson.D{{Key: "create", Value: "ts"}, {Key: "timeseries", Value: bson.D{{Key: "timeField", Value: "t"}}}}); err != nil {
		t.Fatal(err)
	}
	if err := run(bson.D{{Key: "create", Value: "plain"}}); err != nil {
		t.Fatal(err)
	}
	ttlOf := func(name string) any {
		t.Helper()
		specs, err := db.ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: name}})
		if err != nil || len(specs) != 1 {
			t.Fatalf("listCollections %s: %v %v", name, specs, err)
		}
		v, err := specs[0].Options.LookupErr("expireAfterSeconds")
		if err != nil {
			return nil
		}
		return v.AsInt64()
	}
	if err := run(bson.D{{Key: "collMod", Value: "cl"}, {Key: "expireAfterSeconds", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := run(bson.D{{Key: "collMod", Value: "ts"}, {Key: "expireAfterSeconds", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if ttlOf("cl") != int64(1) || ttlOf("ts") != int64(1) {
		t.Errorf("after collMod: clustered %v, time series %v", ttlOf("cl"), ttlOf("ts"))
	}
	requireCode(t, run(bson.D{{Key: "collMod", Value: "plain"}, {Key: "expireAfterSeconds", Value: 1}}), 72, "InvalidOptions")
	requireCode(t, run(bson.D{{Key: "collMod", Value: "ts"}, {Key: "validationLevel", Value: "off"}}), 72, "InvalidOptions")
	requireCode(t, run(bson.D{{Key: "collMod", Value: "cl"}, {Key: "expireAfterSeconds", Value: -1}}), 72, "InvalidOptions")
	// the IDL's variant<string, safeInt64>: another string is the
	// handler's InvalidOptions, another type the parser's TypeMismatch
	// (timeseries_expire_collmod.js)
	requireCode(t, run(bson.D{{Key: "collMod", Value: "ts"}, {Key: "expireAfterSeconds", Value: "10"}}), 72, "InvalidOptions")
	err := run(bson.D{{Key: "collMod", Value: "ts"}, {Key: "expireAfterSeconds", Value: bson.D{}}})
	requireCode(t, err, 14, "TypeMismatch")
	if want := "BSON field 'collMod.expireAfterSeconds' is the wrong type 'object', expected types '[string, long, int, decimal, double']"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("expireAfterSeconds {}: %v, want %q", err, want)
	}
	old := time.Now().Add(-time.Minute)
	if _, err := db.Collection("cl").InsertOne(ctx, bson.D{{Key: "_id", Value: old}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("ts").InsertOne(ctx, bson.D{{Key: "t", Value: old}}); err != nil {
		t.Fatal(err)
	}
	admin := client.Database("admin")
	if err := admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: "ttlMonitorSleepSecs", Value: 1}}).Err(); err != nil {
		t.Fatal(err)
	}
	defer admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: "ttlMonitorSleepSecs", Value: 60}})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		n1, _ := db.Collection("cl").CountDocuments(ctx, bson.D{})
		n2, _ := db.Collection("ts").CountDocuments(ctx, bson.D{})
		if n1 == 0 && n2 == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("expired documents stayed: clustered %d, time series %d", n1, n2)
		}
	}
	if err := run(bson.D{{Key: "collMod", Value: "cl"}, {Key: "expireAfterSeconds", Value: "off"}}); err != nil {
		t.Fatal(err)
	}
	if got := ttlOf("cl"); got != nil {
		t.Errorf("after off: %v", got)
	}
}

// TestClusteredIndexCounts: a clustered collection's index counts leave
// out its clustered index, which MongoDB's catalog does not hold
// (createIndexes' numIndexesBefore and numIndexesAfter, drop's
// nIndexesWas), and so do a time series collection's.
func TestClusteredIndexCounts(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database(testDB)
	ctx := t.Context()
	if err := db.RunCommand(ctx, bson.D{{Key: "create", Value: "cl"}, {Key: "clusteredIndex", Value: bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "unique", Value: true}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateCollection(ctx, "ts", options.CreateCollection().SetTimeSeriesOptions(options.TimeSeries().SetTimeField("t").SetMetaField("m"))); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		coll          string
		before, after int32
	}{{"cl", 0, 1}, {"ts", 1, 2}} {
		reply, err := runRaw(t, db, bson.D{{Key: "createIndexes", Value: tc.coll}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "m", Value: -1}}}, {Key: "name", Value: "m"}}}}})
		if err != nil {
			t.Fatal(err)
		}
		if b, a := reply.Lookup("numIndexesBefore").Int32(), reply.Lookup("numIndexesAfter").Int32(); b != tc.before || a != tc.after {
			t.Errorf("%s: numIndexesBefore %d, numIndexesAfter %d; want %d and %d", tc.coll, b, a, tc.before, tc.after)
		}
	}
	reply, err := runRaw(t, db, bson.D{{Key: "drop", Value: "cl"}})
	if err != nil {
		t.Fatal(err)
	}
	if n := reply.Lookup("nIndexesWas").Int32(); n != 1 {
		t.Errorf("drop of the clustered collection: nIndexesWas %d, want 1", n)
	}
	// A time series collection's drop counts its buckets' indexes (the
	// default one on m and t, and m) and names the collection, as a
	// view's drop does.
	if err := db.RunCommand(ctx, bson.D{{Key: "create", Value: "v"}, {Key: "viewOn", Value: "cl"}, {Key: "pipeline", Value: bson.A{}}}).Err(); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"ts": `{"nIndexesWas": {"$numberInt":"2"},"ns": "` + testDB + `.ts","ok": {"$numberDouble":"1.0"}}`,
		"v":  `{"ns": "` + testDB + `.v","ok": {"$numberDouble":"1.0"}}`,
	} {
		reply, err := runRaw(t, db, bson.D{{Key: "drop", Value: name}})
		if err != nil {
			t.Fatal(err)
		}
		if got := withoutClusterTime(t, reply).String(); got != want {
			t.Errorf("drop of %s: %s, want %s", name, got, want)
		}
	}
}

// TestDropClusteredIndex: a dropIndexes naming a clustered collection's
// clustered index, by its name (alone or in a list) or its key, fails
// with 5979800 (MongoDB's containsClusteredIndex); the name _id_ is no
// index of a collection clustered under another name.
func TestDropClusteredIndex(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database(testDB)
	ctx := t.Context()
	clustered := bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "unique", Value: true}, {Key: "name", Value: "byid"}}
	if err := db.RunCommand(ctx, bson.D{{Key: "create", Value: "cl"}, {Key: "clusteredIndex", Value: clustered}}).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("cl").Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	for _, index := range []any{"byid", bson.A{"a_1", "byid"}, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 1.0}}} {
		err := db.RunCommand(ctx, bson.D{{Key: "dropIndexes", Value: "cl"}, {Key: "index", Value: index}}).Err()
		if serverCode(err) != 5979800 || errMsg(err) != "It is illegal to drop the clusteredIndex" {
			t.Errorf("dropIndexes %v: %v, want 5979800", index, err)
		}
	}
	err := db.RunCommand(ctx, bson.D{{Key: "dropIndexes", Value: "cl"}, {Key: "index", Value: "_id_"}}).Err()
	requireCode(t, err, 27, "IndexNotFound")
	if n := countIndexes(t, db.Collection("cl")); n != 2 {
		t.Fatalf("%d indexes listed, want the clustered one and a_1", n)
	}
}

// TestCreateIndexesClustered: on a clustered collection an index of the
// cluster key, with or without the clustered option and whatever its name,
// is the clustered index, which exists (MongoDB's
// isSpecOKClusteredIndexCheck answers IndexAlreadyExists); the option on
// another key fails with 6243700, another key under the clustered index's
// name with 6100906, and the option cannot create the collection (6100900).
func TestCreateIndexesClustered(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database(testDB)
	ctx := t.Context()
	createIndexes := func(specs ...bson.D) (bson.Raw, error) {
		indexes := bson.A{}
		for _, s := range specs {
			indexes = append(indexes, s)
		}
		return db.RunCommand(ctx, bson.D{{Key: "createIndexes", Value: "cl"}, {Key: "indexes", Value: indexes}}).Raw()
	}
	idKey := bson.D{{Key: "_id", Value: 1}}
	clusteredSpec := bson.D{{Key: "key", Value: idKey}, {Key: "name", Value: "_id_"}, {Key: "clustered", Value: true}, {Key: "unique", Value: true}}
	_, err := createIndexes(clusteredSpec)
	requireCode(t, err, 6100900, "Location6100900")
	clustered := bson.D{{Key: "key", Value: idKey}, {Key: "unique", Value: true}, {Key: "name", Value: "theClusterKeyName"}}
	if err := db.RunCommand(ctx, bson.D{{Key: "create", Value: "cl"}, {Key: "clusteredIndex", Value: clustered}}).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("cl").InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 2}}}); err != nil {
		t.Fatal(err)
	}
	for _, spec := range []bson.D{
		clusteredSpec,
		{{Key: "key", Value: idKey}, {Key: "name", Value: "notTheClusterKeyName"}},
		{{Key: "key", Value: bson.D{{Key: "_id", Value: 1.0}}}, {Key: "name", Value: "theClusterKeyName"}, {Key: "clustered", Value: 1}, {Key: "unique", Value: true}},
	} {
		reply, err := createIndexes(spec)
		if err != nil {
			t.Fatalf("%v: %v", spec, err)
		}
		if note, _ := reply.Lookup("note").StringValueOK(); note != "all indexes already exist" || reply.Lookup("numIndexesAfter").Int32() != 0 {
			t.Errorf("%v: %s, want the clustered index already there", spec, reply)
		}
	}
	_, err = createIndexes(clusteredSpec, bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "a_1"}, {Key: "clustered", Value: true}, {Key: "unique", Value: true}})
	requireError(t, err, 6243700, "Location6243700", "Cannot create index with option 'clustered' that does not match an existing clustered index")
	_, err = createIndexes(bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "theClusterKeyName"}})
	requireError(t, err, 6100906, "Location6100906", `Cannot create an index where the name matches the clusteredIndex but the key does not - indexSpec: { key: { a: 1 }, name: "theClusterKeyName", v: 2 }, clusteredIndex: { v: 2, key: { _id: 1 }, name: "theClusterKeyName", unique: true }`)
	_, err = createIndexes(bson.D{{Key: "key", Value: idKey}, {Key: "name", Value: "x"}, {Key: "v", Value: 1}})
	requireCode(t, err, 6100908, "Location6100908")
	if n := countIndexes(t, db.Collection("cl")); n != 1 {
		t.Fatalf("%d indexes listed, want the clustered one alone", n)
	}
}

// TestClusteredHintAndKeyRange: a clustered collection's clustered index is
// hinted by its name (not _id_, which names no index there) or key; with
// that hint min and max follow MongoDB's handleClusteredScanHint: bounds
// the query's collation cannot compare as the collection's fail with
// 6137400, and a min not below max with 6137401. listIndexes shows the
// collection's collation on the clustered index.
func TestClusteredHintAndKeyRange(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database(testDB)
	ctx := t.Context()
	clustered := bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "unique", Value: true}, {Key: "name", Value: "byId"}}
	en := bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: 2}}
	if err := db.RunCommand(ctx, bson.D{{Key: "create", Value: "cl"}, {Key: "clusteredIndex", Value: clustered}, {Key: "collation", Value: en}}).Err(); err != nil {
		t.Fatal(err)
	}
	coll := db.Collection("cl")
	if _, err := coll.InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 5}}, bson.D{{Key: "_id", Value: 10}}, bson.D{{Key: "_id", Value: "a"}}, bson.D{{Key: "_id", Value: "b"}}}); err != nil {
		t.Fatal(err)
	}
	find := func(extra ...bson.E) ([]bson.Raw, error) {
		cmd := append(bson.D{{Key: "find", Value: "cl"}}, extra...)
		var reply struct {
			Cursor struct {
				FirstBatch []bson.Raw `bson:"firstBatch"`
			} `bson:"cursor"`
		}
		err := db.RunCommand(ctx, cmd).Decode(&reply)
		return reply.Cursor.FirstBatch, err
	}
	if docs, err := find(bson.E{Key: "hint", Value: "byId"}); err != nil || len(docs) != 4 {
		t.Fatalf("hint by the clustered index's name: %d documents, %v", len(docs), err)
	}
	_, err := find(bson.E{Key: "hint", Value: "_id_"})
	requireCode(t, err, 2, "BadValue")
	idHint := bson.E{Key: "hint", Value: bson.D{{Key: "_id", Value: 1}}}
	minOf := func(v any) bson.E { return bson.E{Key: "min", Value: bson.D{{Key: "_id", Value: v}}} }
	maxOf := func(v any) bson.E { return bson.E{Key: "max", Value: bson.D{{Key: "_id", Value: v}}} }
	if docs, err := find(idHint, minOf(5), maxOf(11)); err != nil || len(docs) != 2 {
		t.Fatalf("min 5 max 11: %d documents, %v", len(docs), err)
	}
	// "a" and "B" compare under the collection's collation
	if docs, err := find(idHint, minOf("a"), maxOf("C")); err != nil || len(docs) != 2 {
		t.Fatalf("min a max C: %d documents, %v", len(docs), err)
	}
	// the bounded scan's explain shows the bounds' _id values
	for _, tc := range []struct {
		bounds []bson.E
		want   string
	}{
		{[]bson.E{minOf(101), maxOf(bson.MaxKey{})}, `{"minRecord": {"$numberInt":"101"},"maxRecord": {"$maxKey":1}}`},
		{[]bson.E{minOf(bson.MinKey{}), maxOf(-2)}, `{"minRecord": {"$minKey":1},"maxRecord": {"$numberInt":"-2"}}`},
		{[]bson.E{minOf(7)}, `{"minRecord": {"$numberInt":"7"}}`},
	} {
		var out bson.Raw
		cmd := append(bson.D{{Key: "find", Value: "cl"}, idHint}, tc.bounds...)
		if err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: cmd}}).Decode(&out); err != nil {
			t.Fatal(err)
		}
		plan := out.Lookup("queryPlanner", "winningPlan").Document()
		got := bson.D{}
		for _, k := range []string{"minRecord", "maxRecord"} {
			if v := plan.Lookup(k); v.Type != 0 {
				got = append(got, bson.E{Key: k, Value: v})
			}
		}
		if g, _ := bson.Marshal(got); plan.Lookup("stage").StringValue() != "CLUSTERED_IXSCAN" || bson.Raw(g).String() != tc.want {
			t.Errorf("explain of %v: %s, want CLUSTERED_IXSCAN with %s", tc.bounds, plan, tc.want)
		}
	}
	_, err = find(idHint, minOf(5), maxOf(5))
	requireError(t, err, 6137401, "Location6137401", "max() must be greater than min()")
	_, err = find(idHint, minOf("a"), maxOf("C"), bson.E{Key: "collation", Value: bson.D{{Key: "locale", Value: "fr_CA"}}})
	requireError(t, err, 6137400, "Location6137400", "The clustered index is not compatible with the values provided for min/max due to the query collation")
	cur, err := coll.Indexes().List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var idx []bson.Raw
	if err := cur.All(ctx, &idx); err != nil {
		t.Fatal(err)
	}
	if len(idx) != 1 || idx[0].Lookup("collation", "locale").StringValue() != "en" || idx[0].Lookup("collation", "strength").AsInt64() != 2 {
		t.Fatalf("listIndexes: %v, want the clustered index with the collection's collation", idx)
	}
	var keys []string
	elems, _ := idx[0].Elements()
	for _, e := range elems {
		keys = append(keys, e.Key())
	}
	if got := strings.Join(keys, ","); got != "v,key,name,unique,collation,clustered" {
		t.Errorf("listIndexes fields %s", got)
	}
}

// TestClusteredNaturalBounds: a clustered collection's natural order is
// its _id order, so a $natural hint or sort scans the filter's _id range
// alone, a CLUSTERED_IXSCAN in the direction asked (MongoDB's
// buildCollscanSoln, clustered_collection_hint_common.js); a resumed scan
// keeps those bounds.
func TestClusteredNaturalBounds(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database(testDB)
	ctx := t.Context()
	clustered := bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "unique", Value: true}}
	if err := db.RunCommand(ctx, bson.D{{Key: "create", Value: "cl"}, {Key: "clusteredIndex", Value: clustered}}).Err(); err != nil {
		t.Fatal(err)
	}
	var docs []any
	for i := range 20 {
		docs = append(docs, bson.D{{Key: "_id", Value: i}})
	}
	if _, err := db.Collection("cl").InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	var out bson.Raw
	explain := bson.D{{Key: "delete", Value: "cl"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 12}}}, {Key: "limit", Value: 0}, {Key: "hint", Value: bson.D{{Key: "$natural", Value: -1}}}}}}}
	if err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: explain}}).Decode(&out); err != nil {
		t.Fatal(err)
	}
	scan := out.Lookup("queryPlanner", "winningPlan", "inputStage").Document()
	if scan.Lookup("stage").StringValue() != "CLUSTERED_IXSCAN" || scan.Lookup("direction").StringValue() != "backward" ||
		scan.Lookup("minRecord").AsInt64() != 12 || scan.Lookup("maxRecord").AsInt64() != 12 {
		t.Errorf("explain of a delete hinted $natural: -1: %s", out.Lookup("queryPlanner", "winningPlan"))
	}
	natural := func(cmd bson.D) ([]bson.Raw, bson.Raw) {
		var reply struct {
			Cursor struct {
				FirstBatch []bson.Raw `bson:"firstBatch"`
				Token      bson.Raw   `bson:"postBatchResumeToken"`
			} `bson:"cursor"`
		}
		if err := db.RunCommand(ctx, cmd).Decode(&reply); err != nil {
			t.Fatal(err)
		}
		return reply.Cursor.FirstBatch, reply.Cursor.Token
	}
	below := bson.E{Key: "filter", Value: bson.D{{Key: "_id", Value: bson.D{{Key: "$lt", Value: 5}}}}}
	got, _ := natural(bson.D{{Key: "find", Value: "cl"}, below, {Key: "sort", Value: bson.D{{Key: "$natural", Value: -1}}}})
	if len(got) != 5 || got[0].Lookup("_id").AsInt64() != 4 {
		t.Errorf("$natural: -1 sort of _id < 5: %v", got)
	}
	hint := bson.E{Key: "hint", Value: bson.D{{Key: "$natural", Value: 1}}}
	first, token := natural(bson.D{{Key: "find", Value: "cl"}, below, hint, {Key: "$_requestResumeToken", Value: true}, {Key: "batchSize", Value: 2}})
	rest, _ := natural(bson.D{{Key: "find", Value: "cl"}, below, hint, {Key: "$_requestResumeToken", Value: true}, {Key: "$_resumeAfter", Value: token}})
	if len(first) != 2 || len(rest) != 3 || rest[2].Lookup("_id").AsInt64() != 4 {
		t.Errorf("resumed scan of _id < 5: %v then %v", first, rest)
	}
}
