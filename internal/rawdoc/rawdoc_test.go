package rawdoc

import (
	"fmt"
	"strings"
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

// AllAlongPath takes an all-digits part as a position and looks it up by
// name, as extractAllElementsAlongPath does: "01" names no element; other
// parts are fields of the array's documents.
func TestAllAlongPath(t *testing.T) {
	doc, _ := bson.Marshal(bson.M{"a": bson.A{bson.M{"b": 1, "01": 2, "+1": 3}, bson.M{"b": 4}, 5}})
	root := bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}
	for _, tc := range []struct {
		path string
		want string
	}{
		{"a.b", "[1 4]"},
		{"a.1.b", "[4]"},
		{"a.2", "[5]"},
		{"a.3", "[]"},
		{"a.01", "[]"},
		{"a.+1", "[3]"},
	} {
		var got []string
		AllAlongPath(root, strings.Split(tc.path, "."), func(v bson.RawValue) { got = append(got, fmt.Sprint(v.Int32())) })
		if s := fmt.Sprint(got); s != tc.want {
			t.Errorf("%s: %s, want %s", tc.path, s, tc.want)
		}
	}
}

// AllElementsAlongPath names each value as the element it is found as:
// the path's last part, or a position in an array ending the path.
func TestAllElementsAlongPath(t *testing.T) {
	doc, _ := bson.Marshal(bson.D{{Key: "a", Value: bson.A{bson.D{{Key: "b", Value: bson.A{7, 8}}}, bson.D{{Key: "b", Value: 9}}}}, {Key: "c", Value: 6}})
	root := bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}
	for path, want := range map[string]string{"a.b": "[0:7 true 1:8 true b:9 true]", "c": "[c:6 true]", "a.1": "[1:0 false]", "a.0.b": "[0:7 true 1:8 true]"} {
		var got []string
		AllElementsAlongPath(root, strings.Split(path, "."), func(name string, v bson.RawValue) { got = append(got, name+":"+fmt.Sprint(v.Int32OK())) })
		if s := fmt.Sprint(got); s != want {
			t.Errorf("%s: %s, want %s", path, s, want)
		}
	}
}

func TestArrayIndex(t *testing.T) {
	for s, want := range map[string]int{"0": 0, "12": 12, "01": -1, "+1": -1, "-1": -1, "": -1, "1a": -1, "1234567890": -1} {
		if got := ArrayIndex(s); got != want {
			t.Errorf("ArrayIndex(%q) = %d, want %d", s, got, want)
		}
	}
}
