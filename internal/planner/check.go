package planner

import (
	"bytes"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/keyenc"
	"github.com/folio-db/folio/internal/query"
)

// keyCheck is the bounds of an index field that the plan's intervals do
// not bound (it follows a range or an unbounded field). The scan tests it
// on each key and skips the keys outside it without fetching their
// documents, as MongoDB's index bounds checker does.
type keyCheck struct {
	field  int
	bounds fieldBounds
}

// keyFilter is a condition on an index field that its bounds only
// approximate and the key's value decides: a regex other than a literal
// prefix ($regex's bounds are every string, or a prefix's) or $mod (every
// number), which MongoDB's
// IndexBoundsBuilder bounds INEXACT_COVERED and its planner puts on the
// IXSCAN as a filter, so that a key failing it fetches no document
// (and3.js: docsExamined).
type keyFilter struct {
	field int
	cond  *query.Node
}

// keyFiltersOf are the key filters of a plan over fields, of an index
// without a collation (its entries then keep values the conditions can
// test) on which no document indexed an array (a key is then the field's
// one value, and a condition one value fails, the document fails).
func keyFiltersOf(leaves []*query.Node, fields []Field) []keyFilter {
	var out []keyFilter
	for _, n := range leaves {
		if n.Kind != query.KindRegex && n.Kind != query.KindMod || n.Kind == query.KindRegex && wholePrefix(n) {
			continue
		}
		for i, f := range fields {
			if f.Path == n.Path && !f.Hashed && !f.Text && !f.Geo && !f.Flat && f.WildcardOf == "" && !f.Wildcard && len(f.WildcardPaths) == 0 {
				out = append(out, keyFilter{field: i, cond: n})
				break
			}
		}
	}
	return out
}

// HasKeyFilters reports whether the plan tests its keys' values
// (KeyPasses) before fetching their documents.
func (p *Plan) HasKeyFilters() bool { return p.keyFilters != nil }

// KeyPasses reports whether the values of a key, as its index entry holds
// them ({"0": v0, ...}), meet the plan's key filters.
func (p *Plan) KeyPasses(vals bson.Raw) bool {
	for _, kf := range p.keyFilters {
		if !kf.cond.MatchesValue(vals.Index(uint(kf.field)).Value()) {
			return false
		}
	}
	return true
}

// CheckKey tests the plan's key checks on key, a whole index key after
// off bytes of storage prefix, as MongoDB's IndexBoundsChecker::checkKey
// does past the fields the intervals bound. When a check fails it returns
// false with the key to seek to next: in a forward scan the failing field
// at the start of its next interval under the same earlier fields and the
// later checked fields at the start of their first (seekSuffix), or, past
// the field's last interval, the next value of the earlier fields; in a
// backward scan the key to seek below. seek is nil when no repositioning
// helps (the scan then steps on). done reports a key past the field's last
// interval when no earlier field can move on within its bounds
// (spaceLeftToAdvance): the scan is over. A key the checks cannot split is
// accepted: the filter still judges its document.
func (p *Plan) CheckKey(key []byte, off int) (ok bool, seek []byte, done bool) {
	next := 0 // the next check
	var startsBuf [8]int
	starts := startsBuf[:0] // where each field before the current one starts
	for i, f := range p.fields {
		if next == len(p.checks) {
			return true, nil, false
		}
		n, valid := keyenc.FieldLen(key[off:], f.Desc)
		if !valid {
			return true, nil, false
		}
		if p.checks[next].field != i {
			starts = append(starts, off)
			off += n
			continue
		}
		b := p.checks[next].bounds
		enc := key[off : off+n]
		if b.contains(enc) {
			starts = append(starts, off)
			off += n
			next++
			continue
		}
		pre := key[:off]
		if !p.Reverse {
			for _, iv := range b.ivs {
				if bytes.Compare(iv.lo, enc) > 0 {
					seek = p.seekSuffix(append(append([]byte(nil), pre...), iv.lo...), i, len(pre), next+1)
					break
				}
			}
			if seek == nil {
				if !p.spaceLeft(key, starts, off) {
					return false, nil, true
				}
				seek = keyenc.PrefixEnd(pre)
			}
			if seek != nil && bytes.Compare(seek, key) <= 0 {
				seek = nil
			}
			return false, seek, false
		}
		for j := len(b.ivs) - 1; j >= 0; j-- {
			if bytes.Compare(b.ivs[j].hi, enc) <= 0 {
				seek = p.reverseSuffix(append(append([]byte(nil), pre...), b.ivs[j].hi...), i, len(pre), next+1)
				break
			}
		}
		if seek == nil {
			if !p.spaceLeft(key, starts, off) {
				return false, nil, true
			}
			seek = append([]byte(nil), pre...)
		}
		if bytes.Compare(seek, key) >= 0 {
			seek = nil
		}
		return false, seek, false
	}
	return true, nil, false
}

