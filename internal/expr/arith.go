package expr

import (
	"math"
	"math/big"
	"math/rand/v2"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
	"go.mongodb.org/mongo-driver/v2/bson"
)

func init() {
	register(map[string]opCompiler{
		"$add":      nary(0, -1, evalAdd),
		"$subtract": binary(evalSubtract),
		"$multiply": nary(0, -1, evalMultiply),
		"$divide":   binary(evalDivide),
		"$mod":      binary(evalMod),
		"$abs":      unary(evalAbs),
		"$ceil":     unary(roundingOp("$ceil", ceiling)),
		"$floor":    unary(roundingOp("$floor", flooring)),
		"$round":    nary(1, 2, placeOp("$round", halfEven)),
		"$trunc":    nary(1, 2, placeOp("$trunc", truncate)),
		"$sqrt":     unary(evalSqrt),
		"$exp":      unary(floatOp("$exp", math.Exp, values.DecimalExp, nil)),
		"$ln":       unary(floatOp("$ln", logE, positiveDecimal(values.DecimalLn), positive(mongoerr.LnArgumentNotPositive, "$ln"))),
		"$log10":    unary(floatOp("$log10", log10, positiveDecimal(values.DecimalLog10), positive(mongoerr.Log10ArgumentNotPositive, "$log10"))),
		"$log":      binary(evalLog),
		"$pow":      binary(evalPow),
		"$rand":     compileRand,
	})
}

// evalAdd is $add: the sum of numbers, or a date plus numbers giving a
// date. A null or missing operand makes the result null; other types are
// TypeMismatch, a second date error 16612. The operands are summed in order
// as MongoDB's AddState sums them: a date as its milliseconds, integers
// in an int64 (a result that fits is an int while only ints were seen),
// promoted to a double on overflow or at the first double, and to a
// decimal at the first decimal (a double sum by its exact value to 34
// digits, later doubles to 15). A date result is the sum rounded: a
// double one to the nearest, halves away from zero (llround; one out of
// range is error 15), a decimal one half to even (Decimal128::toLong,
// unchecked).
func evalAdd(args []bson.RawValue) (bson.RawValue, error) {
	var (
		widestType = bson.TypeInt32
		long       int64
		double     float64
		dec        bson.RawValue
		isDate     bool
	)
	for _, a := range args {
		val := a
		switch {
		case isNullish(a):
			return nullValue, nil
		case a.Type == bson.TypeDateTime:
			if isDate {
				return missing, mongoerr.New(mongoerr.AddMultipleDates, "only one date allowed in an $add expression")
			}
			isDate = true
			val = values.Int64Value(a.DateTime())
		case isNumber(a):
			old := widestType
			widestType = widest(widestType, a.Type)
			if old != widestType {
				switch {
				case widestType == bson.TypeDouble:
					double = float64(long)
				case widestType == bson.TypeDecimal128 && old == bson.TypeDouble:
					dec = values.DecimalValue(values.DecimalFromFloatExact(double))
				case widestType == bson.TypeDecimal128:
					dec = toDecimalValue(values.Int64Value(long))
				}
			}
		default:
			return missing, mongoerr.New(mongoerr.TypeMismatch, "$add only supports numeric or date types, not %s", typeName(a))
		}
		switch widestType {
		case bson.TypeInt32, bson.TypeInt64:
			x := toInt(val)
			if r := long + x; (x >= 0) == (long >= 0) && (r >= 0) != (long >= 0) {
				widestType = bson.TypeDouble
				double = float64(long) + float64(x)
			} else {
				long = r
			}
		case bson.TypeDouble:
			double += toFloat(val)
		default:
			dec = addNumbers(dec, toDecimalValue(val))
		}
	}
	if isDate {
		switch widestType {
		case bson.TypeInt32, bson.TypeInt64:
			return dateValue(long), nil
		case bson.TypeDouble:
			if !(double >= -9.223372036854775808e18 && double < 9.223372036854775808e18) {
				return missing, dateOverflow("$add")
			}
			return dateValue(int64(math.Round(double))), nil
		}
		return dateValue(NumberLong(dec)), nil
	}
	return numericResult(widestType, long, double, dec), nil
}

