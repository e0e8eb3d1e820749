package query

import (
	"errors"
	"testing"

	"github.com/folio-db/folio/internal/mongoerr"
	"go.mongodb.org/mongo-driver/v2/bson"
)

func ext(t testing.TB, s string) bson.Raw {
	t.Helper()
	var r bson.Raw
	if err := bson.UnmarshalExtJSON([]byte(s), false, &r); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return r
}

func checkErr(t *testing.T, what string, err error, code mongoerr.Code, msg string) {
	t.Helper()
	var me *mongoerr.Error
	if !errors.As(err, &me) {
		t.Errorf("%s: error %v, want code %d", what, err, code)
		return
	}
	if me.Code != code || (msg != "" && me.Msg != msg) {
		t.Errorf("%s: got %d %q, want %d %q", what, me.Code, me.Msg, code, msg)
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		filter string
		code   mongoerr.Code
		msg    string
	}{
		{`{"$foo": 1}`, 2, "unknown top level operator: $foo"},
		{`{"a": {"$foo": 1}}`, 2, "unknown operator: $foo"},
		{`{"a": {"$gt": 1, "b": 1}}`, 2, "unknown operator: b"},
		{`{"a": {"$in": 1}}`, 2, "$in needs an array"},
		{`{"a": {"$nin": 1}}`, 2, "$nin needs an array"},
		{`{"a": {"$in": [{"$gt": 1}]}}`, 2, "cannot nest $ under $in"},
		{`{"a": {"$size": "1"}}`, 2, "$size needs a number"},
		{`{"a": {"$size": -1}}`, 2, "$size may not be negative"},
		{`{"a": {"$size": 1.5}}`, 2, "$size must be a whole number"},
		{`{"a": {"$size": {"$numberLong": "9999999999"}}}`, 2, "$size must be representable as a 32-bit integer"},
		{`{"$and": []}`, 2, "$and/$or/$nor must be a nonempty array"},
		{`{"$or": []}`, 2, "$and/$or/$nor must be a nonempty array"},
		{`{"$or": 1}`, 2, "$or must be an array"},
		{`{"$nor": {}}`, 2, "$nor must be an array"},
		{`{"$or": [1]}`, 2, "$or/$and/$nor entries need to be full objects"},
		{`{"a": {"$regex": 1}}`, 2, "$regex has to be a string"},
		{`{"a": {"$regex": "x", "$options": 1}}`, 2, "$options has to be a string"},
		{`{"a": {"$options": "i"}}`, 2, "$options needs a $regex"},
		{`{"a": {"$regex": {"$regularExpression": {"pattern": "x", "options": "i"}}, "$options": "i"}}`, 51075, "options set in both $regex and $options"},
		{`{"a": {"$regex": "x", "$options": "z"}}`, 51108, "invalid flag in regex options: z"},
		{`{"a": {"$regex": "(?<=a)b"}}`, 51091, ""},
		{`{"a": {"$not": 1}}`, 2, "$not needs a regex or a document"},
		{`{"a": {"$not": {}}}`, 2, "$not cannot be empty"},
		{`{"a": {"$not": {"$bad": 1}}}`, 2, "unknown operator: $bad"},
		{`{"a": {"$mod": 1}}`, 2, "malformed mod, needs to be an array"},
		{`{"a": {"$mod": [1]}}`, 2, "malformed mod, not enough elements"},
		{`{"a": {"$mod": [1, 2, 3]}}`, 2, "malformed mod, too many elements"},
		{`{"a": {"$mod": [0, 1]}}`, 2, "divisor cannot be 0"},
		{`{"a": {"$mod": ["a", 1]}}`, 2, "malformed mod, divisor not a number"},
		{`{"a": {"$mod": [1, "a"]}}`, 2, "malformed mod, remainder not a number"},
		{`{"a": {"$all": 1}}`, 2, "$all needs an array"},
		{`{"a": {"$all": [{"$elemMatch": {"b": 1}}, 1]}}`, 2, "$all/$elemMatch has to be consistent"},
		{`{"a": {"$all": [{"$gt": 1}]}}`, 2, "no $ expressions in $all"},
		{`{"a": {"$elemMatch": 1}}`, 2, "$elemMatch needs an Object"},
		{`{"a": {"$elemMatch": {"$where": "1"}}}`, 2, "$elemMatch cannot contain $where expression"},
		{`{"a": {"$elemMatch": {"b": {"$bad": 1}}}}`, 2, "unknown operator: $bad"},
		{`{"a": {"$gt": {"$regularExpression": {"pattern": "x", "options": ""}}}}`, 2, "Can't have RegEx as arg to predicate over field 'a'."},
		{`{"a": {"$ne": {"$regularExpression": {"pattern": "x", "options": ""}}}}`, 2, "Can't have regex as arg to $ne."},
		{`{"a": {"$type": "foo"}}`, 2, "Unknown type name alias: foo"},
		{`{"a": {"$type": 100}}`, 2, "Invalid numerical type code: 100"},
		{`{"a": {"$type": []}}`, 9, "$type must match at least one type"},
		{`{"a": {"$type": {}}}`, 14, "type must be represented as a number or a string"},
		{`{"$where": "this.a == 1"}`, 238, "$where is not supported"},
		{`{"a": {"$where": 1}}`, 2, "$where cannot be applied to a field"},
		{`{"$expr": {"$foo": 1}}`, 168, "Unrecognized expression '$foo'"},
		{`{"$expr": "$$undefinedVar"}`, 17276, "Use of undefined variable: undefinedVar"},
		{`{"$or": [{"$expr": {"$add": [1], "$sub": 2}}]}`, 15983, ""},
		{`{"a": {"$elemMatch": {"$expr": {"$eq": ["$a", 1]}}}}`, 2, "$expr can only be applied to the top-level document"},
		{`{"$text": {"$search": "x"}}`, 238, "$text is not supported"},
		{`{"$jsonSchema": 1}`, 14, "$jsonSchema must be an object"},
		{`{"a": {"$near": [0, 0]}}`, 238, "$near is not supported"},
		{`{"a": {"$bitsAllSet": -1}}`, 9, ""},
		{`{"a": {"$bitsAllSet": 1.5}}`, 9, ""},
		{`{"a": {"$bitsAllSet": "x"}}`, 2, ""},
		{`{"a": {"$bitsAnySet": [-1]}}`, 2, ""},
		{`{"a": {"$bitsAnySet": ["x"]}}`, 2, ""},
		{`{"$alwaysTrue": 2}`, 9, "$alwaysTrue must be an integer value of 1"},
		{`{"$or": [{"a": {"$bad": 1}}]}`, 2, "unknown operator: $bad"},
	}
	for _, tt := range tests {
		_, err := Compile(ext(t, tt.filter))
		checkErr(t, tt.filter, err, tt.code, tt.msg)
	}
}

func TestWalkTree(t *testing.T) {
	f, err := Compile(ext(t, `{"a": {"$gt": 1, "$ne": 5}, "$or": [{"b": {"$in": [1, 2]}}, {"c.d": {"$regularExpression": {"pattern": "x", "options": ""}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	Walk(f.Root(), func(n *Node) bool {
		got = append(got, n.Kind.String()+":"+n.Path)
		return true
	})
	want := []string{"$and:", "$gt:a", "$not:", "$eq:a", "$or:", "$in:b", "$regex:c.d"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}
