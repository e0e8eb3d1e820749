package engine

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/storage/testkv"
)

// TestInsertAllocsPerDocument bounds the allocations of an insert per
// document, on Pebble, its entry by reference: the key, the document's
// key in the oplog entry and the row cache's copy, and the batch's
// amortized share. One more on each document is a regression on the
// path that bulk inserts run.
func TestInsertAllocsPerDocument(t *testing.T) {
	testkv.SkipOnTiKV(t, "TiKV logs each insert whole, through its client's own allocations")
	e, err := Open(testkv.Open(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
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
	if !raceEnabled && per > 4.5 {
		t.Errorf("%.1f allocations per inserted document, want at most 4.5", per)
	}
}
