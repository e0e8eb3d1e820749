package engine

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/querygen"
)

var diffSeed = flag.Uint64("diffseed", 0, "run the randomized differential tests on this one data set seed (a failure names it)")

// diffSeeds are the data set seeds a randomized differential test runs:
// sets of them from the clock, or the one -diffseed names.
func diffSeeds(sets int) []uint64 {
	if *diffSeed != 0 {
		return []uint64{*diffSeed}
	}
	base := uint64(time.Now().UnixNano())
	seeds := make([]uint64, sets)
	for i := range seeds {
		seeds[i] = base + uint64(i)
	}
	return seeds
}

// TestPlannerDifferential checks, on random data sets under random
// indexes, that every random query returns with the planner's plan what a
// collection scan returns: the same documents, in the same order when the
// sort is total (it ends with _id), with the same sort keys in order when
// it is not; and that a hint of each index that holds every document
// (neither sparse nor partial) changes nothing either.
func TestPlannerDifferential(t *testing.T) {
	e := newTestEngine(t)
	if *diffSeed != 0 {
		checkDataset(t, e, *diffSeed, 200)
		return
	}
	base := uint64(time.Now().UnixNano())
	sets, queries := 30, 80
	if testing.Short() {
		sets = 5
	}
	for i := 0; i < sets; i++ {
		checkDataset(t, e, base+uint64(i), queries)
		if t.Failed() {
			return
		}
	}
	if cachedActive.Load() == 0 {
		t.Fatal("no query ran with an active plan cache entry")
	}
}

// cachedActive counts the data sets whose plan cache held an active entry.
var cachedActive atomic.Int64

// FuzzPlanner runs the differential check of TestPlannerDifferential on
// the data sets of fuzzed seeds, without bound.
func FuzzPlanner(f *testing.F) {
	f.Add(uint64(1))
	f.Add(uint64(20261123))
	e := newTestEngine(f)
	f.Fuzz(func(t *testing.T, seed uint64) {
		checkDataset(t, e, seed, 20)
	})
}

var datasetCount atomic.Int64

