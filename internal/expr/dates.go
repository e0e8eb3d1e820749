package expr

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/values"
	"go.mongodb.org/mongo-driver/v2/bson"
)

func init() {
	parts := map[string]func(time.Time) int{
		"$year":         func(t time.Time) int { return t.Year() },
		"$month":        func(t time.Time) int { return int(t.Month()) },
		"$dayOfMonth":   func(t time.Time) int { return t.Day() },
		"$hour":         func(t time.Time) int { return t.Hour() },
		"$minute":       func(t time.Time) int { return t.Minute() },
		"$second":       func(t time.Time) int { return t.Second() },
		"$millisecond":  func(t time.Time) int { return t.Nanosecond() / 1e6 },
		"$dayOfWeek":    func(t time.Time) int { return int(t.Weekday()) + 1 },
		"$dayOfYear":    func(t time.Time) int { return t.YearDay() },
		"$week":         sundayWeek,
		"$isoWeek":      func(t time.Time) int { _, w := t.ISOWeek(); return w },
		"$isoWeekYear":  func(t time.Time) int { y, _ := t.ISOWeek(); return y },
		"$isoDayOfWeek": isoWeekday,
	}
	ops := map[string]opCompiler{
		"$dateToString":   compileDateToString,
		"$dateFromString": compileDateFromString,
		"$dateFromParts":  compileDateFromParts,
		"$dateToParts":    compileDateToParts,
		"$dateAdd":        compileDateAdd(1),
		"$dateSubtract":   compileDateAdd(-1),
		"$dateDiff":       compileDateDiff,
		"$dateTrunc":      compileDateTrunc,
	}
	for name, fn := range parts {
		ops[name] = compileDatePart(fn, name == "$isoWeekYear")
	}
	register(ops)
}

// compileDatePart builds $year, $month, ... $isoDayOfWeek: the operand is a
// date expression, a one-element array, or {date, timezone}. As MongoDB,
// it evaluates and converts the date before the timezone: a null or
// missing date, then timezone, gives null, and a timezone that is not a
// string is 40533. The part is an int, or a long when long is set:
// MongoDB's $isoWeekYear is a long, the others ints.
func compileDatePart(part func(time.Time) int, long bool) opCompiler {
	return func(c *compiler, name string, v bson.RawValue, s *Scope) (*Expr, error) {
		var date, tz *Expr
		var err error
		switch {
		case v.Type == bson.TypeEmbeddedDocument && !strings.HasPrefix(rawdoc.FirstKey(v.Value), "$") && rawdoc.FirstKey(v.Value) != "":
			args, err := c.compileNamed(name, v, s, mongoerr.DatePartUnknownArgument, mongoerr.DatePartUnknownArgument, "date", "timezone")
			if err != nil {
				return nil, err
			}
			args.defaultTimezone()
			if date = args["date"]; date == nil {
				return nil, mongoerr.New(mongoerr.DatePartMissingDate, "missing 'date' argument to %s, provided: %s", name, v)
			}
			tz = args["timezone"]
		case v.Type == bson.TypeArray:
			list := elems(v)
			if len(list) != 1 {
				return nil, mongoerr.New(mongoerr.DatePartArrayArity, "%s accepts exactly one argument if given an array, but was given %d", name, len(list))
			}
			if date, err = c.compile(list[0], s); err != nil {
				return nil, err
			}
		default:
			if date, err = c.compile(v, s); err != nil {
				return nil, err
			}
		}
		if tz == nil {
			tz = utcZone
		}
		return c.fold([]*Expr{date, tz}, func(st *state) (bson.RawValue, error) {
			dv, err := date.eval(st)
			if err != nil || isNullish(dv) {
				return nullValue, err
			}
			t, err := toTime(dv)
			if err != nil {
				return missing, err
			}
			zv, err := tz.eval(st)
			if err != nil || isNullish(zv) {
				return nullValue, err
			}
			if zv.Type != bson.TypeString {
				return missing, mongoerr.New(mongoerr.DatePartTimezoneNotString, "%s requires a string for the timezone argument, but was given a %s (%s)", name, typeName(zv), zv)
			}
			loc, _, err := parseTimezone(zv)
			if err != nil {
				return missing, err
			}
			t = t.In(loc)
			if long {
				return values.Int64Value(int64(part(t))), nil
			}
			return values.Int32Value(int32(part(t))), nil
		})
	}
}

