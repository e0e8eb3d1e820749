package engine

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/storage/testkv"
)

// TestSortMemoryLimit checks MongoDB's blocking-sort rules with a 16 KiB
// limit: past it a sort fails with 292, unless it has a limit (top-k) or
// allowDiskUse, in which case it spills to disk and still returns every
// document in order, stable among equal keys, leaving no files behind.
func TestSortMemoryLimit(t *testing.T) {
	kv := testkv.Open(t)
	tmp := t.TempDir()
	e, err := Open(kv, Options{SortMemoryLimit: 16 << 10, TempDir: tmp})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	var docs []bson.Raw
	for i := 0; i < 2000; i++ {
		docs = append(docs, ext(t, fmt.Sprintf(`{"_id": %d, "k": %d, "pad": "%064d", "arr": [1, 2, %d, 7]}`, i, rng.IntN(50), i, 3+i%2)))
	}
	if _, _, err := e.Insert("test", "s", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	sorted := func(o FindOptions) ([]int32, error) {
		cur, err := e.Find("test", "s", o)
		if err != nil {
			return nil, err
		}
		defer cur.Close()
		var out []int32
		for {
			doc, err := cur.Next()
			if err != nil || doc == nil {
				return out, err
			}
			out = append(out, doc.Lookup("_id").Int32())
		}
	}
	byKey := ext(t, `{"k": -1}`)
	if _, err := sorted(FindOptions{Sort: byKey}); !mongoerr.Is(err, mongoerr.QueryExceededMemoryLimitNoDiskUseAllowed) {
		t.Fatalf("sort past the limit: %v", err)
	}
	// The expected order: k descending, then _id (insertion) order.
	keys := map[int32]int32{}
	for _, d := range docs {
		keys[d.Lookup("_id").Int32()] = d.Lookup("k").Int32()
	}
	want := make([]int32, 0, len(docs))
	for id := range keys {
		want = append(want, id)
	}
	slices.SortFunc(want, func(a, b int32) int {
		if keys[a] != keys[b] {
			return int(keys[b] - keys[a])
		}
		return int(a - b)
	})
	got, err := sorted(FindOptions{Sort: byKey, AllowDiskUse: true, Skip: 5})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want[5:]) {
		t.Fatalf("spilled sort out of order")
	}
	got, err = sorted(FindOptions{Sort: byKey, Skip: 10, Limit: 20})
	if err != nil || !slices.Equal(got, want[10:30]) {
		t.Fatalf("top-k sort: %v %v", got, err)
	}
	// A positional projection applies after the spilled sort, with each
	// document's own match position.
	cur, err := e.Find("test", "s", FindOptions{Filter: ext(t, `{"arr": {"$gte": 3}}`), Sort: byKey, AllowDiskUse: true, Projection: ext(t, `{"arr.$": 1}`)})
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; ; n++ {
		doc, err := cur.Next()
		if err != nil {
			t.Fatal(err)
		}
		if doc == nil {
			if n != len(docs) {
				t.Fatalf("%d documents with a positional projection, want %d", n, len(docs))
			}
			break
		}
		id := doc.Lookup("_id").Int32()
		if got, want := doc.Lookup("arr").Array().Index(0).Int32(), 3+id%2; got != want {
			t.Fatalf("document %d: arr.$ is %d, want %d", id, got, want)
		}
	}
	cur.Close()
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Fatalf("%d sort files left behind", len(left))
	}
}

// TestTrialDropsFailingSort: a candidate whose in-memory sort passes the
// memory limit during its trial loses to one that provides the sort, as
// MongoDB's multi-planner drops a failed candidate
// (jstests/core/query/sort/sortg.js: {b: null} sorted by _id with indexes
// on a and b succeeds); with every candidate sorting in memory the find
// fails with 292.
func TestTrialDropsFailingSort(t *testing.T) {
	kv := testkv.Open(t)
	e, err := Open(kv, Options{SortMemoryLimit: 16 << 10, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, k := range []string{`{"a": 1}`, `{"b": 1}`, `{"c": 1}`} {
		mustCreateIndex(t, e, "g", k, false)
	}
	var docs []bson.Raw
	for i := 0; i < 100; i++ {
		docs = append(docs, ext(t, fmt.Sprintf(`{"_id": %d, "b": 0}`, i)))
	}
	for i := 100; i < 210; i++ {
		docs = append(docs, ext(t, fmt.Sprintf(`{"_id": %d, "a": 0, "x": "%0400d"}`, i, i)))
	}
	if _, _, err := e.Insert("test", "g", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, filter := range []string{`{"b": null}`, `{"b": null, "a": 0}`} {
		cur, err := e.Find("test", "g", FindOptions{Filter: ext(t, filter), Sort: ext(t, `{"_id": 1}`)})
		if err != nil {
			t.Fatalf("%s sorted by _id: %v", filter, err)
		}
		n := 0
		for ; ; n++ {
			doc, err := cur.Next()
			if err != nil {
				t.Fatal(err)
			}
			if doc == nil {
				break
			}
			if id := doc.Lookup("_id").Int32(); id != int32(100+n) {
				t.Fatalf("%s: document %d is %d", filter, n, id)
			}
		}
		cur.Close()
		if n != 110 {
			t.Fatalf("%s: %d documents, want 110", filter, n)
		}
	}
	if _, err := e.Find("test", "g", FindOptions{Filter: ext(t, `{"b": null, "c": null}`), Sort: ext(t, `{"d": 1}`)}); !mongoerr.Is(err, mongoerr.QueryExceededMemoryLimitNoDiskUseAllowed) {
		t.Fatalf("every plan sorting in memory: %v", err)
	}
}