// numericResult is the result of $add or $multiply, whose operands were
// accumulated in all three of an int64, a double and a decimal: the one
// of type t (an int when t is int32).
func numericResult(t bson.Type, long int64, double float64, dec bson.RawValue) bson.RawValue {
	switch t {
	case bson.TypeInt32:
		return intValue(long)
	case bson.TypeInt64:
		return values.Int64Value(long)
	case bson.TypeDouble:
		return values.DoubleValue(double)
	}
	return dec
}

// dateOverflow is the error for date arithmetic beyond the int64
// milliseconds a date holds.
func dateOverflow(op string) error {
	return mongoerr.New(mongoerr.Overflow, "date overflow in %s", op)
}

// millisOf converts a number of milliseconds subtracted from a date to
// int64: a double rounded to the nearest, halves away from zero (llround),
// a decimal rounded half to even (Decimal128::toLong), as MongoDB's
// ExpressionSubtract rounds them (jstests/aggregation/expressions/
// subtract.js); NaN or a value beyond int64 is a date overflow.
func millisOf(n bson.RawValue, op string) (int64, error) {
	switch n.Type {
	case bson.TypeInt32, bson.TypeInt64:
		return toInt(n), nil
	case bson.TypeDecimal128:
		ms, ok := longOf(n)
		if !ok {
			return 0, dateOverflow(op)
		}
		return ms, nil
	}
	f := math.Round(toFloat(n))
	if math.IsNaN(f) || f >= 9.223372036854775807e18 || f < -9.223372036854775808e18 {
		return 0, dateOverflow(op)
	}
	return int64(f), nil
}

// evalSubtract is $subtract: number-number, date-date (milliseconds as a
// long) or date-number (a date). Null or missing gives null; other types
// are TypeMismatch.
func evalSubtract(a, b bson.RawValue) (bson.RawValue, error) {
	if isNullish(a) || isNullish(b) {
		return nullValue, nil
	}
	switch {
	case isNumber(a) && isNumber(b):
		return SubtractNumbers(a, b), nil
	case a.Type == bson.TypeDateTime && b.Type == bson.TypeDateTime:
		return values.Int64Value(a.DateTime() - b.DateTime()), nil
	case a.Type == bson.TypeDateTime && isNumber(b):
		ms, err := millisOf(b, "$subtract")
		if err != nil {
			return missing, err
		}
		d := a.DateTime()
		diff := d - ms
		if (ms > 0 && diff > d) || (ms < 0 && diff < d) {
			return missing, dateOverflow("$subtract")
		}
		return dateValue(diff), nil
	case a.Type == bson.TypeDateTime:
		return missing, mongoerr.New(mongoerr.TypeMismatch, "can't $subtract %s from Date", typeName(b))
	}
	return missing, mongoerr.New(mongoerr.TypeMismatch, "can't $subtract %s from %s", typeName(b), typeName(a))
}

// evalMultiply is $multiply: the product of numbers (1 for none), null if
// any operand is null or missing; other types are TypeMismatch. The
// operands are multiplied in order as MongoDB's MultiplyState does: a
// double product and an int64 one side by side (a result that fits is an
// int while only ints were seen; an int64 overflow leaves the double
// product), and a decimal one from the first decimal on (the double
// product converted to 15 digits).
func evalMultiply(args []bson.RawValue) (bson.RawValue, error) {
	var (
		productType = bson.TypeInt32
		double      = 1.0
		long        = int64(1)
		dec         bson.RawValue
	)
	for _, a := range args {
		switch {
		case isNullish(a):
			return nullValue, nil
		case !isNumber(a):
			return missing, mongoerr.New(mongoerr.TypeMismatch, "$multiply only supports numeric types, not %s", typeName(a))
		}
		old := productType
		productType = widest(productType, a.Type)
		if productType == bson.TypeDecimal128 {
			if old == bson.TypeDouble {
				dec = decimalFromFloat(double)
			} else if old != bson.TypeDecimal128 {
				dec = toDecimalValue(values.Int64Value(long))
			}
			dec = mulNumbers(dec, toDecimalValue(a))
			continue
		}
		double *= toFloat(a)
		if productType != bson.TypeDouble {
			if r, ok := mulInt64(long, toInt(a)); ok {
				long = r
			} else {
				productType = bson.TypeDouble
			}
		}
	}
	return numericResult(productType, long, double, dec), nil
}

