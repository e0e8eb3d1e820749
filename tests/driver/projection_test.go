package driver_test

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestFindProjectionElemMatch checks find's $elemMatch projection beside
// an exclusion or a $slice, which makes the projection an exclusion: the
// field becomes its first matching element in place, or is left out.
func TestFindProjectionElemMatch(t *testing.T) {
	client, _ := startServer(t)
	coll := client.Database(testDB).Collection("projelem")
	ctx := context.Background()
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "name", Value: "Alice"}, {Key: "arr", Value: bson.A{1, 2, 3}},
		{Key: "b", Value: bson.A{10, 20}}, {Key: "secret", Value: "x"}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		proj bson.D
		want string
	}{
		{bson.D{{Key: "arr", Value: bson.D{{Key: "$elemMatch", Value: bson.D{{Key: "$gt", Value: 1}}}}}, {Key: "secret", Value: 0}},
			`{"_id": 1, "name": "Alice", "arr": [2], "b": [10, 20]}`},
		{bson.D{{Key: "_id", Value: 0}, {Key: "arr", Value: bson.D{{Key: "$elemMatch", Value: bson.D{{Key: "$gt", Value: 5}}}}}, {Key: "secret", Value: 0}},
			`{"name": "Alice", "b": [10, 20]}`},
		{bson.D{{Key: "arr", Value: bson.D{{Key: "$elemMatch", Value: bson.D{{Key: "$gte", Value: 3}}}}}, {Key: "b", Value: bson.D{{Key: "$slice", Value: 1}}}},
			`{"_id": 1, "name": "Alice", "arr": [3], "b": [10], "secret": "x"}`},
	} {
		got, err := coll.FindOne(ctx, bson.D{}, options.FindOne().SetProjection(tc.proj)).Raw()
		if err != nil {
			t.Fatal(err)
		}
		var want bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(tc.want), false, &want); err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("projection %v:\n got %s\nwant %s", tc.proj, got, want)
		}
	}
}
