package pebblekv

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestExist checks Exist against Get: keys present in the memtable, in
// sstables, deleted, absent, between and beyond present keys, repeated,
// unordered, a key that is a prefix of a present one, and sets of keys
// all above or below those stored, or below them and then among them.
func TestExist(t *testing.T) {
	db, err := Open("", Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	put := func(del bool, keys ...string) {
		b := begin(t, db)
		defer b.Rollback()
		for _, k := range keys {
			if del {
				err = b.Delete([]byte(k))
			} else {
				err = b.Set([]byte(k), []byte("v"))
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	put(false, "b", "d", "dd", "f", "x")
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	put(false, "c", "e")
	put(true, "f", "e")
	for _, set := range [][]string{
		{"e", "a", "d", "ddd", "c", "f", "d", "z", "b", "de", "x"},
		{"y", "z", "xa"},            // all above every stored key
		{"a", "0", "aa"},            // all below
		{"a", "aa", "b", "bb", "c"}, // below the first stored key of the range, then at it
		{"ddd", "dda", "de", "e"},   // none stored in the range but a deleted key
	} {
		keys := make([][]byte, len(set))
		for i, k := range set {
			keys[i] = []byte(k)
		}
		found := make([]bool, len(keys))
		for i := range found {
			found[i] = true // Exist must set every answer
		}
		if err := db.Exist(keys, found); err != nil {
			t.Fatal(err)
		}
		for i, k := range keys {
			_, want, err := db.Get(k)
			if err != nil {
				t.Fatal(err)
			}
			if found[i] != want {
				t.Errorf("Exist(%q) in %q = %v, Get says %v", k, set, found[i], want)
			}
		}
	}
	if err := db.Exist(nil, nil); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkExist compares Exist with a Get per key for a batch of 1000 new
// keys, sequential (as ObjectIds are) or random, on a store of 200,000.
func BenchmarkExist(b *testing.B) {
	db, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	key := func(n uint64) []byte { return binary.BigEndian.AppendUint64([]byte("d"), n) }
	for start := uint64(0); start < 200_000; start += 1000 {
		batch := begin(b, db)
		for n := start; n < start+1000; n++ {
			if err := batch.Set(key(n*2), make([]byte, 100)); err != nil {
				b.Fatal(err)
			}
		}
		if err := batch.Commit(); err != nil {
			b.Fatal(err)
		}
		batch.Rollback()
	}
	if err := db.Flush(); err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, kind := range []string{"sequential", "random"} {
		keys := make([][]byte, 1000)
		for i := range keys {
			if kind == "sequential" {
				keys[i] = key(400_000 + uint64(i))
			} else {
				keys[i] = key(rng.Uint64N(400_000)*2 + 1)
			}
		}
		found := make([]bool, len(keys))
		b.Run(fmt.Sprintf("%s/Get", kind), func(b *testing.B) {
			for b.Loop() {
				for i, k := range keys {
					if _, found[i], err = db.Get(k); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
		b.Run(fmt.Sprintf("%s/Exist", kind), func(b *testing.B) {
			for b.Loop() {
				if err := db.Exist(keys, found); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
