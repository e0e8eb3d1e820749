package engine

import (
	"bytes"
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// TestTrialPlans checks that among plans the static ranking cannot tell
// apart (or ranks wrongly), a trial run picks the most productive, and
// that explain lists the others as rejectedPlans. In the data, a = 1 in
// 1990 of 2000 documents and b = 1 in 3 of them.
func TestTrialPlans(t *testing.T) {
	e := newTestEngine(t)
	mustCreateIndex(t, e, "t", `{"a": 1}`, false)
	mustCreateIndex(t, e, "t", `{"b": 1}`, false)
	var docs []bson.Raw
	for i := range 2000 {
		a, b := int32(1), int32(i%500+2)
		if i%200 == 0 {
			a = 2
		}
		if i >= 1997 {
			b = 1
		}
		docs = append(docs, bsonDoc(bson.D{{Key: "_id", Value: int32(i)}, {Key: "a", Value: a}, {Key: "b", Value: b}}))
	}
	if _, _, err := e.Insert("test", "t", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		filter, sort string
		limit        int64
		win, reject  string
		sorted       bool
	}{
		// Two equalities: the selective index wins.
		{`{"a": 1, "b": 1}`, ``, 0, "b_1", "a_1", false},
		// A range with a blocking sort against the index that yields the
		// sort: with a small limit the sorted scan finishes first.
		{`{"a": {"$gte": 1}}`, `{"b": 1}`, 5, "b_1", "a_1", true},
	}
	for _, tc := range tests {
		t.Run(tc.filter+tc.sort, func(t *testing.T) {
			o := FindOptions{Filter: ext(t, tc.filter), Limit: tc.limit}
			if tc.sort != "" {
				o.Sort = ext(t, tc.sort)
			}
			q, err := compileFind(o, nil)
			if err != nil {
				t.Fatal(err)
			}
			p, trial, err := e.planFind(context.Background(), e.Collection("test", "t"), q, bson.RawValue{}, nil, o.wanted())
			if err != nil {
				t.Fatal(err)
			}
			rejected := trial.rejected
			if p.Index == nil || p.Index.Name != tc.win || p.Sorted != tc.sorted {
				t.Fatalf("winner %v sorted=%v, want %s sorted=%v", p.Index, p.Sorted, tc.win, tc.sorted)
			}
			if len(rejected) != 1 || rejected[0].Index == nil || rejected[0].Index.Name != tc.reject {
				t.Fatalf("rejected %v, want %s", rejected, tc.reject)
			}
			// The trial runs under the operation's context: a killed
			// operation stops there.
			killed, cancel := context.WithCancelCause(context.Background())
			cancel(mongoerr.New(mongoerr.Interrupted, "operation was interrupted"))
			if _, _, err := e.planFind(killed, e.Collection("test", "t"), q, bson.RawValue{}, nil, o.wanted()); !mongoerr.Is(err, mongoerr.Interrupted) {
				t.Fatalf("trial of a killed operation: %v, want Interrupted", err)
			}
			out, err := e.Explain("test", "t", o, QueryPlanner)
			if err != nil {
				t.Fatal(err)
			}
			qp := bson.Raw(bsonDoc(out)).Lookup("queryPlanner").Document()
			if got := findStage(qp.Lookup("winningPlan").Document(), "IXSCAN").Lookup("indexName").StringValue(); got != tc.win {
				t.Errorf("explain winningPlan on %s, want %s", got, tc.win)
			}
			rej, _ := qp.Lookup("rejectedPlans").Array().Values()
			if len(rej) != 1 || findStage(rej[0].Document(), "IXSCAN").Lookup("indexName").StringValue() != tc.reject {
				t.Errorf("explain rejectedPlans %v, want one on %s", rej, tc.reject)
			}
			want := findIDsIn(t, e, "t", o, `{"$natural": 1}`)
			got := findIDsIn(t, e, "t", o, "")
			if len(got) != len(want) {
				t.Errorf("plan returned %d documents, collection scan %d", len(got), len(want))
			}
		})
	}
}

// TestTrialRoundRobin checks the multi-planner's trial as MongoDB's
// MultiPlanStage runs it and plan_ranker.h scores it: the candidates
// work round-robin until one ends or returns the trial's results (or
// for maxWorks rounds), the winner is the best score 1 + results/works +
// the no-FETCH, no-SORT and no-intersection epsilons, plus 1 for a plan
// at its end, and explain's allPlansExecution shows each candidate as the
// last round left it, with its score without that bonus. Each entry
// lists the plans as allPlansExecution does, the winner first.
func TestTrialRoundRobin(t *testing.T) {
	type plan struct {
		index     string // the plan's index ("": a failed plan's, not checked)
		nReturned int32
		keys      int32 // totalKeysExamined (-1: not checked)
		score     float64
		failed    bool
	}
	pad := strings.Repeat("x", 100)
	tests := []struct {
		name     string
		indexes  []string
		docs     func(i int) bson.D
		n        int
		find     FindOptions
		setup    func(e *Engine)
		plans    []plan
		returned int // the find's documents
	}{
		// explain_winning_plan.js: every candidate returns maxResults in
		// its trial; 101 results in 101 works, a FETCH, no SORT.
		{"maxResults", []string{`{"a": 1}`, `{"a": -1, "b": 1}`}, func(i int) bson.D { return bson.D{{Key: "a", Value: i}} }, 121,
			FindOptions{Filter: ext(t, `{"a": {"$gte": 0}}`)}, nil,
			[]plan{{"", 101, 101, 2.0002, false}, {"", 101, 101, 2.0002, false}}, 121},
		// A plan that reaches its end wins the tie: b_1's 4 keys and its
		// end take 5 works for 2 results; a_1 had 2 in those 5.
		{"eof bonus", []string{`{"a": 1}`, `{"b": 1}`}, func(i int) bson.D { return bson.D{{Key: "a", Value: i % 2}, {Key: "b", Value: i}} }, 500,
			FindOptions{Filter: ext(t, `{"a": 1, "b": {"$lt": 4}}`)}, nil,
			[]plan{{"b_1", 2, 4, 1.4002, false}, {"a_1", 2, 5, 1.4002, false}}, 2},
		// The covered plan (no FETCH) wins a tie of productivity: both
		// return all 50 documents and end in the same round.
		{"no fetch bonus", []string{`{"a": 1}`, `{"a": 1, "b": 1}`}, func(i int) bson.D { return bson.D{{Key: "a", Value: i}, {Key: "b", Value: i}} }, 50,
			FindOptions{Filter: ext(t, `{"a": {"$gte": 0}, "b": {"$gte": 0}}`), Projection: ext(t, `{"_id": 0, "a": 1, "b": 1}`)}, nil,
			[]plan{{"a_1_b_1", 50, 50, 1 + 50.0/51 + 3e-4, false}, {"a_1", 50, 50, 1 + 50.0/51 + 2e-4, false}}, 50},
		// internalQueryPlanEvaluationWorks ends the trial after 5 rounds:
		// b_1 found 3 matches in 5 keys, a_1 2.
		{"max works", []string{`{"a": 1}`, `{"b": 1}`}, func(i int) bson.D { return bson.D{{Key: "a", Value: i % 2}, {Key: "b", Value: i % 3}} }, 200,
			FindOptions{Filter: ext(t, `{"a": 0, "b": 0}`)}, func(e *Engine) { e.SetTrialWorks(5); e.SetTrialCollFraction(0) },
			[]plan{{"b_1", 3, 5, 1 + 3.0/5 + 2e-4, false}, {"a_1", 2, 5, 1 + 2.0/5 + 2e-4, false}}, 34},
		// With the collection fraction at 1, the trial may last as many
		// rounds as the collection has documents: b_1 reaches its end (67
		// keys, 68 works) first; a_1 found 23 of its 34 meanwhile.
		{"coll fraction", []string{`{"a": 1}`, `{"b": 1}`}, func(i int) bson.D { return bson.D{{Key: "a", Value: i % 2}, {Key: "b", Value: i % 3}} }, 200,
			FindOptions{Filter: ext(t, `{"a": 0, "b": 0}`)}, func(e *Engine) { e.SetTrialWorks(5); e.SetTrialCollFraction(1) },
			[]plan{{"b_1", 34, 67, 1 + 34.0/68 + 2e-4, false}, {"a_1", 23, 68, 1 + 23.0/68 + 2e-4, false}}, 34},
		// internalQueryPlanEvaluationMaxResults: the first plan to return
		// 3 ends the trial.
		{"max results", []string{`{"a": 1}`, `{"b": 1}`}, func(i int) bson.D { return bson.D{{Key: "a", Value: i % 2}, {Key: "b", Value: i % 3}} }, 200,
			FindOptions{Filter: ext(t, `{"a": 0, "b": 0}`)}, func(e *Engine) { e.SetTrialMaxResults(3) },
			[]plan{{"b_1", 3, 5, 1 + 3.0/5 + 2e-4, false}, {"a_1", 2, 5, 1 + 2.0/5 + 2e-4, false}}, 34},
		// A limit smaller than maxResults ends the trial at that many
		// results, and the plan that returned them is at its end (LIMIT).
		{"limit", []string{`{"a": 1}`, `{"b": 1}`}, func(i int) bson.D { return bson.D{{Key: "a", Value: i % 2}, {Key: "b", Value: i % 3}} }, 200,
			FindOptions{Filter: ext(t, `{"a": 0, "b": 0}`), Limit: 2}, nil,
			[]plan{{"b_1", 2, 3, 1 + 2.0/3 + 2e-4, false}, {"a_1", 1, 3, 1 + 1.0/3 + 2e-4, false}}, 2},
		// A candidate whose sort fails past the memory limit is dropped
		// and listed last, failed, without a score.
		{"failed plan", []string{`{"a": 1}`, `{"b": 1}`}, func(i int) bson.D {
			return bson.D{{Key: "a", Value: i}, {Key: "b", Value: i}, {Key: "pad", Value: pad}}
		}, 200,
			FindOptions{Filter: ext(t, `{"a": {"$gte": 0}}`), Sort: ext(t, `{"b": 1}`)}, func(e *Engine) { e.SetSortMemoryLimit(1000) },
			[]plan{{"b_1", 101, 101, 2.0002, false}, {"a_1", 0, -1, 0, true}}, 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEngine(t)
			for _, ix := range tc.indexes {
				mustCreateIndex(t, e, "rr", ix, false)
			}
			var docs []bson.Raw
			for i := range tc.n {
				docs = append(docs, bsonDoc(append(bson.D{{Key: "_id", Value: int32(i)}}, tc.docs(i)...)))
			}
			if _, _, err := e.Insert("test", "rr", docs, true, WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			if tc.setup != nil {
				tc.setup(e)
			}
			out, err := e.Explain("test", "rr", tc.find, AllPlansExecution)
			if err != nil {
				t.Fatal(err)
			}
			raw := bson.Raw(bsonDoc(out))
			all, _ := raw.Lookup("executionStats", "allPlansExecution").Array().Values()
			if len(all) != len(tc.plans) {
				t.Fatalf("%d plans, want %d: %s", len(all), len(tc.plans), raw)
			}
			for i, want := range tc.plans {
				ent := all[i].Document()
				if want.index != "" {
					if got := findStage(ent.Lookup("executionStages").Document(), "IXSCAN").Lookup("indexName").StringValue(); got != want.index {
						t.Errorf("plan %d on %s, want %s", i, got, want.index)
					}
				}
				if _, err := ent.LookupErr("failed"); (err == nil) != want.failed {
					t.Errorf("plan %d failed: %v, want %v: %s", i, err == nil, want.failed, ent)
				}
				if want.failed {
					if _, err := ent.LookupErr("score"); err == nil {
						t.Errorf("failed plan %d has a score: %s", i, ent)
					}
					continue
				}
				if got := ent.Lookup("nReturned").Int32(); got != want.nReturned {
					t.Errorf("plan %d nReturned %d, want %d", i, got, want.nReturned)
				}
				if got := ent.Lookup("totalKeysExamined").Int32(); want.keys >= 0 && got != want.keys {
					t.Errorf("plan %d totalKeysExamined %d, want %d", i, got, want.keys)
				}
				if got := ent.Lookup("score").Double(); math.Abs(got-want.score) > 1e-12 {
					t.Errorf("plan %d score %v, want %v", i, got, want.score)
				}
			}
			if got := raw.Lookup("executionStats", "nReturned").Int32(); got != int32(tc.returned) {
				t.Errorf("executionStats.nReturned %d, want %d", got, tc.returned)
			}
			// The find returns what a collection scan does.
			scan := tc.find
			scan.Hint, scan.AllowDiskUse = ext(t, `{"h": {"$natural": 1}}`).Lookup("h"), true
			if got, want := docStrings(findDocs(t, e, "rr", tc.find)), docStrings(findDocs(t, e, "rr", scan)); !slices.Equal(got, want) {
				t.Errorf("find returned %v, collection scan %v", got, want)
			}
		})
	}
}

// docStrings is docs as sorted strings (a multiset).
func docStrings(docs []bson.Raw) []string {
	var out []string
	for _, d := range docs {
		out = append(out, d.String())
	}
	slices.Sort(out)
	return out
}

// TestTrialWinnerContinues checks that a find continues with the trial's
// winner (MultiPlanStage returns the winner's results of the trial first,
// then works it on): the keys examined are the trial's and the rest of the
// winner's scan, not the winner's scan read again. In the data a = 1 for
// 30 documents, b = 2 for 100, and both for 10.
func TestTrialWinnerContinues(t *testing.T) {
	e := newTestEngine(t)
	mustCreateIndex(t, e, "wc", `{"a": 1}`, false)
	mustCreateIndex(t, e, "wc", `{"b": 1}`, false)
	var docs []bson.Raw
	for i := range 300 {
		docs = append(docs, bsonDoc(bson.D{{Key: "_id", Value: int32(i)}, {Key: "a", Value: int32(i % 10)}, {Key: "b", Value: int32(i % 3)}}))
	}
	if _, _, err := e.Insert("test", "wc", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	o := FindOptions{Filter: ext(t, `{"a": 1, "b": 2}`), Projection: ext(t, `{"a": 1, "c": {"$meta": "recordId"}}`)}
	want := findDocs(t, e, "wc", FindOptions{Filter: o.Filter, Projection: o.Projection, Hint: ext(t, `{"h": {"$natural": 1}}`).Lookup("h")})
	for _, tc := range []struct {
		name       string
		maxResults int64
		keys       int64
	}{
		// a_1 ends the trial at its end (30 keys, 31 works; b_1 read 31
		// keys meanwhile) and has nothing more to read.
		{"winner at its end", 101, 61},
		// a_1 returns 2 results in 5 works (b_1 read 5 keys), then reads
		// its 25 other keys.
		{"winner midway", 2, 35},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.SetTrialMaxResults(tc.maxResults)
			defer e.SetTrialMaxResults(DefaultTrialMaxResults)
			e.PlanCacheClear("test", "wc", nil)
			st := &OpStats{}
			o.Ctx = WithOpStats(context.Background(), st)
			got := findDocs(t, e, "wc", o)
			if st.KeysExamined != tc.keys {
				t.Errorf("keys examined %d, want %d", st.KeysExamined, tc.keys)
			}
			if len(got) != len(want) {
				t.Fatalf("%d documents, want %d", len(got), len(want))
			}
			for i := range got {
				if !bytes.Equal(got[i], want[i]) {
					t.Errorf("document %d %s, want %s", i, got[i], want[i])
				}
			}
		})
	}
}

