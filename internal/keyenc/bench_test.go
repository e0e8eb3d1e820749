package keyenc

import (
	"math"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestAllocs checks that AppendValue does not allocate when dst has room.
func TestAllocs(t *testing.T) {
	vs := []bson.RawValue{
		oid(7), str("hello\x00world"), dbl(math.Pi), i64(-12345), dec(t, "1.23"),
		dec(t, "1E-6176"), dec(t, "9.999999999999999999999999999999999E+6144"),
		doc("a", i32(1), "b", arr(str("x"), doc("c", null))), bin(0, "xyz"),
		regex("^a", "i"), cws("f()", doc("x", dbl(1))), ts(1, 2), date(5),
	}
	buf := make([]byte, 0, 1024)
	for _, v := range vs {
		if n := testing.AllocsPerRun(10, func() { buf = AppendValueDesc(AppendValue(buf[:0], v), v) }); n != 0 {
			t.Errorf("AppendValue(%s) allocates %v times", show(v), n)
		}
	}
}

func benchmarkEncode(b *testing.B, v bson.RawValue) {
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendValue(buf[:0], v)
	}
}

func BenchmarkEncodeObjectID(b *testing.B) { benchmarkEncode(b, oid(0x5f)) }
func BenchmarkEncodeString(b *testing.B)   { benchmarkEncode(b, str("user-1234567890@example.com")) }
func BenchmarkEncodeDouble(b *testing.B)   { benchmarkEncode(b, dbl(1234.5678)) }
func BenchmarkEncodeInt64(b *testing.B)    { benchmarkEncode(b, i64(1234567890)) }
func BenchmarkEncodeDecimal(b *testing.B)  { benchmarkEncode(b, dec(b, "1234.5678")) }
func BenchmarkEncodeDecimalHuge(b *testing.B) {
	benchmarkEncode(b, dec(b, "1.234567890123456789012345678901234E-6000"))
}
func BenchmarkEncodeDocument(b *testing.B) {
	benchmarkEncode(b, doc("name", str("ada"), "age", i32(36), "tags", arr(str("x"), str("y"))))
}
