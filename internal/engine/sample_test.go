package engine

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestRandomSample: MongoDB's conditions for a random cursor (more than
// 100 documents, a sample under 5% of them), distinct documents of the
// collection, spread over it, and a full answer even when the key space
// has a gap that the draws keep landing after.
func TestRandomSample(t *testing.T) {
	e := newTestEngine(t)
	insert := func(coll string, ids ...any) {
		var docs []bson.Raw
		for _, id := range ids {
			d, _ := bson.Marshal(bson.D{{Key: "_id", Value: id}})
			docs = append(docs, d)
		}
		if _, _, err := e.Insert("db", coll, docs, true, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var ids []any
	for i := range 1000 {
		ids = append(ids, int32(i))
	}
	insert("big", ids...)
	insert("small", ids[:80]...)
	insert("gap", append(ids, "zzz")...)
	ctx := context.Background()
	for _, tc := range []struct {
		coll   string
		n      int64
		random bool
	}{
		{"big", 10, true}, {"big", 49, true}, {"big", 50, false}, {"small", 2, false}, {"none", 1, false}, {"gap", 40, true},
	} {
		cur, ok, err := e.RandomSample(ctx, "db", tc.coll, tc.n, nil)
		if err != nil || ok != tc.random {
			t.Fatalf("%s size %d: random %v, %v; want %v", tc.coll, tc.n, ok, err, tc.random)
		}
		if !ok {
			continue
		}
		seen := map[string]bool{}
		for {
			d, err := cur.Next()
			if err != nil {
				t.Fatal(err)
			}
			if d == nil {
				break
			}
			seen[d.Lookup("_id").String()] = true
		}
		cur.Close()
		if int64(len(seen)) != tc.n {
			t.Fatalf("%s size %d: %d distinct documents", tc.coll, tc.n, len(seen))
		}
	}
	// 400 samples of 10 over 1000 dense keys: a uniform draw sees about
	// 98% of the documents; a cursor stuck on a few sees far fewer.
	counts := map[string]int{}
	for range 400 {
		cur, _, err := e.RandomSample(ctx, "db", "big", 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		for d, _ := cur.Next(); d != nil; d, _ = cur.Next() {
			counts[d.Lookup("_id").String()]++
		}
		cur.Close()
	}
	if len(counts) < 900 {
		t.Fatalf("400 samples of 10 saw %d of 1000 documents", len(counts))
	}
}
