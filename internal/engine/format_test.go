package engine

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/folio-db/folio/internal/storage/testkv"
)

// TestStoreFormat: a store gets this build's format when opened, whether
// new or of an earlier format (none recorded), and a store of a later
// format is refused before anything is read from it.
func TestStoreFormat(t *testing.T) {
	kv := testkv.Open(t)
	setFormat := func(v []byte) {
		t.Helper()
		tx, err := kv.Begin()
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		if v == nil {
			err = tx.Delete(keyStoreFormat)
		} else {
			err = tx.Set(keyStoreFormat, v)
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	format := func() uint64 {
		t.Helper()
		v, ok, err := kv.Get(keyStoreFormat)
		if err != nil || !ok || len(v) != 8 {
			t.Fatalf("format %x, %v, %v", v, ok, err)
		}
		return binary.BigEndian.Uint64(v)
	}
	reopen := func() error {
		e, err := Open(kv, Options{})
		if err == nil {
			e.Close()
		}
		return err
	}
	if err := reopen(); err != nil {
		t.Fatal(err)
	}
	if got := format(); got != storeFormat {
		t.Fatalf("a new store's format: %d, want %d", got, storeFormat)
	}
	for _, earlier := range [][]byte{nil, binary.BigEndian.AppendUint64(nil, 1)} {
		setFormat(earlier)
		if err := reopen(); err != nil {
			t.Fatal(err)
		}
		if got := format(); got != storeFormat {
			t.Fatalf("format after opening a store of format %x: %d, want %d", earlier, got, storeFormat)
		}
	}
	setFormat(binary.BigEndian.AppendUint64(nil, storeFormat+1))
	err := reopen()
	if err == nil || !strings.Contains(err.Error(), "format 3, written by a later Folio") {
		t.Fatalf("opening a store of a later format: %v", err)
	}
	if got := format(); got != storeFormat+1 {
		t.Fatalf("the refused store's format became %d", got)
	}
}