// compileDateToString is $dateToString: {date, format, timezone, onNull}.
// The default format is "%Y-%m-%dT%H:%M:%S.%LZ". As MongoDB, it checks the
// format and the timezone first; then a null or missing date gives onNull
// (or null), before a null timezone or format gives null.
func compileDateToString(c *compiler, name string, v bson.RawValue, s *Scope) (*Expr, error) {
	args, err := c.compileNamed(name, v, s, mongoerr.DateToStringSpecNotObject, mongoerr.DateToStringUnknownArgument, "date", "format", "timezone", "onNull")
	if err != nil {
		return nil, err
	}
	args.defaultTimezone()
	if args["date"] == nil {
		return nil, mongoerr.New(mongoerr.DateToStringMissingDate, "Missing 'date' parameter to $dateToString")
	}
	if f := args["format"]; f != nil && f.constant {
		if fs, ok := str(f.value); ok {
			if err := checkFormat(fs, toStringSpecifiers); err != nil {
				return nil, err
			}
		} else if !isNullish(f.value) {
			return nil, mongoerr.New(mongoerr.DateToStringFormatNotString, "$dateToString requires that 'format' be a string, found: %s with value %s", typeName(f.value), f.value)
		}
	}
	return c.fold(args.list(), func(st *state) (bson.RawValue, error) {
		dv, err := args.get(st, "date")
		if err != nil {
			return missing, err
		}
		format, nullFormat, err := args.format(st, "$dateToString", mongoerr.DateToStringFormatNotString, toStringSpecifiers)
		if err != nil {
			return missing, err
		}
		if format == "" {
			format = "%Y-%m-%dT%H:%M:%S.%LZ"
		}
		loc, nullTZ, err := args.zone(st)
		if err != nil {
			return missing, err
		}
		if isNullish(dv) {
			if args["onNull"] != nil {
				return args["onNull"].eval(st)
			}
			return nullValue, nil
		}
		if nullTZ || nullFormat {
			return nullValue, nil
		}
		t, err := toTime(dv)
		if err != nil {
			return missing, err
		}
		out, err := formatDate(format, t.In(loc))
		if err != nil {
			return missing, err
		}
		return stringValue(out), nil
	})
}

// toStringSpecifiers are the % specifiers of a $dateToString format.
const toStringSpecifiers = "bBdGHjLmMSuUVwYzZ"

// checkFormat validates a format string: each % is followed by one of
// specifiers or another %.
func checkFormat(f, specifiers string) error {
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		if i+1 == len(f) {
			return mongoerr.New(mongoerr.DateFormatTrailingPercent, "Unmatched '%' at end of format string")
		}
		i++
		if f[i] != '%' && !strings.ContainsRune(specifiers, rune(f[i])) {
			return mongoerr.New(mongoerr.DateFormatInvalidSpecifier, "Invalid format character '%%%c' in format string", f[i])
		}
	}
	return nil
}

// formatDate expands MongoDB's date format specifiers for t (already in its
// timezone).
func formatDate(f string, t time.Time) (string, error) {
	var b strings.Builder
	pad := func(n, width int) { fmt.Fprintf(&b, "%0*d", width, n) }
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			b.WriteByte(f[i])
			continue
		}
		i++
		switch f[i] {
		case 'b':
			b.WriteString(t.Month().String()[:3])
		case 'B':
			b.WriteString(t.Month().String())
		case 'd':
			pad(t.Day(), 2)
		case 'G':
			y, _ := t.ISOWeek()
			if y < 0 || y > 9999 {
				return "", mongoerr.New(mongoerr.DateToStringYearOutOfRange, "Could not convert date to string: date component was outside the supported range of 0-9999: %d", y)
			}
			pad(y, 4)
		case 'H':
			pad(t.Hour(), 2)
		case 'j':
			pad(t.YearDay(), 3)
		case 'L':
			pad(t.Nanosecond()/1e6, 3)
		case 'm':
			pad(int(t.Month()), 2)
		case 'M':
			pad(t.Minute(), 2)
		case 'S':
			pad(t.Second(), 2)
		case 'u':
			pad(isoWeekday(t), 1)
		case 'U':
			pad(sundayWeek(t), 2)
		case 'V':
			_, w := t.ISOWeek()
			pad(w, 2)
		case 'w':
			pad(int(t.Weekday())+1, 1)
		case 'Y':
			if t.Year() < 0 || t.Year() > 9999 {
				return "", mongoerr.New(mongoerr.DateToStringYearOutOfRange, "Could not convert date to string: date component was outside the supported range of 0-9999: %d", t.Year())
			}
			pad(t.Year(), 4)
		case 'z':
			_, off := t.Zone()
			sign := byte('+')
			if off < 0 {
				sign, off = '-', -off
			}
			b.WriteByte(sign)
			pad(off/3600, 2)
			pad(off%3600/60, 2)
		case 'Z':
			_, off := t.Zone()
			b.WriteString(strconv.Itoa(off / 60))
		case '%':
			b.WriteByte('%')
		}
	}
	return b.String(), nil
}

