package update

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// treeCompile compiles an operator update into its update tree, as Compile
// does for every update setField does not take.
func treeCompile(t testing.TB, spec bson.Raw) *Update {
	t.Helper()
	u, err := compileOperators(spec, nil, &Options{Compile: compileQuery})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// sameApply checks that u (a setField) and the tree of the same spec give
// the same document, delta, modified flag and error.
func sameApply(t testing.TB, u *Update, spec, doc bson.Raw, insert bool) {
	t.Helper()
	if u.set.name == "" {
		t.Fatalf("%v compiled to a tree", spec)
	}
	want := treeCompile(t, spec)
	out, delta, modified, err := u.Apply(doc, -1, insert)
	wout, wdelta, wmodified, werr := want.Apply(doc, -1, insert)
	if !bytes.Equal(out, wout) || !bytes.Equal(delta, wdelta) || modified != wmodified || (err == nil) != (werr == nil) {
		t.Fatalf("%v on %v (insert %v):\n got %v %v %v %v\nwant %v %v %v %v", spec, doc, insert,
			out, bson.Raw(delta), modified, err, wout, bson.Raw(wdelta), wmodified, werr)
	}
}

// TestSetFieldAgainstTree applies random one-field $set updates to random
// documents, repeated names included, both ways.
func TestSetFieldAgainstTree(t *testing.T) {
	names := []string{"a", "b", "field0", "x.y", "$a", "_id", "", "a$", "é"}
	vals := []bson.RawValue{}
	for _, v := range []any{int32(1), int64(1), 1.0, "v", "w", bson.Null{}, true, bson.D{{Key: "a", Value: 1}}, bson.A{1}, bson.D{{Key: "$x", Value: 1}}} {
		typ, data, err := bson.MarshalValue(v)
		if err != nil {
			t.Fatal(err)
		}
		vals = append(vals, bson.RawValue{Type: typ, Value: data})
	}
	r := rand.New(rand.NewPCG(1, 2))
	taken := 0
	for range 20000 {
		idx, doc := bsoncore.AppendDocumentStart(nil)
		for range r.IntN(6) {
			v := vals[r.IntN(len(vals))]
			doc = bsoncore.AppendValueElement(doc, names[r.IntN(4)], bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value})
		}
		doc, _ = bsoncore.AppendDocumentEnd(doc, idx)
		v := vals[r.IntN(len(vals))]
		name := names[r.IntN(len(names))]
		spec, err := bson.Marshal(bson.D{{Key: "$set", Value: bson.D{{Key: name, Value: v}}}})
		if err != nil {
			t.Fatal(err)
		}
		u, err := Compile(spec, Options{Compile: compileQuery})
		if err != nil || u.set.name == "" {
			continue // a shape setField does not take
		}
		taken++
		sameApply(t, u, spec, bson.Raw(doc), r.IntN(4) == 0)
	}
	if taken < 5000 {
		t.Fatalf("only %d updates were setFields", taken)
	}
}

// TestSetFieldShape lists what Compile gives setField and what it leaves to
// the tree.
func TestSetFieldShape(t *testing.T) {
	for _, tt := range []struct {
		spec string
		opts Options
		want bool
	}{
		{`{"$set": {"a": 1}}`, Options{}, true},
		{`{"$set": {"a": {"b": [1]}}}`, Options{}, true},
		{`{"$set": {"a.b": 1}}`, Options{}, false},
		{`{"$set": {"_id": 1}}`, Options{}, false},
		{`{"$set": {"$a": 1}}`, Options{}, false},
		{`{"$set": {"": 1}}`, Options{}, false},
		{`{"$set": {"a": 1, "b": 1}}`, Options{}, false},
		{`{"$set": {}}`, Options{}, false},
		{`{"$set": {"a": 1}, "$inc": {"b": 1}}`, Options{}, false},
		{`{"$setOnInsert": {"a": 1}}`, Options{}, false},
		{`{"$set": {"a": 1}}`, Options{ArrayFilters: []bson.Raw{bson.Raw(bsoncore.NewDocumentBuilder().AppendInt32("x", 1).Build())}}, false},
	} {
		var spec bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(tt.spec), false, &spec); err != nil {
			t.Fatal(err)
		}
		tt.opts.Compile = compileQuery
		set, got := compileSetField(spec, &tt.opts)
		if got != tt.want || (set.name != "") != got {
			t.Errorf("%s: setField %v, want %v", tt.spec, got, tt.want)
		}
	}
}
