package expr

import (
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
	"go.mongodb.org/mongo-driver/v2/bson"
)

func init() {
	register(map[string]opCompiler{
		"$concat":       nary(0, -1, evalConcat),
		"$substr":       compileSubstrBytes,
		"$substrBytes":  compileSubstrBytes,
		"$substrCP":     nary(3, 3, evalSubstrCP),
		"$toUpper":      unary(caseOp('a', 'z')),
		"$toLower":      unary(caseOp('A', 'Z')),
		"$strLenBytes":  unary(strLen("$strLenBytes", mongoerr.StrLenBytesArgumentNotString, func(s string) int { return len(s) })),
		"$strLenCP":     unary(strLen("$strLenCP", mongoerr.StrLenCPArgumentNotString, utf8.RuneCountInString)),
		"$split":        binary(evalSplit),
		"$strcasecmp":   binary(evalStrcasecmp),
		"$indexOfBytes": nary(2, 4, indexOf("$indexOfBytes", mongoerr.IndexOfBytesStringNotString, mongoerr.IndexOfBytesSubstringNotString, false)),
		"$indexOfCP":    nary(2, 4, indexOf("$indexOfCP", mongoerr.IndexOfCPStringNotString, mongoerr.IndexOfCPSubstringNotString, true)),
		"$trim":         compileTrim(true, true),
		"$ltrim":        compileTrim(true, false),
		"$rtrim":        compileTrim(false, true),
	})
}

// coerceToString is MongoDB's Value::coerceToString, used by $substr*,
// $toUpper, $toLower and $strcasecmp: strings (and code) as they are,
// integers in decimal, doubles as C++ streams print them (6 significant
// digits, see values.StreamDouble), dates in ISO-8601 with milliseconds (a year
// outside 0-9999 is error 18537),
// timestamps as MongoDB prints them ("Jan  1 00:00:00:1": the server's
// local time of the seconds, then the increment), and null or missing as
// the empty string; other types are error 16007.
func coerceToString(v bson.RawValue) (string, error) {
	switch v.Type {
	case bson.TypeString, bson.TypeSymbol:
		s, _ := str(v)
		return s, nil
	case bson.TypeJavaScript:
		return v.JavaScript(), nil
	case bson.TypeInt32, bson.TypeInt64:
		return strconv.FormatInt(toInt(v), 10), nil
	case bson.TypeDouble:
		return values.StreamDouble(v.Double()), nil
	case bson.TypeDecimal128:
		return v.Decimal128().String(), nil
	case bson.TypeDateTime:
		return formatDate("%Y-%m-%dT%H:%M:%S.%LZ", time.UnixMilli(v.DateTime()).UTC())
	case bson.TypeTimestamp:
		t, i := v.Timestamp()
		return time.Unix(int64(t), 0).In(time.Local).Format("Jan _2 15:04:05") + ":" + strconv.FormatUint(uint64(i), 10), nil
	case 0, bson.TypeNull, bson.TypeUndefined:
		return "", nil
	}
	return "", mongoerr.New(mongoerr.StringConversionInvalidType, "can't convert from BSON type %s to String", typeName(v))
}

