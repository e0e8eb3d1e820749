package keyenc

import (
	"encoding/binary"
	"math"
	"math/bits"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Numbers of all four types share one encoding that depends only on the
// exact numeric value, so equal numbers of different types encode
// identically. After tagNumber comes a kind byte:
//
//	numNaN, numNegInf, numZero, numPosInf   no further bytes
//	numPos                                  magnitude
//	numNeg                                  magnitude with every byte inverted
//
// The magnitude of a finite nonzero x is written in binary floating point,
// x = 2^e × 1.f:
//
//	e + expBias as 2 bytes
//	f in 7-bit chunks, each chunk<<1 | more, where more says another chunk
//	follows; trailing zero chunks are dropped but at least one is written
//
// Nine chunks hold 63 bits of f, enough for every int64 and double. A
// decimal whose f needs more bits writes all nine chunks with more set and
// then its exact decimal digits (see appendDecimalDigits); it sorts after
// every value that shares those 63 bits, since it exceeds their truncation.
const (
	numNaN = 0x01 + iota
	numNegInf
	numNeg
	numZero
	numPos
	numPosInf
)

// expBias makes every binary exponent (|e| < 20600 for decimals) positive.
const expBias = 0x8000

// fracChunks is the number of 7-bit chunks that hold the 63 bits of f.
const fracChunks = 9

// magnitude is a finite nonzero absolute value: 2^exp × (1 + frac/2^64).
type magnitude struct {
	exp  int
	frac uint64 // top-aligned; bit 0 is always zero
	// inexact reports that the value has nonzero bits below frac; then the
	// value is the decimal coef × 10^decExp, coef = coefHi × 2^64 + coefLo.
	inexact        bool
	coefHi, coefLo uint64
	decExp         int
}

// appendNumber appends the body of a numeric value.
func appendNumber(dst []byte, v bson.RawValue) []byte {
	b := v.Value
	switch v.Type {
	case bson.TypeInt32:
		return appendInt(dst, int64(int32(binary.LittleEndian.Uint32(fixed(b, 4)))))
	case bson.TypeInt64:
		return appendInt(dst, int64(le64(b)))
	case bson.TypeDouble:
		return appendDouble(dst, math.Float64frombits(le64(b)))
	}
	f := fixed(b, 16)
	return appendDecimal(dst, binary.LittleEndian.Uint64(f[8:]), binary.LittleEndian.Uint64(f[:8]))
}

func appendInt(dst []byte, i int64) []byte {
	if i == 0 {
		return append(dst, numZero)
	}
	u := uint64(i)
	if i < 0 {
		u = -u
	}
	n := bits.Len64(u)
	return appendFinite(dst, i < 0, magnitude{exp: n - 1, frac: u << (65 - n)})
}

func appendDouble(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, numNaN)
	case math.IsInf(f, 1):
		return append(dst, numPosInf)
	case math.IsInf(f, -1):
		return append(dst, numNegInf)
	case f == 0:
		return append(dst, numZero)
	}
	b := math.Float64bits(f)
	e := int(b >> 52 & 0x7FF)
	mant := b & (1<<52 - 1)
	m := magnitude{exp: e - 1023, frac: mant << 12}
	if e == 0 { // subnormal: mant × 2^-1074
		n := bits.Len64(mant)
		m = magnitude{exp: n - 1 - 1074, frac: mant << (65 - n)}
	}
	return appendFinite(dst, f < 0, m)
}

// appendDecimal appends the body of the Decimal128 with the given halves.
// The coefficient is read as values.Compare reads it (bson.Decimal128.BigInt):
// the 113 low bits in the usual form, zero in the form with the implicit
// 0b100 prefix.
func appendDecimal(dst []byte, hi, lo uint64) []byte {
	neg := hi>>63 != 0
	switch hi >> 58 & 0x1F {
	case 0x1F:
		return append(dst, numNaN)
	case 0x1E:
		if neg {
			return append(dst, numNegInf)
		}
		return append(dst, numPosInf)
	}
	if hi>>61&3 == 3 {
		return append(dst, numZero)
	}
	exp := int(hi>>49&0x3FFF) - 6176
	hi &= 1<<49 - 1
	if hi == 0 && lo == 0 {
		return append(dst, numZero)
	}
	return appendFinite(dst, neg, decimalMagnitude(hi, lo, exp))
}

func appendFinite(dst []byte, neg bool, m magnitude) []byte {
	if !neg {
		return appendMagnitude(append(dst, numPos), m)
	}
	dst = append(dst, numNeg)
	n := len(dst)
	dst = appendMagnitude(dst, m)
	invert(dst[n:])
	return dst
}

func appendMagnitude(dst []byte, m magnitude) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(m.exp+expBias))
	f := m.frac
	if m.inexact {
		for range fracChunks {
			dst = append(dst, byte(f>>57)<<1|1)
			f <<= 7
		}
		return appendDecimalDigits(dst, m.coefHi, m.coefLo, m.decExp)
	}
	for {
		c := byte(f>>57) << 1
		f <<= 7
		if f == 0 {
			return append(dst, c)
		}
		dst = append(dst, c|1)
	}
}

// appendDecimalDigits appends the positive decimal coef × 10^exp
// (coef = hi × 2^64 + lo, hi < 2^49) in scientific form: the exponent of its
// leading digit + expBias as 2 bytes, then its significant digits without
// trailing zeros in pairs, each pair<<1 | more (a lone last digit d is the
// pair d0). This is unique per value and orders positive decimals by value.
func appendDecimalDigits(dst []byte, hi, lo uint64, exp int) []byte {
	var buf [40]byte
	top, low := bits.Div64(hi, lo, 1e19) // hi < 2^49 < 1e19
	n := len(buf)
	for range 19 {
		n--
		buf[n] = byte(low % 10)
		low /= 10
	}
	for ; top > 0; top /= 10 {
		n--
		buf[n] = byte(top % 10)
	}
	digits := buf[n:]
	for digits[0] == 0 {
		digits = digits[1:]
	}
	for digits[len(digits)-1] == 0 {
		digits = digits[:len(digits)-1]
		exp++
	}
	dst = binary.BigEndian.AppendUint16(dst, uint16(exp+len(digits)-1+expBias))
	for i := 0; i < len(digits); i += 2 {
		pair := digits[i] * 10
		if i+1 < len(digits) {
			pair += digits[i+1]
		}
		more := byte(0)
		if i+2 < len(digits) {
			more = 1
		}
		dst = append(dst, pair<<1|more)
	}
	return dst
}
