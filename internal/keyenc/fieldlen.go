package keyenc

import "encoding/binary"

// FieldLen returns the length of the encoding at the start of key, of a
// field encoded ascending or (desc) descending, so that a compound key can
// be split into its fields; ok is false when key does not start with a
// complete encoding.
func FieldLen(key []byte, desc bool) (n int, ok bool) {
	r := reader{b: key}
	if desc {
		r.mask = 0xFF
	}
	r.value(r.next())
	return r.i, !r.bad
}

// reader walks an encoding, reading bytes with mask XORed in (0xFF for a
// descending field); bad is set on reading past the end.
type reader struct {
	b    []byte
	i    int
	mask byte
	bad  bool
}

func (r *reader) next() byte {
	if r.i >= len(r.b) {
		r.bad = true
		return 0
	}
	c := r.b[r.i] ^ r.mask
	r.i++
	return c
}

func (r *reader) skip(n int) {
	if r.i+n > len(r.b) || n < 0 {
		r.bad, r.i = true, len(r.b)
		return
	}
	r.i += n
}

func (r *reader) u32() int {
	if r.i+4 > len(r.b) {
		r.bad, r.i = true, len(r.b)
		return 0
	}
	v := binary.BigEndian.Uint32(r.b[r.i:]) ^ uint32(r.mask)*0x01010101
	r.i += 4
	return int(v)
}

// value reads the body of a value whose tag is tag.
func (r *reader) value(tag byte) {
	switch tag {
	case tagMinKey, tagMissing, tagNull, tagMaxKey:
	case tagNumber:
		r.number()
	case tagString, tagCode, tagUnknown:
		r.string()
	case tagObject, tagArray:
		r.document(tag == tagArray)
	case tagBinary:
		r.skip(r.u32() + 1)
	case tagObjectID:
		r.skip(12)
	case tagBool:
		r.skip(1)
	case tagDate, tagTimestamp:
		r.skip(8)
	case tagRegex:
		r.cstring()
		r.cstring()
	case tagDBPointer:
		r.skip(r.u32() + 12)
	case tagCodeScope:
		r.string()
		r.document(false)
	default:
		r.bad = true
	}
}

// number reads a number body: the kind byte, then for finite nonzero
// values the magnitude (inverted for negatives).
func (r *reader) number() {
	kind := r.next()
	if kind != numPos && kind != numNeg {
		return
	}
	saved := r.mask
	if kind == numNeg {
		r.mask ^= 0xFF
	}
	r.skip(2)
	chunks := 0
	for !r.bad {
		chunks++
		if r.next()&1 == 0 {
			break
		}
		if chunks == fracChunks {
			// An inexact decimal: its digits follow.
			r.skip(2)
			for !r.bad && r.next()&1 == 1 {
			}
			break
		}
	}
	r.mask = saved
}

// string reads bytes up to the terminator 0x00 0x01 (0x00 0xFF is an
// escaped 0x00).
func (r *reader) string() {
	for !r.bad {
		if r.next() == 0 && r.next() == 0x01 {
			return
		}
	}
}

func (r *reader) cstring() {
	for !r.bad && r.next() != 0 {
	}
}

// document reads elements up to the end marker.
func (r *reader) document(array bool) {
	for !r.bad {
		tag := r.next()
		if tag == endMarker {
			return
		}
		if !array {
			r.cstring()
		}
		r.value(tag)
	}
}
