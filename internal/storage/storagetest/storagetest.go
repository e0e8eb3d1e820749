// Package storagetest is the conformance suite of storage.KV: every
// implementation runs it, so the engine can rely on the same semantics on
// each (snapshot isolation, first committer wins, atomic commits).
package storagetest

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/folio-db/folio/internal/storage"
)

// Run runs the suite; open returns an empty store, closed by the test.
func Run(t *testing.T, open func(t *testing.T) storage.KV) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.fn(t, open(t)) })
	}
}

var cases = []struct {
	name string
	fn   func(t *testing.T, kv storage.KV)
}{
	{"TxnReadsOwnWrites", txnReadsOwnWrites},
	{"TxnSnapshot", txnSnapshot},
	{"TxnIterMergesWrites", txnIterMergesWrites},
	{"WriteWriteConflict", writeWriteConflict},
	{"BlindWriteConflicts", blindWriteConflicts},
	{"DisjointTxnsCommit", disjointTxnsCommit},
	{"RollbackDiscards", rollbackDiscards},
	{"SyncAfterCommits", syncAfterCommits},
	{"DeleteRange", deleteRange},
	{"ConcurrentIncrements", concurrentIncrements},
	{"SnapshotUnderCommits", snapshotUnderCommits},
	{"UnflushedSizes", unflushedSizes},
}

func set(t *testing.T, kv storage.KV, kvs ...string) {
	t.Helper()
	tx := begin(t, kv)
	for i := 0; i < len(kvs); i += 2 {
		must(t, tx.Set([]byte(kvs[i]), []byte(kvs[i+1])))
	}
	must(t, tx.Commit())
}

func begin(t *testing.T, kv storage.KV) storage.Txn {
	t.Helper()
	tx, err := kv.Begin()
	must(t, err)
	return tx
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, r storage.Reader, key string) string {
	t.Helper()
	v, ok, err := r.Get([]byte(key))
	must(t, err)
	if !ok {
		return "<absent>"
	}
	return string(v)
}

func scan(t *testing.T, r storage.Reader, lo, hi string) string {
	t.Helper()
	var lower, upper []byte
	if lo != "" {
		lower = []byte(lo)
	}
	if hi != "" {
		upper = []byte(hi)
	}
	it, err := r.NewIter(lower, upper)
	must(t, err)
	defer it.Close()
	var b bytes.Buffer
	for ok := it.First(); ok; ok = it.Next() {
		fmt.Fprintf(&b, "%s=%s ", it.Key(), it.Value())
	}
	must(t, it.Error())
	var back []string
	for ok := it.Last(); ok; ok = it.Prev() {
		back = append(back, string(it.Key()))
	}
	// Backward iteration must visit the same keys.
	var fwd []string
	for ok := it.First(); ok; ok = it.Next() {
		fwd = append(fwd, string(it.Key()))
	}
	for i := range back {
		if back[i] != fwd[len(fwd)-1-i] {
			t.Fatalf("backward %v, forward %v", back, fwd)
		}
	}
	return b.String()
}

func txnReadsOwnWrites(t *testing.T, kv storage.KV) {
	set(t, kv, "a", "1", "b", "2")
	tx := begin(t, kv)
	defer tx.Rollback()
	must(t, tx.Set([]byte("a"), []byte("10")))
	must(t, tx.Delete([]byte("b")))
	if got := get(t, tx, "a") + get(t, tx, "b"); got != "10<absent>" {
		t.Fatalf("own writes: %s", got)
	}
	if got := get(t, kv, "a"); got != "1" {
		t.Fatalf("uncommitted write visible outside: %s", got)
	}
}

func txnSnapshot(t *testing.T, kv storage.KV) {
	set(t, kv, "a", "1")
	tx := begin(t, kv)
	defer tx.Rollback()
	set(t, kv, "a", "2", "b", "3")
	if got := get(t, tx, "a") + get(t, tx, "b") + scan(t, tx, "", ""); got != "1<absent>a=1 " {
		t.Fatalf("snapshot sees later commit: %s", got)
	}
}

