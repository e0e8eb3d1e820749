package driver_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestDiskFull checks Folio's disk reserve (MongoDB has no equivalent
// option; its write fails with OutOfDiskSpace, 14031, when the disk fills):
// with the free space reported below the reserve, an insert into a
// collection with two secondary indexes fails with 14031 and leaves neither
// the document nor an index entry, as does a transaction's commit, reads go
// on, and writes resume once
// space returns, without a restart.
func TestDiskFull(t *testing.T) {
	const reserve = 64 << 20
	var free atomic.Uint64
	free.Store(1 << 30)
	cfg := defaultConfig()
	cfg.InMemory = false
	cfg.ReplSetName = "folio" // transactions
	cfg.DBPath = t.TempDir()
	cfg.DiskReserve = reserve
	cfg.FreeSpace = func(string) (uint64, error) { return free.Load(), nil }
	client := connect(t, startInstance(t, cfg))
	ctx := context.Background()
	coll := client.Database(testDB).Collection("diskfull")
	if _, err := coll.Indexes().CreateMany(ctx, []mongo.IndexModel{
		{Keys: bson.D{{Key: "a", Value: 1}}},
		{Keys: bson.D{{Key: "b", Value: 1}}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 0}, {Key: "a", Value: 0}, {Key: "b", Value: 0}}); err != nil {
		t.Fatal(err)
	}

	free.Store(reserve - 1)
	// The server rereads the free space every 250 ms; probe a scratch
	// collection until it refuses.
	probe := client.Database(testDB).Collection("probe")
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := probe.InsertOne(ctx, bson.D{})
		if err != nil {
			if code := serverCode(err); code != 14031 {
				t.Fatalf("probe insert: %v (code %d), want 14031", err, code)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("writes never refused below the reserve")
		}
		time.Sleep(20 * time.Millisecond)
	}

	_, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}, {Key: "b", Value: 1}})
	requireCode(t, err, 14031, "OutOfDiskSpace")
	if n, err := coll.CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
		t.Fatalf("read below the reserve: %d, %v; want 1", n, err)
	}

	// A transaction's writes are staged in memory; its commit is refused
	// and writes nothing.
	sess, err := client.StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(ctx)
	if err := sess.StartTransaction(); err != nil {
		t.Fatal(err)
	}
	sctx := mongo.NewSessionContext(ctx, sess)
	if _, err := coll.InsertOne(sctx, bson.D{{Key: "_id", Value: 2}, {Key: "a", Value: 1}, {Key: "b", Value: 1}}); err != nil {
		t.Fatalf("insert in a transaction: %v", err)
	}
	requireCode(t, sess.CommitTransaction(ctx), 14031, "OutOfDiskSpace")

	// Room above the reserve for the writes that follow.
	free.Store(reserve + 1<<20)
	if n, err := coll.CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
		t.Fatalf("after the refused writes: %d documents, %v; want 1", n, err)
	}
	for _, ix := range []string{"a_1", "b_1"} {
		n, err := coll.CountDocuments(ctx, bson.D{{Key: ix[:1], Value: 1}}, options.Count().SetHint(ix))
		if err != nil || n != 0 {
			t.Errorf("refused insert through index %s: %d, %v; want 0", ix, n, err)
		}
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}, {Key: "b", Value: 1}}); err != nil {
		t.Fatalf("insert once space returned: %v", err)
	}
	if n, err := coll.CountDocuments(ctx, bson.D{{Key: "a", Value: 1}}, options.Count().SetHint("a_1")); err != nil || n != 1 {
		t.Errorf("insert once space returned, through a_1: %d, %v; want 1", n, err)
	}
}