// formatDouble formats a double as $convert to string does (fmt's "{}"):
// the shortest decimal that reads back as it, in exponent form ("1e+16",
// "1.5e-05") when its decimal exponent is below -4 or 16 or more, else in
// positional form ("1000000000000000", "0.0001"); "Infinity", "-Infinity"
// and "NaN".
func formatDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	s := strconv.FormatFloat(f, 'e', -1, 64)
	if exp, _ := strconv.Atoi(s[strings.LastIndexByte(s, 'e')+1:]); exp < -4 || exp >= 16 {
		return s
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// evalConcat is $concat: null if any operand is null or missing; operands
// must be strings (error 16702). The result is bounded as MongoDB's
// StringBuilder bounds it (see bufferMaxSize).
func evalConcat(args []bson.RawValue) (bson.RawValue, error) {
	var b strings.Builder
	for _, a := range args {
		if isNullish(a) {
			return nullValue, nil
		}
		s, ok := a.StringValueOK()
		if !ok {
			return missing, mongoerr.New(mongoerr.ConcatArgumentNotString, "$concat only supports strings, not %s", typeName(a))
		}
		if n := b.Len() + len(s); n > bufferMaxSize {
			return missing, bufferTooLarge(n)
		}
		b.WriteString(s)
	}
	return stringValue(b.String()), nil
}

// bufferMaxSize is MongoDB's BufferMaxSize (125 MB): the StringBuilder that
// $concat, $replaceOne and $replaceAll write their result into fails with
// 13548 at the append that would take it past this many bytes, naming the
// size it would have reached.
const bufferMaxSize = 125 * 1024 * 1024

func bufferTooLarge(n int) error {
	return mongoerr.New(mongoerr.BufBuilderTooLarge, "BufBuilder attempted to grow() to %d bytes, past the 125MB limit.", n)
}

// replaceBounded is strings.Replace(s, old, repl, n) (n < 0 for every
// match) bounded as MongoDB's $replaceOne and $replaceAll bound it: they
// append the text before each match, then the replacement, then the rest
// (an empty old matches before each code point and at the end), and fail
// (see bufferMaxSize) at the append that would pass the bound. A
// $replaceOne that finds nothing returns s without building.
func replaceBounded(s, old, repl string, n int) (string, error) {
	count := strings.Count(s, old)
	if n >= 0 && count > n {
		count = n
	}
	if n >= 0 && count == 0 || len(s)+count*(len(repl)-len(old)) <= bufferMaxSize {
		return strings.Replace(s, old, repl, n), nil
	}
	total := 0
	grow := func(k int) bool { total += k; return total > bufferMaxSize }
	for i := 0; i < count; i++ {
		j := strings.Index(s, old)
		if old == "" && i > 0 {
			// past the first, an empty match is at the next code point
			_, j = utf8.DecodeRuneInString(s)
		}
		if grow(j) || grow(len(repl)) {
			return "", bufferTooLarge(total)
		}
		s = s[j+len(old):]
	}
	grow(len(s))
	return "", bufferTooLarge(total)
}

// compileSubstrBytes compiles $substrBytes and its alias $substr, both
// named $substrBytes in their messages (16020 too), as MongoDB's one
// ExpressionSubstrBytes, whose getOpName is "$substrBytes", parses both.
func compileSubstrBytes(c *compiler, _ string, v bson.RawValue, s *Scope) (*Expr, error) {
	return substrBytesOp(c, "$substrBytes", v, s)
}

var substrBytesOp = nary(3, 3, substrBytes("$substrBytes"))

// substrBytes builds $substrBytes (and its alias $substr): [string, start,
// length] in bytes; a negative length runs to the end, a start past the end
// gives "". Cutting through a UTF-8 character is error 28656/28657.
func substrBytes(op string) naryFn {
	return func(args []bson.RawValue) (bson.RawValue, error) {
		s, err := coerceToString(args[0])
		if err != nil {
			return missing, err
		}
		if !isNumber(args[1]) {
			return missing, mongoerr.New(mongoerr.SubstrStartNotNumber, "%s:  starting index must be a numeric type (is BSON type %s)", op, typeName(args[1]))
		}
		if !isNumber(args[2]) {
			return missing, mongoerr.New(mongoerr.SubstrLengthNotNumber, "%s:  length must be a numeric type (is BSON type %s)", op, typeName(args[2]))
		}
		start, err := coerceToLong(args[1])
		if err != nil {
			return missing, err
		}
		length, err := coerceToLong(args[2])
		if err != nil {
			return missing, err
		}
		if start < 0 {
			return missing, mongoerr.New(mongoerr.SubstrStartNegative, "%s:  starting index must be non-negative (got: %d)", op, start)
		}
		if start >= int64(len(s)) {
			return stringValue(""), nil
		}
		if start > 0 && !utf8.RuneStart(s[start]) {
			return missing, mongoerr.New(mongoerr.SubstrStartContinuationByte, "%s:  Invalid range, starting index is a UTF-8 continuation byte.", op)
		}
		end := int64(len(s))
		if length >= 0 && length < end-start { // start+length may overflow
			end = start + length
		}
		if end < int64(len(s)) && !utf8.RuneStart(s[end]) {
			return missing, mongoerr.New(mongoerr.SubstrEndMidCharacter, "%s:  Invalid range, ending index is in the middle of a UTF-8 character.", op)
		}
		return stringValue(s[start:end]), nil
	}
}

// int32Arg reports whether v is a number holding a 32-bit integer.
func int32Arg(v bson.RawValue) (int32, bool) {
	n, ok := values.Int64(v)
	if !ok || n < -1<<31 || n >= 1<<31 {
		return 0, false
	}
	return int32(n), true
}

// evalSubstrCP is $substrCP: [string, start, count] in code points; start
// and count must be non-negative 32-bit integers.
func evalSubstrCP(args []bson.RawValue) (bson.RawValue, error) {
	s, err := coerceToString(args[0])
	if err != nil {
		return missing, err
	}
	if !isNumber(args[1]) {
		return missing, mongoerr.New(mongoerr.SubstrCPStartNotNumber, "$substrCP: starting index must be a numeric type (is BSON type %s)", typeName(args[1]))
	}
	start, ok := int32Arg(args[1])
	if !ok {
		return missing, mongoerr.New(mongoerr.SubstrCPStartNotInt32, "$substrCP: starting index cannot be represented as a 32-bit integral value: %s", values.ValueString(args[1]))
	}
	if !isNumber(args[2]) {
		return missing, mongoerr.New(mongoerr.SubstrCPLengthNotNumber, "$substrCP: length must be a numeric type (is BSON type %s)", typeName(args[2]))
	}
	count, ok := int32Arg(args[2])
	if !ok {
		return missing, mongoerr.New(mongoerr.SubstrCPLengthNotInt32, "$substrCP: length cannot be represented as a 32-bit integral value: %s", values.ValueString(args[2]))
	}
	if count < 0 {
		return missing, mongoerr.New(mongoerr.SubstrCPLengthNegative, "$substrCP: length must be a nonnegative integer.")
	}
	if start < 0 {
		return missing, mongoerr.New(mongoerr.SubstrCPStartNegative, "$substrCP: the starting index must be nonnegative integer.")
	}
	i := 0
	for n := int32(0); n < start && i < len(s); n++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	j := i
	for n := int32(0); n < count && j < len(s); n++ {
		_, size := utf8.DecodeRuneInString(s[j:])
		j += size
	}
	return stringValue(s[i:j]), nil
}

// caseOp builds $toUpper and $toLower: the operand coerced to a string
// (null gives ""), with only ASCII letters changed as in MongoDB.
func caseOp(lo, hi byte) unaryFn {
	return func(v bson.RawValue) (bson.RawValue, error) {
		s, err := coerceToString(v)
		if err != nil {
			return missing, err
		}
		b := []byte(s)
		for i, c := range b {
			if c >= lo && c <= hi {
				b[i] = c ^ 0x20
			}
		}
		return stringValue(string(b)), nil
	}
}

// strLen builds $strLenBytes and $strLenCP: the operand must be a string
// (null included is an error).
func strLen(op string, code mongoerr.Code, count func(string) int) unaryFn {
	return func(v bson.RawValue) (bson.RawValue, error) {
		s, ok := v.StringValueOK()
		if !ok {
			return missing, mongoerr.New(code, "%s requires a string argument, found: %s", op, typeName(v))
		}
		return intValue(int64(count(s))), nil
	}
}

// evalSplit is $split: [string, delimiter] → array of substrings; null or
// missing operands give null; an empty delimiter is error 40087.
func evalSplit(a, b bson.RawValue) (bson.RawValue, error) {
	if isNullish(a) || isNullish(b) {
		return nullValue, nil
	}
	s, ok := a.StringValueOK()
	if !ok {
		return missing, mongoerr.New(mongoerr.SplitInputNotString, "$split requires an expression that evaluates to a string as a first argument, found: %s", typeName(a))
	}
	sep, ok := b.StringValueOK()
	if !ok {
		return missing, mongoerr.New(mongoerr.SplitSeparatorNotString, "$split requires an expression that evaluates to a string as a second argument, found: %s", typeName(b))
	}
	if sep == "" {
		return missing, mongoerr.New(mongoerr.SplitSeparatorEmpty, "$split requires a non-empty separator")
	}
	parts := strings.Split(s, sep)
	out := make([]bson.RawValue, len(parts))
	for i, p := range parts {
		out[i] = stringValue(p)
	}
	return arrayValue(out), nil
}

// evalStrcasecmp is $strcasecmp: both operands coerced to strings and
// compared ignoring ASCII case; -1, 0 or 1.
func evalStrcasecmp(a, b bson.RawValue) (bson.RawValue, error) {
	x, err := coerceToString(a)
	if err != nil {
		return missing, err
	}
	y, err := coerceToString(b)
	if err != nil {
		return missing, err
	}
	return values.Int32Value(int32(strings.Compare(asciiUpper(x), asciiUpper(y)))), nil
}

func asciiUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 0x20
		}
	}
	return string(b)
}

