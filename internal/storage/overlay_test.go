package storage_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/folio-db/folio/internal/storage"
	"github.com/folio-db/folio/internal/storage/pebblekv"
)

// TestOverlayMatchesModel writes random keys to a base store and random
// sets and deletes to an overlay over its snapshot, then checks every
// iterator move, in both directions and with bounds, against a sorted
// model of the merged state: with a few writes (the overlay's slice) and
// with many (its B-tree).
func TestOverlayMatchesModel(t *testing.T) {
	for _, size := range []struct{ space, writes int }{{40, 25}, {1000, 600}} {
		for seed := uint64(0); seed < 20; seed++ {
			t.Run(fmt.Sprint(size.writes, "/", seed), func(t *testing.T) { checkOverlay(t, seed, size.space, size.writes) })
		}
	}
}

// checkOverlay is one case of TestOverlayMatchesModel: keys are drawn from
// space, and the base and the overlay get writes of them each.
func checkOverlay(t *testing.T, seed uint64, space, writes int) {
	rng := rand.New(rand.NewPCG(seed, 9))
	db, err := pebblekv.Open("", pebblekv.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	name := func(i int) []byte { return []byte(fmt.Sprintf("k%04d", i)) }
	key := func() []byte { return name(rng.IntN(space)) }
	model := map[string]string{}
	b, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for range writes {
		k := key()
		v := fmt.Sprint("base", rng.IntN(100))
		b.Set(k, []byte(v))
		model[string(k)] = v
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	snap := db.NewSnapshot()
	defer snap.Close()
	ov := storage.NewOverlay(snap)
	for range writes {
		k := key()
		if rng.IntN(3) == 0 {
			ov.Put(k, nil)
			delete(model, string(k))
		} else {
			v := fmt.Sprint("over", rng.IntN(100))
			ov.Put(k, []byte(v))
			model[string(k)] = v
		}
	}
	// Writes to the base after the snapshot stay invisible.
	late, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i := range space {
		late.Set(name(i), []byte("late"))
	}
	if err := late.Commit(); err != nil {
		t.Fatal(err)
	}

	lower, upper := name(space/8), name(space*7/8)
	var keys []string
	for k := range model {
		if k >= string(lower) && k < string(upper) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	it, err := ov.NewIter(lower, upper)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	pos := -1 // index into keys, -1 or len(keys) when invalid
	check := func(op string) {
		t.Helper()
		valid := pos >= 0 && pos < len(keys)
		if it.Valid() != valid {
			t.Fatalf("%s: valid %v, want %v (pos %d of %v)", op, it.Valid(), valid, pos, keys)
		}
		if valid && (string(it.Key()) != keys[pos] || string(it.Value()) != model[keys[pos]]) {
			t.Fatalf("%s: at %s=%s, want %s=%s", op, it.Key(), it.Value(), keys[pos], model[keys[pos]])
		}
	}
	for range 8 * writes {
		switch op := rng.IntN(6); op {
		case 0:
			it.First()
			pos = 0
			check("First")
		case 1:
			it.Last()
			pos = len(keys) - 1
			check("Last")
		case 2:
			if it.Valid() {
				it.Next()
				pos++
				check("Next")
			}
		case 3:
			if it.Valid() {
				it.Prev()
				pos--
				check("Prev")
			}
		case 4:
			k := key()
			it.SeekGE(k)
			pos, _ = slices.BinarySearch(keys, string(k))
			if bytes.Compare(k, lower) < 0 {
				pos = 0
			}
			check("SeekGE " + string(k))
		case 5:
			k := key()
			it.SeekLT(k)
			i, _ := slices.BinarySearch(keys, string(k))
			pos = i - 1
			check("SeekLT " + string(k))
		}
	}
}

// BenchmarkOverlayPut writes n keys into an overlay in ascending order (an
// insertMany's documents) and in random order (an index build's entries).
func BenchmarkOverlayPut(b *testing.B) {
	for _, n := range []int{1000, 20000} {
		keys := make([][]byte, n)
		for i := range keys {
			keys[i] = []byte(fmt.Sprintf("key%08d", i))
		}
		shuffled := slices.Clone(keys)
		rand.New(rand.NewPCG(1, 2)).Shuffle(n, func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		for _, order := range []struct {
			name string
			keys [][]byte
		}{{"ascending", keys}, {"random", shuffled}} {
			b.Run(fmt.Sprint(order.name, "/", n), func(b *testing.B) {
				for b.Loop() {
					ov := storage.NewOverlay(nil)
					for _, k := range order.keys {
						ov.Put(k, k)
					}
				}
			})
		}
	}
}