// mulInt64 is x*y, not ok when it overflows an int64.
func mulInt64(x, y int64) (int64, bool) {
	if x == 0 || y == 0 {
		return 0, true
	}
	r := x * y
	if r/y != x || (x == -1 && y == math.MinInt64) || (y == -1 && x == math.MinInt64) {
		return 0, false
	}
	return r, true
}

// evalDivide is $divide: a double quotient, or a decimal one when either
// operand is a decimal. A zero divisor is error 2.
func evalDivide(a, b bson.RawValue) (bson.RawValue, error) {
	if isNullish(a) || isNullish(b) {
		return nullValue, nil
	}
	if !isNumber(a) || !isNumber(b) {
		return missing, mongoerr.New(mongoerr.TypeMismatch, "$divide only supports numeric types, not %s and %s", typeName(a), typeName(b))
	}
	if numSign(b) == 0 && !values.IsNaN(b) {
		return missing, mongoerr.New(mongoerr.BadValue, "can't $divide by zero")
	}
	if a.Type == bson.TypeDecimal128 || b.Type == bson.TypeDecimal128 {
		return values.DecimalQuo(a, b), nil
	}
	return values.DoubleValue(toFloat(a) / toFloat(b)), nil
}

// evalMod is $mod as MongoDB's ExpressionMod::apply computes it: with a
// decimal operand the decimal remainder (a zero divisor is error 5733415);
// otherwise a zero divisor is error 16610, a double dividend or a double
// divisor that is not a 32-bit integer give fmod as a double, and else the
// integer remainder, a long when either operand is a long, an int
// otherwise ({$mod: [5, 2.0]} is the int 1). The remainder has the
// dividend's sign.
func evalMod(a, b bson.RawValue) (bson.RawValue, error) {
	if isNullish(a) || isNullish(b) {
		return nullValue, nil
	}
	if !isNumber(a) || !isNumber(b) {
		return missing, mongoerr.New(mongoerr.ModInvalidType, "$mod only supports numeric types, not %s and %s", typeName(a), typeName(b))
	}
	if a.Type == bson.TypeDecimal128 || b.Type == bson.TypeDecimal128 {
		if numSign(b) == 0 && !values.IsNaN(b) {
			return missing, mongoerr.New(mongoerr.ModByZeroDecimal, "can't $mod by zero")
		}
		return values.DecimalRem(a, b), nil
	}
	right := toFloat(b)
	if right == 0 {
		return missing, mongoerr.New(mongoerr.ModByZero, "can't $mod by zero")
	}
	if a.Type == bson.TypeDouble || (b.Type == bson.TypeDouble && (right != math.Trunc(right) || right < math.MinInt32 || right > math.MaxInt32)) {
		return values.DoubleValue(math.Mod(toFloat(a), right)), nil
	}
	if a.Type == bson.TypeInt64 || b.Type == bson.TypeInt64 {
		x, y := toInt(a), int64(right)
		if b.Type == bson.TypeInt64 {
			y = b.Int64()
		}
		if y == -1 {
			return values.Int64Value(0), nil
		}
		return values.Int64Value(x % y), nil
	}
	x, y := int32(toInt(a)), int32(right)
	if y == -1 {
		return values.Int32Value(0), nil
	}
	return values.Int32Value(x % y), nil
}

// numericArg checks the operand of a single-argument numeric operator:
// null gives null (ok false, no error); other non-numbers are error 28765.
func numericArg(op string, v bson.RawValue) (bool, error) {
	if isNullish(v) {
		return false, nil
	}
	if !isNumber(v) {
		return false, mongoerr.New(mongoerr.UnaryArithNotNumber, "%s only supports numeric types, not %s", op, typeName(v))
	}
	return true, nil
}

// evalAbs is $abs; the absolute value of the minimum long is error 28680.
func evalAbs(v bson.RawValue) (bson.RawValue, error) {
	if ok, err := numericArg("$abs", v); !ok {
		return nullValue, err
	}
	if v.Type == bson.TypeInt64 && v.Int64() == math.MinInt64 {
		return missing, mongoerr.New(mongoerr.AbsLongMin, "can't take $abs of long long min")
	}
	switch v.Type {
	case bson.TypeDouble:
		return values.DoubleValue(math.Abs(v.Double())), nil
	case bson.TypeDecimal128:
		// Decimal128::toAbs clears the sign bit: -0 and -NaN lose it too.
		return values.DecimalValue(values.DecimalWithSign(v.Decimal128(), false)), nil
	}
	if numSign(v) < 0 {
		return negate(v), nil
	}
	return v, nil
}

