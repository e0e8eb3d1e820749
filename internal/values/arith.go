package values

import (
	"math"
	"math/big"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// Add returns a+b under MongoDB's numeric promotion rules (SafeNum): two
// int32s give an int32, widening to int64 when the sum overflows; int32 and
// int64 give an int64; any double gives a double; any decimal128 gives a
// decimal128. ok is false when an int64 result overflows, which MongoDB
// reports as a failure rather than promoting. Both operands must be numbers.
func Add(a, b bson.RawValue) (v bson.RawValue, ok bool) {
	return arith(a, b, false)
}

// Multiply returns a*b under the same promotion rules as Add.
func Multiply(a, b bson.RawValue) (v bson.RawValue, ok bool) {
	return arith(a, b, true)
}

func arith(a, b bson.RawValue, mul bool) (bson.RawValue, bool) {
	switch {
	case a.Type == bson.TypeDecimal128 || b.Type == bson.TypeDecimal128:
		return DecimalValue(decimalArith(toDecimal(a), toDecimal(b), mul)), true
	case a.Type == bson.TypeDouble || b.Type == bson.TypeDouble:
		x, y := toFloat(a), toFloat(b)
		if mul {
			return DoubleValue(x * y), true
		}
		return DoubleValue(x + y), true
	case a.Type == bson.TypeInt32 && b.Type == bson.TypeInt32:
		x, y := int64(a.Int32()), int64(b.Int32())
		r := x + y
		if mul {
			r = x * y
		}
		if r >= math.MinInt32 && r <= math.MaxInt32 {
			return Int32Value(int32(r)), true
		}
		return Int64Value(r), true
	}
	x, y := intValue(a), intValue(b)
	var r int64
	var overflow bool
	if mul {
		r, overflow = mulInt64(x, y)
	} else {
		r = x + y
		overflow = (x >= 0) == (y >= 0) && (r >= 0) != (x >= 0)
	}
	if overflow {
		return bson.RawValue{}, false
	}
	return Int64Value(r), true
}

func mulInt64(x, y int64) (int64, bool) {
	if x == 0 || y == 0 {
		return 0, false
	}
	r := x * y
	if r/y != x || (x == -1 && y == math.MinInt64) || (y == -1 && x == math.MinInt64) {
		return 0, true
	}
	return r, false
}

// Int32Value builds an int32 RawValue.
func Int32Value(i int32) bson.RawValue {
	return bson.RawValue{Type: bson.TypeInt32, Value: bsoncore.AppendInt32(nil, i)}
}

// Int64Value builds an int64 RawValue.
func Int64Value(i int64) bson.RawValue {
	return bson.RawValue{Type: bson.TypeInt64, Value: bsoncore.AppendInt64(nil, i)}
}

// DoubleValue builds a double RawValue.
func DoubleValue(f float64) bson.RawValue {
	return bson.RawValue{Type: bson.TypeDouble, Value: bsoncore.AppendDouble(nil, f)}
}

// DecimalValue builds a decimal128 RawValue.
func DecimalValue(d bson.Decimal128) bson.RawValue {
	h, l := d.GetBytes()
	return bson.RawValue{Type: bson.TypeDecimal128, Value: bsoncore.AppendDecimal128(nil, h, l)}
}

func toFloat(v bson.RawValue) float64 {
	switch v.Type {
	case bson.TypeDouble:
		return v.Double()
	case bson.TypeInt32:
		return float64(v.Int32())
	}
	return float64(v.Int64())
}

// DecimalFromFloat converts a double as MongoDB's Decimal128(double) does:
// to 15 significant digits (kRoundTo15Digits), except that zero, NaN and
// the infinities convert as they are (0.0 is 0, not 0E-14).
func DecimalFromFloat(f float64) bson.Decimal128 {
	switch {
	case math.IsNaN(f):
		return decimalNaN
	case math.IsInf(f, 0):
		return decimalInf(int(math.Copysign(1, f)))
	case f == 0:
		if math.Signbit(f) {
			return bson.NewDecimal128(0xB040000000000000, 0)
		}
		return bson.NewDecimal128(0x3040000000000000, 0)
	}
	d, err := bson.ParseDecimal128(strconv.FormatFloat(f, 'e', 14, 64))
	if err != nil {
		return decimalNaN
	}
	return d
}

// decimal is a decimal128 operand: a finite value coef×10^exp, or a special
// value (NaN, ±Inf) with coef nil. neg is its sign bit, which only it
// carries for a zero (-0) and NaN: IEEE 754 arithmetic, as Intel's library
// computes it for MongoDB, gives a zero result a sign and passes a NaN
// operand's sign on.
type decimal struct {
	coef *big.Int
	exp  int
	nan  bool
	inf  int
	neg  bool
}

// isZero reports whether d is a (signed) zero.
func (d decimal) isZero() bool { return d.coef != nil && d.coef.Sign() == 0 }

// DecimalSignbit reports whether d's sign bit is set: a negative number,
// -0, -Infinity or a NaN of negative sign.
func DecimalSignbit(d bson.Decimal128) bool {
	h, _ := d.GetBytes()
	return h>>63 == 1
}

// DecimalWithSign is d with its sign bit set to neg.
func DecimalWithSign(d bson.Decimal128, neg bool) bson.Decimal128 {
	h, l := d.GetBytes()
	if neg {
		h |= 1 << 63
	} else {
		h &^= 1 << 63
	}
	return bson.NewDecimal128(h, l)
}

// nanOf is the quiet NaN an operation passes on from its NaN operand d.
func nanOf(d decimal) bson.Decimal128 { return DecimalWithSign(decimalNaN, d.neg) }

// zeroSigned is r, a result of coef×10^exp, with the sign neg when coef
// is exactly zero (a nonzero coefficient carries its own sign).
func zeroSigned(r bson.Decimal128, coef *big.Int, neg bool) bson.Decimal128 {
	if coef.Sign() == 0 && neg {
		return DecimalWithSign(r, true)
	}
	return r
}

// toDecimal converts a number to decimal as MongoDB does (doubles as
// DecimalFromFloat converts them).
func toDecimal(v bson.RawValue) decimal {
	switch v.Type {
	case bson.TypeDecimal128:
		d := v.Decimal128()
		neg := DecimalSignbit(d)
		if d.IsNaN() {
			return decimal{nan: true, neg: neg}
		}
		if s := d.IsInf(); s != 0 {
			return decimal{inf: s, neg: neg}
		}
		c, e, err := d.BigInt()
		if err != nil {
			return decimal{nan: true}
		}
		return decimal{coef: c, exp: e, neg: neg}
	case bson.TypeDouble:
		return toDecimal(DecimalValue(DecimalFromFloat(v.Double())))
	}
	n := intValue(v)
	return decimal{coef: big.NewInt(n), neg: n < 0}
}

// decimalArith is x+y, or x*y when mul is set. A zero product is negative
// when one operand is; an exact zero sum only when both are (rounding half
// to even).
func decimalArith(x, y decimal, mul bool) bson.Decimal128 {
	switch {
	case x.nan:
		return nanOf(x)
	case y.nan:
		return nanOf(y)
	}
	if mul {
		neg := x.neg != y.neg
		if x.inf != 0 || y.inf != 0 {
			if x.isZero() || y.isZero() {
				return decimalNaN
			}
			return decimalInf(signOf(neg))
		}
		p := new(big.Int).Mul(x.coef, y.coef)
		return zeroSigned(roundDecimal(p, x.exp+y.exp), p, neg)
	}
	switch {
	case x.inf != 0 && y.inf != 0 && x.inf != y.inf:
		return decimalNaN
	case x.inf != 0:
		return decimalInf(x.inf)
	case y.inf != 0:
		return decimalInf(y.inf)
	}
	e := min(x.exp, y.exp)
	sum := new(big.Int).Add(scale(x.coef, x.exp-e), scale(y.coef, y.exp-e))
	return zeroSigned(roundDecimal(sum, e), sum, x.neg && y.neg)
}

var (
	decimalNaN = bson.NewDecimal128(0x7C00000000000000, 0)
	bigTen     = big.NewInt(10)
	maxCoef    = new(big.Int).Sub(new(big.Int).Exp(bigTen, big.NewInt(34), nil), big.NewInt(1))
)

func decimalInf(sign int) bson.Decimal128 {
	if sign < 0 {
		return bson.NewDecimal128(0xF800000000000000, 0)
	}
	return bson.NewDecimal128(0x7800000000000000, 0)
}

func scale(c *big.Int, digits int) *big.Int {
	if digits == 0 {
		return c
	}
	return new(big.Int).Mul(c, new(big.Int).Exp(bigTen, big.NewInt(int64(digits)), nil))
}

// roundDecimal fits coef×10^exp into decimal128: 34 significant digits
// rounded half to even, exponents in [-6176, 6111], ±Inf beyond the range.
// A nonzero coefficient that rounds to zero keeps its sign.
func roundDecimal(coef *big.Int, exp int) bson.Decimal128 {
	c := coef
	drop := len(new(big.Int).Abs(c).String()) - 34
	if c.Sign() != 0 && exp+drop < bson.MinDecimal128Exp {
		drop = bson.MinDecimal128Exp - exp
	}
	if drop > 0 {
		c = divRoundEven(c, drop)
		exp += drop
	}
	if c.Sign() == 0 {
		exp = max(min(exp, bson.MaxDecimal128Exp), bson.MinDecimal128Exp)
	}
	for exp > bson.MaxDecimal128Exp {
		// Clamp by padding the coefficient with zeros while it fits.
		next := new(big.Int).Mul(c, bigTen)
		if new(big.Int).Abs(next).Cmp(maxCoef) > 0 {
			return decimalInf(c.Sign())
		}
		c = next
		exp--
	}
	d, ok := bson.ParseDecimal128FromBigInt(c, exp)
	if !ok {
		return decimalNaN
	}
	return zeroSigned(d, c, coef.Sign() < 0)
}

// divRoundEven divides c by 10^digits, rounding half to even.
func divRoundEven(c *big.Int, digits int) *big.Int {
	div := new(big.Int).Exp(bigTen, big.NewInt(int64(digits)), nil)
	q, r := new(big.Int).QuoRem(c, div, new(big.Int))
	twice := new(big.Int).Abs(r)
	twice.Lsh(twice, 1)
	if c := twice.Cmp(div); c > 0 || (c == 0 && q.Bit(0) == 1) {
		if r.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q
}
