package values

import (
	"math/big"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Decimal128 division, remainder and square root as IEEE 754-2008 decimal
// arithmetic defines them (MongoDB computes them with Intel's BID library):
// an exact result takes the representable exponent closest to the
// operation's ideal exponent (so 3/2 is 1.5 and 10/2 is 5, not
// 1.500…0), an inexact one has 34 significant digits, rounded half to
// even.

// DecimalQuo is a/b (ideal exponent exp(a)-exp(b)). A zero divisor gives
// ±Infinity, or NaN for 0/0; a zero or infinite quotient is negative when
// one operand is.
func DecimalQuo(a, b bson.RawValue) bson.RawValue {
	x, y := toDecimal(a), toDecimal(b)
	neg := x.neg != y.neg
	switch {
	case x.nan:
		return DecimalValue(nanOf(x))
	case y.nan:
		return DecimalValue(nanOf(y))
	case x.inf != 0 && y.inf != 0:
		return DecimalValue(decimalNaN)
	case x.inf != 0:
		return DecimalValue(decimalInf(signOf(neg)))
	case y.inf != 0:
		return DecimalValue(DecimalWithSign(roundDecimal(new(big.Int), bson.MinDecimal128Exp), neg))
	case y.isZero():
		if x.isZero() {
			return DecimalValue(decimalNaN)
		}
		return DecimalValue(decimalInf(signOf(neg)))
	}
	q := new(big.Rat).Quo(decimalRat(x), decimalRat(y))
	return DecimalValue(zeroSigned(decimalFromRat(q, x.exp-y.exp), q.Num(), neg))
}

// DecimalRem is the remainder of a/b truncated toward zero, with a's sign,
// a zero too (ideal exponent min(exp(a), exp(b))); a zero divisor or an
// infinite dividend gives NaN, an infinite divisor gives a.
func DecimalRem(a, b bson.RawValue) bson.RawValue {
	x, y := toDecimal(a), toDecimal(b)
	switch {
	case x.nan:
		return DecimalValue(nanOf(x))
	case y.nan:
		return DecimalValue(nanOf(y))
	case x.inf != 0 || y.isZero():
		return DecimalValue(decimalNaN)
	case y.inf != 0:
		return DecimalValue(zeroSigned(roundDecimal(x.coef, x.exp), x.coef, x.neg))
	}
	rx, ry := decimalRat(x), decimalRat(y)
	q := new(big.Rat).Quo(rx, ry)
	t := new(big.Int).Quo(q.Num(), q.Denom()) // truncated toward zero
	r := new(big.Rat).Sub(rx, new(big.Rat).Mul(new(big.Rat).SetInt(t), ry))
	return DecimalValue(zeroSigned(decimalFromRat(r, min(x.exp, y.exp)), r.Num(), x.neg))
}

// DecimalSqrt is the square root of a non-negative number (ideal exponent
// floor(exp(a)/2)), -0 for -0; a negative one gives NaN.
func DecimalSqrt(a bson.RawValue) bson.RawValue {
	x := toDecimal(a)
	switch {
	case x.nan:
		return DecimalValue(nanOf(x))
	case x.inf < 0 || (x.inf == 0 && x.coef.Sign() < 0):
		return DecimalValue(decimalNaN)
	case x.inf > 0:
		return DecimalValue(decimalInf(1))
	}
	ideal := x.exp >> 1 // floor division
	// √(c·10^e) = s·10^f with s = √(c·10^(e-2f)); f goes down from the
	// ideal exponent until s is exact or has more than 34 digits.
	for f := ideal; ; f-- {
		n := scale(x.coef, x.exp-2*f)
		s := new(big.Int).Sqrt(n)
		if new(big.Int).Mul(s, s).Cmp(n) == 0 {
			return DecimalValue(zeroSigned(roundDecimal(s, f), s, x.neg))
		}
		if s.Cmp(maxCoef) > 0 {
			// Inexact (and never a tie): a sticky digit keeps the
			// rounding of the truncated root correct.
			return DecimalValue(roundDecimal(stickyDigit(s), f-1))
		}
	}
}

// decimalRat is the exact rational value of a finite decimal.
func decimalRat(d decimal) *big.Rat {
	if d.exp >= 0 {
		return new(big.Rat).SetInt(scale(d.coef, d.exp))
	}
	return new(big.Rat).SetFrac(d.coef, scale(big.NewInt(1), -d.exp))
}

// decimalFromRat is r as a decimal128: exact with the exponent closest to
// ideal when 34 digits suffice, otherwise rounded to 34 digits.
func decimalFromRat(r *big.Rat, ideal int) bson.Decimal128 {
	if r.Sign() == 0 {
		return roundDecimal(new(big.Int), ideal)
	}
	// c = r / 10^e, for e going down from the ideal exponent.
	c := new(big.Rat).Set(r)
	if ideal > 0 {
		c.Quo(c, new(big.Rat).SetInt(scale(big.NewInt(1), ideal)))
	} else if ideal < 0 {
		c.Mul(c, new(big.Rat).SetInt(scale(big.NewInt(1), -ideal)))
	}
	ten := big.NewRat(10, 1)
	e := ideal
	for {
		if c.IsInt() {
			return roundDecimal(c.Num(), e)
		}
		whole := new(big.Int).Quo(c.Num(), c.Denom())
		if whole.CmpAbs(maxCoef) > 0 {
			return roundDecimal(stickyDigit(whole), e-1)
		}
		c.Mul(c, ten)
		e--
	}
}

// stickyDigit appends a digit 1 to a coefficient truncated from an inexact
// value, so that rounding it half to even rounds the exact value right
// (the dropped digits were not zero, so it is never a tie).
func stickyDigit(c *big.Int) *big.Int {
	out := new(big.Int).Mul(c, bigTen)
	if c.Sign() < 0 {
		return out.Sub(out, big.NewInt(1))
	}
	return out.Add(out, big.NewInt(1))
}

// signOf is -1 for a negative sign, else 1.
func signOf(neg bool) int {
	if neg {
		return -1
	}
	return 1
}

// DecimalPow is a raised to the power e, for a whole e of at most 6176 in
// size (beyond, a finite power overflows or underflows a decimal):
// computed exactly, then given 34 significant digits, rounded half to even,
// as MongoDB's power gives it (1.5^2 is 2.250…0, with 34 digits). It is
// not ok for another e or a non-finite a.
func DecimalPow(a bson.RawValue, e int64) (bson.RawValue, bool) {
	x := toDecimal(a)
	if x.nan || x.inf != 0 || e > 6176 || e < -6176 || (e < 0 && x.coef.Sign() == 0) {
		return bson.RawValue{}, false
	}
	r := new(big.Rat).SetInt64(1)
	if b := decimalRat(x); e >= 0 {
		r.SetFrac(new(big.Int).Exp(b.Num(), big.NewInt(e), nil), new(big.Int).Exp(b.Denom(), big.NewInt(e), nil))
	} else {
		r.SetFrac(new(big.Int).Exp(b.Denom(), big.NewInt(-e), nil), new(big.Int).Exp(b.Num(), big.NewInt(-e), nil))
	}
	if r.Sign() == 0 {
		return DecimalValue(roundDecimal(new(big.Int), 0)), true
	}
	// The exponent giving 34 digits: |r| has digits(num) - digits(den)
	// or one more digits before its decimal point.
	num, den := new(big.Int).Abs(r.Num()), r.Denom()
	n := len(num.String()) - len(den.String())
	if new(big.Int).Mul(den, scale(big.NewInt(1), max(n, 0))).Cmp(new(big.Int).Mul(num, scale(big.NewInt(1), max(-n, 0)))) <= 0 {
		n++ // |r| >= 10^n
	}
	return DecimalValue(decimalFromRat(r, n-34)), true
}
