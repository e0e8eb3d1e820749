package sorter

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/querygen"
)

// genDocs returns n random documents (querygen's shapes: arrays, mixed
// types, missing fields) with many ties under sort.
func genDocs(t testing.TB, seed uint64, n int) []bson.Raw {
	g := querygen.New(seed)
	docs := make([]bson.Raw, n)
	for i := range docs {
		b, err := bson.Marshal(g.Doc(int32(i)))
		if err != nil {
			t.Fatal(err)
		}
		docs[i] = b
	}
	return docs
}

// reference sorts with query.Sort's own comparison, stably: MongoDB's
// order, equal keys in arrival order.
func reference(s *query.Sort, docs []bson.Raw, skipBad bool) []int {
	idx := make([]int, 0, len(docs))
	keys := make([][]bson.RawValue, len(docs))
	for i, d := range docs {
		k, err := s.KeysErr(d)
		if err != nil {
			continue
		}
		keys[i] = k
		idx = append(idx, i)
	}
	slices.SortStableFunc(idx, func(a, b int) int { return s.CompareKeys(keys[a], keys[b]) })
	return idx
}

// run sorts docs with a sorter of options o; Aux is each document's
// arrival index.
func run(t testing.TB, sk *SortKey, docs []bson.Raw, o Options, barrier ...func()) ([]int, int, error) {
	s := New(o)
	defer s.Close()
	err := add(sk, s, docs)
	for _, f := range barrier {
		f()
	}
	if err != nil {
		return nil, s.Spilled(), err
	}
	it, err := s.Iterate()
	if err != nil {
		return nil, 0, err
	}
	var out []int
	for {
		e, ok, err := it.Next()
		if err != nil {
			return nil, 0, err
		}
		if !ok {
			return out, s.Spilled(), nil
		}
		if !bytes.Equal(e.Doc, docs[e.Aux]) {
			t.Fatalf("entry %d came back with another document", e.Aux)
		}
		if want := metaFor(int(e.Aux)); !reflect.DeepEqual(e.Meta, want) {
			t.Fatalf("entry %d came back with metadata %+v, want %+v", e.Aux, e.Meta, want)
		}
		out = append(out, int(e.Aux))
	}
}

// add adds docs to s, each with its arrival index as Aux.
func add(sk *SortKey, s *Sorter, docs []bson.Raw) error {
	for i, d := range docs {
		k, err := sk.Of(d)
		if err != nil {
			continue // parallel arrays: the reference skips them too
		}
		if err := s.Add(Entry{Key: k, Doc: d, Aux: int64(i), Meta: metaFor(i)}); err != nil {
			return err
		}
	}
	return nil
}

// metaFor is the metadata add gives document i: a text score to every
// other one, an index key to every third, a record id to every fifth, a
// sort key to every seventh, a $geoNear distance and point to every
// fourth, so that spills carry each, some or none.
func metaFor(i int) docsrc.Meta {
	var m docsrc.Meta
	if i%2 == 0 {
		m.TextScore, m.HasTextScore = float64(i)/3, true
	}
	if i%4 == 1 {
		m.GeoNearDistance, m.HasGeoNear = float64(i)*1.5, true
		m.GeoNearPoint = bson.RawValue{Type: bson.TypeArray, Value: bsoncore.NewArrayBuilder().AppendDouble(float64(i)).AppendDouble(-1).Build()}
	}
	if i%3 == 0 {
		m.IndexKey, _ = bson.Marshal(bson.D{{Key: "i", Value: int32(i)}})
	}
	if i%5 == 0 {
		m.RecordID = []byte(strings.Repeat("r", i%300))
	}
	if i%7 == 0 {
		_, m.SortKey, _ = bson.MarshalValue(bson.A{int32(i), "k"})
	}
	return m
}

