package aggregate

import (
	"math/rand/v2"
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/values"
)

// TestRangeEndpointsMatchScan checks the binary search of range windows
// against MongoDB's partition iterator, which scans: the lower end is the
// first document not below current+lower, the upper end the last one not
// above current+upper, "current" the current document itself.
func TestRangeEndpointsMatchScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 300 {
		n := 1 + rng.IntN(30)
		vals := make([]int, n)
		for i := range vals {
			vals[i] = rng.IntN(20)
		}
		dir := 1
		if round%2 == 1 {
			dir = -1
		}
		slices.SortFunc(vals, func(a, b int) int { return dir * (a - b) })
		docs := make([]bson.Raw, n)
		for i, v := range vals {
			docs[i] = buildDoc([]field{{"x", values.Int32Value(int32(v))}})
		}
		bound := func() windowBound {
			switch rng.IntN(4) {
			case 0:
				return windowBound{unbounded: true}
			case 1:
				return windowBound{current: true}
			}
			return windowBound{v: values.Int32Value(int32(rng.IntN(9) - 4))}
		}
		w := windowBounds{kind: byRange, lo: bound(), hi: bound()}
		if w.lo.v.Type != 0 && w.hi.v.Type != 0 && values.Compare(w.lo.v, w.hi.v) > 0 {
			w.lo, w.hi = w.hi, w.lo
		}
		spec := buildDoc([]field{{"x", values.Int32Value(int32(dir))}})
		p, err := (&parser{opts: &Options{}}).parseSetWindowFields(docValue(buildDoc([]field{{"sortBy", docValue(spec)}, {"output", docValue(emptyDoc)}})))
		if err != nil {
			t.Fatal(err)
		}
		part := &partition{docs: &docBuffer{mem: docs}, stage: p.(*windowStage), rt: &runtime{opts: &Options{}, ectx: &expr.Context{Meta: &docsrc.Meta{}}}}
		for i := range vals {
			lo, hi, ok, err := part.endpoints(w, i)
			if err != nil {
				t.Fatal(err)
			}
			// The scan, in the sort's direction (offsets negate when descending).
			off := func(b windowBound) int { return dir * int(b.v.Int32()) }
			wlo, whi := 0, n-1
			if w.lo.current {
				wlo = i
			} else if !w.lo.unbounded {
				for wlo = 0; wlo < n && dir*(vals[wlo]-(vals[i]+off(w.lo))) < 0; wlo++ {
				}
			}
			if w.hi.current {
				whi = i
			} else if !w.hi.unbounded {
				for whi = max(wlo, 0); whi < n && dir*((vals[i]+off(w.hi))-vals[whi]) >= 0; whi++ {
				}
				whi--
			}
			wok := wlo < n && whi >= wlo
			if ok != wok || (ok && (lo != wlo || hi != whi)) {
				t.Fatalf("vals %v dir %d window %+v doc %d: got [%d,%d] %v, scan [%d,%d] %v", vals, dir, w, i, lo, hi, ok, wlo, whi, wok)
			}
		}
	}
}
