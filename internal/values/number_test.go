package values

import (
	"math"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestNumber checks the type boundaries of BSONObjBuilder::appendNumber.
func TestNumber(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want bson.Type
	}{
		{0, bson.TypeInt32},
		{1<<30 - 1, bson.TypeInt32},
		{-(1<<30 - 1), bson.TypeInt32},
		{1 << 30, bson.TypeDouble},
		{-(1 << 30), bson.TypeDouble},
		{1<<40 - 1, bson.TypeDouble},
		{1 << 40, bson.TypeInt64},
		{-(1 << 40), bson.TypeInt64},
	} {
		v := Number(tc.n)
		if v.Type != tc.want {
			t.Errorf("Number(%d) is %s, want %s", tc.n, v.Type, tc.want)
			continue
		}
		if f, _ := Float64(v); f != float64(tc.n) {
			t.Errorf("Number(%d) = %v", tc.n, f)
		}
	}
}

// TestIntegerReason checks parseIntegerElementToLong's results: the
// number, or the reason MongoDB gives.
func TestIntegerReason(t *testing.T) {
	dec := func(s string) bson.RawValue { d, _ := bson.ParseDecimal128(s); return DecimalValue(d) }
	for _, tc := range []struct {
		v      bson.RawValue
		n      int64
		reason string
	}{
		{Int32Value(-3), -3, ""},
		{Int64Value(9223372036854775807), 9223372036854775807, ""},
		{DoubleValue(2), 2, ""},
		{DoubleValue(-9223372036854775808.0), -9223372036854775808, ""},
		{DoubleValue(9223372036854775808.0), 0, "Cannot represent as a 64-bit integer"},
		{DoubleValue(2.5), 0, "Expected an integer"},
		{DoubleValue(math.NaN()), 0, "Expected an integer, but found NaN in"},
		{DoubleValue(math.Inf(1)), 0, "Cannot represent as a 64-bit integer"},
		{dec("9223372036854775807"), 9223372036854775807, ""},
		{dec("-9223372036854775808"), -9223372036854775808, ""},
		{dec("9223372036854775808"), 0, "Cannot represent as a 64-bit integer"},
		{dec("2.000"), 2, ""},
		{dec("12E+2"), 1200, ""},
		{dec("-0"), 0, ""},
		{dec("1E+19"), 0, "Cannot represent as a 64-bit integer"},
		{dec("2.5"), 0, "Cannot represent as a 64-bit integer"},
		{dec("2.0000000000000000000000000001"), 0, "Cannot represent as a 64-bit integer"},
		{dec("NaN"), 0, "Cannot represent as a 64-bit integer"},
		{dec("-Infinity"), 0, "Cannot represent as a 64-bit integer"},
		{bson.RawValue{Type: bson.TypeString, Value: []byte{2, 0, 0, 0, '1', 0}}, 0, "Expected a number in"},
	} {
		n, reason := IntegerReason(tc.v)
		if n != tc.n || reason != tc.reason {
			t.Errorf("IntegerReason(%s) = %d, %q; want %d, %q", tc.v, n, reason, tc.n, tc.reason)
		}
	}
}