// compileDateFromString is $dateFromString: {dateString, format, timezone,
// onError, onNull}. As MongoDB, it checks the format and the timezone
// first (errors onError does not catch); then a null or missing dateString
// gives onNull (or null); then a dateString that is not a string, or does
// not parse, gives onError, or error 241, before a null timezone or format
// gives null.
func compileDateFromString(c *compiler, name string, v bson.RawValue, s *Scope) (*Expr, error) {
	if v.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.DateFromStringSpecNotObject, "$dateFromString only supports an object as an argument, found: %s", typeName(v))
	}
	args, err := c.compileNamed(name, v, s, mongoerr.DateFromStringSpecNotObject, mongoerr.DateFromStringUnknownArgument, "dateString", "format", "timezone", "onError", "onNull")
	if err != nil {
		return nil, err
	}
	args.defaultTimezone()
	if args["dateString"] == nil {
		return nil, mongoerr.New(mongoerr.DateFromStringMissingDateString, "Missing 'dateString' parameter to $dateFromString")
	}
	return c.fold(args.list(), func(st *state) (bson.RawValue, error) {
		sv, err := args.get(st, "dateString")
		if err != nil {
			return missing, err
		}
		format, nullFormat, err := args.format(st, "$dateFromString", mongoerr.DateFromStringFormatNotString, fromStringSpecifiers)
		if err != nil {
			return missing, err
		}
		loc, nullTZ, err := args.zone(st)
		if err != nil {
			return missing, err
		}
		if isNullish(sv) {
			if args["onNull"] != nil {
				return args["onNull"].eval(st)
			}
			return nullValue, nil
		}
		failure := func(err error) (bson.RawValue, error) {
			if args["onError"] != nil {
				return args["onError"].eval(st)
			}
			return missing, err
		}
		ds, ok := str(sv)
		if !ok {
			return failure(mongoerr.New(mongoerr.ConversionFailure, "$dateFromString requires that 'dateString' be a string, found: %s with value %s", typeName(sv), sv))
		}
		if nullTZ || nullFormat {
			return nullValue, nil
		}
		t, err := parseDate(ds, format, loc)
		if err != nil {
			return failure(err)
		}
		return dateValue(t.UnixMilli()), nil
	})
}

