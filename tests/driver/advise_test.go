package driver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/internal/instance"
	"github.com/folio-db/folio/internal/storage/testkv"
)

// TestAdvise runs, through the driver, workloads that show the advisor's
// findings beside ones that must not (a bounded array, an anchored regex,
// an indexed $lookup, a used index, shallow pages), and reads
// folioAdvise's answer.
func TestAdvise(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("advise")
	hosts, tree, orders := db.Collection("hosts"), db.Collection("tree"), db.Collection("orders")
	for _, c := range []*mongo.Collection{hosts, tree, orders, db.Collection("users"), db.Collection("items")} {
		var docs []any
		for i := range 300 {
			docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "path", Value: fmt.Sprintf(",r,%d,", i%7)}, {Key: "uid", Value: i % 10}, {Key: "sku", Value: i % 10}, {Key: "when", Value: i}})
		}
		if _, err := c.InsertMany(ctx, docs); err != nil {
			t.Fatal(err)
		}
	}
	for _, ix := range []struct {
		c   *mongo.Collection
		key string
	}{{tree, "path"}, {db.Collection("items"), "sku"}, {orders, "never"}, {orders, "when"}} {
		if _, err := ix.c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: ix.key, Value: 1}}}); err != nil {
			t.Fatal(err)
		}
	}
	all := func(cur *mongo.Cursor, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if err := cur.All(ctx, new([]bson.Raw)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 150 {
		// samples grows without bound, recent is capped with $slice
		if _, err := hosts.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$push", Value: bson.D{
			{Key: "samples", Value: i},
			{Key: "recent", Value: bson.D{{Key: "$each", Value: bson.A{i}}, {Key: "$slice", Value: -5}}}}}}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 15 {
		all(tree.Find(ctx, bson.D{{Key: "path", Value: bson.Regex{Pattern: ",3,"}}}))
		all(tree.Find(ctx, bson.D{{Key: "path", Value: bson.Regex{Pattern: "^,r,2"}}}))
		all(orders.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "when", Value: 1}}).SetSkip(int64(100+i*10)).SetLimit(5)))
		all(orders.Find(ctx, bson.D{{Key: "uid", Value: 3}}, options.Find().SetSort(bson.D{{Key: "when", Value: 1}}).SetSkip(5000).SetLimit(5)))
		all(orders.Aggregate(ctx, mongo.Pipeline{{{Key: "$match", Value: bson.D{{Key: "_id", Value: i}}}},
			{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "users"}, {Key: "localField", Value: "uid"}, {Key: "foreignField", Value: "uid"}, {Key: "as", Value: "u"}}}},
			{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "items"}, {Key: "localField", Value: "sku"}, {Key: "foreignField", Value: "sku"}, {Key: "as", Value: "s"}}}}}))
	}
	// a 2 MiB document among small ones, inserted and deleted since: the
	// sizes of inserts say what the sample no longer shows
	big := bson.D{{Key: "_id", Value: "big"}, {Key: "b", Value: bson.Binary{Data: make([]byte, 2<<20)}}}
	if _, err := db.Collection("users").InsertMany(ctx, []any{big, bson.D{{Key: "_id", Value: "small"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("users").DeleteOne(ctx, bson.D{{Key: "_id", Value: "big"}}); err != nil {
		t.Fatal(err)
	}
	raw, err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "folioAdvise", Value: 1}, {Key: "db", Value: "advise"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	vals, _ := raw.Lookup("findings").Array().Values()
	for _, v := range vals {
		f := v.Document()
		field, _ := f.Lookup("field").StringValueOK()
		found = append(found, f.Lookup("kind").StringValue()+" "+f.Lookup("ns").StringValue()+" "+field)
	}
	got := strings.Join(found, "; ")
	for _, want := range []string{"unbounded-array advise.hosts samples", "unanchored-regex advise.tree path",
		"lookup-without-index advise.orders advise.users.uid", "unused-index advise.orders never_1", "skip-paging advise.orders",
		"missing-index advise.orders", "large-document advise.users"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in %s", want, got)
		}
	}
	for _, not := range []string{"recent", "advise.items.sku", "when_1", "missing-index advise.tree"} {
		if strings.Contains(got, not) {
			t.Errorf("a finding on %s: %s", not, got)
		}
	}
}

// TestAdviseSurvivesRestart: the observations are saved at shutdown and
// loaded at startup, so the findings stay across a restart.
func TestAdviseSurvivesRestart(t *testing.T) {
	testkv.SkipOnTiKV(t, "the test restarts a server on its Pebble data directory")
	cfg := instance.Config{Addr: "127.0.0.1:0", DBPath: t.TempDir()}
	first, err := instance.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	client := dial(t, first)
	coll := client.Database("advrestart").Collection("c")
	var docs []any
	for i := range 300 {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "k", Value: i % 30}})
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		if got := findAll(t, coll, bson.D{{Key: "k", Value: i}}); len(got) != 10 {
			t.Fatal(len(got))
		}
	}
	client.Disconnect(ctx)
	second := restart(t, first, cfg)
	raw, err := dial(t, second).Database("admin").RunCommand(ctx, bson.D{{Key: "folioAdvise", Value: 1}, {Key: "db", Value: "advrestart"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(raw.Lookup("findings").String(), `"missing-index"`) {
		t.Errorf("after a restart: %s", raw)
	}
	// Saving them is not logged in the oplog.
	client = dial(t, second)
	defer client.Disconnect(ctx)
	oplog := client.Database("local").Collection("oplog.rs")
	if logged := findAll(t, oplog, bson.D{{Key: "ns", Value: "advrestart.c"}}); len(logged) == 0 {
		t.Fatal("the inserts are not in the oplog")
	}
	if logged := findAll(t, oplog, bson.D{{Key: "ns", Value: bson.D{{Key: "$regex", Value: `system\.advise`}}}}); len(logged) != 0 {
		t.Errorf("%d oplog entries of the advisor's collection", len(logged))
	}
	// They are in local.system.advise, the server's own as MongoDB's
	// local.system.* collections: listed, read, never in admin (which a
	// whole-server mongodump takes), and no client's to create, write or
	// drop.
	saved := findAll(t, client.Database("local").Collection("system.advise"), bson.D{})
	if len(saved) != 1 || saved[0].Lookup("_id").StringValue() != "local" {
		t.Errorf("local.system.advise: %v", saved)
	}
	for db, want := range map[string]bool{"local": true, "admin": false} {
		names, err := client.Database(db).ListCollectionNames(ctx, bson.D{{Key: "name", Value: "system.advise"}})
		if err != nil || len(names) == 1 != want {
			t.Errorf("%s listCollections: %v %v", db, names, err)
		}
	}
	own := client.Database("local").Collection("system.advise")
	const invalid = "Invalid system namespace: local.system.advise"
	requireMessage := func(t *testing.T, err error, code int, msg string) {
		t.Helper()
		requireCode(t, err, code, "")
		if !strings.Contains(err.Error(), msg) {
			t.Errorf("got %v, want %q", err, msg)
		}
	}
	_, err = own.InsertOne(ctx, bson.D{{Key: "x", Value: 1}})
	requireMessage(t, err, 73, invalid)
	_, err = own.UpdateOne(ctx, bson.D{{Key: "_id", Value: "local"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}})
	requireMessage(t, err, 73, invalid)
	_, err = own.DeleteOne(ctx, bson.D{{Key: "_id", Value: "local"}})
	requireMessage(t, err, 73, invalid)
	requireMessage(t, client.Database("local").RunCommand(ctx, bson.D{{Key: "create", Value: "system.advise"}}).Err(), 73, invalid)
	_, err = own.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "x", Value: 1}}})
	requireMessage(t, err, 73, invalid)
	requireMessage(t, client.Database("admin").RunCommand(ctx, bson.D{{Key: "create", Value: "system.advise"}}).Err(), 73, "Invalid system namespace: admin.system.advise")
	requireCode(t, own.Drop(ctx), 20, "IllegalOperation")
}

// TestAdviseNeedsClusterMonitor: under access control, folioAdvise needs
// clusterMonitor (or any role granting serverStatus).
func TestAdviseNeedsClusterMonitor(t *testing.T) {
	root, in := startAuthServer(t)
	ctx := context.Background()
	admin := root.Database("admin")
	mustRunRaw(t, admin, bson.D{{Key: "createUser", Value: "mon"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{"clusterMonitor"}}})
	mustRunRaw(t, admin, bson.D{{Key: "createUser", Value: "app"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{"readWriteAnyDatabase"}}})
	advise := bson.D{{Key: "folioAdvise", Value: 1}}
	if err := connectAs(t, in, "mon", "pw", "admin", "").Database("admin").RunCommand(ctx, advise).Err(); err != nil {
		t.Errorf("clusterMonitor: %v", err)
	}
	err := connectAs(t, in, "app", "pw", "admin", "").Database("admin").RunCommand(ctx, advise).Err()
	requireCode(t, err, 13, "Unauthorized")
}
