package keyenc

import (
	"bytes"
	"testing"

	"github.com/folio-db/folio/internal/values"
)

// FuzzOrder builds two values, and two two-field compound keys with fuzzed
// directions, and checks that byte order of the encodings agrees with
// values.Compare, that the descending encoding reverses it, and that
// encodings are prefix-free.
func FuzzOrder(f *testing.F) {
	for k := range byte(28) {
		f.Add([]byte{k, 5, 1, 2, 3, 4, 5, 6, 7, 8, k, 5, 1, 2, 3, 4, 5, 6, 7, 9})
		f.Add([]byte{k % 10, k % 12, 3, k % 10, (k + 1) % 12, 3, 1, 2})
	}
	f.Add([]byte{0, 10, 1, 2, 3, 4, 5, 6, 7, 8, 1, 9, 0x10, 0x20, 0, 1, 2, 3, 4, 0x7f, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &gen{data}
		a, b := g.value(0, true), g.value(0, true)
		want := sign(values.Compare(a, b))
		ea, eb := Encode(a), Encode(b)
		if got := bytes.Compare(ea, eb); got != want {
			t.Fatalf("%s vs %s: encodings compare %d, values.Compare %d\n%x\n%x", show(a), show(b), got, want, ea, eb)
		}
		if got := bytes.Compare(descOf(a), descOf(b)); got != -want {
			t.Fatalf("%s vs %s: descending encodings compare %d, want %d", show(a), show(b), got, -want)
		}
		checkPrefixFree(t, ea, eb)

		c, d := g.value(0, true), g.value(0, true)
		flags := g.byte()
		d1, d2 := flags&1 != 0, flags&2 != 0
		want1, want2 := want, sign(values.Compare(c, d))
		if d1 {
			want1 = -want1
		}
		if d2 {
			want2 = -want2
		}
		if want1 == 0 {
			want1 = want2
		}
		k1 := AppendField(AppendField(nil, a, d1), c, d2)
		k2 := AppendField(AppendField(nil, b, d1), d, d2)
		if got := bytes.Compare(k1, k2); got != want1 {
			t.Fatalf("(%s, %s) vs (%s, %s) desc=%v,%v: keys compare %d, want %d", show(a), show(c), show(b), show(d), d1, d2, got, want1)
		}
	})
}