// checkDataset builds the data set of seed in a new collection of e and
// runs n random queries on it.
func checkDataset(t *testing.T, e *Engine, seed uint64, n int) {
	t.Helper()
	g := querygen.New(seed)
	coll := fmt.Sprintf("d%d", datasetCount.Add(1))
	// A collection default collation applies to its indexes and queries
	// unless they name another.
	var opts CollectionOptions
	if def := g.Collation(); def != nil {
		c, err := collation.Parse(bsonDoc(def))
		if err != nil {
			t.Fatal(err)
		}
		if c != nil {
			opts.Collation = c.Document()
		}
	}
	if err := e.CreateCollection("test", coll, opts); err != nil {
		t.Fatal(err)
	}
	var full []*Index // indexes holding every document
	for _, spec := range g.Indexes() {
		is := genIndexSpec(spec)
		if ic := g.Collation(); ic != nil && g.Intn(2) == 0 {
			is.Collation = bsonDoc(ic)
		}
		if hashedOrWildcard(is.Key) {
			// Folio builds these only without a collation.
			is.Collation = bsonDoc(bson.D{{Key: "locale", Value: "simple"}})
		}
		if _, err := e.CreateIndexes("test", coll, []IndexSpec{is}, nil); err != nil {
			t.Fatalf("seed %d: index %v: %v", seed, spec.Key, err)
		}
	}
	docs := 20 + g.Intn(60)
	for i := 0; i < docs; i++ {
		// A document an index refuses (parallel arrays, a duplicate key)
		// is left out of both sides alike.
		e.Insert("test", coll, []bson.Raw{bsonDoc(g.Doc(int32(i)))}, true, WriteOptions{})
	}
	c := e.Collection("test", coll)
	for _, ix := range c.Indexes() {
		if !ix.Sparse && ix.partial == nil && ix.wild == nil {
			full = append(full, ix)
		}
	}
	for i := 0; i < n; i++ {
		q := diffQuery{filter: g.Query(), sort: g.Sort(), proj: g.Projection()}
		if qc := g.Collation(); qc != nil {
			q.coll = bsonDoc(qc)
		}
		q.collator, _ = CommandCollator(c, q.coll)
		if len(q.sort) > 0 && g.Intn(2) == 0 {
			q.total = true
			q.sort = append(q.sort, bson.E{Key: "_id", Value: int32(1)})
			if g.Intn(2) == 0 {
				q.skip, q.limit = int64(g.Intn(3)), int64(g.Intn(6))
			}
		}
		if len(q.sort) == 0 && g.Intn(4) == 0 {
			q.sort, q.total = bson.D{{Key: "_id", Value: int32(-1)}}, true
		}
		want := q.run(e, coll, `{"$natural": 1}`)
		check := func(what string, got diffResult) {
			if msg := q.compare(got, want); msg != "" {
				t.Fatalf("data set seed %d (-diffseed=%d), %s: %s\nquery %s\nindexes %s\nplan %s",
					seed, seed, what, msg, q, indexList(c), explainWinning(e, coll, q))
			}
		}
		check("planner", q.run(e, coll, ""))
		for _, ix := range full {
			check("hint "+ix.Name, q.run(e, coll, `"`+ix.Name+`"`))
		}
		// A wildcard index hinted by a query it can serve (others find
		// no plan, as in MongoDB).
		for _, ix := range c.Indexes() {
			if ix.wild != nil && ix.partial == nil {
				if got := q.run(e, coll, `"`+ix.Name+`"`); !mongoerr.Is(got.err, mongoerr.NoQueryExecutionPlans) {
					check("hint "+ix.Name, got)
				}
			}
		}
		if !q.total && want.err == nil && len(c.Indexes()) > 0 {
			// A distinct on an index's first field may read one entry
			// per value (DISTINCT_SCAN).
			key := c.Indexes()[g.Intn(len(c.Indexes()))].Fields[0].Path
			natural := ext(t, `{"h": {"$natural": 1}}`).Lookup("h")
			dwant, werr := e.Distinct("test", coll, key, FindOptions{Filter: bsonDoc(q.filter), Hint: natural, Collation: q.coll})
			dgot, gerr := e.Distinct("test", coll, key, FindOptions{Filter: bsonDoc(q.filter), Collation: q.coll})
			// Of values equal under the collation, either may stand for all.
			same := func(a, b bson.RawValue) bool { return q.collator.Compare(a, b) == 0 }
			if (werr == nil) != (gerr == nil) || !slices.EqualFunc(dgot, dwant, same) {
				t.Fatalf("data set seed %d (-diffseed=%d): distinct %s %v (%v), scan's %v (%v)\nquery %s\nindexes %s",
					seed, seed, key, dgot, gerr, dwant, werr, q, indexList(c))
			}
		}
		if !q.total && want.err == nil {
			// Counts whose keys decide the filter count keys alone
			// (COUNT_SCAN), with the planner's plan or a hinted index.
			hints := []string{""}
			for _, ix := range full {
				hints = append(hints, ix.Name)
			}
			for _, h := range hints {
				o := FindOptions{Filter: bsonDoc(q.filter), Collation: q.coll}
				if h != "" {
					o.Hint = bson.RawValue{Type: bson.TypeString, Value: bsoncore.AppendString(nil, h)}
				}
				got, err := e.Count("test", coll, o)
				if err != nil || got != int64(len(want.docs)) {
					t.Fatalf("data set seed %d (-diffseed=%d): count (hint %q) %d (%v), scan found %d (%v)\nquery %s\nindexes %s",
						seed, seed, h, got, err, len(want.docs), want.err, q, indexList(c))
				}
			}
		}
		checkCached(t, e, g, coll, q, seed)
	}
}

type diffQuery struct {
	filter, sort, proj bson.D
	coll               bson.Raw            // the collation document, nil for none
	collator           *collation.Collator // the collation that applies
	total              bool                // the sort ends with _id
	skip, limit        int64
}

