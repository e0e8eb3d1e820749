package pebblekv

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/folio-db/folio/internal/storage"
)

// stampValue is a stamped value of 8 bytes: the stamp alone.
type stampValue struct{}

func (stampValue) AppendValue(dst []byte) ([]byte, int) {
	return append(dst, make([]byte, 8)...), 0
}

func (v stampValue) Join(storage.StampedValue) storage.StampedValue { return v }

// Each InsertStampRef value gets, at its offset, the stamp its commit gave
// the stamped write staged just before it, and the value read back (from
// the row cache or from Pebble) is the one written.
func TestInsertStampRef(t *testing.T) {
	db, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	rt := tx.(storage.StampRefTxn)
	if err := rt.InsertStampRef([]byte("k0"), make([]byte, 8), nil, 0); err == nil {
		t.Fatal("a reference without a stamped write before it was taken")
	}
	for i := range 3 {
		if err := rt.SetStamped([]byte("o"), stampValue{}); err != nil {
			t.Fatal(err)
		}
		if err := rt.InsertStampRef([]byte{'k', byte('1' + i)}, []byte("head........"), []byte("tail"), 4); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	it, err := db.NewIter([]byte("o"), []byte("p"))
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	i := 0
	for ok := it.First(); ok; ok = it.Next() {
		stamp := binary.BigEndian.Uint64(it.Key()[1:])
		v, found, err := db.Get([]byte{'k', byte('1' + i)})
		if err != nil || !found {
			t.Fatalf("k%d: %v, %v", i+1, found, err)
		}
		if !bytes.HasPrefix(v, []byte("head")) || !bytes.HasSuffix(v, []byte("tail")) || binary.LittleEndian.Uint64(v[4:]) != stamp {
			t.Fatalf("k%d = %q, want the stamp %d in it", i+1, v, stamp)
		}
		i++
	}
	if i != 3 {
		t.Fatalf("%d stamped keys", i)
	}
}
