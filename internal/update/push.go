package update

import (
	"math"
	"sort"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/values"
)

// pushOp is $push. With $each it inserts several values at $position, then
// orders the array by $sort and trims it to $slice elements (from the end
// when negative); without $each the value itself is appended. A missing
// field becomes a new array.
type pushOp struct {
	vals     []bson.RawValue
	position int64
	slice    int64
	sort     *pushSort
}

// pushSort is a $sort clause: the whole element (fields nil) or fields of
// embedded documents, each ascending (1) or descending (-1).
type pushSort struct {
	dir    int
	fields []sortField
	coll   *collation.Collator // the statement's collation orders strings
}

type sortField struct {
	path string
	dir  int
}

func parsePush(v bson.RawValue, coll *collation.Collator) (leaf, error) {
	op := pushOp{position: math.MaxInt64, slice: math.MaxInt64}
	if v.Type != bson.TypeEmbeddedDocument {
		op.vals = []bson.RawValue{v}
		return op, nil
	}
	doc := v.Document()
	if _, err := doc.LookupErr("$each"); err != nil {
		op.vals = []bson.RawValue{v}
		return op, nil
	}
	elems, _ := doc.Elements()
	seen := map[string]bool{}
	for _, e := range elems {
		k, ev := e.Key(), e.Value()
		if seen[k] {
			return nil, mongoerr.New(mongoerr.BadValue, "Only one %s is supported.", k)
		}
		seen[k] = true
		var err error
		switch k {
		case "$each":
			if ev.Type != bson.TypeArray {
				return nil, mongoerr.New(mongoerr.BadValue,
					"The argument to $each in $push must be an array but it was of type: %s", values.TypeName(ev.Type))
			}
			op.vals = arrayValues(ev)
		case "$slice":
			op.slice, err = integerClause(ev, "The value for $slice must be an integer value but was given type: %s")
		case "$position":
			op.position, err = integerClause(ev, "The value for $position must be an integer value, not of type: %s")
		case "$sort":
			if op.sort, err = parsePushSort(ev); op.sort != nil {
				op.sort.coll = coll
			}
		default:
			return nil, mongoerr.New(mongoerr.BadValue, "Unrecognized clause in $push: %s", k)
		}
		if err != nil {
			return nil, err
		}
	}
	return op, nil
}

func arrayValues(v bson.RawValue) []bson.RawValue {
	elems, _ := v.Array().Values()
	return elems
}

// integerClause reads a number with an integral value as an int64.
func integerClause(v bson.RawValue, msg string) (int64, error) {
	if n, ok := values.Int64(v); ok {
		return n, nil
	}
	return 0, mongoerr.New(mongoerr.BadValue, msg, values.TypeName(v.Type))
}

func parsePushSort(v bson.RawValue) (*pushSort, error) {
	badDir := mongoerr.New(mongoerr.BadValue, "The $sort element value must be either 1 or -1")
	if values.IsNumber(v.Type) {
		d, ok := values.Int64(v)
		if !ok || (d != 1 && d != -1) {
			return nil, badDir
		}
		return &pushSort{dir: int(d)}, nil
	}
	if v.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.BadValue,
			"The $sort is invalid: use 1/-1 to sort the whole element, or {field:1/-1} to sort embedded fields")
	}
	elems, _ := v.Document().Elements()
	if len(elems) == 0 {
		return nil, mongoerr.New(mongoerr.BadValue, "The $sort pattern is empty when it should be a set of fields.")
	}
	s := &pushSort{}
	for _, e := range elems {
		d, ok := values.Int64(e.Value())
		if !ok || (d != 1 && d != -1) {
			return nil, badDir
		}
		if e.Key() == "" {
			return nil, mongoerr.New(mongoerr.BadValue, "The $sort field cannot be empty")
		}
		for _, p := range strings.Split(e.Key(), ".") {
			if p == "" {
				return nil, mongoerr.New(mongoerr.BadValue,
					"The $sort field is a dotted field but has an empty part: %s", e.Key())
			}
		}
		s.fields = append(s.fields, sortField{path: e.Key(), dir: int(d)})
	}
	return s, nil
}

func (o pushOp) apply(c *applyCtx, s *slot) error {
	if s.n == nil {
		arr := &node{t: bson.TypeArray, expanded: true}
		o.perform(arr)
		return c.set(s, arr, false)
	}
	if s.n.t != bson.TypeArray {
		id := c.idString()
		if id == "" {
			id = "no id"
		}
		return mongoerr.New(mongoerr.BadValue, "The field '%s' must be an array but is of type %s in document {%s}",
			s.path(), values.TypeName(s.n.t), id)
	}
	before := s.n.value()
	s.n.expand()
	n := len(s.n.elems)
	o.perform(s.n)
	if o.sort != nil {
		// MongoDB's PushNode counts a sort as a change, even of an array
		// already in order.
		c.forced = true
	} else if after := s.n.value(); after.Equal(before) {
		return nil
	}
	return c.modified(s, o.appended(n, len(s.n.elems)))
}

// appended is how many elements the push appended to an array of n
// elements, now of m, when it did nothing else: 0 (a change of the whole
// array) when the array was empty, or $position named a place inside it,
// or $sort or $slice applied.
func (o pushOp) appended(n, m int) int {
	if n == 0 || o.position <= int64(n) || o.sort != nil || m != n+len(o.vals) {
		return 0
	}
	return len(o.vals)
}

// perform applies the push to the expanded array arr.
func (o pushOp) perform(arr *node) {
	if len(o.vals) > 0 {
		n := int64(len(arr.elems))
		at := o.position
		switch {
		case at > n:
			at = n
		case at < 0:
			at = max(n+at, 0)
		}
		add := make([]*node, len(o.vals))
		for i, v := range o.vals {
			add[i] = rawNode(v)
		}
		arr.elems = append(arr.elems[:at], append(add, arr.elems[at:]...)...)
	}
	if o.sort != nil {
		vals := make([]bson.RawValue, len(arr.elems))
		for i, e := range arr.elems {
			vals[i] = e.value()
		}
		idx := make([]int, len(vals))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(i, j int) bool { return o.sort.compare(vals[idx[i]], vals[idx[j]]) < 0 })
		sorted := make([]*node, len(idx))
		for i, k := range idx {
			sorted[i] = arr.elems[k]
		}
		arr.elems = sorted
	}
	// Trim without negating $slice, which may be math.MinInt64.
	switch n := int64(len(arr.elems)); {
	case o.slice >= 0 && o.slice < n:
		arr.elems = arr.elems[:o.slice]
	case o.slice < 0 && o.slice > -n:
		arr.elems = arr.elems[n+o.slice:]
	}
}

// compare orders two array elements by the $sort clause. A field sort reads
// the dotted fields of each element as extractElementAtPath finds them (a
// non-document element has none), with null for a missing field, and
// compares the whole values found, arrays included, as MongoDB's
// PatternElementCmp does.
func (p *pushSort) compare(a, b bson.RawValue) int {
	if p.fields == nil {
		return p.coll.Compare(a, b) * p.dir
	}
	for _, f := range p.fields {
		if c := p.coll.Compare(sortKey(a, f.path), sortKey(b, f.path)); c != 0 {
			return c * f.dir
		}
	}
	return 0
}

var nullValue = bson.RawValue{Type: bson.TypeNull}

func sortKey(v bson.RawValue, path string) bson.RawValue {
	if v.Type != bson.TypeEmbeddedDocument {
		return nullValue
	}
	if k := rawdoc.ElementAtPath(v.Value, path); k.Type != 0 {
		return k
	}
	return nullValue
}
