package expr

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestRewrite: the match-language conditions an expression implies
// (MongoDB's RewriteExpr), with the variable k known (a $lookup's let) and
// the variable u not; want is the condition as {op, path, value, conds}
// in extended JSON, "" when nothing rewrites.
func TestRewrite(t *testing.T) {
	for _, tt := range []struct{ expr, want string }{
		{`{"$eq": ["$a", 5]}`, `{"op": "$eq", "path": "a", "value": 5}`},
		{`{"$gt": [3, "$a.b"]}`, `{"op": "$lt", "path": "a.b", "value": 3}`},
		{`{"$lte": [3, "$$CURRENT.a"]}`, `{"op": "$gte", "path": "a", "value": 3}`},
		{`{"$eq": ["$a", "$$k"]}`, `{"op": "$eq", "path": "a", "value": "x"}`},
		{`{"$eq": ["$a", "$$k2.y"]}`, `{"op": "$eq", "path": "a", "value": 2}`},
		{`{"$eq": ["$a", "$$u"]}`, ``},
		{`{"$eq": ["$a", "$$k2.missing"]}`, ``},
		{`{"$eq": ["$a", [1]]}`, ``},
		{`{"$eq": ["$a", {"$literal": [1]}]}`, ``},
		{`{"$eq": ["$a", "$b"]}`, ``},
		{`{"$eq": ["$$ROOT.a", 1]}`, `{"op": "$eq", "path": "a", "value": 1}`},
		{`{"$eq": ["$$ROOT", 1]}`, ``},
		{`{"$ne": ["$a", 1]}`, ``},
		{`{"$eq": [{"$add": ["$a", 1]}, 1]}`, ``},
		{`{"$eq": ["$a", {"$add": [1, 1]}]}`, `{"op": "$eq", "path": "a", "value": 2}`},
		{`{"$and": [{"$eq": ["$a", 1]}, {"$eq": ["$a", "$b"]}, {"$lt": ["$c", 2]}]}`,
			`{"op": "$and", "conds": [{"op": "$eq", "path": "a", "value": 1}, {"op": "$lt", "path": "c", "value": 2}]}`},
		{`{"$and": [{"$eq": ["$a", "$b"]}]}`, ``},
		{`{"$or": [{"$eq": ["$a", 1]}, {"$gte": ["$c", 2]}]}`,
			`{"op": "$or", "conds": [{"op": "$eq", "path": "a", "value": 1}, {"op": "$gte", "path": "c", "value": 2}]}`},
		{`{"$or": [{"$eq": ["$a", 1]}, {"$eq": ["$a", "$b"]}]}`, ``},
		{`{"$not": [{"$eq": ["$a", 1]}]}`, ``},
	} {
		var v bson.RawValue
		var doc bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(`{"e": `+tt.expr+`}`), false, &doc); err != nil {
			t.Fatal(err)
		}
		v = doc.Lookup("e")
		e, err := Compile(v, NewScope("k", "k2", "u"))
		if err != nil {
			t.Fatalf("%s: %v", tt.expr, err)
		}
		ctx := &Context{Vars: map[string]bson.RawValue{
			"k":  bson.RawValue{Type: bson.TypeString, Value: []byte{2, 0, 0, 0, 'x', 0}},
			"k2": mustValue(t, `{"y": 2}`),
		}}
		c, ok := e.Rewrite(ctx)
		got := ""
		if ok {
			got = condJSON(t, c)
		}
		want := ""
		if tt.want != "" {
			var w bson.Raw
			if err := bson.UnmarshalExtJSON([]byte(tt.want), false, &w); err != nil {
				t.Fatal(err)
			}
			want = w.String()
		}
		if got != want {
			t.Errorf("%s: got %s, want %s", tt.expr, got, want)
		}
		if _, ok := e.Rewrite(nil); ok && (tt.expr == `{"$eq": ["$a", "$$k"]}`) {
			t.Errorf("%s: rewritten without the variables", tt.expr)
		}
	}
}

// mustValue is the document text parsed as a value.
func mustValue(t *testing.T, text string) bson.RawValue {
	var d bson.Raw
	if err := bson.UnmarshalExtJSON([]byte(text), false, &d); err != nil {
		t.Fatal(err)
	}
	return bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: d}
}

// condJSON is c as the document {op, path, value, conds} in extended
// JSON, its numbers as written in the want column.
func condJSON(t *testing.T, c Cond) string {
	d := bson.D{{Key: "op", Value: c.Op}}
	if c.Path != "" {
		d = append(d, bson.E{Key: "path", Value: c.Path}, bson.E{Key: "value", Value: c.Value})
	}
	if c.Conds != nil {
		var arr bson.A
		for _, cc := range c.Conds {
			var sub bson.Raw
			if err := bson.UnmarshalExtJSON([]byte(condJSON(t, cc)), false, &sub); err != nil {
				t.Fatal(err)
			}
			arr = append(arr, sub)
		}
		d = append(d, bson.E{Key: "conds", Value: arr})
	}
	b, err := bson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return bson.Raw(b).String()
}
