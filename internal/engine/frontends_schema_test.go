package engine

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/storage/testkv"
)

// Several engines opened over one pebblekv.DB are several frontends over
// one store: each has its own catalog image, locks and lease, and they
// meet only in the store, through its transactions.

// openFrontends opens n engines over one in-memory store with schema
// lease lease.
func openFrontends(t *testing.T, n int, lease time.Duration) []*Engine {
	t.Helper()
	leases := make([]time.Duration, n)
	for i := range leases {
		leases[i] = lease
	}
	return openFrontendsLeased(t, leases...)
}

// openFrontendsLeased opens a frontend per lease over one store.
func openFrontendsLeased(t *testing.T, leases ...time.Duration) []*Engine {
	t.Helper()
	kvs := testkv.OpenShared(t, len(leases))
	var out []*Engine
	for i, lease := range leases {
		e, err := Open(kvs[i], Options{FrontendID: fmt.Sprintf("f%d", i), SchemaLease: lease})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		out = append(out, e)
	}
	return out
}

// explainUses reports whether e's plan for filter on test.coll scans the
// index named name.
func explainUses(t *testing.T, e *Engine, coll, filter, name string) bool {
	t.Helper()
	d, err := e.Explain("test", coll, FindOptions{Filter: ext(t, filter)}, QueryPlanner)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := bson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	s := bson.Raw(raw).String()
	return strings.Contains(s, `"IXSCAN"`) && strings.Contains(s, `"`+name+`"`)
}

// TestFrontendsIndexBuildWhileOthersWrite builds a unique and a multikey
// index on one frontend while two others insert, update and delete
// concurrently; afterwards the entries match the documents exactly and
// every frontend plans with the new indexes.
func TestFrontendsIndexBuildWhileOthersWrite(t *testing.T) {
	// A 3 s lease: with 1 s, CI's race run once saw the building
	// frontend's heartbeats starved for the 875 ms its lease allows, and
	// the build fail with NotWritablePrimary.
	fe := openFrontends(t, 3, 3*time.Second)
	const docs = 3000
	var batch []bson.Raw
	for i := range docs {
		batch = append(batch, ext(t, fmt.Sprintf(`{"_id": %d, "u": %d, "a": %d, "tags": ["x%d"]}`, i, i, i%50, i%7)))
	}
	if _, _, err := fe[0].Insert("test", "c", batch, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var writes atomic.Int64
	for w, e := range fe[1:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 3))
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				id := rng.IntN(docs + 500)
				var err error
				switch rng.IntN(3) {
				case 0:
					// u stays unique: docs+w*1e6+i is never reused.
					doc := fmt.Sprintf(`{"_id": %d, "u": %d, "a": %d, "tags": ["x%d", "y%d"]}`, docs+w*1_000_000+i, docs+w*1_000_000+i, rng.IntN(50), rng.IntN(7), rng.IntN(3))
					_, _, err = e.Insert("test", "c", []bson.Raw{ext(t, doc)}, true, WriteOptions{})
				case 1:
					upd := fmt.Sprintf(`{"$set": {"a": %d, "tags": ["z%d"]}}`, rng.IntN(50), rng.IntN(9))
					_, err = e.Update("test", "c", UpdateSpec{Filter: ext(t, fmt.Sprintf(`{"_id": %d}`, id)), Update: ext(t, upd)})
				case 2:
					_, err = e.Delete("test", "c", ext(t, fmt.Sprintf(`{"_id": %d}`, id)), 1, bson.RawValue{}, WriteOptions{})
				}
				if mongoerr.Is(err, mongoerr.NotWritablePrimary) {
					continue // a heartbeat late on a loaded machine: retryable
				}
				if err != nil {
					t.Error(err)
					return
				}
				writes.Add(1)
			}
		}()
	}
	time.Sleep(50 * time.Millisecond)
	start := writes.Load()
	_, err := fe[0].CreateIndexes("test", "c", []IndexSpec{
		{Key: ext(t, `{"u": 1}`), Unique: true, ExpireAfter: -1},
		{Key: ext(t, `{"tags": 1, "a": 1}`), ExpireAfter: -1},
	}, nil)
	during := writes.Load() - start
	time.Sleep(50 * time.Millisecond)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if during == 0 {
		t.Fatal("no write ran during the build: it did not prove anything")
	}
	t.Logf("%d writes from two other frontends during the build", during)
	for i, e := range fe {
		res := mustValidate(t, e, "c")
		if res.KeysPerIndex["u_1"] != res.Records {
			t.Errorf("frontend %d: u_1 has %d keys for %d documents", i, res.KeysPerIndex["u_1"], res.Records)
		}
		if !explainUses(t, e, "c", `{"u": 17}`, "u_1") || !explainUses(t, e, "c", `{"tags": "x3", "a": 3}`, "tags_1_a_1") {
			t.Errorf("frontend %d does not plan with the new indexes", i)
		}
		if ix := e.Collection("test", "c").FindIndex("tags_1_a_1"); ix == nil || !ix.Multikey() {
			t.Errorf("frontend %d does not see tags_1_a_1 as multikey", i)
		}
	}
}

