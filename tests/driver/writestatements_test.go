package driver_test

import (
	"context"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestWriteStatements runs update and findAndModify commands and compares
// the write error (or command error) code and the collection afterwards
// with MongoDB's, as jstests/core/write/update/upsert_fields.js,
// update_with_pipeline.js, update_modifier_pop.js, update_arrayFilters.js,
// find_and_modify_server6865.js and core/query/expr/expr.js state them.
func TestWriteStatements(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	coll := db.Collection("ups")
	// nested(n) is n documents {"a": ...} around 1.
	nested := func(n int) string { return strings.Repeat(`{"a": `, n) + "1" + strings.Repeat("}", n) }
	tests := []struct {
		name string
		docs string // the collection before, an array
		cmd  string
		code int    // of the command or its one write error; 0: none
		want string // the collection after, an array in _id order
	}{
		{"upsertSupplied inserts c.new with the query's _id", `[]`,
			`{"update": "ups", "updates": [{"q": {"_id": "s"}, "u": [{"$set": {"x": 1}}], "upsert": true, "upsertSupplied": true, "c": {"new": {"supplied": true}}}]}`,
			0, `[{"_id": "s", "supplied": true}]`},
		{"upsertSupplied with a match updates", `[{"_id": "s"}]`,
			`{"update": "ups", "updates": [{"q": {"_id": "s"}, "u": [{"$set": {"x": 1}}], "upsert": true, "upsertSupplied": true, "c": {"new": {"supplied": true}}}]}`,
			0, `[{"_id": "s", "x": 1}]`},
		{"upsertSupplied without upsert", `[]`,
			`{"update": "ups", "updates": [{"q": {"_id": "s"}, "u": [{"$set": {"x": 1}}], "upsertSupplied": true, "c": {"new": {}}}]}`,
			9, `[]`},
		{"upsertSupplied without c.new", `[]`,
			`{"update": "ups", "updates": [{"q": {"_id": "s"}, "u": [{"$set": {"x": 1}}], "upsert": true, "upsertSupplied": true, "c": {"new": "x"}}]}`,
			9, `[]`},
		{"$expr in an upsert's query", `[]`,
			`{"update": "ups", "updates": [{"q": {"_id": 0, "$expr": {"$eq": ["$a", 5]}}, "u": {"$set": {"b": 6}}, "upsert": true}]}`,
			224, `[]`},
		{"$expr in an upserting findAndModify", `[]`,
			`{"findAndModify": "ups", "query": {"$or": [{"$expr": {"$eq": ["$a", 5]}}]}, "update": {"$set": {"b": 6}}, "upsert": true}`,
			224, `[]`},
		{"explain of an upsert with $expr", `[]`,
			`{"explain": {"update": "ups", "updates": [{"q": {"$expr": {"$eq": ["$a", 5]}}, "u": {"$set": {"b": 6}}, "upsert": true}]}}`,
			224, `[]`},
		{"explain of upsertSupplied without c.new", `[]`,
			`{"explain": {"update": "ups", "updates": [{"q": {"_id": "s"}, "u": [{"$set": {"x": 1}}], "upsert": true, "upsertSupplied": true}]}}`,
			9, `[]`},
		{"explain of a positional projection of the new document", `[{"_id": 42, "a": [1, 2]}]`,
			`{"explain": {"findAndModify": "ups", "query": {"a": 2}, "fields": {"a.$": 1}, "update": {"$set": {"b": 1}}, "new": true}}`,
			2, `[{"_id": 42, "a": [1, 2]}]`},
		{"$expr in a plain update", `[{"_id": 0, "a": 5}]`,
			`{"update": "ups", "updates": [{"q": {"$expr": {"$eq": ["$a", 5]}}, "u": {"$set": {"b": 6}}}]}`,
			0, `[{"_id": 0, "a": 5, "b": 6}]`},
		// MongoDB's storage validation of an update's result: no more
		// than 180 levels, the document itself the first
		{"$set of a path 180 levels deep", `[{"_id": 1}]`,
			`{"update": "ups", "updates": [{"q": {"_id": 1}, "u": {"$set": {"` + strings.Repeat("a.", 179) + `a": 1}}}]}`,
			0, `[{"_id": 1, "a": ` + nested(179) + `}]`},
		{"$set of a path 181 levels deep", `[{"_id": 1}]`,
			`{"update": "ups", "updates": [{"q": {"_id": 1}, "u": {"$set": {"` + strings.Repeat("a.", 180) + `a": 1}}}]}`,
			15, `[{"_id": 1}]`},
		{"findAndModify to 181 levels", `[{"_id": 1}]`,
			`{"findAndModify": "ups", "query": {"_id": 1}, "update": {"$set": {"x": ` + nested(180) + `}}}`,
			15, `[{"_id": 1}]`},
		{"a replacement 181 levels deep", `[{"_id": 1}]`,
			`{"update": "ups", "updates": [{"q": {"_id": 1}, "u": {"x": ` + nested(180) + `}}]}`,
			15, `[{"_id": 1}]`},
		{"a pipeline to 181 levels", `[{"_id": 1}]`,
			`{"update": "ups", "updates": [{"q": {"_id": 1}, "u": [{"$set": {"x": {"$literal": ` + nested(180) + `}}}]}]}`,
			15, `[{"_id": 1}]`},
		{"a replacement takes the _id alone", `[]`,
			`{"update": "ups", "updates": [{"q": {"_id": 1, "x": [1, {"x": 1}], "x.x": 1}, "u": {"y": 2}, "upsert": true}]}`,
			0, `[{"_id": 1, "y": 2}]`},
		{"a replacement with a path inside _id", `[]`,
			`{"update": "ups", "updates": [{"q": {"_id.x": 1, "_id.y": 2}, "u": {}, "upsert": true}]}`,
			111, `[]`},
		{"an operator update takes $all's value", `[]`,
			`{"update": "ups", "updates": [{"q": {"_id": {"$all": [1]}, "x.x": {"$all": [2]}}, "u": {"$set": {"a": 1}}, "upsert": true}]}`,
			0, `[{"_id": 1, "x": {"x": 2}, "a": 1}]`},
		// UpdateDriver refuses a multi replacement as the statement runs:
		// the others apply (an unordered batch goes on past it).
		{"a multi replacement fails its statement alone", `[{"_id": 1}, {"_id": 2}]`,
			`{"update": "ups", "ordered": false, "updates": [{"q": {"_id": 1}, "u": {"$set": {"a": 1}}}, {"q": {}, "u": {"x": 1}, "multi": true}, {"q": {"_id": 2}, "u": {"$set": {"b": 1}}}]}`,
			9, `[{"_id": 1, "a": 1}, {"_id": 2, "b": 1}]`},
		{"$pop through a scalar", `[{"_id": 0, "a": {"b": 1}}]`,
			`{"update": "ups", "updates": [{"q": {"_id": 0}, "u": {"$pop": {"a.b.c": 1}}}]}`,
			28, `[{"_id": 0, "a": {"b": 1}}]`},
		{"findAndModify remove with arrayFilters", `[{"_id": 0}]`,
			`{"findAndModify": "ups", "query": {"_id": 0}, "remove": true, "arrayFilters": [{"i": 0}]}`,
			9, `[{"_id": 0}]`},
		{"findAndModify positional projection of the new document", `[{"_id": 42, "a": [1, 2]}]`,
			`{"findAndModify": "ups", "query": {"a": 2}, "fields": {"a.$": 1}, "update": {"$set": {"b": 1}}, "new": true}`,
			2, `[{"_id": 42, "a": [1, 2]}]`},
		{"findAndModify positional projection of the old document", `[{"_id": 42, "a": [1, 2]}]`,
			`{"findAndModify": "ups", "query": {"a": 2}, "fields": {"a.$": 1}, "update": {"$set": {"b": 1}}}`,
			0, `[{"_id": 42, "a": [1, 2], "b": 1}]`},
		{"$expr in arrayFilters", `[{"_id": 0, "a": [{"b": 5}]}]`,
			`{"update": "ups", "updates": [{"q": {"_id": 0}, "u": {"$set": {"a.$[i].b": 6}}, "arrayFilters": [{"i.b": 5, "$expr": {"$eq": ["$i.b", 5]}}]}]}`,
			224, `[{"_id": 0, "a": [{"b": 5}]}]`},
		{"$where in arrayFilters", `[{"_id": 0, "a": [1]}]`,
			`{"update": "ups", "updates": [{"q": {"_id": 0}, "u": {"$set": {"a.$[i]": 5}}, "arrayFilters": [{"$where": "this.a == 2"}]}]}`,
			2, `[{"_id": 0, "a": [1]}]`},
		{"an unknown operator as arrayFilters' identifier", `[{"_id": 0, "a": [1]}]`,
			`{"update": "ups", "updates": [{"q": {"_id": 0}, "u": {"$set": {"a.$[$i]": 1}}, "arrayFilters": [{"$i": 0}]}]}`,
			2, `[{"_id": 0, "a": [1]}]`},
		{"$expr in a $pull condition", `[{"_id": 0, "a": [{"b": 5}]}]`,
			`{"update": "ups", "updates": [{"q": {"_id": 0}, "u": {"$pull": {"a": {"$expr": {"$eq": ["$b", 5]}}}}}]}`,
			224, `[{"_id": 0, "a": [{"b": 5}]}]`},
		{"undefined in the query", `[]`,
			`{"update": "ups", "updates": [{"q": {"x": {"$undefined": true}}, "u": {"$set": {"a": 1}}, "upsert": true}]}`,
			2, `[]`},
		// the parser refuses $expr before it parses its expression
		{"$expr with an undefined variable in arrayFilters", `[{"_id": 0, "a": [1]}]`,
			`{"update": "ups", "updates": [{"q": {"_id": 0}, "u": {"$set": {"a.$[i]": 5}}, "arrayFilters": [{"$expr": {"$eq": ["$$i", 1]}}]}]}`,
			224, `[{"_id": 0, "a": [1]}]`},
		{"$expr with an unknown operator in a $pull condition", `[{"_id": 0, "a": [1]}]`,
			`{"update": "ups", "updates": [{"q": {"_id": 0}, "u": {"$pull": {"a": {"$expr": {"$foo": 1}}}}}]}`,
			224, `[{"_id": 0, "a": [1]}]`},
		{"$expr with an undefined variable in an upsert's query", `[]`,
			`{"update": "ups", "updates": [{"q": {"$expr": {"$eq": ["$$zz", 1]}}, "u": {"$set": {"b": 1}}, "upsert": true}]}`,
			224, `[]`},
		// ObjectReplaceExecutor validates a replacement as it applies it
		{"a replacement matching nothing is not validated", `[{"_id": 1}]`,
			`{"update": "ups", "updates": [{"q": {"_id": 2}, "u": {"a": 1, "$x": 1}}, {"q": {"_id": 2}, "u": {"_id": [2]}}]}`,
			0, `[{"_id": 1}]`},
		{"findAndModify with a replacement matching nothing", `[{"_id": 1}]`,
			`{"findAndModify": "ups", "query": {"_id": 2}, "update": {"a": 1, "$x": 1}}`,
			0, `[{"_id": 1}]`},
		{"a replacement _id holding a '$' field", `[{"_id": 1}]`,
			`{"update": "ups", "updates": [{"q": {"_id": 1}, "u": {"_id": {"$x": 1}}}]}`,
			52, `[{"_id": 1}]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := coll.Drop(ctx); err != nil {
				t.Fatal(err)
			}
			var before struct{ D []bson.Raw }
			if err := bson.UnmarshalExtJSON([]byte(`{"D": `+tc.docs+`}`), false, &before); err != nil {
				t.Fatal(err)
			}
			for _, d := range before.D {
				if _, err := coll.InsertOne(ctx, d); err != nil {
					t.Fatal(err)
				}
			}
			var reply struct {
				WriteErrors []struct{ Code int } `bson:"writeErrors"`
			}
			err := db.RunCommand(ctx, mustExt(t, tc.cmd)).Decode(&reply)
			code := serverCode(err)
			if err == nil && len(reply.WriteErrors) > 0 {
				code = reply.WriteErrors[0].Code
			}
			if code != tc.code {
				t.Fatalf("got code %d (%v), want %d", code, err, tc.code)
			}
			cur, err := coll.Find(ctx, bson.D{})
			if err != nil {
				t.Fatal(err)
			}
			var after []bson.Raw
			if err := cur.All(ctx, &after); err != nil {
				t.Fatal(err)
			}
			var want struct{ D []bson.Raw }
			if err := bson.UnmarshalExtJSON([]byte(`{"D": `+tc.want+`}`), false, &want); err != nil {
				t.Fatal(err)
			}
			if len(after) != len(want.D) {
				t.Fatalf("collection %v, want %v", after, want.D)
			}
			for i := range after {
				if after[i].String() != want.D[i].String() {
					t.Fatalf("collection %v, want %v", after, want.D)
				}
			}
		})
	}
}
