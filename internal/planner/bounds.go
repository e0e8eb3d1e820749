package planner

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"math"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/keyenc"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/values"
)

// fieldInterval is a run of one field's encoded values, [lo, hi) in key
// byte order (a descending field's encodings are inverted, so its byte
// order is the reverse of value order), with its ends as explain shows
// them: as text, and (for points and comparisons) as the values at the
// lo and hi ends and whether each is included. An end without text (a
// point's) is shown from its value, only when explain asks.
type fieldInterval struct {
	lo, hi           []byte
	loShown, hiShown string
	loVal, hiVal     bson.RawValue
	loIncl, hiIncl   bool
	// unshown marks keys explain does not show: those of missing fields,
	// which Folio keys with undefined's key and MongoDB as null.
	unshown bool
}

func (iv fieldInterval) shown() string {
	lo, hi := iv.ends()
	return lo + ", " + hi
}

// shownBackward is the interval as a backward scan meets it, from its
// upper end to its lower, as MongoDB's explain shows it: (1, 5] is
// [5, 1).
func (iv fieldInterval) shownBackward() string {
	lo, hi := iv.ends()
	return opening(hi[len(hi)-1] == ']') + hi[:len(hi)-1] + ", " + lo[1:] + closing(lo[0] == '[')
}

// ends are the interval's ends as explain shows them, each with its
// bracket.
func (iv fieldInterval) ends() (lo, hi string) {
	lo, hi = iv.loShown, iv.hiShown
	if lo == "" {
		lo = opening(iv.loIncl) + showValue(iv.loVal)
	}
	if hi == "" {
		hi = showValue(iv.hiVal) + closing(iv.hiIncl)
	}
	return lo, hi
}

// opening and closing are an interval's brackets.
func opening(incl bool) string {
	if incl {
		return "["
	}
	return "("
}

func closing(incl bool) string {
	if incl {
		return "]"
	}
	return ")"
}

// showCollationKeys shows the string ends of b's intervals, which are keys
// of a non-simple collation and not text, as MongoDB's explain does:
// CollationKey(0x<lowercase hex>).
func (b fieldBounds) showCollationKeys() fieldBounds {
	for i := range b.ivs {
		iv := &b.ivs[i]
		if iv.loVal.Type == bson.TypeString {
			iv.loShown = opening(iv.loIncl) + collationKeyShown(iv.loVal)
		}
		if iv.hiVal.Type == bson.TypeString {
			iv.hiShown = collationKeyShown(iv.hiVal) + closing(iv.hiIncl)
		}
	}
	return b
}

func collationKeyShown(v bson.RawValue) string {
	return "CollationKey(0x" + hex.EncodeToString([]byte(v.StringValue())) + ")"
}

// fieldBounds is what a filter says about one indexed field: the sorted,
// disjoint intervals that hold every value a matching document can index
// under it. An empty list leaves the field unbounded.
type fieldBounds struct {
	ivs []fieldInterval
	// point reports that each interval holds a single value.
	point bool
	// none reports that no value satisfies the filter (ivs is then one
	// zero-width interval).
	none bool
}

func (b fieldBounds) empty() bool { return len(b.ivs) == 0 }

// single reports whether the bounds pin the field to one value.
func (b fieldBounds) single() bool { return b.point && len(b.ivs) == 1 }

// shown are the intervals as explain shows them, in the order a scan
// meets them: backward, the last first and each reversed.
func (b fieldBounds) shown(backward bool) []string {
	if b.none {
		return []string{}
	}
	out := make([]string, 0, len(b.ivs))
	for _, iv := range b.ivs {
		if iv.unshown {
			continue
		}
		if backward {
			out = append(out, iv.shownBackward())
		} else {
			out = append(out, iv.shown())
		}
	}
	if backward {
		slices.Reverse(out)
	}
	return out
}

// collatable reports whether the bounds may hold a string, an object or an
// array, values a collation orders (MongoDB's
// IndexScanNode::getFieldsWithStringBounds); an unbounded field holds
// every value. desc is the field's direction, whose keys are inverted.
func (b fieldBounds) collatable(desc bool) bool {
	if b.empty() {
		return true
	}
	if b.none {
		return false
	}
	for _, t := range [...]bson.Type{bson.TypeString, bson.TypeEmbeddedDocument, bson.TypeArray} {
		lo, hi := keyenc.TypeBounds(t, desc)
		for _, iv := range b.ivs {
			// An empty hi is the end of every key.
			if (len(iv.hi) == 0 || iv.hi[0] > lo || iv.hi[0] == lo && len(iv.hi) > 1) && bytes.Compare(iv.lo, []byte{hi}) < 0 {
				return true
			}
		}
	}
	return false
}

// contains reports whether the encoded field value enc lies in the bounds.
func (b fieldBounds) contains(enc []byte) bool {
	i, _ := slices.BinarySearchFunc(b.ivs, enc, func(iv fieldInterval, k []byte) int {
		if bytes.Compare(iv.hi, k) <= 0 {
			return -1
		}
		return 1
	})
	return i < len(b.ivs) && bytes.Compare(b.ivs[i].lo, enc) <= 0
}