// compileDateFromParts is $dateFromParts: {year, month, day, hour, minute,
// second, millisecond, timezone} or the ISO form {isoWeekYear, isoWeek,
// isoDayOfWeek, ...}. Parts out of their natural range carry into the next
// unit. As MongoDB, it evaluates hour, minute, second and millisecond,
// then the timezone, then the date parts, returning null at the first null
// or missing one; month, day, hour, minute, isoWeek and isoDayOfWeek must
// be in [-32768, 32767] (31034), second and millisecond may be any 64-bit
// integer, but milliseconds must fit a 64-bit count of microseconds (159).
func compileDateFromParts(c *compiler, name string, v bson.RawValue, s *Scope) (*Expr, error) {
	args, err := c.compileNamed(name, v, s, mongoerr.DateFromPartsSpecNotObject, mongoerr.DateFromPartsUnknownArgument, "year", "month", "day", "isoWeekYear", "isoWeek", "isoDayOfWeek", "hour", "minute", "second", "millisecond", "timezone")
	if err != nil {
		return nil, err
	}
	args.defaultTimezone()
	iso := args["isoWeekYear"] != nil
	switch {
	case !iso && args["year"] == nil:
		return nil, mongoerr.New(mongoerr.DateFromPartsMissingYear, "%s requires either 'year' or 'isoWeekYear' to be present", name)
	case args["year"] != nil && (iso || args["isoWeek"] != nil || args["isoDayOfWeek"] != nil):
		return nil, mongoerr.New(mongoerr.DateFromPartsMixedISO, "%s does not allow mixing natural dates with ISO dates", name)
	case iso && (args["month"] != nil || args["day"] != nil):
		return nil, mongoerr.New(mongoerr.DateFromPartsMixedNatural, "%s does not allow mixing ISO dates with natural dates", name)
	}
	date := [3]string{"year", "month", "day"}
	if iso {
		date = [3]string{"isoWeekYear", "isoWeek", "isoDayOfWeek"}
	}
	// part evaluates the part k (def when absent); null reports null or missing.
	part := func(st *state, k string, def int64, bounded bool) (x int64, null bool, err error) {
		if args[k] == nil {
			return def, false, nil
		}
		pv, err := args[k].eval(st)
		if err != nil || isNullish(pv) {
			return 0, err == nil, err
		}
		x, ok := values.Int64(pv)
		if !isNumber(pv) || !ok {
			return 0, false, mongoerr.New(mongoerr.DateFromPartsPartNotInteger, "'%s' must evaluate to an integer, found %s with value %s", k, typeName(pv), pv)
		}
		if bounded && (x < -32768 || x > 32767) {
			return 0, false, mongoerr.New(mongoerr.DateFromPartsOutOfRange, "'%s' must evaluate to a value in the range [-32768, 32767]; value %d is not in range", k, x)
		}
		return x, false, nil
	}
	return c.fold(args.list(), func(st *state) (bson.RawValue, error) {
		// hour, minute, second, millisecond, then year, month, day.
		var p [7]int64
		for i, k := range [4]string{"hour", "minute", "second", "millisecond"} {
			x, null, err := part(st, k, 0, i < 2)
			if err != nil || null {
				return nullValue, err
			}
			p[3+i] = x
		}
		loc, nullTZ, err := args.zone(st)
		if err != nil || nullTZ {
			return nullValue, err
		}
		for i, k := range date {
			x, null, err := part(st, k, 1, i > 0)
			if err != nil || null {
				return nullValue, err
			}
			p[i] = x
		}
		if p[0] < 1 || p[0] > 9999 {
			if iso {
				return missing, mongoerr.New(mongoerr.DateFromPartsISOWeekYearOutOfRange, "'isoWeekYear' must evaluate to an integer in the range 1 to 9999, found %d", p[0])
			}
			return missing, mongoerr.New(mongoerr.DateFromPartsYearOutOfRange, "'year' must evaluate to an integer in the range 1 to 9999, found %d", p[0])
		}
		if p[6] > math.MaxInt64/1000 || p[6] < math.MinInt64/1000 {
			return missing, mongoerr.New(mongoerr.DurationOverflow, "Overflow casting from a lower-precision duration to a higher-precision duration")
		}
		// The parts carry into larger ones as timelib normalizes them:
		// second and millisecond are unbounded, so carry in int64 (Go's
		// time.Date would overflow on a huge second) and refuse a date
		// past the range of milliseconds, as MongoDB converting the
		// seconds since the epoch to milliseconds (DurationOverflow).
		overflow := mongoerr.New(mongoerr.DurationOverflow, "Overflow casting from a lower-precision duration to a higher-precision duration")
		carry := floorDiv(p[6], 1000)
		sec, ms := p[5]+carry, p[6]-carry*1000
		if (sec < p[5]) != (carry < 0) {
			return missing, overflow
		}
		minute := p[4] + floorDiv(sec, 60)
		sec -= floorDiv(sec, 60) * 60
		hour := p[3] + floorDiv(minute, 60)
		minute -= floorDiv(minute, 60) * 60
		days := floorDiv(hour, 24)
		hour -= days * 24
		y, m, d := int(p[0]), time.Month(p[1]), p[2]
		if iso {
			week1 := isoWeekOne(y, loc)
			y, m, d = week1.Year(), week1.Month(), int64(week1.Day())+(p[1]-1)*7+p[2]-1
		}
		if days += d; days > 1<<38 || days < -1<<38 {
			return missing, overflow
		}
		t := time.Date(y, m, int(days), int(hour), int(minute), int(sec), int(ms)*1e6, loc)
		if u := t.Unix(); u > math.MaxInt64/1000 || u < math.MinInt64/1000 {
			return missing, overflow
		}
		return dateValue(t.UnixMilli()), nil
	})
}

