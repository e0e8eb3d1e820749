package driver_test

import (
	"context"
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/folio-db/folio/internal/storage/testkv"
)

// TestSizesBeforeFlush checks that the sizes MongoDB reports from its
// files (listDatabases' sizeOnDisk, dbStats', collStats' and $collStats'
// storage sizes) count a fresh server's data at once, as WiredTiger's do,
// although Pebble has not flushed it to tables yet: `show dbs` must not
// say 0 B after an insert. A dropped collection's sizes leave dbStats and
// listDatabases with it.
func TestSizesBeforeFlush(t *testing.T) {
	testkv.SkipOnTiKV(t, "TiKV does not estimate disk usage")
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("sizes")
	for _, name := range []string{"a", "b"} {
		var docs []any
		for i := range 200 {
			docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "x", Value: i}, {Key: "s", Value: fmt.Sprintf("document %d of %s", i, name)}})
		}
		if _, err := db.Collection(name).InsertMany(ctx, docs); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Collection(name).Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "x", Value: 1}}}); err != nil {
			t.Fatal(err)
		}
	}
	num := func(doc bson.Raw, path ...string) float64 {
		t.Helper()
		v, err := doc.LookupErr(path...)
		if err != nil {
			t.Fatalf("%v: %v in %s", path, err, doc)
		}
		f, ok := v.AsFloat64OK()
		if !ok {
			t.Fatalf("%v: not a number: %v", path, v)
		}
		return f
	}
	positive := func(what string, doc bson.Raw, paths ...[]string) {
		t.Helper()
		for _, p := range paths {
			if n := num(doc, p...); n <= 0 {
				t.Errorf("%s %v = %v, want > 0", what, p, n)
			}
		}
	}
	sizeOnDisk := func() (float64, bool) {
		t.Helper()
		dbs := replyOf(t, client, "admin", bson.D{{Key: "listDatabases", Value: 1}}).Lookup("databases").Array()
		vals, _ := dbs.Values()
		for _, v := range vals {
			if d := v.Document(); d.Lookup("name").StringValue() == "sizes" {
				return num(d, "sizeOnDisk"), true
			}
		}
		return 0, false
	}

	before, ok := sizeOnDisk()
	if !ok || before <= 0 {
		t.Errorf("listDatabases: sizeOnDisk %v (listed: %v)", before, ok)
	}
	dbStats := replyOf(t, client, "sizes", bson.D{{Key: "dbStats", Value: 1}})
	positive("dbStats", dbStats, []string{"storageSize"}, []string{"indexSize"}, []string{"totalSize"})
	collStats := func(name string) bson.Raw {
		return replyOf(t, client, "sizes", bson.D{{Key: "collStats", Value: name}})
	}
	for _, name := range []string{"a", "b"} {
		positive("collStats "+name, collStats(name), []string{"storageSize"}, []string{"totalIndexSize"},
			[]string{"indexSizes", "_id_"}, []string{"indexSizes", "x_1"}, []string{"totalSize"})
	}
	cur, err := db.Collection("a").Aggregate(ctx, bson.A{bson.D{{Key: "$collStats", Value: bson.D{{Key: "storageStats", Value: bson.D{}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	var agg []bson.Raw
	if err := cur.All(ctx, &agg); err != nil || len(agg) != 1 {
		t.Fatalf("$collStats: %v, %d documents", err, len(agg))
	}
	positive("$collStats", agg[0], []string{"storageStats", "storageSize"}, []string{"storageStats", "totalIndexSize"},
		[]string{"storageStats", "indexSizes", "_id_"}, []string{"storageStats", "indexSizes", "x_1"}, []string{"storageStats", "totalSize"})

	// Dropping a leaves b's figures alone in dbStats.
	if err := db.Collection("a").Drop(ctx); err != nil {
		t.Fatal(err)
	}
	b := collStats("b")
	dbStats = replyOf(t, client, "sizes", bson.D{{Key: "dbStats", Value: 1}})
	for _, c := range [][2]string{{"storageSize", "storageSize"}, {"indexSize", "totalIndexSize"}, {"totalSize", "totalSize"}} {
		if got, want := num(dbStats, c[0]), num(b, c[1]); got != want {
			t.Errorf("dbStats %s %v after dropping a, want b's %s %v", c[0], got, c[1], want)
		}
	}
	if after, _ := sizeOnDisk(); after <= 0 || after >= before {
		t.Errorf("listDatabases: sizeOnDisk %v after dropping a, %v before", after, before)
	}

	// Dropping b leaves nothing.
	if err := db.Collection("b").Drop(ctx); err != nil {
		t.Fatal(err)
	}
	dbStats = replyOf(t, client, "sizes", bson.D{{Key: "dbStats", Value: 1}})
	for _, f := range []string{"storageSize", "indexSize", "totalSize"} {
		if n := num(dbStats, f); n != 0 {
			t.Errorf("dbStats %s %v after dropping every collection", f, n)
		}
	}
	if size, listed := sizeOnDisk(); listed {
		t.Errorf("listDatabases still lists the dropped database, sizeOnDisk %v", size)
	}
}