// roundingOp builds $ceil and $floor: integers are unchanged, doubles and
// decimals are rounded to an integral value of the same type (a decimal
// quantized to exponent 0, which makes an infinity NaN).
func roundingOp(op string, mode roundMode) unaryFn {
	return func(v bson.RawValue) (bson.RawValue, error) {
		if ok, err := numericArg(op, v); !ok {
			return nullValue, err
		}
		if v.Type == bson.TypeDouble {
			if mode == ceiling {
				return values.DoubleValue(math.Ceil(v.Double())), nil
			}
			return values.DoubleValue(math.Floor(v.Double())), nil
		}
		return roundNumber(v, 0, mode, false), nil
	}
}

// placeOp builds $round (half to even) and $trunc: [number, place] with
// place an integer in [-20, 100] (default 0).
func placeOp(op string, mode roundMode) naryFn {
	return func(args []bson.RawValue) (bson.RawValue, error) {
		// MongoDB checks the number, then the precision.
		v := args[0]
		if isNullish(v) {
			return nullValue, nil
		}
		if !isNumber(v) {
			return missing, mongoerr.New(mongoerr.RoundArgumentNotNumber, "%s only supports numeric types, not %s", op, typeName(v))
		}
		place := int64(0)
		if len(args) == 2 {
			p := args[1]
			if isNullish(p) {
				return nullValue, nil
			}
			// As evaluateRoundOrTrunc: coerceToLong first (its errors),
			// then Value::integral, which asks for a whole number that
			// fits an int, then the range.
			n, err := coerceToLong(p)
			if err != nil {
				return missing, err
			}
			if i, ok := values.Int64(p); !ok || i < math.MinInt32 || i > math.MaxInt32 {
				return missing, mongoerr.New(mongoerr.RoundPrecisionNotIntegral, "precision argument to  %s must be a integral value", op)
			}
			if n < -20 || n > 100 {
				return missing, mongoerr.New(mongoerr.RoundPrecisionOutOfRange, "cannot apply %s with precision value %d value must be in [-20, 100]", op, n)
			}
			place = n
		}
		r := roundNumber(v, int(place), mode, true)
		if r.Type == 0 {
			// An integer rounded beyond 64 bits.
			return missing, mongoerr.New(mongoerr.RoundIntegerOverflow, "invalid conversion from Decimal128 result in %s resulting from arguments: [%d, %d]", op, toInt(v), place)
		}
		return r, nil
	}
}

// evalSqrt is $sqrt: a double (decimal for a decimal operand); negative
// operands are error 28714.
func evalSqrt(v bson.RawValue) (bson.RawValue, error) {
	if ok, err := numericArg("$sqrt", v); !ok {
		return nullValue, err
	}
	if numSign(v) < 0 {
		return missing, mongoerr.New(mongoerr.SqrtNegative, "$sqrt's argument must be greater than or equal to 0")
	}
	if v.Type == bson.TypeDecimal128 {
		return values.DecimalSqrt(v), nil
	}
	return values.DoubleValue(math.Sqrt(toFloat(v))), nil
}

// positive is the domain check of $ln and $log10: the operand must be
// greater than zero (NaN passes and yields NaN). The message shows it as
// the double MongoDB coerces it to, streamed ("-1e+20", "-0").
func positive(code mongoerr.Code, op string) func(bson.RawValue) error {
	return func(v bson.RawValue) error {
		if numSign(v) <= 0 && !values.IsNaN(v) {
			return mongoerr.New(code, "%s's argument must be a positive number, but is %s", op, values.StreamDouble(toFloat(v)))
		}
		return nil
	}
}

// positiveDecimal is the decimal form of $ln and $log10, which MongoDB
// takes only of a decimal above zero: a NaN that passed the domain check
// goes through the double form, giving a double NaN.
func positiveDecimal(dec func(bson.RawValue) bson.RawValue) func(bson.RawValue) bson.RawValue {
	return func(v bson.RawValue) bson.RawValue {
		if values.IsNaN(v) {
			return values.DoubleValue(math.NaN())
		}
		return dec(v)
	}
}