// compileDateToParts is $dateToParts: {date, timezone, iso8601} → a document
// of the date's parts. As MongoDB, a null or missing timezone, then
// iso8601, then date gives null.
func compileDateToParts(c *compiler, name string, v bson.RawValue, s *Scope) (*Expr, error) {
	args, err := c.compileNamed(name, v, s, mongoerr.DateToPartsSpecNotObject, mongoerr.DateToPartsUnknownArgument, "date", "timezone", "iso8601")
	if err != nil {
		return nil, err
	}
	args.defaultTimezone()
	if args["date"] == nil {
		return nil, mongoerr.New(mongoerr.DateToPartsMissingDate, "Missing 'date' parameter to %s", name)
	}
	return c.fold(args.list(), func(st *state) (bson.RawValue, error) {
		dv, err := args.get(st, "date")
		if err != nil {
			return missing, err
		}
		loc, nullTZ, err := args.zone(st)
		if err != nil || nullTZ {
			return nullValue, err
		}
		iv := bson.RawValue{Type: bson.TypeBoolean, Value: []byte{0}}
		if args["iso8601"] != nil {
			if iv, err = args["iso8601"].eval(st); err != nil || isNullish(iv) {
				return nullValue, err
			}
			if iv.Type != bson.TypeBoolean {
				return missing, mongoerr.New(mongoerr.DateToPartsISO8601NotBool, "iso8601 must evaluate to a bool, found %s", typeName(iv))
			}
		}
		if isNullish(dv) {
			return nullValue, nil
		}
		t, err := toTime(dv)
		if err != nil {
			return missing, err
		}
		t = t.In(loc)
		var d docBuilder
		if iv.Boolean() {
			y, w := t.ISOWeek()
			d.set("isoWeekYear", values.Int32Value(int32(y)))
			d.set("isoWeek", values.Int32Value(int32(w)))
			d.set("isoDayOfWeek", values.Int32Value(int32(isoWeekday(t))))
		} else {
			d.set("year", values.Int32Value(int32(t.Year())))
			d.set("month", values.Int32Value(int32(t.Month())))
			d.set("day", values.Int32Value(int32(t.Day())))
		}
		d.set("hour", values.Int32Value(int32(t.Hour())))
		d.set("minute", values.Int32Value(int32(t.Minute())))
		d.set("second", values.Int32Value(int32(t.Second())))
		d.set("millisecond", values.Int32Value(int32(t.Nanosecond()/1e6)))
		return d.value(), nil
	})
}

// unitArg reads the unit of $dateDiff and $dateTrunc (errors 5439013 and
// 5439014).
func unitArg(name string, v bson.RawValue) (string, error) {
	u, ok := str(v)
	if !ok {
		return "", mongoerr.New(mongoerr.TimeUnitNotString, "%s requires 'unit' to be a string, but got %s", name, typeName(v))
	}
	if _, ok := dateUnits[u]; !ok {
		return "", mongoerr.New(mongoerr.TimeUnitInvalid, "%s parameter 'unit' value cannot be recognized as a time unit: %s", name, u)
	}
	return u, nil
}

// addUnits adds n units to t (in its location). Calendar units clamp the
// day to the end of a shorter month, as MongoDB does; day and week move the
// local date; smaller units are exact milliseconds (a time.Duration, in
// nanoseconds, would overflow past 292 years). ok is false when the
// milliseconds overflow.
func addUnits(t time.Time, unit string, n int64) (r time.Time, ok bool) {
	months := int64(0)
	switch unit {
	case "year":
		months = 12 * n
	case "quarter":
		months = 3 * n
	case "month":
		months = n
	case "day":
		return t.AddDate(0, 0, int(n)), true
	case "week":
		return t.AddDate(0, 0, int(7*n)), true
	default:
		u := dateUnits[unit].Milliseconds()
		d := n * u
		ms := t.UnixMilli() + d
		ok := d/u == n && (d >= 0) == (ms >= t.UnixMilli())
		return time.UnixMilli(ms).In(t.Location()), ok
	}
	total := int64(t.Year())*12 + int64(t.Month()) - 1 + months
	y, m := int(total/12), time.Month(total%12+1)
	if total < 0 && total%12 != 0 {
		y, m = int(total/12)-1, time.Month(total%12+13)
	}
	day := min(t.Day(), time.Date(y, m+1, 0, 0, 0, 0, 0, t.Location()).Day())
	return time.Date(y, m, day, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), t.Location()), true
}

// dateAddAmountValid is MongoDB's isDateAddAmountValid: an amount of a
// unit other than millisecond must be below what spans the range of a
// date (2^64 milliseconds, in days of 24 hours and years of 365 days).
func dateAddAmountValid(n int64, unit string) bool {
	const maxDays = math.MaxUint64/(24*3600*1000) + 1
	const maxYears = maxDays/365 + 1
	limit := map[string]int64{
		"year": maxYears, "quarter": maxYears * 4, "month": maxYears * 12, "week": maxDays / 7,
		"day": maxDays, "hour": maxDays * 24, "minute": maxDays * 24 * 60, "second": maxDays * 24 * 3600,
	}[unit]
	return -limit < n && n < limit
}

