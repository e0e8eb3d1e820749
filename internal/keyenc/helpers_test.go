package keyenc

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// Constructors of raw BSON values for tests.

func rv(t bson.Type, b []byte) bson.RawValue { return bson.RawValue{Type: t, Value: b} }

func i32(v int32) bson.RawValue { return rv(bson.TypeInt32, bsoncore.AppendInt32(nil, v)) }
func i64(v int64) bson.RawValue { return rv(bson.TypeInt64, bsoncore.AppendInt64(nil, v)) }
func dbl(v float64) bson.RawValue {
	return rv(bson.TypeDouble, bsoncore.AppendDouble(nil, v))
}
func decRaw(hi, lo uint64) bson.RawValue {
	return rv(bson.TypeDecimal128, bsoncore.AppendDecimal128(nil, hi, lo))
}
func str(s string) bson.RawValue  { return rv(bson.TypeString, bsoncore.AppendString(nil, s)) }
func sym(s string) bson.RawValue  { return rv(bson.TypeSymbol, bsoncore.AppendSymbol(nil, s)) }
func code(s string) bson.RawValue { return rv(bson.TypeJavaScript, bsoncore.AppendJavaScript(nil, s)) }
func boolean(b bool) bson.RawValue {
	return rv(bson.TypeBoolean, bsoncore.AppendBoolean(nil, b))
}
func date(ms int64) bson.RawValue { return rv(bson.TypeDateTime, bsoncore.AppendDateTime(nil, ms)) }
func ts(t, i uint32) bson.RawValue {
	return rv(bson.TypeTimestamp, bsoncore.AppendTimestamp(nil, t, i))
}
func bin(subtype byte, data string) bson.RawValue {
	return rv(bson.TypeBinary, bsoncore.AppendBinary(nil, subtype, []byte(data)))
}
func oid(last byte) bson.RawValue {
	var id bson.ObjectID
	for i := range id {
		id[i] = last
	}
	return rv(bson.TypeObjectID, id[:])
}
func regex(p, o string) bson.RawValue { return rv(bson.TypeRegex, bsoncore.AppendRegex(nil, p, o)) }
func dbptr(ns string, last byte) bson.RawValue {
	id := bson.ObjectID{11: last}
	return rv(bson.TypeDBPointer, bsoncore.AppendDBPointer(nil, ns, id))
}
func cws(c string, scope bson.RawValue) bson.RawValue {
	return rv(bson.TypeCodeWithScope, bsoncore.AppendCodeWithScope(nil, c, scope.Value))
}

var (
	minKey    = rv(bson.TypeMinKey, nil)
	maxKey    = rv(bson.TypeMaxKey, nil)
	null      = rv(bson.TypeNull, nil)
	undefined = rv(bson.TypeUndefined, nil)
	missing   = bson.RawValue{}
)

// doc builds a document from alternating keys and values.
func doc(kv ...any) bson.RawValue {
	var elems [][]byte
	for i := 0; i < len(kv); i += 2 {
		v := kv[i+1].(bson.RawValue)
		elems = append(elems, bsoncore.AppendValueElement(nil, kv[i].(string),
			bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value}))
	}
	return rv(bson.TypeEmbeddedDocument, bsoncore.BuildDocument(nil, elems...))
}

// arr builds an array with the keys "0", "1", ...
func arr(vs ...bson.RawValue) bson.RawValue {
	var kv []any
	for i, v := range vs {
		kv = append(kv, strconv.Itoa(i), v)
	}
	return rv(bson.TypeArray, doc(kv...).Value)
}

// dec parses a decimal literal; "-NaN" is a NaN with the sign bit set.
func dec(tb testing.TB, s string) bson.RawValue {
	tb.Helper()
	if s == "-NaN" {
		return decRaw(0xFC00000000000000, 0)
	}
	d, err := bson.ParseDecimal128(s)
	if err != nil {
		tb.Fatalf("decimal %q: %v", s, err)
	}
	hi, lo := d.GetBytes()
	return decRaw(hi, lo)
}

// parseNumber parses a type:literal token of testdata/numbers.txt.
func parseNumber(tb testing.TB, tok string) bson.RawValue {
	tb.Helper()
	typ, lit, _ := strings.Cut(tok, ":")
	switch typ {
	case "double":
		if lit == "-NaN" {
			return dbl(math.Copysign(math.NaN(), -1))
		}
		f, err := strconv.ParseFloat(lit, 64)
		if err != nil {
			tb.Fatal(err)
		}
		return dbl(f)
	case "decimal":
		return dec(tb, lit)
	case "int32", "int64":
		i, err := strconv.ParseInt(lit, 10, 64)
		if err != nil {
			tb.Fatal(err)
		}
		if typ == "int32" {
			return i32(int32(i))
		}
		return i64(i)
	}
	tb.Fatalf("bad token %q", tok)
	return missing
}

// numberGroups reads testdata/numbers.txt: groups of equal numbers in
// ascending order.
func numberGroups(tb testing.TB) [][]bson.RawValue {
	tb.Helper()
	f, err := os.Open("testdata/numbers.txt")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var groups [][]bson.RawValue
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var g []bson.RawValue
		for _, tok := range strings.Fields(line) {
			g = append(g, parseNumber(tb, tok))
		}
		groups = append(groups, g)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return groups
}

func sign(c int) int {
	switch {
	case c < 0:
		return -1
	case c > 0:
		return 1
	}
	return 0
}

// descOf returns the descending encoding of v.
func descOf(v bson.RawValue) []byte { return AppendValueDesc(nil, v) }

// checkPrefixFree fails if one of a, b is a proper prefix of the other.
func checkPrefixFree(tb testing.TB, a, b []byte) {
	tb.Helper()
	if len(a) != len(b) && (bytes.HasPrefix(a, b) || bytes.HasPrefix(b, a)) {
		tb.Fatalf("encoding %x is a prefix of %x", min2(a, b), max2(a, b))
	}
}

func min2(a, b []byte) []byte {
	if len(a) < len(b) {
		return a
	}
	return b
}

func max2(a, b []byte) []byte {
	if len(a) < len(b) {
		return b
	}
	return a
}