// TestFrontendsDropIndexWhileOthersWrite drops an index on one frontend
// while another writes: no entry of it is left, and no frontend plans
// with it.
func TestFrontendsDropIndexWhileOthersWrite(t *testing.T) {
	fe := openFrontends(t, 2, 300*time.Millisecond)
	mustCreateIndex(t, fe[0], "d", `{"a": 1}`, false)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, _, err := fe[1].Insert("test", "d", []bson.Raw{ext(t, fmt.Sprintf(`{"_id": %d, "a": %d}`, i, i))}, true, WriteOptions{}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	time.Sleep(30 * time.Millisecond)
	c := fe[0].Collection("test", "d")
	id := c.FindIndex("a_1").ID
	if _, err := fe[0].DropIndexes("test", "d", []string{"a_1"}, nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(30 * time.Millisecond)
	close(stop)
	wg.Wait()
	lo, hi := indexSpan(c.ID, id)
	if n := countKeys(t, fe[0], lo, hi); n != 0 {
		t.Errorf("%d entries of the dropped index left", n)
	}
	for i, e := range fe {
		if e.Collection("test", "d").FindIndex("a_1") != nil || len(e.Collection("test", "d").Building()) != 0 {
			t.Errorf("frontend %d still has the dropped index", i)
		}
		mustValidate(t, e, "d")
	}
}

// awaitGarbage removes the dropped collections whose removal a job in
// the background may still be doing (resolveGarbage), as that job would.
// e must be the engine that dropped them: another finds the dropper's
// registered catalog version older than the drop until the dropper's next
// heartbeat, and leaves the garbage to it.
func awaitGarbage(t *testing.T, e *Engine) {
	t.Helper()
	if err := e.resolveGarbage(); err != nil {
		t.Fatal(err)
	}
}

// countKeys counts the stored keys in [lo, hi).
func countKeys(t *testing.T, e *Engine, lo, hi []byte) int {
	t.Helper()
	it, err := e.kv.NewIter(lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	n := 0
	for it.First(); it.Valid(); it.Next() {
		n++
	}
	return n
}

// TestFrontendsDropCollectionWhileOthersWrite drops a collection on one
// frontend while another inserts into it: the other frontend's later
// inserts recreate it (a new collection), and nothing of the dropped one is
// left in the store.
func TestFrontendsDropCollectionWhileOthersWrite(t *testing.T) {
	fe := openFrontends(t, 2, 300*time.Millisecond)
	mustCreateIndex(t, fe[0], "x", `{"a": 1}`, false)
	old := fe[0].Collection("test", "x").ID
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			_, _, err := fe[1].Insert("test", "x", []bson.Raw{ext(t, fmt.Sprintf(`{"_id": %d, "a": %d}`, i, i))}, true, WriteOptions{})
			// A loaded machine can delay a lease renewal past the short
			// lease: the frontend then refuses writes until it renews,
			// by design, and the writer tries again.
			if err != nil && !mongoerr.Is(err, mongoerr.DuplicateKey) && !mongoerr.Is(err, mongoerr.NotWritablePrimary) {
				t.Error(err)
				return
			}
		}
	}()
	time.Sleep(30 * time.Millisecond)
	if ok, err := fe[0].DropCollection("test", "x"); err != nil || !ok {
		t.Fatal(ok, err)
	}
	time.Sleep(30 * time.Millisecond)
	close(stop)
	wg.Wait()
	awaitGarbage(t, fe[0])
	for _, span := range []func(uint32) ([]byte, []byte){docSpan, collIndexSpan} {
		lo, hi := span(old)
		if n := countKeys(t, fe[0], lo, hi); n != 0 {
			t.Errorf("%d keys of the dropped collection left", n)
		}
	}
	for i, e := range fe {
		c := e.Collection("test", "x")
		if c == nil || c.ID == old {
			t.Fatalf("frontend %d: collection %v, want the one the inserts recreated", i, c)
		}
		mustValidate(t, e, "x")
	}
}

// TestFrontendsConcurrentCreates creates one collection from two
// frontends at once, explicitly and implicitly: every call succeeds and
// both frontends end with the same collection holding every document.
func TestFrontendsConcurrentCreates(t *testing.T) {
	fe := openFrontends(t, 2, 300*time.Millisecond)
	for round := range 20 {
		name := fmt.Sprintf("c%d", round)
		var wg sync.WaitGroup
		for i, e := range fe {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var err error
				for try := 0; try == 0 || mongoerr.Is(err, mongoerr.NotWritablePrimary) && try < 20; try++ {
					// NotWritablePrimary (a heartbeat late on a loaded
					// machine) refuses before writing: drivers retry it
					if try > 0 {
						time.Sleep(50 * time.Millisecond)
					}
					if round%2 == 0 {
						err = e.CreateCollection("test", name, CollectionOptions{})
					} else {
						_, _, err = e.Insert("test", name, []bson.Raw{ext(t, fmt.Sprintf(`{"_id": %d}`, i))}, true, WriteOptions{})
					}
				}
				if err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		a, b := fe[0].Collection("test", name), fe[1].Collection("test", name)
		if a == nil || b == nil || a.ID != b.ID || a.UUID != b.UUID {
			t.Fatalf("round %d: frontends see %v and %v", round, a, b)
		}
		if round%2 == 1 {
			if res := mustValidate(t, fe[0], name); res.Records != 2 {
				t.Errorf("round %d: %d documents, want 2", round, res.Records)
			}
		}
	}
}

// TestFrontendsTTLOnOneFrontend runs the TTL monitor on three frontends
// at once: only the holder of the jobs lease deletes.
func TestFrontendsTTLOnOneFrontend(t *testing.T) {
	// A lease long enough that a loaded machine does not make a frontend
	// miss its renewal (300 ms did, under CI's parallel packages).
	fe := openFrontends(t, 3, time.Second)
	if _, err := fe[0].CreateIndexes("test", "ttl", []IndexSpec{{Key: ext(t, `{"at": 1}`), ExpireAfter: 10}}, nil); err != nil {
		t.Fatal(err)
	}
	const n = 200
	past := time.Now().Add(-time.Hour)
	for i := range n {
		doc, _ := bson.Marshal(bson.D{{Key: "_id", Value: i}, {Key: "at", Value: past}})
		if _, _, err := fe[i%3].Insert("test", "ttl", []bson.Raw{doc}, true, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range fe {
		if err := e.reloadCatalog(); err != nil {
			t.Fatal(err)
		}
	}
	deleted := make([]int64, len(fe))
	var wg sync.WaitGroup
	for i, e := range fe {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				k, err := e.ExpireTTL(time.Now())
				if err != nil {
					t.Error(err)
				}
				deleted[i] += k
			}
		}()
	}
	wg.Wait()
	runners := 0
	var total int64
	for i, e := range fe {
		total += deleted[i]
		if e.RunsJobs() {
			runners++
		}
		if deleted[i] > 0 && !e.RunsJobs() {
			t.Errorf("frontend %d deleted %d documents without the jobs lease", i, deleted[i])
		}
	}
	if runners != 1 || total != n {
		t.Errorf("deletions per frontend %v (total %d, want %d), %d frontends hold the jobs lease", deleted, total, n, runners)
	}
	// The holder leaves: another takes the lease within a heartbeat.
	var holder int
	for i, e := range fe {
		if e.RunsJobs() {
			holder = i
		}
	}
	if err := fe[holder].Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		took := 0
		for i, e := range fe {
			if i != holder && e.RunsJobs() {
				took++
			}
		}
		if took == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d frontends took the jobs lease after its holder left", took)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestFrontendsExpiredLeaseRefusesWrites cuts a frontend off (its
// heartbeat stops): once its lease expired it refuses writes with a
// retryable error, the others' DDL no longer waits for it, and once it
// renews (reloading the catalog) its writes maintain the index built
// meanwhile.
func TestFrontendsExpiredLeaseRefusesWrites(t *testing.T) {
	const lease = 200 * time.Millisecond
	fe := openFrontends(t, 2, lease)
	if _, _, err := fe[1].Insert("test", "l", []bson.Raw{ext(t, `{"_id": 0, "a": 0}`)}, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	fe[1].pauseHeartbeat.Store(true)
	time.Sleep(lease + 50*time.Millisecond)
	_, _, err := fe[1].Insert("test", "l", []bson.Raw{ext(t, `{"_id": 1, "a": 1}`)}, true, WriteOptions{})
	me := mongoerr.As(err)
	if err == nil || me == nil || me.Code != mongoerr.NotWritablePrimary || !strings.Contains(strings.Join(me.Labels, ","), RetryableWriteError) {
		t.Fatalf("write with an expired lease: %v, want NotWritablePrimary labelled %s", err, RetryableWriteError)
	}
	start := time.Now()
	mustCreateIndex(t, fe[0], "l", `{"a": 1}`, false)
	if d := time.Since(start); d > lease {
		t.Errorf("the index build took %v: it waited for the expired frontend", d)
	}
	if fe[1].Collection("test", "l").FindIndex("a_1") != nil {
		t.Fatal("the cut-off frontend already sees the index")
	}
	fe[1].pauseHeartbeat.Store(false)
	if err := fe[1].heartbeat(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := fe[1].Insert("test", "l", []bson.Raw{ext(t, `{"_id": 1, "a": 1}`)}, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if res := mustValidate(t, fe[0], "l"); res.KeysPerIndex["a_1"] != 2 {
		t.Errorf("a_1 holds %d keys, want 2", res.KeysPerIndex["a_1"])
	}
}

// TestSingleFrontendDDLDoesNotWait runs DDL on one frontend with an hour's
// lease: had any step waited for a lease, it would not finish.
func TestSingleFrontendDDLDoesNotWait(t *testing.T) {
	fe := openFrontends(t, 1, time.Hour)
	e := fe[0]
	start := time.Now()
	for i := range 5 {
		coll := fmt.Sprintf("s%d", i)
		if _, _, err := e.Insert("test", coll, []bson.Raw{ext(t, `{"_id": 1, "a": [1, 2]}`)}, true, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		mustCreateIndex(t, e, coll, `{"a": 1}`, false)
		if _, err := e.DropIndexes("test", coll, []string{"a_1"}, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := e.DropCollection("test", coll); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("DDL on a single frontend took %v", d)
	}
}

// TestFrontendsTxnSpanningIndexBuild opens a transaction on one frontend
// and writes a document, then builds an index on another: the backfill
// cannot see the uncommitted document and the transaction's entries were
// computed without the index, so its commit fails with WriteConflict (a
// transient error drivers retry) and the index stays exact.
func TestFrontendsTxnSpanningIndexBuild(t *testing.T) {
	fe := openFrontends(t, 2, 300*time.Millisecond)
	if _, _, err := fe[0].Insert("test", "tx", []bson.Raw{ext(t, `{"_id": 0, "a": 0}`)}, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	txn := mustBegin(t, fe[1])
	if _, _, err := fe[1].Insert("test", "tx", []bson.Raw{ext(t, `{"_id": 1, "a": 1}`)}, true, WriteOptions{Txn: txn}); err != nil {
		t.Fatal(err)
	}
	mustCreateIndex(t, fe[0], "tx", `{"a": 1}`, false)
	if err := txn.Commit(); !mongoerr.Is(err, mongoerr.WriteConflict) {
		t.Fatalf("commit across an index build: %v, want WriteConflict", err)
	}
	if res := mustValidate(t, fe[0], "tx"); res.Records != 1 || res.KeysPerIndex["a_1"] != 1 {
		t.Errorf("after the failed commit: %d documents, %d keys", res.Records, res.KeysPerIndex["a_1"])
	}
	// Run again, it commits with the index maintained.
	txn = mustBegin(t, fe[1])
	if _, _, err := fe[1].Insert("test", "tx", []bson.Raw{ext(t, `{"_id": 1, "a": 1}`)}, true, WriteOptions{Txn: txn}); err != nil {
		t.Fatal(err)
	}
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	if res := mustValidate(t, fe[0], "tx"); res.Records != 2 || res.KeysPerIndex["a_1"] != 2 {
		t.Errorf("after the retry: %d documents, %d keys", res.Records, res.KeysPerIndex["a_1"])
	}
}

// TestFrontendsMultikeyKnownBeforeTheWrite makes an index multikey through
// one frontend: when the write returns, the other frontend already plans
// with the index as multikey, so a range query whose bounds it must not
// intersect finds the array document there at once.
func TestFrontendsMultikeyKnownBeforeTheWrite(t *testing.T) {
	fe := openFrontends(t, 2, time.Second)
	mustCreateIndex(t, fe[0], "mk", `{"a": 1}`, false)
	if _, _, err := fe[0].Insert("test", "mk", []bson.Raw{ext(t, `{"_id": 0, "a": 9}`)}, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if fe[0].Collection("test", "mk").FindIndex("a_1").Multikey() {
		t.Fatal("multikey before any array")
	}
	if _, _, err := fe[1].Insert("test", "mk", []bson.Raw{ext(t, `{"_id": 1, "a": [1, 5]}`)}, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if !fe[0].Collection("test", "mk").FindIndex("a_1").Multikey() {
		t.Fatal("the other frontend does not know the index is multikey")
	}
	cur, err := fe[0].Find("test", "mk", FindOptions{Filter: ext(t, `{"a": {"$gt": 2, "$lt": 4}}`)})
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	doc, err := cur.Next()
	if err != nil || doc == nil || doc.Lookup("_id").Int32() != 1 {
		t.Fatalf("range query through the other frontend: %v, %v", doc, err)
	}
}

// TestFrontendsDropDatabase drops a database through one frontend: the
// other no longer lists it when the drop returns, and none of its data is
// left in the store.
func TestFrontendsDropDatabase(t *testing.T) {
	fe := openFrontends(t, 2, time.Second)
	var ids []uint32
	for i := range 3 {
		coll := fmt.Sprintf("c%d", i)
		if _, _, err := fe[0].Insert("dd", coll, []bson.Raw{ext(t, `{"_id": 1, "a": 1}`)}, true, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := fe[0].CreateIndexes("dd", coll, []IndexSpec{{Key: ext(t, `{"a": 1}`), ExpireAfter: -1}}, nil); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, fe[0].Collection("dd", coll).ID)
	}
	if err := fe[1].DropDatabase("dd"); err != nil {
		t.Fatal(err)
	}
	if dbs := fe[0].Databases(); len(dbs) != 0 {
		t.Errorf("databases after the drop: %v", dbs)
	}
	awaitGarbage(t, fe[1])
	for _, id := range ids {
		for _, span := range []func(uint32) ([]byte, []byte){docSpan, collIndexSpan} {
			lo, hi := span(id)
			if n := countKeys(t, fe[0], lo, hi); n != 0 {
				t.Errorf("collection %d: %d keys left", id, n)
			}
		}
	}
}

// TestFrontendsGarbageOfAStoppedDropper drops a collection's catalog entry
// as a frontend that stops before removing the data would: the holder of
// the jobs lease removes it.
func TestFrontendsGarbageOfAStoppedDropper(t *testing.T) {
	fe := openFrontends(t, 2, 200*time.Millisecond)
	if _, _, err := fe[0].Insert("test", "g", []bson.Raw{ext(t, `{"_id": 1}`)}, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	c := fe[1].Collection("test", "g")
	fe[1].cat.mu.Lock()
	_, err := fe[1].dropLocked([]*Collection{c}, "")
	fe[1].cat.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := docSpan(c.ID)
	if err := awaitCond(3*time.Second, "the dropped collection's data was not removed by the jobs lease holder", func() bool {
		return countKeys(t, fe[0], lo, hi) == 0 && countKeys(t, fe[0], keyGarbagePrefix, []byte{spaceMeta, 'g', 'c', 1}) == 0
	}); err != nil {
		t.Fatal(err)
	}
}

// TestFrontendsAbandonedBuildRetired leaves an index half built by a
// frontend that then stops: a request for the same index through another
// frontend waits for that build, the jobs-lease holder retires it, and
// the waiting request then builds the index.
func TestFrontendsAbandonedBuildRetired(t *testing.T) {
	fe := openFrontends(t, 2, 200*time.Millisecond)
	if !fe[0].RunsJobs() {
		t.Fatal("the first frontend does not hold the jobs lease")
	}
	if _, _, err := fe[1].Insert("test", "ab", []bson.Raw{ext(t, `{"_id": 1, "a": 1}`)}, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	c := fe[1].Collection("test", "ab")
	ix, err := newIndex(0, IndexSpec{Key: ext(t, `{"a": 1}`), ExpireAfter: -1})
	if err != nil {
		t.Fatal(err)
	}
	ix.state, ix.builder = stateDeleteOnly, fe[1].frontendID
	if _, err := fe[1].changeIndexes(c, nil, []*Index{ix}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := fe[1].moveIndexes(c, []uint32{ix.ID}, stateDeleteOnly, stateWriteOnly, nil); err != nil {
		t.Fatal(err)
	}
	// the same index requested through the other frontend waits for the
	// build under way
	joined := make(chan error, 1)
	go func() {
		_, err := fe[0].CreateIndexes("test", "ab", []IndexSpec{{Key: ext(t, `{"a": 1}`), ExpireAfter: -1}}, nil)
		joined <- err
	}()
	stillWaiting(t, joined)
	if err := fe[1].Close(); err != nil { // stops midway
		t.Fatal(err)
	}
	// once the abandoned build is retired, the waiting request builds it
	select {
	case err := <-joined:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the abandoned build was not retired, or its waiter did not build the index")
	}
	if res := mustValidate(t, fe[0], "ab"); res.KeysPerIndex["a_1"] != 1 {
		t.Errorf("a_1 holds %d keys, want 1", res.KeysPerIndex["a_1"])
	}
}

// TestFrontendsSameIndexJoins: a createIndexes of an index another
// frontend is building waits for that build and succeeds (MongoDB's
// createIndexes joins the build under way) instead of failing with
// IndexBuildAlreadyInProgress; an error from its progress (its operation
// interrupted) ends the wait, and the build goes on.
func TestFrontendsSameIndexJoins(t *testing.T) {
	fe := openFrontends(t, 2, 3*time.Second)
	insertTwoBuildBatches(t, fe[0], "sj")
	started, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	built := make(chan error, 1)
	go func() {
		_, err := fe[0].CreateIndexes("test", "sj", []IndexSpec{{Key: ext(t, `{"a": 1}`), ExpireAfter: -1}}, func(done, total int64) error {
			once.Do(func() { close(started); <-release })
			return nil
		})
		built <- err
	}()
	<-started
	interrupted := errors.New("interrupted")
	polls := 0
	_, err := fe[1].CreateIndexes("test", "sj", []IndexSpec{{Key: ext(t, `{"a": 1}`), Name: "a_1", ExpireAfter: -1}}, func(done, total int64) error {
		if polls++; polls == 3 {
			return interrupted
		}
		return nil
	})
	if !errors.Is(err, interrupted) {
		t.Fatalf("an interrupted wait: %v", err)
	}
	joined := make(chan error, 1)
	go func() {
		_, err := fe[1].CreateIndexes("test", "sj", []IndexSpec{{Key: ext(t, `{"a": 1}`), ExpireAfter: -1}}, nil)
		joined <- err
	}()
	stillWaiting(t, joined)
	close(release)
	for _, ch := range []chan error{built, joined} {
		if err := <-ch; err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range fe {
		if n := len(e.Collection("test", "sj").Indexes()); n != 1 {
			t.Errorf("%d secondary indexes, want 1", n)
		}
	}
	if res := mustValidate(t, fe[1], "sj"); res.KeysPerIndex["a_1"] != 2*indexBuildBatch {
		t.Errorf("a_1 holds %d keys, want %d", res.KeysPerIndex["a_1"], 2*indexBuildBatch)
	}
}

// stillWaiting fails the test if the createIndexes whose result joined
// receives returns within 100 ms: it should be waiting for another
// frontend's build of its index.
func stillWaiting(t *testing.T, joined <-chan error) {
	t.Helper()
	select {
	case err := <-joined:
		t.Fatalf("createIndexes returned while another frontend builds the index: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
}

// insertTwoBuildBatches inserts into test.coll through e two index build
// batches of documents {_id: i, a: i}, so that a build of {a: 1} reports
// its progress once in the middle.
func insertTwoBuildBatches(t *testing.T, e *Engine, coll string) {
	t.Helper()
	var batch []bson.Raw
	for i := range 2 * indexBuildBatch {
		batch = append(batch, ext(t, fmt.Sprintf(`{"_id": %d, "a": %d}`, i, i)))
	}
	if _, _, err := e.Insert("test", coll, batch, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// awaitCond polls cond every 10 ms until it holds, or fails with what
// once within has passed.
func awaitCond(within time.Duration, what string, cond func() bool) error {
	for deadline := time.Now().Add(within); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			return errors.New(what)
		}
	}
	return nil
}

// TestLeaseLapseWaits lets a frontend's lease run out in the middle of a
// backfill and starts an insert meanwhile: the build's next batch and the
// insert wait for the renewal rather than fail, and both go on once a
// heartbeat succeeds; the index then holds every document's entry.
func TestLeaseLapseWaits(t *testing.T) {
	const lease = 2 * time.Second // the waits end after a second
	e := openFrontends(t, 1, lease)[0]
	insertTwoBuildBatches(t, e, "c")
	lapsed := make(chan struct{})
	built := make(chan error, 1)
	go func() {
		held := false
		_, err := e.CreateIndexes("test", "c", []IndexSpec{{Key: ext(t, `{"a": 1}`), ExpireAfter: -1}}, func(done, total int64) error {
			if held || done == 0 || done == total {
				return nil
			}
			held = true
			e.pauseHeartbeat.Store(true)
			err := awaitCond(3*lease, "the lease did not lapse", func() bool { return e.checkLease() != nil })
			close(lapsed)
			return err
		})
		built <- err
	}()
	<-lapsed
	inserted := make(chan error, 1)
	go func() {
		_, _, err := e.Insert("test", "c", []bson.Raw{ext(t, `{"_id": "late", "a": -1}`)}, true, WriteOptions{})
		inserted <- err
	}()
	if err := awaitCond(lease/4, "the build and the insert do not both wait for the lease", func() bool { return e.leaseWaiters.Load() == 2 }); err != nil {
		t.Fatal(err)
	}
	if err := e.heartbeat(); err != nil {
		t.Fatal(err)
	}
	e.pauseHeartbeat.Store(false)
	if err := <-built; err != nil {
		t.Fatalf("the build across the lapse: %v", err)
	}
	if err := <-inserted; err != nil {
		t.Fatalf("the insert during the lapse: %v", err)
	}
	if res := mustValidate(t, e, "c"); res.Records != 2*indexBuildBatch+1 || res.KeysPerIndex["a_1"] != res.Records {
		t.Errorf("a_1 holds %d keys for %d documents, want %d", res.KeysPerIndex["a_1"], res.Records, 2*indexBuildBatch+1)
	}
}

// TestFrontendsLeaseLapseDuringBuild lets the building frontend's lease
// run out in the middle of its backfill, and holds the jobs-lease holder's
// retirement of the abandoned build in its middle (delete-only, waiting
// for a third frontend to load it): the builder's next batch waits half a
// lease for a renewal that does not come, then fails with the retryable
// NotWritablePrimary, and its own retirement of the build,
// which finds it moved on, leaves it to the other frontend and says
// nothing of it. Once the lease is renewed, the same createIndexes builds
// the index whole.
func TestFrontendsLeaseLapseDuringBuild(t *testing.T) {
	// long enough that no lease lapses on its own on a busy machine; the
	// lagging frontend's, five times longer, keeps it live (and so the
	// retirement at its first step) until the build has failed: the build
	// waits up to half a lease for its own lease, then fails. With one
	// lease for all, CI once saw the lagging lease expire first.
	const lease = 3 * time.Second
	fe := openFrontendsLeased(t, lease, lease, 5*lease)
	if !fe[0].RunsJobs() {
		t.Fatal("the first frontend does not hold the jobs lease")
	}
	builder, lagging := fe[1], fe[2]
	insertTwoBuildBatches(t, builder, "c")
	spec := []IndexSpec{{Key: ext(t, `{"a": 1}`), ExpireAfter: -1}}
	held := false
	_, err := builder.CreateIndexes("test", "c", spec, func(done, total int64) error {
		if held || done == 0 || done == total {
			return nil
		}
		held = true
		builder.pauseHeartbeat.Store(true)
		if err := awaitCond(3*lease, "the builder's lease did not lapse", func() bool { return builder.checkLease() != nil }); err != nil {
			return err
		}
		lagging.pauseHeartbeat.Store(true)
		return awaitCond(3*lease, "the jobs-lease holder did not start retiring the build", func() bool {
			b := fe[0].Collection("test", "c").Building()
			return len(b) == 1 && b[0].state == stateDeleteOnly
		})
	})
	if !held {
		t.Fatalf("the backfill reported no progress: %v", err)
	}
	if !mongoerr.Is(err, mongoerr.NotWritablePrimary) || strings.Contains(err.Error(), "changed state") {
		t.Fatalf("build across a lapsed lease: %v, want NotWritablePrimary alone", err)
	}
	if b := fe[0].Collection("test", "c").Building(); len(b) != 1 || b[0].state != stateDeleteOnly {
		t.Fatal("the jobs-lease holder's retirement went on before the build failed")
	}
	lagging.pauseHeartbeat.Store(false)
	builder.pauseHeartbeat.Store(false)
	if err := awaitCond(3*lease, "the retirement did not reach every frontend", func() bool {
		return len(fe[0].Collection("test", "c").Building())+len(builder.Collection("test", "c").Building()) == 0
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := builder.CreateIndexes("test", "c", spec, nil); err != nil {
		t.Fatalf("the retried build: %v", err)
	}
	for i, e := range fe {
		if res := mustValidate(t, e, "c"); res.KeysPerIndex["a_1"] != res.Records {
			t.Errorf("frontend %d: a_1 holds %d keys for %d documents", i, res.KeysPerIndex["a_1"], res.Records)
		}
	}
}

// TestFrontendsBuildPublicBeforeShutdown shuts a building frontend down
// while it waits for a lagging frontend to load the build's last state
// (public), already committed: the build returns InterruptedAtShutdown
// and nothing else, and leaves the index built rather than retiring it
// from the state it was in before.
func TestFrontendsBuildPublicBeforeShutdown(t *testing.T) {
	const lease = 4 * time.Second // the lagging frontend stays live meanwhile
	fe := openFrontends(t, 2, lease)
	builder, lagging := fe[0], fe[1]
	insertTwoBuildBatches(t, builder, "c")
	closed := make(chan error, 1)
	spec := []IndexSpec{{Key: ext(t, `{"a": 1}`), ExpireAfter: -1}}
	_, err := builder.CreateIndexes("test", "c", spec, func(done, total int64) error {
		if done == 0 || done != total {
			return nil
		}
		lagging.pauseHeartbeat.Store(true)
		go func() {
			for builder.Collection("test", "c").FindIndex("a_1") == nil {
				time.Sleep(5 * time.Millisecond)
			}
			closed <- builder.Close()
		}()
		return nil
	})
	if !mongoerr.Is(err, mongoerr.InterruptedAtShutdown) || strings.Contains(err.Error(), "changed state") {
		t.Fatalf("build cut short after turning public: %v, want InterruptedAtShutdown alone", err)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	lagging.pauseHeartbeat.Store(false)
	if err := awaitCond(3*lease, "the other frontend never saw the index", func() bool {
		return lagging.Collection("test", "c").FindIndex("a_1") != nil
	}); err != nil {
		t.Fatal(err)
	}
	if res := mustValidate(t, lagging, "c"); res.KeysPerIndex["a_1"] != res.Records {
		t.Errorf("a_1 holds %d keys for %d documents", res.KeysPerIndex["a_1"], res.Records)
	}
}

// TestFrontendsValidatorChange: once collMod's validator returns on one
// frontend, every frontend enforces it, and a frontend restarted later reads it.
func TestFrontendsValidatorChange(t *testing.T) {
	fe := openFrontends(t, 3, time.Hour)
	if err := fe[0].CreateCollection("test", "v", CollectionOptions{}); err != nil {
		t.Fatal(err)
	}
	insert := func(e *Engine, doc string) *mongoerr.Error {
		_, werrs, err := e.Insert("test", "v", []bson.Raw{ext(t, doc)}, true, WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(werrs) > 0 {
			return werrs[0].Err
		}
		return nil
	}
	if err := insert(fe[2], `{"_id": 1, "n": "one"}`); err != nil {
		t.Fatal(err)
	}
	if err := fe[1].ModifyValidation("test", "v", ValidationChange{Validator: ext(t, `{"n": {"$type": "int"}}`)}); err != nil {
		t.Fatal(err)
	}
	for i, e := range fe {
		if err := insert(e, fmt.Sprintf(`{"_id": %d, "n": "bad"}`, 10+i)); err == nil || err.Code != mongoerr.DocumentValidationFailure {
			t.Errorf("frontend %d: insert of an invalid document: %v, want 121", i, err)
		}
		if err := insert(e, fmt.Sprintf(`{"_id": %d, "n": 1}`, 20+i)); err != nil {
			t.Errorf("frontend %d: valid insert: %v", i, err)
		}
		if got := e.Collection("test", "v").CurrentOptions().Validator; len(got) == 0 {
			t.Errorf("frontend %d: no validator in the options", i)
		}
	}
	level := ValidationOff
	if err := fe[2].ModifyValidation("test", "v", ValidationChange{Level: &level}); err != nil {
		t.Fatal(err)
	}
	if err := insert(fe[0], `{"_id": 30, "n": "any"}`); err != nil {
		t.Errorf("validationLevel off set on another frontend: %v", err)
	}
}

// TestFrontendsSeeOthersInsertsPastDeletedHead: a frontend's index scans
// find an entry another frontend inserted among entries this one deleted
// (seek hints, which only a frontend's own writes invalidate, would skip
// it).
func TestFrontendsSeeOthersInsertsPastDeletedHead(t *testing.T) {
	fe := openFrontends(t, 2, time.Hour)
	if err := fe[0].CreateCollection("test", "pc", CollectionOptions{}); err != nil {
		t.Fatal(err)
	}
	mustCreateIndex(t, fe[0], "pc", `{"a": 1}`, false)
	var docs []bson.Raw
	for i := range 200 {
		docs = append(docs, ext(t, fmt.Sprintf(`{"_id": %d, "a": %d}`, i, i)))
	}
	if _, _, err := fe[0].Insert("test", "pc", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := fe[0].Delete("test", "pc", ext(t, `{"a": {"$lt": 150}}`), 0, bson.RawValue{}, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	filter := bson.D{{Key: "a", Value: bson.D{{Key: "$gte", Value: 0}}}}
	for range 3 { // scans over the deleted head
		if n := findAll(t, fe[0], filter); n != 50 {
			t.Fatalf("found %d, want 50", n)
		}
	}
	if _, _, err := fe[1].Insert("test", "pc", []bson.Raw{ext(t, `{"_id": 1000, "a": 10}`)}, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := findAll(t, fe[0], filter); n != 51 {
		t.Fatalf("after another frontend's insert: found %d, want 51", n)
	}
}

// TestFrontendsBackfillBatchCommitsLate holds a backfill batch after its
// lease check, before its commit, while the builder's lease lapses and
// the jobs-lease holder retires the abandoned build and removes its
// entries: the batch must then fail, not commit entries under the
// index's dead id that nothing would ever remove.
func TestFrontendsBackfillBatchCommitsLate(t *testing.T) {
	const lease = 500 * time.Millisecond
	fe := openFrontends(t, 2, lease)
	if !fe[0].RunsJobs() {
		t.Fatal("the first frontend does not hold the jobs lease")
	}
	builder := fe[1]
	if _, _, err := builder.Insert("test", "late", []bson.Raw{ext(t, `{"_id": 1, "a": 1}`), ext(t, `{"_id": 2, "a": 2}`)}, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	from := oplogEnd(t, fe[0])
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	builder.beforeBackfillCommit = func() {
		once.Do(func() {
			close(held)
			<-release
		})
	}
	built := make(chan error, 1)
	go func() {
		_, err := builder.CreateIndexes("test", "late", []IndexSpec{{Key: ext(t, `{"a": 1}`), ExpireAfter: -1}}, nil)
		built <- err
	}()
	<-held
	c := builder.Collection("test", "late")
	b := c.Building()
	if len(b) != 1 {
		t.Fatalf("%d indexes building, want 1", len(b))
	}
	lo, hi := indexSpan(c.ID, b[0].ID)
	builder.pauseHeartbeat.Store(true)
	err := awaitCond(10*lease, "the jobs-lease holder did not retire the abandoned build", func() bool {
		return len(fe[0].Collection("test", "late").Building()) == 0 &&
			countKeys(t, fe[0], keyGarbagePrefix, []byte{spaceMeta, 'g', 'c', 1}) == 0
	})
	close(release)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-built; err == nil {
		t.Fatal("the build whose lease lapsed succeeded")
	} else {
		t.Logf("the build: %v", err)
	}
	if n := countKeys(t, fe[0], lo, hi); n != 0 {
		t.Errorf("%d entries under the retired index's id", n)
	}
	// the build ends in the oplog with the retirement's abortIndexBuild
	want := []string{"startIndexBuild a_1", "abortIndexBuild a_1 276 IndexBuildAborted: index build abandoned: frontend " + builder.frontendID + " stopped renewing its lease"}
	if got := commandsLogged(t, fe[0], from); fe[0].oplog != nil && !slices.Equal(got, want) {
		t.Errorf("logged %q, want %q", got, want)
	}
	builder.pauseHeartbeat.Store(false)
}
