package engine

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/keyenc"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/values"
)

// maxIntervals bounds how many key intervals one plan scans (the product of
// $in lists over compound fields); past it the remaining fields are left
// unbounded.
const maxIntervals = 256

// plan is how a query reads its candidates: a scan of the document store
// in _id order (ix nil) or of a secondary index, over key intervals. Every
// candidate is still checked against the whole filter, so the intervals
// need only contain every matching document's keys.
type plan struct {
	ix        *Index
	keyPrefix []byte     // the document space of the collection, or the index's span
	intervals []interval // sorted, disjoint; nil scans the whole span
	reverse   bool
	// sorted reports that the scan yields the requested sort order.
	sorted bool
	// bounds describe the intervals per field, for explain.
	bounds bson.D
	fields []IndexField
	// pointFields counts the leading fields pinned to a single value.
	pointFields int
	// natural scans a capped collection's insertion order.
	natural bool
}

// useNatural turns a plain scan of a capped collection into a scan of its
// insertion order, which is its natural order.
func (p *plan) useNatural(c *Collection) {
	if c.capped == nil || p.ix != nil || p.intervals != nil {
		return
	}
	p.natural = true
	p.keyPrefix = naturalPrefix(c.ID)
}

// idPoint reports whether the plan reads one document by its _id.
func (p *plan) idPoint() bool {
	return p.ix == nil && !p.natural && p.pointFields == 1 && len(p.intervals) == 1
}

// fetches reports whether the plan's entries hold encoded _ids to fetch
// documents by, rather than the documents themselves.
func (p *plan) fetches() bool { return p.ix != nil || p.natural }

type interval struct{ lo, hi []byte }

// fieldBounds is what a filter says about one indexed field: equality
// points or one range, as encoded key suffixes.
type fieldBounds struct {
	points [][]byte
	lo, hi []byte // a range: [lo, hi)
	shown  []string
	// loShown and hiShown show a range's ends in scan order, for explain.
	loShown, hiShown string
}

// intersect narrows a range by another on the same field: both must hold
// of one value, which is true of a field that no document holds an array
// in.
func (b fieldBounds) intersect(o fieldBounds) fieldBounds {
	if bytes.Compare(o.lo, b.lo) > 0 {
		b.lo, b.loShown = o.lo, o.loShown
	}
	if bytes.Compare(o.hi, b.hi) < 0 {
		b.hi, b.hiShown = o.hi, o.hiShown
	}
	b.shown = []string{b.loShown + ", " + b.hiShown}
	return b
}

func (b fieldBounds) empty() bool { return b.points == nil && b.lo == nil }

// idFields is the document store seen as an index on _id.
var idFields = []IndexField{{Path: "_id", parts: []string{"_id"}}}

// choosePlan picks the access path for filter and sort on c: the hinted
// index, else the index whose leading fields the filter constrains most
// (equalities before a range), preferring one that also yields the sort;
// else a scan of the document store. A hint naming no index fails.
func choosePlan(c *Collection, f *query.Filter, sort *query.Sort, hint *Index, hintID bool) *plan {
	var sortFields []string
	var sortDirs []int
	if sort != nil {
		sortFields, sortDirs = sort.Fields()
	}
	leaves := constraintLeaves(f.Root())
	best := buildPlan(c, nil, leaves, sortFields, sortDirs)
	if hintID {
		return best
	}
	if hint != nil {
		return buildPlan(c, hint, leaves, sortFields, sortDirs)
	}
	bestScore := score(best)
	for _, ix := range c.Indexes() {
		if ix.Hidden || ix.partial != nil && !implies(leaves, ix.partial) {
			continue
		}
		p := buildPlan(c, ix, leaves, sortFields, sortDirs)
		if p.intervals == nil && (!p.sorted || ix.Sparse) {
			continue
		}
		if p.ix.Sparse && !sparseSafe(leaves, ix) {
			continue
		}
		if s := score(p); s > bestScore {
			best, bestScore = p, s
		}
	}
	return best
}

// score ranks plans: bounded fields count most, then a provided sort.
func score(p *plan) int {
	s := 0
	if p.intervals != nil {
		s += 4 * (len(p.bounds))
	}
	if p.sorted {
		s += 2
	}
	return s
}

// sparseSafe reports whether a sparse index holds every document the
// filter can match: the filter must constrain one of its fields to values
// a missing field cannot satisfy.
func sparseSafe(leaves []*query.Node, ix *Index) bool {
	for _, n := range leaves {
		for _, f := range ix.Fields {
			if n.Path != f.Path {
				continue
			}
			switch n.Kind {
			case query.KindEq:
				if n.Value.Type != bson.TypeNull {
					return true
				}
			case query.KindGt, query.KindGte, query.KindLt, query.KindLte, query.KindRegex:
				return true
			}
		}
	}
	return false
}

