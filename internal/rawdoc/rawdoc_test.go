package rawdoc

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

func TestLookupLenFirstKey(t *testing.T) {
	doc, _ := bson.Marshal(bson.D{{Key: "a", Value: int32(1)}, {Key: "b", Value: "x"}})
	if v := Lookup(doc, "b"); v.StringValue() != "x" {
		t.Fatalf("Lookup b = %v", v)
	}
	if v := Lookup(doc, "c"); v.Type != 0 {
		t.Fatalf("Lookup c = %v, want missing", v)
	}
	if n := Len(doc); n != 2 {
		t.Fatalf("Len = %d", n)
	}
	if k := FirstKey(doc); k != "a" {
		t.Fatalf("FirstKey = %q", k)
	}
	if allocs := testing.AllocsPerRun(100, func() { Lookup(doc, "b"); Len(doc) }); allocs != 0 {
		t.Fatalf("Lookup and Len allocate %v times", allocs)
	}
}

// A malformed element ends the walk after the well-formed ones before it.
func TestMalformedStops(t *testing.T) {
	doc, _ := bson.Marshal(bson.D{{Key: "a", Value: int32(1)}, {Key: "b", Value: int32(2)}})
	doc = doc[:len(doc)-3] // cut b's value short
	if n := Len(doc); n != 1 {
		t.Fatalf("Len = %d, want 1", n)
	}
	if v := Lookup(doc, "b"); v.Type != 0 {
		t.Fatalf("Lookup b = %v, want missing", v)
	}
	if n := Len([]byte{1, 2}); n != 0 {
		t.Fatalf("Len of short input = %d", n)
	}
}

// TestStringBytes checks StringBytes against the driver's reading of
// strings, and that malformed or other values are refused.
func TestStringBytes(t *testing.T) {
	for _, tc := range []struct {
		v    bson.RawValue
		want string
		ok   bool
	}{
		{bson.RawValue{Type: bson.TypeString, Value: bsoncore.AppendString(nil, "coll")}, "coll", true},
		{bson.RawValue{Type: bson.TypeString, Value: bsoncore.AppendString(nil, "")}, "", true},
		{bson.RawValue{Type: bson.TypeString, Value: bsoncore.AppendString(nil, "a\x00b")}, "a\x00b", true},
		{bson.RawValue{Type: bson.TypeSymbol, Value: bsoncore.AppendString(nil, "coll")}, "", false},
		{bson.RawValue{Type: bson.TypeString, Value: []byte{5, 0, 0, 0, 'a', 'b', 0}}, "", false},   // length past the end
		{bson.RawValue{Type: bson.TypeString, Value: []byte{3, 0, 0, 0, 'a', 'b', 'c'}}, "", false}, // no terminator
		{bson.RawValue{Type: bson.TypeString, Value: []byte{0, 0, 0, 0, 0}}, "", false},             // length 0
		{bson.RawValue{Type: bson.TypeString, Value: []byte{1, 0, 0}}, "", false},
	} {
		got, ok := StringBytes(tc.v)
		if ok != tc.ok || string(got) != tc.want {
			t.Errorf("StringBytes(%x) = %q, %v; want %q, %v", tc.v.Value, got, ok, tc.want, tc.ok)
		}
		if s, dok := tc.v.StringValueOK(); ok && (!dok || s != string(got)) {
			t.Errorf("StringBytes(%x) = %q; the driver reads %q, %v", tc.v.Value, got, s, dok)
		}
	}
}
