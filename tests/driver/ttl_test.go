package driver_test

import (
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestTTLMetrics: serverStatus' metrics.ttl holds ttl.cpp's counters by
// name, as 64-bit integers: passes and subPasses grow with each pass the
// monitor runs, not while ttlMonitorEnabled is off, and deletedDocuments
// by the documents the passes expired
// (jstests/libs/ttl_util.js waits on metrics.ttl.passes).
func TestTTLMetrics(t *testing.T) {
	client, _ := startServer(t)
	ctx := t.Context()
	ttl := func() bson.Raw {
		t.Helper()
		return replyOf(t, client, "admin", bson.D{{Key: "serverStatus", Value: 1}}).Lookup("metrics", "ttl").Document()
	}
	count := func(doc bson.Raw, name string) int64 {
		t.Helper()
		v, ok := doc.Lookup(name).Int64OK()
		if !ok {
			t.Fatalf("metrics.ttl.%s is %v in %v", name, doc.Lookup(name), doc)
		}
		return v
	}
	elems, err := ttl().Elements()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range elems {
		names = append(names, e.Key())
	}
	if len(names) != 3 || names[0] != "deletedDocuments" || names[1] != "passes" || names[2] != "subPasses" {
		t.Fatalf("metrics.ttl fields %v", names)
	}
	set := func(name string, v any) {
		t.Helper()
		if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: name, Value: v}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	set("ttlMonitorEnabled", false)
	set("ttlMonitorSleepSecs", 1)
	coll := client.Database(testDB).Collection("ttlmetrics")
	if _, err := coll.Indexes().CreateOne(ctx, ttlIndexModel(bson.D{{Key: "at", Value: 1}}, 0)); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if _, err := coll.InsertMany(ctx, []any{bson.D{{Key: "at", Value: old}}, bson.D{{Key: "at", Value: old}}, bson.D{{Key: "at", Value: time.Now().Add(time.Hour)}}}); err != nil {
		t.Fatal(err)
	}
	before := ttl()
	time.Sleep(2500 * time.Millisecond)
	if idle := ttl(); count(idle, "passes") != count(before, "passes") {
		t.Fatalf("passes grew while disabled: %v then %v", before, idle)
	}
	set("ttlMonitorEnabled", true)
	deadline := time.Now().Add(15 * time.Second)
	for count(ttl(), "passes") < count(before, "passes")+2 {
		if time.Now().After(deadline) {
			t.Fatalf("no two passes in 15s: %v", ttl())
		}
		time.Sleep(100 * time.Millisecond)
	}
	after := ttl()
	if d := count(after, "deletedDocuments") - count(before, "deletedDocuments"); d != 2 {
		t.Errorf("deletedDocuments grew by %d, want 2: %v then %v", d, before, after)
	}
	if count(after, "subPasses") != count(after, "passes") {
		t.Errorf("subPasses %v", after)
	}
	if n, err := coll.CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
		t.Errorf("%d documents left (%v), want 1", n, err)
	}
}

// ttlIndexModel is a TTL index model of key expiring after secs seconds.
func ttlIndexModel(key bson.D, secs int32) mongo.IndexModel {
	return mongo.IndexModel{Keys: key, Options: options.Index().SetExpireAfterSeconds(secs)}
}
