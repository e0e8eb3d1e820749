package keyenc

import "math/bits"

// Word counts of the scratch integers used by decimalMagnitude: the small
// buffer covers common decimals (exponents up to about ±100), the large one
// the whole Decimal128 range (values scale to at most about 20700 bits).
const (
	smallWords = 8
	largeWords = 330
)

// decimalMagnitude returns the exact binary magnitude of the positive
// decimal coef × 10^q, coef = hi × 2^64 + lo. It scales the value to an
// integer of at least 64 bits, N = coef × 10^q for q ≥ 0 or
// N = ⌊coef × 2^s / 10^-q⌋ for q < 0; the top 64 bits of N give the
// exponent and fraction, and any lower nonzero bit or division remainder
// makes the magnitude inexact.
func decimalMagnitude(hi, lo uint64, q int) magnitude {
	clen := bits.Len64(lo)
	if hi != 0 {
		clen = 64 + bits.Len64(hi)
	}
	s, size := 0, clen+log2Pow10Ceil(q)
	if q < 0 {
		s = max(0, 64+log2Pow10Ceil(-q)-clen)
		size = clen + s
	}
	m := magnitude{coefHi: hi, coefLo: lo, decExp: q}
	if size/64+3 <= smallWords {
		var buf [smallWords]uint64
		m.exp, m.frac, m.inexact = scaleDecimal(buf[:0], hi, lo, q, s)
	} else {
		var buf [largeWords]uint64
		m.exp, m.frac, m.inexact = scaleDecimal(buf[:0], hi, lo, q, s)
	}
	return m
}

// log2Pow10Ceil returns an upper bound of log2(10^q) for q ≥ 0 and 0
// otherwise (3.322 > log2(10)).
func log2Pow10Ceil(q int) int {
	if q <= 0 {
		return 0
	}
	return (q*3322 + 999) / 1000
}

// scaleDecimal computes N (see decimalMagnitude) in n, a little-endian
// multiword integer with enough capacity, and returns the binary exponent
// and 63-bit top-aligned fraction of N / 2^s and whether bits were lost.
func scaleDecimal(n []uint64, hi, lo uint64, q, s int) (exp int, frac uint64, inexact bool) {
	n = append(n, lo)
	if hi != 0 {
		n = append(n, hi)
	}
	var rem uint64
	if q >= 0 {
		for ; q >= 19; q -= 19 {
			n = mulWord(n, pow10[19])
		}
		n = mulWord(n, pow10[q])
	} else {
		n = shiftLeft(n, s)
		p := -q
		for ; p >= 19; p -= 19 {
			var r uint64
			n, r = divWord(n, pow10[19])
			rem |= r
		}
		var r uint64
		n, r = divWord(n, pow10[p])
		rem |= r
	}
	top := n[len(n)-1]
	l := bits.Len64(top)
	frac = top << (64 - l)
	rest := false
	if len(n) > 1 {
		next := n[len(n)-2]
		frac |= next >> l
		rest = next<<(64-l) != 0
		for _, w := range n[:len(n)-2] {
			rest = rest || w != 0
		}
	}
	exp = 64*(len(n)-1) + l - 1 - s
	return exp, frac << 1, rem != 0 || rest
}

var pow10 = [20]uint64{
	1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
	1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
}

// mulWord sets n to n × m.
func mulWord(n []uint64, m uint64) []uint64 {
	var carry uint64
	for i, w := range n {
		h, l := bits.Mul64(w, m)
		var c uint64
		n[i], c = bits.Add64(l, carry, 0)
		carry = h + c
	}
	if carry != 0 {
		n = append(n, carry)
	}
	return n
}

// divWord sets n to ⌊n / d⌋ and returns the remainder.
func divWord(n []uint64, d uint64) ([]uint64, uint64) {
	var r uint64
	for i := len(n) - 1; i >= 0; i-- {
		n[i], r = bits.Div64(r, n[i], d)
	}
	for len(n) > 1 && n[len(n)-1] == 0 {
		n = n[:len(n)-1]
	}
	return n, r
}

// shiftLeft sets n to n × 2^s.
func shiftLeft(n []uint64, s int) []uint64 {
	w, b := s/64, uint(s%64)
	old := len(n)
	for range w + 1 {
		n = append(n, 0)
	}
	for i := old - 1; i >= 0; i-- {
		n[i+w+1] |= n[i] >> (64 - b)
		n[i+w] = n[i] << b
	}
	clear(n[:w])
	if n[len(n)-1] == 0 {
		n = n[:len(n)-1]
	}
	return n
}
