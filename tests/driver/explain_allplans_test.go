package driver_test

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// TestExplainAllPlansExecution: at verbosity allPlansExecution (the
// explain command's default) executionStats ends with allPlansExecution,
// each candidate plan's trial statistics (nReturned,
// executionTimeMillisEstimate, totalKeysExamined, totalDocsExamined,
// score, executionStages), the winner's first; an empty array when one
// plan was considered; absent at executionStats. On a view the $cursor
// stage carries it (views_find.js).
// https://www.mongodb.com/docs/v7.0/reference/explain-results/#mongodb-data-explain.executionStats.allPlansExecution
func TestExplainAllPlansExecution(t *testing.T) {
	client, _ := startServer(t)
	ctx := t.Context()
	db := client.Database(testDB)
	coll := db.Collection("allplans")
	docs := make([]any, 300)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i % 10}, {Key: "b", Value: i % 3}}
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateMany(ctx, []mongo.IndexModel{{Keys: bson.D{{Key: "a", Value: 1}}}, {Keys: bson.D{{Key: "b", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	ab := bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 2}}
	view := mongo.Pipeline{{{Key: "$match", Value: ab}}, {{Key: "$project", Value: bson.D{{Key: "a", Value: 1}}}}}
	if err := db.CreateView(ctx, "allplans_v", "allplans", view); err != nil {
		t.Fatal(err)
	}
	explain := func(cmd bson.D, verbosity string) bson.Raw {
		t.Helper()
		req := bson.D{{Key: "explain", Value: cmd}}
		if verbosity != "" {
			req = append(req, bson.E{Key: "verbosity", Value: verbosity})
		}
		out, err := db.RunCommand(ctx, req).Raw()
		if err != nil {
			t.Fatalf("explain %v: %v", cmd, err)
		}
		return out
	}
	find := bson.D{{Key: "find", Value: "allplans"}, {Key: "filter", Value: ab}}
	for _, tc := range []struct {
		name      string
		cmd       bson.D
		verbosity string
		path      []string // to the section holding queryPlanner and executionStats
		plans     int
	}{
		{"find", find, "allPlansExecution", nil, 2},
		{"default verbosity", find, "", nil, 2},
		{"hinted", append(find, bson.E{Key: "hint", Value: "a_1"}), "allPlansExecution", nil, 0},
		{"view", bson.D{{Key: "find", Value: "allplans_v"}}, "allPlansExecution", []string{"stages", "0", "$cursor"}, 2},
		{"update", bson.D{{Key: "update", Value: "allplans"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: ab}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "z", Value: 1}}}}}}}}}, "allPlansExecution", nil, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := explain(tc.cmd, tc.verbosity)
			sec := out
			if tc.path != nil {
				sec = out.Lookup(tc.path...).Document()
			}
			all, err := sec.LookupErr("executionStats", "allPlansExecution")
			if err != nil || all.Type != bson.TypeArray {
				t.Fatalf("no allPlansExecution array in %s", out)
			}
			vals, _ := all.Array().Values()
			if len(vals) != tc.plans {
				t.Fatalf("%d allPlansExecution entries, want %d: %s", len(vals), tc.plans, all)
			}
			if tc.plans == 0 {
				return
			}
			win := vals[0].Document()
			keys := []string{"nReturned", "executionTimeMillisEstimate", "totalKeysExamined", "totalDocsExamined", "score", "executionStages"}
			for i, v := range vals {
				elems, _ := v.Document().Elements()
				if len(elems) != len(keys) {
					t.Fatalf("entry %d: %s, want fields %v", i, v, keys)
				}
				for j, el := range elems {
					if el.Key() != keys[j] {
						t.Fatalf("entry %d: field %d is %s, want %s", i, j, el.Key(), keys[j])
					}
				}
			}
			// The winner, on a_1 (30 keys, 10 matches), ends the trial;
			// the plan on b_1 finds 3 meanwhile.
			if ix := win.Lookup("executionStages", "inputStage", "indexName").StringValue(); ix != "a_1" {
				t.Errorf("first entry on %s, want the winner's a_1", ix)
			}
			if n, keys := win.Lookup("nReturned").Int32(), win.Lookup("totalKeysExamined").Int32(); n != 10 || keys != 30 {
				t.Errorf("winner's trial: nReturned %d, totalKeysExamined %d, want 10 and 30", n, keys)
			}
			rej := vals[1].Document()
			if ix := rej.Lookup("executionStages", "inputStage", "indexName").StringValue(); ix != "b_1" {
				t.Errorf("second entry on %s, want the rejected b_1", ix)
			}
			if n := rej.Lookup("nReturned").Int32(); n != 3 {
				t.Errorf("rejected plan's trial: nReturned %d, want 3", n)
			}
			if !(win.Lookup("score").Double() > rej.Lookup("score").Double()) {
				t.Errorf("winner's score %v not above the rejected plan's %v", win.Lookup("score"), rej.Lookup("score"))
			}
			if rp, _ := sec.Lookup("queryPlanner", "rejectedPlans").Array().Values(); len(rp) != 1 {
				t.Errorf("rejectedPlans %v, want the b_1 plan", rp)
			}
		})
	}
	// At executionStats there is no allPlansExecution.
	if _, err := explain(find, "executionStats").LookupErr("executionStats", "allPlansExecution"); err == nil {
		t.Errorf("allPlansExecution at verbosity executionStats")
	}
}
