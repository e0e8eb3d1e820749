package engine

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/storage"
)

// TestStatsBeforeFlush checks that a collection's sizes count its data as
// soon as it is committed, before the store writes any table (a fresh
// Pebble store flushes its memtable only once it is full), and that a
// dropped index's and collection's ranges stop counting once removed.
func TestStatsBeforeFlush(t *testing.T) {
	e := newTestEngine(t)
	if _, ok := storage.As[storage.UnflushedGrouper](e.kv); !ok {
		t.Skip("the store does not estimate the size of unflushed data")
	}
	docs := make([]bson.Raw, 100)
	for i := range docs {
		docs[i] = ext(t, fmt.Sprintf(`{"_id": %d, "x": %d, "s": "some text to take room"}`, i, i))
	}
	if _, _, err := e.Insert("test", "c", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	mustCreateIndex(t, e, "c", `{"x": 1}`, false)
	c := e.Collection("test", "c")
	st, err := e.Stats(c)
	if err != nil {
		t.Fatal(err)
	}
	if st.StorageSize < st.Size {
		// keys and values as committed: at least the documents' BSON
		t.Errorf("storageSize %d, below the documents' size %d", st.StorageSize, st.Size)
	}
	if len(st.IndexSizes) != 2 {
		t.Fatalf("index sizes %v", st.IndexSizes)
	}
	for _, ix := range st.IndexSizes {
		if ix.Size <= 0 {
			t.Errorf("index %s: size %d", ix.Name, ix.Size)
		}
	}
	if got := e.DiskSize(c); got < st.StorageSize+st.IndexSizes[1].Size {
		t.Errorf("DiskSize %d, below the documents' %d and the index's %d", got, st.StorageSize, st.IndexSizes[1].Size)
	}
	if e.oplog != nil && e.OplogDiskSize() <= 0 {
		t.Errorf("oplog size %d", e.OplogDiskSize())
	}

	ix := c.Indexes()[0]
	if _, err := e.DropIndexes("test", "c", []string{ix.Name}, nil); err != nil {
		t.Fatal(err)
	}
	lo, hi := indexSpan(c.ID, ix.ID)
	if n := e.diskUsage(lo, hi); n != 0 {
		t.Errorf("the dropped index's range takes %d bytes", n)
	}
	if _, err := e.DropCollection("test", "c"); err != nil {
		t.Fatal(err)
	}
	// A collection whose documents insert entries refer to is removed
	// in the background.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		n := e.DiskSize(c)
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the dropped collection's ranges take %d bytes", n)
		}
	}
}

// TestSizeGroups checks that the key ranges the size estimates ask for
// are unions of sizeGroup's groups: each key's group is the range's own
// prefix (or, for all of a collection's indexes, lies inside the range),
// and the keys no estimate asks about are not counted.
func TestSizeGroups(t *testing.T) {
	id := bson.RawValue{Type: bson.TypeInt32, Value: []byte{7, 0, 0, 0}}
	const coll, index = 42, 3
	for _, c := range []struct {
		key []byte
		// own is the range of the key's group; outer, if any, a range of
		// several groups holding it
		own, outer func() ([]byte, []byte)
	}{
		{docKey(coll, id), func() ([]byte, []byte) { return docSpan(coll) }, nil},
		{naturalKey(coll, 9), func() ([]byte, []byte) { return collNaturalSpan(coll) }, nil},
		{append(indexPrefix(coll, index), 1, 2, 3), func() ([]byte, []byte) { return indexSpan(coll, index) }, func() ([]byte, []byte) { return collIndexSpan(coll) }},
		{oplogKey(12345), func() ([]byte, []byte) { return oplogPrefix, []byte{spaceOplog + 1} }, nil},
	} {
		n := sizeGroup(c.key)
		if n <= 0 || n > len(c.key) {
			t.Fatalf("key %x: group length %d", c.key, n)
		}
		group := c.key[:n]
		lo, hi := c.own()
		if !bytes.Equal(group, lo) || !bytes.HasPrefix(hi, group[:n-1]) {
			t.Errorf("key %x: group %x, the range [%x, %x) is not its own", c.key, group, lo, hi)
		}
		if c.outer != nil {
			lo, hi := c.outer()
			if bytes.Compare(group, lo) < 0 || bytes.Compare(group, hi) >= 0 || bytes.HasPrefix(hi, group) {
				t.Errorf("key %x: group %x not inside [%x, %x)", c.key, group, lo, hi)
			}
		}
	}
	for _, k := range [][]byte{catalogKey("db", "c"), keyNextCollID, {spaceDoc, 0, 0}, {spaceIndex, 0, 0, 0, 1, 0}, {}} {
		if n := sizeGroup(k); n != 0 {
			t.Errorf("key %x counted in a group of %d bytes", k, n)
		}
	}
}