// TestTrialUnionContinues: a winning index union ($or) continues the same
// way, each replayed document's metadata from the scan that found it. In
// the data a = 1 for 6 documents and b = 2 for 5, c = 0 for 270 of 300;
// with 3 results the union ends the trial after 3 works (c_1 found 2), and
// reads its 8 other keys: 14 keys in all, not 17.
func TestTrialUnionContinues(t *testing.T) {
	e := newTestEngine(t)
	for _, ix := range []string{`{"a": 1}`, `{"b": 1}`, `{"c": 1}`} {
		mustCreateIndex(t, e, "uc", ix, false)
	}
	var docs []bson.Raw
	for i := range 300 {
		c := int32(0)
		if i%10 == 9 {
			c = 1
		}
		docs = append(docs, bsonDoc(bson.D{{Key: "_id", Value: int32(i)}, {Key: "a", Value: int32(i % 50)}, {Key: "b", Value: int32(i % 60)}, {Key: "c", Value: c}}))
	}
	if _, _, err := e.Insert("test", "uc", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.SetTrialMaxResults(3)
	o := FindOptions{Filter: ext(t, `{"$or": [{"a": 1}, {"b": 2}], "c": 0}`), Projection: ext(t, `{"k": {"$meta": "indexKey"}, "r": {"$meta": "recordId"}}`)}
	scan := o
	scan.Hint = ext(t, `{"h": "c_1"}`).Lookup("h")
	st := &OpStats{}
	o.Ctx = WithOpStats(context.Background(), st)
	got := findDocs(t, e, "uc", o)
	if st.KeysExamined != 14 {
		t.Errorf("keys examined %d, want 14", st.KeysExamined)
	}
	if len(got) != 11 {
		t.Fatalf("%d documents, want 11: %v", len(got), got)
	}
	for _, d := range got {
		id := d.Lookup("_id").Int32()
		want := "a"
		if id%50 != 1 {
			want = "b"
		}
		if _, err := d.LookupErr("k", want); err != nil {
			t.Errorf("document %d's index key %v, want one on %s", id, d.Lookup("k"), want)
		}
		if _, err := d.LookupErr("r"); err != nil {
			t.Errorf("document %d has no record id", id)
		}
	}
	if n := len(findDocs(t, e, "uc", scan)); n != 11 {
		t.Errorf("hinted scan found %d", n)
	}
}
