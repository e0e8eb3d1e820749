package driver_test

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// TestPlanEvaluationParameters: the multi-planner's trial bounds are
// server parameters, with MongoDB's defaults, types and bounds
// (jstests/noPassthrough/query_knob_validation.js): works at least 1, the
// collection fraction a double within [0, 1], max results at least 0;
// anything else is BadValue.
func TestPlanEvaluationParameters(t *testing.T) {
	client, _ := startServer(t)
	admin := client.Database("admin")
	get := func(name string) bson.RawValue {
		t.Helper()
		return mustRunRaw(t, admin, bson.D{{Key: "getParameter", Value: 1}, {Key: name, Value: 1}}).Lookup(name)
	}
	set := func(name string, v any) error {
		return admin.RunCommand(t.Context(), bson.D{{Key: "setParameter", Value: 1}, {Key: name, Value: v}}).Err()
	}
	bsonInt32 := func(n int32) []byte { return bsoncore.AppendInt32(nil, n) }
	bsonDouble := func(f float64) []byte { return bsoncore.AppendDouble(nil, f) }
	defaults := []struct {
		name string
		want bson.RawValue
	}{
		{"internalQueryPlanEvaluationWorks", bson.RawValue{Type: bson.TypeInt32, Value: bsonInt32(10000)}},
		{"internalQueryPlanEvaluationCollFraction", bson.RawValue{Type: bson.TypeDouble, Value: bsonDouble(0.3)}},
		{"internalQueryPlanEvaluationMaxResults", bson.RawValue{Type: bson.TypeInt32, Value: bsonInt32(101)}},
	}
	for _, d := range defaults {
		if got := get(d.name); !got.Equal(d.want) {
			t.Errorf("%s = %v, want %v", d.name, got, d.want)
		}
		defer set(d.name, d.want)
	}
	for _, tc := range []struct {
		name string
		v    any
		ok   bool
		want bson.RawValue
	}{
		{"internalQueryPlanEvaluationWorks", 11, true, bson.RawValue{Type: bson.TypeInt32, Value: bsonInt32(11)}},
		{"internalQueryPlanEvaluationWorks", 0, false, bson.RawValue{}},
		{"internalQueryPlanEvaluationWorks", -1, false, bson.RawValue{}},
		{"internalQueryPlanEvaluationCollFraction", 0.0, true, bson.RawValue{Type: bson.TypeDouble, Value: bsonDouble(0)}},
		{"internalQueryPlanEvaluationCollFraction", 0.444, true, bson.RawValue{Type: bson.TypeDouble, Value: bsonDouble(0.444)}},
		{"internalQueryPlanEvaluationCollFraction", 1.0, true, bson.RawValue{Type: bson.TypeDouble, Value: bsonDouble(1)}},
		{"internalQueryPlanEvaluationCollFraction", 1, true, bson.RawValue{Type: bson.TypeDouble, Value: bsonDouble(1)}},
		{"internalQueryPlanEvaluationCollFraction", -0.1, false, bson.RawValue{}},
		{"internalQueryPlanEvaluationCollFraction", 1.0001, false, bson.RawValue{}},
		{"internalQueryPlanEvaluationCollFraction", "0.5", false, bson.RawValue{}},
		{"internalQueryPlanEvaluationMaxResults", 11, true, bson.RawValue{Type: bson.TypeInt32, Value: bsonInt32(11)}},
		{"internalQueryPlanEvaluationMaxResults", 0, true, bson.RawValue{Type: bson.TypeInt32, Value: bsonInt32(0)}},
		{"internalQueryPlanEvaluationMaxResults", -1, false, bson.RawValue{}},
	} {
		err := set(tc.name, tc.v)
		if !tc.ok {
			requireCode(t, err, 2, "BadValue")
			continue
		}
		if err != nil {
			t.Fatalf("set %s %v: %v", tc.name, tc.v, err)
		}
		if got := get(tc.name); !got.Equal(tc.want) {
			t.Errorf("%s after set %v = %v, want %v", tc.name, tc.v, got, tc.want)
		}
	}
	details := mustRunRaw(t, admin, bson.D{{Key: "getParameter", Value: bson.D{{Key: "showDetails", Value: true}}}, {Key: "internalQueryPlanEvaluationCollFraction", Value: 1}})
	if !details.Lookup("internalQueryPlanEvaluationCollFraction", "settableAtRuntime").Boolean() {
		t.Errorf("collFraction not settable at runtime: %s", details)
	}
}

// TestExplainTrialScores: allPlansExecution shows each candidate as the
// multi-planner's round-robin trial left it, with plan_ranker.h's score
// (jstests/core/query/explain/explain_winning_plan.js,
// explain_plan_scores.js): on 121 documents each candidate returned
// maxResults (101) in its trial, in 101 works, with a FETCH and no SORT:
// 1 + 101/101 + 2e-4. The winner's executionStats count its whole run.
func TestExplainTrialScores(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database(testDB)
	coll := db.Collection("trialscores")
	docs := make([]any, 121)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i}}
	}
	if _, err := coll.InsertMany(t.Context(), docs); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateMany(t.Context(), []mongo.IndexModel{{Keys: bson.D{{Key: "a", Value: 1}}}, {Keys: bson.D{{Key: "a", Value: -1}, {Key: "b", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	out := mustRunRaw(t, db, bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "trialscores"}, {Key: "filter", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$gte", Value: 0}}}}}}}, {Key: "verbosity", Value: "allPlansExecution"}})
	if n := out.Lookup("executionStats", "nReturned").Int32(); n != 121 {
		t.Errorf("executionStats.nReturned %d, want 121", n)
	}
	if _, err := out.LookupErr("executionStats", "score"); err == nil {
		t.Errorf("executionStats has a score: %s", out)
	}
	all, _ := out.Lookup("executionStats", "allPlansExecution").Array().Values()
	if len(all) != 2 {
		t.Fatalf("%d plans, want 2: %s", len(all), out)
	}
	for i, v := range all {
		ent := v.Document()
		if n := ent.Lookup("nReturned").Int32(); n != 101 {
			t.Errorf("plan %d nReturned %d, want 101", i, n)
		}
		if s := ent.Lookup("score").Double(); s != 1+1+(0+1e-4+1e-4) {
			t.Errorf("plan %d score %v, want 2.0002", i, s)
		}
	}
}
