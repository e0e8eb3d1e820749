package expr

import (
	"github.com/folio-db/folio/internal/mongoerr"
	"math"
	"math/big"
	"strconv"

	"github.com/folio-db/folio/internal/values"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// Numeric helpers shared by the arithmetic, accumulator and conversion
// operators. MongoDB's result type is the widest operand type in the order
// int < long < double < decimal.

// widest returns the widest numeric type of a and b.
func widest(a, b bson.Type) bson.Type {
	rank := func(t bson.Type) int {
		switch t {
		case bson.TypeInt32:
			return 0
		case bson.TypeInt64:
			return 1
		case bson.TypeDouble:
			return 2
		}
		return 3
	}
	if rank(a) >= rank(b) {
		return a
	}
	return b
}

// toFloat converts a number to float64.
func toFloat(v bson.RawValue) float64 {
	f, _ := values.Float64(v)
	return f
}

// toInt converts an int32 or int64 to int64.
func toInt(v bson.RawValue) int64 {
	if v.Type == bson.TypeInt32 {
		return int64(v.Int32())
	}
	return v.Int64()
}

// bigPrec is the working precision of decimal arithmetic, well beyond
// decimal128's 34 digits.
const bigPrec = 256

// toBig converts a finite number to a big.Float; ok is false for NaN and
// infinities.
func toBig(v bson.RawValue) (*big.Float, bool) {
	f := new(big.Float).SetPrec(bigPrec)
	switch v.Type {
	case bson.TypeInt32, bson.TypeInt64:
		return f.SetInt64(toInt(v)), true
	case bson.TypeDouble:
		d := v.Double()
		if math.IsNaN(d) || math.IsInf(d, 0) {
			return nil, false
		}
		// Doubles become decimals through their 15-digit decimal form, as
		// MongoDB's Decimal128(double) does.
		_, ok := f.SetString(strconv.FormatFloat(d, 'e', 14, 64))
		return f, ok
	case bson.TypeDecimal128:
		d := v.Decimal128()
		if d.IsNaN() || d.IsInf() != 0 {
			return nil, false
		}
		_, ok := f.SetString(d.String())
		return f, ok
	}
	return nil, false
}

// decimalString parses a decimal128 literal (which must be valid).
func decimalString(s string) bson.RawValue {
	d, err := bson.ParseDecimal128(s)
	if err != nil {
		d, _ = bson.ParseDecimal128("NaN")
	}
	return values.DecimalValue(d)
}

// decimalFromFloat converts a double to a decimal128 as MongoDB does.
func decimalFromFloat(f float64) bson.RawValue {
	return values.DecimalValue(values.DecimalFromFloat(f))
}

// toDecimalValue converts any number to a decimal128 value.
func toDecimalValue(v bson.RawValue) bson.RawValue {
	switch v.Type {
	case bson.TypeDecimal128:
		return v
	case bson.TypeDouble:
		return decimalFromFloat(v.Double())
	}
	return decimalString(strconv.FormatInt(toInt(v), 10))
}

// numSign is the sign of a number (0 for zero and NaN).
func numSign(v bson.RawValue) int {
	switch v.Type {
	case bson.TypeInt32, bson.TypeInt64:
		return sign(int(max(min(toInt(v), 1), -1)))
	case bson.TypeDecimal128:
		d := v.Decimal128()
		if d.IsNaN() {
			return 0
		}
		if s := d.IsInf(); s != 0 {
			return s
		}
		c, _, _ := d.BigInt()
		return c.Sign()
	}
	f := v.Double()
	switch {
	case f > 0:
		return 1
	case f < 0:
		return -1
	}
	return 0
}

// addNumbers is a+b for two numbers: int32 overflow widens to int64, int64
// overflow falls back to double (MongoDB's $add and $sum).
func addNumbers(a, b bson.RawValue) bson.RawValue {
	if r, ok := values.Add(a, b); ok {
		return r
	}
	return values.DoubleValue(toFloat(a) + toFloat(b))
}

// mulNumbers is a*b with the same promotion as addNumbers.
func mulNumbers(a, b bson.RawValue) bson.RawValue {
	if r, ok := values.Multiply(a, b); ok {
		return r
	}
	return values.DoubleValue(toFloat(a) * toFloat(b))
}

// negate returns -v: -int32min widens to int64, -int64min becomes a double.
func negate(v bson.RawValue) bson.RawValue {
	switch v.Type {
	case bson.TypeInt32:
		return intValue(-int64(v.Int32()))
	case bson.TypeInt64:
		if v.Int64() == math.MinInt64 {
			return values.DoubleValue(-float64(v.Int64()))
		}
		return values.Int64Value(-v.Int64())
	case bson.TypeDouble:
		return values.DoubleValue(-v.Double())
	}
	d := v.Decimal128()
	return values.DecimalValue(values.DecimalWithSign(d, !values.DecimalSignbit(d)))
}

// SubtractNumbers is a-b for numbers, as $subtract gives it: under the
// promotion rules of addNumbers, a long that overflows becoming a double.
// Doubles and decimals subtract b converted to the result's type, so that
// -0 - 0 is -0 (a NaN b passes on its own sign).
func SubtractNumbers(a, b bson.RawValue) bson.RawValue {
	switch widest(a.Type, b.Type) {
	case bson.TypeDecimal128:
		if values.IsNaN(b) {
			return addNumbers(toDecimalValue(a), toDecimalValue(b))
		}
		return addNumbers(toDecimalValue(a), negate(toDecimalValue(b)))
	case bson.TypeDouble:
		return values.DoubleValue(toFloat(a) - toFloat(b))
	}
	x, y := toInt(a), toInt(b)
	if a.Type == bson.TypeInt32 && b.Type == bson.TypeInt32 {
		return intValue(x - y)
	}
	r := x - y
	if (x >= 0) != (y >= 0) && (r >= 0) != (x >= 0) {
		return values.DoubleValue(float64(x) - float64(y))
	}
	return values.Int64Value(r)
}

// longOf converts a number to an integer as MongoDB's conversions to long
// do: doubles truncate toward zero and decimals round half to even. A value
// with no 64-bit integer (NaN, an infinity, or out of range) is not ok;
// it is then 0 for NaN, else the nearest bound.
func longOf(v bson.RawValue) (n int64, ok bool) {
	switch v.Type {
	case bson.TypeInt32, bson.TypeInt64:
		return toInt(v), true
	case bson.TypeDouble:
		f := v.Double()
		switch {
		case f != f:
			return 0, false
		case f >= 9.223372036854775808e18:
			return math.MaxInt64, false
		case f < -9.223372036854775808e18:
			return math.MinInt64, false
		}
		return int64(f), true
	}
	d := v.Decimal128()
	c, e, err := d.BigInt()
	switch {
	case d.IsNaN():
		return 0, false
	case err != nil: // an infinity
		if d.IsInf() > 0 {
			return math.MaxInt64, false
		}
		return math.MinInt64, false
	case e > 0:
		c = new(big.Int).Mul(c, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(e)), nil))
	default:
		c, _ = roundDigits(c, e, 0, halfEven)
	}
	switch {
	case c.IsInt64():
		return c.Int64(), true
	case c.Sign() > 0:
		return math.MaxInt64, false
	}
	return math.MinInt64, false
}