// intersect narrows bounds by another set on the same field: both must
// hold of one value, which is true of a field that no document holds an
// array in.
func (b fieldBounds) intersect(o fieldBounds) fieldBounds {
	var out fieldBounds
	out.point = b.point || o.point
	i, j := 0, 0
	for i < len(b.ivs) && j < len(o.ivs) {
		x, y := b.ivs[i], o.ivs[j]
		iv := x
		if bytes.Compare(y.lo, x.lo) > 0 {
			iv.lo, iv.loShown, iv.loVal, iv.loIncl = y.lo, y.loShown, y.loVal, y.loIncl
		}
		if bytes.Compare(y.hi, x.hi) < 0 {
			iv.hi, iv.hiShown, iv.hiVal, iv.hiIncl = y.hi, y.hiShown, y.hiVal, y.hiIncl
		}
		if bytes.Compare(iv.lo, iv.hi) < 0 {
			out.ivs = append(out.ivs, iv)
		}
		if bytes.Compare(x.hi, y.hi) < 0 {
			i++
		} else {
			j++
		}
	}
	if out.ivs == nil {
		// No value satisfies both: one zero-width interval keeps the field
		// bounded and the scan empty; explain shows no interval.
		out.ivs = []fieldInterval{{lo: b.ivs[0].lo, hi: b.ivs[0].lo}}
		out.point, out.none = false, true
	}
	return out
}

// boundsFor derives the bounds the filter puts on field f: equalities and
// $in lists as points, else the ranges and anchored prefix regexes on it
// (intersected unless the index is multikey, where different elements of
// one array may satisfy each).
// On a multikey index the bounds come from one condition, from, when they
// come from the leaves (not a hashed or wildcard field's), and from the
// conditions within from's $elemMatch when that pins the element of the
// field's deepest array (pinsElement). deepest is that array's component,
// -1 when the field holds none, anyArray when any component may.
func boundsFor(leaves []*query.Node, f Field, deepest int, coll *collation.Collator) (fb fieldBounds, from *query.Node) {
	fb, from = keyBoundsFrom(leaves, f, deepest, coll)
	if coll != nil && f.WildcardOf == "" {
		fb = fb.showCollationKeys()
	}
	return fb, from
}

// keyBounds is boundsFor with strings under coll shown as text.
func keyBounds(leaves []*query.Node, f Field, multikey bool, coll *collation.Collator) fieldBounds {
	deepest := -1
	if multikey {
		deepest = anyArray
	}
	fb, _ := keyBoundsFrom(leaves, f, deepest, coll)
	return fb
}

// anyArray, as a field's deepest array component, is any: no $elemMatch
// pins the element its keys come from.
const anyArray = math.MaxInt

// pinsElement reports whether conditions a and b on a field whose deepest
// array lies at component deepest lie within one $elemMatch on a path
// longer than that array's: one element of every array on the field's
// path meets both, and so one key holds the values both judge: their
// bounds intersect, as MongoDB's plan enumerator assigns both to the
// index (plan_enumerator.cpp, canAssignPredToIndex and
// getPossibleFirstAssignments).
func pinsElement(a, b *query.Node, deepest int) bool {
	return a.Within != nil && a.Within == b.Within && a.Within.Parts > deepest
}

