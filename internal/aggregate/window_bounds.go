package aggregate

import (
	"math"
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
// but the whole partition and the windows from its start (whatever their
// upper bound), which MongoDB computes with the plain accumulators
// (translateDocumentWindow: "A left unbounded window will always be
// non-removable regardless of the upper bound").
func (w windowBounds) removable() bool {
	return w.kind != wholePartition && !w.lo.unbounded
}

// windowBound is one end of a window: unbounded, the current document, or
// an offset (a position count, or a value added to the sortBy value).
type windowBound struct {
	unbounded, current bool
	n                  int64         // documents offset
	v                  bson.RawValue // range offset
}

// parseWindow reads a window function's window field as MongoDB's
// WindowBounds::parse: {} is the whole partition; documents alone, or
// range with an optional unit; each bound 'unbounded', 'current' or a
// constant expression; a lower bound above the upper one (with 'current'
// as 0) fails with 5339900, then a documents window other than the whole
// partition needs a sortBy (5339901) and a range window a sortBy of one
// field (5339902).
func (p *parser) parseWindow(s *windowStage, v bson.RawValue) (windowBounds, error) {
	var w windowBounds
	if v.Type != bson.TypeEmbeddedDocument {
		return w, mongoerr.New(mongoerr.FailedToParse, "'window' field must be an object")
	}
	fs := fieldsOf(v.Value)
	var docs, rng, unit bson.RawValue
	for _, f := range fs {
		switch f.key {
		case "documents":
			docs = f.val
		case "range":
			rng = f.val
		case "unit":
			unit = f.val
		}
	}
	switch {
	case docs.Type != 0 && rng.Type != 0:
		return w, mongoerr.New(mongoerr.FailedToParse, "Window bounds can specify either 'documents' or 'unit', not both.")
	case rng.Type == 0 && unit.Type != 0:
		return w, mongoerr.New(mongoerr.FailedToParse, "Window bounds can only specify 'unit' with range-based bounds.")
	case rng.Type == 0 && docs.Type == 0:
		if len(fs) != 0 {
			return w, mongoerr.New(mongoerr.FailedToParse, "'window' field can only contain 'documents' as the only argument or 'range' with an optional 'unit' field")
		}
		return w, nil
	case docs.Type != 0:
		if len(fs) != 1 {
			return w, mongoerr.New(mongoerr.FailedToParse, "'window' field that specifies documents cannot have other fields")
		}
		w.kind = byDocuments
		lo, hi, err := boundPair(docs, "documents")
		if err != nil {
			return w, err
		}
		if w.lo, err = p.windowBound(lo, documentOffset); err != nil {
			return w, err
		}
		if w.hi, err = p.windowBound(hi, documentOffset); err != nil {
			return w, err
		}
		if err := checkBoundsForward(w.lo, w.hi); err != nil {
			return w, err
		}
		if (!w.lo.unbounded || !w.hi.unbounded) && s.sort == nil {
			return w, mongoerr.New(mongoerr.WindowDocumentsNeedSortBy, "Document-based bounds require a sortBy")
		}
		return w, nil
	}
	w.kind = byRange
	lo, hi, err := boundPair(rng, "range")
	if err != nil {
		return w, err
	}
	check := rangeOffset
	if unit.Type != 0 {
		if len(fs) != 2 {
			return w, mongoerr.New(mongoerr.FailedToParse, "'window' field that specifies unit cannot have other fields besides 'range'")
		}
		if unit.Type != bson.TypeString {
			return w, mongoerr.New(mongoerr.FailedToParse, "'unit' must be a string")
		}
		check = timeOffset
	} else if len(fs) != 1 {
		return w, mongoerr.New(mongoerr.FailedToParse, "'window' field that specifies range cannot have other fields besides 'unit'")
	}
	if w.lo, err = p.windowBound(lo, check); err != nil {
		return w, err
	}
	if w.hi, err = p.windowBound(hi, check); err != nil {
		return w, err
	}
	if err := checkBoundsForward(w.lo, w.hi); err != nil {
		return w, err
	}
	if unit.Type != 0 {
		if !expr.IsTimeUnit(unit.StringValue()) {
			return w, mongoerr.New(mongoerr.FailedToParse, "unknown time unit value: %s", unit.StringValue())
		}
		w.unit = unit.StringValue()
	}
	if s.sortField == "" {
		return w, mongoerr.New(mongoerr.WindowRangeNeedsOneSortField, "Range-based bounds require sortBy a single field")
	}
	return w, nil
}

// checkBoundsForward refuses a lower bound above the upper one, 'current'
// counting as 0 (MongoDB's checkBoundsForward).
func checkBoundsForward(lo, hi windowBound) error {
	if lo.unbounded || hi.unbounded {
		return nil
	}
	l, h := lo.value(), hi.value()
	if values.Compare(l, h) > 0 {
		return mongoerr.New(mongoerr.WindowBoundsBackwards, "Lower bound must not exceed upper bound: [%s, %s]", values.Shell(l), values.Shell(h))
	}
	return nil
}

// value is a bounded end as a number: its offset, 0 for 'current'.
func (b windowBound) value() bson.RawValue {
	switch {
	case b.current:
		return values.Int32Value(0)
	case b.v.Type != 0:
		return b.v
	}
	return values.Int64Value(b.n)
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

// windowBound reads one bound: the keyword 'unbounded' or 'current', or
// an expression MongoDB folds to a constant, which check turns into an
// offset.
func (p *parser) windowBound(v bson.RawValue, check func(bson.RawValue) (windowBound, error)) (windowBound, error) {
	if v.Type == bson.TypeString {
		switch v.StringValue() {
		case "unbounded":
			return windowBound{unbounded: true}, nil
		case "current":
			return windowBound{current: true}, nil
		}
		return windowBound{}, mongoerr.New(mongoerr.FailedToParse, "Window bounds must be 'unbounded', 'current', or a number.")
	}
	e, err := expr.Compile(v, p.scope)
	if err != nil {
		return windowBound{}, err
	}
	if !e.IsConstant() {
		return windowBound{}, mongoerr.New(mongoerr.FailedToParse, "Window bounds expression must be a constant.")
	}
	return check(e.Constant())
}

// documentOffset is a documents bound: a number holding a 32-bit integer
// (Value::integral).
func documentOffset(v bson.RawValue) (windowBound, error) {
	n, ok := values.Int64(v)
	if !ok || n < math.MinInt32 || n > math.MaxInt32 {
		return windowBound{}, mongoerr.New(mongoerr.FailedToParse, "Numeric document-based bounds must be an integer")
	}
	return windowBound{n: n}, nil
}

// rangeOffset is a range bound without unit: any number.
func rangeOffset(v bson.RawValue) (windowBound, error) {
	if !values.IsNumber(v.Type) {
		return windowBound{}, mongoerr.New(mongoerr.FailedToParse, "Range-based bounds expression must be a number")
	}
	return windowBound{v: v}, nil
}

// timeOffset is a range bound with a unit: a number holding a 32-bit
// integer.
func timeOffset(v bson.RawValue) (windowBound, error) {
	n, ok := values.Int64(v)
	if !ok || n < math.MinInt32 || n > math.MaxInt32 {
		return windowBound{}, mongoerr.New(mongoerr.FailedToParse, "With 'unit', range-based bounds must be an integer")
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