// compileDateAdd builds $dateAdd (sign 1) and $dateSubtract (sign -1):
// {startDate, unit, amount, timezone}. A null or missing operand gives null.
func compileDateAdd(sign int64) opCompiler {
	return func(c *compiler, name string, v bson.RawValue, s *Scope) (*Expr, error) {
		args, err := c.compileNamed(name, v, s, mongoerr.DateAddSpecNotObject, mongoerr.DateAddUnknownArgument, "startDate", "unit", "amount", "timezone")
		if err != nil {
			return nil, err
		}
		args.defaultTimezone()
		for _, k := range []string{"startDate", "unit", "amount"} {
			if args[k] == nil {
				return nil, mongoerr.New(mongoerr.DateAddMissingRequired, "%s requires startDate, unit, and amount to be present", name)
			}
		}
		return c.fold(args.list(), func(st *state) (bson.RawValue, error) {
			var vals [3]bson.RawValue
			if null, err := args.leading(st, vals[:], "startDate", "unit", "amount"); err != nil || null {
				return nullValue, err
			}
			loc, nullTZ, err := args.zone(st)
			if err != nil || nullTZ {
				return nullValue, err
			}
			if vals[0].Type != bson.TypeDateTime && vals[0].Type != bson.TypeTimestamp && vals[0].Type != bson.TypeObjectID {
				return missing, mongoerr.New(mongoerr.DateAddStartDateInvalidType, "%s requires startDate to be convertible to a date", name)
			}
			t, _ := toTime(vals[0])
			u, ok := str(vals[1])
			if !ok {
				return missing, mongoerr.New(mongoerr.DateAddUnitNotString, "%s expects string defining the time unit", name)
			}
			if _, known := dateUnits[u]; !known {
				return missing, mongoerr.New(mongoerr.FailedToParse, "unknown time unit value: %s", u)
			}
			n, ok := values.Int64(vals[2])
			if !isNumber(vals[2]) || !ok {
				return missing, mongoerr.New(mongoerr.DateAddAmountNotInteger, "%s expects integer amount of time units", name)
			}
			if sign < 0 && n == math.MinInt64 {
				return missing, mongoerr.New(mongoerr.DateSubtractAmountInvalid, "invalid $dateSubtract 'amount' parameter value: %d", n)
			}
			n *= sign
			if u != "millisecond" && !dateAddAmountValid(n, u) {
				return missing, mongoerr.New(mongoerr.DateAddAmountInvalid, "invalid dateAdd 'amount' parameter value: %d %s", n, u)
			}
			r, ok := addUnits(t.In(loc), u, n)
			if sec := r.Unix(); !ok || sec > math.MaxInt64/1000 || sec < math.MinInt64/1000 {
				return missing, mongoerr.New(mongoerr.DateAddOverflow, "dateAdd overflowed")
			}
			return dateValue(r.UnixMilli()), nil
		})
	}
}

// startOfWeekArg reads the startOfWeek of $dateDiff and $dateTrunc
// (errors 5439015 and 5439016); missing is Sunday.
func startOfWeekArg(name string, v bson.RawValue) (time.Weekday, error) {
	if v.Type == 0 {
		return time.Sunday, nil
	}
	s, ok := str(v)
	if !ok {
		return 0, mongoerr.New(mongoerr.StartOfWeekNotString, "%s requires 'startOfWeek' to be a string, but got %s", name, typeName(v))
	}
	d, ok := parseWeekday(s)
	if !ok {
		return 0, mongoerr.New(mongoerr.StartOfWeekInvalid, "%s parameter 'startOfWeek' value cannot be recognized as a day of a week: %s", name, s)
	}
	return d, nil
}

// localDays is the number of days from 1970-01-01 to t's local date.
func localDays(t time.Time) int64 {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
}

