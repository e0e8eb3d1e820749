package pebblekv

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/folio-db/folio/internal/storage"
)

// testGroup groups keys beginning with 'a' by their first two bytes and
// those beginning with 'b' by their first byte; others are not counted.
func testGroup(key []byte) int {
	switch {
	case len(key) == 0:
		return 0
	case key[0] == 'a':
		return 2
	case key[0] == 'b':
		return 1
	}
	return 0
}

func estimate(t *testing.T, db *DB, lower, upper string) uint64 {
	t.Helper()
	n, err := db.EstimateDiskUsage([]byte(lower), []byte(upper))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func setAll(t *testing.T, db *DB, kvs ...string) {
	t.Helper()
	tx := begin(t, db)
	for i := 0; i < len(kvs); i += 2 {
		if err := tx.Set([]byte(kvs[i]), []byte(kvs[i+1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestUnflushedEstimates checks that the bytes committed and not flushed
// count in the estimates of the ranges holding their groups wholly, and
// only there; that a failed commit counts nothing; that a flush hands
// them over to the tables' estimate; and that a range deletion stops them
// counting.
func TestUnflushedEstimates(t *testing.T) {
	db, err := Open("", Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	setAll(t, db, "a1x", "12345")
	if n := estimate(t, db, "a", "b"); n != 0 {
		t.Fatalf("counted %d bytes before a grouping was set", n)
	}
	db.GroupUnflushed(testGroup)
	setAll(t, db, "a1x", "123", "a1yy", "1", "a2", "12345678", "b1", "1", "b22", "", "c", "123456")
	for _, c := range []struct {
		lower, upper string
		want         uint64
	}{
		{"a1", "a2", 3 + 3 + 4 + 1},           // group a1
		{"a", "b", 3 + 3 + 4 + 1 + 2 + 8},     // a1 and a2
		{"a2", "a3", 2 + 8},                   // a2: its prefix is a key of it
		{"a1x", "a2", 0},                      // a1 is not wholly inside
		{"a1", "a1y", 0},                      // nor here
		{"a", "a2", 3 + 3 + 4 + 1},            // a2 starts at the upper bound
		{"b", "c", 2 + 1 + 3},                 // b: the deletion-free keys of b
		{"a", "z", 3 + 3 + 4 + 1 + 2 + 8 + 6}, // c is not counted
		{"c", "d", 0},
	} {
		if got := estimate(t, db, c.lower, c.upper); got != c.want {
			t.Errorf("[%s, %s): %d bytes, want %d", c.lower, c.upper, got, c.want)
		}
	}

	// A deletion counts its key; a commit that fails counts nothing.
	tx := begin(t, db)
	if err := tx.Delete([]byte("b1")); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := estimate(t, db, "b", "c"); got != 2+1+3+2 {
		t.Errorf("after a deletion: %d bytes", got)
	}
	loser := begin(t, db)
	if err := loser.Set([]byte("b1"), []byte("lost")); err != nil {
		t.Fatal(err)
	}
	setAll(t, db, "b1", "won")
	if err := loser.Commit(); err != storage.ErrWriteConflict {
		t.Fatalf("commit: %v, want a write conflict", err)
	}
	if got := estimate(t, db, "b", "c"); got != 2+1+3+2+2+3 {
		t.Errorf("after a failed commit: %d bytes", got)
	}

	// A range deletion forgets the groups it covers wholly only.
	if err := db.DeleteRange([]byte("a1"), []byte("a2")); err != nil {
		t.Fatal(err)
	}
	if got := estimate(t, db, "a", "b"); got != 2+8 {
		t.Errorf("after deleting a1: %d bytes in a", got)
	}
	if err := db.DeleteRange([]byte("b1"), []byte("b3")); err != nil {
		t.Fatal(err)
	}
	if got := estimate(t, db, "b", "c"); got == 0 {
		t.Error("a range deletion inside group b forgot it")
	}

	// A flush writes the rest to tables: nothing is left counted twice.
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := db.unflushed.sum(nil, nil); n != 0 {
		t.Errorf("%d bytes still counted after a flush", n)
	}
	if len(db.unflushed.groups) != 0 {
		t.Errorf("groups kept after a flush: %d", len(db.unflushed.groups))
	}
	if got := estimate(t, db, "a", "z"); got == 0 {
		t.Error("the flushed data takes no space")
	}
}

// TestUnflushedGenerations checks the hand-over at a flush: the bytes
// committed before it began are dropped when it ends, those committed
// while it ran count until the next flush ends.
func TestUnflushedGenerations(t *testing.T) {
	db, err := Open("", Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	u := &unflushed{}
	u.setGroup(testGroup)
	batch := func(kvs ...string) *pebble.Batch {
		b := db.db.NewBatch()
		for i := 0; i < len(kvs); i += 2 {
			if err := b.Set([]byte(kvs[i]), []byte(kvs[i+1]), nil); err != nil {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() { b.Close() })
		return b
	}
	all := func() int64 { return u.sum(nil, nil) }
	u.add(batch("a1", "xx", "a1", "yy", "b", "z"), 1) // runs of one group: a1 twice, then b
	if got := all(); got != 4+4+2 {
		t.Fatalf("%d bytes, want 10", got)
	}
	u.flushBegan(pebble.FlushInfo{})
	u.add(batch("a2", "123"), 1)
	if got := all(); got != 15 {
		t.Fatalf("during the flush: %d bytes, want 15", got)
	}
	u.flushEnded(pebble.FlushInfo{})
	if got, in := all(), u.sum([]byte("a2"), []byte("a3")); got != 5 || in != 5 {
		t.Fatalf("after the flush: %d bytes, %d of them in a2; want 5", got, in)
	}
	if len(u.groups) != 1 {
		t.Fatalf("groups left: %d, want a2 alone", len(u.groups))
	}
	u.flushBegan(pebble.FlushInfo{})
	u.flushEnded(pebble.FlushInfo{})
	if got := all(); got != 0 || len(u.groups) != 0 {
		t.Fatalf("after the next flush: %d bytes in %d groups", got, len(u.groups))
	}

	// A commit Pebble failed to apply is taken back, from whichever
	// generation a flush beginning meanwhile moved it to.
	b := batch("a1", "x", "a3", "yy")
	u.add(b, 1)
	u.flushBegan(pebble.FlushInfo{})
	u.add(b, -1)
	u.add(batch("a4", "z"), -1) // never counted: nothing to take
	if got := all(); got != 0 {
		t.Fatalf("after taking a commit back: %d bytes", got)
	}
}

// TestUnflushedConcurrent commits, estimates, deletes ranges and flushes
// at once (run with -race): the counts end at what the tables hold.
func TestUnflushedConcurrent(t *testing.T) {
	db, err := Open("", Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.GroupUnflushed(testGroup)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 300 {
				tx := begin(t, db)
				k := fmt.Sprintf("a%c%d", '0'+w, i)
				if err := tx.Set([]byte(k), bytes.Repeat([]byte("v"), 100)); err != nil {
					t.Error(err)
					return
				}
				if err := tx.Commit(); err != nil {
					t.Error(err)
					return
				}
				if _, err := db.EstimateDiskUsage([]byte("a"), []byte("b")); err != nil {
					t.Error(err)
					return
				}
				switch {
				case w == 0 && i%50 == 0:
					if err := db.Flush(); err != nil {
						t.Error(err)
						return
					}
				case w == 1 && i%70 == 0:
					if err := db.DeleteRange([]byte("a1"), []byte("a2")); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	// Every commit was counted before the last flush began.
	if n := db.unflushed.sum(nil, nil); n != 0 {
		t.Errorf("%d bytes counted after the last flush", n)
	}
}
