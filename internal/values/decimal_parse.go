package values

import (
	"math/big"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// ParseDecimal reads a decimal128 from s as MongoDB's NumberParser does for
// a Decimal128 (base/parse_number.cpp over Intel's bid128_from_string): a
// sign, digits with an optional point, an optional exponent, or Infinity,
// Inf or NaN in any case; more than 34 significant digits round half to
// even, as the parser ignores precision loss. reason is empty on success,
// else NumberParser's: "Empty string", "Conversion from string to decimal
// would overflow" (beyond the largest decimal), "... would underflow" (a
// value below 1E-6143 that cannot be held exactly) or "Failed to parse
// string to decimal".
func ParseDecimal(s string) (d bson.Decimal128, reason string) {
	const invalid = "Failed to parse string to decimal"
	if s == "" {
		return d, "Empty string"
	}
	body := s
	neg := false
	if body[0] == '+' || body[0] == '-' {
		neg = body[0] == '-'
		body = body[1:]
	}
	switch strings.ToLower(body) {
	case "inf", "infinity":
		return decimalInf(signOf(neg)), ""
	case "nan":
		return decimalNaN, ""
	}
	mant, expText, hasExp := strings.Cut(strings.ToLower(body), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := intPart + frac
	if digits == "" || !allDigits(digits) || strings.Count(mant, ".") > 1 {
		return d, invalid
	}
	exp := -len(frac)
	if hasExp {
		e, ok := parseExponent(expText)
		if !ok {
			return d, invalid
		}
		exp += e
	}
	coef, _ := new(big.Int).SetString(digits, 10)
	if neg {
		coef.Neg(coef)
	}
	// A zero keeps the string's sign (-0, -0E+3, -0E-8000 are negative
	// zeros), which the coefficient, zero, cannot carry.
	d = zeroSigned(roundDecimal(coef, exp), coef, neg)
	if d.IsInf() != 0 {
		return bson.Decimal128{}, "Conversion from string to decimal would overflow"
	}
	if exact := decimalRat(decimal{coef: coef, exp: exp}); coef.Sign() != 0 &&
		new(big.Rat).Abs(exact).Cmp(minNormal) < 0 && decimalRat(toDecimal(DecimalValue(d))).Cmp(exact) != 0 {
		return bson.Decimal128{}, "Conversion from string to decimal would underflow"
	}
	return d, ""
}

// minNormal is 1E-6143, the smallest decimal128 with 34 digits of
// precision: a rounded value below it is an underflow.
var minNormal = new(big.Rat).SetFrac(big.NewInt(1), scale(big.NewInt(1), 6143))

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// parseExponent reads a signed decimal exponent, saturating far beyond any
// decimal128's range so that the rounding gives 0 or an overflow.
func parseExponent(s string) (int, bool) {
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" || !allDigits(s) {
		return 0, false
	}
	e := 0
	for i := 0; i < len(s); i++ {
		if e < 1<<20 {
			e = e*10 + int(s[i]-'0')
		}
	}
	if neg {
		e = -e
	}
	return e, true
}
