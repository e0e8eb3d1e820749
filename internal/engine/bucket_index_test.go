package engine

import (
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/storage/testkv"
)

// TestBucketWrites: a buckets collection refuses a bucket whose bounds mix
// type classes (408) until collMod's flag marks it, on every frontend and
// after a reopen, and refuses to key a bucket holding an array along an
// indexed measurement field (5930501); a collection of other documents
// takes both.
func TestBucketWrites(t *testing.T) {
	kvs := testkv.OpenShared(t, 2)
	a, b := openEngineLeased(t, kvs[0], 200*time.Millisecond), openEngineLeased(t, kvs[1], 200*time.Millisecond)
	if err := a.CreateCollection("test", "system.buckets.w", CollectionOptions{Timeseries: ext(t, `{"timeField": "t"}`)}); err != nil {
		t.Fatal(err)
	}
	if err := a.CreateCollection("test", "plain", CollectionOptions{}); err != nil {
		t.Fatal(err)
	}
	bucket := func(id int, min, max string) string {
		return fmt.Sprintf(`{"_id": %d, "control": {"version": 1, "min": {"t": {"$date": "2026-01-01T00:00:00Z"}, "x": %s}, "max": {"t": {"$date": "2026-01-01T00:00:00Z"}, "x": %s}}, "data": {"x": {"0": %s, "1": %s}}}`, id, min, max, min, max)
	}
	insert := func(e *Engine, coll, doc string) error {
		_, werrs, err := e.Insert("test", coll, []bson.Raw{ext(t, doc)}, true, WriteOptions{})
		if err == nil && len(werrs) > 0 {
			err = werrs[0].Err
		}
		return err
	}
	mixed := bucket(1, `1`, `"a"`)
	if err := insert(b, "system.buckets.w", mixed); !mongoerr.Is(err, mongoerr.CannotInsertTimeseriesBucketsWithMixedSchema) {
		t.Fatalf("a mixed bucket: %v", err)
	}
	if err := insert(a, "plain", mixed); err != nil {
		t.Fatal(err)
	}
	on := true
	if err := a.ModifyValidation("test", "system.buckets.w", ValidationChange{MixedSchema: &on}); err != nil {
		t.Fatal(err)
	}
	if err := insert(b, "system.buckets.w", mixed); err != nil {
		t.Fatalf("a mixed bucket once marked: %v", err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	again := openEngineLeased(t, kvs[0], 200*time.Millisecond)
	if !again.Collection("test", "system.buckets.w").CurrentOptions().MixedSchema {
		t.Fatal("the flag did not survive a reopen")
	}
	mustCreateIndex(t, again, "system.buckets.w", `{"control.min.x": 1, "control.max.x": 1}`, false)
	mustCreateIndex(t, again, "plain", `{"control.min.x": 1}`, false)
	arrays := bucket(2, `[1]`, `[2]`)
	if err := insert(again, "system.buckets.w", arrays); !mongoerr.Is(err, mongoerr.IndexedMeasurementArray) {
		t.Fatalf("a bucket with arrays along an indexed measurement: %v", err)
	}
	if err := insert(again, "plain", arrays); err != nil {
		t.Fatal(err)
	}
}
