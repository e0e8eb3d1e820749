package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/storage"
	"github.com/folio-db/folio/internal/storage/storagetest"
	"github.com/folio-db/folio/internal/storage/testkv"
)

// The model-based concurrency tests run one workload through several
// engines and compare the result with what a model of the acknowledged
// operations says: concurrent $inc on a few counters, findAndModify pops
// of a queue, inserts into a collection with a unique index, and
// multi-document transactions moving amounts between accounts. Correctness
// between the engines' writers rests on the storage transactions alone:
// the engines share no locks, intents or catalog.

// TestWritesUnderInjectedConflicts runs the workload through one engine
// over a store that fails 30% of the commits with a write conflict: writes
// outside transactions retry, transactions fail with a transient
// WriteConflict, and nothing is lost or duplicated.
func TestWritesUnderInjectedConflicts(t *testing.T) {
	kv := storagetest.Conflicting(testkv.Open(t), 0.3)
	e := openEngine(t, kv)
	setupWorkload(t, e)
	runWorkload(t, []*Engine{e, e})
	if kv.Injected() == 0 {
		t.Fatal("no conflict was injected")
	}
}

// TestTwoEnginesOneStore runs the workload through two engines opened over
// one store, as two frontends would share a distributed one. The
// collections and indexes exist before the second engine opens.
func TestTwoEnginesOneStore(t *testing.T) {
	kvs := testkv.OpenShared(t, 2)
	first := openEngine(t, kvs[0])
	setupWorkload(t, first)
	second := openEngine(t, kvs[1])
	runWorkload(t, []*Engine{first, second})
}

// engineIDs numbers the engines openEngine opens: engines over one store
// need distinct frontend ids (schema_lease.go).
var engineIDs atomic.Int64

func openEngine(t *testing.T, kv storage.KV) *Engine {
	t.Helper()
	return openEngineLeased(t, kv, 0)
}