// keyBoundsFrom is keyBounds and the condition they come from (see
// boundsFor).
func keyBoundsFrom(leaves []*query.Node, f Field, deepest int, coll *collation.Collator) (fieldBounds, *query.Node) {
	multikey := deepest >= 0
	switch {
	case f.Hashed:
		return hashedBounds(fitting(leaves, coll), f, coll), nil
	case len(f.WildcardPaths) > 0:
		var vals []bson.RawValue
		for _, p := range f.WildcardPaths {
			vals = append(vals, bson.RawValue{Type: bson.TypeString, Value: appendString(nil, p)})
		}
		fb, _ := pointBounds(vals, false)
		return fb, nil
	case f.WildcardOf != "":
		return wildcardPathBounds(fitting(leaves, coll), f.WildcardOf), nil
	case f.Wildcard:
		return wildcardValueBounds(fitting(leaves, coll), f, multikey, coll), nil
	}
	var rng fieldBounds
	var from *query.Node
	for _, n := range leaves {
		if path, ok := notExistsPath(n); ok {
			if path == f.Path {
				return missingBounds(f.Desc), n
			}
			continue
		}
		var fb fieldBounds
		if n.Kind == query.KindNot {
			if len(n.Children) != 1 || n.Children[0].Path != f.Path || coll != nil {
				continue
			}
			fb = complementBounds(n.Children[0], f, multikey)
		} else if n.Path != f.Path || !collationFits(n, coll) {
			continue
		}
		switch n.Kind {
		case query.KindExists:
			fb = extremeBounds(query.KindGte, bson.TypeMinKey, f.Desc, multikey)
		case query.KindEq:
			// Points bound a multikey field alone; on another they
			// intersect with the field's other conditions, as MongoDB
			// intersects {$in: [1, 2], $ne: 2} to [1, 1].
			if pfb, ok := pointBounds([]bson.RawValue{coll.Transform(n.Value)}, f.Desc); ok {
				if multikey {
					return pfb, n
				}
				fb = pfb
			}
		case query.KindIn:
			vals, err := n.Value.Array().Values()
			if err != nil {
				continue
			}
			for i := range vals {
				vals[i] = coll.Transform(vals[i])
			}
			if pfb, ok := pointBounds(vals, f.Desc); ok {
				if multikey {
					return pfb, n
				}
				fb = pfb
				break
			}
			fb = inRegexBounds(vals, f.Desc, coll != nil)
		case query.KindGt, query.KindGte, query.KindLt, query.KindLte:
			if t := n.Value.Type; t == bson.TypeMinKey || t == bson.TypeMaxKey {
				fb = extremeBounds(n.Kind, t, f.Desc, multikey)
				break
			}
			if values.IsNumber(n.Value.Type) && isNaN(n.Value) {
				fb = nanComparisonBounds(n.Kind, f.Desc)
				break
			}
			fb = rangeBounds(n.Kind, coll.Transform(n.Value), f.Desc)
		case query.KindExprEq, query.KindExprGt, query.KindExprGte, query.KindExprLt, query.KindExprLte:
			if multikey {
				// MongoDB's planner never bounds a field that held
				// arrays by them (QueryPlannerIXSelect::_compatible):
				// an array's keys are its elements, its $expr value
				// the whole array.
				continue
			}
			fb = exprComparisonBounds(n.Kind, coll.Transform(n.Value), f.Desc)
		case query.KindRegex:
			fb = regexBounds(n.Value, f.Desc, coll != nil)
		case query.KindType:
			fb = typeBounds(n.Types(), f.Desc)
		case query.KindMod:
			// Only a number has a remainder: MongoDB's
			// IndexBoundsBuilder::translate bounds MOD by the numeric
			// class, [nan.0, inf.0], and the filter judges each key.
			fb = typeBounds([]bson.Type{bson.TypeDouble}, f.Desc)
		case query.KindElemMatchValue:
			fb = elemMatchValueBounds(n, f, coll)
			if fb.point {
				return fb, n
			}
		}
		switch {
		case fb.empty():
		case rng.empty():
			rng, from = fb, n
		case !multikey || pinsElement(from, n, deepest):
			rng = rng.intersect(fb)
		}
	}
	return rng, from
}

// complementBounds are the bounds of {$not: child} ($ne, $nin, a negated
// comparison): every key outside child's bounds, as MongoDB's
// index_bounds_builder complements a NOT's child, on a multikey field too:
// an array matches the negation only when none of its elements (its keys)
// matches child, so every key of a matching document lies outside child's
// bounds (MongoDB fetches to judge the others, INEXACT_FETCH). Only on an
// index without a collation (a query under another collation never
// reaches an index holding its strings: CollationFits), and only for an
// equality, $in or comparison whose operands are concrete scalars or null
// (undefined, MinKey, MaxKey, arrays and regexes bound more than their own
// keys; NaN's bounds hold just the NaNs, nanComparisonBounds; null's, its
// points, rangeBounds). A child no key satisfies leaves every key.
// On a field that may hold arrays, a child matching null is not
// complemented: an empty array keys null (along the path) or undefined (at
// its end), and its document may match the negation ({a: []} matches
// {"a.b": {$ne: null}}) with no key outside null's bounds.
// The filter judges each fetched document.
func complementBounds(child *query.Node, f Field, multikey bool) fieldBounds {
	vals := []bson.RawValue{child.Value}
	switch child.Kind {
	case query.KindEq, query.KindGt, query.KindGte, query.KindLt, query.KindLte:
	case query.KindIn:
		var err error
		if vals, err = child.Value.Array().Values(); err != nil || len(vals) == 0 {
			return fieldBounds{}
		}
	default:
		return fieldBounds{}
	}
	for _, v := range vals {
		switch v.Type {
		case bson.TypeUndefined, bson.TypeMinKey, bson.TypeMaxKey, bson.TypeArray, bson.TypeRegex:
			return fieldBounds{}
		}
	}
	inner := keyBounds([]*query.Node{child}, f, false, nil)
	if multikey && slices.ContainsFunc(inner.ivs, func(iv fieldInterval) bool { return nullish(iv.loVal) || nullish(iv.hiVal) }) {
		return fieldBounds{}
	}
	switch {
	case inner.none:
		// Nothing satisfies child ({$gt: null}, {$lt: NaN}): every key
		// satisfies its negation.
		return extremeBounds(query.KindGte, bson.TypeMinKey, f.Desc, false)
	case inner.empty():
		return fieldBounds{}
	}
	full := extremeBounds(query.KindGte, bson.TypeMinKey, f.Desc, false).ivs[0]
	lo, loShown := full.lo, opening(full.loIncl)+showValue(full.loVal)
	var out fieldBounds
	for i, iv := range inner.ivs {
		ivLo, ivHi := iv.ends()
		// No key lies between undefined's and null's, the points null's
		// bounds hold: {$ne: null} is [MinKey, undefined), (null, MaxKey].
		between := i > 0 && nullish(inner.ivs[i-1].loVal) && nullish(iv.loVal)
		if bytes.Compare(lo, iv.lo) < 0 && !between {
			out.ivs = append(out.ivs, fieldInterval{lo: lo, hi: iv.lo, loShown: loShown, hiShown: ivLo[1:] + closing(ivLo[0] == '(')})
		}
		if bytes.Compare(iv.hi, lo) > 0 {
			lo, loShown = iv.hi, opening(ivHi[len(ivHi)-1] == ')')+ivHi[:len(ivHi)-1]
		}
	}
	if bytes.Compare(lo, full.hi) < 0 {
		out.ivs = append(out.ivs, fieldInterval{lo: lo, hi: full.hi, loShown: loShown, hiShown: showValue(full.hiVal) + closing(full.hiIncl)})
	}
	return out
}

