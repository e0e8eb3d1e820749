package engine

import (
	"bytes"
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
)

// TestQueryShape checks which queries share a shape (manual, "Query
// Plans": queryHash; MongoDB's canonical query encoding): values do not
// count, conjunct order does not, a one-element $in is an equality; regex
// flags, MinKey/MaxKey bounds, negated null equality, sort directions and
// inclusion projections do.
func TestQueryShape(t *testing.T) {
	shape := func(filter, sort, proj string) string {
		t.Helper()
		doc := func(s string) bson.Raw {
			if s == "" {
				return nil
			}
			var d bson.Raw
			if err := bson.UnmarshalExtJSON([]byte(s), false, &d); err != nil {
				t.Fatal(err)
			}
			return d
		}
		f, err := query.Compile(doc(filter))
		if err != nil {
			t.Fatal(err)
		}
		return shapeOf(f, doc(sort), doc(proj))
	}
	cases := []struct {
		a, b [3]string
		same bool
	}{
		{[3]string{`{"a": 1}`}, [3]string{`{"a": "x"}`}, true},
		{[3]string{`{"a": 1, "b": {"$gt": 2}}`}, [3]string{`{"b": {"$gt": 9}, "a": 3}`}, true},
		{[3]string{`{"$and": [{"a": 1}, {"b": 2}]}`}, [3]string{`{"a": 5, "b": 6}`}, true},
		{[3]string{`{"a": {"$in": [1]}}`}, [3]string{`{"a": 1}`}, true},
		{[3]string{`{"a": {"$in": [1, 2]}}`}, [3]string{`{"a": {"$in": [3, 4, 5]}}`}, true},
		{[3]string{`{"a": {"$in": [1, 2]}}`}, [3]string{`{"a": {"$in": [1, {"$regularExpression": {"pattern": "^a", "options": ""}}]}}`}, false},
		{[3]string{`{"a": {"$regex": "^a", "$options": "i"}}`}, [3]string{`{"a": {"$regex": "^b", "$options": "i"}}`}, true},
		{[3]string{`{"a": {"$regex": "^a", "$options": "im"}}`}, [3]string{`{"a": {"$regex": "^a", "$options": "mi"}}`}, true},
		{[3]string{`{"a": {"$regex": "^a", "$options": "i"}}`}, [3]string{`{"a": {"$regex": "^a"}}`}, false},
		{[3]string{`{"a": {"$gt": 1}}`}, [3]string{`{"a": {"$gt": {"$minKey": 1}}}`}, false},
		{[3]string{`{"a": {"$lt": 1}}`}, [3]string{`{"a": {"$lt": {"$maxKey": 1}}}`}, false},
		{[3]string{`{"a": {"$ne": 1}}`}, [3]string{`{"a": {"$ne": null}}`}, false},
		{[3]string{`{"a": 1}`}, [3]string{`{"b": 1}`}, false},
		{[3]string{`{"a": 1}`}, [3]string{`{"a": {"$gt": 1}}`}, false},
		{[3]string{`{"$or": [{"a": 1}, {"b": 2}]}`}, [3]string{`{"$or": [{"b": 7}, {"a": 8}]}`}, true},
		// An $or of equalities on one path is the $in MongoDB's optimizer
		// makes of it (jstest in_expression_plan_cache.js).
		{[3]string{`{"c": 1, "$or": [{"b": 1}, {"b": 2}]}`}, [3]string{`{"c": 2, "b": {"$in": [1, 2, 3]}}`}, true},
		{[3]string{`{"$or": [{"b": 1}, {"b": {"$gt": 2}}]}`}, [3]string{`{"b": {"$in": [1, 2]}}`}, false},
		{[3]string{`{"a": 1}`, `{"a": 1}`}, [3]string{`{"a": 1}`, `{"a": -1}`}, false},
		{[3]string{`{"a": 1}`, `{"a": 1}`}, [3]string{`{"a": 2}`, `{"a": 1.0}`}, true},
		{[3]string{`{"a": 1}`, "", `{"b": 1, "c": 1}`}, [3]string{`{"a": 1}`, "", `{"c": true, "b": 1}`}, true},
		{[3]string{`{"a": 1}`, "", `{"b": 1}`}, [3]string{`{"a": 1}`, "", `{"b": 1, "_id": 0}`}, false},
		{[3]string{`{"a": 1}`, "", `{"b": 0}`}, [3]string{`{"a": 1}`, "", `{"c": 0}`}, true}, // whole documents
		{[3]string{`{"a": 1}`}, [3]string{`{"a": 1}`, "", `{"b": 1}`}, false},
	}
	for _, tc := range cases {
		a, b := shape(tc.a[0], tc.a[1], tc.a[2]), shape(tc.b[0], tc.b[1], tc.b[2])
		if (a == b) != tc.same {
			t.Errorf("%v (%s) and %v (%s): same shape %v, want %v", tc.a, a, tc.b, b, a == b, tc.same)
		}
		if (shapeHash(a) == shapeHash(b)) != tc.same {
			t.Errorf("%v and %v: same queryHash %v, want %v", tc.a, tc.b, !tc.same, tc.same)
		}
	}
}

