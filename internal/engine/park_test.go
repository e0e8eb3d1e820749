package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/storage/pebblekv"
)

// parkable is a find's cursor that parks between getMores.
type parkable interface {
	Cursor
	Park() bool
}

// findParkable runs a find on test.coll and returns its cursor.
func findParkable(t *testing.T, e *Engine, coll string, o FindOptions) parkable {
	t.Helper()
	cur, err := e.Find("test", coll, o)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := cur.(parkable)
	if !ok {
		t.Fatalf("a find's cursor (%T) does not park", cur)
	}
	return p
}

// readIDs reads up to n documents (n < 0: all) from cur and returns their
// _ids, integers, as strings.
func readIDs(t *testing.T, cur Cursor, n int) []string {
	t.Helper()
	var ids []string
	for n < 0 || len(ids) < n {
		doc, err := cur.Next()
		if err != nil {
			t.Fatal(err)
		}
		if doc == nil {
			break
		}
		ids = append(ids, fmt.Sprint(doc.Lookup("_id").AsInt64()))
	}
	return ids
}

// TestParkedScanReleasesMemtables: a cursor waiting for a getMore holds no
// storage iterator, so the memtables written before it flush and go
// (Pebble keeps a flushed memtable as a zombie while an iterator reads
// it: two cursors held two before they parked); its next read goes on
// where it stopped.
func TestParkedScanReleasesMemtables(t *testing.T) {
	e := newTestEngine(t)
	db, ok := e.kv.(*pebblekv.DB)
	if !ok {
		t.Skip("the memtables are Pebble's")
	}
	pad := strings.Repeat("x", 1000)
	var docs []bson.Raw
	for i := range 300 {
		docs = append(docs, rawDoc(bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i % 7}, {Key: "pad", Value: pad}}))
	}
	if _, _, err := e.Insert("test", "p", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	mustCreateIndex(t, e, "p", `{"a": 1}`, false)
	scans := []struct {
		name string
		o    FindOptions
		want []string
	}{
		{"a scan of the documents", FindOptions{}, nil},
		{"an index scan", FindOptions{Filter: ext(t, `{"a": {"$gte": 2}}`), Hint: ext(t, `{"h": "a_1"}`).Lookup("h")}, nil},
	}
	for i := range scans {
		scans[i].want = readAll(t, e, "p", scans[i].o)
	}
	curs := make([]parkable, len(scans))
	got := make([][]string, len(scans))
	for i, s := range scans {
		curs[i] = findParkable(t, e, "p", s.o)
		got[i] = readIDs(t, curs[i], 10)
		if !curs[i].Park() {
			t.Fatalf("%s: nothing to park", s.name)
		}
	}
	// Writes past two memtables.
	big := strings.Repeat("y", 1<<20)
	for i := range 15 {
		var batch []bson.Raw
		for j := range 10 {
			batch = append(batch, rawDoc(bson.D{{Key: "_id", Value: i*100 + j}, {Key: "big", Value: big}}))
		}
		if _, _, err := e.Insert("test", "filler", batch, true, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	// Pebble keeps the arena of one flushed memtable for the next (a
	// zombie too); without parking, each cursor held one more.
	for db.Metrics().MemTable.ZombieCount > 1 {
		if time.Now().After(deadline) {
			t.Fatalf("%d flushed memtables still held while the cursors wait", db.Metrics().MemTable.ZombieCount)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for i, s := range scans {
		got[i] = append(got[i], readIDs(t, curs[i], -1)...)
		curs[i].Close()
		if !slices.Equal(got[i], s.want) {
			t.Errorf("%s, parked after 10 documents: %v, want %v", s.name, got[i], s.want)
		}
	}
}

// readAll returns the _ids a find returns, read through.
func readAll(t *testing.T, e *Engine, coll string, o FindOptions) []string {
	t.Helper()
	cur := findParkable(t, e, coll, o)
	defer cur.Close()
	return readIDs(t, cur, -1)
}

// rawDoc is d marshalled (its values always are).
func rawDoc(d bson.D) bson.Raw {
	b, _ := bson.Marshal(d)
	return b
}

// TestParkDifferential: a cursor parked after random numbers of documents
// returns what the same find returns read through, over a collection
// nothing writes, for scans of the documents and of indexes, forward and
// backward, over one interval or several, and unions of them ($or). When
// documents are deleted and inserted between reads, a parked cursor still
// returns no document twice and every matching document that was there
// throughout.
func TestParkDifferential(t *testing.T) {
	e := newTestEngine(t)
	r := rand.New(rand.NewPCG(74, 1))
	var docs []bson.Raw
	for i := range 400 {
		d := bson.D{{Key: "_id", Value: i}, {Key: "a", Value: r.IntN(10)}, {Key: "b", Value: r.IntN(5)}}
		if i%9 == 0 {
			d = append(d, bson.E{Key: "m", Value: bson.A{r.IntN(4), r.IntN(4) + 4}})
		}
		docs = append(docs, rawDoc(d))
	}
	if _, _, err := e.Insert("test", "d", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	mustCreateIndex(t, e, "d", `{"a": 1, "b": 1}`, false)
	mustCreateIndex(t, e, "d", `{"m": 1}`, false)
	mustCreateIndex(t, e, "d", `{"b": -1}`, false)
	queries := []FindOptions{
		{},
		{Sort: ext(t, `{"_id": -1}`)},
		{Filter: ext(t, `{"_id": {"$gte": 50, "$lt": 300}}`)},
		{Filter: ext(t, `{"_id": {"$in": [3, 77, 78, 200, 399]}}`), Sort: ext(t, `{"_id": -1}`)},
		{Filter: ext(t, `{"a": {"$in": [1, 4, 8]}}`)},
		{Filter: ext(t, `{"a": {"$gt": 2}, "b": {"$lt": 3}}`), Sort: ext(t, `{"a": -1, "b": -1}`)},
		{Filter: ext(t, `{"m": {"$gte": 2}}`)},
		{Filter: ext(t, `{"b": {"$in": [0, 4]}}`), Sort: ext(t, `{"b": -1}`)},
		{Filter: ext(t, `{"$or": [{"a": 3}, {"m": 5}, {"b": 2}]}`)},
	}
	for qi, q := range queries {
		want := readAll(t, e, "d", q)
		for round := range 5 {
			cur := findParkable(t, e, "d", q)
			var got []string
			for {
				ids := readIDs(t, cur, 1+r.IntN(40))
				got = append(got, ids...)
				if len(ids) == 0 {
					break
				}
				cur.Park()
				if r.IntN(3) == 0 && cur.Park() {
					t.Fatalf("query %d: parked twice", qi)
				}
			}
			cur.Close()
			if !slices.Equal(got, want) {
				t.Fatalf("query %d, round %d: parked %v, want %v", qi, round, got, want)
			}
		}
	}
	// Writes between reads.
	for qi, q := range queries {
		before := readAll(t, e, "d", q)
		cur := findParkable(t, e, "d", q)
		deleted := map[string]bool{}
		seen := map[string]bool{}
		next := 1000 + qi*1000
		for {
			ids := readIDs(t, cur, 1+r.IntN(30))
			for _, id := range ids {
				if seen[id] {
					t.Fatalf("query %d returned %s twice", qi, id)
				}
				seen[id] = true
			}
			if len(ids) == 0 {
				break
			}
			cur.Park()
			// delete a document read last and one not read yet, insert
			// two
			for _, id := range []string{ids[len(ids)-1], fmt.Sprint(r.IntN(400))} {
				n, err := e.Delete("test", "d", ext(t, `{"_id": `+id+`}`), 1, bson.RawValue{}, WriteOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if n > 0 {
					deleted[id] = true
				}
			}
			for range 2 {
				next++
				doc := rawDoc(bson.D{{Key: "_id", Value: next}, {Key: "a", Value: r.IntN(10)}, {Key: "b", Value: r.IntN(5)}})
				if _, _, err := e.Insert("test", "d", []bson.Raw{doc}, true, WriteOptions{}); err != nil {
					t.Fatal(err)
				}
			}
		}
		cur.Close()
		// every document the unwritten collection returned, but those
		// deleted since, came back
		for _, id := range before {
			if !seen[id] && !deleted[id] {
				t.Errorf("query %d with writes between reads missed %s", qi, id)
			}
		}
		// put the collection back for the next query
		if _, err := e.Delete("test", "d", ext(t, `{"_id": {"$gte": 1000}}`), 0, bson.RawValue{}, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		for id := range deleted {
			n := 0
			fmt.Sscan(id, &n)
			if n >= len(docs) {
				continue
			}
			if _, _, err := e.Insert("test", "d", []bson.Raw{docs[n]}, true, WriteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
}