// nullish reports whether v is null or undefined, the values null's
// bounds hold.
func nullish(v bson.RawValue) bool {
	return v.Type == bson.TypeNull || v.Type == bson.TypeUndefined
}

// notExistsPath is the path n tests for {$exists: false} (a negated
// $exists), if it is one.
func notExistsPath(n *query.Node) (string, bool) {
	if n.Kind == query.KindNot && len(n.Children) == 1 && n.Children[0].Kind == query.KindExists {
		return n.Children[0].Path, true
	}
	return "", false
}

// missingBounds are the bounds of {$exists: false}: the keys of null and
// those of missing fields (undefined's key), shown as MongoDB's
// index_bounds_builder bounds a negated EXISTS, [null, null], for it keys
// a missing field as null; the filter judges each document fetched (an
// explicit null, or undefined, is keyed alike). A sparse index, which
// leaves missing fields out, is never asked (holdsEveryMatch).
func missingBounds(desc bool) fieldBounds {
	fb, _ := pointBounds([]bson.RawValue{nullValue}, desc)
	for i := range fb.ivs {
		fb.ivs[i].unshown = fb.ivs[i].loVal.Type == bson.TypeUndefined
	}
	return fb
}

// typeBounds are the bounds of {$type: types}: the bracket of each type
// (all numbers one), as MongoDB's index_bounds_builder bounds
// TYPE_OPERATOR, from appendMinForType to appendMaxForType; every key,
// [MinKey, MaxKey], when the types include array, whose documents are
// keyed by their elements (MongoDB's allValues, INEXACT_FETCH). The
// filter judges each fetched document (a bracket holds other types).
func typeBounds(types []bson.Type, desc bool) fieldBounds {
	var ivs []fieldInterval
	for _, t := range types {
		if values.IsNumber(t) {
			t = bson.TypeDouble
		}
		if t == bson.TypeArray {
			return extremeBounds(query.KindGte, bson.TypeMinKey, desc, false)
		}
		lo, hi := keyenc.TypeBounds(t, desc)
		minV, maxV := bracketMin(t), bracketMax(t)
		iv := fieldInterval{lo: []byte{lo}, hi: []byte{hi}, loVal: minV, hiVal: maxV, loIncl: true, hiIncl: sameBracket(maxV.Type, t)}
		if desc {
			// A descending field meets the bracket from its top.
			iv.loVal, iv.hiVal, iv.loIncl, iv.hiIncl = maxV, minV, iv.hiIncl, true
		}
		ivs = append(ivs, iv)
	}
	if len(ivs) == 0 {
		return fieldBounds{}
	}
	slices.SortFunc(ivs, func(a, b fieldInterval) int { return bytes.Compare(a.lo, b.lo) })
	ivs = slices.CompactFunc(ivs, func(a, b fieldInterval) bool { return bytes.Equal(a.lo, b.lo) })
	return fieldBounds{ivs: ivs}
}

// elemMatchValueBounds are the bounds of {path: {$elemMatch: {<ops>}}}:
// those its operators put on one element, which the index keys as
// itself, so they intersect even on a multikey index (MongoDB's
// index_bounds_builder intersects the children of ELEM_MATCH_VALUE).
// A negation ($ne, $nin, $not of a comparison) is bounded by its
// operand's complement, as planner_ixselect accepts a NOT below an
// $elemMatch on values. Operators with no bounds leave the element
// unbounded by them; the filter still judges each fetched document. None
// when an operator is
// itself an $elemMatch on values (elemMatchValueIndexable).
func elemMatchValueBounds(n *query.Node, f Field, coll *collation.Collator) fieldBounds {
	if !elemMatchValueIndexable(n) {
		return fieldBounds{}
	}
	children := make([]*query.Node, 0, len(n.Children))
	for _, ch := range n.Children {
		cp := *ch
		cp.Path = n.Path
		if ch.Kind == query.KindNot && len(ch.Children) == 1 {
			// a negation is bounded on its operand's path too
			// (complementBounds)
			neg := *ch.Children[0]
			neg.Path = n.Path
			cp.Children = []*query.Node{&neg}
		}
		children = append(children, &cp)
	}
	return keyBounds(children, f, false, coll)
}

