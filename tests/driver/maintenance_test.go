package driver_test

import (
	"context"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

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
}

// TestFsyncLock: fsync with lock: true counts its locks; while one is
// held, writes wait (currentOp shows fsyncLock) and reads go on; a write
// past its maxTimeMS fails with MaxTimeMSExpired; the write completes once
// every lock is released; one fsyncUnlock too many is IllegalOperation.
func TestFsyncLock(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	admin := client.Database("admin")
	coll := client.Database(testDB).Collection("fsynclock")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 0}}); err != nil {
		t.Fatal(err)
	}
	cmd := func(c bson.D) bson.Raw {
		t.Helper()
		raw, err := admin.RunCommand(ctx, c).Raw()
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	for want := int64(1); want <= 2; want++ {
		if got := cmd(bson.D{{Key: "fsync", Value: 1}, {Key: "lock", Value: true}}); got.Lookup("lockCount").Int64() != want || got.Lookup("info").StringValue() == "" {
			t.Fatalf("fsync lock %d answered %s", want, got)
		}
	}
	// after inprog, the lock and how to release it (CurrentOpCommand's
	// appendToResponse)
	if got := keysOf(t, cmd(bson.D{{Key: "currentOp", Value: 1}})); strings.Join(got, " ") != "inprog fsyncLock info ok" {
		t.Errorf("currentOp under the fsync lock has fields %v", got)
	}
	co := cmd(bson.D{{Key: "currentOp", Value: 1}})
	if locked, _ := co.Lookup("fsyncLock").BooleanOK(); !locked {
		t.Errorf("currentOp does not report the fsync lock: %s", co)
	}
	if info, _ := co.Lookup("info").StringValueOK(); info != "use db.fsyncUnlock() to terminate the fsync write/snapshot lock" {
		t.Errorf("currentOp's info under the fsync lock: %s", co)
	}
	if n, err := coll.CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
		t.Fatalf("a read under the lock: %d, %v", n, err)
	}
	err := client.Database(testDB).RunCommand(ctx, bson.D{{Key: "insert", Value: "fsynclock"}, {Key: "documents", Value: bson.A{bson.D{}}}, {Key: "maxTimeMS", Value: 100}}).Err()
	requireCode(t, err, 50, "MaxTimeMSExpired")
	done := make(chan error, 1)
	go func() {
		_, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}})
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("an insert under the lock returned: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	// lockInfo shows the two locks granted and the insert pending;
	// currentOp shows the insert waiting for it.
	info := cmd(bson.D{{Key: "lockInfo", Value: 1}})
	granted, _ := info.Lookup("lockInfo", "0", "granted").Array().Values()
	pending, _ := info.Lookup("lockInfo", "0", "pending").Array().Values()
	if len(granted) != 2 || len(pending) != 1 || pending[0].Document().Lookup("mode").StringValue() != "IX" {
		t.Errorf("lockInfo %s", info)
	}
	// with the Global lock it awaits, in IX mode (jstests/core/administrative/current_op/currentop.js)
	ops, _ := cmd(bson.D{{Key: "currentOp", Value: 1}, {Key: "locks.Global", Value: "w"}, {Key: "waitingForLock", Value: true}}).Lookup("inprog").Array().Values()
	if len(ops) != 1 || ops[0].Document().Lookup("command", "insert").StringValue() != "fsynclock" {
		t.Errorf("currentOp waitingForLock: %v", ops)
	}
	if got := cmd(bson.D{{Key: "fsyncUnlock", Value: 1}}); got.Lookup("lockCount").Int64() != 1 {
		t.Errorf("first unlock answered %s", got)
	}
	select {
	case err := <-done:
		t.Fatalf("an insert under the second lock returned: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	cmd(bson.D{{Key: "fsyncUnlock", Value: 1}})
	if err := <-done; err != nil {
		t.Fatalf("the waiting insert: %v", err)
	}
	if n, err := coll.CountDocuments(ctx, bson.D{}); err != nil || n != 2 {
		t.Errorf("after unlock: %d documents, %v", n, err)
	}
	requireCode(t, admin.RunCommand(ctx, bson.D{{Key: "fsyncUnlock", Value: 1}}).Err(), 20, "IllegalOperation")
	if locks, _ := cmd(bson.D{{Key: "lockInfo", Value: 1}}).Lookup("lockInfo").Array().Values(); len(locks) != 0 {
		t.Errorf("lockInfo after unlock: %v", locks)
	}
}

// TestSlowOperationLog: profile sets slowms and sampleRate and answers the
// previous ones; with slowms 0 every command is logged as "Slow query"
// with its namespace, the client's application name and its duration
// (getLog shows it).
func TestSlowOperationLog(t *testing.T) {
	cfg := defaultConfig()
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil)) // getLog keeps what is logged at info
	client := connect(t, startInstance(t, cfg), options.Client().SetAppName("slow app"))
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
	findLine := regexp.MustCompile(`"planSummary":"COLLSCAN","keysExamined":0,"docsExamined":1,"cursorExhausted":true,"nreturned":0,"queryHash":"[0-9A-F]{8}","planCacheKey":"[0-9A-F]{8}","reslen"`)
	for _, l := range lines {
		s := l.StringValue()
		if !strings.Contains(s, "Slow query") || !strings.Contains(s, "slow.marker_coll") || !strings.Contains(s, "durationMillis") {
			continue
		}
		if !strings.Contains(s, `"ns":"slow.marker_coll","appName":"slow app","command":`) {
			t.Errorf("slow query line without the application's name after ns: %s", s)
		}
		found = found || strings.Contains(s, `"ninserted":1`)
		// the first query's hashes after nreturned (OpDebug::report)
		foundFind = foundFind || findLine.MatchString(s)
	}
	if !found || !foundFind {
		t.Errorf("no slow query line for the insert (%v) or the find (%v) in %d log lines: %v", found, foundFind, len(lines), lines)
	}
	// A command longer than maxLogSizeKB is cut, and its size given.
	admin := client.Database("admin")
	if err := admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: "maxLogSizeKB", Value: 1}}).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("big_coll").InsertOne(ctx, bson.D{{Key: "s", Value: strings.Repeat("x", 20000)}}); err != nil {
		t.Fatal(err)
	}
	log, _ = admin.RunCommand(ctx, bson.D{{Key: "getLog", Value: "global"}}).Raw()
	lines, _ = log.Lookup("log").Array().Values()
	found = false
	for _, l := range lines {
		if s := l.StringValue(); strings.Contains(s, "slow.big_coll") && strings.Contains(s, "Slow query") {
			found = strings.Contains(s, `"truncated":{"command":`) && len(s) < 3000
		}
	}
	if !found {
		t.Errorf("no truncated slow query line under 3000 bytes for a 20 KB insert")
	}
	if v, _ := admin.RunCommand(ctx, bson.D{{Key: "getParameter", Value: 1}, {Key: "maxLogSizeKB", Value: 1}}).Raw(); v.Lookup("maxLogSizeKB").Int32() != 1 {
		t.Errorf("getParameter maxLogSizeKB: %s", v)
	}
	now, err := db.RunCommand(ctx, bson.D{{Key: "profile", Value: -1}, {Key: "slowms", Value: 100}}).Raw()
	if err != nil || now.Lookup("slowms").Int32() != 0 {
		t.Errorf("profile -1 answered %s %v", now, err)
	}
}