// localSeconds is t's local wall time in seconds since the epoch (in
// seconds, not milliseconds, so that the extreme dates do not overflow).
func localSeconds(t time.Time) int64 {
	_, off := t.Zone()
	return t.Unix() + int64(off)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// compileDateDiff is $dateDiff: {startDate, endDate, unit, timezone,
// startOfWeek}: the number of unit boundaries crossed from startDate to
// endDate, as a long.
func compileDateDiff(c *compiler, name string, v bson.RawValue, s *Scope) (*Expr, error) {
	args, err := c.compileNamed(name, v, s, mongoerr.DateDiffSpecNotObject, mongoerr.DateDiffUnknownArgument, "startDate", "endDate", "unit", "timezone", "startOfWeek")
	if err != nil {
		return nil, err
	}
	args.defaultTimezone()
	missingCodes := [3]mongoerr.Code{mongoerr.DateDiffMissingStartDate, mongoerr.DateDiffMissingEndDate, mongoerr.DateDiffMissingUnit}
	for i, k := range []string{"startDate", "endDate", "unit"} {
		if args[k] == nil {
			return nil, mongoerr.New(missingCodes[i], "Missing '%s' parameter to $dateDiff", k)
		}
	}
	return c.fold(args.list(), func(st *state) (bson.RawValue, error) {
		var vals [3]bson.RawValue
		if null, err := args.leading(st, vals[:], "startDate", "endDate", "unit"); err != nil || null {
			return nullValue, err
		}
		sow, null, err := args.weekStartValue(st, vals[2])
		if err != nil || null {
			return nullValue, err
		}
		loc, nullTZ, err := args.zone(st)
		if err != nil || nullTZ {
			return nullValue, mongoerr.AddContext(err, "$dateDiff parameter 'timezone' value parsing failed")
		}
		var ts [2]time.Time
		for i := range ts {
			if vals[i].Type != bson.TypeDateTime && vals[i].Type != bson.TypeTimestamp && vals[i].Type != bson.TypeObjectID {
				return missing, mongoerr.New(mongoerr.DateDiffDateInvalidType, "$dateDiff requires '%s' to be a date, but got %s", []string{"startDate", "endDate"}[i], typeName(vals[i]))
			}
			t, _ := toTime(vals[i])
			ts[i] = t.In(loc)
		}
		unit, err := unitArg(name, vals[2])
		if err != nil {
			return missing, err
		}
		week, err := startOfWeekArg(name, sow)
		if err != nil {
			return missing, err
		}
		a, b := ts[0], ts[1]
		var n int64
		switch unit {
		case "year":
			n = int64(b.Year() - a.Year())
		case "quarter":
			n = int64(b.Year()*4+(int(b.Month())-1)/3) - int64(a.Year()*4+(int(a.Month())-1)/3)
		case "month":
			n = int64(b.Year()*12+int(b.Month())) - int64(a.Year()*12+int(a.Month()))
		case "week":
			// Count week starts: shift so that the week starts on day 0.
			shift := int64((int(time.Thursday) - int(week) + 7) % 7)
			n = floorDiv(localDays(b)+shift, 7) - floorDiv(localDays(a)+shift, 7)
		case "day":
			n = localDays(b) - localDays(a)
		case "millisecond":
			// MongoDB's dateDiffMillisecond: a difference past a long
			// is error 5166308.
			n = b.UnixMilli() - a.UnixMilli()
			if (n < b.UnixMilli()) != (a.UnixMilli() > 0) {
				return missing, mongoerr.New(mongoerr.DateDiffOverflow, "dateDiff overflowed")
			}
		default:
			// Hours, minutes and seconds: the boundaries crossed in local
			// time, corrected by the change of UTC offset in whole units,
			// so that a DST change does not count (MongoDB's
			// utcOffsetCorrectionFor*).
			u := int64(dateUnits[unit] / time.Second)
			_, offA := a.Zone()
			_, offB := b.Zone()
			n = floorDiv(localSeconds(b), u) - floorDiv(localSeconds(a), u) + int64(offA-offB)/u
		}
		return values.Int64Value(n), nil
	})
}

// compileDateTrunc is $dateTrunc: {date, unit, binSize, timezone,
// startOfWeek}: the start of the binSize-unit bin holding date, bins
// counted from 2000-01-01 in the timezone (weeks from the first
// startOfWeek on or after it).
func compileDateTrunc(c *compiler, name string, v bson.RawValue, s *Scope) (*Expr, error) {
	args, err := c.compileNamed(name, v, s, mongoerr.DateTruncSpecNotObject, mongoerr.DateTruncUnknownArgument, "date", "unit", "binSize", "timezone", "startOfWeek")
	if err != nil {
		return nil, err
	}
	args.defaultTimezone()
	if args["date"] == nil {
		return nil, mongoerr.New(mongoerr.DateTruncMissingDate, "Missing 'date' parameter to $dateTrunc")
	}
	if args["unit"] == nil {
		return nil, mongoerr.New(mongoerr.DateTruncMissingUnit, "Missing 'unit' parameter to $dateTrunc")
	}
	names := []string{"date", "unit", "binSize"}
	if args["binSize"] == nil {
		names = names[:2]
	}
	return c.fold(args.list(), func(st *state) (bson.RawValue, error) {
		var vals [3]bson.RawValue
		if null, err := args.leading(st, vals[:], names...); err != nil || null {
			return nullValue, err
		}
		sow, null, err := args.weekStartValue(st, vals[1])
		if err != nil || null {
			return nullValue, err
		}
		loc, nullTZ, err := args.zone(st)
		if err != nil || nullTZ {
			return nullValue, mongoerr.AddContext(err, "$dateTrunc parameter 'timezone' value parsing failed")
		}
		if vals[0].Type != bson.TypeDateTime && vals[0].Type != bson.TypeTimestamp && vals[0].Type != bson.TypeObjectID {
			return missing, mongoerr.New(mongoerr.DateTruncDateInvalidType, "$dateTrunc requires 'date' to be a date, but got %s", typeName(vals[0]))
		}
		t, _ := toTime(vals[0])
		t = t.In(loc)
		unit, err := unitArg(name, vals[1])
		if err != nil {
			return missing, err
		}
		bin := int64(1)
		if vals[2].Type != 0 {
			n, ok := values.Int64(vals[2])
			if !isNumber(vals[2]) || !ok {
				return missing, mongoerr.New(mongoerr.DateTruncBinSizeNotInt64, "$dateTrunc requires 'binSize' to be a 64-bit integer, but got value '%s' of type %s", vals[2], typeName(vals[2]))
			}
			if n <= 0 {
				return missing, mongoerr.New(mongoerr.DateTruncBinSizeNotPositive, "$dateTrunc requires 'binSize' to be greater than 0, but got value %d", n)
			}
			bin = n
		}
		week, err := startOfWeekArg(name, sow)
		if err != nil {
			return missing, err
		}
		ref := time.Date(2000, 1, 1, 0, 0, 0, 0, loc)
		if unitMs := dateUnits[unit].Milliseconds(); unitMs > 0 && unitMs < 24*3600*1000 {
			return truncateMillis(t, loc, unitMs, bin)
		}
		if bin > 100_000_000_000 {
			return missing, mongoerr.New(mongoerr.DateTruncBinSizeUnsupported, "dateTrunc unsupported binSize value")
		}
		var r time.Time
		switch unit {
		case "year", "quarter", "month":
			per := map[string]int64{"year": 12, "quarter": 3, "month": 1}[unit] * bin
			months := int64(t.Year()-2000)*12 + int64(t.Month()) - 1
			m := floorDiv(months, per) * per
			r = time.Date(2000+int(floorDiv(m, 12)), time.Month(m-floorDiv(m, 12)*12+1), 1, 0, 0, 0, 0, loc)
		case "week", "day":
			days := bin
			if unit == "week" {
				days *= 7
				ref = ref.AddDate(0, 0, (int(week)-int(ref.Weekday())+7)%7)
			}
			d := floorDiv(localDays(t)-localDays(ref), days) * days
			r = time.Date(ref.Year(), ref.Month(), ref.Day()+int(d), 0, 0, 0, 0, loc)
		}
		if sec := r.Unix(); sec > math.MaxInt64/1000 || sec < math.MinInt64/1000 {
			return missing, mongoerr.New(mongoerr.DateAddOverflow, "dateAdd overflowed")
		}
		return dateValue(r.UnixMilli()), nil
	})
}

// truncateMillis is $dateTrunc in milliseconds, seconds, minutes and hours,
// MongoDB's truncateDateMillis: bins of binSize units on the UTC timeline
// from 2000-01-01T00:00 in the timezone's offset of that instant, so that
// a later change of offset (DST) does not move them. The arithmetic's
// overflows are errors 5439002, 5439000 and 5439001.
func truncateMillis(t time.Time, loc *time.Location, unitMs, bin int64) (bson.RawValue, error) {
	const refUTC = 946684800000 // 2000-01-01T00:00:00Z
	if bin > math.MaxInt64/unitMs {
		return missing, mongoerr.New(mongoerr.DateTruncBinOverflow, "dateTrunc overflowed")
	}
	size := unitMs * bin
	_, off := time.UnixMilli(refUTC).In(loc).Zone()
	ref := refUTC - int64(off)*1000
	ms := t.UnixMilli()
	shifted := ms - ref
	if (shifted < ms) != (ref > 0) {
		return missing, mongoerr.New(mongoerr.DateTruncShiftOverflow, "dateTrunc overflowed")
	}
	rem := shifted % size
	if rem < 0 {
		rem += size
	}
	if ms-rem > ms {
		return missing, mongoerr.New(mongoerr.DateTruncResultOverflow, "dateTrunc overflowed")
	}
	return dateValue(ms - rem), nil
}

// AddUnits adds n time units ("millisecond" to "year") to t as $dateAdd
// does in UTC; $setWindowFields' time-range windows move by it.
func AddUnits(t time.Time, unit string, n int64) time.Time {
	r, _ := addUnits(t, unit, n)
	return r
}

// IsTimeUnit reports whether u is one of $dateAdd's units.
func IsTimeUnit(u string) bool { _, ok := dateUnits[u]; return ok }