// floatOp builds $exp, $ln, $log10 and the trigonometric operators: fn
// computes them in double precision, dec for a decimal operand (34
// digits); without dec a decimal operand goes through fn.
func floatOp(op string, fn func(float64) float64, dec func(bson.RawValue) bson.RawValue, check func(bson.RawValue) error) unaryFn {
	return func(v bson.RawValue) (bson.RawValue, error) {
		if ok, err := numericArg(op, v); !ok {
			return nullValue, err
		}
		if check != nil {
			if err := check(v); err != nil {
				return missing, err
			}
		}
		switch {
		case v.Type != bson.TypeDecimal128:
			return values.DoubleValue(fn(toFloat(v))), nil
		case dec != nil:
			return dec(v), nil
		}
		return decimalFromFloat(fn(toFloat(v))), nil
	}
}

// logE is the natural logarithm, right for a subnormal x too: Go's
// math.Log on amd64 gives a subnormal the logarithm of the smallest
// normal double (ln 5e-324 is -744.44, not -709.09).
func logE(x float64) float64 {
	if x > 0 && x < 0x1p-1022 {
		return math.Log(x*0x1p54) - 54*math.Ln2
	}
	return math.Log(x)
}

// log10 is the base-10 logarithm as C's log10 gives it, which MongoDB
// uses: right for a subnormal x (see logE), and exact for a power of ten,
// where Go's math.Log10 may be an ulp off (1e15 gave 14.999999999999998).
func log10(x float64) float64 {
	if x > 0 && x < 0x1p-1022 {
		return math.Log10(x*0x1p54) - 54*math.Log10(2)
	}
	r := math.Log10(x)
	if n := math.Round(r); n >= -323 && n <= 308 && math.Pow10(int(n)) == x {
		return n
	}
	return r
}

// evalLog is $log: [number, base], number > 0, base > 0 and not 1.
func evalLog(x, base bson.RawValue) (bson.RawValue, error) {
	if isNullish(x) || isNullish(base) {
		return nullValue, nil
	}
	if !isNumber(x) {
		return missing, mongoerr.New(mongoerr.LogArgumentNotNumber, "$log's argument must be numeric, not %s", typeName(x))
	}
	if !isNumber(base) {
		return missing, mongoerr.New(mongoerr.LogBaseNotNumber, "$log's base must be numeric, not %s", typeName(base))
	}
	if numSign(x) <= 0 && !values.IsNaN(x) {
		return missing, mongoerr.New(mongoerr.LogArgumentNotPositive, "$log's argument must be a positive number, but is %s", values.StreamDouble(toFloat(x)))
	}
	if b := toFloat(base); (b <= 0 || b == 1) && !values.IsNaN(base) {
		return missing, mongoerr.New(mongoerr.LogBaseInvalid, "$log's base must be a positive number not equal to 1, but is %s", values.StreamDouble(toFloat(base)))
	}
	// MongoDB takes the decimal logarithm only of operands above zero (and
	// a base other than 1): a NaN goes through the doubles.
	if (x.Type == bson.TypeDecimal128 || base.Type == bson.TypeDecimal128) && !values.IsNaN(x) && !values.IsNaN(base) {
		return values.DecimalLog(x, base), nil
	}
	return values.DoubleValue(logE(toFloat(x)) / logE(toFloat(base))), nil
}

