package values

import (
	"math/big"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// MongoDB's decimal π (Decimal128::kPi: π's first 51 digits, rounded half
// to even to 34) and the factors $degreesToRadians and $radiansToDegrees
// multiply a decimal by, kPi/180 and 180/kPi, each rounded to 34 digits.
var (
	decimalPi = DecimalValue(roundDecimal(bigFromString("314159265358979323846264338327950288419716939937510"), -50))

	decimalPiOver180 = DecimalQuo(decimalPi, DecimalValue(roundDecimal(big.NewInt(180), 0)))
	decimal180OverPi = DecimalQuo(DecimalValue(roundDecimal(big.NewInt(180), 0)), decimalPi)
)

func bigFromString(s string) *big.Int {
	n, _ := new(big.Int).SetString(s, 10)
	return n
}

// DecimalDegreesToRadians is a×(kPi/180), one decimal product.
func DecimalDegreesToRadians(a bson.RawValue) bson.RawValue {
	return DecimalValue(decimalArith(toDecimal(a), toDecimal(decimalPiOver180), true))
}

// DecimalRadiansToDegrees is a×(180/kPi), one decimal product.
func DecimalRadiansToDegrees(a bson.RawValue) bson.RawValue {
	return DecimalValue(decimalArith(toDecimal(a), toDecimal(decimal180OverPi), true))
}

// The trigonometric and hyperbolic functions of decimals, as $sin … $atanh
// and $atan2 give them for a decimal operand: 34 significant digits,
// rounded half to even, from a value computed with transPrec bits
// (MongoDB computes them with Intel's BID library, bid128_sin and the
// others, whose results are within an ulp of these); a result that rounds
// to a whole number has exponent 0, as fromBigFloat gives it. The caller
// refuses arguments outside a function's domain ($sin of an infinity,
// $asin beyond [-1, 1], ...). A NaN gives a NaN of its sign; a zero gives
// a zero of its sign for the odd functions.

// DecimalSin is sin a.
func DecimalSin(a bson.RawValue) bson.RawValue {
	return trigOf(a, odd, func(x *big.Float) *big.Float { s, _ := sinCos(x); return s })
}

// DecimalCos is cos a.
func DecimalCos(a bson.RawValue) bson.RawValue {
	return trigOf(a, even, func(x *big.Float) *big.Float { _, c := sinCos(x); return c })
}

// DecimalTan is tan a.
func DecimalTan(a bson.RawValue) bson.RawValue {
	return trigOf(a, odd, func(x *big.Float) *big.Float {
		s, c := sinCos(x)
		return s.Quo(s, c)
	})
}

// DecimalAsin is asin a, for a in [-1, 1].
func DecimalAsin(a bson.RawValue) bson.RawValue {
	return trigOf(a, odd, func(x *big.Float) *big.Float {
		// asin x = atan(x / √((1-x)(1+x))), ±π/2 at ±1.
		d := oneMinusSquare(x)
		if d.Sign() < 0 {
			return nil // |x| > 1: NaN
		}
		if d.Sign() == 0 {
			return halfPi(x.Sign())
		}
		return atanFloat(d.Quo(x, d.Sqrt(d)))
	})
}

// DecimalAcos is acos a, for a in [-1, 1].
func DecimalAcos(a bson.RawValue) bson.RawValue {
	return trigOf(a, neither, func(x *big.Float) *big.Float {
		// acos x = 2·atan(√((1-x)/(1+x))), π at -1.
		one := newFloat().SetInt64(1)
		den := newFloat().Add(one, x)
		if den.Sign() == 0 {
			return newFloat().Set(piFloat())
		}
		q := newFloat().Sub(one, x)
		if den.Sign() < 0 || q.Sign() < 0 {
			return nil // |x| > 1: NaN
		}
		q.Quo(q, den)
		r := atanFloat(q.Sqrt(q))
		return r.SetMantExp(r, 1)
	})
}

// DecimalAtan is atan a: ±π/2 at ±Infinity.
func DecimalAtan(a bson.RawValue) bson.RawValue {
	x := toDecimal(a)
	if x.inf != 0 {
		return DecimalValue(fromBigFloat(halfPi(x.inf)))
	}
	return trigOf(a, odd, atanFloat)
}

// DecimalAtan2 is the angle of the point (x, y), a in (-π, π], with
// C's atan2 rules for zeros and infinities: atan2(±0, x) is ±0 for x > 0
// or +0 and ±π for x < 0 or -0; an infinite y gives ±π/2, or ±π/4 and
// ±3π/4 with an infinite x; an infinite x gives ±0 or ±π.
func DecimalAtan2(ya, xa bson.RawValue) bson.RawValue {
	y, x := toDecimal(ya), toDecimal(xa)
	switch {
	case y.nan:
		return DecimalValue(nanOf(y))
	case x.nan:
		return DecimalValue(nanOf(x))
	}
	pi := piFloat()
	angle := func(num, den int64) bson.RawValue { // ±π·num/den, y's sign
		r := newFloat().Mul(pi, newFloat().SetInt64(num))
		r.Quo(r, newFloat().SetInt64(den))
		if y.neg {
			r.Neg(r)
		}
		return DecimalValue(fromBigFloat(r))
	}
	zero := func() bson.RawValue { return DecimalValue(DecimalWithSign(roundDecimal(new(big.Int), 0), y.neg)) }
	switch {
	case y.inf != 0 && x.inf > 0:
		return angle(1, 4)
	case y.inf != 0 && x.inf < 0:
		return angle(3, 4)
	case y.inf != 0:
		return angle(1, 2)
	case x.inf > 0:
		return zero()
	case x.inf < 0:
		return angle(1, 1)
	case y.isZero() && !x.neg:
		return zero()
	case y.isZero():
		return angle(1, 1)
	case x.isZero():
		return angle(1, 2)
	}
	yf, xf := decimalFloat(y), decimalFloat(x)
	r := atanFloat(newFloat().Quo(yf, xf))
	if x.neg {
		if y.neg {
			r.Sub(r, pi)
		} else {
			r.Add(r, pi)
		}
	}
	return DecimalValue(fromBigFloat(r))
}

// DecimalSinh is sinh a: ±Infinity at ±Infinity and past the largest
// decimal.
func DecimalSinh(a bson.RawValue) bson.RawValue {
	x := toDecimal(a)
	if x.inf != 0 {
		return DecimalValue(decimalInf(x.inf))
	}
	return trigOf(a, odd, func(f *big.Float) *big.Float {
		if f.MantExp(nil) <= 0 { // |x| < 1: the series, which keeps small values' digits
			return sinhSeries(f)
		}
		if overflowsExp(f) {
			return infFloat(f.Sign())
		}
		e := expFloat(f)
		r := newFloat().Sub(e, newFloat().Quo(newFloat().SetInt64(1), e))
		return r.SetMantExp(r, -1)
	})
}

// DecimalCosh is cosh a: +Infinity at ±Infinity and past the largest
// decimal.
func DecimalCosh(a bson.RawValue) bson.RawValue {
	x := toDecimal(a)
	if x.inf != 0 {
		return DecimalValue(decimalInf(1))
	}
	return trigOf(a, even, func(f *big.Float) *big.Float {
		if overflowsExp(f) {
			return infFloat(1)
		}
		e := expFloat(f)
		r := newFloat().Add(e, newFloat().Quo(newFloat().SetInt64(1), e))
		return r.SetMantExp(r, -1)
	})
}

// DecimalTanh is tanh a: ±1 (exponent 0) at ±Infinity.
func DecimalTanh(a bson.RawValue) bson.RawValue {
	x := toDecimal(a)
	if x.inf != 0 {
		return DecimalValue(roundDecimal(big.NewInt(int64(x.inf)), 0))
	}
	return trigOf(a, odd, func(f *big.Float) *big.Float {
		if f.MantExp(nil) > 8 { // |x| ≥ 128: 1 - tanh|x| < e^-256, far below an ulp
			return newFloat().SetInt64(int64(f.Sign()))
		}
		if f.MantExp(nil) <= 0 {
			s := sinhSeries(f)
			c := newFloat().Mul(s, s)
			c.Add(c, newFloat().SetInt64(1))
			return s.Quo(s, c.Sqrt(c)) // cosh = √(1 + sinh²)
		}
		e := expFloat(newFloat().SetMantExp(f, 1)) // e^2x
		num := newFloat().Sub(e, newFloat().SetInt64(1))
		return num.Quo(num, e.Add(e, newFloat().SetInt64(1)))
	})
}

// DecimalAsinh is asinh a: ±Infinity at ±Infinity.
func DecimalAsinh(a bson.RawValue) bson.RawValue {
	x := toDecimal(a)
	if x.inf != 0 {
		return DecimalValue(decimalInf(x.inf))
	}
	return trigOf(a, odd, func(f *big.Float) *big.Float {
		ax := newFloat().Abs(f)
		if ax.Cmp(big.NewFloat(0.5)) < 0 {
			return asinhSeries(f)
		}
		// sign · ln(|x| + √(x²+1))
		s := newFloat().Mul(ax, ax)
		s.Add(s, newFloat().SetInt64(1))
		r := lnBig(s.Add(ax, s.Sqrt(s)))
		if f.Sign() < 0 {
			r.Neg(r)
		}
		return r
	})
}

// DecimalAcosh is acosh a, for a ≥ 1: +Infinity at +Infinity.
func DecimalAcosh(a bson.RawValue) bson.RawValue {
	x := toDecimal(a)
	if x.inf > 0 {
		return DecimalValue(decimalInf(1))
	}
	return trigOf(a, neither, func(f *big.Float) *big.Float {
		// ln(x + √((x-1)(x+1)))
		one := newFloat().SetInt64(1)
		if f.Cmp(one) < 0 {
			return nil // x < 1: NaN
		}
		d := newFloat().Mul(newFloat().Sub(f, one), newFloat().Add(f, one))
		return lnBig(d.Add(f, d.Sqrt(d)))
	})
}

// DecimalAtanh is atanh a, for a in [-1, 1]: ±Infinity at ±1.
func DecimalAtanh(a bson.RawValue) bson.RawValue {
	return trigOf(a, odd, func(f *big.Float) *big.Float {
		ax := newFloat().Abs(f)
		one := newFloat().SetInt64(1)
		switch ax.Cmp(one) {
		case 0:
			return infFloat(f.Sign())
		case 1:
			return nil // |x| > 1: NaN
		}
		if ax.Cmp(big.NewFloat(0.5)) < 0 {
			return atanhSeries(f)
		}
		// ½·ln((1+x)/(1-x))
		q := newFloat().Add(one, f)
		q.Quo(q, newFloat().Sub(one, f))
		r := lnBig(q)
		return r.SetMantExp(r, -1)
	})
}

// shape is what a function is near 0: odd (f(x) = x(1 + O(x²)), ±0 at
// ±0), even (f(x) = 1 - O(x²)) or neither.
type shape int

const (
	odd shape = iota
	even
	neither
)

// trigOf applies fn to a finite decimal a (fn may return an infinite
// float: a decimal infinity, or nil outside its domain: NaN), passing NaNs
// through; sh says what fn is near 0.
func trigOf(a bson.RawValue, sh shape, fn func(*big.Float) *big.Float) bson.RawValue {
	x := toDecimal(a)
	switch {
	case x.nan:
		return DecimalValue(nanOf(x))
	case x.inf != 0: // outside the domain of the functions that reach here with one
		return DecimalValue(decimalNaN)
	case sh == odd && x.isZero():
		return DecimalValue(DecimalWithSign(roundDecimal(new(big.Int), 0), x.neg))
	case sh == odd && tiny(x):
		// f(x) = x(1 + O(x²)): x, with the 34 digits fromBigFloat gives
		n := len(new(big.Int).Abs(x.coef).String())
		return DecimalValue(roundDecimal(scale(x.coef, 34-n), x.exp-(34-n)))
	case sh == even && tiny(x):
		return DecimalValue(roundDecimal(big.NewInt(1), 0)) // 1 - O(x²)
	}
	r := fn(reducedFloat(x))
	if r == nil {
		return DecimalValue(decimalNaN)
	}
	if r.IsInf() {
		return DecimalValue(decimalInf(r.Sign()))
	}
	return DecimalValue(fromBigFloat(r))
}

// tiny reports whether finite x is below 10^-18 in size, where the odd
// functions' x(1 + O(x²)) and the even ones' 1 - O(x²) round to x and 1
// at 34 digits; it spares converting a tiny value to and from binary.
func tiny(x decimal) bool {
	return x.coef.Sign() != 0 && x.exp+len(new(big.Int).Abs(x.coef).String()) <= -18
}

// reducedFloat is finite x with transPrec bits, exactly enough that
// reducing it modulo 2π loses nothing: a large x is read with as many
// more bits as its integer part has.
func reducedFloat(x decimal) *big.Float {
	f := decimalFloat(x)
	if e := f.MantExp(nil); e > 0 {
		return decimalFloatPrec(x, transPrec+uint(e))
	}
	return f
}

// decimalFloatPrec is finite x with prec bits.
func decimalFloatPrec(x decimal, prec uint) *big.Float {
	f := new(big.Float).SetPrec(prec).SetInt(x.coef)
	switch {
	case x.exp > 0:
		return f.Mul(f, new(big.Float).SetPrec(prec).SetInt(scale(big.NewInt(1), x.exp)))
	case x.exp < 0:
		return f.Quo(f, new(big.Float).SetPrec(prec).SetInt(scale(big.NewInt(1), -x.exp)))
	}
	return f
}

func newFloat() *big.Float { return new(big.Float).SetPrec(transPrec) }

func infFloat(sign int) *big.Float { return new(big.Float).SetInf(sign < 0) }

// halfPi is ±π/2.
func halfPi(sign int) *big.Float {
	r := newFloat().SetMantExp(piFloat(), -1)
	if sign < 0 {
		r.Neg(r)
	}
	return r
}

// overflowsExp reports whether |x| > 14,200, where e^|x|/2 is beyond the
// largest decimal (ln of 10^6145 is 14,149.5).
func overflowsExp(x *big.Float) bool {
	return new(big.Float).Abs(x).Cmp(big.NewFloat(14200)) > 0
}

// oneMinusSquare is (1-x)(1+x), exact at x = ±1.
func oneMinusSquare(x *big.Float) *big.Float {
	one := newFloat().SetInt64(1)
	return newFloat().Mul(newFloat().Sub(one, x), newFloat().Add(one, x))
}

// sinCos is sin x and cos x: x reduced to r in [-π, π] (with as many
// bits of π as x needs), then their Taylor series at r.
func sinCos(x *big.Float) (sin, cos *big.Float) {
	r := x
	if x.MantExp(nil) > 1 { // |x| ≥ 2: reduce
		prec := x.Prec() + 64
		twoPi := piFloatPrec(prec)
		twoPi.SetMantExp(twoPi, 1)
		q := new(big.Float).SetPrec(prec).Quo(x, twoPi)
		n, _ := q.Int(nil)
		if rem := new(big.Float).SetPrec(prec).Sub(q, new(big.Float).SetInt(n)); rem.Cmp(big.NewFloat(0.5)) > 0 {
			n.Add(n, big.NewInt(1))
		} else if rem.Cmp(big.NewFloat(-0.5)) < 0 {
			n.Sub(n, big.NewInt(1))
		}
		m := new(big.Float).SetPrec(prec).Mul(twoPi, new(big.Float).SetInt(n))
		r = newFloat().Sub(new(big.Float).SetPrec(prec).Set(x), m)
	}
	sin, cos = newFloat().Set(r), newFloat().SetInt64(1)
	r2 := newFloat().Mul(r, r)
	ts, tc := newFloat().Set(r), newFloat().SetInt64(1)
	for k := int64(1); ; k++ {
		// ts: r^(2k+1)/(2k+1)!, tc: r^2k/(2k)!, alternating
		tc.Mul(tc, r2)
		tc.Quo(tc, newFloat().SetInt64((2*k-1)*(2*k)))
		tc.Neg(tc)
		ts.Mul(ts, r2)
		ts.Quo(ts, newFloat().SetInt64((2*k)*(2*k+1)))
		ts.Neg(ts)
		cos.Add(cos, tc)
		sin.Add(sin, ts)
		if negligible(tc, cos) && negligible(ts, sin) {
			return sin, cos
		}
	}
}

// negligible reports whether term no longer changes sum at transPrec bits.
func negligible(term, sum *big.Float) bool {
	return term.Sign() == 0 || (sum.Sign() != 0 && term.MantExp(nil) < sum.MantExp(nil)-int(transPrec)-8)
}

// atanFloat is atan x: for |x| > 1, ±π/2 - atan(1/x); then the argument
// halved (atan x = 2·atan(x/(1+√(1+x²)))) until below 1/8, and the series.
func atanFloat(x *big.Float) *big.Float {
	if x.Sign() == 0 {
		return newFloat()
	}
	one := newFloat().SetInt64(1)
	if new(big.Float).Abs(x).Cmp(one) > 0 {
		r := atanFloat(newFloat().Quo(one, x))
		return r.Sub(halfPi(x.Sign()), r)
	}
	t := newFloat().Set(x)
	doublings := 0
	for new(big.Float).Abs(t).Cmp(big.NewFloat(0.125)) > 0 {
		s := newFloat().Mul(t, t)
		s.Add(s, one)
		s.Sqrt(s)
		t.Quo(t, s.Add(s, one))
		doublings++
	}
	r := atanSeries(t)
	return r.SetMantExp(r, doublings)
}

// atanSeries is Σ (-1)^i z^(2i+1)/(2i+1), for |z| < 1.
func atanSeries(z *big.Float) *big.Float {
	return oddSeries(z, true)
}

// atanhSeries is Σ z^(2i+1)/(2i+1), for |z| < 1.
func atanhSeries(z *big.Float) *big.Float {
	return oddSeries(z, false)
}

func oddSeries(z *big.Float, alternate bool) *big.Float {
	z2 := newFloat().Mul(z, z)
	if alternate {
		z2.Neg(z2)
	}
	sum, pow, term := newFloat().Set(z), newFloat().Set(z), newFloat()
	for i := int64(3); ; i += 2 {
		pow.Mul(pow, z2)
		term.Quo(pow, newFloat().SetInt64(i))
		if negligible(term, sum) {
			return sum
		}
		sum.Add(sum, term)
	}
}

// sinhSeries is Σ x^(2k+1)/(2k+1)!, for |x| < 1.
func sinhSeries(x *big.Float) *big.Float {
	x2 := newFloat().Mul(x, x)
	sum, term := newFloat().Set(x), newFloat().Set(x)
	for k := int64(1); ; k++ {
		term.Mul(term, x2)
		term.Quo(term, newFloat().SetInt64((2*k)*(2*k+1)))
		if negligible(term, sum) {
			return sum
		}
		sum.Add(sum, term)
	}
}

// asinhSeries is Σ (-1)^n (2n)!/(4^n n!² (2n+1)) x^(2n+1), for |x| < 1.
func asinhSeries(x *big.Float) *big.Float {
	x2 := newFloat().Mul(x, x)
	sum, p, term := newFloat().Set(x), newFloat().Set(x), newFloat()
	for n := int64(0); ; n++ {
		// p_(n+1) = -p_n·x²·(2n+1)/(2n+2)
		p.Mul(p, x2)
		p.Mul(p, newFloat().SetInt64(2*n+1))
		p.Quo(p, newFloat().SetInt64(2*n+2))
		p.Neg(p)
		term.Quo(p, newFloat().SetInt64(2*n+3))
		if negligible(term, sum) {
			return sum
		}
		sum.Add(sum, term)
	}
}

// lnBig is ln x for a positive finite x: ln m + k·ln 2 for x = m·2^k,
// m in [1/√2, √2).
func lnBig(x *big.Float) *big.Float {
	ln2, _ := lnConstants()
	m := newFloat()
	k := x.MantExp(m)
	if m.Cmp(big.NewFloat(0.7071067811865476)) < 0 {
		m.SetMantExp(m, 1)
		k--
	}
	r := atanhLn(m)
	return r.Add(r, newFloat().Mul(ln2, newFloat().SetInt64(int64(k))))
}

var (
	piOnce, piWideOnce sync.Once
	piAt, piWide       *big.Float
)

// piWidePrec is enough bits of π to reduce the largest decimal (below
// 10^6145, a 20,415-bit integer part) modulo 2π with transPrec bits left.
const piWidePrec = transPrec + 20415 + 128

// piFloat is π with transPrec bits.
func piFloat() *big.Float {
	piOnce.Do(func() { piAt = machinPi(transPrec) })
	return piAt
}

// piFloatPrec is π with prec bits (at most piWidePrec), for reducing a
// large argument; the wide value is computed once, on first use.
func piFloatPrec(prec uint) *big.Float {
	if prec <= transPrec {
		return new(big.Float).SetPrec(prec).Set(piFloat())
	}
	piWideOnce.Do(func() { piWide = machinPi(piWidePrec) })
	return new(big.Float).SetPrec(prec).Set(piWide)
}

// machinPi is π with prec bits: 16·atan(1/5) - 4·atan(1/239) (Machin),
// the series summed with 32 guard bits.
func machinPi(prec uint) *big.Float {
	p := prec + 32
	series := func(n int64) *big.Float {
		z := new(big.Float).SetPrec(p).Quo(new(big.Float).SetPrec(p).SetInt64(1), new(big.Float).SetPrec(p).SetInt64(n))
		z2 := new(big.Float).SetPrec(p).Mul(z, z)
		z2.Neg(z2)
		sum, pow, term := new(big.Float).SetPrec(p).Set(z), new(big.Float).SetPrec(p).Set(z), new(big.Float).SetPrec(p)
		for i := int64(3); ; i += 2 {
			pow.Mul(pow, z2)
			term.Quo(pow, new(big.Float).SetPrec(p).SetInt64(i))
			if term.Sign() == 0 || term.MantExp(nil) < -int(p)-8 {
				return sum
			}
			sum.Add(sum, term)
		}
	}
	a := series(5)
	a.Mul(a, new(big.Float).SetPrec(p).SetInt64(16))
	b := series(239)
	b.Mul(b, new(big.Float).SetPrec(p).SetInt64(4))
	return new(big.Float).SetPrec(prec).Sub(a, b)
}