// indexOf builds $indexOfBytes and $indexOfCP: [string, substring, start,
// end] → the first index of substring in string[start:end] (bytes or code
// points), or -1. A null or missing string gives null.
func indexOf(op string, strCode, subCode mongoerr.Code, cp bool) naryFn {
	return func(args []bson.RawValue) (bson.RawValue, error) {
		if isNullish(args[0]) {
			return nullValue, nil
		}
		s, ok := args[0].StringValueOK()
		if !ok {
			return missing, mongoerr.New(strCode, "%s requires a string as the first argument, found: %s", op, typeName(args[0]))
		}
		sub, ok := args[1].StringValueOK()
		if !ok {
			return missing, mongoerr.New(subCode, "%s requires a string as the second argument, found: %s", op, typeName(args[1]))
		}
		length := len(s)
		if cp {
			length = utf8.RuneCountInString(s)
		}
		start, end, err := indexBounds(op, args, length)
		if err != nil || start < 0 {
			return values.Int32Value(-1), err
		}
		if cp {
			// MongoDB tries each code point from start up to (not
			// including) end: a match there counts though it runs past end,
			// and an empty substring at end is not found, except in an
			// empty string.
			if s == "" && sub == "" {
				return values.Int32Value(0), nil
			}
			bs := runeOffset(s, start)
			i := strings.Index(s[bs:], sub)
			if i < 0 {
				return values.Int32Value(-1), nil
			}
			if p := start + utf8.RuneCountInString(s[bs:bs+i]); p < end {
				return intValue(int64(p)), nil
			}
			return values.Int32Value(-1), nil
		}
		i := strings.Index(s[start:end], sub)
		if i < 0 {
			return values.Int32Value(-1), nil
		}
		return intValue(int64(start + i)), nil
	}
}

