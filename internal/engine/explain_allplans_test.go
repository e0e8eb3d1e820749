package engine

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestExplainAllPlansExecution checks executionStats' allPlansExecution
// (MongoDB's generateExecutionInfo): at verbosity allPlansExecution, each
// candidate's trial statistics, the winner's first and then the rejected
// plans in rejectedPlans' order, for finds, counts and writes; an empty
// array when one plan was considered (a hint, a missing collection); no
// field at verbosity executionStats.
func TestExplainAllPlansExecution(t *testing.T) {
	e := newTestEngine(t)
	mustCreateIndex(t, e, "ap", `{"a": 1}`, false)
	mustCreateIndex(t, e, "ap", `{"b": 1}`, false)
	var docs []bson.Raw
	for i := range 300 {
		docs = append(docs, bsonDoc(bson.D{{Key: "_id", Value: int32(i)}, {Key: "a", Value: int32(i % 10)}, {Key: "b", Value: int32(i % 3)}}))
	}
	if _, _, err := e.Insert("test", "ap", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	filter := ext(t, `{"a": 1, "b": 2}`)
	hint := bson.RawValue{Type: bson.TypeString, Value: bsoncoreString("a_1")}
	tests := []struct {
		name    string
		explain func(v Verbosity) (bson.D, error)
		plans   int    // allPlansExecution entries (-1: no field)
		stage   string // the write stage over the winner, if any
	}{
		{"find", func(v Verbosity) (bson.D, error) { return e.Explain("test", "ap", FindOptions{Filter: filter}, v) }, 2, ""},
		{"find hinted", func(v Verbosity) (bson.D, error) {
			return e.Explain("test", "ap", FindOptions{Filter: filter, Hint: hint}, v)
		}, 0, ""},
		{"find missing", func(v Verbosity) (bson.D, error) { return e.Explain("test", "none", FindOptions{Filter: filter}, v) }, 0, ""},
		{"count", func(v Verbosity) (bson.D, error) { return e.ExplainCount("test", "ap", FindOptions{Filter: filter}, v) }, 2, ""},
		{"update", func(v Verbosity) (bson.D, error) {
			return e.ExplainUpdate("test", "ap", UpdateSpec{Filter: filter, Update: ext(t, `{"$set": {"z": 1}}`)}, v)
		}, 2, "UPDATE"},
		{"delete", func(v Verbosity) (bson.D, error) {
			return e.ExplainDelete("test", "ap", filter, 0, bson.RawValue{}, WriteOptions{}, v)
		}, 2, "DELETE"},
		{"findAndModify", func(v Verbosity) (bson.D, error) {
			return e.ExplainFindAndModify("test", "ap", FindAndModifySpec{Filter: filter, Remove: true}, v)
		}, 2, "DELETE"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := tc.explain(ExecutionStats)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := bson.Raw(bsonDoc(out)).LookupErr("executionStats", "allPlansExecution"); err == nil {
				t.Errorf("allPlansExecution at verbosity executionStats")
			}
			out, err = tc.explain(AllPlansExecution)
			if err != nil {
				t.Fatal(err)
			}
			raw := bson.Raw(bsonDoc(out))
			all, err := raw.LookupErr("executionStats", "allPlansExecution")
			if err != nil {
				t.Fatalf("no allPlansExecution: %v", raw)
			}
			vals, _ := all.Array().Values()
			if len(vals) != tc.plans {
				t.Fatalf("%d allPlansExecution entries, want %d: %v", len(vals), tc.plans, all)
			}
			if tc.plans == 0 {
				return
			}
			// The entries are the winner and the rejected plans, each
			// with its stages as queryPlanner shows them (without the
			// write stage, which is over the multi-planner).
			qp := raw.Lookup("queryPlanner").Document()
			winning := qp.Lookup("winningPlan").Document()
			if tc.stage != "" {
				if got := winning.Lookup("stage").StringValue(); got != tc.stage {
					t.Fatalf("winning stage %s, want %s", got, tc.stage)
				}
				winning = winning.Lookup("inputStage").Document()
			}
			plans := []bson.Raw{winning}
			rejected, _ := qp.Lookup("rejectedPlans").Array().Values()
			for _, r := range rejected {
				plans = append(plans, r.Document())
			}
			if len(plans) != len(vals) {
				t.Fatalf("%d plans in queryPlanner, %d in allPlansExecution", len(plans), len(vals))
			}
			for i, v := range vals {
				ent := v.Document()
				keys := []string{"nReturned", "executionTimeMillisEstimate", "totalKeysExamined", "totalDocsExamined", "score", "executionStages"}
				elems, _ := ent.Elements()
				if len(elems) != len(keys) {
					t.Fatalf("entry %d: %v, want fields %v", i, ent, keys)
				}
				for j, el := range elems {
					if el.Key() != keys[j] {
						t.Fatalf("entry %d: field %d is %s, want %s", i, j, el.Key(), keys[j])
					}
				}
				if !ent.Lookup("executionStages").Equal(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: plans[i]}) {
					t.Errorf("entry %d stages %v, want %v", i, ent.Lookup("executionStages"), plans[i])
				}
				if ent.Lookup("totalKeysExamined").Int32() == 0 {
					t.Errorf("entry %d examined no keys", i)
				}
			}
			// On a = 1 (30 entries) the trial ends with the winner's 10
			// results; the plan on b = 2 (100 entries) finds 3 meanwhile.
			if got := vals[0].Document().Lookup("nReturned").Int32(); got != 10 {
				t.Errorf("winner returned %d in its trial, want 10", got)
			}
			if got := vals[1].Document().Lookup("nReturned").Int32(); got != 3 {
				t.Errorf("rejected plan returned %d in its trial, want 3", got)
			}
		})
	}
}

