package pebblekv

import (
	"fmt"
	"testing"
	"time"

	"github.com/folio-db/folio/internal/storage"
)

// scan reads up to max keys through it and returns how many it read and
// how many it stepped over without returning them.
func scan(t *testing.T, it storage.Iter, max int) (keys int, hidden uint64) {
	t.Helper()
	for ok := it.First(); ok && keys < max; ok = it.Next() {
		keys++
	}
	st := it.(*iter).Stats()
	hidden = st.InternalStats.PointCount - uint64(keys)
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	return keys, hidden
}

// compactions waits until the compactor is idle and returns how many
// compactions it finished.
func compactions(t *testing.T, c *compactor) int {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		c.mu.Lock()
		busy, ran := c.busy, c.ran
		c.mu.Unlock()
		if !busy {
			return ran
		}
		if time.Now().After(deadline) {
			t.Fatal("the compaction did not finish")
		}
	}
}

// TestHiddenKeysCompacted writes and deletes thousands of keys in a span,
// keeping ten: a scan that stops before its end asks for nothing, however
// many keys it stepped over; a whole scan, from a snapshot as the catalog
// is reloaded, has the span compacted; the next scan steps over none of
// the deleted keys, and asks for nothing.
func TestHiddenKeysCompacted(t *testing.T) {
	db, err := Open("", Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const n = 3000
	for i := range n {
		tx := begin(t, db)
		key := []byte(fmt.Sprintf("h%05d", i))
		if err := tx.Set(key, []byte("v")); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if i%(n/10) == 0 {
			continue // kept
		}
		tx = begin(t, db)
		if err := tx.Delete(key); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	lo, hi := []byte("h"), []byte("i")
	newIter := func() storage.Iter {
		it, err := db.NewIter(lo, hi)
		if err != nil {
			t.Fatal(err)
		}
		return it
	}
	if keys, hidden := scan(t, newIter(), 5); keys != 5 || hidden < hiddenMin {
		t.Fatalf("five keys: %d keys, %d hidden", keys, hidden)
	}
	if ran := compactions(t, db.compact); ran != 0 {
		t.Fatalf("%d compactions after a scan that stopped", ran)
	}
	snap := db.NewSnapshot()
	it, err := snap.NewIter(lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	keys, hidden := scan(t, it, n)
	if err := snap.Close(); err != nil {
		t.Fatal(err)
	}
	if keys != 10 || hidden < hiddenMin {
		t.Fatalf("whole span: %d keys, %d hidden", keys, hidden)
	}
	if ran := compactions(t, db.compact); ran != 1 {
		t.Fatalf("%d compactions after a whole scan", ran)
	}
	// A compaction that moved the span's table to the last level leaves
	// its tombstones to one of Pebble's own, which follows.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		keys, hidden := scan(t, newIter(), n)
		if keys != 10 {
			t.Fatalf("after the compaction: %d keys", keys)
		}
		if hidden == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the compaction: %d hidden\n%s", hidden, db.db.Metrics())
		}
		compactions(t, db.compact)
	}
	ran := compactions(t, db.compact)
	if keys, hidden := scan(t, newIter(), n); keys != 10 || hidden != 0 {
		t.Fatalf("after the compaction: %d keys, %d hidden", keys, hidden)
	}
	if again := compactions(t, db.compact); again != ran {
		t.Fatalf("a scan with nothing hidden compacted")
	}
}

// TestCloseDuringCompaction closes the store while a compaction it asked
// for may run.
func TestCloseDuringCompaction(t *testing.T) {
	db, err := Open("", Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	tx := begin(t, db)
	for i := range 2 * hiddenMin {
		if err := tx.Delete([]byte(fmt.Sprintf("h%05d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	it, err := db.NewIter([]byte("h"), []byte("i"))
	if err != nil {
		t.Fatal(err)
	}
	scan(t, it, 4*hiddenMin)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}
