package engine

import (
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/storage/testkv"
)

// The allocations of the hot write paths, bounded: a step that starts
// allocating per document or per statement shows here first. The bounds
// are not checked under the race detector (raceEnabled).

// allocsEngine is an engine on Pebble, whose inserts log their entries by
// reference; TiKV's client allocates on its own.
func allocsEngine(t *testing.T) *Engine {
	t.Helper()
	testkv.SkipOnTiKV(t, "allocation bounds are Pebble's")
	e, err := Open(testkv.Open(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// TestInsertAllocsPerDocument bounds the allocations of an insert per
// document, on Pebble, its entry by reference: the key and the row
// cache's copy, and the batch's amortized share. One more on each document is a regression on the
// path that bulk inserts run.
func TestInsertAllocsPerDocument(t *testing.T) {
	e := allocsEngine(t)
	const chunk, runs = 100, 20
	docs := make([]bson.Raw, (runs+1)*chunk) // AllocsPerRun runs once more first
	for i := range docs {
		docs[i], _ = bson.Marshal(bson.D{{Key: "_id", Value: int32(i)}, {Key: "v", Value: "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}})
	}
	next := 0
	allocs := testing.AllocsPerRun(runs, func() {
		if _, _, err := e.Insert("test", "allocs", docs[next:next+chunk], true, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		next += chunk
	})
	per := allocs / chunk
	t.Logf("%.1f allocations per inserted document", per)
	if !raceEnabled && per > 3.5 {
		t.Errorf("%.1f allocations per inserted document, want at most 3.5", per)
	}
}

// TestUpdateAllocsPerStatement bounds the allocations of a YCSB update
// (one field $set on a 1 KB record, by _id) through the engine, on
// Pebble: about one per step of its path (plan, compiled filter and
// update, locks, transaction, oplog entry, the row cache's copies). A
// step that starts allocating per update shows here first.
func TestUpdateAllocsPerStatement(t *testing.T) {
	e := allocsEngine(t)
	const records = 100
	var docs []bson.Raw
	for i := range records {
		d := bson.D{{Key: "_id", Value: fmt.Sprintf("user%d", i)}}
		for f := range 10 {
			d = append(d, bson.E{Key: fmt.Sprintf("field%d", f), Value: fmt.Sprintf("%0100d", f)})
		}
		b, _ := bson.Marshal(d)
		docs = append(docs, b)
	}
	if _, _, err := e.Insert("test", "allocs", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	const runs = 50
	filters, updates := make([]bson.Raw, runs+1), make([]bson.Raw, runs+1)
	for i := range filters {
		filters[i], _ = bson.Marshal(bson.D{{Key: "_id", Value: fmt.Sprintf("user%d", i%records)}})
		updates[i], _ = bson.Marshal(bson.D{{Key: "$set", Value: bson.D{{Key: "field3", Value: fmt.Sprintf("v%099d", i)}}}})
	}
	next := 0
	allocs := testing.AllocsPerRun(runs, func() {
		res, err := e.Update("test", "allocs", UpdateSpec{Filter: filters[next], Update: updates[next]})
		if err != nil || res.Modified != 1 {
			t.Fatalf("%+v, %v", res, err)
		}
		next++
	})
	t.Logf("%.1f allocations per update", allocs)
	if !raceEnabled && allocs > 39 {
		t.Errorf("%.1f allocations per update, want at most 39", allocs)
	}
}
