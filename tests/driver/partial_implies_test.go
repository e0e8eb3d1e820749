package driver_test

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// A query whose condition is the partial filter's own ({b: {$gt: 1}} for
// the filter {b: {$gt: 1}}), or a non-strict bound past it ({b: {$gte: 2}}),
// reads the partial index, as MongoDB's expression::isSubsetOf takes two
// equivalent comparisons, or a bound in the same direction, as a subset.
func TestPartialIndexSameComparison(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	coll := client.Database("partial").Collection("same")
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: doc("b", 1),
		Options: options.Index().SetPartialFilterExpression(doc("b", doc("$gt", 1)))}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertMany(ctx, []any{doc("_id", 1, "b", 0), doc("_id", 2, "b", 2)}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		filter bson.D
		stage  string
	}{
		{doc("b", doc("$gt", 1)), "IXSCAN"},
		{doc("b", doc("$gt", 1.0)), "IXSCAN"},
		{doc("b", doc("$gt", 1, "$lt", 5)), "IXSCAN"},
		{doc("b", doc("$gte", 2)), "IXSCAN"},
		{doc("b", doc("$gte", 1)), "COLLSCAN"},
		{doc("b", doc("$gt", "1")), "COLLSCAN"},
	} {
		var ex bson.Raw
		if err := coll.Database().RunCommand(ctx, doc("explain", doc("find", coll.Name(), "filter", c.filter))).Decode(&ex); err != nil {
			t.Fatal(err)
		}
		plan := ex.Lookup("queryPlanner", "winningPlan").Document()
		stage := plan.Lookup("stage").StringValue()
		if stage == "FETCH" {
			stage = plan.Lookup("inputStage", "stage").StringValue()
		}
		if stage != c.stage {
			t.Errorf("%v: %s, want %s", c.filter, plan, c.stage)
		}
	}
}