// TestExplainAllPlansExecutionTrialPeriod checks that each plan's entry
// counts only what it did within the trial: a plan sorting in memory whose
// input did not end within it returned nothing (its SORT stage had not
// produced a result), and examined no more than the trial's works, though
// Folio ran it further before the plan yielding the sort ended the trial.
func TestExplainAllPlansExecutionTrialPeriod(t *testing.T) {
	e := newTestEngine(t)
	mustCreateIndex(t, e, "tp", `{"a": 1}`, false)
	mustCreateIndex(t, e, "tp", `{"b": 1}`, false)
	var docs []bson.Raw
	for i := range 300 {
		docs = append(docs, bsonDoc(bson.D{{Key: "_id", Value: int32(i)}, {Key: "a", Value: int32(i % 10)}, {Key: "b", Value: int32(i % 3)}}))
	}
	if _, _, err := e.Insert("test", "tp", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	o := FindOptions{Filter: ext(t, `{"a": {"$gte": 1}}`), Sort: ext(t, `{"b": 1}`), Limit: 5}
	out, err := e.Explain("test", "tp", o, AllPlansExecution)
	if err != nil {
		t.Fatal(err)
	}
	vals, _ := bson.Raw(bsonDoc(out)).Lookup("executionStats", "allPlansExecution").Array().Values()
	if len(vals) != 2 {
		t.Fatalf("%d entries, want 2", len(vals))
	}
	win, rej := vals[0].Document(), vals[1].Document()
	// b_1 yields the sort: its 5 results after 6 keys end the trial.
	if n, k := win.Lookup("nReturned").Int32(), win.Lookup("totalKeysExamined").Int32(); n != 5 || k != 6 {
		t.Errorf("winner: nReturned %d, totalKeysExamined %d, want 5 and 6", n, k)
	}
	if s := rej.Lookup("executionStages", "stage").StringValue(); s != "SORT" {
		t.Fatalf("rejected plan's stage %s, want SORT", s)
	}
	if n, k, d := rej.Lookup("nReturned").Int32(), rej.Lookup("totalKeysExamined").Int32(), rej.Lookup("totalDocsExamined").Int32(); n != 0 || k != 6 || d != 6 {
		t.Errorf("sorting plan: nReturned %d, totalKeysExamined %d, totalDocsExamined %d, want 0, 6 and 6", n, k, d)
	}
}
