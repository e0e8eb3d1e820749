package driver_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/folio-db/folio/internal/instance"
	"github.com/folio-db/folio/internal/storage/testkv"
)

// TestMaintenanceCommands: dbHash is the same before and after a restart
// and changes with a write; dataSize counts the documents' bytes; fsync,
// compact and connPoolStats answer in MongoDB's shapes.
func TestMaintenanceCommands(t *testing.T) {
	testkv.SkipOnTiKV(t, "the test restarts a server on its Pebble data directory")
	ctx := context.Background()
	cfg := defaultConfig()
	cfg.InMemory, cfg.DBPath = false, t.TempDir()
	first, err := instance.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	client := dial(t, first)
	db := client.Database("maint")
	coll := db.Collection("c")
	var docs []any
	var size int64
	for i := range 100 {
		d := bson.D{{Key: "_id", Value: int32(i)}, {Key: "s", Value: "some text"}}
		raw, _ := bson.Marshal(d)
		size += int64(len(raw))
		docs = append(docs, d)
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	hash := func() bson.Raw {
		t.Helper()
		reply, err := db.RunCommand(ctx, bson.D{{Key: "dbHash", Value: 1}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		return reply
	}
	before := hash()
	ds, err := db.RunCommand(ctx, bson.D{{Key: "dataSize", Value: "maint.c"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if ds.Lookup("size").AsInt64() != size || ds.Lookup("numObjects").AsInt64() != 100 {
		t.Errorf("dataSize %s, want size %d and 100 objects", ds, size)
	}
	if r, err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "fsync", Value: 1}}).Raw(); err != nil || r.Lookup("numFiles").Int32() != 1 {
		t.Errorf("fsync: %v %v", r, err)
	}
	if r, err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "connPoolStats", Value: 1}}).Raw(); err != nil || r.Lookup("totalInUse").Int32() != 0 {
		t.Errorf("connPoolStats: %v %v", r, err)
	}
	client.Disconnect(ctx)
	if err := first.Close(ctx); err != nil {
		t.Fatal(err)
	}
	client = connect(t, startInstance(t, cfg))
	db = client.Database("maint")
	after := hash()
	if before.Lookup("md5").StringValue() != after.Lookup("md5").StringValue() || before.Lookup("collections", "c").StringValue() != after.Lookup("collections", "c").StringValue() {
		t.Errorf("dbHash changed across a restart:\n%s\n%s", before, after)
	}
	if _, err := db.Collection("c").DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$lt", Value: 50}}}}); err != nil {
		t.Fatal(err)
	}
	if changed := hash(); changed.Lookup("collections", "c").StringValue() == before.Lookup("collections", "c").StringValue() {
		t.Errorf("dbHash did not change with a write: %s", changed)
	}
	r, err := db.RunCommand(ctx, bson.D{{Key: "compact", Value: "c"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Lookup("bytesFreed").AsInt64OK(); !ok {
		t.Errorf("compact: %s", r)
	}
	requireCode(t, db.RunCommand(ctx, bson.D{{Key: "compact", Value: "missing"}}).Err(), 26, "NamespaceNotFound")
	requireCode(t, client.Database("admin").RunCommand(ctx, bson.D{{Key: "fsync", Value: 1}, {Key: "lock", Value: true}}).Err(), 238, "NotImplemented")
}

// TestSlowOperationLog: profile sets slowms and sampleRate and answers the
// previous ones; with slowms 0 every command is logged as "Slow query"
// with its namespace and duration (getLog shows it).
func TestSlowOperationLog(t *testing.T) {
	cfg := defaultConfig()
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil)) // getLog keeps what is logged at info
	client := connect(t, startInstance(t, cfg))
	ctx := context.Background()
	db := client.Database("slow")
	prev, err := db.RunCommand(ctx, bson.D{{Key: "profile", Value: 0}, {Key: "slowms", Value: 0}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if prev.Lookup("was").Int32() != 0 || prev.Lookup("slowms").Int32() != 100 || prev.Lookup("sampleRate").Double() != 1 {
		t.Errorf("profile answered %s", prev)
	}
	if _, err := db.Collection("marker_coll").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := db.Collection("marker_coll").FindOne(ctx, bson.D{{Key: "x", Value: 1}}).Err(); err != mongo.ErrNoDocuments {
		t.Fatal(err)
	}
	log, err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "getLog", Value: "global"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	lines, _ := log.Lookup("log").Array().Values()
	found, foundFind := false, false
	for _, l := range lines {
		s := l.StringValue()
		if !strings.Contains(s, "Slow query") || !strings.Contains(s, "slow.marker_coll") || !strings.Contains(s, "durationMillis") {
			continue
		}
		found = found || strings.Contains(s, `"ninserted":1`)
		foundFind = foundFind || strings.Contains(s, `"planSummary":"COLLSCAN","keysExamined":0,"docsExamined":1,"cursorExhausted":true,"nreturned":0`)
	}
	if !found || !foundFind {
		t.Errorf("no slow query line for the insert (%v) or the find (%v) in %d log lines: %v", found, foundFind, len(lines), lines)
	}
	now, err := db.RunCommand(ctx, bson.D{{Key: "profile", Value: -1}, {Key: "slowms", Value: 100}}).Raw()
	if err != nil || now.Lookup("slowms").Int32() != 0 {
		t.Errorf("profile -1 answered %s %v", now, err)
	}
}
