package driver_test

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// TestMinMaxKeyComparisonsCovered: comparisons with MinKey and MaxKey bound
// an index over every type, so with a projection of the field the query is
// covered, and every document (a missing field among them) compares above
// MinKey and below MaxKey (index_bounds_minkey.js, index_bounds_maxkey.js).
func TestMinMaxKeyComparisonsCovered(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database(testDB)
	ctx := context.Background()
	coll := db.Collection("minmaxkey_bounds")
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertMany(ctx, []any{bson.D{{Key: "a", Value: "string"}}, bson.D{{Key: "a", Value: bson.D{{Key: "b", Value: 1}}}}, bson.D{}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		op   string
		v    any
		want int64
	}{
		{"$gt", bson.MinKey{}, 3}, {"$gte", bson.MinKey{}, 3}, {"$lt", bson.MinKey{}, 0}, {"$lte", bson.MinKey{}, 0},
		{"$gt", bson.MaxKey{}, 0}, {"$gte", bson.MaxKey{}, 0}, {"$lt", bson.MaxKey{}, 3}, {"$lte", bson.MaxKey{}, 3},
	} {
		find := bson.D{{Key: "find", Value: coll.Name()}, {Key: "filter", Value: bson.D{{Key: "a", Value: bson.D{{Key: tc.op, Value: tc.v}}}}},
			{Key: "projection", Value: bson.D{{Key: "a", Value: 1}, {Key: "_id", Value: 0}}}}
		var out bson.Raw
		if err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: find}, {Key: "verbosity", Value: "executionStats"}}).Decode(&out); err != nil {
			t.Fatal(err)
		}
		stats := out.Lookup("executionStats").Document()
		if n := stats.Lookup("nReturned").AsInt64(); n != tc.want {
			t.Errorf("%s %v: nReturned %d, want %d", tc.op, tc.v, n, tc.want)
		}
		if n := stats.Lookup("totalDocsExamined").AsInt64(); n != 0 {
			t.Errorf("%s %v: totalDocsExamined %d, want a covered plan: %s", tc.op, tc.v, n, out.Lookup("queryPlanner", "winningPlan"))
		}
	}
}
