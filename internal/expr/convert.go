package expr

import (
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
	"go.mongodb.org/mongo-driver/v2/bson"
)

func init() {
	ops := map[string]opCompiler{
		"$convert":  compileConvert,
		"$type":     unary(func(v bson.RawValue) (bson.RawValue, error) { return stringValue(values.TypeName(v.Type)), nil }),
		"$isNumber": unary(func(v bson.RawValue) (bson.RawValue, error) { return boolValue(isNumber(v)), nil }),
	}
	for name, t := range map[string]bson.Type{
		"$toInt": bson.TypeInt32, "$toLong": bson.TypeInt64, "$toDouble": bson.TypeDouble,
		"$toDecimal": bson.TypeDecimal128, "$toString": bson.TypeString, "$toBool": bson.TypeBoolean,
		"$toDate": bson.TypeDateTime, "$toObjectId": bson.TypeObjectID,
	} {
		ops[name] = unary(func(v bson.RawValue) (bson.RawValue, error) {
			if isNullish(v) {
				return nullValue, nil
			}
			return convert(v, t)
		})
	}
	register(ops)
}

// compileConvert is $convert: {input, to, onError, onNull}. "to" is a type
// name or number; a null or missing input gives onNull (or null); a failed
// conversion gives onError, or error 241 without it. An argument that is
// not an object is FailedToParse naming its type, as ExpressionConvert::parse
// words it.
func compileConvert(c *compiler, name string, v bson.RawValue, s *Scope) (*Expr, error) {
	if v.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.FailedToParse, "$convert expects an object of named arguments but found: %s", typeName(v))
	}
	args, err := c.compileNamed(name, v, s, mongoerr.FailedToParse, mongoerr.FailedToParse, "input", "to", "onError", "onNull")
	if err != nil {
		return nil, err
	}
	if args["input"] == nil {
		return nil, mongoerr.New(mongoerr.FailedToParse, "Missing 'input' parameter to $convert")
	}
	if args["to"] == nil {
		return nil, mongoerr.New(mongoerr.FailedToParse, "Missing 'to' parameter to $convert")
	}
	return c.fold(args.list(), func(st *state) (bson.RawValue, error) {
		in, err := args.get(st, "input")
		if err != nil {
			return missing, err
		}
		to, err := args.get(st, "to")
		if err != nil {
			return missing, err
		}
		// MongoDB's order: a "to" given is checked, then a null input
		// gives onNull (whatever "to" is), then a null "to" gives null.
		var t bson.Type
		if !isNullish(to) {
			if t, err = targetType(to); err != nil {
				return missing, err
			}
		}
		if isNullish(in) {
			if args["onNull"] != nil {
				return args["onNull"].eval(st)
			}
			return nullValue, nil
		}
		if isNullish(to) {
			return nullValue, nil
		}
		r, err := convert(in, t)
		// onError answers a failed conversion (ConversionFailure) only.
		if mongoerr.Is(err, mongoerr.ConversionFailure) && args["onError"] != nil {
			return args["onError"].eval(st)
		}
		return r, err
	})
}

// targetType resolves $convert's "to": a type name or a type number. The
// name "missing", which $type returns, is accepted as MongoDB's
// ExpressionConvert accepts it: no conversion reaches it, so it fails as an
// unsupported conversion (241), which onError answers.
func targetType(v bson.RawValue) (bson.Type, error) {
	if s, ok := str(v); ok {
		if s == "missing" {
			return 0, nil
		}
		if t, ok := values.TypeByName(s); ok {
			return t, nil
		}
		return 0, mongoerr.New(mongoerr.BadValue, "Unknown type name: %s", s)
	}
	if isNumber(v) {
		n, ok := values.Int64(v)
		if !ok {
			return 0, mongoerr.New(mongoerr.FailedToParse, "In $convert, numeric 'to' argument is not an integer")
		}
		if t, ok := values.TypeByNumber(int(n)); ok {
			return t, nil
		}
		return 0, mongoerr.New(mongoerr.FailedToParse, "In $convert, numeric value for 'to' does not correspond to a BSON type: %d", n)
	}
	return 0, mongoerr.New(mongoerr.FailedToParse, "$convert's 'to' argument must be a string or number, but is %s", typeName(v))
}

