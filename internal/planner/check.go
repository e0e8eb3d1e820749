package planner

import (
	"bytes"

	"github.com/folio-db/folio/internal/keyenc"
)

// keyCheck is the bounds of an index field that the plan's intervals do
// not bound (it follows a range or an unbounded field). The scan tests it
// on each key and skips the keys outside it without fetching their
// documents, as MongoDB's index bounds checker does.
type keyCheck struct {
	field  int
	bounds fieldBounds
}

// CheckKey tests the plan's key checks on key, a whole index key after
// off bytes of storage prefix. When a
// check fails it returns false with the key to seek to next: in a forward
// scan the first key whose failing field can lie in its bounds (the next
// interval of that field under the same earlier fields, or else the next
// value of the earlier fields), in a backward scan the key to seek below.
// seek is nil when no repositioning helps (the scan then steps on). A key
// the checks cannot split is accepted: the filter still judges its
// document.
func (p *Plan) CheckKey(key []byte, off int) (ok bool, seek []byte) {
	next := 0 // the next check
	for i, f := range p.fields {
		if next == len(p.checks) {
			return true, nil
		}
		n, valid := keyenc.FieldLen(key[off:], f.Desc)
		if !valid {
			return true, nil
		}
		if p.checks[next].field != i {
			off += n
			continue
		}
		b := p.checks[next].bounds
		enc := key[off : off+n]
		if b.contains(enc) {
			off += n
			next++
			continue
		}
		pre := key[:off]
		if !p.Reverse {
			for _, iv := range b.ivs {
				if bytes.Compare(iv.lo, enc) > 0 {
					seek = append(append([]byte(nil), pre...), iv.lo...)
					break
				}
			}
			if seek == nil {
				seek = keyenc.PrefixEnd(pre)
			}
			if seek != nil && bytes.Compare(seek, key) <= 0 {
				seek = nil
			}
			return false, seek
		}
		for j := len(b.ivs) - 1; j >= 0; j-- {
			if bytes.Compare(b.ivs[j].hi, enc) <= 0 {
				seek = append(append([]byte(nil), pre...), b.ivs[j].hi...)
				break
			}
		}
		if seek == nil {
			seek = append([]byte(nil), pre...)
		}
		if bytes.Compare(seek, key) >= 0 {
			seek = nil
		}
		return false, seek
	}
	return true, nil
}