// constraintLeaves are the conditions every match satisfies: the top-level
// conjuncts, and the conditions inside $elemMatch on documents, with their
// paths made absolute.
func constraintLeaves(root *query.Node) []*query.Node {
	var out []*query.Node
	var add func(n *query.Node, prefix string)
	add = func(n *query.Node, prefix string) {
		switch n.Kind {
		case query.KindAnd:
			for _, ch := range n.Children {
				add(ch, prefix)
			}
		case query.KindElemMatchObject:
			for _, ch := range n.Children {
				add(ch, joinPath(prefix, n.Path))
			}
		default:
			if prefix != "" {
				cp := *n
				cp.Path = joinPath(prefix, n.Path)
				n = &cp
			}
			out = append(out, n)
		}
	}
	add(root, "")
	return out
}

func joinPath(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "." + b
}

func buildPlan(c *Collection, ix *Index, leaves []*query.Node, sortFields []string, sortDirs []int) *plan {
	p := &plan{ix: ix, fields: idFields, keyPrefix: docPrefix(c.ID)}
	if ix != nil {
		p.fields = ix.Fields
		p.keyPrefix = indexPrefix(c.ID, ix.ID)
	}
	prefixes := [][]byte{p.keyPrefix}
	bounded := true
	var last *fieldBounds
	single := make([]bool, len(p.fields))
	for i, f := range p.fields {
		if !bounded {
			break
		}
		fb := boundsFor(leaves, f, ix != nil && ix.Multikey())
		if fb.empty() {
			break
		}
		p.bounds = append(p.bounds, bson.E{Key: f.Path, Value: fb.shown})
		if fb.points == nil || len(prefixes)*len(fb.points) > maxIntervals {
			last = &fb
			bounded = false
			break
		}
		single[i] = len(fb.points) == 1
		next := make([][]byte, 0, len(prefixes)*len(fb.points))
		for _, pre := range prefixes {
			for _, pt := range fb.points {
				next = append(next, append(slices.Clip(pre), pt...))
			}
		}
		prefixes = next
	}
	if len(p.bounds) > 0 {
		for _, pre := range prefixes {
			if last != nil && last.lo != nil {
				p.intervals = append(p.intervals, interval{lo: append(slices.Clip(pre), last.lo...), hi: append(slices.Clip(pre), last.hi...)})
			} else {
				p.intervals = append(p.intervals, interval{lo: pre, hi: keyenc.PrefixEnd(pre)})
			}
		}
		slices.SortFunc(p.intervals, func(a, b interval) int { return bytes.Compare(a.lo, b.lo) })
	}
	for p.pointFields < len(single) && single[p.pointFields] {
		p.pointFields++
	}
	p.sorted, p.reverse = providesSort(p.fields, single, sortFields, sortDirs)
	return p
}

// providesSort reports whether scanning fields in order (or in reverse)
// yields the sort: the sort fields must follow the index fields, skipping
// only fields pinned to a single value.
func providesSort(fields []IndexField, single []bool, sortFields []string, sortDirs []int) (sorted, reverse bool) {
	if len(sortFields) == 0 {
		return false, false
	}
	j := 0
	dir := 0 // 1 forward, -1 backward, 0 undecided
	for i, f := range fields {
		if j == len(sortFields) {
			break
		}
		if f.Path == sortFields[j] {
			d := sortDirs[j]
			if f.Desc {
				d = -d
			}
			if dir != 0 && d != dir {
				return false, false
			}
			dir = d
			j++
			continue
		}
		if !single[i] {
			return false, false
		}
	}
	return j == len(sortFields), dir < 0
}

// boundsFor derives the bounds the filter puts on field f: equalities and
// $in lists as points, else the first range or anchored prefix regex.
func boundsFor(leaves []*query.Node, f IndexField, multikey bool) fieldBounds {
	var rng fieldBounds
	for _, n := range leaves {
		if n.Path != f.Path {
			continue
		}
		switch n.Kind {
		case query.KindEq:
			if fb, ok := pointBounds([]bson.RawValue{n.Value}, f.Desc); ok {
				return fb
			}
		case query.KindIn:
			vals, err := n.Value.Array().Values()
			if err != nil {
				continue
			}
			if fb, ok := pointBounds(vals, f.Desc); ok {
				return fb
			}
		case query.KindGt, query.KindGte, query.KindLt, query.KindLte:
			r := rangeBounds(n.Kind, n.Value, f.Desc)
			switch {
			case r.empty():
			case rng.empty():
				rng = r
			case !multikey:
				rng = rng.intersect(r)
			}
		case query.KindRegex:
			if rng.empty() {
				rng = prefixBounds(n.Value, f.Desc)
			}
		}
	}
	return rng
}