// elemMatchValueIndexable reports whether an index may bound the element
// an $elemMatch on values (n) tests: not when one of its operators is an
// $elemMatch on values too, which tests the elements of an inner array,
// for an index unwinds only the outer array and keys an inner one as a
// single value. MongoDB's Indexability::arrayUsesIndexOnOwnField admits
// no ELEM_MATCH_VALUE child (jstests elemmatch_value.js, arrayfind8.js).
func elemMatchValueIndexable(n *query.Node) bool {
	for _, ch := range n.Children {
		if ch.Kind == query.KindElemMatchValue {
			return false
		}
	}
	return true
}

// inRegexBounds are the bounds of an $in list holding regexes, as
// MongoDB's IndexBoundsBuilder::translate makes them for MATCH_IN: the
// points of its other values and the bounds of each regex (regexBounds),
// overlapping intervals merged (unionize). collated is regexBounds'.
func inRegexBounds(vals []bson.RawValue, desc, collated bool) fieldBounds {
	var ivs []fieldInterval
	others := make([]bson.RawValue, 0, len(vals))
	for _, v := range vals {
		if v.Type == bson.TypeRegex {
			ivs = append(ivs, regexBounds(v, desc, collated).ivs...)
		} else {
			others = append(others, v)
		}
	}
	if len(others) > 0 {
		pb, ok := pointBounds(others, desc)
		if !ok {
			return fieldBounds{}
		}
		ivs = append(ivs, pb.ivs...)
	}
	slices.SortFunc(ivs, func(a, b fieldInterval) int { return bytes.Compare(a.lo, b.lo) })
	out := ivs[:0]
	for _, iv := range ivs {
		if len(out) > 0 {
			last := &out[len(out)-1]
			// A nil end is past every key.
			if last.hi == nil || bytes.Compare(iv.lo, last.hi) < 0 {
				if last.hi != nil && (iv.hi == nil || bytes.Compare(iv.hi, last.hi) > 0) {
					last.hi, last.hiShown, last.hiVal, last.hiIncl = iv.hi, iv.hiShown, iv.hiVal, iv.hiIncl
				}
				continue
			}
		}
		out = append(out, iv)
	}
	return fieldBounds{ivs: out}
}

// pointBounds turns equality values into key points. An array value also
// matches documents holding it as an element of an array, so its first
// element (undefined for []) is a point too; null also matches missing
// fields (indexed as null) and undefined values. Regexes and documents
// with operators cannot be points.
func pointBounds(vals []bson.RawValue, desc bool) (fieldBounds, bool) {
	fb := fieldBounds{point: true, ivs: make([]fieldInterval, 0, len(vals))}
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
				fb.ivs = appendPoint(fb.ivs, undefinedValue, desc)
			} else {
				fb.ivs = appendPoint(fb.ivs, elems[0], desc)
			}
		case bson.TypeNull, bson.TypeUndefined:
			fb.ivs = appendPoint(appendPoint(fb.ivs, undefinedValue, desc), nullValue, desc)
			continue
		}
		fb.ivs = appendPoint(fb.ivs, v, desc)
	}
	if len(fb.ivs) > 1 {
		slices.SortFunc(fb.ivs, func(a, b fieldInterval) int { return bytes.Compare(a.lo, b.lo) })
		fb.ivs = slices.CompactFunc(fb.ivs, func(a, b fieldInterval) bool { return bytes.Equal(a.lo, b.lo) })
	}
	return fb, true
}

// appendPoint appends to ivs the interval of the keys of v alone.
func appendPoint(ivs []fieldInterval, v bson.RawValue, desc bool) []fieldInterval {
	// The key and its end share one array when the value's encoding (its
	// bytes, a tag and a terminator or two) leaves room for both.
	enc := keyenc.AppendField(make([]byte, 0, 2*(len(v.Value)+4)), v, desc)
	lo := enc[:len(enc):len(enc)]
	hi, ok := keyenc.AppendPrefixEnd(enc[len(enc):], lo)
	if !ok {
		hi = nil
	}
	return append(ivs, fieldInterval{lo: lo, hi: hi, loVal: v, hiVal: v, loIncl: true, hiIncl: true})
}

