package sorter

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/query"
)

// liveHeap is the heap the runtime counts live after a full collection.
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// TestAccountingMatchesHeap: what a sorter accounts for the entries it
// holds is within 1.5x of the heap they take, measured with
// runtime/metrics, for small and large documents.
func TestAccountingMatchesHeap(t *testing.T) {
	s, _ := query.CompileSort(bsonDoc(t, bson.D{{Key: "k", Value: 1}}))
	sk := NewSortKey(s)
	for _, size := range []int{16, 100, 1000, 10000} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			n := 4 << 20 / (size + 100)
			pad := make([]byte, size)
			before := liveHeap()
			sr := New(Options{MaxMemory: 1 << 40, Budget: NewBudget(1 << 40)})
			for i := range n {
				// Each document is its own allocation, as one read from
				// storage or built by a stage is.
				doc, _ := bson.Marshal(bson.D{{Key: "_id", Value: int32(i)}, {Key: "k", Value: int64(i * 7919 % n)}, {Key: "p", Value: pad}})
				k, err := sk.Of(doc)
				if err != nil {
					t.Fatal(err)
				}
				if err := sr.Add(Entry{Key: k, Doc: doc}); err != nil {
					t.Fatal(err)
				}
			}
			measured := liveHeap() - before
			accounted := sr.Account().Used()
			ratio := float64(accounted) / float64(measured)
			t.Logf("%d documents of ~%d bytes: accounted %d, measured %d, ratio %.2f", n, size, accounted, measured, ratio)
			if ratio < 1/1.5 || ratio > 1.5 {
				t.Fatalf("accounted %d bytes for %d measured: ratio %.2f outside [0.67, 1.5]", accounted, measured, ratio)
			}
			runtime.KeepAlive(sr)
			sr.Close()
		})
	}
}