func txnIterMergesWrites(t *testing.T, kv storage.KV) {
	set(t, kv, "a", "1", "c", "3", "e", "5")
	tx := begin(t, kv)
	defer tx.Rollback()
	must(t, tx.Set([]byte("b"), []byte("2")))
	must(t, tx.Delete([]byte("c")))
	must(t, tx.Set([]byte("e"), []byte("50")))
	if got := scan(t, tx, "", ""); got != "a=1 b=2 e=50 " {
		t.Fatalf("merged scan: %s", got)
	}
	if got := scan(t, tx, "b", "e"); got != "b=2 " {
		t.Fatalf("bounded scan: %s", got)
	}
}

func writeWriteConflict(t *testing.T, kv storage.KV) {
	set(t, kv, "a", "1")
	t1, t2 := begin(t, kv), begin(t, kv)
	must(t, t1.Set([]byte("a"), []byte("from1")))
	must(t, t2.Set([]byte("a"), []byte("from2")))
	must(t, t2.Set([]byte("z"), []byte("from2")))
	must(t, t1.Commit())
	if err := t2.Commit(); !errors.Is(err, storage.ErrWriteConflict) {
		t.Fatalf("second committer: %v, want ErrWriteConflict", err)
	}
	if got := get(t, kv, "a") + get(t, kv, "z"); got != "from1<absent>" {
		t.Fatalf("after conflict: %s (the loser applied part of its writes)", got)
	}
	// A transaction begun after the winner's commit does not conflict.
	set(t, kv, "a", "3")
}

// blindWriteConflicts: a transaction that writes a key without reading it
// still loses to a commit of that key since it began (the engine's inserts
// check existence outside the transaction and rely on this).
func blindWriteConflicts(t *testing.T, kv storage.KV) {
	tx := begin(t, kv)
	set(t, kv, "k", "other")
	must(t, tx.Set([]byte("k"), []byte("txn")))
	if err := tx.Commit(); !errors.Is(err, storage.ErrWriteConflict) {
		t.Fatalf("txn writing a key committed since it began: %v, want ErrWriteConflict", err)
	}
	if got := get(t, kv, "k"); got != "other" {
		t.Fatalf("after conflict: %s", got)
	}
}

func disjointTxnsCommit(t *testing.T, kv storage.KV) {
	t1, t2 := begin(t, kv), begin(t, kv)
	must(t, t1.Set([]byte("x"), []byte("1")))
	must(t, t2.Set([]byte("y"), []byte("2")))
	// Reading a key another transaction writes is no conflict (snapshot
	// isolation, not serializability).
	get(t, t2, "x")
	must(t, t1.Commit())
	must(t, t2.Commit())
	if got := scan(t, kv, "", ""); got != "x=1 y=2 " {
		t.Fatalf("disjoint commits: %s", got)
	}
	// An empty transaction commits.
	must(t, begin(t, kv).Commit())
}

func rollbackDiscards(t *testing.T, kv storage.KV) {
	tx := begin(t, kv)
	must(t, tx.Set([]byte("r"), []byte("1")))
	must(t, tx.Rollback())
	must(t, tx.Rollback())
	if got := get(t, kv, "r"); got != "<absent>" {
		t.Fatalf("rolled back write visible: %s", got)
	}
	// A rolled back transaction does not make later ones conflict.
	set(t, kv, "r", "2")
}

// syncAfterCommits: Sync succeeds, with commits before it or none, and
// changes nothing a reader sees.
func syncAfterCommits(t *testing.T, kv storage.KV) {
	must(t, kv.Sync())
	set(t, kv, "s1", "1", "s2", "2")
	must(t, kv.Sync())
	must(t, kv.Sync())
	if got := scan(t, kv, "", ""); got != "s1=1 s2=2 " {
		t.Fatalf("after Sync: %s", got)
	}
}

func deleteRange(t *testing.T, kv storage.KV) {
	set(t, kv, "p1", "1", "p2", "2", "q1", "3")
	must(t, kv.DeleteRange([]byte("p"), []byte("q")))
	if got := scan(t, kv, "", ""); got != "q1=3 " {
		t.Fatalf("after DeleteRange: %s", got)
	}
}