// runeOffset is the byte offset of the n-th code point of s (len(s) past
// the end).
func runeOffset(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// indexBounds reads the optional start and end indexes of $indexOfBytes,
// $indexOfCP and $indexOfArray: non-negative integers (errors 40096 and
// 40097), end defaulting to and capped at length. start is -1 when the
// range is empty and nothing can match. The messages are MongoDB's
// uassertIfNotIntegralAndNonNegative's, naming the "starting index" or the
// "ending index", the first without a space after the operator's name.
func indexBounds(op string, args []bson.RawValue, length int) (start, end int, err error) {
	end = length
	for i := 2; i < len(args); i++ {
		what := "starting index"
		if i == 3 {
			what = "ending index"
		}
		n, ok := values.Int64(args[i])
		if !isNumber(args[i]) || !ok || n < -1<<31 || n >= 1<<31 {
			return -1, 0, mongoerr.New(mongoerr.IndexOfStartNotIntegral, "%srequires an integral %s, found a value of type: %s, with value: %s", op, what, typeName(args[i]), values.ValueString(args[i]))
		}
		if n < 0 {
			return -1, 0, mongoerr.New(mongoerr.IndexOfStartNegative, "%s requires a nonnegative %s, found: %s", op, what, values.ValueString(args[i]))
		}
		if i == 2 {
			start = int(n)
		} else if int(n) < end {
			end = int(n)
		}
	}
	if start > end || start > length {
		return -1, 0, nil
	}
	return start, end, nil
}

// defaultTrimChars are the characters $trim removes without "chars": the
// null byte and the whitespace MongoDB's manual lists (U+0009 to U+000D,
// space, U+00A0, U+1680 and U+2000 to U+200A), not every Unicode space.
const defaultTrimChars = "\x00 \t\n\v\f\r\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"

// compileTrim builds $trim, $ltrim and $rtrim: {input, chars}; null or
// missing input or chars gives null.
func compileTrim(left, right bool) opCompiler {
	return func(c *compiler, name string, v bson.RawValue, s *Scope) (*Expr, error) {
		if v.Type != bson.TypeEmbeddedDocument {
			return nil, mongoerr.New(mongoerr.TrimSpecNotObject, "%s only supports an object as an argument, found: %s", name, typeName(v))
		}
		args, err := namedArgs(name, v, mongoerr.TrimSpecNotObject, mongoerr.TrimUnknownArgument, "input", "chars")
		if err != nil {
			return nil, err
		}
		in, ok := args["input"]
		if !ok {
			return nil, mongoerr.New(mongoerr.TrimMissingInput, "%s requires an 'input' field", name)
		}
		input, err := c.compile(in, s)
		if err != nil {
			return nil, err
		}
		var chars *Expr
		if ch, ok := args["chars"]; ok {
			if chars, err = c.compile(ch, s); err != nil {
				return nil, err
			}
		}
		parts := []*Expr{input}
		if chars != nil {
			parts = append(parts, chars)
		}
		return c.fold(parts, func(st *state) (bson.RawValue, error) {
			iv, err := input.eval(st)
			if err != nil {
				return missing, err
			}
			if isNullish(iv) {
				return nullValue, nil
			}
			str1, ok := iv.StringValueOK()
			if !ok {
				return missing, mongoerr.New(mongoerr.TrimInputNotString, "%s requires its input to be a string, got %s (of type %s) instead.", name, values.ValueString(iv), typeName(iv))
			}
			cut := defaultTrimChars
			if chars != nil {
				cv, err := chars.eval(st)
				if err != nil {
					return missing, err
				}
				if isNullish(cv) {
					return nullValue, nil
				}
				if cut, ok = cv.StringValueOK(); !ok {
					return missing, mongoerr.New(mongoerr.TrimCharsNotString, "%s requires 'chars' to be a string, got %s (of type %s) instead.", name, values.ValueString(cv), typeName(cv))
				}
			}
			if left {
				str1 = strings.TrimLeft(str1, cut)
			}
			if right {
				str1 = strings.TrimRight(str1, cut)
			}
			return stringValue(str1), nil
		})
	}
}
