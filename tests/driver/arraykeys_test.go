package driver_test

import (
	"context"
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestAttributePairs runs the seed's dynamic attributes ({attrs: [{n, v},
// ...]} under the index {"attrs.n": 1, "attrs.v": 1}) as MongoDB keys
// and plans it: one key per element (validate's keysPerIndex), an
// $elemMatch bounds both fields and reads one key per match, the same
// conditions outside an $elemMatch bound attrs.n alone and still find a
// document whose name and value lie in different elements, and returnKey
// gives an element's pair.
func TestAttributePairs(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("attrpairs")
	coll := db.Collection("products")
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "attrs.n", Value: 1}, {Key: "attrs.v", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	const products, attrs = 20, 30
	var docs []any
	for p := range products {
		var list bson.A
		for a := range attrs {
			list = append(list, bson.D{{Key: "n", Value: fmt.Sprintf("attr%d", a)}, {Key: "v", Value: int32(p*attrs + a)}})
		}
		docs = append(docs, bson.D{{Key: "_id", Value: int32(p)}, {Key: "attrs", Value: list}})
	}
	// color and silver in different elements: only the query without
	// $elemMatch matches it.
	docs = append(docs, bson.D{{Key: "_id", Value: int32(products)}, {Key: "attrs", Value: bson.A{
		bson.D{{Key: "n", Value: "color"}, {Key: "v", Value: "black"}},
		bson.D{{Key: "n", Value: "finish"}, {Key: "v", Value: "silver"}},
	}}})
	docs = append(docs, bson.D{{Key: "_id", Value: int32(products + 1)}, {Key: "attrs", Value: bson.A{
		bson.D{{Key: "n", Value: "color"}, {Key: "v", Value: "silver"}},
	}}})
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	var res bson.Raw
	res, err := db.RunCommand(ctx, bson.D{{Key: "validate", Value: "products"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.Lookup("keysPerIndex", "attrs.n_1_attrs.v_1").AsInt64OK(); n != products*attrs+3 {
		t.Errorf("keysPerIndex %d, want one per element: %d", n, products*attrs+3)
	}

	for _, tc := range []struct {
		name   string
		filter bson.D
		ids    string
		vBound string // the scan's bounds on attrs.v
		keys   int64  // keys examined
	}{
		{"$elemMatch", bson.D{{Key: "attrs", Value: bson.D{{Key: "$elemMatch", Value: bson.D{{Key: "n", Value: "color"}, {Key: "v", Value: "silver"}}}}}},
			"21", `["[\"silver\", \"silver\"]"]`, 1},
		{"$elemMatch, a range", bson.D{{Key: "attrs", Value: bson.D{{Key: "$elemMatch", Value: bson.D{{Key: "n", Value: "attr3"}, {Key: "v", Value: bson.D{{Key: "$lt", Value: 100}}}}}}}},
			"0 1 2 3", `["[-inf.0, 100)"]`, 4},
		{"no $elemMatch", bson.D{{Key: "attrs.n", Value: "color"}, {Key: "attrs.v", Value: "silver"}},
			"20 21", `["[MinKey, MaxKey]"]`, 2},
	} {
		if got := ids(findAll(t, coll, tc.filter, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))); fmt.Sprint(got) != "["+tc.ids+"]" {
			t.Errorf("%s: found %v, want [%s]", tc.name, got, tc.ids)
		}
		plan, err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "products"}, {Key: "filter", Value: tc.filter}}}, {Key: "verbosity", Value: "executionStats"}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		if b := plan.Lookup("queryPlanner", "winningPlan", "inputStage", "indexBounds", "attrs.v").String(); b != tc.vBound {
			t.Errorf("%s: attrs.v bounds %s, want %s", tc.name, b, tc.vBound)
		}
		if n, _ := plan.Lookup("executionStats", "totalKeysExamined").AsInt64OK(); n != tc.keys {
			t.Errorf("%s: %d keys examined, want %d", tc.name, n, tc.keys)
		}
	}
	got := docsString(findAll(t, coll, bson.D{{Key: "_id", Value: products}}, options.Find().SetReturnKey(true).SetHint("attrs.n_1_attrs.v_1").SetMin(bson.D{{Key: "attrs.n", Value: "finish"}, {Key: "attrs.v", Value: bson.MinKey{}}}).SetMax(bson.D{{Key: "attrs.n", Value: "finish"}, {Key: "attrs.v", Value: bson.MaxKey{}}})))
	if want := `{"attrs.n": "finish","attrs.v": "silver"}`; got != want {
		t.Errorf("returnKey of the finish key: %s, want %s", got, want)
	}
}

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