// seekSuffix appends to seek, a forward seek key whose last field (field,
// from byte from) is at an interval's start, the starts of the first
// intervals of the fields checks c on bound, while they follow one
// another, as MongoDB's seek point holds every later field at the start
// of its interval. Each is appended only after a whole field encoding: a
// key at or past seek and below the result then holds that field's value
// and a later field below its bounds, and fails a check; a field no check
// bounds ends the suffix.
func (p *Plan) seekSuffix(seek []byte, field, from, c int) []byte {
	for ; c < len(p.checks) && p.checks[c].field == field+1; c++ {
		if n, ok := keyenc.FieldLen(seek[from:], p.fields[field].Desc); !ok || n != len(seek)-from {
			break
		}
		field, from = field+1, len(seek)
		seek = append(seek, p.checks[c].bounds.ivs[0].lo...)
	}
	return seek
}

// IntervalSeek is the key a scan seeks to (forward) or below (backward)
// to enter an interval [lo, hi) (relative to the index): nil for lo or hi
// themselves, else followed by the checked fields right after the
// intervals' fields at the start of their bounds in the scan's order
// (seekSuffix, reverseSuffix).
func (p *Plan) IntervalSeek(lo, hi []byte) []byte {
	if p.ivFields == 0 || len(p.checks) == 0 || p.checks[0].field != p.ivFields {
		return nil
	}
	key := lo
	if p.Reverse {
		key = hi
	}
	from := 0
	for i := 0; i < p.ivFields-1; i++ {
		n, ok := keyenc.FieldLen(key[from:], p.fields[i].Desc)
		if !ok {
			return nil
		}
		from += n
	}
	var seek []byte
	if p.Reverse {
		seek = p.reverseSuffix(slices.Clip(key), p.ivFields-1, from, 0)
	} else {
		seek = p.seekSuffix(slices.Clip(key), p.ivFields-1, from, 0)
	}
	if len(seek) == len(key) {
		return nil
	}
	return seek
}

// reverseSuffix is seekSuffix for a backward seek key, whose last field
// (field, from byte from) is at the end of an interval: when that end is
// inclusive (the end past its value's whole encoding), the value's
// encoding followed by the end of the next checked field's last
// interval, and so on, the last field appended keeping its end. A key
// below the end and at or past the result holds the values before the
// last field appended and that field past its bounds; no whole encoding
// lies between a value's and the end past it, encodings being prefix-free.
func (p *Plan) reverseSuffix(seek []byte, field, from, c int) []byte {
	for ; c < len(p.checks) && p.checks[c].field == field+1; c++ {
		e := p.wholeBefore(seek, from, field)
		if e == nil {
			break
		}
		ivs := p.checks[c].bounds.ivs
		field, from = field+1, len(e)
		seek = append(e, ivs[len(ivs)-1].hi...)
	}
	return seek
}

// wholeBefore returns e, key up to byte from followed by one whole
// encoding of field, such that key is e's keyenc.PrefixEnd; nil when
// there is none (key[from:] is an exclusive end).
func (p *Plan) wholeBefore(key []byte, from, field int) []byte {
	n := len(key)
	if n <= from || key[n-1] == 0 {
		return nil
	}
	e := append(key[:n-1:n-1], key[n-1]-1)
	for range 4 {
		if m, ok := keyenc.FieldLen(e[from:], p.fields[field].Desc); ok && m == len(e)-from {
			return e
		}
		e = append(e, 0xFF)
	}
	return nil
}

// spaceLeft reports whether a field before the one starting at byte end of
// key (the fields starting at starts) can still move on within its bounds,
// as MongoDB's IndexBoundsChecker::spaceLeftToAdvance: it is not in its
// last interval in the scan's order, or that interval is open at its far
// end, or the field's value is not that end. An unbounded field always
// can.
func (p *Plan) spaceLeft(key []byte, starts []int, end int) bool {
	for i, from := range starts {
		to := end
		if i+1 < len(starts) {
			to = starts[i+1]
		}
		enc := key[from:to]
		b := p.fieldBounds[i]
		if b.empty() {
			return true
		}
		k, _ := slices.BinarySearchFunc(b.ivs, enc, func(iv fieldInterval, k []byte) int {
			if bytes.Compare(iv.hi, k) <= 0 {
				return -1
			}
			return 1
		})
		switch {
		case k >= len(b.ivs):
			return true
		case p.Reverse:
			if iv := b.ivs[0]; k != 0 || !iv.loIncl || !bytes.Equal(enc, iv.lo) {
				return true
			}
		default:
			if iv := b.ivs[k]; k != len(b.ivs)-1 || !iv.hiIncl || !isPrefixEnd(iv.hi, enc) {
				return true
			}
		}
	}
	return false
}

// isPrefixEnd reports whether end is keyenc.PrefixEnd(enc): an inclusive
// interval's end past the encoding of its last value.
func isPrefixEnd(end, enc []byte) bool {
	for len(enc) > 0 && enc[len(enc)-1] == 0xFF {
		enc = enc[:len(enc)-1]
	}
	n := len(enc)
	return n > 0 && len(end) == n && bytes.Equal(end[:n-1], enc[:n-1]) && end[n-1] == enc[n-1]+1
}