// convert converts a non-null value to type t under $convert's rules.
func convert(v bson.RawValue, t bson.Type) (bson.RawValue, error) {
	if v.Type == t {
		return v, nil
	}
	fail := func(detail string) (bson.RawValue, error) {
		if detail == "" {
			return missing, mongoerr.New(mongoerr.ConversionFailure, "Unsupported conversion from %s to %s in $convert with no onError value", typeName(v), values.TypeName(t))
		}
		s, _ := str(v)
		return missing, mongoerr.New(mongoerr.ConversionFailure, "Failed to parse %s '%s' in $convert with no onError value: %s", values.TypeName(t), s, detail)
	}
	if s, ok := str(v); ok && isNumericType(t) {
		return parseStringToNumber(s, t)
	}
	switch t {
	case bson.TypeDouble:
		switch {
		case isNumber(v):
			f := toFloat(v)
			// performCastDecimalToDouble accepts only an exact or inexact
			// conversion: a finite decimal beyond the doubles (overflow) or
			// nonzero below the smallest normal double (underflow: 1E-400,
			// 1E-310) fails, with the decimal as it prints.
			if v.Type == bson.TypeDecimal128 && v.Decimal128().IsInf() == 0 && !values.IsNaN(v) &&
				(math.IsInf(f, 0) || math.Abs(f) < 0x1p-1022 && numSign(v) != 0) {
				return missing, mongoerr.New(mongoerr.ConversionFailure, "Conversion would overflow target type in $convert with no onError value: %s", v.Decimal128().String())
			}
			return values.DoubleValue(f), nil
		case v.Type == bson.TypeBoolean:
			return values.DoubleValue(b2f(v.Boolean())), nil
		case v.Type == bson.TypeDateTime:
			return values.DoubleValue(float64(v.DateTime())), nil
		}
	case bson.TypeInt32, bson.TypeInt64:
		switch {
		case isNumber(v):
			return convertInt(v, t)
		case v.Type == bson.TypeBoolean:
			return intOfType(int64(b2f(v.Boolean())), t), nil
		case v.Type == bson.TypeDateTime && t == bson.TypeInt64:
			return values.Int64Value(v.DateTime()), nil
		}
	case bson.TypeDecimal128:
		switch {
		case isNumber(v):
			return toDecimalValue(v), nil
		case v.Type == bson.TypeBoolean:
			return toDecimalValue(values.Int32Value(int32(b2f(v.Boolean())))), nil
		case v.Type == bson.TypeDateTime:
			return toDecimalValue(values.Int64Value(v.DateTime())), nil
		}
	case bson.TypeString:
		switch v.Type {
		case bson.TypeDouble:
			return stringValue(formatDouble(v.Double())), nil
		case bson.TypeInt32, bson.TypeInt64, bson.TypeDecimal128, bson.TypeDateTime, bson.TypeSymbol:
			s, err := coerceToString(v)
			if err != nil {
				return missing, err
			}
			return stringValue(s), nil
		case bson.TypeBoolean:
			return stringValue(strconv.FormatBool(v.Boolean())), nil
		case bson.TypeObjectID:
			return stringValue(v.ObjectID().Hex()), nil
		}
	case bson.TypeBoolean:
		switch {
		case isNumber(v):
			return boolValue(values.Truthy(v)), nil
		case v.Type == bson.TypeString, v.Type == bson.TypeObjectID, v.Type == bson.TypeDateTime,
			v.Type == bson.TypeEmbeddedDocument, v.Type == bson.TypeArray, v.Type == bson.TypeBinary,
			v.Type == bson.TypeRegex, v.Type == bson.TypeTimestamp, v.Type == bson.TypeJavaScript,
			v.Type == bson.TypeCodeWithScope, v.Type == bson.TypeMinKey, v.Type == bson.TypeMaxKey:
			return trueValue, nil
		}
	case bson.TypeDateTime:
		switch v.Type {
		case bson.TypeInt64:
			return dateValue(v.Int64()), nil
		case bson.TypeDouble, bson.TypeDecimal128:
			// MongoDB converts the number to a long first, with its errors.
			n, err := convertInt(v, bson.TypeInt64)
			if err != nil {
				return missing, err
			}
			return dateValue(n.Int64()), nil
		case bson.TypeObjectID, bson.TypeTimestamp:
			tm, _ := toTime(v)
			return dateValue(tm.UnixMilli()), nil
		case bson.TypeString:
			s, _ := str(v)
			// MongoDB's conversion table calls fromString in UTC and
			// passes its ConversionFailure on as it is, without the
			// "Failed to parse" wrapping of numbers and objectIds.
			tm, err := parseDate(s, "", time.UTC)
			if err != nil {
				return missing, err
			}
			return dateValue(tm.UnixMilli()), nil
		}
	case bson.TypeObjectID:
		if s, ok := str(v); ok {
			// OID::parse's reasons: the length, then the first character
			// that is not a hexadecimal digit.
			if len(s) != 24 {
				return fail("Invalid string length for parsing to OID, expected 24 but found " + strconv.Itoa(len(s)))
			}
			if i := strings.IndexFunc(s, func(r rune) bool { return !unicode.Is(unicode.ASCII_Hex_Digit, r) }); i >= 0 {
				return fail("Invalid character found in hex string: " + s[i:i+1])
			}
			oid, _ := bson.ObjectIDFromHex(s)
			return bson.RawValue{Type: bson.TypeObjectID, Value: oid[:]}, nil
		}
	}
	return fail("")
}