// unflushedSizes checks, on a store that counts its unflushed writes in
// its disk usage estimates (storage.UnflushedGrouper), that data takes
// space in its group's range as soon as it is committed, and none in a
// range holding nothing. Other stores skip it.
func unflushedSizes(t *testing.T, kv storage.KV) {
	est, ok := storage.As[storage.DiskUsageEstimator](kv)
	g, grouped := storage.As[storage.UnflushedGrouper](kv)
	if !ok || !grouped {
		t.Skip("the store does not count unflushed writes in its estimates")
	}
	g.GroupUnflushed(func(key []byte) int {
		if len(key) >= 2 && key[0] == 'g' {
			return 2
		}
		return 0
	})
	set(t, kv, "g1a", "value", "g1b", "value", "g2", "v")
	n, err := est.EstimateDiskUsage([]byte("g1"), []byte("g2"))
	must(t, err)
	if n < uint64(len("g1a")+len("value")) {
		t.Errorf("the range of group g1 takes %d bytes", n)
	}
	n, err = est.EstimateDiskUsage([]byte("h"), []byte("i"))
	must(t, err)
	if n != 0 {
		t.Errorf("an empty range takes %d bytes", n)
	}
}

// concurrentIncrements is the engine's pattern: read, modify, commit, and
// retry on conflict. No increment may be lost.
func concurrentIncrements(t *testing.T, kv storage.KV) {
	const workers, each = 8, 50
	set(t, kv, "n", "0")
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				for {
					tx, err := kv.Begin()
					if err != nil {
						errs <- err
						return
					}
					v, _, err := tx.Get([]byte("n"))
					if err != nil {
						errs <- err
						return
					}
					var n int
					fmt.Sscan(string(v), &n)
					_ = tx.Set([]byte("n"), []byte(fmt.Sprint(n+1)))
					err = tx.Commit()
					if errors.Is(err, storage.ErrWriteConflict) {
						continue
					}
					if err != nil {
						errs <- err
						return
					}
					break
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := get(t, kv, "n"); got != fmt.Sprint(workers*each) {
		t.Fatalf("counter %s after %d increments", got, workers*each)
	}
}

// snapshotUnderCommits: transactions read two keys that every writer
// changes together (their sum is constant), with commits landing between
// Begin and the reads and between the reads, by point reads and by
// iteration; each must see the sum.
func snapshotUnderCommits(t *testing.T, kv storage.KV) {
	const total = 1000
	set(t, kv, "a", "500", "b", "500")
	num := func(v []byte) int {
		var n int
		fmt.Sscan(string(v), &n)
		return n
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 2 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				tx, err := kv.Begin()
				if err != nil {
					errs <- err
					return
				}
				a, _, _ := tx.Get([]byte("a"))
				b, _, _ := tx.Get([]byte("b"))
				d := (i+w)%7 - 3
				_ = tx.Set([]byte("a"), []byte(fmt.Sprint(num(a)+d)))
				_ = tx.Set([]byte("b"), []byte(fmt.Sprint(num(b)-d)))
				if err := tx.Commit(); err != nil && !errors.Is(err, storage.ErrWriteConflict) {
					errs <- err
					return
				}
			}
		})
	}
	for r := range 200 {
		tx, err := kv.Begin()
		must(t, err)
		for range r % 3 {
			runtime.Gosched() // let commits land after Begin
		}
		a := get(t, tx, "a")
		runtime.Gosched()
		b := get(t, tx, "b")
		if num([]byte(a))+num([]byte(b)) != total {
			t.Errorf("point reads see a=%s b=%s", a, b)
		}
		if r%2 == 0 {
			it, err := tx.NewIter(nil, nil)
			must(t, err)
			sum := 0
			for ok := it.First(); ok; ok = it.Next() {
				runtime.Gosched()
				sum += num(it.Value())
			}
			must(t, it.Close())
			if sum != total {
				t.Errorf("iteration sums to %d, point reads a=%s b=%s", sum, a, b)
			}
		}
		must(t, tx.Rollback())
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
