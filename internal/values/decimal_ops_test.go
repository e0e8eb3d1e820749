package values

import (
	"math"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestDecimalOps checks IEEE 754-2008 results: exact results at the
// exponent closest to the ideal one, inexact ones with 34 digits rounded
// half to even (the digits of √2 and 2/3 are known independently).
func TestDecimalOps(t *testing.T) {
	dec := func(s string) bson.RawValue {
		d, err := bson.ParseDecimal128(s)
		if err != nil {
			t.Fatal(err)
		}
		return DecimalValue(d)
	}
	for _, tc := range []struct {
		op   string
		a, b bson.RawValue
		want string
	}{
		{"quo", dec("3"), dec("2"), "1.5"},
		{"quo", dec("10"), dec("2"), "5"},
		{"quo", dec("1"), dec("4"), "0.25"},
		{"quo", dec("100"), dec("1"), "100"},
		{"quo", dec("1.00"), dec("2"), "0.50"},
		{"quo", dec("6E+3"), dec("2"), "3E+3"},
		{"quo", dec("1"), dec("3"), "0.3333333333333333333333333333333333"},
		{"quo", dec("2"), dec("3"), "0.6666666666666666666666666666666667"},
		{"quo", dec("-2"), dec("3"), "-0.6666666666666666666666666666666667"},
		{"quo", dec("300"), Int64Value(3), "100"},
		{"quo", dec("1"), DoubleValue(0.5), "2"},
		{"quo", dec("0"), dec("5"), "0"},
		{"quo", dec("1"), dec("0"), "Infinity"},
		{"quo", dec("0"), dec("0"), "NaN"},
		{"rem", dec("7.5"), Int32Value(2), "1.5"},
		{"rem", dec("-7"), dec("2"), "-1"},
		{"rem", dec("10"), dec("3.0"), "1.0"},
		{"rem", dec("1"), dec("0"), "NaN"},
		{"sqrt", dec("2.25"), bson.RawValue{}, "1.5"},
		{"sqrt", dec("4"), bson.RawValue{}, "2"},
		{"sqrt", dec("100"), bson.RawValue{}, "10"},
		{"sqrt", dec("0.04"), bson.RawValue{}, "0.2"},
		{"sqrt", dec("2"), bson.RawValue{}, "1.414213562373095048801688724209698"},
		{"sqrt", dec("-1"), bson.RawValue{}, "NaN"},
	} {
		var got bson.RawValue
		switch tc.op {
		case "quo":
			got = DecimalQuo(tc.a, tc.b)
		case "rem":
			got = DecimalRem(tc.a, tc.b)
		case "sqrt":
			got = DecimalSqrt(tc.a)
		}
		if s := got.Decimal128().String(); s != tc.want {
			t.Errorf("%s(%s, %s) = %s, want %s", tc.op, tc.a, tc.b, s, tc.want)
		}
	}
	if s := DecimalFromFloat(0).String(); s != "0" {
		t.Errorf("Decimal128(0.0) = %s, want 0", s)
	}
	if s := DecimalFromFloat(2.5).String(); s != "2.50000000000000" {
		t.Errorf("Decimal128(2.5) = %s, want 2.50000000000000", s)
	}
}

// TestDecimalNaNSign checks that a NaN operand's sign passes to the result,
// the first operand's when both are NaN, as Intel's library gives it (the
// driver's extended JSON reads "-NaN" as NaN, so the corpora cannot say it).
func TestDecimalNaNSign(t *testing.T) {
	nan, negNaN := DecimalValue(decimalNaN), DecimalValue(DecimalWithSign(decimalNaN, true))
	add := func(a, b bson.RawValue) bson.RawValue { r, _ := Add(a, b); return r }
	mul := func(a, b bson.RawValue) bson.RawValue { r, _ := Multiply(a, b); return r }
	sum := func(a, b bson.RawValue) bson.RawValue {
		var s Sum
		s.Add(a)
		s.Add(b)
		return s.Result()
	}
	ops := map[string]func(a, b bson.RawValue) bson.RawValue{"add": add, "mul": mul, "quo": DecimalQuo, "rem": DecimalRem, "sum": sum}
	for name, op := range ops {
		for _, tc := range []struct {
			a, b bson.RawValue
			neg  bool
		}{
			{negNaN, Int32Value(1), true},
			{Int32Value(1), negNaN, true},
			{negNaN, nan, true},
			{nan, negNaN, false},
			{negNaN, DoubleValue(math.NaN()), true},
			{DecimalValue(decimalInf(-1)), negNaN, true},
		} {
			got := op(tc.a, tc.b)
			h, _ := got.Decimal128().GetBytes()
			if !got.Decimal128().IsNaN() || (h>>63 == 1) != tc.neg {
				t.Errorf("%s(%s, %s) = %x, want NaN with sign bit %v", name, tc.a, tc.b, h, tc.neg)
			}
		}
	}
	if h, _ := DecimalSqrt(negNaN).Decimal128().GetBytes(); h>>63 != 1 {
		t.Errorf("sqrt(-NaN) lost the sign: %x", h)
	}
}
