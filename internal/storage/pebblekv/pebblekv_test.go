package pebblekv

import (
	"bytes"
	"testing"

	"github.com/folio-db/folio/internal/storage"
)

// TestEstimateDiskUsage checks that flushed data has a size on disk within
// its key range and none outside it.
func TestEstimateDiskUsage(t *testing.T) {
	db, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	b := begin(t, db)
	val := bytes.Repeat([]byte("v"), 1000)
	for i := 0; i < 2000; i++ {
		if err := b.Set([]byte{'d', byte(i >> 8), byte(i)}, val); err != nil {
			t.Fatal(err)
		}
	}
	if err := commit(db, b, true); err != nil {
		t.Fatal(err)
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	in, err := db.EstimateDiskUsage([]byte{'d'}, []byte{'e'})
	if err != nil {
		t.Fatal(err)
	}
	// 2 MB of values compress well but not to nothing.
	if in < 1000 || in > 4<<20 {
		t.Errorf("range holding the data: %d bytes", in)
	}
	out, err := db.EstimateDiskUsage([]byte{'x'}, []byte{'y'})
	if err != nil {
		t.Fatal(err)
	}
	if out != 0 {
		t.Errorf("empty range: %d bytes", out)
	}
	if empty, _ := db.EstimateDiskUsage([]byte{'e'}, []byte{'d'}); empty != 0 {
		t.Errorf("reversed range: %d bytes", empty)
	}
}

// begin starts a transaction on db.
func begin(tb testing.TB, db *DB) storage.Txn {
	tb.Helper()
	tx, err := db.Begin()
	if err != nil {
		tb.Fatal(err)
	}
	return tx
}

// commit commits tx and, with sync, waits until it is durable.
func commit(db *DB, tx storage.Txn, sync bool) error {
	if err := tx.Commit(); err != nil || !sync {
		return err
	}
	return db.Sync()
}

// TestValueLen checks that the store's iterators (of the store and of a
// snapshot) tell each value's length without reading it, for values in
// the memtable and in tables, small ones kept inline and large ones kept
// in blob files.
func TestValueLen(t *testing.T) {
	db, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	want := map[string]int{}
	put := func(prefix byte) {
		b := begin(t, db)
		for i, n := range []int{0, 1, 100, 511, 512, 513, 4000, 70000} {
			k := []byte{prefix, byte(i)}
			want[string(k)] = n
			if err := b.Set(k, bytes.Repeat([]byte{byte(i)}, n)); err != nil {
				t.Fatal(err)
			}
		}
		if err := commit(db, b, true); err != nil {
			t.Fatal(err)
		}
	}
	put('a')
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	put('b') // stays in the memtable
	snap := db.NewSnapshot()
	defer snap.Close()
	for name, r := range map[string]storage.Reader{"store": db, "snapshot": snap} {
		it, err := r.NewIter(nil, []byte{'c'})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := it.(storage.ValueLener); !ok {
			t.Fatalf("%s: the iterator is not a ValueLener", name)
		}
		seen := 0
		for ok := it.First(); ok; ok = it.Next() {
			seen++
			if got := storage.ValueLen(it); got != want[string(it.Key())] {
				t.Errorf("%s: ValueLen at %q = %d, want %d", name, it.Key(), got, want[string(it.Key())])
			}
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		if seen != len(want) {
			t.Errorf("%s: %d keys, want %d", name, seen, len(want))
		}
	}
}
