package keyenc

import (
	"encoding/binary"
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// PrefixEnd returns the smallest byte string greater than every string that
// starts with prefix, or nil if there is none (prefix is empty or all 0xFF).
// Because encodings are prefix-free, PrefixEnd(k + AppendValue(nil, v)) is
// the exclusive upper bound of the keys that start with k and have the value
// v in the next field, and the inclusive lower bound of the keys whose next
// field is greater than v.
func PrefixEnd(prefix []byte) []byte {
	end, _ := AppendPrefixEnd(nil, prefix)
	return end
}

// AppendPrefixEnd appends PrefixEnd(prefix) to dst; ok is false, and dst
// unchanged, when there is none.
func AppendPrefixEnd(dst, prefix []byte) (_ []byte, ok bool) {
	for i := len(prefix) - 1; i >= 0; i-- {
		if prefix[i] != 0xFF {
			dst = append(dst, prefix[:i+1]...)
			dst[len(dst)-1]++
			return dst, true
		}
	}
	return dst, false
}

// TypeBounds returns single-byte bounds of the type class of t (values.Rank)
// for a field encoded ascending (desc false) or descending: the encoding of
// every value in the class, ascending or descending respectively, is at least
// lo and less than hi, and the encodings of all other classes lie outside
// [lo, hi). Appended to a common key prefix they bound a type-bracketed scan.
// For instance the ascending keys for {$gt: 5} on a number field lie in
// [PrefixEnd(Encode(5)), PrefixEnd(Encode(Inf(1)))), and all numbers in
// [lo, hi) of TypeBounds(bson.TypeDouble, false).
func TypeBounds(t bson.Type, desc bool) (lo, hi byte) {
	tag := typeTag(t)
	if desc {
		tag = ^tag
	}
	return tag, tag + 1
}

// Inf returns the double infinity with the sign of sign: +Inf and -Inf are
// the largest and smallest non-NaN numbers, the bounds MongoDB uses for
// one-sided numeric ranges such as {$gt: 5}, which scans (5, +Inf].
func Inf(sign int) bson.RawValue {
	return bson.RawValue{
		Type:  bson.TypeDouble,
		Value: binary.LittleEndian.AppendUint64(nil, math.Float64bits(math.Inf(sign))),
	}
}
