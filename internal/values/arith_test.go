package values

import (
	"math"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func dec(s string) bson.RawValue {
	d, err := bson.ParseDecimal128(s)
	if err != nil {
		panic(err)
	}
	return DecimalValue(d)
}

func TestArith(t *testing.T) {
	i32, i64, f := Int32Value, Int64Value, DoubleValue
	tests := []struct {
		name string
		mul  bool
		a, b bson.RawValue
		want bson.RawValue
		ok   bool
	}{
		{"int32", false, i32(1), i32(2), i32(3), true},
		{"int32 overflow widens", false, i32(math.MaxInt32), i32(1), i64(math.MaxInt32 + 1), true},
		{"int32 negative overflow", false, i32(math.MinInt32), i32(-1), i64(math.MinInt32 - 1), true},
		{"int32 int64", false, i32(1), i64(2), i64(3), true},
		{"int64 overflow fails", false, i64(math.MaxInt64), i32(1), bson.RawValue{}, false},
		{"int64 negative overflow fails", false, i64(math.MinInt64), i64(-1), bson.RawValue{}, false},
		{"double", false, i32(1), f(0.5), f(1.5), true},
		{"decimal", false, dec("1.1"), i32(1), dec("2.1"), true},
		{"decimal from double", false, f(0.1), dec("0"), dec("0.100000000000000"), true},
		{"decimal inf", false, dec("Infinity"), dec("1"), dec("Infinity"), true},
		{"decimal inf minus inf", false, dec("Infinity"), dec("-Infinity"), dec("NaN"), true},
		{"decimal rounding", false, dec("9999999999999999999999999999999999"), dec("1"), dec("1.000000000000000000000000000000000E+34"), true},
		{"mul int32", true, i32(6), i32(7), i32(42), true},
		{"mul int32 widens", true, i32(65536), i32(65536), i64(1 << 32), true},
		{"mul int64 overflow fails", true, i64(1 << 62), i32(2), bson.RawValue{}, false},
		{"mul min int64 by -1 fails", true, i64(math.MinInt64), i64(-1), bson.RawValue{}, false},
		{"mul zero", true, i32(0), i64(5), i64(0), true},
		{"mul double", true, f(2.5), i32(2), f(5), true},
		{"mul decimal", true, dec("1.5"), dec("2"), dec("3.0"), true},
		{"mul decimal inf zero", true, dec("Infinity"), i32(0), dec("NaN"), true},
		{"mul decimal round half even", true, dec("1.000000000000000000000000000000001"), dec("0.5"), dec("0.5000000000000000000000000000000005"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op := Add
			if tt.mul {
				op = Multiply
			}
			got, ok := op(tt.a, tt.b)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if ok && !got.Equal(tt.want) {
				t.Fatalf("got %v (%v), want %v (%v)", got, got.Type, tt.want, tt.want.Type)
			}
		})
	}
}
