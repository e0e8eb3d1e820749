package driver_test

import (
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
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

// TestSortKeysThroughArraysIndexed checks that an index on fields sharing
// an array (as in MongoDB's sort_array.js and array_sort_key_semantics.js)
// leaves the order to the sort key: both fields come from one element, so
// {a: [{x: 1, y: 5}, {x: 2, y: 0}]} sorts by (1, 5) ascending and (2, 0)
// descending, whether the planner picks the index, a hint forces it, a
// limit keeps the top documents or $sort runs on it.
func TestSortKeysThroughArraysIndexed(t *testing.T) {
	client, _ := startServer(t)
	ctx := t.Context()
	coll := client.Database(testDB).Collection("sortkeysindexed")
	docs := []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: bson.A{bson.D{{Key: "x", Value: 1}, {Key: "y", Value: 5}}, bson.D{{Key: "x", Value: 2}, {Key: "y", Value: 0}}}}},
		bson.D{{Key: "_id", Value: 2}, {Key: "a", Value: bson.D{{Key: "x", Value: 1}, {Key: "y", Value: 3}}}},
		bson.D{{Key: "_id", Value: 3}, {Key: "a", Value: bson.D{{Key: "x", Value: 2}, {Key: "y", Value: 1}}}},
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	hint := bson.D{{Key: "a.x", Value: 1}, {Key: "a.y", Value: 1}}
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: hint}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		sort bson.D
		want []string
	}{
		// keys ascending: 1 (1,5), 2 (1,3), 3 (2,1)
		{bson.D{{Key: "a.x", Value: 1}, {Key: "a.y", Value: 1}}, []string{"2", "1", "3"}},
		// keys descending: 1 (2,0), 2 (1,3), 3 (2,1)
		{bson.D{{Key: "a.x", Value: -1}, {Key: "a.y", Value: -1}}, []string{"3", "1", "2"}},
	}
	for _, tt := range tests {
		for _, limit := range []int64{0, 2} {
			want := tt.want
			if limit > 0 {
				want = want[:limit]
			}
			for _, h := range []any{nil, hint} {
				opts := options.Find().SetSort(tt.sort).SetLimit(limit)
				if h != nil {
					opts.SetHint(h)
				}
				cur, err := coll.Find(ctx, bson.D{}, opts)
				if got := ids(cursorDocs(t, cur, err, "find sort", tt.sort)); !slices.Equal(got, want) {
					t.Errorf("find sort %v limit %d hint %v: %v, want %v", tt.sort, limit, h, got, want)
				}
			}
		}
		cur, err := coll.Aggregate(ctx, bson.A{bson.D{{Key: "$sort", Value: tt.sort}}}, options.Aggregate().SetHint(hint))
		if got := ids(cursorDocs(t, cur, err, "$sort", tt.sort)); !slices.Equal(got, tt.want) {
			t.Errorf("$sort %v: %v, want %v", tt.sort, got, tt.want)
		}
	}
}
