package engine

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// TestConcurrentWritesKeepIndexesValid runs random inserts, updates,
// upserts and deletes from many goroutines on a collection with a unique, a
// multikey and a compound index, then checks every index entry against the
// documents both ways.
func TestConcurrentWritesKeepIndexesValid(t *testing.T) {
	e := newTestEngine(t)
	mustCreateIndex(t, e, "w", `{"u": 1}`, true)
	mustCreateIndex(t, e, "w", `{"tags": 1}`, false)
	mustCreateIndex(t, e, "w", `{"g": 1, "n": -1}`, false)
	const workers, ops = 8, 150
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, 7))
			for i := 0; i < ops; i++ {
				id := rng.IntN(60)
				var err error
				switch rng.IntN(4) {
				case 0:
					doc := fmt.Sprintf(`{"_id": %d, "u": %d, "tags": ["t%d", "t%d"], "g": %d, "n": %d}`, id, rng.IntN(80), rng.IntN(5), rng.IntN(5), rng.IntN(3), i)
					_, _, err = e.Insert("test", "w", []bson.Raw{ext(t, doc)}, true, WriteOptions{})
				case 1:
					upd := fmt.Sprintf(`{"$set": {"u": %d, "tags": ["t%d"]}, "$inc": {"n": 1}}`, rng.IntN(80), rng.IntN(5))
					_, err = e.Update("test", "w", UpdateSpec{Filter: ext(t, fmt.Sprintf(`{"_id": %d}`, id)), Update: ext(t, upd), Upsert: rng.IntN(2) == 0})
				case 2:
					_, err = e.Update("test", "w", UpdateSpec{Filter: ext(t, fmt.Sprintf(`{"g": %d}`, rng.IntN(3))), Update: ext(t, `{"$inc": {"n": 1}, "$push": {"tags": "m"}}`), Multi: true})
				case 3:
					_, err = e.Delete("test", "w", ext(t, fmt.Sprintf(`{"tags": "t%d"}`, rng.IntN(5))), 1, bson.RawValue{}, WriteOptions{})
				}
				if err != nil && !mongoerr.Is(err, mongoerr.DuplicateKey) {
					t.Error(err)
					return
				}
			}
		}(uint64(w))
	}
	wg.Wait()
	res := mustValidate(t, e, "w")
	if res.Records == 0 {
		t.Fatal("no documents left to validate")
	}
}

// TestConcurrentIncrements checks that concurrent $inc on one document lose
// nothing.
func TestConcurrentIncrements(t *testing.T) {
	e := newTestEngine(t)
	if _, _, err := e.Insert("test", "c", []bson.Raw{ext(t, `{"_id": 1, "n": 0}`)}, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	const workers, each = 10, 50
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if _, err := e.Update("test", "c", UpdateSpec{Filter: ext(t, `{"_id": 1}`), Update: ext(t, `{"$inc": {"n": 1}}`)}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	cur, err := e.Find("test", "c", FindOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	doc, err := cur.Next()
	if err != nil || doc == nil {
		t.Fatal(doc, err)
	}
	if n := doc.Lookup("n").Int32(); n != workers*each {
		t.Fatalf("n = %d, want %d", n, workers*each)
	}
}

// TestQueuePopsDeliverOnce checks that concurrent findAndModify pops of a
// queue sorted by an indexed field hand out every item exactly once.
func TestQueuePopsDeliverOnce(t *testing.T) {
	e := newTestEngine(t)
	mustCreateIndex(t, e, "q", `{"state": 1, "created": 1}`, false)
	const items, workers = 400, 8
	var docs []bson.Raw
	for i := 0; i < items; i++ {
		docs = append(docs, ext(t, fmt.Sprintf(`{"_id": %d, "state": "ready", "created": %d}`, i, items-i)))
	}
	if _, _, err := e.Insert("test", "q", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	got := map[int32]int{}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for {
				res, err := e.FindAndModify("test", "q", FindAndModifySpec{
					Filter: ext(t, `{"state": "ready"}`),
					Sort:   ext(t, `{"created": 1}`),
					Update: ext(t, fmt.Sprintf(`{"$set": {"state": "taken", "by": %d}}`, w)),
				})
				if err != nil {
					t.Error(err)
					return
				}
				if res.Value == nil {
					return
				}
				mu.Lock()
				got[res.Value.Lookup("_id").Int32()]++
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	if len(got) != items {
		t.Fatalf("%d distinct items delivered, want %d", len(got), items)
	}
	for id, n := range got {
		if n != 1 {
			t.Errorf("item %d delivered %d times", id, n)
		}
	}
	mustValidate(t, e, "q")
}