// isNumericType reports whether t is one of the four numeric types.
func isNumericType(t bson.Type) bool {
	return t == bson.TypeDouble || t == bson.TypeInt32 || t == bson.TypeInt64 || t == bson.TypeDecimal128
}

// parseStringToNumber reads a string as a number of type t, as MongoDB's
// ExpressionConvert parseStringToNumber does with NumberParser (base 10 for
// integers): a string starting "0x" is refused first (strtod would read
// it; "0X1" and "+0x1" still are hexadecimal doubles), and a failure is
// "Failed to parse number '<s>'" with the parser's reason.
func parseStringToNumber(s string, t bson.Type) (bson.RawValue, error) {
	if strings.HasPrefix(s, "0x") {
		return missing, mongoerr.New(mongoerr.ConversionFailure, "Illegal hexadecimal input in $convert with no onError value: %s", s)
	}
	var (
		r      bson.RawValue
		reason string
	)
	switch t {
	case bson.TypeDouble:
		var f float64
		f, reason = parseNumber(s)
		r = values.DoubleValue(f)
	case bson.TypeDecimal128:
		var d bson.Decimal128
		d, reason = values.ParseDecimal(s)
		r = values.DecimalValue(d)
	default:
		bits := 64
		if t == bson.TypeInt32 {
			bits = 32
		}
		var n int64
		n, reason = parseInteger(s, bits)
		r = intOfType(n, t)
	}
	if reason != "" {
		return missing, mongoerr.New(mongoerr.ConversionFailure, "Failed to parse number '%s' in $convert with no onError value: %s", s, reason)
	}
	return r, nil
}

// parseInteger reads a base-10 integer of the given bits as NumberParser
// does: one sign, then digits and nothing else. reason is its: "No
// digits", "Did not consume whole string.", or "Overflow" beyond the
// type's range (or past 2^64 while reading digits, which comes first).
func parseInteger(s string, size int) (int64, string) {
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" {
		return 0, "No digits"
	}
	var mag uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, "Did not consume whole string."
		}
		hi, lo := bits.Mul64(mag, 10)
		if hi != 0 || lo+uint64(c-'0') < lo {
			return 0, "Overflow"
		}
		mag = lo + uint64(c-'0')
	}
	limit := uint64(1)<<(size-1) - 1
	if neg {
		limit++
	}
	if mag > limit {
		return 0, "Overflow"
	}
	if neg {
		return -int64(mag), ""
	}
	return int64(mag), ""
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// convertInt converts a number to int32 or int64, truncating fractions, as
// MongoDB's performCastDoubleToInt/Long, performCastDecimalToInt and
// performCastLongToInt do: NaN and infinities fail with their own
// messages; a double out of the target's range (checked before truncating,
// so 2147483647.5 is no int) fails naming it as a C++ stream prints it, a
// decimal naming it as it prints, and a long too large for an int naming
// nothing (MongoDB's message ends at the colon).
func convertInt(v bson.RawValue, t bson.Type) (bson.RawValue, error) {
	overflow := func(shown string) (bson.RawValue, error) {
		return missing, mongoerr.New(mongoerr.ConversionFailure, "Conversion would overflow target type in $convert with no onError value: %s", shown)
	}
	var n int64
	switch v.Type {
	case bson.TypeInt32, bson.TypeInt64:
		n = toInt(v)
		if t == bson.TypeInt32 && (n < math.MinInt32 || n > math.MaxInt32) {
			return overflow("")
		}
	case bson.TypeDecimal128:
		d := v.Decimal128()
		if err := nonFiniteToInteger(d.IsNaN(), d.IsInf() != 0); err != nil {
			return missing, err
		}
		// Exactly: near the int64 limits a double rounds across them.
		b, ok := toBig(v)
		var i *big.Int
		if ok {
			i, _ = b.Int(nil)
		}
		if i == nil || !i.IsInt64() || t == bson.TypeInt32 && (i.Int64() < math.MinInt32 || i.Int64() > math.MaxInt32) {
			return overflow(d.String())
		}
		n = i.Int64()
	default:
		f := toFloat(v)
		if err := nonFiniteToInteger(math.IsNaN(f), math.IsInf(f, 0)); err != nil {
			return missing, err
		}
		if t == bson.TypeInt32 && (f < math.MinInt32 || f > math.MaxInt32) || f >= 9.223372036854775807e18 || f < -9.223372036854775808e18 {
			return overflow(values.StreamDouble(f))
		}
		n = int64(f)
	}
	return intOfType(n, t), nil
}

