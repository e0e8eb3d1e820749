package values

import (
	"math"
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
// infinities and out-of-range values report ok false.
func Int64(v bson.RawValue) (i int64, ok bool) {
	switch v.Type {
	case bson.TypeInt32:
		return int64(v.Int32()), true
	case bson.TypeInt64:
		return v.Int64(), true
	case bson.TypeDouble, bson.TypeDecimal128:
		f, _ := Float64(v)
		if f != math.Trunc(f) || f >= 9223372036854775808.0 || f < -9223372036854775808.0 {
			return 0, false
		}
		return int64(f), true
	}
	return 0, false
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
