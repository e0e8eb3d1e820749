package aggregate

import (
	"fmt"
	goruntime "runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/sorter"
)

// liveHeap is the heap the runtime counts live after a full collection.
func liveHeap() int64 {
	goruntime.GC()
	goruntime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// withinRatio fails unless accounted is within 1.5x of measured.
func withinRatio(t *testing.T, what string, accounted, measured int64) {
	t.Helper()
	ratio := float64(accounted) / float64(measured)
	t.Logf("%s: accounted %d, measured %d, ratio %.2f", what, accounted, measured, ratio)
	if ratio < 1/1.5 || ratio > 1.5 {
		t.Fatalf("%s: accounted %d bytes for %d measured (ratio %.2f, want within 1.5x)", what, accounted, measured, ratio)
	}
}

// freshDoc is a new allocation each time, as a document read from
// storage or built by an earlier stage is.
func freshDoc(i, groups, pad int) bson.Raw {
	return mustMarshal(bson.D{{Key: "_id", Value: int32(i)}, {Key: "g", Value: int32(i % groups)},
		{Key: "v", Value: int32(i)}, {Key: "pad", Value: strings.Repeat("x", pad)}})
}

// TestGroupAccountingMatchesHeap: the memory $group (and $bucket)
// accounts for its table is within 1.5x of the heap the table takes,
// measured with runtime/metrics: many small groups, few groups keeping
// every value, whole documents pushed.
func TestGroupAccountingMatchesHeap(t *testing.T) {
	for _, tc := range []struct {
		name           string
		pipeline       string
		n, groups, pad int
	}{
		{"many groups", `[{"$group": {"_id": "$_id", "n": {"$sum": 1}, "m": {"$max": "$v"}}}]`, 30000, 30000, 10},
		{"top of large documents", `[{"$group": {"_id": "$_id", "t": {"$top": {"output": "$v", "sortBy": {"v": 1}}}, "f": {"$first": "$v"}}}]`, 20000, 20000, 300},
		{"push values of large documents", `[{"$group": {"_id": "$g", "vs": {"$push": "$v"}, "set": {"$addToSet": "$v"}}}]`, 30000, 10, 500},
		{"push roots", `[{"$group": {"_id": "$g", "all": {"$push": "$$ROOT"}}}]`, 10000, 100, 200},
		{"bucket", `[{"$bucket": {"groupBy": "$v", "boundaries": [0, 5000, 100000], "output": {"ids": {"$push": "$_id"}}}}]`, 30000, 1, 300},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse(parseStages(t, tc.pipeline), Options{DB: "test", Coll: "c"})
			if err != nil {
				t.Fatal(err)
			}
			before := liveHeap()
			table := newGroupTable(p.stages[0].(*groupStage))
			var accounted int64
			for i := range tc.n {
				mem, err := table.add(freshDoc(i, tc.groups, tc.pad), p.rt)
				if err != nil {
					t.Fatal(err)
				}
				accounted += mem
			}
			measured := liveHeap() - before
			goruntime.KeepAlive(table)
			withinRatio(t, tc.name, accounted, measured)
		})
	}
}

// TestLookupAccountingMatchesHeap: what $lookup accounts for the matches
// it holds is within 1.5x of their heap.
func TestLookupAccountingMatchesHeap(t *testing.T) {
	for _, pad := range []int{10, 200, 5000} {
		t.Run(fmt.Sprint(pad), func(t *testing.T) {
			n := 4 << 20 / (pad + 60)
			before := liveHeap()
			var held []bson.RawValue
			var accounted int64
			for i := range n {
				d := freshDoc(i, 1, pad)
				accounted += lookupMatchSize(d)
				held = append(held, docValue(d))
			}
			measured := liveHeap() - before
			goruntime.KeepAlive(held)
			withinRatio(t, fmt.Sprintf("%d matches of ~%d bytes", n, pad+40), accounted, measured)
		})
	}
}

// TestHeldDocumentsAccountingMatchesHeap: what $facet and $sample account
// for the documents they keep is within 1.5x of their heap.
func TestHeldDocumentsAccountingMatchesHeap(t *testing.T) {
	for _, pad := range []int{10, 200, 5000} {
		t.Run(fmt.Sprint(pad), func(t *testing.T) {
			n := 4 << 20 / (pad + 60)
			before := liveHeap()
			var held []bson.Raw
			var accounted int64
			for i := range n {
				d := freshDoc(i, 1, pad)
				accounted += heldDocSize(d)
				held = append(held, d)
			}
			measured := liveHeap() - before
			goruntime.KeepAlive(held)
			withinRatio(t, fmt.Sprintf("%d documents of ~%d bytes", n, pad+40), accounted, measured)
		})
	}
}

// TestBudgetBoundsConcurrentStages: eight pipelines with a $sort and a
// $group at once, each allowed far more than a budget that fits two, never
// reserve more than the budget together; with allowDiskUse they spill and
// match the in-memory results, without it those refused fail with 292.
func TestBudgetBoundsConcurrentStages(t *testing.T) {
	docs := spillDocs(3000)
	stages := parseStages(t, `[{"$sort": {"s": 1, "_id": 1}}, {"$group": {"_id": "$g", "ids": {"$push": "$_id"}, "s": {"$push": "$s"}}}, {"$sort": {"_id": 1}}]`)
	want, _, _, err := runSpill(t, stages, docs, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, disk := range []bool{true, false} {
		budget := sorter.NewBudget(700 << 10) // a sort of spillDocs takes ~600 KiB
		const n = 8
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p, err := Parse(stages, Options{DB: "test", Coll: "c", Env: newMemEnv(), AllowDiskUse: disk, TempDir: t.TempDir(), Budget: budget})
				if err != nil {
					errs[i] = err
					return
				}
				src := p.Run(&SliceSource{Docs: slices.Clone(docs)})
				defer src.Close()
				for j := 0; ; j++ {
					d, err := src.Next()
					if err != nil || d == nil {
						errs[i] = err
						if err == nil && j != len(want) {
							errs[i] = fmt.Errorf("%d documents, want %d", j, len(want))
						}
						return
					}
					if !slices.Equal(d, want[j]) {
						errs[i] = fmt.Errorf("document %d: %s, want %s", j, d, want[j])
						return
					}
				}
			}()
		}
		wg.Wait()
		if budget.Peak() > budget.Limit() || budget.Used() != 0 {
			t.Fatalf("budget %d: peak %d, %d still reserved", budget.Limit(), budget.Peak(), budget.Used())
		}
		for i, err := range errs {
			if err != nil && (disk || !mongoerr.Is(err, mongoerr.QueryExceededMemoryLimitNoDiskUseAllowed)) {
				t.Fatalf("pipeline %d (allowDiskUse %v): %v", i, disk, err)
			}
		}
		t.Logf("allowDiskUse %v: peak %d of %d", disk, budget.Peak(), budget.Limit())
	}
}
