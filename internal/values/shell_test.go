package values

import (
	"math"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestShellDoc: documents as MongoDB's BSONObj::toString writes them
// (planSummary's key patterns, currentOp's truncated commands).
func TestShellDoc(t *testing.T) {
	// nested(n) is {a: {a: ... {a: 1}}} with n documents around the 1
	nested := func(n int) bson.D {
		d := bson.D{{Key: "a", Value: int32(1)}}
		for range n - 1 {
			d = bson.D{{Key: "a", Value: d}}
		}
		return d
	}
	for _, tc := range []struct {
		pattern bson.D
		want    string
	}{
		{bson.D{}, "{}"},
		{bson.D{{Key: "a", Value: int32(1)}}, "{ a: 1 }"},
		{bson.D{{Key: "a", Value: int32(1)}, {Key: "b", Value: int64(-1)}}, "{ a: 1, b: -1 }"},
		{bson.D{{Key: "h", Value: "hashed"}, {Key: "x", Value: 2.0}, {Key: "y", Value: -1.5}}, `{ h: "hashed", x: 2.0, y: -1.5 }`},
		{bson.D{{Key: "a.b", Value: int32(1)}}, "{ a.b: 1 }"},
		{bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "a", Value: bson.A{int32(1), 2.0, bson.D{}}}}}, {Key: "e", Value: bson.A{}}}, `{ find: "c", filter: { a: [ 1, 2.0, {} ] }, e: [] }`},
		{bson.D{{Key: "s", Value: strings.Repeat("x", 159)}}, `{ s: "` + strings.Repeat("x", 159) + `" }`},
		{bson.D{{Key: "s", Value: strings.Repeat("x", 160)}}, `{ s: "` + strings.Repeat("x", 150) + `..." }`},
		{bson.D{{Key: "b", Value: bson.Binary{Data: make([]byte, 81)}}}, `{ b: BinData(0, ` + strings.Repeat("00", 70) + `...) }`},
		// strings are written as their bytes: no escapes, and cut inside
		// a UTF-8 sequence (an emoji is 4 bytes; 150 is not a multiple)
		{bson.D{{Key: "q", Value: "a\"b\\c\n"}}, "{ q: \"a\"b\\c\n\" }"},
		{bson.D{{Key: "e", Value: strings.Repeat("\U0001F92A", 40)}}, `{ e: "` + strings.Repeat("\U0001F92A", 40)[:150] + `..." }`},
		{bson.D{{Key: "y", Value: bson.Symbol("sym")}}, `{ y: "sym" }`},
		{bson.D{{Key: "c", Value: bson.JavaScript("function() {}")}}, `{ c: function() {} }`},
		{bson.D{{Key: "c", Value: bson.JavaScript(strings.Repeat("x", 79))}}, `{ c: ` + strings.Repeat("x", 79) + ` }`},
		{bson.D{{Key: "c", Value: bson.JavaScript(strings.Repeat("x", 80))}}, `{ c: ` + strings.Repeat("x", 70) + `... }`},
		{bson.D{{Key: "w", Value: bson.CodeWithScope{Code: "f", Scope: bson.D{{Key: "a", Value: int32(1)}}}}}, `{ w: CodeWScope( f, { a: 1 }) }`},
		{bson.D{{Key: "u", Value: bson.Binary{Subtype: 4, Data: []byte{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 1, 2, 3, 4, 5, 6, 7, 8}}}}, `{ u: UUID("12345678-9abc-def0-0102-030405060708") }`},
		{bson.D{{Key: "u", Value: bson.Binary{Subtype: 4, Data: []byte{1, 2}}}}, `{ u: BinData(4, 0102) }`},
		{nested(101), strings.Repeat("{ a: ", 100) + "{ a: 1 }" + strings.Repeat(" }", 100)},
		{nested(102), strings.Repeat("{ a: ", 101) + "{ ... }" + strings.Repeat(" }", 101)},
	} {
		raw, err := bson.Marshal(tc.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if got := ShellDoc(raw); got != tc.want {
			t.Errorf("ShellDoc(%v) = %s, want %s", tc.pattern, got, tc.want)
		}
	}
}

// TestShellMalformedString: a string whose length word is 0 (no room for
// its terminating null; the wire layer refuses it) prints empty rather
// than panic, as the expression fuzzer first found through an error
// message.
func TestShellMalformedString(t *testing.T) {
	if got := Shell(bson.RawValue{Type: bson.TypeString, Value: []byte{0, 0, 0, 0}}); got != `""` {
		t.Errorf("Shell of a zero-length string word = %s, want \"\"", got)
	}
}

// TestValueString: values as MongoDB's Value operator<< and
// Document::toString write them in aggregation messages ($replaceRoot's
// 40228, $redact's 17053): value.cpp, document.cpp.
func TestValueString(t *testing.T) {
	oid, _ := bson.ObjectIDFromHex("6b154068247075138a364c58")
	for _, tc := range []struct {
		v    any
		want string
	}{
		{bson.D{}, "{}"},
		{bson.D{{Key: "_id", Value: int32(1)}, {Key: "a", Value: "x"}}, `{_id: 1, a: "x"}`},
		{bson.A{bson.D{{Key: "a", Value: int32(4)}}, bson.D{{Key: "a", Value: int64(5)}}}, "[{a: 4}, {a: 5}]"},
		{bson.A{}, "[]"},
		{oid, "6b154068247075138a364c58"},
		{1.5, "1.5"}, {2.0, "2"}, {1234567.0, "1.23457e+06"}, {0.00001, "1e-05"}, {math.NaN(), "nan"}, {math.Inf(-1), "-inf"},
		{true, "true"}, {bson.Null{}, "null"}, {bson.Undefined{}, "undefined"},
		{bson.NewDateTimeFromTime(time.Date(2021, 1, 2, 3, 4, 5, 6e6, time.UTC)), "2021-01-02T03:04:05.006Z"},
		{bson.Timestamp{T: 1, I: 2}, "Timestamp(1, 2)"},
		{bson.Regex{Pattern: "a.b", Options: "i"}, "/a.b/i"},
		{bson.Symbol("s"), `Symbol("s")`}, {bson.JavaScript("f()"), `Code("f()")`},
		{bson.Binary{Subtype: 4, Data: []byte{1, 0xab}}, "BinData(4, 01AB)"},
		{bson.MinKey{}, "MinKey"},
	} {
		typ, data, err := bson.MarshalValue(tc.v)
		if err != nil {
			t.Fatal(err)
		}
		if got := ValueString(bson.RawValue{Type: typ, Value: data}); got != tc.want {
			t.Errorf("ValueString(%v) = %s, want %s", tc.v, got, tc.want)
		}
	}
	if got := ValueString(bson.RawValue{}); got != "MISSING" {
		t.Errorf("missing: %s", got)
	}
}
