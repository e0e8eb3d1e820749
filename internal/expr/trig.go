package expr

import (
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// The trigonometric operators: a number in, a double out (a decimal for a
// decimal), null for null; arguments outside an operator's domain are
// error 50989 (NaN passes through).
func init() {
	register(map[string]opCompiler{
		"$sin":              unary(floatOp("$sin", math.Sin, nil, finite("$sin"))),
		"$cos":              unary(floatOp("$cos", math.Cos, nil, finite("$cos"))),
		"$tan":              unary(floatOp("$tan", math.Tan, nil, finite("$tan"))),
		"$asin":             unary(floatOp("$asin", math.Asin, nil, within("$asin", -1, 1, "[-1,1]"))),
		"$acos":             unary(floatOp("$acos", math.Acos, nil, within("$acos", -1, 1, "[-1,1]"))),
		"$atan":             unary(floatOp("$atan", math.Atan, nil, nil)),
		"$sinh":             unary(floatOp("$sinh", math.Sinh, nil, nil)),
		"$cosh":             unary(floatOp("$cosh", math.Cosh, nil, nil)),
		"$tanh":             unary(floatOp("$tanh", math.Tanh, nil, nil)),
		"$asinh":            unary(floatOp("$asinh", math.Asinh, nil, nil)),
		"$acosh":            unary(floatOp("$acosh", math.Acosh, nil, within("$acosh", 1, math.Inf(1), "[1,inf]"))),
		"$atanh":            unary(floatOp("$atanh", math.Atanh, nil, within("$atanh", -1, 1, "[-1,1]"))),
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
// finite).
func within(op string, lo, hi float64, domain string) func(bson.RawValue) error {
	return func(v bson.RawValue) error {
		x := toFloat(v)
		if math.IsNaN(x) {
			return nil
		}
		if x < lo || x > hi || (domain == "(-inf,inf)" && math.IsInf(x, 0)) {
			return mongoerr.New(mongoerr.TrigOutOfDomain, "cannot apply %s to %s, value must in %s", op, values.Shell(v), domain)
		}
		return nil
	}
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
	r := math.Atan2(toFloat(y), toFloat(x))
	if y.Type == bson.TypeDecimal128 || x.Type == bson.TypeDecimal128 {
		return decimalFromFloat(r), nil
	}
	return values.DoubleValue(r), nil
}