// planCacheFixture is a collection of 1000 documents {_id, a, b} where a
// is i below 10 and 10 above, and b is i: {a: 1, b: ...} is quickest on
// the index a_1, {a: 10, b: ...} on b_1.
func planCacheFixture(t *testing.T) *Engine {
	t.Helper()
	e := newTestEngine(t)
	var docs []bson.Raw
	for i := range 1000 {
		docs = append(docs, bsonDoc(bson.D{{Key: "_id", Value: int32(i)}, {Key: "a", Value: int32(min(i, 10))}, {Key: "b", Value: int32(i)}}))
	}
	if _, _, err := e.Insert("test", "pc", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b"} {
		if _, err := e.CreateIndexes("test", "pc", []IndexSpec{{Key: bsonDoc(bson.D{{Key: k, Value: int32(1)}}), ExpireAfter: -1}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// findAll runs a find of filter on test.pc and returns how many documents
// it found.
func findAll(t *testing.T, e *Engine, filter bson.D) int {
	t.Helper()
	cur, err := e.Find("test", "pc", FindOptions{Filter: bsonDoc(filter)})
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	n := 0
	for {
		doc, err := cur.Next()
		if err != nil {
			t.Fatal(err)
		}
		if doc == nil {
			return n
		}
		n++
	}
}

// cachedIndex is the index the entry's cached plan scans.
func cachedIndex(ent bson.D) string {
	stage := lookupD(ent, "cachedPlan").(bson.D)
	for stage != nil {
		if name, ok := lookupD(stage, "indexName").(string); ok {
			return name
		}
		stage, _ = lookupD(stage, "inputStage").(bson.D)
	}
	return ""
}

// TestPlanCacheStates follows an entry through MongoDB's states (manual,
// "Query Plans": plan cache entry state): created inactive by the first
// multi-planned query, activated by the second, used by a query of the
// same shape with other values, and deactivated and replanned when the
// cached plan needs more than ten times the entry's works.
func TestPlanCacheStates(t *testing.T) {
	e := planCacheFixture(t)
	q1 := bson.D{{Key: "a", Value: int32(1)}, {Key: "b", Value: int32(1)}}
	if n := findAll(t, e, q1); n != 1 {
		t.Fatalf("found %d, want 1", n)
	}
	stats := planCacheStats(t, e, "test", "pc")
	if len(stats) != 1 {
		t.Fatalf("%d entries, want 1: %v", len(stats), stats)
	}
	ent := stats[0]
	if lookupD(ent, "isActive") != false || cachedIndex(ent) != "a_1" {
		t.Fatalf("after one query: %v", ent)
	}
	works := lookupD(ent, "works").(int64)
	for _, f := range []string{"version", "queryHash", "planCacheKey", "timeOfCreation", "createdFromQuery", "creationExecStats", "candidatePlanScores", "indexFilterSet", "estimatedSizeBytes"} {
		if lookupD(ent, f) == nil {
			t.Errorf("entry lacks %s: %v", f, ent)
		}
	}
	if n := len(lookupD(ent, "creationExecStats").(bson.A)); n != 2 {
		t.Errorf("%d creationExecStats, want one per candidate (2)", n)
	}
	findAll(t, e, q1)
	ent = planCacheStats(t, e, "test", "pc")[0]
	if lookupD(ent, "isActive") != true || lookupD(ent, "works").(int64) > works {
		t.Fatalf("after the second query: %v", ent)
	}
	// Same shape, other values: the cached plan holds.
	if n := findAll(t, e, bson.D{{Key: "a", Value: int32(2)}, {Key: "b", Value: int32(3)}}); n != 0 {
		t.Fatalf("found %d, want 0", n)
	}
	if ent = planCacheStats(t, e, "test", "pc")[0]; lookupD(ent, "isActive") != true || cachedIndex(ent) != "a_1" {
		t.Fatalf("after a query the cached plan serves: %v", ent)
	}
	// {a: 10} reads 990 keys of a_1: the cached plan exceeds its budget
	// and the query is replanned, b_1 winning.
	if n := findAll(t, e, bson.D{{Key: "a", Value: int32(10)}, {Key: "b", Value: int32(500)}}); n != 1 {
		t.Fatalf("found %d, want 1", n)
	}
	stats = planCacheStats(t, e, "test", "pc")
	if len(stats) != 1 || cachedIndex(stats[0]) != "b_1" {
		t.Fatalf("after replanning: %v", stats)
	}
}

// TestPlanCacheEligibility checks that the key records which indexes a
// query may use: a partial index serves one value of a shape and not
// another, so the two get separate entries and the cache never hands a
// query a plan on an index lacking some of its matches.
func TestPlanCacheEligibility(t *testing.T) {
	e := planCacheFixture(t)
	partial := IndexSpec{Key: bsonDoc(bson.D{{Key: "b", Value: int32(-1)}}), Partial: bsonDoc(bson.D{{Key: "b", Value: bson.D{{Key: "$gt", Value: int32(100)}}}}), ExpireAfter: -1}
	if _, err := e.CreateIndexes("test", "pc", []IndexSpec{partial}, nil); err != nil {
		t.Fatal(err)
	}
	in := bson.D{{Key: "a", Value: int32(10)}, {Key: "b", Value: bson.D{{Key: "$gt", Value: int32(899)}}}}
	out := bson.D{{Key: "a", Value: int32(10)}, {Key: "b", Value: bson.D{{Key: "$gt", Value: int32(49)}}}}
	for range 3 {
		if n := findAll(t, e, in); n != 100 {
			t.Fatalf("b > 899: found %d, want 100", n)
		}
		if n := findAll(t, e, out); n != 950 {
			t.Fatalf("b > 49: found %d, want 950", n)
		}
	}
	stats := planCacheStats(t, e, "test", "pc")
	if len(stats) != 2 || lookupD(stats[0], "queryHash") != lookupD(stats[1], "queryHash") ||
		lookupD(stats[0], "planCacheKey") == lookupD(stats[1], "planCacheKey") {
		t.Fatalf("want two entries of one shape under two keys: %v", stats)
	}
}

// TestPlanCacheInvalidation checks what empties the cache: index builds
// and drops, hiding an index, planCacheClear (whole or by shape),
// dropping and renaming the collection; and that explain neither uses
// nor fills it but shows the query's queryHash and planCacheKey.
func TestPlanCacheInvalidation(t *testing.T) {
	e := planCacheFixture(t)
	q1 := bson.D{{Key: "a", Value: int32(1)}, {Key: "b", Value: int32(1)}}
	q2 := bson.D{{Key: "a", Value: int32(1)}, {Key: "b", Value: bson.D{{Key: "$gt", Value: int32(1)}}}}
	fill := func() {
		findAll(t, e, q1)
		findAll(t, e, q2)
		if n := len(planCacheStats(t, e, "test", "pc")); n != 2 {
			t.Fatalf("%d entries, want 2", n)
		}
	}
	entries := func() int { return len(planCacheStats(t, e, "test", "pc")) }

	fill()
	out, err := e.Explain("test", "pc", FindOptions{Filter: bsonDoc(bson.D{{Key: "a", Value: int32(7)}, {Key: "b", Value: int32(8)}})}, QueryPlanner)
	if err != nil {
		t.Fatal(err)
	}
	qp := lookupD(out, "queryPlanner").(bson.D)
	var ent bson.D
	for _, s := range planCacheStats(t, e, "test", "pc") {
		if lookupD(s, "queryHash") == lookupD(qp, "queryHash") {
			ent = s
		}
	}
	if ent == nil || lookupD(ent, "planCacheKey") != lookupD(qp, "planCacheKey") || len(lookupD(qp, "rejectedPlans").(bson.A)) != 1 {
		t.Fatalf("explain %v does not match an entry of its shape", qp)
	}
	if _, err := e.Explain("test", "pc", FindOptions{Filter: bsonDoc(bson.D{{Key: "b", Value: int32(1)}, {Key: "a", Value: bson.D{{Key: "$lt", Value: int32(3)}}}})}, ExecutionStats); err != nil {
		t.Fatal(err)
	}
	if entries() != 2 {
		t.Fatalf("explain made an entry: %d", entries())
	}

	if err := e.PlanCacheClear("test", "pc", &QueryShape{Filter: bsonDoc(bson.D{{Key: "a", Value: int32(99)}, {Key: "b", Value: int32(98)}})}); err != nil {
		t.Fatal(err)
	}
	if stats := planCacheStats(t, e, "test", "pc"); len(stats) != 1 || lookupD(stats[0], "queryHash") == lookupD(qp, "queryHash") {
		t.Fatalf("planCacheClear by shape left %v", stats)
	}
	if err := e.PlanCacheClear("test", "pc", nil); err != nil || entries() != 0 {
		t.Fatalf("planCacheClear: %v, %d entries", err, entries())
	}

	fill()
	if _, err := e.CreateIndexes("test", "pc", []IndexSpec{{Key: bsonDoc(bson.D{{Key: "a", Value: int32(1)}, {Key: "b", Value: int32(1)}}), ExpireAfter: -1}}, nil); err != nil {
		t.Fatal(err)
	}
	if entries() != 0 {
		t.Fatal("an index build left the cache")
	}
	fill()
	hidden := true
	if _, _, err := e.ModifyIndex("test", "pc", "a_1_b_1", nil, IndexChange{Hidden: &hidden}); err != nil {
		t.Fatal(err)
	}
	if entries() != 0 {
		t.Fatal("hiding an index left the cache")
	}
	fill()
	if _, err := e.DropIndexes("test", "pc", []string{"a_1_b_1"}, nil); err != nil {
		t.Fatal(err)
	}
	if entries() != 0 {
		t.Fatal("an index drop left the cache")
	}
	fill()
	if err := e.RenameCollection("test", "pc", "test", "pc2", false); err != nil {
		t.Fatal(err)
	}
	if n := len(planCacheStats(t, e, "test", "pc2")); n != 0 {
		t.Fatalf("the renamed collection has %d entries", n)
	}
	if err := e.RenameCollection("test", "pc2", "test", "pc", false); err != nil {
		t.Fatal(err)
	}
	fill()
	if _, err := e.DropCollection("test", "pc"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.PlanCacheStats("test", "pc"); !mongoerr.Is(err, mongoerr.PlanCacheStatsNoCollection) {
		t.Fatalf("$planCacheStats of a dropped collection: %v", err)
	}
	if err := e.CreateCollection("test", "pc", CollectionOptions{}); err != nil {
		t.Fatal(err)
	}
	if entries() != 0 {
		t.Fatal("a dropped and created again collection has entries")
	}
}

// planCacheStats is e.PlanCacheStats of an existing collection.
func planCacheStats(t *testing.T, e *Engine, db, coll string) []bson.D {
	t.Helper()
	stats, err := e.PlanCacheStats(db, coll)
	if err != nil {
		t.Fatal(err)
	}
	return stats
}

// TestPlanCacheConcurrent runs queries of one shape from several
// goroutines while indexes come and go (run with -race): every query
// still finds what it should.
func TestPlanCacheConcurrent(t *testing.T) {
	e := planCacheFixture(t)
	done := make(chan struct{})
	errs := make(chan error, 4)
	for w := range 4 {
		go func() {
			for i := 0; ; i++ {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				a, b := int32((i+w)%10), int32((i*7+w)%1000)
				cur, err := e.Find("test", "pc", FindOptions{Filter: bsonDoc(bson.D{{Key: "a", Value: a}, {Key: "b", Value: bson.D{{Key: "$gte", Value: b}}}})})
				if err != nil {
					errs <- err
					return
				}
				n := int32(0)
				for {
					doc, err := cur.Next()
					if err != nil {
						errs <- err
						return
					}
					if doc == nil {
						break
					}
					n++
				}
				cur.Close()
				want := int32(0)
				for j := max(b, 0); j < 1000; j++ {
					if min(j, 10) == a {
						want++
					}
				}
				if n != want {
					errs <- fmt.Errorf("a %d, b >= %d: found %d, want %d", a, b, n, want)
					return
				}
			}
		}()
	}
	ab := IndexSpec{Key: bsonDoc(bson.D{{Key: "b", Value: int32(1)}, {Key: "a", Value: int32(1)}}), ExpireAfter: -1}
	for range 5 {
		if _, err := e.CreateIndexes("test", "pc", []IndexSpec{ab}, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := e.DropIndexes("test", "pc", []string{"b_1_a_1"}, nil); err != nil {
			t.Fatal(err)
		}
		if err := e.PlanCacheClear("test", "pc", nil); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// TestPlanCacheBounded checks that a collection's cache keeps at most
// maxPlanCacheEntries entries, the least recently used going first.
func TestPlanCacheBounded(t *testing.T) {
	e := planCacheFixture(t)
	shape := func(i int) bson.D {
		return bson.D{{Key: "a", Value: int32(1)}, {Key: "b", Value: int32(1)}, {Key: fmt.Sprintf("f%d", i), Value: int32(1)}}
	}
	for i := range maxPlanCacheEntries {
		findAll(t, e, shape(i))
	}
	findAll(t, e, shape(0)) // now the most recently used
	findAll(t, e, shape(maxPlanCacheEntries))
	stats := planCacheStats(t, e, "test", "pc")
	if len(stats) != maxPlanCacheEntries {
		t.Fatalf("%d entries, want %d", len(stats), maxPlanCacheEntries)
	}
	has := func(i int) bool {
		want, _ := bson.Marshal(shape(i))
		for _, ent := range stats {
			if bytes.Equal(lookupD(lookupD(ent, "createdFromQuery").(bson.D), "query").(bson.Raw), want) {
				return true
			}
		}
		return false
	}
	if !has(0) || has(1) || !has(maxPlanCacheEntries) {
		t.Fatalf("kept shape 0 %v, shape 1 %v, the newest %v; want true, false, true", has(0), has(1), has(maxPlanCacheEntries))
	}
}

// winningIndex is the index explain's winning plan scans ("" for none)
// and whether explain says an index filter applied.
func winningIndex(t *testing.T, e *Engine, o FindOptions) (string, bool) {
	t.Helper()
	out, err := e.Explain("test", "pc", o, QueryPlanner)
	if err != nil {
		t.Fatal(err)
	}
	qp := lookupD(out, "queryPlanner").(bson.D)
	return cachedIndex(bson.D{{Key: "cachedPlan", Value: lookupD(qp, "winningPlan")}}), lookupD(qp, "indexFilterSet").(bool)
}

// TestIndexFilters checks index filters (manual, planCacheSetFilter): only
// the listed indexes are considered for the shape, a hint is ignored, no
// usable index means a collection scan, setting a filter empties the
// shape's cache entries, and filters are listed and cleared.
func TestIndexFilters(t *testing.T) {
	e := planCacheFixture(t)
	q := bson.D{{Key: "a", Value: int32(10)}, {Key: "b", Value: int32(500)}} // b_1 wins unfiltered
	o := FindOptions{Filter: bsonDoc(q)}
	if ix, set := winningIndex(t, e, o); ix != "b_1" || set {
		t.Fatalf("unfiltered: %q, filter set %v", ix, set)
	}
	findAll(t, e, q)
	if err := e.SetIndexFilter("test", "pc", QueryShape{Filter: bsonDoc(bson.D{{Key: "b", Value: int32(1)}, {Key: "a", Value: int32(2)}})},
		[]bson.RawValue{{Type: bson.TypeEmbeddedDocument, Value: bsonDoc(bson.D{{Key: "a", Value: int32(1)}})}}); err != nil {
		t.Fatal(err)
	}
	if n := len(planCacheStats(t, e, "test", "pc")); n != 0 {
		t.Fatalf("setting a filter left %d entries of its shape", n)
	}
	if ix, set := winningIndex(t, e, o); ix != "a_1" || !set {
		t.Fatalf("filtered to a_1: %q, filter set %v", ix, set)
	}
	o.Hint = bson.RawValue{Type: bson.TypeString, Value: bsoncoreString("b_1")}
	if ix, _ := winningIndex(t, e, o); ix != "a_1" {
		t.Fatalf("a hint overrode the filter: %q", ix)
	}
	o.Hint = bson.RawValue{}
	if n := findAll(t, e, q); n != 1 {
		t.Fatalf("filtered query found %d, want 1", n)
	}
	// Another shape is not filtered.
	if ix, set := winningIndex(t, e, FindOptions{Filter: bsonDoc(bson.D{{Key: "b", Value: int32(5)}})}); ix != "b_1" || set {
		t.Fatalf("other shape: %q, filter set %v", ix, set)
	}
	// A filter naming no usable index: a collection scan.
	if err := e.SetIndexFilter("test", "pc", QueryShape{Filter: bsonDoc(q)}, []bson.RawValue{{Type: bson.TypeString, Value: bsoncoreString("nope")}}); err != nil {
		t.Fatal(err)
	}
	if ix, set := winningIndex(t, e, o); ix != "" || !set {
		t.Fatalf("filter with no usable index: %q, filter set %v", ix, set)
	}
	if n := findAll(t, e, q); n != 1 {
		t.Fatalf("collection scan found %d, want 1", n)
	}
	if err := e.SetIndexFilter("test", "pc", QueryShape{Filter: bsonDoc(bson.D{{Key: "b", Value: int32(1)}})}, []bson.RawValue{{Type: bson.TypeString, Value: bsoncoreString("a_1")}}); err != nil {
		t.Fatal(err)
	}
	if fs := e.IndexFilters("test", "pc"); len(fs) != 2 {
		t.Fatalf("%d filters listed, want 2: %v", len(fs), fs)
	}
	// Clearing a filter drops the entries planned under it (MongoDB's
	// ClearFilters::clear), by shape or all at once. A filter allowing
	// both indexes lets the query's plan be chosen among two, and cached.
	both := []bson.RawValue{{Type: bson.TypeString, Value: bsoncoreString("a_1")}, {Type: bson.TypeString, Value: bsoncoreString("b_1")}}
	cachedUnderFilter := func() {
		t.Helper()
		if err := e.SetIndexFilter("test", "pc", QueryShape{Filter: bsonDoc(q)}, both); err != nil {
			t.Fatal(err)
		}
		findAll(t, e, q)
		if n := len(planCacheStats(t, e, "test", "pc")); n != 1 {
			t.Fatalf("filtered query cached %d entries, want 1", n)
		}
	}
	cachedUnderFilter()
	if err := e.ClearIndexFilters("test", "pc", &QueryShape{Filter: bsonDoc(bson.D{{Key: "a", Value: int32(0)}, {Key: "b", Value: int32(0)}})}); err != nil {
		t.Fatal(err)
	}
	if n := len(planCacheStats(t, e, "test", "pc")); n != 0 {
		t.Fatalf("clearing the shape's filter left %d entries", n)
	}
	if ix, set := winningIndex(t, e, o); ix != "b_1" || set {
		t.Fatalf("after clearing the shape's filter: %q, filter set %v", ix, set)
	}
	// Naming a shape clears its entries even when it has no filter
	// (index_filter_commands_invalidate_plan_cache_entries.js).
	findAll(t, e, q)
	if n := len(planCacheStats(t, e, "test", "pc")); n != 1 {
		t.Fatalf("unfiltered query cached %d entries, want 1", n)
	}
	if err := e.ClearIndexFilters("test", "pc", &QueryShape{Filter: bsonDoc(q)}); err != nil {
		t.Fatal(err)
	}
	if n := len(planCacheStats(t, e, "test", "pc")); n != 0 {
		t.Fatalf("clearing a shape without a filter left %d entries", n)
	}
	cachedUnderFilter()
	if err := e.ClearIndexFilters("test", "pc", nil); err != nil || len(e.IndexFilters("test", "pc")) != 0 {
		t.Fatalf("clearing all filters: %v, %v left", err, e.IndexFilters("test", "pc"))
	}
	if n := len(planCacheStats(t, e, "test", "pc")); n != 0 {
		t.Fatalf("clearing all filters left %d entries", n)
	}
}

func bsoncoreString(s string) []byte {
	_, v, _ := bson.MarshalValue(s)
	return v
}

// TestPlanCacheOwnsItsDocuments: plan cache entries and index filters
// outlive the request that made them, so they keep copies of its query
// documents: the request's buffer reused for another message changes
// nothing they show.
func TestPlanCacheOwnsItsDocuments(t *testing.T) {
	e := planCacheFixture(t)
	scribble := func(b []byte) {
		for i := range b {
			b[i] = 'x'
		}
	}
	filter := bsonDoc(bson.D{{Key: "a", Value: int32(1)}, {Key: "b", Value: int32(1)}})
	sort, proj := bsonDoc(bson.D{{Key: "b", Value: int32(1)}}), bsonDoc(bson.D{{Key: "a", Value: int32(1)}})
	cur, err := e.Find("test", "pc", FindOptions{Filter: filter, Sort: sort, Projection: proj})
	if err != nil {
		t.Fatal(err)
	}
	for {
		doc, err := cur.Next()
		if err != nil {
			t.Fatal(err)
		}
		if doc == nil {
			break
		}
	}
	cur.Close()
	scribble(filter)
	scribble(sort)
	scribble(proj)
	stats := planCacheStats(t, e, "test", "pc")
	if len(stats) != 1 {
		t.Fatalf("%d entries, want 1", len(stats))
	}
	if got := fmt.Sprint(lookupD(stats[0], "createdFromQuery")); got != `{"query":{"a":{"$numberInt":"1"},"b":{"$numberInt":"1"}},"sort":{"b":{"$numberInt":"1"}},"projection":{"a":{"$numberInt":"1"}}}` {
		t.Errorf("createdFromQuery after the request's buffer changed: %s", got)
	}

	query, name := bsonDoc(bson.D{{Key: "b", Value: int32(2)}}), bsoncoreString("a_1")
	if err := e.SetIndexFilter("test", "pc", QueryShape{Filter: query}, []bson.RawValue{{Type: bson.TypeString, Value: name}}); err != nil {
		t.Fatal(err)
	}
	scribble(query)
	scribble(name[4:])
	fs := e.IndexFilters("test", "pc")
	if got := fmt.Sprint(fs); got != `[{"query":{"b":{"$numberInt":"2"}},"sort":{},"projection":{},"indexes":["a_1"]}]` {
		t.Errorf("index filters after the request's buffer changed: %s", got)
	}
}
