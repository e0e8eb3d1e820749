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
