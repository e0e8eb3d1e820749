package keyenc

import (
	"bytes"
	"fmt"
	"math"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/values"
)

// orderedGroups returns groups of equal values in ascending MongoDB order,
// covering every type class.
func orderedGroups(t testing.TB) [][]bson.RawValue {
	one := []bson.RawValue{i32(1), i64(1), dbl(1), dec(t, "1.000")}
	g := [][]bson.RawValue{
		{minKey},
		{missing, undefined},
		{null},
	}
	g = append(g, numberGroups(t)...)
	g = append(g, [][]bson.RawValue{
		{str(""), sym("")},
		{str("\x00")},
		{str("\x00\x00")},
		{str("\x00\x01")},
		{str("\x00\xff")},
		{str("\x01")},
		{str("a"), sym("a")},
		{str("a\x00")},
		{str("a\x00\x00")},
		{str("a\x00b")},
		{str("a\x01")},
		{str("ab")},
		{str("b")},
		{str("\xff")},
		{str("\xff\x00")},
		{str("\xff\xff")},

		{doc()},
		{doc("a", minKey)},
		{doc("b", minKey)},
		{doc("a", undefined)},
		{doc("a", null)},
		{doc("a", null, "a", null)},
		{doc("", i32(5))},
		{doc("a", dbl(math.NaN()))},
		{doc("a", i32(-1))},
		{doc("a", one[0]), doc("a", one[1]), doc("a", one[2]), doc("a", one[3])},
		{doc("a", i32(1), "b", minKey)},
		{doc("a", i32(1), "b", i32(1))},
		{doc("a", i32(1), "b", str(""))},
		{doc("a", i32(2))},
		{doc("ab", i32(0))},
		{doc("b", i32(0))},
		{doc("a", str("x"))},
		{doc("a", doc())},
		{doc("a", doc("a", i32(1)))},
		{doc("a", arr())},
		{doc("a", arr(i32(1)))},
		{doc("a", bin(0, ""))},
		{doc("a", maxKey)},

		{arr()},
		{arr(minKey)},
		{arr(undefined)},
		{arr(null)},
		{arr(dbl(math.NaN()))},
		{arr(dbl(math.Inf(-1)))},
		{arr(one[0]), arr(one[1]), arr(one[2]), arr(one[3])},
		{arr(i32(1), i32(1))},
		{arr(i32(1), str("a"))},
		{arr(i32(2))},
		{arr(str("a"))},
		{arr(doc())},
		{arr(arr())},
		{arr(arr(i32(1)))},
		{arr(maxKey)},

		{bin(0, "")},
		{bin(5, "")},
		{bin(0x80, "")},
		{bin(0, "\x00")},
		{bin(0, "\xff")},
		{bin(1, "\x00")},
		{bin(0, "\x00\x00")},
		{bin(0, "\xff\xff")},

		{oid(0)},
		{oid(1)},
		{oid(0xff)},

		{boolean(false)},
		{boolean(true)},

		{date(math.MinInt64)},
		{date(-1)},
		{date(0)},
		{date(1)},
		{date(math.MaxInt64)},

		{ts(0, 0)},
		{ts(0, 1)},
		{ts(0, math.MaxUint32)},
		{ts(1, 0)},
		{ts(math.MaxUint32, math.MaxUint32)},

		{regex("", "")},
		{regex("", "i")},
		{regex("a", "")},
		{regex("a", "i")},
		{regex("a", "im")},
		{regex("ab", "")},

		{dbptr("", 0)},
		{dbptr("", 1)},
		{dbptr("b", 0)},
		{dbptr("c", 0)},
		{dbptr("aa", 0)},

		{code("")},
		{code("\x00")},
		{code("a")},

		{cws("", doc())},
		{cws("", doc("a", i32(1))), cws("", doc("a", dbl(1)))},
		{cws("", doc("a", i32(2)))},
		{cws("a", doc())},

		{maxKey},
	}...)
	return g
}

type entry struct {
	v     bson.RawValue
	group int
}

func flatten(groups [][]bson.RawValue) []entry {
	var es []entry
	for i, g := range groups {
		for _, v := range g {
			es = append(es, entry{v, i})
		}
	}
	return es
}

func show(v bson.RawValue) string {
	if v.Type == 0 {
		return "missing"
	}
	return fmt.Sprintf("%s(%s)", v.Type, v)
}

// TestOrder checks every pair of the ordered table against the table's
// order, values.Compare, and the ascending and descending encodings.
func TestOrder(t *testing.T) {
	es := flatten(orderedGroups(t))
	enc := make([][]byte, len(es))
	desc := make([][]byte, len(es))
	for i, e := range es {
		enc[i] = Encode(e.v)
		desc[i] = descOf(e.v)
	}
	for i, a := range es {
		for j, b := range es {
			want := sign(a.group - b.group)
			if got := sign(values.Compare(a.v, b.v)); got != want {
				t.Errorf("values.Compare(%s, %s) = %d, table says %d", show(a.v), show(b.v), got, want)
			}
			if got := bytes.Compare(enc[i], enc[j]); got != want {
				t.Errorf("Encode(%s) vs Encode(%s): %d, want %d\n%x\n%x", show(a.v), show(b.v), got, want, enc[i], enc[j])
			}
			if got := bytes.Compare(desc[i], desc[j]); got != -want {
				t.Errorf("desc %s vs %s: %d, want %d", show(a.v), show(b.v), got, -want)
			}
			checkPrefixFree(t, enc[i], enc[j])
		}
	}
}