func (q diffQuery) String() string {
	return fmt.Sprintf("filter %s sort %s projection %s skip %d limit %d collation %v", extJSON(q.filter), extJSON(q.sort), extJSON(q.proj), q.skip, q.limit, q.coll)
}

func extJSON(d bson.D) string {
	if d == nil {
		return "-"
	}
	b, err := bson.MarshalExtJSON(d, true, false)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

type diffResult struct {
	docs []bson.Raw
	err  error
}

// run runs q on coll with hint (Extended JSON, "" for none).
func (q diffQuery) run(e *Engine, coll, hint string) diffResult {
	o := FindOptions{Filter: bsonDoc(q.filter), Skip: q.skip, Limit: q.limit, Collation: q.coll}
	if q.sort != nil {
		o.Sort = bsonDoc(q.sort)
	}
	if q.proj != nil {
		o.Projection = bsonDoc(q.proj)
	}
	if hint != "" {
		var h bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(`{"h": `+hint+`}`), false, &h); err != nil {
			return diffResult{err: err}
		}
		o.Hint = h.Lookup("h")
	}
	cur, err := e.Find("test", coll, o)
	if err != nil {
		return diffResult{err: err}
	}
	defer cur.Close()
	var r diffResult
	for {
		doc, err := cur.Next()
		if err != nil {
			return diffResult{err: err}
		}
		if doc == nil {
			return r
		}
		r.docs = append(r.docs, slices.Clone(doc))
	}
}

// genIndexSpec is the engine's spec of a generated index, under the
// collection's collation.
func genIndexSpec(spec querygen.IndexSpec) IndexSpec {
	is := IndexSpec{Key: bsonDoc(spec.Key), Unique: spec.Unique, Sparse: spec.Sparse, ExpireAfter: -1}
	if spec.Partial != nil {
		is.Partial = bsonDoc(spec.Partial)
	}
	if spec.WildcardProjection != nil {
		is.WildcardProjection = bsonDoc(spec.WildcardProjection)
	}
	return is
}

// compare describes how got differs from want, or returns "".
func (q diffQuery) compare(got, want diffResult) string {
	if got.err != nil || want.err != nil {
		if got.err == nil || want.err == nil || mongoerr.As(got.err).Code != mongoerr.As(want.err).Code {
			return fmt.Sprintf("error %v, scan's %v", got.err, want.err)
		}
		return ""
	}
	show := func(docs []bson.Raw) string {
		s := ""
		for _, d := range docs {
			s += "\n  " + d.String()
		}
		return s
	}
	if q.total {
		g, w := got.docs, want.docs
		if q.proj != nil {
			// Covered reads answer with the fields in key order (below).
			g, w = canonical(g), canonical(w)
		}
		if !slices.EqualFunc(g, w, func(a, b bson.Raw) bool { return bytes.Equal(a, b) }) {
			return fmt.Sprintf("got%s\nscan got%s", show(got.docs), show(want.docs))
		}
		return ""
	}
	if q.sort != nil && q.proj == nil {
		s, err := query.CompileSort(bsonDoc(q.sort))
		if err != nil {
			return err.Error()
		}
		// Sort keys compare under the collation that applies.
		if q.collator != nil {
			s = s.Collated(q.collator)
		}
		for i := range min(len(got.docs), len(want.docs)) {
			kg, errg := s.KeysErr(got.docs[i])
			kw, errw := s.KeysErr(want.docs[i])
			if (errg == nil) != (errw == nil) || errg == nil && s.CompareKeys(kg, kw) != 0 {
				return fmt.Sprintf("sort keys differ at %d: got%s\nscan got%s", i, show(got.docs), show(want.docs))
			}
		}
	}
	a, b := slices.Clone(got.docs), slices.Clone(want.docs)
	if q.proj != nil {
		// A covered read answers with the fields in key order, as
		// MongoDB's does; a scan in the document's order.
		a, b = canonical(a), canonical(b)
	}
	cmp := func(x, y bson.Raw) int { return bytes.Compare(x, y) }
	slices.SortFunc(a, cmp)
	slices.SortFunc(b, cmp)
	if !slices.EqualFunc(a, b, func(x, y bson.Raw) bool { return bytes.Equal(x, y) }) {
		return fmt.Sprintf("%d documents, scan %d; only in the planner's%s\nonly in the scan's%s", len(a), len(b), show(minus(a, b)), show(minus(b, a)))
	}
	return ""
}

