package expr

import (
	"strconv"
	"strings"
	"time"

	"github.com/folio-db/folio/internal/mongoerr"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// Helpers shared by the date operators.

// namedExprs are the compiled named arguments of an operator.
type namedExprs map[string]*Expr

// compileNamed compiles the argument document of an operator with named
// parameters, in the order of allowed (MongoDB reads the fields first and
// then compiles them in an order of its own, not the document's), so that
// of two arguments that fail the same one always reports.
func (c *compiler) compileNamed(name string, v bson.RawValue, s *Scope, objCode, unknownCode mongoerr.Code, allowed ...string) (namedExprs, error) {
	if v.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(objCode, "%s only supports an object as its argument", name)
	}
	raw, err := namedArgs(name, v, objCode, unknownCode, allowed...)
	if err != nil {
		return nil, err
	}
	out := namedExprs{}
	for _, k := range allowed {
		if a, ok := raw[k]; ok {
			if out[k], err = c.compile(a, s); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// utcZone is the timezone of a date operator given none.
var utcZone = constExpr(stringValue("UTC"))

// defaultTimezone gives a date operator without a timezone argument UTC,
// so that a timezone expression that evaluates to null or missing makes
// the operator return null, as in MongoDB.
func (n namedExprs) defaultTimezone() {
	if n["timezone"] == nil {
		n["timezone"] = utcZone
	}
}

// get evaluates the argument k; an absent argument is missing.
func (n namedExprs) get(st *state, k string) (bson.RawValue, error) {
	e, ok := n[k]
	if !ok {
		return missing, nil
	}
	return e.eval(st)
}

// leading evaluates the arguments names into vals, in order (vals is at
// least as long as names), and reports null at the first that is null or
// missing without evaluating the rest: $dateAdd, $dateDiff and $dateTrunc
// return null there before they evaluate their timezone or check a type.
func (n namedExprs) leading(st *state, vals []bson.RawValue, names ...string) (null bool, err error) {
	for i, k := range names {
		v, err := n.get(st, k)
		if err != nil {
			return false, err
		}
		if isNullish(v) {
			return true, nil
		}
		vals[i] = v
	}
	return false, nil
}

// zone evaluates the timezone argument (UTC when absent) as MongoDB's
// makeTimeZone does: null or missing reports null, a non-string is 40517,
// an unknown zone 40485.
func (n namedExprs) zone(st *state) (loc *time.Location, null bool, err error) {
	v, err := n.get(st, "timezone")
	if err != nil {
		return nil, false, err
	}
	return parseTimezone(v)
}

// format evaluates the format argument of op ($dateToString,
// $dateFromString): "" when absent, null when null or missing; a
// non-string fails with code, a format with a specifier outside
// specifiers as checkFormat says.
func (n namedExprs) format(st *state, op string, code mongoerr.Code, specifiers string) (format string, null bool, err error) {
	if n["format"] == nil {
		return "", false, nil
	}
	v, err := n["format"].eval(st)
	if err != nil || isNullish(v) {
		return "", err == nil, err
	}
	f, ok := str(v)
	if !ok {
		return "", false, mongoerr.New(code, "%s requires that 'format' be a string, found: %s with value %s", op, typeName(v), v)
	}
	return f, false, checkFormat(f, specifiers)
}

// weekStartValue evaluates startOfWeek for a unit of "week", the only
// unit MongoDB evaluates it for: with another unit, or when absent, it is
// missing and null is false.
func (n namedExprs) weekStartValue(st *state, unit bson.RawValue) (v bson.RawValue, null bool, err error) {
	if u, ok := str(unit); !ok || u != "week" || n["startOfWeek"] == nil {
		return missing, false, nil
	}
	v, err = n["startOfWeek"].eval(st)
	return v, err == nil && isNullish(v), err
}

func (n namedExprs) list() []*Expr {
	out := make([]*Expr, 0, len(n))
	for _, e := range n {
		out = append(out, e)
	}
	return out
}

// toTime converts a date operand: a date, a timestamp (its seconds) or an
// ObjectId (its creation second, which MongoDB reads as a signed 32-bit
// number: 0x80000000 is in 1901). Other types are error 16006.
func toTime(v bson.RawValue) (time.Time, error) {
	switch v.Type {
	case bson.TypeDateTime:
		return time.UnixMilli(v.DateTime()).UTC(), nil
	case bson.TypeTimestamp:
		t, _ := v.Timestamp()
		return time.Unix(int64(t), 0).UTC(), nil
	case bson.TypeObjectID:
		oid := v.ObjectID()
		return time.Unix(int64(int32(uint32(oid[0])<<24|uint32(oid[1])<<16|uint32(oid[2])<<8|uint32(oid[3]))), 0).UTC(), nil
	}
	return time.Time{}, mongoerr.New(mongoerr.DateConversionInvalidType, "can't convert from BSON type %s to Date", typeName(v))
}

// parseTimezone resolves a timezone operand: null or missing (an
// expression that evaluated to nothing) reports null, and the operator
// returns null; Olson names load from the system database; "+hh", "+hhmm"
// and "+hh:mm" are fixed offsets.
func parseTimezone(v bson.RawValue) (loc *time.Location, null bool, err error) {
	if isNullish(v) {
		return nil, true, nil
	}
	s, ok := str(v)
	if !ok {
		return nil, false, mongoerr.New(mongoerr.TimezoneNotString, "timezone must evaluate to a string, found %s", typeName(v))
	}
	if loc, ok := fixedOffset(s); ok {
		return loc, false, nil
	}
	if s == "" || strings.HasPrefix(s, "/") || strings.Contains(s, "..") {
		return nil, false, mongoerr.New(mongoerr.TimezoneUnknown, "unrecognized time zone identifier: \"%s\"", s)
	}
	loc, lerr := time.LoadLocation(s)
	if lerr != nil || s == "Local" {
		return nil, false, mongoerr.New(mongoerr.TimezoneUnknown, "unrecognized time zone identifier: \"%s\"", s)
	}
	return loc, false, nil
}

// fixedOffset parses "+hh", "+hhmm" or "+hh:mm" (or with "-").
func fixedOffset(s string) (*time.Location, bool) {
	if len(s) < 3 || (s[0] != '+' && s[0] != '-') {
		return nil, false
	}
	body := strings.Replace(s[1:], ":", "", 1)
	if len(body) != 2 && len(body) != 4 {
		return nil, false
	}
	for _, c := range body {
		if c < '0' || c > '9' {
			return nil, false
		}
	}
	h, _ := strconv.Atoi(body[:2])
	m := 0
	if len(body) == 4 {
		m, _ = strconv.Atoi(body[2:])
	}
	off := h*3600 + m*60
	if s[0] == '-' {
		off = -off
	}
	return time.FixedZone(s, off), true
}

// isoWeekOne is the Monday of ISO week 1 of year in loc: the Monday on or
// before January 4.
func isoWeekOne(year int, loc *time.Location) time.Time {
	jan4 := time.Date(year, 1, 4, 0, 0, 0, 0, loc)
	return jan4.AddDate(0, 0, 1-isoWeekday(jan4))
}

// isoWeekday is 1 (Monday) to 7 (Sunday).
func isoWeekday(t time.Time) int {
	if t.Weekday() == time.Sunday {
		return 7
	}
	return int(t.Weekday())
}

// sundayWeek is strftime's %U: the week of the year (0-53), weeks starting
// on Sunday, days before the first Sunday in week 0.
func sundayWeek(t time.Time) int {
	return (t.YearDay() + 6 - int(t.Weekday())) / 7
}

// dayUnits are the units of $dateAdd, $dateDiff and $dateTrunc.
var dateUnits = map[string]time.Duration{
	"millisecond": time.Millisecond, "second": time.Second, "minute": time.Minute,
	"hour": time.Hour, "day": 24 * time.Hour, "week": 7 * 24 * time.Hour,
	"month": 0, "quarter": 0, "year": 0,
}

// dayNames maps startOfWeek values (full or three-letter, any case) to
// weekdays.
func parseWeekday(s string) (time.Weekday, bool) {
	s = strings.ToLower(s)
	for d := time.Sunday; d <= time.Saturday; d++ {
		full := strings.ToLower(d.String())
		if s == full || s == full[:3] {
			return d, true
		}
	}
	return 0, false
}