// evalPow is $pow: integer powers of integers stay exact (int, widening to
// long, then double on overflow); a negative integer exponent gives a double
// except for bases 1 and -1; a zero base with a negative exponent is error
// 28764.
func evalPow(base, exp bson.RawValue) (bson.RawValue, error) {
	if isNullish(base) || isNullish(exp) {
		return nullValue, nil
	}
	if !isNumber(base) {
		return missing, mongoerr.New(mongoerr.PowBaseNotNumber, "$pow's base must be numeric, not %s", typeName(base))
	}
	if !isNumber(exp) {
		return missing, mongoerr.New(mongoerr.PowExponentNotNumber, "$pow's exponent must be numeric, not %s", typeName(exp))
	}
	t := widest(base.Type, exp.Type)
	// A negative exponent: below zero for doubles and integers; for
	// decimals, as Decimal128::isNegative reads it, a set sign bit, so
	// that 0 to the power -0 is refused too.
	negative := numSign(exp) < 0
	if t == bson.TypeDecimal128 {
		negative = values.DecimalSignbit(toDecimalValue(exp).Decimal128())
	}
	if numSign(base) == 0 && negative && !values.IsNaN(base) {
		return missing, mongoerr.New(mongoerr.PowZeroNegativeExponent, "$pow cannot take a base of 0 and a negative exponent")
	}
	switch t {
	case bson.TypeDecimal128:
		if e, ok := values.Int64(exp); ok {
			if r, ok := values.DecimalPow(base, e); ok {
				return r, nil
			}
		}
		if r, ok := values.DecimalPowReal(base, exp); ok {
			return r, nil
		}
		return decimalFromFloat(math.Pow(toFloat(base), toFloat(exp))), nil
	case bson.TypeDouble:
		return values.DoubleValue(math.Pow(toFloat(base), toFloat(exp))), nil
	}
	b, e := toInt(base), toInt(exp)
	if e < 0 {
		switch b {
		case 1:
			return intOfType(1, t), nil
		case -1:
			if e%2 == 0 {
				return intOfType(1, t), nil
			}
			return intOfType(-1, t), nil
		}
		return values.DoubleValue(math.Pow(float64(b), float64(e))), nil
	}
	var r *big.Int
	if e < 64 || b >= -1 && b <= 1 {
		r = new(big.Int).Exp(big.NewInt(b), big.NewInt(e), nil)
	}
	if r == nil || !r.IsInt64() {
		return values.DoubleValue(math.Pow(float64(b), float64(e))), nil
	}
	if t == bson.TypeInt32 {
		return intValue(r.Int64()), nil
	}
	return values.Int64Value(r.Int64()), nil
}

// intOfType is n as an int32 or int64.
func intOfType(n int64, t bson.Type) bson.RawValue {
	if t == bson.TypeInt32 {
		return values.Int32Value(int32(n))
	}
	return values.Int64Value(n)
}

// compileRand is {$rand: {}}: a double in [0, 1), different at each
// evaluation. As ExpressionRandom::parse: refused in a collection
// validator (3040500), then the argument must be an object or an array
// (BSON's embedded-object check takes both; 10065) and empty (3040501).
func compileRand(_ *compiler, _ string, v bson.RawValue, s *Scope) (*Expr, error) {
	if s != nil && s.validator {
		return nil, mongoerr.New(mongoerr.RandInValidator, "$rand not allowed inside collection validators")
	}
	if v.Type != bson.TypeEmbeddedDocument && v.Type != bson.TypeArray {
		return nil, mongoerr.New(mongoerr.ExpectedObjectParameter, "invalid parameter: expected an object ($rand)")
	}
	if len(v.Value) != 5 {
		return nil, mongoerr.New(mongoerr.RandTakesNoArguments, "$rand does not currently accept arguments")
	}
	return &Expr{eval: func(*state) (bson.RawValue, error) {
		return values.DoubleValue(rand.Float64()), nil
	}}, nil
}

// Subtract, Add, Multiply and Divide are $subtract, $add, $multiply and
// $divide of two values: the arithmetic MongoDB's $derivative and
// $integral window functions compute with (exec::expression::evaluate*).
func Subtract(a, b bson.RawValue) (bson.RawValue, error) { return evalSubtract(a, b) }

// Add is $add of two values (see Subtract).
func Add(a, b bson.RawValue) (bson.RawValue, error) { return evalAdd([]bson.RawValue{a, b}) }

// Multiply is $multiply of two values (see Subtract).
func Multiply(a, b bson.RawValue) (bson.RawValue, error) {
	return evalMultiply([]bson.RawValue{a, b})
}

// Divide is $divide of two values (see Subtract); a zero divisor is
// BadValue.
func Divide(a, b bson.RawValue) (bson.RawValue, error) { return evalDivide(a, b) }

// Pow is $pow of two values: what MongoDB's powers-of-two granularity
// rounder returns (ExpressionPow of 2 and the exponent).
func Pow(base, exp bson.RawValue) (bson.RawValue, error) { return evalPow(base, exp) }
