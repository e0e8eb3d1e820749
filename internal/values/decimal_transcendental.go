package values

import (
	"math/big"
	"strconv"
	"strings"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Exponentials and logarithms of decimals, as $exp, $ln, $log10, $log and
// $pow give them for a decimal operand: 34 significant digits, rounded half
// to even, from a value computed with transPrec bits (MongoDB computes them
// with Intel's BID library, whose results are within an ulp of these). A
// result that rounds to a whole number is that number with exponent 0
// (exp(0) is 1, log10(100) is 2, exp(1E-6143) is 1), as Intel's library
// gives it.

// transPrec is the binary precision of the computations: 34 digits need
// 113 bits; the rest absorbs the cancellation of ln(c) + e·ln 10 near 1
// and the magnification of errors in ln 2 by exponents up to 20,500.
const transPrec = 320

// DecimalExp is e raised to a: +Inf gives +Inf, -Inf gives 0, NaN NaN; a
// result beyond the largest decimal is +Inf, one below the smallest
// rounds to 0 (0E-6176).
func DecimalExp(a bson.RawValue) bson.RawValue {
	x := toDecimal(a)
	switch {
	case x.nan:
		return DecimalValue(decimalNaN)
	case x.inf > 0:
		return DecimalValue(decimalInf(1))
	case x.inf < 0:
		return DecimalValue(roundDecimal(new(big.Int), 0))
	case x.coef.Sign() == 0:
		return DecimalValue(roundDecimal(big.NewInt(1), 0))
	}
	// ln of the largest decimal is 14149.4, of half the smallest -14221.5
	if decimalAbove(x, 14150) {
		return DecimalValue(decimalInf(1))
	}
	if decimalAbove(negate(x), 14222) {
		return DecimalValue(roundDecimal(new(big.Int), bson.MinDecimal128Exp))
	}
	return DecimalValue(fromBigFloat(expFloat(decimalFloat(x))))
}

// DecimalLn is the natural logarithm of a, for a positive a, NaN or +Inf
// (the caller refuses the others): ln 1 is 0.
func DecimalLn(a bson.RawValue) bson.RawValue {
	return logOf(toDecimal(a), nil)
}

// DecimalLog10 is the base-10 logarithm of a, as DecimalLn takes it.
func DecimalLog10(a bson.RawValue) bson.RawValue {
	return logOf(toDecimal(a), big.NewInt(10))
}

// DecimalLog is the logarithm of a in base b, both positive and b not 1
// (the caller refuses the others), or NaN, as MongoDB's
// Decimal128::logarithm(other) takes it: in base 2 or 10 one logarithm
// rounded once (the library's log2 and log10), in any other base ln a and
// ln b, each rounded to 34 digits, divided as decimals. The quotient's
// exponent follows division's: the log of 1 in base 8 is 0E+33, of 64 in
// base 8 2.000000000000000000000000000000000 (jstests/aggregation/
// expressions/log_pow_exp.js).
func DecimalLog(a, b bson.RawValue) bson.RawValue {
	if base := toDecimal(b); !base.nan && base.inf == 0 {
		r := decimalRat(base)
		for _, n := range [...]int64{2, 10} {
			if r.Cmp(big.NewRat(n, 1)) == 0 {
				return logOf(toDecimal(a), big.NewInt(n))
			}
		}
	}
	return DecimalQuo(DecimalLn(a), DecimalLn(b))
}

// DecimalPowReal is a raised to a power e that is not whole, for a
// positive finite a and a finite e: exp(e·ln a); ok is false for other
// operands.
func DecimalPowReal(a, e bson.RawValue) (bson.RawValue, bool) {
	x, y := toDecimal(a), toDecimal(e)
	if x.nan || y.nan || x.inf != 0 || y.inf != 0 || x.coef.Sign() <= 0 {
		return bson.RawValue{}, false
	}
	p := new(big.Float).SetPrec(transPrec).Mul(decimalFloat(y), lnFloat(x))
	if p.Cmp(big.NewFloat(14150)) > 0 {
		return DecimalValue(decimalInf(1)), true
	}
	if p.Cmp(big.NewFloat(-14222)) < 0 {
		return DecimalValue(roundDecimal(new(big.Int), bson.MinDecimal128Exp)), true
	}
	return DecimalValue(fromBigFloat(expFloat(p))), true
}

// logOf is ln x, or the logarithm of x in base b (an integer).
func logOf(x decimal, b *big.Int) bson.RawValue {
	switch {
	case x.nan || x.inf < 0 || (x.inf == 0 && x.coef.Sign() <= 0):
		return DecimalValue(decimalNaN)
	case x.inf > 0:
		return DecimalValue(decimalInf(1))
	case isOne(x):
		return DecimalValue(roundDecimal(new(big.Int), 0))
	}
	l := lnFloat(x)
	if b != nil {
		l.Quo(l, lnFloat(decimal{coef: b}))
	}
	return DecimalValue(fromBigFloat(l))
}

// isOne reports whether finite x is exactly 1.
func isOne(x decimal) bool {
	return decimalRat(x).Cmp(big.NewRat(1, 1)) == 0
}

// decimalAbove reports whether finite x > n.
func decimalAbove(x decimal, n int64) bool {
	return decimalRat(x).Cmp(big.NewRat(n, 1)) > 0
}

func negate(x decimal) decimal {
	return decimal{coef: new(big.Int).Neg(x.coef), exp: x.exp}
}

// decimalFloat is finite x with transPrec bits.
func decimalFloat(x decimal) *big.Float {
	f := new(big.Float).SetPrec(transPrec).SetInt(x.coef)
	if x.exp > 0 {
		return f.Mul(f, new(big.Float).SetPrec(transPrec).SetInt(scale(big.NewInt(1), x.exp)))
	}
	if x.exp < 0 {
		return f.Quo(f, new(big.Float).SetPrec(transPrec).SetInt(scale(big.NewInt(1), -x.exp)))
	}
	return f
}

// lnFloat is ln x for a positive finite x: ln(m) + k·ln 2 + e·ln 10, for
// x's coefficient m·2^k with m in [1/√2, √2) and its exponent e.
func lnFloat(x decimal) *big.Float {
	ln2, ln10 := lnConstants()
	m := new(big.Float).SetPrec(transPrec).SetInt(x.coef)
	k := m.MantExp(m) // m in [0.5, 1)
	if m.Cmp(big.NewFloat(0.7071067811865476)) < 0 {
		m.SetMantExp(m, 1)
		k--
	}
	r := atanhLn(m)
	r.Add(r, new(big.Float).SetPrec(transPrec).Mul(ln2, new(big.Float).SetInt64(int64(k))))
	return r.Add(r, new(big.Float).SetPrec(transPrec).Mul(ln10, new(big.Float).SetInt64(int64(x.exp))))
}

// atanhLn is ln m = 2·atanh((m-1)/(m+1)) = 2·Σ z^(2i+1)/(2i+1), for m
// near 1.
func atanhLn(m *big.Float) *big.Float {
	one := new(big.Float).SetPrec(transPrec).SetInt64(1)
	z := new(big.Float).SetPrec(transPrec).Sub(m, one)
	z.Quo(z, new(big.Float).SetPrec(transPrec).Add(m, one))
	z2 := new(big.Float).SetPrec(transPrec).Mul(z, z)
	sum := new(big.Float).SetPrec(transPrec).Set(z)
	pow := new(big.Float).SetPrec(transPrec).Set(z)
	term := new(big.Float).SetPrec(transPrec)
	for i := int64(3); ; i += 2 {
		pow.Mul(pow, z2)
		term.Quo(pow, new(big.Float).SetInt64(i))
		if term.Sign() == 0 || term.MantExp(nil) < sum.MantExp(nil)-transPrec-8 {
			break
		}
		sum.Add(sum, term)
	}
	return sum.Mul(sum, new(big.Float).SetInt64(2))
}

var (
	lnOnce       sync.Once
	lnTwo, lnTen *big.Float
)

// lnConstants are ln 2 = 2·atanh(1/3) and ln 10 = 3·ln 2 + ln 1.25.
func lnConstants() (ln2, ln10 *big.Float) {
	lnOnce.Do(func() {
		lnTwo = atanhLn(new(big.Float).SetPrec(transPrec).SetInt64(2))
		lnTen = atanhLn(new(big.Float).SetPrec(transPrec).SetFloat64(1.25))
		lnTen.Add(lnTen, new(big.Float).SetPrec(transPrec).Mul(lnTwo, new(big.Float).SetInt64(3)))
	})
	return lnTwo, lnTen
}

// expFloat is e^x for |x| below 14,300: 2^k·e^r with k = round(x/ln 2),
// e^r from its Taylor series at r/2^10, squared ten times.
func expFloat(x *big.Float) *big.Float {
	ln2, _ := lnConstants()
	kf := new(big.Float).SetPrec(transPrec).Quo(x, ln2)
	kf.Add(kf, big.NewFloat(0.5*float64(kf.Sign())))
	k, _ := kf.Int64()
	r := new(big.Float).SetPrec(transPrec).Mul(ln2, new(big.Float).SetInt64(k))
	r.Sub(x, r)
	const halvings = 10
	r.SetMantExp(r, -halvings)
	sum := new(big.Float).SetPrec(transPrec).SetInt64(1)
	term := new(big.Float).SetPrec(transPrec).SetInt64(1)
	for i := int64(1); ; i++ {
		term.Mul(term, r)
		term.Quo(term, new(big.Float).SetInt64(i))
		if term.Sign() == 0 || term.MantExp(nil) < -transPrec-8 {
			break
		}
		sum.Add(sum, term)
	}
	for range halvings {
		sum.Mul(sum, sum)
	}
	return sum.SetMantExp(sum, int(k))
}

// fromBigFloat is f with 34 significant digits, rounded half to even (a
// sticky digit stands for the digits beyond the 41 read, so an inexact
// value is never taken for a tie); a whole number has exponent 0.
func fromBigFloat(f *big.Float) bson.Decimal128 {
	if f.Sign() == 0 {
		return roundDecimal(new(big.Int), 0)
	}
	mant, exp, _ := strings.Cut(f.Text('e', 40), "e") // [-]d.<40 digits>e±x
	e, _ := strconv.Atoi(exp)
	c, _ := new(big.Int).SetString(strings.Replace(mant, ".", "", 1), 10)
	d := roundDecimal(stickyDigit(c), e-41)
	coef, dexp, err := d.BigInt()
	if err != nil || dexp >= 0 || coef.Sign() == 0 {
		return d
	}
	whole, rem := new(big.Int).QuoRem(coef, scale(big.NewInt(1), -dexp), new(big.Int))
	if rem.Sign() != 0 {
		return d
	}
	return roundDecimal(whole, 0)
}
