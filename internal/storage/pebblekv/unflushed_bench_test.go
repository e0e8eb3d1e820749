package pebblekv

import (
	"encoding/binary"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// BenchmarkCommit measures a YCSB update's commit as the engine makes it:
// one transaction rewriting a 1 KB document and one index entry, counted
// for the size estimates by the engine's groups (collection, index).
func BenchmarkCommit(b *testing.B) {
	db, err := Open("", Options{InMemory: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.GroupUnflushed(func(key []byte) int {
		switch key[0] {
		case 'd':
			return 5
		case 'i':
			return 9
		}
		return 0
	})
	doc := make([]byte, 1000)
	dk := []byte{'d', 0, 0, 0, 7, 0, 0, 0, 0}
	ik := []byte{'i', 0, 0, 0, 7, 0, 0, 0, 1, 0, 0, 0, 0}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		binary.BigEndian.PutUint32(dk[5:], uint32(i%20000))
		binary.BigEndian.PutUint32(ik[9:], uint32(i%20000))
		tx := begin(b, db)
		if err := tx.Set(dk, doc); err != nil {
			b.Fatal(err)
		}
		if err := tx.Set(ik, dk[5:]); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUnflushedAdd measures what counting a commit for the size
// estimates adds to it, alone: a YCSB update's batch (its document, its
// session record, its oplog entry) and an insert of 1000 documents (each
// with its oplog entry), among the groups of 100 collections with two
// indexes each.
func BenchmarkUnflushedAdd(b *testing.B) {
	db, err := Open("", Options{InMemory: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	group := func(key []byte) int {
		switch key[0] {
		case 'd', 'n':
			return 5
		case 'i':
			return 9
		case 'o':
			return 1
		}
		return 0
	}
	u := &unflushed{}
	u.setGroup(group)
	warm := db.db.NewBatch()
	for c := range uint32(100) {
		for _, k := range [][]byte{
			binary.BigEndian.AppendUint32([]byte{'d'}, c),
			binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32([]byte{'i'}, c), 1),
			binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32([]byte{'i'}, c), 2),
		} {
			if err := warm.Set(k, nil, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	u.add(warm, 1)
	warm.Close()
	doc := make([]byte, 1100)
	entry := make([]byte, 300)
	docKey := func(i int) []byte {
		return binary.BigEndian.AppendUint64([]byte{'d', 0, 0, 0, 50, 0x0e}, uint64(i))
	}
	oplogKey := func(i int) []byte { return binary.BigEndian.AppendUint64([]byte{'o'}, uint64(i)) }
	run := func(b *testing.B, batch *pebble.Batch) {
		b.ReportAllocs()
		for b.Loop() {
			u.add(batch, 1)
		}
	}
	b.Run("update", func(b *testing.B) {
		batch := db.db.NewBatch()
		defer batch.Close()
		for _, kv := range [][2][]byte{{docKey(1), doc}, {append([]byte{'s', 16}, make([]byte, 16)...), entry[:100]}, {oplogKey(1), entry}} {
			if err := batch.Set(kv[0], kv[1], nil); err != nil {
				b.Fatal(err)
			}
		}
		run(b, batch)
	})
	b.Run("insert1000", func(b *testing.B) {
		batch := db.db.NewBatch()
		defer batch.Close()
		for i := range 1000 {
			if err := batch.Set(docKey(i), doc, nil); err != nil {
				b.Fatal(err)
			}
			if err := batch.Set(oplogKey(i), entry[:40], nil); err != nil {
				b.Fatal(err)
			}
		}
		run(b, batch)
	})
}
