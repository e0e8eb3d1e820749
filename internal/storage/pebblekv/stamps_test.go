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

// chainValue is a stamped value of 16 bytes: its stamp, then the stamp of
// the chain's value before it.
type chainValue struct{ first bool }

func (chainValue) AppendValue(dst []byte) ([]byte, int) {
	return append(dst, make([]byte, 16)...), 0
}

func (v chainValue) Join(storage.StampedValue) storage.StampedValue { return v }

func (v chainValue) PrevStampAt() int {
	if v.first {
		return -1
	}
	return 8
}

// The values of a chain get consecutive stamped keys, each holding the
// stamp of the one before it; a value after the first without room for
// it is refused.
func TestSetStampedChain(t *testing.T) {
	db, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var commitStamps []uint64
	for range 2 {
		tx, err := db.Begin()
		if err != nil {
			t.Fatal(err)
		}
		ct := tx.(storage.StampChainTxn)
		if err := ct.SetStamped([]byte("o"), stampValue{}); err != nil {
			t.Fatal(err)
		}
		if err := ct.SetStampedChain([]byte("o"), []storage.ChainedValue{chainValue{first: true}, chainValue{}, chainValue{}}); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		commitStamps = append(commitStamps, ct.CommitStamp())
	}
	it, err := db.NewIter([]byte("o"), []byte("p"))
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var stamps []uint64
	var prevs []uint64
	for ok := it.First(); ok; ok = it.Next() {
		v := it.Value()
		stamp := binary.BigEndian.Uint64(it.Key()[1:])
		if binary.LittleEndian.Uint64(v) != stamp {
			t.Fatalf("value of %d holds stamp %d", stamp, binary.LittleEndian.Uint64(v))
		}
		stamps = append(stamps, stamp)
		if len(v) == 16 {
			prevs = append(prevs, binary.LittleEndian.Uint64(v[8:]))
		} else {
			prevs = append(prevs, 0)
		}
	}
	if len(stamps) != 8 {
		t.Fatalf("%d stamped keys", len(stamps))
	}
	for i, base := range []int{0, 4} {
		if commitStamps[i] != stamps[base+3] {
			t.Fatalf("commit %d: CommitStamp %d, its last stamped key %d", i, commitStamps[i], stamps[base+3])
		}
		// the plain value, then the chain: first holds no previous stamp
		if prevs[base+1] != 0 || prevs[base+2] != stamps[base+1] || prevs[base+3] != stamps[base+2] {
			t.Fatalf("chain from %d: stamps %v, previous stamps %v", base, stamps, prevs)
		}
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := tx.(storage.StampChainTxn).SetStampedChain([]byte("o"), []storage.ChainedValue{chainValue{first: true}, chainValue{first: true}}); err == nil {
		t.Fatal("a chained value without room for the previous stamp was taken")
	}
}

// A commit's stamp is durable once a Sync after it returns, not before;
// in memory, where nothing is ever on disk, every stamp applied is.
func TestDurableStamp(t *testing.T) {
	for _, inMemory := range []bool{false, true} {
		db, err := Open(t.TempDir(), Options{InMemory: inMemory})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		tx, err := db.Begin()
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.(storage.StampedTxn).SetStamped([]byte("o"), stampValue{}); err != nil {
			t.Fatal(err)
		}
		_, moved := db.DurableStamp()
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		last, _ := db.LastStamp()
		if durable, _ := db.DurableStamp(); inMemory && durable != last || !inMemory && durable >= last {
			t.Fatalf("in memory %v: durable stamp %d after a commit stamped %d, before a sync", inMemory, durable, last)
		}
		if err := db.Sync(); err != nil {
			t.Fatal(err)
		}
		if durable, _ := db.DurableStamp(); durable != last {
			t.Fatalf("in memory %v: durable stamp %d after a sync, want %d", inMemory, durable, last)
		}
		select {
		case <-moved:
		default:
			t.Fatalf("in memory %v: the durable stamp moved and its channel is open", inMemory)
		}
	}
}