// coerceToLong converts a number to an integer as MongoDB's
// Value::coerceToLong does (see longOf): a double with no 64-bit integer
// fails (31109); a decimal's range is not checked (MongoDB checks the
// bits of its storage as a double), and one with no 64-bit integer
// becomes math.MinInt64, as Decimal128::toLong gives it (NumberLong); any
// other type fails (16004).
func coerceToLong(v bson.RawValue) (int64, error) {
	if !isNumber(v) {
		return 0, mongoerr.New(mongoerr.LongConversionInvalidType, "can't convert from BSON type %s to long", typeName(v))
	}
	if _, ok := longOf(v); !ok && v.Type == bson.TypeDouble {
		return 0, mongoerr.New(mongoerr.CoerceLongOutOfRange, "Can't coerce out of range value %s to long", values.StreamDouble(v.Double()))
	}
	return NumberLong(v), nil
}

// NumberLong converts a number to an integer as MongoDB's
// BSONElement::numberLong does (see longOf): a double truncated toward
// zero (its caller has checked that it has a 64-bit integer), a decimal
// rounded half to even by Decimal128::toLong, which gives math.MinInt64
// (the library's "integer indefinite") to a decimal with no 64-bit
// integer: NaN, an infinity, or out of range after rounding.
func NumberLong(v bson.RawValue) int64 {
	n, ok := longOf(v)
	if !ok && v.Type == bson.TypeDecimal128 {
		return math.MinInt64
	}
	return n
}

// SafeLong converts a number to an integer as MongoDB's
// BSONElement::safeNumberLong does (see longOf): NaN is 0, and a value out
// of range is the nearest bound.
func SafeLong(v bson.RawValue) int64 {
	n, _ := longOf(v)
	return n
}

// roundMode selects how roundDigits discards digits.
type roundMode int

const (
	halfEven roundMode = iota
	truncate
	ceiling
	flooring
)

