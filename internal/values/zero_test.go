package values

import (
	"math"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func TestIsZero(t *testing.T) {
	tests := []struct {
		v    bson.RawValue
		zero bool
	}{
		{Int32Value(0), true},
		{Int32Value(1), false},
		{Int64Value(0), true},
		{Int64Value(-1), false},
		{DoubleValue(0), true},
		{DoubleValue(math.Copysign(0, -1)), true},
		{DoubleValue(1e-300), false},
		{DoubleValue(math.NaN()), false},
		{dec("0"), true},
		{dec("0.00"), true},
		{dec("-0"), true},
		{dec("-0.000"), true},
		{dec("0E+3"), true},
		{dec("0E-6176"), true},
		{dec("0E+6111"), true},
		{dec("1E-6176"), false},
		{dec("0.01"), false},
		{dec("-1"), false},
		{dec("9999999999999999999999999999999999"), false},
		{dec("NaN"), false},
		{dec("Infinity"), false},
		{dec("-Infinity"), false},
		// A coefficient above 10^34 in the large form is non-canonical: zero.
		{DecimalValue(bson.NewDecimal128(3<<61|1, 0)), true},
		{bson.RawValue{Type: bson.TypeString, Value: []byte{1, 0, 0, 0, 0}}, false},
		{bson.RawValue{}, false},
	}
	for _, tt := range tests {
		if got := IsZero(tt.v); got != tt.zero {
			t.Errorf("IsZero(%v) = %v, want %v", tt.v, got, tt.zero)
		}
	}
}
