package driver_test

import (
	"context"
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestMultiKeyPaths: an index records at which components of its fields'
// paths documents held arrays, as MongoDB's path-level multikey tracking
// does; explain shows them as multiKeyPaths after isMultiKey (the _id
// index's too), and the planner treats a field that never held an array as
// a field of a non-multikey index: its ranges intersect, and fields whose
// shared path start held no array compound their bounds.
func TestMultiKeyPaths(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("multikeypaths")
	coll := db.Collection("c")
	for _, keys := range []bson.D{{{Key: "tags", Value: 1}, {Key: "price", Value: 1}}, {{Key: "o.p", Value: 1}, {Key: "o.q.r", Value: 1}}} {
		if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: keys}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := coll.InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "tags", Value: bson.A{"a", "b"}}, {Key: "price", Value: 5}, {Key: "o", Value: bson.D{{Key: "p", Value: 1}, {Key: "q", Value: bson.A{bson.D{{Key: "r", Value: bson.A{1, 2}}}}}}}},
		bson.D{{Key: "_id", Value: 2}, {Key: "tags", Value: "c"}, {Key: "price", Value: 7}, {Key: "o", Value: bson.D{{Key: "p", Value: 1}, {Key: "q", Value: bson.D{{Key: "r", Value: 3}}}}}},
	}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		filter  bson.D
		hint    any
		ids     string
		scan    string // the scan's multiKeyPaths and bounds
		isMulti bool
	}{
		{"ranges intersect on a field without arrays", bson.D{{Key: "tags", Value: "a"}, {Key: "price", Value: bson.D{{Key: "$gt", Value: 1}, {Key: "$lt", Value: 9}}}}, "tags_1_price_1", "[1]",
			`{"tags": ["tags"],"price": []} {"tags": ["[\"a\", \"a\"]"],"price": ["(1, 9)"]}`, true},
		{"no array along the shared start", bson.D{{Key: "o.p", Value: 1}, {Key: "o.q.r", Value: 3}}, "o.p_1_o.q.r_1", "[2]",
			`{"o.p": [],"o.q.r": ["o.q","o.q.r"]} {"o.p": ["[1, 1]"],"o.q.r": ["[3, 3]"]}`, true},
		{"the _id index", bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: 2}}}}, bson.D{{Key: "_id", Value: 1}}, "[2]",
			`{"_id": []} {"_id": ["[2, inf.0]"]}`, false},
	} {
		if got := ids(findAll(t, coll, tc.filter, options.Find().SetHint(tc.hint))); fmt.Sprint(got) != tc.ids {
			t.Errorf("%s: found %v, want %s", tc.name, got, tc.ids)
		}
		plan, err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: tc.filter}, {Key: "hint", Value: tc.hint}}}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		scan := plan.Lookup("queryPlanner", "winningPlan", "inputStage").Document()
		if got := scan.Lookup("multiKeyPaths").String() + " " + scan.Lookup("indexBounds").String(); got != tc.scan {
			t.Errorf("%s: scan %s, want %s", tc.name, got, tc.scan)
		}
		keys, _ := scan.Elements()
		if len(keys) < 5 || keys[3].Key() != "isMultiKey" || keys[4].Key() != "multiKeyPaths" || keys[3].Value().Boolean() != tc.isMulti {
			t.Errorf("%s: scan %s, want isMultiKey %v then multiKeyPaths", tc.name, scan, tc.isMulti)
		}
	}
}