// openEngineLeased opens an engine over kv with schema lease lease (0:
// the default), closed when the test ends.
func openEngineLeased(t *testing.T, kv storage.KV, lease time.Duration) *Engine {
	t.Helper()
	e, err := Open(kv, Options{FrontendID: fmt.Sprintf("engine-%d", engineIDs.Add(1)), SchemaLease: lease})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

const (
	wlCounters  = 3
	wlQueue     = 120
	wlAccounts  = 8
	wlBalance   = 100
	wlUniqueMax = 40
	wlWorkers   = 3 // per engine and per kind of operation
	wlOps       = 25
)

func setupWorkload(t *testing.T, e *Engine) {
	t.Helper()
	insert := func(coll string, docs []bson.Raw) {
		if _, _, err := e.Insert("test", coll, docs, true, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var docs []bson.Raw
	for i := range wlCounters {
		docs = append(docs, ext(t, fmt.Sprintf(`{"_id": %d, "n": 0}`, i)))
	}
	insert("counters", docs)
	docs = nil
	for i := range wlQueue {
		docs = append(docs, ext(t, fmt.Sprintf(`{"_id": %d, "state": "ready", "p": %d}`, i, i%7)))
	}
	insert("queue", docs)
	mustCreateIndex(t, e, "queue", `{"state": 1, "p": 1}`, false)
	docs = nil
	for i := range wlAccounts {
		docs = append(docs, ext(t, fmt.Sprintf(`{"_id": %d, "balance": %d}`, i, wlBalance)))
	}
	insert("accounts", docs)
	mustCreateIndex(t, e, "accounts", `{"balance": 1}`, false)
	mustCreateIndex(t, e, "uniq", `{"u": 1}`, true)
}

// runWorkload runs the workload's writers through engines (each engine
// gets every kind of writer) and checks the outcome against the model.
func runWorkload(t *testing.T, engines []*Engine) {
	var (
		incs     [wlCounters]atomic.Int64
		popsMu   sync.Mutex
		popped   []int32
		uniqMu   sync.Mutex
		inserted = map[int32]int32{} // u -> _id of the acknowledged insert
		nextID   atomic.Int32
		commits  atomic.Int64
		aborts   atomic.Int64
	)
	var wg sync.WaitGroup
	fail := func(format string, args ...any) { t.Errorf(format, args...) }
	for ei, e := range engines {
		for w := range wlWorkers {
			seed := uint64(ei*100 + w)
			wg.Go(func() { // $inc
				rng := rand.New(rand.NewPCG(seed, 1))
				for range wlOps {
					c := rng.IntN(wlCounters)
					res, err := e.Update("test", "counters", UpdateSpec{Filter: ext(t, fmt.Sprintf(`{"_id": %d}`, c)), Update: ext(t, `{"$inc": {"n": 1}}`)})
					if err != nil || res.Modified != 1 {
						fail("$inc: %+v %v", res, err)
						return
					}
					incs[c].Add(1)
				}
			})
			wg.Go(func() { // queue pops until empty
				for {
					res, err := e.FindAndModify("test", "queue", FindAndModifySpec{
						Filter: ext(t, `{"state": "ready"}`), Sort: ext(t, `{"p": 1}`), Update: ext(t, `{"$set": {"state": "taken"}}`)})
					if err != nil {
						fail("pop: %v", err)
						return
					}
					if res.Value == nil {
						return
					}
					popsMu.Lock()
					popped = append(popped, res.Value.Lookup("_id").Int32())
					popsMu.Unlock()
				}
			})
			wg.Go(func() { // unique inserts
				rng := rand.New(rand.NewPCG(seed, 2))
				for range wlOps {
					id, u := nextID.Add(1), int32(rng.IntN(wlUniqueMax))
					n, werrs, err := e.Insert("test", "uniq", []bson.Raw{ext(t, fmt.Sprintf(`{"_id": %d, "u": %d}`, id, u))}, true, WriteOptions{})
					switch {
					case err != nil:
						fail("unique insert: %v", err)
						return
					case n == 1:
						uniqMu.Lock()
						if other, dup := inserted[u]; dup {
							fail("u %d acknowledged for _id %d and %d", u, other, id)
						}
						inserted[u] = id
						uniqMu.Unlock()
					case len(werrs) != 1 || werrs[0].Err.Code != mongoerr.DuplicateKey:
						fail("unique insert: n %d, %+v", n, werrs)
						return
					}
				}
			})
			wg.Go(func() { // transfers in transactions, retried as a driver does
				rng := rand.New(rand.NewPCG(seed, 3))
				for done := 0; done < wlOps; {
					from, to := rng.IntN(wlAccounts), rng.IntN(wlAccounts)
					if from == to {
						continue
					}
					err := transfer(t, e, from, to, 1+rng.IntN(10))
					if err == nil {
						commits.Add(1)
						done++
						continue
					}
					me, ok := err.(*mongoerr.Error)
					if !ok || me.Code != mongoerr.WriteConflict || !slices.Contains(me.Labels, TransientTransactionError) {
						fail("transfer: %v", err)
						return
					}
					aborts.Add(1)
				}
			})
		}
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	e := engines[0]
	for c := range wlCounters {
		doc := findOne(t, e, "counters", fmt.Sprintf(`{"_id": %d}`, c))
		if got, want := doc.Lookup("n").Int32(), incs[c].Load(); int64(got) != want {
			t.Errorf("counter %d is %d after %d acknowledged $inc", c, got, want)
		}
	}
	slices.Sort(popped)
	if len(popped) != wlQueue || len(slices.Compact(slices.Clone(popped))) != wlQueue {
		t.Errorf("%d pops of %d items, %d distinct", len(popped), wlQueue, len(slices.Compact(popped)))
	}
	if n, _ := e.Count("test", "queue", FindOptions{Filter: ext(t, `{"state": "ready"}`)}); n != 0 {
		t.Errorf("%d items left ready", n)
	}
	if n, _ := e.Count("test", "uniq", FindOptions{}); n != int64(len(inserted)) {
		t.Errorf("%d documents in uniq, %d acknowledged", n, len(inserted))
	}
	for u, id := range inserted {
		doc := findOne(t, e, "uniq", fmt.Sprintf(`{"u": %d}`, u))
		if got := doc.Lookup("_id").Int32(); got != id {
			t.Errorf("u %d held by _id %d, acknowledged for %d", u, got, id)
		}
	}
	var total int32
	for i := range wlAccounts {
		total += findOne(t, e, "accounts", fmt.Sprintf(`{"_id": %d}`, i)).Lookup("balance").Int32()
	}
	if total != wlAccounts*wlBalance {
		t.Errorf("total %d after %d transfers, want %d", total, commits.Load(), wlAccounts*wlBalance)
	}
	for _, coll := range []string{"counters", "queue", "uniq", "accounts"} {
		mustValidate(t, e, coll)
	}
	t.Logf("%d transfers committed, %d aborted with a transient WriteConflict", commits.Load(), aborts.Load())
}

// transfer moves amount from one account to another in a transaction,
// reading both balances in it first.
func transfer(t *testing.T, e *Engine, from, to, amount int) error {
	txn, err := e.Begin()
	if err != nil {
		return err
	}
	err = func() error {
		cur, err := e.Find("test", "accounts", FindOptions{Filter: ext(t, fmt.Sprintf(`{"_id": {"$in": [%d, %d]}}`, from, to)), Txn: txn})
		if err != nil {
			return err
		}
		defer cur.Close()
		for range 2 {
			if doc, err := cur.Next(); err != nil || doc == nil {
				return fmt.Errorf("account missing in the transaction: %v", err)
			}
		}
		for _, step := range [][2]int{{from, -amount}, {to, amount}} {
			_, err := e.Update("test", "accounts", UpdateSpec{Filter: ext(t, fmt.Sprintf(`{"_id": %d}`, step[0])),
				Update: ext(t, fmt.Sprintf(`{"$inc": {"balance": %d}}`, step[1])), WriteOptions: WriteOptions{Txn: txn}})
			if err != nil {
				return err
			}
		}
		return txn.Commit()
	}()
	if err != nil {
		txn.Abort()
	}
	return err
}

func findOne(t *testing.T, e *Engine, coll, filter string) bson.Raw {
	t.Helper()
	cur, err := e.Find("test", coll, FindOptions{Filter: ext(t, filter)})
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	doc, err := cur.Next()
	if err != nil || doc == nil {
		t.Fatalf("%s %s: %v %v", coll, filter, doc, err)
	}
	return doc
}

// TestTxnCommitConflictsWithOtherEngine: a document a transaction of one
// engine wrote is updated through another engine, which sees no intent;
// the storage transaction's commit then fails, and the transaction with
// it: WriteConflict labelled TransientTransactionError, nothing of it
// applied, and the transaction aborted.
func TestTxnCommitConflictsWithOtherEngine(t *testing.T) {
	kvs := testkv.OpenShared(t, 2)
	first := openEngine(t, kvs[0])
	if _, _, err := first.Insert("test", "c", []bson.Raw{ext(t, `{"_id": 1, "n": 0}`), ext(t, `{"_id": 2, "n": 0}`)}, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	second := openEngine(t, kvs[1])
	txn := mustBegin(t, first)
	for _, id := range []int{1, 2} {
		if _, err := first.Update("test", "c", UpdateSpec{Filter: ext(t, fmt.Sprintf(`{"_id": %d}`, id)), Update: ext(t, `{"$set": {"n": 1}}`), WriteOptions: WriteOptions{Txn: txn}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := second.Update("test", "c", UpdateSpec{Filter: ext(t, `{"_id": 2}`), Update: ext(t, `{"$set": {"n": 2}}`)}); err != nil {
		t.Fatal(err)
	}
	err := txn.Commit()
	me, ok := err.(*mongoerr.Error)
	if !ok || me.Code != mongoerr.WriteConflict || !slices.Contains(me.Labels, TransientTransactionError) {
		t.Fatalf("commit: %v, want WriteConflict labelled %s", err, TransientTransactionError)
	}
	if err := txn.Commit(); !mongoerr.Is(err, mongoerr.NoSuchTransaction) {
		t.Fatalf("commit after the conflict: %v, want NoSuchTransaction", err)
	}
	for id, want := range map[int]int32{1: 0, 2: 2} {
		if got := findOne(t, first, "c", fmt.Sprintf(`{"_id": %d}`, id)).Lookup("n").Int32(); got != want {
			t.Errorf("_id %d has n %d, want %d", id, got, want)
		}
	}
}

// TestCappedThroughTwoEngines inserts into one capped collection through
// two engines over one store at once: its totals live in the store, so the
// collection ends with exactly max documents, in one insertion order, and
// totals that match its documents.
func TestCappedThroughTwoEngines(t *testing.T) {
	kvs := testkv.OpenShared(t, 2)
	first := openEngine(t, kvs[0])
	const max = 7
	if err := first.CreateCollection("test", "capped", CollectionOptions{Capped: true, Size: 1 << 20, Max: max}); err != nil {
		t.Fatal(err)
	}
	engines := []*Engine{first, openEngine(t, kvs[1])}
	var wg sync.WaitGroup
	for w, e := range engines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				if _, _, err := e.Insert("test", "capped", []bson.Raw{ext(t, fmt.Sprintf(`{"_id": "%d-%02d"}`, w, i))}, true, WriteOptions{}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for i, e := range engines {
		ids := cappedIDs(t, e, "capped", "")
		if len(ids) != max {
			t.Fatalf("engine %d reads %d documents %v, want %d", i, len(ids), ids, max)
		}
	}
	c := first.cat.get("test", "capped")
	size, count, err := cappedTotals(kvs[0], c)
	if err != nil {
		t.Fatal(err)
	}
	var realSize int64
	lo, hi := docSpan(c.ID)
	it, err := kvs[0].NewIter(lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		realSize += int64(len(it.Value()))
	}
	if count != max || size != realSize {
		t.Errorf("totals size %d count %d, documents %d bytes, %d", size, count, realSize, max)
	}
}
