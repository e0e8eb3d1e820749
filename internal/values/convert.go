package values

import (
	"math"
	"math/big"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Float64 converts a numeric value of any of the four numeric types to a
// float64 (decimals are rounded to the nearest double, NaN and infinities
// preserved). ok is false for non-numeric values.
func Float64(v bson.RawValue) (f float64, ok bool) {
	switch v.Type {
	case bson.TypeDouble:
		return v.Double(), true
	case bson.TypeInt32:
		return float64(v.Int32()), true
	case bson.TypeInt64:
		return float64(v.Int64()), true
	case bson.TypeDecimal128:
		f, err := strconv.ParseFloat(v.Decimal128().String(), 64)
		if err != nil && !math.IsInf(f, 0) {
			return math.NaN(), true
		}
		return f, true
	}
	return 0, false
}

// Int64 converts a numeric value to an int64 when it holds an integer that
// an int64 represents exactly; doubles and decimals with a fraction, NaN,
// infinities and out-of-range values report ok false. A decimal converts
// without rounding, as Decimal128::toLongExact.
func Int64(v bson.RawValue) (i int64, ok bool) { return int64Of(v, false) }

// TruncInt64 converts a numeric value to an int64 after truncating it toward
// zero, as MongoDB's representAs<long long>(trunc(x)) does for doubles and
// Decimal128::round(kRoundTowardZero) for decimals: ok is false for NaN,
// infinities, values whose truncation is outside the int64 range and
// non-numeric values. A decimal is truncated exactly, not through a double.
func TruncInt64(v bson.RawValue) (int64, bool) { return int64Of(v, true) }

// int64Of is Int64, or with trunc TruncInt64.
func int64Of(v bson.RawValue, trunc bool) (int64, bool) {
	switch v.Type {
	case bson.TypeInt32:
		return int64(v.Int32()), true
	case bson.TypeInt64:
		return v.Int64(), true
	case bson.TypeDouble:
		f := v.Double()
		if trunc {
			f = math.Trunc(f)
		}
		// NaN is unequal to itself, so it fails the first test.
		if f != math.Trunc(f) || f >= 9223372036854775808.0 || f < -9223372036854775808.0 {
			return 0, false
		}
		return int64(f), true
	case bson.TypeDecimal128:
		return decimalInt64(v.Decimal128(), trunc)
	}
	return 0, false
}

// decimalInt64 converts d to an int64 if its value is a whole number in
// range (with trunc, after truncating its fraction toward zero); NaN and
// the infinities are not.
func decimalInt64(d bson.Decimal128, trunc bool) (int64, bool) {
	c, exp, err := d.BigInt()
	switch {
	case err != nil:
		return 0, false
	case c.Sign() == 0:
		return 0, true
	case exp > 18: // a non-zero coefficient times 10^19 is out of range
		return 0, false
	case exp > 0:
		c.Mul(c, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(exp)), nil))
	case exp < 0:
		var rem big.Int
		c.QuoRem(c, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-exp)), nil), &rem)
		if rem.Sign() != 0 && !trunc {
			return 0, false
		}
	}
	if !c.IsInt64() {
		return 0, false
	}
	return c.Int64(), true
}

// IntegerReason reads v as MongoDB reads an integer argument
// (parseIntegerElementToLong): a number whose value is a whole number an
// int64 holds. Otherwise it gives MongoDB's reason, which its messages
// follow with the element: a non-number, a double NaN, a double out of
// range, a double with a fraction, or a decimal that does not convert
// exactly (NaN and fractions included).
func IntegerReason(v bson.RawValue) (int64, string) {
	if !IsNumber(v.Type) {
		return 0, "Expected a number in"
	}
	n, ok := Int64(v)
	if ok {
		return n, ""
	}
	if v.Type == bson.TypeDouble {
		f := v.Double()
		switch {
		case math.IsNaN(f):
			return 0, "Expected an integer, but found NaN in"
		case f >= 9223372036854775808.0 || f < -9223372036854775808.0:
		default:
			return 0, "Expected an integer"
		}
	}
	return 0, "Cannot represent as a 64-bit integer"
}

// IsNaN reports whether v is a double or decimal NaN.
func IsNaN(v bson.RawValue) bool {
	switch v.Type {
	case bson.TypeDouble:
		return math.IsNaN(v.Double())
	case bson.TypeDecimal128:
		return v.Decimal128().IsNaN()
	}
	return false
}