// nonFiniteToInteger is MongoDB's error for a NaN or an infinity converted
// to an integer type (or a date).
func nonFiniteToInteger(nan, inf bool) error {
	switch {
	case nan:
		return mongoerr.New(mongoerr.ConversionFailure, "Attempt to convert NaN value to integer type in $convert with no onError value")
	case inf:
		return mongoerr.New(mongoerr.ConversionFailure, "Attempt to convert infinity value to integer type in $convert with no onError value")
	}
	return nil
}

// parseNumber parses a string to a double as $convert does (its parser
// reads as strtod reads, but that it takes no space): decimal, or
// hexadecimal ("+0x1", "0X1.8p1"; the caller refuses one starting with
// "0x"), "inf", "infinity" and "nan" in any case and with a sign; nothing
// may follow the number. It fails with the reason MongoDB's NumberParser
// gives: an empty string, one starting with white space, one strtod reads
// nothing of, one not all a number, or one out of a double's range
// (strtod's ERANGE: beyond the largest double, or so small it is subnormal
// or 0).
func parseNumber(s string) (float64, string) {
	const notNumber = "Did not consume whole string."
	switch {
	case s == "":
		return 0, "Empty string"
	case strings.IndexByte(" \t\n\v\f\r", s[0]) >= 0:
		return 0, "Leading whitespace"
	case !strtodReads(s):
		return 0, "Did not consume any digits"
	case strings.ContainsAny(s, "_") || strings.IndexFunc(s, unicode.IsSpace) >= 0:
		return 0, notNumber
	}
	body := strings.TrimPrefix(strings.TrimPrefix(s, "+"), "-")
	lower := strings.ToLower(body)
	switch {
	case len(body) < len(s)-1:
		return 0, notNumber // two signs
	case lower == "nan":
		return math.NaN(), ""
	case strings.HasPrefix(lower, "0x") && !strings.Contains(lower, "p"):
		// a hexadecimal float without an exponent ("0xff")
		s += "p0"
	}
	f, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil && !math.IsInf(f, 0):
		return 0, notNumber
	case err != nil, f != 0 && math.Abs(f) < 0x1p-1022, f == 0 && strings.IndexFunc(mantissa(lower), func(r rune) bool { return r >= '1' && r <= '9' || r >= 'a' && r <= 'f' }) >= 0:
		return 0, "Out of range"
	}
	return f, ""
}

// strtodReads reports whether strtod reads a number from the start of s
// (which has no leading space): after one sign, a digit, a point and a
// digit, or "inf" or "nan" in any case.
func strtodReads(s string) bool {
	if s[0] == '+' || s[0] == '-' {
		s = s[1:]
	}
	lower := strings.ToLower(s)
	switch {
	case s == "":
		return false
	case s[0] >= '0' && s[0] <= '9':
		return true
	case s[0] == '.':
		return len(s) > 1 && s[1] >= '0' && s[1] <= '9'
	}
	return strings.HasPrefix(lower, "inf") || strings.HasPrefix(lower, "nan")
}

// mantissa is the digits of a number's text before its exponent (e, or p
// for a hexadecimal one), without a "0x" prefix.
func mantissa(lower string) string {
	if h, ok := strings.CutPrefix(lower, "0x"); ok {
		m, _, _ := strings.Cut(h, "p")
		return m
	}
	m, _, _ := strings.Cut(lower, "e")
	return m
}
