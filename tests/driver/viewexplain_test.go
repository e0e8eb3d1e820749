package driver_test

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// TestExplainOnView: a find, count, distinct or aggregate on a view is
// explained as the aggregation it runs, as MongoDB explains it: over the
// collection under the view, its plan reading that collection's index.
func TestExplainOnView(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("viewexplain")
	c := db.Collection("c")
	if _, err := c.InsertMany(ctx, []any{bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 1}}, bson.D{{Key: "a", Value: 2}, {Key: "b", Value: 2}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateView(ctx, "v", "c", mongo.Pipeline{{{Key: "$match", Value: bson.D{{Key: "b", Value: bson.D{{Key: "$gt", Value: 0}}}}}}}); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []bson.D{
		{{Key: "find", Value: "v"}, {Key: "filter", Value: bson.D{{Key: "a", Value: 2}}}},
		{{Key: "count", Value: "v"}, {Key: "query", Value: bson.D{{Key: "a", Value: 2}}}},
		{{Key: "distinct", Value: "v"}, {Key: "key", Value: "b"}, {Key: "query", Value: bson.D{{Key: "a", Value: 2}}}},
		{{Key: "aggregate", Value: "v"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "a", Value: 2}}}}}}, {Key: "cursor", Value: bson.D{}}},
	} {
		raw, err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: cmd}, {Key: "verbosity", Value: "executionStats"}}).Raw()
		if err != nil {
			t.Fatalf("explain %v: %v", cmd, err)
		}
		planner, err := raw.LookupErr("stages", "0", "$cursor", "queryPlanner")
		if err != nil {
			planner, err = raw.LookupErr("queryPlanner")
		}
		if err != nil {
			t.Fatalf("explain %v: no queryPlanner in %s", cmd, raw)
		}
		if ns := planner.Document().Lookup("namespace").StringValue(); ns != "viewexplain.c" {
			t.Errorf("explain %v: namespace %q, want the collection under the view", cmd[0], ns)
		}
		if ix := planner.Document().Lookup("winningPlan", "inputStage", "indexName"); ix.Type == 0 || ix.StringValue() != "a_1" {
			t.Errorf("explain %v: winning plan %s", cmd[0], planner.Document().Lookup("winningPlan"))
		}
	}
}