// extremeBounds are the bounds of a comparison with MinKey or MaxKey (t),
// which sort below and above every type, as MongoDB's
// IndexBoundsBuilder::translate makes them: every key for $gte MinKey and
// $lte MaxKey; every key but the operand's for $gt MinKey and $lt MaxKey,
// though on a multikey index every key, for the array [MinKey] ([MaxKey])
// is keyed by the element it compares unequal to; the operand's key alone
// for $lte MinKey and $gte MaxKey; none for $lt MinKey and $gt MaxKey.
func extremeBounds(k query.Kind, t bson.Type, desc, multikey bool) fieldBounds {
	minLo, minHi := keyenc.TypeBounds(bson.TypeMinKey, desc)
	maxLo, maxHi := keyenc.TypeBounds(bson.TypeMaxKey, desc)
	minKey, maxKey := bson.RawValue{Type: bson.TypeMinKey}, bson.RawValue{Type: bson.TypeMaxKey}
	isMin := t == bson.TypeMinKey
	switch {
	case isMin && k == query.KindLt, !isMin && k == query.KindGt:
		lo := []byte{minLo}
		return fieldBounds{ivs: []fieldInterval{{lo: lo, hi: lo}}, none: true}
	case isMin && k == query.KindLte:
		return fieldBounds{point: true, ivs: appendPoint(nil, minKey, desc)}
	case !isMin && k == query.KindGte:
		return fieldBounds{point: true, ivs: appendPoint(nil, maxKey, desc)}
	}
	// A range over every type: in byte order from MinKey's class to
	// MaxKey's, or the reverse in a descending field.
	iv := fieldInterval{lo: []byte{minLo}, hi: []byte{maxHi}, loVal: minKey, hiVal: maxKey, loIncl: true, hiIncl: true}
	if desc {
		iv = fieldInterval{lo: []byte{maxLo}, hi: []byte{minHi}, loVal: maxKey, hiVal: minKey, loIncl: true, hiIncl: true}
	}
	// $gt MinKey leaves out the MinKey end, $lt MaxKey the MaxKey end.
	if !multikey && (k == query.KindGt || k == query.KindLt) {
		if (k == query.KindGt) != desc {
			iv.lo, iv.loIncl = []byte{iv.lo[0] + 1}, false
		} else {
			iv.hi, iv.hiIncl = []byte{iv.hi[0] - 1}, false
		}
	}
	iv.loShown = opening(iv.loIncl) + showValue(iv.loVal)
	iv.hiShown = showValue(iv.hiVal) + closing(iv.hiIncl)
	return fieldBounds{ivs: []fieldInterval{iv}}
}

// nanComparisonBounds are the bounds of a comparison with NaN (a double's
// or a decimal's), as MongoDB's IndexBoundsBuilder::translate makes them:
// only NaN is <= or >= NaN, so $lte and $gte scan the point [nan.0, nan.0];
// nothing is < or > NaN, so $lt and $gt scan no key.
func nanComparisonBounds(k query.Kind, desc bool) fieldBounds {
	fb, _ := pointBounds([]bson.RawValue{nanValue}, desc)
	if k == query.KindLt || k == query.KindGt {
		lo := fb.ivs[0].lo
		return fieldBounds{ivs: []fieldInterval{{lo: lo, hi: lo}}, none: true}
	}
	return fb
}

// rangeBounds turns a comparison into a range within the operand's type
// bracket, as MongoDB's IndexBoundsBuilder::translate makes it: from the
// operand to the bracket's end (bracketMax, an infinity for numbers) for
// $gt and $gte, from its start (bracketMin, -inf for numbers) for $lt and
// $lte, the far end included when it is of the operand's bracket
// (typeMatch). A range from a value to itself that leaves it out, as
// {$gt: true} or {$lt: ""}, is no interval (Interval::isNull).
func rangeBounds(k query.Kind, v bson.RawValue, desc bool) fieldBounds {
	switch v.Type {
	case bson.TypeNull:
		// Null's bracket holds null alone (a missing field is keyed as
		// null, with undefined): $gte and $lte are its equality, and
		// nothing is above or below it.
		if incl := k == query.KindGte || k == query.KindLte; incl {
			fb, _ := pointBounds([]bson.RawValue{v}, desc)
			return fb
		}
		enc := keyenc.AppendField(nil, v, desc)
		return fieldBounds{ivs: []fieldInterval{{lo: enc, hi: enc}}, none: true}
	case bson.TypeArray, bson.TypeMinKey, bson.TypeMaxKey, bson.TypeUndefined:
		return fieldBounds{}
	}
	enc := keyenc.AppendField(nil, v, desc)
	classLo, classHi := keyenc.TypeBounds(v.Type, desc)
	incl := k == query.KindGte || k == query.KindLte
	lowerOp := k == query.KindGt || k == query.KindGte
	far := bracketMin(v.Type)
	if lowerOp {
		far = bracketMax(v.Type)
	} else if values.IsNumber(v.Type) {
		// NaN sorts below -inf but satisfies no comparison with a
		// number but NaN: the range ends at -inf.
		far = keyenc.Inf(-1)
	}
	farIncl := sameBracket(far.Type, v.Type)
	if !(incl && farIncl) && bytes.Equal(enc, keyenc.AppendField(nil, far, desc)) {
		return fieldBounds{ivs: []fieldInterval{{lo: enc, hi: enc}}, none: true}
	}
	// The byte range runs from the lower value to the upper one, or in a
	// descending field from the upper to the lower: the value bound is at
	// the start of the range when the operator bounds from below and the
	// field ascends, or bounds from above and the field descends.
	var iv fieldInterval
	if lowerOp != desc {
		iv.hi, iv.hiVal, iv.hiIncl = []byte{classHi}, far, farIncl
		if values.IsNumber(v.Type) && desc && !isNaN(v) {
			// As below: a descending range ends after -inf.
			iv.hi = keyenc.PrefixEnd(keyenc.AppendField(nil, keyenc.Inf(-1), true))
		}
		iv.lo, iv.loVal, iv.loIncl = enc, v, incl
		if !incl {
			iv.lo = keyenc.PrefixEnd(enc)
		}
	} else {
		iv.lo, iv.loVal, iv.loIncl = []byte{classLo}, far, farIncl
		if values.IsNumber(v.Type) && !desc && !isNaN(v) {
			iv.lo = keyenc.AppendField(nil, keyenc.Inf(-1), false)
		}
		iv.hi, iv.hiVal, iv.hiIncl = keyenc.PrefixEnd(enc), v, incl
		if !incl {
			iv.hi = enc
		}
	}
	return fieldBounds{ivs: []fieldInterval{iv}}
}

