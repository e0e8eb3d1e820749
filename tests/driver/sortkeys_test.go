package driver_test

import (
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestSortKeysThroughArrays runs sorts from MongoDB's jstest
// sort_dotted_paths.js through find (with and without a limit, which
// keeps the top documents instead of sorting all) and $sort: fields
// through one array take their values from the same element, a numeric
// component selects an element, and an empty array mid-path is null.
func TestSortKeysThroughArrays(t *testing.T) {
	client, _ := startServer(t)
	ctx := t.Context()
	coll := client.Database(testDB).Collection("sortkeys")
	docs := []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: bson.A{bson.D{{Key: "b", Value: 4}, {Key: "c", Value: 1}}, bson.D{{Key: "b", Value: 1}, {Key: "c", Value: 2}}}}},
		bson.D{{Key: "_id", Value: 2}, {Key: "a", Value: bson.A{bson.D{{Key: "b", Value: 2}, {Key: "c", Value: 1}}, bson.D{{Key: "b", Value: 4}, {Key: "c", Value: 2}}}}},
		bson.D{{Key: "_id", Value: 3}, {Key: "a", Value: bson.A{bson.D{{Key: "b", Value: bson.A{0, 7}}}, bson.D{{Key: "b", Value: bson.A{}}}}}},
		bson.D{{Key: "_id", Value: 4}, {Key: "a", Value: bson.A{bson.A{1}, bson.D{{Key: "c", Value: 0}}}}},
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		sort bson.D
		want []string
	}{
		// (c, b) keys: 1 (1,4) (2,1); 2 (1,2) (2,4); 3 (null,0) (null,7)
		// (null,undefined); 4 (null,null) (0,null).
		{bson.D{{Key: "a.c", Value: 1}, {Key: "a.b", Value: 1}, {Key: "_id", Value: 1}}, []string{"3", "4", "2", "1"}},
		{bson.D{{Key: "a.c", Value: -1}, {Key: "a.b", Value: -1}, {Key: "_id", Value: 1}}, []string{"2", "1", "4", "3"}},
		// a.0.b: 1 -> 4, 2 -> 2, 3 -> 0 and 7, 4 -> [1] has no b: null.
		{bson.D{{Key: "a.0.b", Value: 1}, {Key: "_id", Value: 1}}, []string{"4", "3", "2", "1"}},
		{bson.D{{Key: "a.0.b", Value: -1}, {Key: "_id", Value: 1}}, []string{"3", "1", "2", "4"}},
		// a.0: 4's first element [1] is not expanded and sorts above the
		// documents, of which {b: [0, 7]} is the largest.
		{bson.D{{Key: "a.0", Value: -1}, {Key: "_id", Value: 1}}, []string{"4", "3", "1", "2"}},
	}
	for _, tt := range tests {
		for _, limit := range []int64{0, 3} {
			cur, err := coll.Find(ctx, bson.D{}, options.Find().SetSort(tt.sort).SetLimit(limit))
			got := ids(cursorDocs(t, cur, err, "find sort", tt.sort))
			want := tt.want
			if limit > 0 {
				want = want[:limit]
			}
			if !slices.Equal(got, want) {
				t.Errorf("find sort %v limit %d: %v, want %v", tt.sort, limit, got, want)
			}
		}
		cur, err := coll.Aggregate(ctx, bson.A{bson.D{{Key: "$sort", Value: tt.sort}}})
		if got := ids(cursorDocs(t, cur, err, "$sort", tt.sort)); !slices.Equal(got, tt.want) {
			t.Errorf("$sort %v: %v, want %v", tt.sort, got, tt.want)
		}
	}
}
