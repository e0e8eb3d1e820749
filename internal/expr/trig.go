package expr

import (
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// The trigonometric operators: a number in, a double out (a decimal, with
// 34 digits, for a decimal), null for null; arguments outside an operator's domain are
// error 50989 (NaN passes through).
func init() {
	register(map[string]opCompiler{
		"$sin":              unary(floatOp("$sin", math.Sin, values.DecimalSin, finite("$sin"))),
		"$cos":              unary(floatOp("$cos", math.Cos, values.DecimalCos, finite("$cos"))),
		"$tan":              unary(floatOp("$tan", math.Tan, values.DecimalTan, finite("$tan"))),
		"$asin":             unary(floatOp("$asin", math.Asin, values.DecimalAsin, within("$asin", -1, 1, "[-1,1]"))),
		"$acos":             unary(floatOp("$acos", math.Acos, values.DecimalAcos, within("$acos", -1, 1, "[-1,1]"))),
		"$atan":             unary(floatOp("$atan", math.Atan, values.DecimalAtan, nil)),
		"$sinh":             unary(floatOp("$sinh", math.Sinh, values.DecimalSinh, nil)),
		"$cosh":             unary(floatOp("$cosh", math.Cosh, values.DecimalCosh, nil)),
		"$tanh":             unary(floatOp("$tanh", math.Tanh, values.DecimalTanh, nil)),
		"$asinh":            unary(floatOp("$asinh", math.Asinh, values.DecimalAsinh, nil)),
		"$acosh":            unary(floatOp("$acosh", math.Acosh, values.DecimalAcosh, within("$acosh", 1, math.Inf(1), "[1,inf]"))),
		"$atanh":            unary(floatOp("$atanh", math.Atanh, values.DecimalAtanh, within("$atanh", -1, 1, "[-1,1]"))),
		"$degreesToRadians": unary(floatOp("$degreesToRadians", func(x float64) float64 { return x * doublePiOver180 }, values.DecimalDegreesToRadians, nil)),
		"$radiansToDegrees": unary(floatOp("$radiansToDegrees", func(x float64) float64 { return x * double180OverPi }, values.DecimalRadiansToDegrees, nil)),
		"$atan2":            binary(evalAtan2),
	})
}

// $degreesToRadians and $radiansToDegrees multiply a double once by a
// factor MongoDB computes in doubles, π/180 or 180/π with π =
// 3.141592653589793 (kDoublePiOver180, kDouble180OverPi): x·π/180 taken
// left to right rounds twice, and differs in the last bit for about a
// quarter of arguments.
var (
	doublePi        = math.Pi
	doublePiOver180 = doublePi / 180
	double180OverPi = 180 / doublePi
)

// finite refuses infinities ($sin, $cos, $tan).
func finite(op string) func(bson.RawValue) error {
	return within(op, math.Inf(-1), math.Inf(1), "(-inf,inf)")
}

// within refuses arguments outside [lo, hi] (infinite bounds excluded for
// finite). A decimal is compared as a decimal, as MongoDB's
// ExpressionBoundedTrigonometric does: 1.0000000000000000001 is outside
// [-1,1] and 1E+6000 inside (-inf,inf), though their doubles are not.
func within(op string, lo, hi float64, domain string) func(bson.RawValue) error {
	return func(v bson.RawValue) error {
		var out bool
		if v.Type == bson.TypeDecimal128 {
			d := v.Decimal128()
			if d.IsNaN() {
				return nil
			}
			out = values.CompareNumbers(v, values.DoubleValue(lo)) < 0 || values.CompareNumbers(v, values.DoubleValue(hi)) > 0 ||
				(domain == "(-inf,inf)" && d.IsInf() != 0)
		} else {
			x := toFloat(v)
			if math.IsNaN(x) {
				return nil
			}
			out = x < lo || x > hi || (domain == "(-inf,inf)" && math.IsInf(x, 0))
		}
		if out {
			return mongoerr.New(mongoerr.TrigOutOfDomain, "cannot apply %s to %s, value must be in %s", op, trigInput(v), domain)
		}
		return nil
	}
}

// trigInput is how the 50989 message shows the refused argument: a
// decimal as its string, any other number as the double it is computed as,
// printed by a C++ stream (%g: 2, 1.1, 1e+20, inf).
func trigInput(v bson.RawValue) string {
	if v.Type == bson.TypeDecimal128 {
		return v.Decimal128().String()
	}
	return values.StreamDouble(toFloat(v))
}

// evalAtan2 is $atan2: [y, x].
func evalAtan2(y, x bson.RawValue) (bson.RawValue, error) {
	if isNullish(y) || isNullish(x) {
		return nullValue, nil
	}
	if !isNumber(y) {
		return missing, mongoerr.New(mongoerr.Atan2FirstNotNumber, "$atan2 only supports numeric types, not %s", typeName(y))
	}
	if !isNumber(x) {
		return missing, mongoerr.New(mongoerr.Atan2SecondNotNumber, "$atan2 only supports numeric types, not %s", typeName(x))
	}
	if y.Type == bson.TypeDecimal128 || x.Type == bson.TypeDecimal128 {
		return values.DecimalAtan2(toDecimalValue(y), toDecimalValue(x)), nil
	}
	return values.DoubleValue(math.Atan2(toFloat(y), toFloat(x))), nil
}