// canonical returns projected docs with the fields of each sorted by
// name, at every depth, and without their top-level null fields: a
// covered read answers with the index key's value, which is null for a
// document lacking the field, as MongoDB's does (index_bounds_minkey.js
// counts {} covered under {$gte: MinKey}), where a scan leaves it out.
func canonical(docs []bson.Raw) []bson.Raw {
	out := make([]bson.Raw, len(docs))
	for i, d := range docs {
		c := canonicalDoc(d)
		c = slices.DeleteFunc(c, func(e bson.E) bool { v, ok := e.Value.(bson.RawValue); return ok && v.Type == bson.TypeNull })
		out[i] = bsonDoc(c)
	}
	return out
}

func canonicalDoc(d bson.Raw) bson.D {
	elems, _ := d.Elements()
	out := make(bson.D, 0, len(elems))
	for _, el := range elems {
		var v any = el.Value()
		if el.Value().Type == bson.TypeEmbeddedDocument {
			v = canonicalDoc(el.Value().Document())
		}
		out = append(out, bson.E{Key: el.Key(), Value: v})
	}
	slices.SortFunc(out, func(x, y bson.E) int { return strings.Compare(x.Key, y.Key) })
	return out
}

// minus is the sorted multiset a less the sorted multiset b.
func minus(a, b []bson.Raw) []bson.Raw {
	var out []bson.Raw
	j := 0
	for _, x := range a {
		for j < len(b) && bytes.Compare(b[j], x) < 0 {
			j++
		}
		if j < len(b) && bytes.Equal(b[j], x) {
			j++
			continue
		}
		out = append(out, x)
	}
	return out
}

func indexList(c *Collection) string {
	s := ""
	for _, ix := range c.Indexes() {
		s += ix.Spec.String() + " "
	}
	return s
}

func explainWinning(e *Engine, coll string, q diffQuery) string {
	o := FindOptions{Filter: bsonDoc(q.filter), Collation: q.coll}
	if q.sort != nil {
		o.Sort = bsonDoc(q.sort)
	}
	out, err := e.Explain("test", coll, o, QueryPlanner)
	if err != nil {
		return err.Error()
	}
	for _, el := range out[1].Value.(bson.D) {
		if el.Key == "winningPlan" {
			return fmt.Sprint(el.Value)
		}
	}
	return "no winningPlan"
}

// hashedOrWildcard reports whether an index key pattern has a hashed or a
// wildcard field.
func hashedOrWildcard(key bson.Raw) bool {
	elems, _ := key.Elements()
	for _, el := range elems {
		if s, ok := el.Value().StringValueOK(); ok && s == "hashed" || strings.HasSuffix(el.Key(), "$**") {
			return true
		}
	}
	return false
}

// TestTrialDifferential runs the differential check of
// TestPlannerDifferential with trial bounds so small (a few works, a few
// results) that most trials end midway through the candidates' scans, and
// the find continues with the winner from where its trial left it: its
// results of the trial first, then the rest of its scan. Every plan must
// still return what a collection scan returns.
func TestTrialDifferential(t *testing.T) {
	e := newTestEngine(t)
	sets := 20
	if testing.Short() {
		sets = 4
	}
	for _, seed := range diffSeeds(sets) {
		r := rand.New(rand.NewPCG(seed, 7))
		e.SetTrialWorks(1 + r.Int64N(20))
		e.SetTrialMaxResults(r.Int64N(6))
		e.SetTrialCollFraction(r.Float64() / 10)
		checkDataset(t, e, seed, 60)
		if t.Failed() {
			t.Logf("trial works %d, max results %d, collection fraction %v", e.TrialWorks(), e.TrialMaxResults(), e.TrialCollFraction())
			return
		}
	}
}
