package engine

import (
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// benchEngine holds n documents {_id, a: i % 100, b: i} with indexes on b
// and on {a, b} (the shape of the comments pattern's
// {discussion_id, posted}).
func benchEngine(b *testing.B, n int) *Engine {
	b.Helper()
	e := newTestEngine(b)
	batch := make([]bson.Raw, 0, 1000)
	for i := 0; i < n; i++ {
		d, _ := bson.Marshal(bson.D{{Key: "_id", Value: int32(i)}, {Key: "a", Value: int32(i % 100)}, {Key: "b", Value: int32(i)}, {Key: "pad", Value: "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}})
		batch = append(batch, d)
		if len(batch) == cap(batch) || i == n-1 {
			if _, _, err := e.Insert("test", "bench", batch, true, WriteOptions{}); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	for _, key := range []string{`{"b": 1}`, `{"a": 1, "b": -1}`} {
		if _, err := e.CreateIndexes("test", "bench", []IndexSpec{{Key: ext(b, key), ExpireAfter: -1}}, nil); err != nil {
			b.Fatal(err)
		}
	}
	return e
}

// drain reads a find to the end and returns how many documents it gave.
func drain(b *testing.B, e *Engine, o FindOptions) int {
	cur, err := e.Find("test", "bench", o)
	if err != nil {
		b.Fatal(err)
	}
	defer cur.Close()
	n := 0
	for {
		doc, err := cur.Next()
		if err != nil {
			b.Fatal(err)
		}
		if doc == nil {
			return n
		}
		n++
	}
}

// BenchmarkIndexedReads measures an indexed equality lookup of one document
// and a 20-document page of an index-ordered sort at growing collection
// sizes: both examine only their results, so their latency should not grow
// with the collection (the bound: within 2x from 10k to 1M).
func BenchmarkIndexedReads(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		e := benchEngine(b, n)
		b.Run(fmt.Sprintf("lookup/docs=%d", n), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				filter, _ := bson.Marshal(bson.D{{Key: "b", Value: int32(i % n)}})
				if drain(b, e, FindOptions{Filter: filter}) != 1 {
					b.Fatal("lookup missed")
				}
			}
		})
		b.Run(fmt.Sprintf("sortedPage/docs=%d", n), func(b *testing.B) {
			sort := ext(b, `{"b": -1}`)
			for i := 0; b.Loop(); i++ {
				filter, _ := bson.Marshal(bson.D{{Key: "a", Value: int32(i % 100)}})
				if drain(b, e, FindOptions{Filter: filter, Sort: sort, Limit: 20}) != 20 {
					b.Fatal("short page")
				}
			}
		})
	}
}
