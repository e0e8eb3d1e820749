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