// roundDigits rounds the decimal coef×10^exp to a multiple of 10^(-place).
func roundDigits(coef *big.Int, exp, place int, mode roundMode) (*big.Int, int) {
	drop := -place - exp
	if drop <= 0 {
		return coef, exp
	}
	div := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(drop)), nil)
	q, r := new(big.Int).QuoRem(coef, div, new(big.Int))
	up := false
	switch mode {
	case halfEven:
		twice := new(big.Int).Lsh(new(big.Int).Abs(r), 1)
		c := twice.Cmp(div)
		up = c > 0 || (c == 0 && q.Bit(0) == 1)
	case ceiling:
		up = r.Sign() > 0
	case flooring:
		up = r.Sign() < 0
	}
	if up {
		if coef.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q, -place
}

// roundNumber rounds v (any number) to place decimal places with mode,
// keeping its type: integers round to multiples of 10^-place when place is
// negative (missing when the result is beyond 64 bits); doubles round
// through their exact value to 34 digits, as MongoDB converts them
// (kRoundTo34Digits: 1.255 is 1.25499…, so 2 places make 1.25, and 0.29
// truncated to 2 places is 0.28); decimals as MongoDB quantizes them to
// the exponent -place: zeros padded (1.1 to 2 places is 1.10), the sign of
// a zero kept. NaN is returned unchanged. An infinity is returned as it
// was, and a decimal whose result needs more than 34 digits as its value
// with 34 digits, when roundOrTrunc is set (MongoDB's $round and $trunc),
// else as NaN ($ceil and $floor, whose quantize fails).
func roundNumber(v bson.RawValue, place int, mode roundMode, roundOrTrunc bool) bson.RawValue {
	switch v.Type {
	case bson.TypeInt32, bson.TypeInt64:
		if place >= 0 {
			return v
		}
		c, e := roundDigits(big.NewInt(toInt(v)), 0, place, mode)
		r := new(big.Int).Mul(c, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(e)), nil))
		if !r.IsInt64() {
			return missing // beyond 64 bits: the caller's error
		}
		if n := r.Int64(); v.Type == bson.TypeInt32 && n <= math.MaxInt32 {
			// MongoDB's evaluateRoundOrTrunc makes a long only of an int
			// result above the int range; one below it is cast back to an
			// int (static_cast<int>), wrapping: $round [-2147483648, -1]
			// is 2147483646.
			return values.Int32Value(int32(n))
		}
		return values.Int64Value(r.Int64())
	case bson.TypeDouble:
		f := v.Double()
		if math.IsNaN(f) || math.IsInf(f, 0) || f == 0 {
			return v
		}
		c, e, _ := values.DecimalFromFloatExact(f).BigInt()
		c, e = roundDigits(c, e, place, mode)
		r, _ := strconv.ParseFloat(c.String()+"e"+strconv.Itoa(e), 64)
		if r == 0 && f < 0 {
			r = math.Copysign(0, -1)
		}
		return values.DoubleValue(r)
	}
	d := v.Decimal128()
	c, e, err := d.BigInt()
	if err != nil {
		if d.IsInf() != 0 && !roundOrTrunc {
			return decimalString("NaN") // quantizing an infinity
		}
		return v // NaN or an infinity
	}
	negative := values.DecimalSignbit(d)
	c0, e0 := c, e
	c, e, ok := quantize(c, e, place, mode)
	if !ok && roundOrTrunc {
		// MongoDB's Decimal128::quantize: a result beyond 34 digits is the
		// value normalized, its coefficient padded to 34 digits
		c, e = normalizeDecimal(c0, e0)
		ok = true
	}
	if !ok {
		return decimalString("NaN")
	}
	r, ok := bson.ParseDecimal128FromBigInt(c, e)
	if !ok {
		return decimalString("NaN")
	}
	if c.Sign() == 0 && negative {
		r = values.DecimalWithSign(r, true)
	}
	return values.DecimalValue(r)
}

// normalizeDecimal is c×10^e (c not zero) with its coefficient padded
// with zeros to 34 digits, as MongoDB's Decimal128::normalize makes it;
// roundNumber calls it only for exponents far above the least (-6176).
func normalizeDecimal(c *big.Int, e int) (*big.Int, int) {
	pad := 34 - len(new(big.Int).Abs(c).String())
	return new(big.Int).Mul(c, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(pad)), nil)), e - pad
}

// quantize is c×10^e with exponent -place: rounded with mode when digits
// are dropped, padded with zeros otherwise; not ok when the coefficient
// would need more than 34 digits.
func quantize(c *big.Int, e, place int, mode roundMode) (*big.Int, int, bool) {
	c, e = roundDigits(c, e, place, mode)
	if e > -place {
		c = new(big.Int).Mul(c, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(e+place)), nil))
		e = -place
	}
	return c, e, len(new(big.Int).Abs(c).String()) <= 34
}
