package keyenc

import (
	"math/rand/v2"
	"testing"
)

// checkFieldLen checks that FieldLen finds the end of v's encoding in a
// compound key, in both directions, and refuses every truncation of it.
func checkFieldLen(t *testing.T, g *gen) {
	t.Helper()
	v, next := g.value(0, true), g.value(0, true)
	for _, desc := range []bool{false, true} {
		enc := AppendField(nil, v, desc)
		key := AppendField(enc, next, !desc)
		if n, ok := FieldLen(key, desc); !ok || n != len(enc) {
			t.Fatalf("%s desc=%v: FieldLen = %d, %v; want %d\n%x", show(v), desc, n, ok, len(enc), key)
		}
		for cut := 0; cut < len(enc); cut++ {
			if _, ok := FieldLen(enc[:cut], desc); ok {
				t.Fatalf("%s desc=%v: FieldLen accepts %d of %d bytes", show(v), desc, cut, len(enc))
			}
		}
	}
}

func TestFieldLen(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for range 5000 {
		data := make([]byte, 8+r.IntN(120))
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		checkFieldLen(t, &gen{data})
	}
}

func FuzzFieldLen(f *testing.F) {
	f.Add([]byte{1, 5, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Fuzz(func(t *testing.T, data []byte) { checkFieldLen(t, &gen{data}) })
}
