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

// TestTruthy checks MongoDB's boolean coercion: only missing, null,
// undefined, false and numeric zeros are false.
func TestTruthy(t *testing.T) {
	str := func(s string) bson.RawValue {
		b := append([]byte{byte(len(s) + 1), 0, 0, 0}, s...)
		return bson.RawValue{Type: bson.TypeString, Value: append(b, 0)}
	}
	tests := []struct {
		v    bson.RawValue
		want bool
	}{
		{bson.RawValue{}, false},
		{bson.RawValue{Type: bson.TypeNull}, false},
		{bson.RawValue{Type: bson.TypeUndefined}, false},
		{bson.RawValue{Type: bson.TypeBoolean, Value: []byte{0}}, false},
		{bson.RawValue{Type: bson.TypeBoolean, Value: []byte{1}}, true},
		{Int32Value(0), false},
		{Int64Value(0), false},
		{DoubleValue(math.Copysign(0, -1)), false},
		{dec("0E+3"), false},
		{DoubleValue(math.NaN()), true},
		{Int32Value(-1), true},
		{dec("0.01"), true},
		{str(""), true},
		{bson.RawValue{Type: bson.TypeArray, Value: []byte{5, 0, 0, 0, 0}}, true},
	}
	for _, tc := range tests {
		if got := Truthy(tc.v); got != tc.want {
			t.Errorf("Truthy(%v) = %v, want %v", tc.v, got, tc.want)
		}
	}
}