// exprComparisonBounds are the bounds of a $_internalExpr comparison with
// v on a field that never held an array, as MongoDB's
// IndexBoundsBuilder::translate makes them: no type bracket, the range
// runs to MinKey or MaxKey. A missing field is keyed as null but sorts
// below it in the expression language, so $_internalExprLt null takes
// null's keys too.
func exprComparisonBounds(k query.Kind, v bson.RawValue, desc bool) fieldBounds {
	if k == query.KindExprEq {
		fb, _ := pointBounds([]bson.RawValue{v}, desc)
		return fb
	}
	if k == query.KindExprLt && v.Type == bson.TypeNull {
		k = query.KindExprLte
	}
	iv := extremeBounds(query.KindGte, bson.TypeMinKey, desc, false).ivs[0]
	enc := keyenc.AppendField(nil, v, desc)
	incl := k == query.KindExprGte || k == query.KindExprLte
	if lower := k == query.KindExprGt || k == query.KindExprGte; lower != desc {
		iv.lo, iv.loVal, iv.loIncl = enc, v, incl
		if !incl {
			iv.lo = keyenc.PrefixEnd(enc)
		}
	} else {
		iv.hi, iv.hiVal, iv.hiIncl = keyenc.PrefixEnd(enc), v, incl
		if !incl {
			iv.hi = enc
		}
	}
	if bytes.Compare(iv.lo, iv.hi) >= 0 {
		return fieldBounds{ivs: []fieldInterval{{lo: iv.lo, hi: iv.lo}}, none: true}
	}
	iv.loShown = opening(iv.loIncl) + showValue(iv.loVal)
	iv.hiShown = showValue(iv.hiVal) + closing(iv.hiIncl)
	return fieldBounds{ivs: []fieldInterval{iv}}
}

// bracketMin and bracketMax are the ends of t's bracket of the key order
// as MongoDB's appendMinForType and appendMaxForType make them: a type's
// least value, and its greatest (numbers: NaN to +inf; dates, timestamps,
// ObjectIds and booleans their extremes) or, for a type without one, the
// least value of the bracket after it ("" to {} for strings, {} to [] for
// objects...; CodeWScope's is MaxKey).
func bracketMin(t bson.Type) bson.RawValue {
	switch t {
	case bson.TypeDouble, bson.TypeInt32, bson.TypeInt64, bson.TypeDecimal128:
		return nanValue
	case bson.TypeString, bson.TypeSymbol:
		return bson.RawValue{Type: bson.TypeString, Value: appendString(nil, "")}
	case bson.TypeEmbeddedDocument, bson.TypeArray:
		return bson.RawValue{Type: t, Value: emptyDoc}
	case bson.TypeBinary:
		return bson.RawValue{Type: t, Value: []byte{0, 0, 0, 0, 0}}
	case bson.TypeObjectID:
		return bson.RawValue{Type: t, Value: make([]byte, 12)}
	case bson.TypeBoolean:
		return bson.RawValue{Type: t, Value: []byte{0}}
	case bson.TypeDateTime:
		return bson.RawValue{Type: t, Value: binary.LittleEndian.AppendUint64(nil, 1<<63)}
	case bson.TypeTimestamp:
		return bson.RawValue{Type: t, Value: make([]byte, 8)}
	case bson.TypeRegex:
		return bson.RawValue{Type: t, Value: []byte{0, 0}}
	case bson.TypeDBPointer:
		return bson.RawValue{Type: t, Value: append(appendString(nil, ""), make([]byte, 12)...)}
	case bson.TypeJavaScript:
		return bson.RawValue{Type: t, Value: appendString(nil, "")}
	case bson.TypeCodeWithScope:
		return bson.RawValue{Type: t, Value: append(append([]byte{14, 0, 0, 0}, appendString(nil, "")...), emptyDoc...)}
	}
	return bson.RawValue{Type: t} // null, undefined, MinKey, MaxKey: one value each
}