// TestCompound checks two-field keys with every direction combination
// against field-by-field comparison.
func TestCompound(t *testing.T) {
	groups := orderedGroups(t)
	var es []entry
	for i, g := range groups {
		if i%8 == 0 || i < 4 || i > len(groups)-4 {
			es = append(es, entry{g[len(g)-1], i})
		}
	}
	dir := func(c int, desc bool) int {
		if desc {
			return -c
		}
		return c
	}
	type key struct {
		a, b entry
		k    []byte
	}
	for mask := range 4 {
		d1, d2 := mask&1 != 0, mask&2 != 0
		var keys []key
		for _, a := range es {
			for _, b := range es {
				keys = append(keys, key{a, b, AppendField(AppendField(nil, a.v, d1), b.v, d2)})
			}
		}
		for _, x := range keys {
			for _, y := range keys {
				want := dir(sign(x.a.group-y.a.group), d1)
				if want == 0 {
					want = dir(sign(x.b.group-y.b.group), d2)
				}
				if got := bytes.Compare(x.k, y.k); got != want {
					t.Fatalf("desc=%v,%v: (%s, %s) vs (%s, %s): %d, want %d",
						d1, d2, show(x.a.v), show(x.b.v), show(y.a.v), show(y.b.v), got, want)
				}
			}
		}
	}
}

// TestNumericEquality checks that equal numbers of every type share one
// encoding, as {_id: 1} and {_id: 1.0} must collide.
func TestNumericEquality(t *testing.T) {
	for _, g := range numberGroups(t) {
		want := Encode(g[0])
		for _, v := range g[1:] {
			if got := Encode(v); !bytes.Equal(got, want) {
				t.Errorf("Encode(%s) = %x, Encode(%s) = %x", show(v), got, show(g[0]), want)
			}
		}
	}
	noncanonical := decRaw(0x6C10000000000000, 5) // implicit 0b100 prefix: zero
	if !bytes.Equal(Encode(noncanonical), Encode(i32(0))) {
		t.Errorf("non-canonical decimal does not encode as zero")
	}
}

// TestEncodingLayout pins a few encodings so that accidental format changes
// (which would invalidate stored keys) are noticed.
func TestEncodingLayout(t *testing.T) {
	for _, c := range []struct {
		v    bson.RawValue
		want string
	}{
		{minKey, "0a"},
		{missing, "0f"},
		{null, "14"},
		{i32(1), "1e05800000"},
		{dbl(-1), "1e037fffff"},
		{dbl(0.5), "1e057fff00"},
		{dbl(3), "1e05800180"},
		{i64(0), "1e04"},
		{dbl(math.NaN()), "1e01"},
		{dbl(math.Inf(1)), "1e06"},
		{str("a\x00"), "286100ff0001"},
		{doc("a", i32(1)), "321e61000580000000"},
		{arr(null), "3c1400"},
		{bin(3, "x"), "46000000010378"},
		{boolean(true), "5a01"},
		{date(0), "648000000000000000"},
		{ts(1, 2), "6e0000000100000002"},
		{regex("a", "i"), "7861006900"},
		{maxKey, "f0"},
	} {
		if got := fmt.Sprintf("%x", Encode(c.v)); got != c.want {
			t.Errorf("Encode(%s) = %s, want %s", show(c.v), got, c.want)
		}
	}
}

// TestBounds checks TypeBounds and PrefixEnd against every table value in
// both directions and as the second field of a compound key.
func TestBounds(t *testing.T) {
	es := flatten(orderedGroups(t))
	prefix := Encode(str("k"))
	for _, desc := range []bool{false, true} {
		for _, a := range es {
			lo, hi := TypeBounds(a.v.Type, desc)
			start := append(append([]byte(nil), prefix...), lo)
			end := append(append([]byte(nil), prefix...), hi)
			aEnd := PrefixEnd(AppendField(append([]byte(nil), prefix...), a.v, desc))
			for _, b := range es {
				k := AppendField(append([]byte(nil), prefix...), b.v, desc)
				sameClass := values.Rank(a.v.Type) == values.Rank(b.v.Type)
				if in := bytes.Compare(start, k) <= 0 && bytes.Compare(k, end) < 0; in != sameClass {
					t.Errorf("desc=%v: key of %s in bounds of %s = %v", desc, show(b.v), show(a.v), in)
				}
				want := sign(values.Compare(b.v, a.v))
				if desc {
					want = -want
				}
				if got := bytes.Compare(k, aEnd) < 0; got != (want <= 0) {
					t.Errorf("desc=%v: key of %s < PrefixEnd(key of %s) = %v", desc, show(b.v), show(a.v), got)
				}
			}
		}
	}
	if PrefixEnd([]byte{0xFF, 0xFF}) != nil || !bytes.Equal(PrefixEnd([]byte{1, 0xFF}), []byte{2}) {
		t.Error("PrefixEnd edge cases")
	}
	// AppendPrefixEnd appends the same end after what dst holds, and
	// leaves dst alone when there is none.
	if got, ok := AppendPrefixEnd([]byte{9}, []byte{1, 2, 0xFF}); !ok || !bytes.Equal(got, []byte{9, 1, 3}) {
		t.Errorf("AppendPrefixEnd([9], [1 2 ff]) = %v, %v", got, ok)
	}
	if got, ok := AppendPrefixEnd([]byte{9}, []byte{0xFF}); ok || !bytes.Equal(got, []byte{9}) {
		t.Errorf("AppendPrefixEnd([9], [ff]) = %v, %v", got, ok)
	}
}