// pointBounds turns equality values into key points. An array value also
// matches documents holding it as an element of an array, so its first
// element (undefined for []) is a point too. Regexes and documents with
// operators cannot be points.
func pointBounds(vals []bson.RawValue, desc bool) (fieldBounds, bool) {
	var fb fieldBounds
	add := func(v bson.RawValue) {
		fb.points = append(fb.points, keyenc.AppendField(nil, v, desc))
		fb.shown = append(fb.shown, fmt.Sprintf("[%s, %s]", showValue(v), showValue(v)))
	}
	for _, v := range vals {
		switch v.Type {
		case bson.TypeRegex:
			return fieldBounds{}, false
		case bson.TypeArray:
			elems, err := v.Array().Values()
			if err != nil {
				return fieldBounds{}, false
			}
			if len(elems) == 0 {
				add(undefinedValue)
			} else {
				add(elems[0])
			}
		}
		add(v)
	}
	slices.SortFunc(fb.points, bytes.Compare)
	fb.points = slices.CompactFunc(fb.points, bytes.Equal)
	return fb, true
}

// rangeBounds turns a comparison into a range within the operand's type
// class, as MongoDB brackets comparisons by type.
func rangeBounds(k query.Kind, v bson.RawValue, desc bool) fieldBounds {
	switch v.Type {
	case bson.TypeNull, bson.TypeArray, bson.TypeMinKey, bson.TypeMaxKey, bson.TypeUndefined:
		return fieldBounds{}
	}
	enc := keyenc.AppendField(nil, v, desc)
	classLo, classHi := keyenc.TypeBounds(v.Type, desc)
	incl := k == query.KindGte || k == query.KindLte
	open, closed := "(", ")"
	if incl {
		open, closed = "[", "]"
	}
	value := showValue(v)
	// The byte range runs from the lower value to the upper one, or in a
	// descending field from the upper to the lower: the value bound is at
	// the start of the range when the operator bounds from below and the
	// field ascends, or bounds from above and the field descends.
	var fb fieldBounds
	if lowerOp := k == query.KindGt || k == query.KindGte; lowerOp != desc {
		fb.hi, fb.hiShown = []byte{classHi}, classEndShown(v.Type, !desc)+"]"
		fb.lo, fb.loShown = enc, open+value
		if !incl {
			fb.lo = keyenc.PrefixEnd(enc)
		}
	} else {
		fb.lo, fb.loShown = []byte{classLo}, "["+classEndShown(v.Type, desc)
		fb.hi, fb.hiShown = keyenc.PrefixEnd(enc), value+closed
		if !incl {
			fb.hi = enc
		}
	}
	fb.shown = []string{fb.loShown + ", " + fb.hiShown}
	return fb
}

// prefixBounds turns an anchored regex with a literal prefix (/^abc/, no i,
// m or x flag) into the range of strings starting with that prefix.
func prefixBounds(re bson.RawValue, desc bool) fieldBounds {
	pattern, opts := re.Regex()
	if strings.ContainsAny(opts, "imx") || !strings.HasPrefix(pattern, "^") {
		return fieldBounds{}
	}
	prefix := literalPrefix(pattern[1:])
	if prefix == "" {
		return fieldBounds{}
	}
	enc := keyenc.Encode(bson.RawValue{Type: bson.TypeString, Value: appendString(nil, prefix)})
	enc = enc[:len(enc)-2] // drop the string terminator: the bytes every extension starts with
	if desc {
		for i := range enc {
			enc[i] = ^enc[i]
		}
	}
	return fieldBounds{lo: enc, hi: keyenc.PrefixEnd(enc), shown: []string{fmt.Sprintf("[%q, %q)", prefix, prefix+"\uffff")}}
}

// literalPrefix is the run of literal characters a regex starts with,
// unescaping backslash-escaped punctuation.
func literalPrefix(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		ch := p[i]
		switch {
		case ch == '\\' && i+1 < len(p) && strings.IndexByte(`\.^$|?*+()[]{}/,-#&~ `, p[i+1]) >= 0:
			b.WriteByte(p[i+1])
			i++
		case strings.IndexByte(`\.^$|?*+()[]{}`, ch) >= 0:
			s := b.String()
			// A quantifier applies to the last literal, which then is optional.
			if (ch == '?' || ch == '*' || ch == '{') && len(s) > 0 {
				s = s[:len(s)-1]
			}
			return s
		default:
			b.WriteByte(ch)
		}
	}
	return b.String()
}

func appendString(dst []byte, s string) []byte {
	n := int32(len(s) + 1)
	dst = append(dst, byte(n), byte(n>>8), byte(n>>16), byte(n>>24))
	dst = append(dst, s...)
	return append(dst, 0)
}

// showValue renders a bound value as explain shows it.
func showValue(v bson.RawValue) string {
	if v.Type == bson.TypeUndefined {
		return "undefined"
	}
	return displayValue(v)
}

// classEndShown names the top (or bottom) of a type class as explain does.
func classEndShown(t bson.Type, top bool) string {
	switch {
	case values.IsNumber(t) && top:
		return "inf.0"
	case values.IsNumber(t):
		return "-inf.0"
	case top:
		return "MaxKey"
	}
	return "MinKey"
}
