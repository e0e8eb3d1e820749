package driver_test

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// TestExplainExecutesAsAggregate: an explain that runs an aggregate
// (executionStats, allPlansExecution) evaluates its pipeline as the
// aggregate does, scripts ($function, $accumulator) and the command's
// variables ($$CLUSTER_TIME on a replica set member, let) included
// (jstests/aggregation/sources/group/group_by_system_variable.js explains
// a $group by system variables; MongoDB binds the same runtime constants
// and JS scope for the explain as for the command).
func TestExplainExecutesAsAggregate(t *testing.T) {
	client := dial(t, startInstance(t, replSetConfig()))
	ctx := t.Context()
	db := client.Database(testDB)
	if _, err := db.Collection("explainexec").InsertMany(ctx, []any{bson.D{{Key: "x", Value: 1}}, bson.D{{Key: "x", Value: 2}}}); err != nil {
		t.Fatal(err)
	}
	pipelines := map[string]bson.A{
		"$function": {bson.D{{Key: "$project", Value: bson.D{{Key: "y", Value: bson.D{{Key: "$function", Value: bson.D{
			{Key: "body", Value: "function(x) { return x + 1; }"}, {Key: "args", Value: bson.A{"$x"}}, {Key: "lang", Value: "js"}}}}}}}}},
		"$accumulator": {bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: nil}, {Key: "s", Value: bson.D{{Key: "$accumulator", Value: bson.D{
			{Key: "init", Value: "function() { return 0; }"}, {Key: "accumulate", Value: "function(s, v) { return s + v; }"},
			{Key: "accumulateArgs", Value: bson.A{"$x"}}, {Key: "merge", Value: "function(a, b) { return a + b; }"}, {Key: "lang", Value: "js"}}}}}}}}},
		"$$CLUSTER_TIME": {bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$$CLUSTER_TIME"}}}}},
		"let":            {bson.D{{Key: "$project", Value: bson.D{{Key: "t", Value: "$$t"}}}}},
	}
	for name, pipeline := range pipelines {
		for _, verbosity := range []string{"executionStats", "allPlansExecution"} {
			cmd := bson.D{{Key: "aggregate", Value: "explainexec"}, {Key: "pipeline", Value: pipeline}, {Key: "cursor", Value: bson.D{}}}
			if name == "let" {
				cmd = append(cmd, bson.E{Key: "let", Value: bson.D{{Key: "t", Value: "$$CLUSTER_TIME"}}})
			}
			out, err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: cmd}, {Key: "verbosity", Value: verbosity}}).Raw()
			if err != nil {
				t.Fatalf("explain %s at %s: %v", name, verbosity, err)
			}
			stages, err := out.LookupErr("stages")
			if err != nil {
				t.Fatalf("explain %s at %s: no stages in %s", name, verbosity, out)
			}
			vals, _ := stages.Array().Values()
			last := vals[len(vals)-1].Document()
			want := int64(2)
			if name == "$accumulator" || name == "$$CLUSTER_TIME" {
				want = 1
			}
			if got, ok := last.Lookup("nReturned").AsInt64OK(); !ok || got != want {
				t.Fatalf("explain %s at %s: last stage %s, want nReturned %d", name, verbosity, last, want)
			}
		}
	}
}

// TestExplainReportsRunFailure: an explain at executionStats whose run
// fails ($expr dividing by zero on the second document, $inc of a string)
// succeeds, its executionStats starting executionSuccess false,
// errorMessage, errorCode (jstests/core/query/expr/expr.js; MongoDB's
// explainStages catches the run's error), for a find, a count, a delete,
// an update and a findAndModify; a failure to parse still fails the
// command.
func TestExplainReportsRunFailure(t *testing.T) {
	client, _ := startServer(t)
	ctx := t.Context()
	db := client.Database(testDB)
	if _, err := db.Collection("explainfail").InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 0}, {Key: "a", Value: 1}}, bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 0}}}); err != nil {
		t.Fatal(err)
	}
	divide := bson.D{{Key: "$expr", Value: bson.D{{Key: "$divide", Value: bson.A{1, "$a"}}}}}
	incString := bson.D{{Key: "$inc", Value: bson.D{{Key: "s", Value: 1}}}}
	if _, err := db.Collection("explainfail").InsertOne(ctx, bson.D{{Key: "_id", Value: 2}, {Key: "a", Value: 2}, {Key: "s", Value: "x"}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cmd  bson.D
		code int32
		msg  string
	}{
		{bson.D{{Key: "find", Value: "explainfail"}, {Key: "filter", Value: divide}}, 2, "can't $divide by zero"},
		{bson.D{{Key: "count", Value: "explainfail"}, {Key: "query", Value: divide}}, 2, "can't $divide by zero"},
		{bson.D{{Key: "delete", Value: "explainfail"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: divide}, {Key: "limit", Value: 0}}}}}, 2, "can't $divide by zero"},
		{bson.D{{Key: "update", Value: "explainfail"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "u", Value: incString}, {Key: "multi", Value: true}}}}},
			14, "Cannot apply $inc to a value of non-numeric type. {_id: 2} has the field 's' of non-numeric type string"},
		{bson.D{{Key: "findAndModify", Value: "explainfail"}, {Key: "query", Value: bson.D{{Key: "_id", Value: 2}}}, {Key: "update", Value: incString}},
			14, "Cannot apply $inc to a value of non-numeric type. {_id: 2} has the field 's' of non-numeric type string"},
	} {
		cmd := c.cmd
		out, err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: cmd}, {Key: "verbosity", Value: "executionStats"}}).Raw()
		if err != nil {
			t.Fatalf("explain %v: %v", cmd, err)
		}
		elems, _ := out.Lookup("executionStats").Document().Elements()
		if len(elems) < 3 || elems[0].Key() != "executionSuccess" || elems[0].Value().Boolean() ||
			elems[1].Key() != "errorMessage" || elems[1].Value().StringValue() != c.msg ||
			elems[2].Key() != "errorCode" || elems[2].Value().Int32() != c.code {
			t.Errorf("explain %v: executionStats %s", cmd, out.Lookup("executionStats"))
		}
		if _, err := out.LookupErr("queryPlanner", "queryHash"); err == nil {
			t.Errorf("explain %v: a failed run's queryPlanner has a queryHash: %s", cmd, out.Lookup("queryPlanner"))
		}
	}
	unbound := bson.D{{Key: "find", Value: "explainfail"}, {Key: "filter", Value: bson.D{{Key: "$expr", Value: bson.D{{Key: "$eq", Value: bson.A{"$a", "$$unbound"}}}}}}}
	err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: unbound}, {Key: "verbosity", Value: "executionStats"}}).Err()
	if ce, ok := err.(mongo.CommandError); !ok || ce.Code != 17276 {
		t.Errorf("explain of an unbound variable: %v, want error 17276", err)
	}
}
