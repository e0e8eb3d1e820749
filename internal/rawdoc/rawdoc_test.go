package rawdoc

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
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

// TestStringView: a well-formed string reads as the driver reads it; any
// other value, or a string whose length prefix or terminator is wrong, is
// not one.
func TestStringView(t *testing.T) {
	str := func(b ...byte) bson.RawValue { return bson.RawValue{Type: bson.TypeString, Value: b} }
	for _, tt := range []struct {
		v    bson.RawValue
		want string
		ok   bool
	}{
		{str(4, 0, 0, 0, 'a', 'b', 'c', 0), "abc", true},
		{str(1, 0, 0, 0, 0), "", true},
		{str(4, 0, 0, 0, 'a', 'b', 'c', 'd'), "", false}, // no terminator
		{str(5, 0, 0, 0, 'a', 'b', 'c', 0), "", false},   // length past the value
		{str(0, 0, 0, 0, 0), "", false},
		{str(0xff, 0xff, 0xff, 0xff, 0), "", false},
		{str(1, 0, 0), "", false},
		{bson.RawValue{Type: bson.TypeSymbol, Value: []byte{2, 0, 0, 0, 'a', 0}}, "", false},
	} {
		got, ok := StringView(tt.v)
		if got != tt.want || ok != tt.ok {
			t.Errorf("StringView(% x) = %q, %v; want %q, %v", tt.v.Value, got, ok, tt.want, tt.ok)
		}
		if want, wantOK := tt.v.StringValueOK(); tt.ok && (got != want || !wantOK) {
			t.Errorf("StringView(% x) = %q; the driver reads %q", tt.v.Value, got, want)
		}
	}
}