func bracketMax(t bson.Type) bson.RawValue {
	switch t {
	case bson.TypeDouble, bson.TypeInt32, bson.TypeInt64, bson.TypeDecimal128:
		return keyenc.Inf(1)
	case bson.TypeString, bson.TypeSymbol:
		return bracketMin(bson.TypeEmbeddedDocument)
	case bson.TypeEmbeddedDocument:
		return bracketMin(bson.TypeArray)
	case bson.TypeArray:
		return bracketMin(bson.TypeBinary)
	case bson.TypeBinary:
		return bracketMin(bson.TypeObjectID)
	case bson.TypeObjectID:
		return bson.RawValue{Type: t, Value: bytes.Repeat([]byte{0xff}, 12)}
	case bson.TypeBoolean:
		return bson.RawValue{Type: t, Value: []byte{1}}
	case bson.TypeDateTime:
		return bson.RawValue{Type: t, Value: binary.LittleEndian.AppendUint64(nil, math.MaxInt64)}
	case bson.TypeTimestamp:
		return bson.RawValue{Type: t, Value: bytes.Repeat([]byte{0xff}, 8)}
	case bson.TypeRegex:
		return bracketMin(bson.TypeDBPointer)
	case bson.TypeDBPointer:
		return bracketMin(bson.TypeJavaScript)
	case bson.TypeJavaScript:
		return bracketMin(bson.TypeCodeWithScope)
	case bson.TypeCodeWithScope:
		return bson.RawValue{Type: bson.TypeMaxKey}
	}
	return bson.RawValue{Type: t}
}

// sameBracket reports whether types a and b share a bracket of the key
// order (MongoDB's canonical type: all numbers one, strings and symbols
// one).
func sameBracket(a, b bson.Type) bool {
	lo, _ := keyenc.TypeBounds(a, false)
	other, _ := keyenc.TypeBounds(b, false)
	return lo == other
}

// showValue renders a bound value as explain shows it.
func showValue(v bson.RawValue) string {
	switch v.Type {
	case bson.TypeUndefined:
		return "undefined"
	case bson.TypeRegex:
		pattern, opts := v.Regex()
		return "/" + pattern + "/" + opts
	}
	return values.Shell(v)
}

func isNaN(v bson.RawValue) bool {
	f, _ := values.Float64(v)
	return math.IsNaN(f)
}

var (
	nullValue      = bson.RawValue{Type: bson.TypeNull}
	undefinedValue = bson.RawValue{Type: bson.TypeUndefined}
	nanValue       = bson.RawValue{Type: bson.TypeDouble, Value: binary.LittleEndian.AppendUint64(nil, math.Float64bits(math.NaN()))}
	emptyDoc       = []byte{5, 0, 0, 0, 0}
)

// collationFits reports whether leaf n may bound an index whose keys follow
// coll (nil: simple), as MongoDB's planner decides: a comparison whose
// operand holds a string only under the same collation (its strings become
// coll's keys), an $in list whose values (its regexes aside) hold none;
// every other operand (numbers, dates...) compares alike under every
// collation. An operator that compares no value ($type, $exists, $mod, the
// bit tests, a regex) fits every index, whatever its operand (MongoDB's
// getCollatedIndexDiscriminator): {$type: "string"} names a type, and a
// regex bounds an index under a collation by every string (regexBounds).
func collationFits(n *query.Node, coll *collation.Collator) bool {
	switch n.Kind {
	case query.KindEq, query.KindLt, query.KindLte, query.KindGt, query.KindGte,
		query.KindExprEq, query.KindExprGt, query.KindExprGte, query.KindExprLt, query.KindExprLte:
	case query.KindIn:
		if collation.Equal(n.Collator(), coll) {
			return true
		}
		vals, _ := n.Value.Array().Values()
		for _, v := range vals {
			if v.Type != bson.TypeRegex && collation.Collatable(v) {
				return false
			}
		}
		return true
	default:
		return true
	}
	return collation.Equal(n.Collator(), coll) || !collation.Collatable(n.Value)
}

// fitting is the leaves whose bounds an index of collation coll may take
// (see collationFits).
func fitting(leaves []*query.Node, coll *collation.Collator) []*query.Node {
	out := make([]*query.Node, 0, len(leaves))
	for _, n := range leaves {
		if collationFits(n, coll) {
			out = append(out, n)
		}
	}
	return out
}