// TestSorterMatchesReference: in memory, spilled, top-k and top-k
// spilled, the sorter yields exactly the stable reference order.
func TestSorterMatchesReference(t *testing.T) {
	docs := genDocs(t, 7, 3000)
	g := querygen.New(11)
	dir := t.TempDir()
	for i := range 25 {
		spec, _ := bson.Marshal(g.Sort())
		s, err := query.CompileSort(spec)
		if err != nil || s.Empty() {
			continue
		}
		want := reference(s, docs, true)
		sk := NewSortKey(s)
		for _, c := range []struct {
			name   string
			limit  int64
			mem    int64
			spills bool
		}{
			{"memory", 0, 1 << 30, false},
			{"spilled", 0, 20 << 10, true},
			{"tiny", 0, 1, true},
			{"topk", 37, 1 << 30, false},
			{"topk-spilled", 200, 8 << 10, true},
		} {
			t.Run(fmt.Sprintf("%d/%s", i, c.name), func(t *testing.T) {
				got, spilled, err := run(t, sk, docs, Options{Limit: c.limit, MaxMemory: c.mem, AllowDisk: true, TempDir: dir, Budget: NewBudget(1 << 40)})
				if err != nil {
					t.Fatal(err)
				}
				if (spilled > 0) != c.spills {
					t.Fatalf("spilled %d runs, want spills %v", spilled, c.spills)
				}
				w := want
				if c.limit > 0 && int64(len(w)) > c.limit {
					w = w[:c.limit]
				}
				if !slices.Equal(got, w) {
					t.Fatalf("sort %s: order differs from the reference\n got %v\nwant %v", spec, head(got), head(w))
				}
			})
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("spill files left behind: %v", left)
	}
}

func head(x []int) []int { return x[:min(len(x), 20)] }

// TestSorterOverMemoryWithoutDisk: past the limit without disk use the
// sort fails with 292, and a top-k sort whose k documents fit does not.
func TestSorterOverMemoryWithoutDisk(t *testing.T) {
	docs := genDocs(t, 3, 500)
	s, _ := query.CompileSort(bson.Raw(bsonDoc(t, bson.D{{Key: "a", Value: 1}})))
	sk := NewSortKey(s)
	_, _, err := run(t, sk, docs, Options{MaxMemory: 4 << 10, Budget: NewBudget(1 << 40)})
	if mongoerr.As(err).Code != mongoerr.QueryExceededMemoryLimitNoDiskUseAllowed {
		t.Fatalf("err = %v, want QueryExceededMemoryLimitNoDiskUseAllowed", err)
	}
	if _, _, err := run(t, sk, docs, Options{Limit: 3, MaxMemory: 4 << 10, Budget: NewBudget(1 << 40)}); err != nil {
		t.Fatalf("top-3 within the limit: %v", err)
	}
	// The budget refusing is the same as the limit: spill or 292.
	_, _, err = run(t, sk, docs, Options{MaxMemory: 1 << 30, Budget: NewBudget(4 << 10)})
	if mongoerr.As(err).Code != mongoerr.QueryExceededMemoryLimitNoDiskUseAllowed {
		t.Fatalf("budget exhausted: err = %v, want QueryExceededMemoryLimitNoDiskUseAllowed", err)
	}
}

func bsonDoc(t testing.TB, d bson.D) bson.Raw {
	b, err := bson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBudgetBoundsConcurrentSorts: N sorts at once, each allowed more
// than the budget, never hold more than the budget together; with disk
// use they spill and stay correct, without it some fail with 292.
func TestBudgetBoundsConcurrentSorts(t *testing.T) {
	docs := genDocs(t, 5, 2000)
	s, _ := query.CompileSort(bsonDoc(t, bson.D{{Key: "a", Value: 1}, {Key: "_id", Value: -1}}))
	sk := NewSortKey(s)
	want := reference(s, docs, true)
	var total int64
	for _, d := range docs {
		k, _ := sk.Of(d)
		total += Size(len(k), len(d))
	}
	const n = 8
	for _, disk := range []bool{true, false} {
		budget := NewBudget(total * 2) // room for two of the eight
		var wg, added sync.WaitGroup
		added.Add(n)
		errs := make([]error, n)
		spills := make([]int, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Every sort holds what it added until all have added
				// theirs, so they overlap however the goroutines run.
				got, spilled, err := run(t, sk, docs, Options{MaxMemory: total * 4, AllowDisk: disk, TempDir: t.TempDir(), Budget: budget}, added.Done, added.Wait)
				spills[i], errs[i] = spilled, err
				if err == nil && !slices.Equal(got, want) {
					errs[i] = errors.New("order differs from the reference")
				}
			}()
		}
		wg.Wait()
		if budget.Peak() > budget.Limit() {
			t.Fatalf("peak reservation %d above the budget %d", budget.Peak(), budget.Limit())
		}
		if budget.Used() != 0 {
			t.Fatalf("%d bytes still reserved after every sort closed", budget.Used())
		}
		failed, spilled := 0, 0
		for i, err := range errs {
			switch {
			case err == nil:
				if spills[i] > 0 {
					spilled++
				}
			case !disk && mongoerr.As(err).Code == mongoerr.QueryExceededMemoryLimitNoDiskUseAllowed:
				failed++
			default:
				t.Fatalf("sort %d: %v", i, err)
			}
		}
		t.Logf("disk %v: peak %d of %d, %d spilled, %d failed", disk, budget.Peak(), budget.Limit(), spilled, failed)
		if disk && spilled == 0 {
			t.Fatal("no sort spilled although eight could not fit in the budget")
		}
		if !disk && failed == 0 {
			t.Fatal("no sort failed although eight could not fit in the budget")
		}
	}
}

// TestSpillKeepsMeta: every field of docsrc.Meta comes back from a spill
// file as it went in ({$meta: ...} after a spilled sort reads them).
func TestSpillKeepsMeta(t *testing.T) {
	doc, _ := bson.Marshal(bson.D{{Key: "a", Value: int32(1)}})
	key, _ := bson.Marshal(bson.D{{Key: "a", Value: int32(1)}})
	_, arr, _ := bson.MarshalValue(bson.A{int32(1), "k"})
	_, pt, _ := bson.MarshalValue(bson.D{{Key: "type", Value: "Point"}, {Key: "coordinates", Value: bson.A{1.5, -2.0}}})
	legacy := bsoncore.NewArrayBuilder().AppendDouble(3).AppendDouble(4).Build()
	rows := []struct {
		name string
		meta docsrc.Meta
	}{
		{"none", docsrc.Meta{}},
		{"textScore", docsrc.Meta{TextScore: 2.25, HasTextScore: true}},
		{"geoNear GeoJSON", docsrc.Meta{GeoNearDistance: 1234.5, GeoNearPoint: bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: pt}, HasGeoNear: true}},
		{"geoNear legacy", docsrc.Meta{GeoNearDistance: 0.01, GeoNearPoint: bson.RawValue{Type: bson.TypeArray, Value: legacy}, HasGeoNear: true}},
		{"indexKey", docsrc.Meta{IndexKey: key}},
		{"recordId", docsrc.Meta{RecordID: []byte("rid")}},
		{"sortKey", docsrc.Meta{SortKey: arr}},
		{"all", docsrc.Meta{TextScore: 0.5, GeoNearDistance: 7, GeoNearPoint: bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: pt}, HasTextScore: true, HasGeoNear: true, IndexKey: key, RecordID: []byte("r"), SortKey: arr}},
	}
	s := New(Options{MaxMemory: 1, AllowDisk: true, TempDir: t.TempDir(), Budget: NewBudget(1 << 40)})
	defer s.Close()
	for i, r := range rows {
		if err := s.Add(Entry{Key: []byte{byte(i)}, Doc: doc, Aux: int64(i), Meta: r.meta}); err != nil {
			t.Fatal(err)
		}
	}
	if s.Spilled() == 0 {
		t.Fatal("nothing spilled")
	}
	it, err := s.Iterate()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		e, ok, err := it.Next()
		if err != nil || !ok {
			t.Fatalf("%s: ok %v, err %v", r.name, ok, err)
		}
		if !reflect.DeepEqual(e.Meta, r.meta) {
			t.Errorf("%s: came back with %+v, want %+v", r.name, e.Meta, r.meta)
		}
	}
}
