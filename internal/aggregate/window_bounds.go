package aggregate

import (
	"sort"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// windowBounds is a window: the whole partition (kind wholePartition), a
// range of positions relative to the current document (documents), or a
// range of sortBy values relative to the current document's (byRange,
// with an optional time unit).
type windowBounds struct {
	kind   int
	lo, hi windowBound
	unit   string
}

const (
	wholePartition = iota
	byDocuments
	byRange
)

// removable reports whether documents leave the window as it moves: all
// but the whole partition and a window from its start to the current
// document, which MongoDB computes with the plain accumulators.
func (w windowBounds) removable() bool {
	return w.kind != wholePartition && !(w.lo.unbounded && (w.hi.current || w.hi.unbounded))
}

// windowBound is one end of a window: unbounded, the current document, or
// an offset (a position count, or a value added to the sortBy value).
type windowBound struct {
	unbounded, current bool
	n                  int64         // documents offset
	v                  bson.RawValue // range offset
}

// parseWindow reads a window function's window field.
func parseWindow(s *windowStage, v bson.RawValue) (windowBounds, error) {
	var w windowBounds
	if v.Type != bson.TypeEmbeddedDocument {
		return w, mongoerr.New(mongoerr.FailedToParse, "'window' field must be an object")
	}
	var docs, rng bson.RawValue
	for _, f := range fieldsOf(v.Value) {
		switch f.key {
		case "documents":
			docs = f.val
		case "range":
			rng = f.val
		case "unit":
			if f.val.Type != bson.TypeString || !expr.IsTimeUnit(f.val.StringValue()) {
				return w, mongoerr.New(mongoerr.FailedToParse, "'unit' must be one of the following: year, quarter, month, week, day, hour, minute, second, millisecond")
			}
			w.unit = f.val.StringValue()
		default:
			return w, mongoerr.New(mongoerr.FailedToParse, "'window' field can only contain 'documents' as the only argument or 'range' with an optional 'unit' field")
		}
	}
	switch {
	case docs.Type != 0 && (rng.Type != 0 || w.unit != ""):
		return w, mongoerr.New(mongoerr.FailedToParse, "'window' field can only contain 'documents' as the only argument or 'range' with an optional 'unit' field")
	case docs.Type != 0:
		w.kind = byDocuments
		lo, hi, err := boundPair(docs, "documents")
		if err != nil {
			return w, err
		}
		if w.lo, err = documentBound(lo); err != nil {
			return w, err
		}
		if w.hi, err = documentBound(hi); err != nil {
			return w, err
		}
		if !w.lo.unbounded && !w.hi.unbounded && w.lo.offset() > w.hi.offset() {
			return w, mongoerr.New(mongoerr.FailedToParse, "Lower bound must not exceed upper bound: %s", values.Shell(docs))
		}
		if (!w.lo.unbounded || !w.hi.unbounded) && s.sort == nil {
			return w, mongoerr.New(mongoerr.WindowDocumentsNeedSortBy, "Document-based bounds require a sortBy")
		}
	case rng.Type != 0:
		w.kind = byRange
		lo, hi, err := boundPair(rng, "range")
		if err != nil {
			return w, err
		}
		if w.lo, err = rangeBound(lo); err != nil {
			return w, err
		}
		if w.hi, err = rangeBound(hi); err != nil {
			return w, err
		}
		if w.lo.v.Type != 0 && w.hi.v.Type != 0 && values.Compare(w.lo.v, w.hi.v) > 0 {
			return w, mongoerr.New(mongoerr.FailedToParse, "Lower bound must not exceed upper bound: %s", values.Shell(rng))
		}
		if w.unit != "" {
			for _, b := range []windowBound{w.lo, w.hi} {
				if _, ok := values.Int64(b.v); b.v.Type != 0 && !ok {
					return w, mongoerr.New(mongoerr.FailedToParse, "With 'unit', range-based bounds must be an integer")
				}
			}
		}
		if s.sortField == "" {
			return w, mongoerr.New(mongoerr.WindowRangeNeedsOneSortField, "Range-based window require sortBy a single field")
		}
	case w.unit != "":
		return w, mongoerr.New(mongoerr.FailedToParse, "'unit' is only allowed with 'range'")
	default:
		return w, mongoerr.New(mongoerr.FailedToParse, "'window' field that is empty is not allowed")
	}
	return w, nil
}

// offset is a documents bound as a position offset.
func (b windowBound) offset() int64 {
	if b.current {
		return 0
	}
	return b.n
}

func boundPair(v bson.RawValue, what string) (bson.RawValue, bson.RawValue, error) {
	if v.Type == bson.TypeArray {
		if vals := arrayValues(v); len(vals) == 2 {
			return vals[0], vals[1], nil
		}
	}
	return missing, missing, mongoerr.New(mongoerr.FailedToParse, "Window bounds must be a 2-element array: %s: %s", what, values.Shell(v))
}

func keywordBound(v bson.RawValue) (windowBound, bool) {
	if v.Type == bson.TypeString {
		switch v.StringValue() {
		case "unbounded":
			return windowBound{unbounded: true}, true
		case "current":
			return windowBound{current: true}, true
		}
	}
	return windowBound{}, false
}

func documentBound(v bson.RawValue) (windowBound, error) {
	if b, ok := keywordBound(v); ok {
		return b, nil
	}
	n, ok := values.Int64(v)
	if !ok {
		return windowBound{}, mongoerr.New(mongoerr.FailedToParse, "Numeric document-based bounds must be an integer: %s", values.Shell(v))
	}
	return windowBound{n: n}, nil
}

func rangeBound(v bson.RawValue) (windowBound, error) {
	if b, ok := keywordBound(v); ok {
		return b, nil
	}
	if !values.IsNumber(v.Type) {
		return windowBound{}, mongoerr.New(mongoerr.FailedToParse, "Range-based bounds expression must be a number: %s", values.Shell(v))
	}
	return windowBound{v: v}, nil
}

// endpoints are the first and last positions of the window of document
// i; ok is false for an empty window.
func (p *partition) endpoints(w windowBounds, i int) (lo, hi int, ok bool, err error) {
	if err := p.step(); err != nil {
		return 0, 0, false, err
	}
	n := p.docs.len()
	switch w.kind {
	case wholePartition:
		return 0, n - 1, true, nil
	case byDocuments:
		lo, hi = 0, n-1
		if !w.lo.unbounded {
			lo = i + int(w.lo.offset())
		}
		if !w.hi.unbounded {
			hi = i + int(w.hi.offset())
		}
		if lo > n-1 || hi < 0 {
			return 0, 0, false, nil
		}
		return max(lo, 0), min(hi, n-1), true, nil
	}
	return p.rangeEndpoints(w, i)
}

// rangeEndpoints finds a range window: the documents whose sortBy value
// lies between the current one's plus the bounds (in sortBy's direction),
// as MongoDB's partition iterator scans for them.
func (p *partition) rangeEndpoints(w windowBounds, i int) (lo, hi int, ok bool, err error) {
	vals, err := p.sortValues()
	if err != nil {
		return 0, 0, false, err
	}
	base := vals[i]
	if w.unit != "" {
		if base.Type != bson.TypeDateTime {
			return 0, 0, false, mongoerr.New(mongoerr.WindowRangeNotDate, "Invalid range: Expected the sortBy field to be a Date, but it was %s", typeName(base))
		}
	} else {
		if base.Type == bson.TypeDateTime {
			return 0, 0, false, mongoerr.New(mongoerr.WindowRangeDateNeedsUnit, "Invalid range: For windows that involve date or time ranges, a unit must be provided.")
		}
		if !values.IsNumber(base.Type) {
			return 0, 0, false, mongoerr.New(mongoerr.WindowRangeNotNumber, "Invalid range: Expected the sortBy field to be a number, but it was %s", typeName(base))
		}
	}
	dir := p.stage.sortDir
	expected := func(v bson.RawValue) bool {
		if w.unit != "" {
			return v.Type == bson.TypeDateTime
		}
		return values.IsNumber(v.Type)
	}
	// before reports a before b in the sort's direction.
	before := func(a, b bson.RawValue) bool { return dir*values.Compare(a, b) < 0 }
	add := func(delta bson.RawValue) bson.RawValue {
		if dir < 0 {
			delta, _ = values.Multiply(delta, values.Int32Value(-1))
		}
		if w.unit != "" {
			d, _ := values.Int64(delta)
			t := expr.AddUnits(time.UnixMilli(base.DateTime()).UTC(), w.unit, d)
			return bson.RawValue{Type: bson.TypeDateTime, Value: appendInt64(nil, t.UnixMilli())}
		}
		sum, _ := values.Add(base, delta)
		return sum
	}
	n := len(vals)
	// The sorted values of the expected type are contiguous: the window
	// bounds are found by binary search.
	first := sort.Search(n, func(j int) bool { return expected(vals[j]) || !before(vals[j], base) })
	for first < n && !expected(vals[first]) {
		first++
	}
	switch {
	case w.lo.current:
		lo = i
	case w.lo.unbounded:
		lo = first
	default:
		t := add(w.lo.v)
		lo = sort.Search(n, func(j int) bool { return !before(vals[j], t) })
	}
	if lo >= n {
		return 0, 0, false, nil
	}
	switch {
	case w.hi.current:
		hi = i
	case w.hi.unbounded:
		hi = max(lo, i) + sort.Search(n-max(lo, i), func(j int) bool { return !expected(vals[max(lo, i)+j]) }) - 1
	default:
		t := add(w.hi.v)
		hi = lo + sort.Search(n-lo, func(j int) bool { return before(t, vals[lo+j]) }) - 1
	}
	if hi < lo {
		return 0, 0, false, nil
	}
	return lo, hi, true, nil
}

func appendInt64(dst []byte, n int64) []byte {
	u := uint64(n)
	return append(dst, byte(u), byte(u>>8), byte(u>>16), byte(u>>24), byte(u>>32), byte(u>>40), byte(u>>48), byte(u>>56))
}
