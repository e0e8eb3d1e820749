package expr

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/folio-db/folio/internal/mongoerr"
)

// $dateFromString's parsing, after MongoDB's (timelib's strtotime without
// a format, parse_from_format with one).

// unset marks a date field a string did not give.
const unset = -1 << 31

// parsedDate is what a date string gives: local fields (unset where it
// gave none), milliseconds, and the zone it named, if any.
type parsedDate struct {
	y, m, d, h, i, s, ms int
	zone                 *dateZone
	// rel is the relative offset a string gave (years, months, days,
	// hours, minutes, seconds, milliseconds), which timelib_update_ts
	// adds to the local fields, after a weekday's move, when MongoDB
	// adjusts the time to its zone.
	rel [7]int64
}

// dateZone is a zone named in a date string: an offset ("+02:00",
// "GMT+02", a %Z count of minutes) or an abbreviation ("UTC", "CEST", a
// military letter), which abbr names.
type dateZone struct {
	offset int // seconds east of UTC
	abbr   string
}

func newParsedDate() parsedDate {
	return parsedDate{y: unset, m: unset, d: unset, h: unset, i: unset, s: unset, ms: unset}
}

// zoneAbbrs are the zone abbreviations a date string may end in, with
// their offsets in hours (a subset of timelib's table: the universal ones,
// North America's and Europe's). An abbreviation several zones use is the
// first of timelib's timezonemap.h entries: "ist" is Israel's +2 (not
// Ireland's or India's), "ndt" St. John's -2:30:52 of its oldest rules.
var zoneAbbrs = map[string]float64{
	"utc": 0, "ut": 0, "gmt": 0, "z": 0, "wet": 0, "west": 1, "bst": 1, "ist": 2,
	"cet": 1, "cest": 2, "met": 1, "mest": 2, "eet": 2, "eest": 3, "msk": 3,
	"ast": -4, "adt": -3, "est": -5, "edt": -4, "cst": -6, "cdt": -5,
	"mst": -7, "mdt": -6, "pst": -8, "pdt": -7, "akst": -9, "akdt": -8,
	"hst": -10, "nst": -3.5, "ndt": -9052.0 / 3600, "jst": 9, "kst": 9, "hkt": 8,
	"aest": 10, "aedt": 11, "acst": 9.5, "acdt": 10.5, "awst": 8, "nzst": 12, "nzdt": 13,
}

// militaryZone is the offset in hours of a one-letter military zone: A-I
// are +1 to +9, K-M +10 to +12, N-Y -1 to -12, Z 0 (J is local time,
// which a date string cannot name).
func militaryZone(c byte) (int, bool) {
	switch {
	case c >= 'a' && c <= 'i':
		return int(c-'a') + 1, true
	case c >= 'k' && c <= 'm':
		return int(c-'k') + 10, true
	case c >= 'n' && c <= 'y':
		return -int(c-'n') - 1, true
	case c == 'z':
		return 0, true
	}
	return 0, false
}

// parseZone reads a zone at s[p:] as timelib does: blanks and "(" first,
// then an offset ("+h", "+hh", "+hmm", "+hhmm", "+hh:mm", with or without
// "GMT" before it) or an abbreviation, and a closing ")". It returns the
// position after the zone; ok is false when none is there. In a string
// read without a format (free), an offset must also match timelib's
// tzcorrection, hour24 (0-24) and an optional colon and minute (0-59),
// which "+25:00" does not; a format's %z reads any digits.
func parseZone(s string, p int, free bool) (z dateZone, next int, ok bool) {
	for p < len(s) && (s[p] == ' ' || s[p] == '\t' || s[p] == '(') {
		p++
	}
	if strings.HasPrefix(s[p:], "GMT") && p+3 < len(s) && (s[p+3] == '+' || s[p+3] == '-') {
		p += 3
	}
	if p < len(s) && (s[p] == '+' || s[p] == '-') {
		sign := 1
		if s[p] == '-' {
			sign = -1
		}
		q := p + 1
		for q < len(s) && (s[q] >= '0' && s[q] <= '9' || s[q] == ':') {
			q++
		}
		body := s[p+1 : q]
		if free && !freeOffset.MatchString(body) {
			return z, p, false
		}
		var h, m int
		var err1, err2 error
		switch hh, mm, colon := strings.Cut(body, ":"); {
		case colon && len(hh) >= 1 && len(hh) <= 2 && len(mm) == 2:
			h, err1 = strconv.Atoi(hh)
			m, err2 = strconv.Atoi(mm)
		case !colon && len(body) >= 1 && len(body) <= 2:
			h, err1 = strconv.Atoi(body)
		case !colon && (len(body) == 3 || len(body) == 4):
			h, err1 = strconv.Atoi(body[:len(body)-2])
			m, err2 = strconv.Atoi(body[len(body)-2:])
		default:
			return z, p, false
		}
		if err1 != nil || err2 != nil {
			return z, p, false
		}
		return dateZone{offset: sign * (h*3600 + m*60)}, closeParen(s, q), true
	}
	q := p
	for q < len(s) && (s[q] >= 'a' && s[q] <= 'z' || s[q] >= 'A' && s[q] <= 'Z') {
		q++
	}
	name := strings.ToLower(s[p:q])
	if off, known := zoneAbbrs[name]; known {
		return dateZone{offset: int(math.Round(off * 3600)), abbr: s[p:q]}, closeParen(s, q), true
	}
	if len(name) == 1 {
		if off, known := militaryZone(name[0]); known {
			return dateZone{offset: off * 3600, abbr: s[p:q]}, closeParen(s, q), true
		}
	}
	return z, p, false
}

// freeOffset is the text of timelib's tzcorrection after its sign.
var freeOffset = regexp.MustCompile(`^(?:[01]?[0-9]|2[0-4]):?(?:[0-5]?[0-9])?$`)

func closeParen(s string, p int) int {
	if p < len(s) && s[p] == ')' {
		p++
	}
	return p
}

// freeDates are the dates $dateFromString reads without a format, each
// giving the year, month and day groups (day 0 when the form has none,
// which is the first): timelib's iso8601date4 and dateslash (yyyy-mm-dd,
// yyyy/mm/dd), datenocolon (yyyymmdd), american (m/d/yy[yy]), pointed
// (dd-mm-yyyy, dd.mm.yyyy) and pointed2 (dd.mm.yy), gnudateshort
// (yy-mm-dd), datetextual ("July 4th, 2017"), datefull ("4 July 2017", "04-Jul-2017"), pgtextreverse
// ("2017-Jul-04"), gnudateshorter ("2017-07"), datenoday ("July 2017") and
// datenodayrev ("2017 July"). As timelib's longest match, a form is not
// taken when a digit follows it.
var freeDates = []struct {
	re      *regexp.Regexp
	y, m, d int
}{
	{regexp.MustCompile(`^(\d{4})[-/](\d{1,2})[-/](\d{1,2})`), 1, 2, 3},
	{regexp.MustCompile(`^(\d{4})(\d{2})(\d{2})`), 1, 2, 3},
	{regexp.MustCompile(`^(\d{1,2})/(\d{1,2})/(\d{4}|\d{2})`), 3, 1, 2},
	{regexp.MustCompile(`^(\d{1,2})[-.\t](\d{1,2})[-.](\d{4})`), 3, 2, 1},
	{regexp.MustCompile(`^(\d{1,2})[.\t](\d{1,2})\.(\d{2})`), 3, 2, 1},
	{regexp.MustCompile(`^(\d{1,4})-(\d{1,2})-(\d{1,2})`), 1, 2, 3},
	{regexp.MustCompile(`^([A-Za-z]{3,9})[ \t.-]*(\d{1,2})(?:st|nd|rd|th)?[ \t,.]+(\d{4})`), 3, 1, 2},
	{regexp.MustCompile(`^(\d{1,2})(?:st|nd|rd|th)?[ \t.-]*([A-Za-z]{3,9})[ \t.-]*(\d{4}|\d{2})`), 3, 2, 1},
	{regexp.MustCompile(`^(\d{4})-([A-Za-z]{3,9})-(\d{1,2})`), 1, 2, 3},
	{regexp.MustCompile(`^(\d{4})-(\d{1,2})`), 1, 2, 0},
	{regexp.MustCompile(`^([A-Za-z]{3,9})[ \t.-]*(\d{4})`), 2, 1, 0},
	{regexp.MustCompile(`^(\d{4})[ \t.-]*([A-Za-z]{3,9})`), 1, 2, 0},
}

// freeTimes are the times that may follow the date: hours, minutes and
// seconds separated by ":" or "." after "T" or blanks, with a fraction
// after "." or ","; the same without separators after "T" (xmlrpc's
// "T115602", "T1156"); a 12-hour clock with am or pm, with or without
// minutes and seconds. freeRelWord is timelib's words now, today,
// midnight, noon, tomorrow and yesterday; freeRelative its relative
// (relnumber and reltextunit): a signed or unsigned number and a unit;
// freeRelText its relativetext ("next month", "third day", "last year");
// freeAgo its "ago", which negates the relative offset read before it.
var (
	freeClock    = regexp.MustCompile(`^(?:[Tt]|[ \t]+)(\d{1,2})[:.](\d{2})(?:[:.](\d{2})(?:[.,](\d+))?)?`)
	freeCompact  = regexp.MustCompile(`^[Tt](\d{2})(\d{2})(\d{2})?`)
	freeMeridian = regexp.MustCompile(`^[ \t]+(\d{1,2})(?:[:.](\d{2})(?:[:.](\d{2}))?)?[ \t]*([AaPp])\.?[Mm]\.?(?:$|[ \t])`)
	freeRelWord  = regexp.MustCompile(`^[ \t]+(?i:(now|today|midnight|noon|tomorrow|yesterday))\b`)
	freeRelative = regexp.MustCompile(`^[ \t]*([+-]?)[ \t]*(\d{1,13})[ \t]*` + freeUnits)
	freeRelText  = regexp.MustCompile(`^[ \t]+(?i:(first|second|third|fourth|fifth|sixth|seventh|eighth|eight|ninth|tenth|eleventh|twelfth|next|last|previous|this))[ \t]+` + freeUnits)
	freeAgo      = regexp.MustCompile(`^[ \t]+(?i:ago)\b`)
)

// freeUnits is timelib's reltextunit but its weekdays, as a group.
const freeUnits = `(?i:(years?|months?|fortnights?|forthnights?|weeks?|days?|hours?|minutes?|mins?|seconds?|secs?|milliseconds?|msecs?|ms))\b`

// relTextNumbers are the amounts of timelib's reltextnumber and
// reltexttext words (timelib_lookup_relative_text).
var relTextNumbers = map[string]int64{
	"first": 1, "next": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6,
	"seventh": 7, "eight": 8, "eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12,
	"last": -1, "previous": -1, "this": 0,
}

// freeWeekday is timelib's weekday token at the start, a day's full or
// three-letter name (dayfull, dayabbr) ending the string or followed by
// the blanks, commas and dots timelib skips between tokens.
var freeWeekday = regexp.MustCompile(`^(?i:(sunday|monday|tuesday|wednesday|thursday|friday|saturday|sun|mon|tue|wed|thu|fri|sat))(?:$|[ \t,.]+)`)

// weekdayNumber is the day (0 Sunday to 6 Saturday) whose name starts
// with name's first three letters.
func weekdayNumber(name string) int {
	for d := time.Sunday; d <= time.Saturday; d++ {
		if strings.EqualFold(name[:3], d.String()[:3]) {
			return int(d)
		}
	}
	return -1
}

// freeCtime is timelib's dateshortwithtimelong and dateshortwithtimeshort
// (a month name and day without a year, then a time), with the year after
// the time that gnunocolon reads as the year once a time is set, and a
// zone before or after that year: ctime's "Jan 1 10:00:00 2024" and
// date(1)'s "Jan  2 10:00:00 UTC 2024" (a weekday before them is
// freeWeekday). Groups month, day, hour, minute, second, then the text
// after the time.
var (
	freeCtime     = regexp.MustCompile(`^([A-Za-z]{3,9}) *(\d{1,2})[,.stndrh\t ]*[Tt]?(\d{1,2})[:.](\d{2})(?:[:.](\d{2}))?(.*)$`)
	freeCtimeYear = regexp.MustCompile(`^[ \t]+(\d{4})`)
)

// freeLeadingTime is a time before the date, which timelib's scanner
// reads in any order ("22:00 2024-01-01", "10:00 PM 2024-01-01"): hours
// and minutes after a colon, seconds and a fraction, a meridian; groups
// hour, minute, second, fraction, meridian letter, then the text after
// it.
var freeLeadingTime = regexp.MustCompile(`^[Tt]?(\d{1,2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(?:[ \t]*([AaPp])\.?[Mm]\.?)?[ \t]+(\S.*)$`)

// freeTimestamp is timelib's timestamp: "@" and seconds since the epoch,
// a UTC offset of 0.
var freeTimestamp = regexp.MustCompile(`^@(-?\d{1,12})$`)

// freeDateTimes are timelib's forms that carry their time: exif
// ("2017:07:04 11:56:02") and clf ("10/Oct/2000:13:55:36", its zone after
// a blank); groups year, month, day, hour, minute, second.
var freeDateTimes = []struct {
	re                 *regexp.Regexp
	y, m, d, h, i, sec int
}{
	{regexp.MustCompile(`^(\d{4}):(\d{2}):(\d{2}) (\d{2}):(\d{2}):(\d{2})`), 1, 2, 3, 4, 5, 6},
	{regexp.MustCompile(`^(\d{1,2})/([A-Za-z]{3})/(\d{4}):(\d{2}):(\d{2}):(\d{2})`), 3, 2, 1, 4, 5, 6},
}

// freeDayOfYear is timelib's pgydotd: a year and a day of the year
// ("2017.185", "2017185").
var freeDayOfYear = regexp.MustCompile(`^(\d{4})\.?(00[1-9]|0[1-9]\d|[12]\d\d|3[0-5]\d|36[0-6])`)

// freeISOWeek is timelib's isoweekday and isoweek: "2017-W27-2",
// "2017W272", "2017-W27" (the Monday); day 0 is the Sunday before it.
var freeISOWeek = regexp.MustCompile(`^(\d{4})-?W(0[1-9]|[1-4]\d|5[0-3])(?:-?([0-7]))?`)

// matchNoDigit is re's submatches at the start of s when no digit follows
// the match.
func matchNoDigit(re *regexp.Regexp, s string) []string {
	g := re.FindStringSubmatch(s)
	if g == nil || len(g[0]) < len(s) && s[len(g[0])] >= '0' && s[len(g[0])] <= '9' {
		return nil
	}
	return g
}

// freePartialDate and freePartialTime are what timelib reads as a date
// without its year, or a time alone, which MongoDB finds incomplete: a
// month name and day (datenoyear, "July 4th"), a day and month name
// (datenoyearrev, "4 July", "1-Jan"), a month and day (americanshort,
// "7/4"), a month name alone; then hours and minutes (timeshort24,
// timelong24), a 12-hour clock (timetiny12, timeshort12, timelong12:
// "11am"), four digits (gnunocolon's hours and minutes, so "2017" is
// 20:17, else year4's year alone, as "1960"), or one of the words that
// set only the time or nothing (now, today, midnight, noon, tomorrow,
// yesterday). A partial date may have a partial time after it. The
// groups of freePartialDate name the month.
var (
	freePartialDate = regexp.MustCompile(`^(?:([A-Za-z]{3,9})[ \t.-]*\d{1,2}(?:st|nd|rd|th)?|\d{1,2}(?:st|nd|rd|th)?[ \t.-]*([A-Za-z]{3,9})|(?:0?[1-9]|1[0-2])/(?:0?[1-9]|[12]\d|3[01])|([A-Za-z]{3,9}))(?:$|[ \t,]+)`)
	freePartialTime = regexp.MustCompile(`^(?:[Tt]?\d{1,2}[:.]\d{2}(?:[:.]\d{2}(?:[.,]\d+)?)?|(?:1[0-2]|0?[1-9])(?:[:.][0-5]\d(?:[:.][0-5]\d)?)?[ \t]*[AaPp]\.?[Mm]\.?|[Tt]?(?:[01]\d|2[0-4])[0-5]\d|\d{4}|(?i:now|today|midnight|noon|tomorrow|yesterday))$`)
)

// partialFree reports whether s (trimmed) is a date without its year or a
// time alone, as freePartialDate and freePartialTime read them.
func partialFree(s string) bool {
	if g := freePartialDate.FindStringSubmatch(s); g != nil {
		if month := g[1] + g[2] + g[3]; month != "" {
			if _, ok := monthNumber(month); !ok {
				return freePartialTime.MatchString(s)
			}
		}
		rest := s[len(g[0]):]
		return rest == "" || freePartialTime.MatchString(rest)
	}
	return freePartialTime.MatchString(s)
}

// monthNumber reads a month's full or three-letter English name, or
// timelib's "sept", in any case.
func monthNumber(name string) (int, bool) {
	if strings.EqualFold(name, "sept") {
		return int(time.September), true
	}
	for m := time.January; m <= time.December; m++ {
		if strings.EqualFold(name, m.String()) || strings.EqualFold(name, m.String()[:3]) {
			return int(m), true
		}
	}
	return 0, false
}

// parseFree parses s without a format: a date, a time and a zone, in
// that order, the time and the zone optional.
func parseFree(s string) (parsedDate, error) {
	norm := strings.Trim(s, " \t\n\r\x00\u00a0")
	failed := func() (parsedDate, error) {
		if partialFree(norm) {
			return parsedDate{}, incompleteDate(s)
		}
		// A zone alone ("UTC", a military letter, "GMT+02") is a zone
		// without a date.
		if _, next, ok := parseZone(norm, 0, true); ok && strings.TrimSpace(norm[next:]) == "" {
			return parsedDate{}, incompleteDate(s)
		}
		return parsedDate{}, mongoerr.New(mongoerr.ConversionFailure, "Error parsing date string '%s'", s)
	}
	if strings.TrimSpace(s) == "" {
		return parsedDate{}, mongoerr.New(mongoerr.ConversionFailure, "Error parsing date string '%s'; 0: Empty string '\x00'", s)
	}
	atoi := func(v string) int {
		n, _ := strconv.Atoi(v)
		return n
	}
	weekday := -1
	if g := freeWeekday.FindStringSubmatch(norm); g != nil {
		weekday, norm = weekdayNumber(g[1]), norm[len(g[0]):]
		if norm == "" {
			return parsedDate{}, incompleteDate(s)
		}
	}
	if g := freeLeadingTime.FindStringSubmatch(norm); g != nil {
		// The date after the time must carry no time of its own: timelib's
		// "Double time specification".
		p, err := parseFree(g[6])
		if err != nil {
			if strings.HasPrefix(err.Error(), "an incomplete") {
				return parsedDate{}, incompleteDate(s)
			}
			return failed()
		}
		if p.h != unset {
			return parsedDate{}, mongoerr.New(mongoerr.ConversionFailure, "Error parsing date string '%s'", s)
		}
		p.h, p.i, p.s = atoi(g[1]), atoi(g[2]), atoi(g[3])
		if g[4] != "" {
			p.ms = atoi((g[4] + "00")[:3])
		}
		if g[5] != "" {
			if p.h < 1 || p.h > 12 {
				return failed()
			}
			p.h %= 12
			if g[5] == "p" || g[5] == "P" {
				p.h += 12
			}
		}
		if !validTime(p.h, p.i, p.s) {
			return parsedDate{}, invalidFree(s, true, false)
		}
		return p.toWeekday(weekday), nil
	}
	p := newParsedDate()
	rest := ""
	if g := freeCtime.FindStringSubmatch(norm); g != nil {
		if m, ok := monthNumber(g[1]); ok {
			rest = g[6]
			var z *dateZone
			if zz, next, ok := parseZone(rest, 0, true); ok && !freeCtimeYear.MatchString(rest) {
				z, rest = &zz, rest[next:]
			}
			if y := freeCtimeYear.FindStringSubmatch(rest); y != nil {
				p.y, p.m, p.d, p.h, p.i, p.s = atoi(y[1]), m, atoi(g[2]), atoi(g[3]), atoi(g[4]), atoi(g[5])
				rest = rest[len(y[0]):]
				if z == nil && strings.TrimSpace(rest) != "" {
					zz, next, ok := parseZone(rest, 0, true)
					if !ok {
						return failed()
					}
					z, rest = &zz, rest[next:]
				}
				if strings.TrimSpace(rest) != "" {
					return failed()
				}
				p.zone, rest = z, ""
			} else if strings.TrimSpace(rest) == "" {
				// A month, day and time without a year.
				return parsedDate{}, incompleteDate(s)
			} else {
				rest = ""
			}
		}
	}
	if g := freeTimestamp.FindStringSubmatch(norm); g != nil {
		n, _ := strconv.ParseInt(g[1], 10, 64)
		t := time.Unix(n, 0).UTC()
		p.y, p.m, p.d, p.h, p.i, p.s = t.Year(), int(t.Month()), t.Day(), t.Hour(), t.Minute(), t.Second()
		p.zone = &dateZone{}
		return p, nil
	}
	for _, f := range freeDateTimes {
		if g := matchNoDigit(f.re, norm); g != nil && p.y == unset {
			m, ok := monthNumber(g[f.m])
			if !ok {
				m = atoi(g[f.m])
			}
			p.y, p.m, p.d, p.h, p.i, p.s = atoi(g[f.y]), m, atoi(g[f.d]), atoi(g[f.h]), atoi(g[f.i]), atoi(g[f.sec])
			rest = norm[len(g[0]):]
		}
	}
	if g := matchNoDigit(freeDayOfYear, norm); g != nil && p.y == unset {
		t := time.Date(atoi(g[1]), 1, atoi(g[2]), 0, 0, 0, 0, time.UTC)
		p.y, p.m, p.d = t.Year(), int(t.Month()), t.Day()
		rest = norm[len(g[0]):]
	}
	if g := matchNoDigit(freeISOWeek, norm); g != nil && p.y == unset {
		// timelib_daynr_from_weeknr: days from January 1st.
		y, w, id := atoi(g[1]), atoi(g[2]), 1
		if g[3] != "" {
			id = atoi(g[3])
		}
		dow := int(time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC).Weekday())
		if dow > 4 {
			dow -= 7
		}
		t := time.Date(y, 1, 1-dow+(w-1)*7+id, 0, 0, 0, 0, time.UTC)
		p.y, p.m, p.d = t.Year(), int(t.Month()), t.Day()
		rest = norm[len(g[0]):]
	}
	for _, f := range freeDates {
		if p.y != unset {
			break
		}
		g := matchNoDigit(f.re, norm)
		if g == nil {
			continue
		}
		var ok bool
		if p.m, ok = monthNumber(g[f.m]); !ok {
			var err error
			if p.m, err = strconv.Atoi(g[f.m]); err != nil {
				continue // a word that is no month
			}
		}
		p.y, _ = strconv.Atoi(g[f.y])
		if len(g[f.y]) < 4 && p.y < 100 {
			// timelib's process_year: a year of fewer than four digits
			// under 100 is 2000-2069 (00-69) or 1970-1999 (70-99).
			if p.y < 70 {
				p.y += 2000
			} else {
				p.y += 1900
			}
		}
		p.d = 1
		if f.d != 0 {
			p.d, _ = strconv.Atoi(g[f.d])
		}
		rest = norm[len(g[0]):]
		break
	}
	if p.y == unset {
		return failed()
	}
	// Times and relative words follow the date in any order, as timelib's
	// scanner reads them: a second time is its "Double time
	// specification"; now changes nothing; today and midnight unset the
	// time (to 00:00, so that a time may follow), noon sets 12:00, and
	// tomorrow and yesterday unset it and move a day; a number or a word
	// and a unit ("+1 day", "-2 hours", "3 weeks", "next month") is
	// relative, and ago negates what came before it; the zone may come
	// before them ("2017-07-04T10:00:00Z +1 day").
	haveTime := false
	for {
		if g := freeMeridian.FindStringSubmatch(rest); g != nil {
			// hour12 is 1 to 12: 12am is midnight, 12pm noon.
			if h := atoi(g[1]); h < 1 || h > 12 || haveTime {
				return failed()
			}
			p.h, p.i, p.s = atoi(g[1])%12, atoi(g[2]), atoi(g[3])
			if g[4] == "p" || g[4] == "P" {
				p.h += 12
			}
			haveTime, rest = true, rest[len(g[0]):]
		} else if g := freeClock.FindStringSubmatch(rest); g != nil {
			if haveTime {
				return failed()
			}
			p.h, p.i, p.s = atoi(g[1]), atoi(g[2]), atoi(g[3])
			if g[4] != "" {
				p.ms = atoi((g[4] + "00")[:3])
			}
			haveTime, rest = true, rest[len(g[0]):]
		} else if g := matchNoDigit(freeCompact, rest); g != nil {
			if haveTime {
				return failed()
			}
			p.h, p.i, p.s = atoi(g[1]), atoi(g[2]), atoi(g[3])
			haveTime, rest = true, rest[len(g[0]):]
		} else if g := freeRelWord.FindStringSubmatch(rest); g != nil {
			word := strings.ToLower(g[1])
			if word != "now" {
				p.h, p.i, p.s, p.ms = 0, 0, 0, 0
				haveTime = word == "noon"
			}
			switch word {
			case "noon":
				p.h = 12
			case "tomorrow":
				p.rel[2]++
			case "yesterday":
				p.rel[2]--
			}
			rest = rest[len(g[0]):]
		} else if g := freeRelative.FindStringSubmatch(rest); g != nil {
			n, err := strconv.ParseInt(g[2], 10, 64)
			if err != nil {
				return failed()
			}
			if g[1] == "-" {
				n = -n
			}
			p.addRelative(g[3], n)
			rest = rest[len(g[0]):]
		} else if g := freeRelText.FindStringSubmatch(rest); g != nil && !relTextWeek(g[1], g[2]) {
			p.addRelative(g[2], relTextNumbers[strings.ToLower(g[1])])
			rest = rest[len(g[0]):]
		} else if g := freeAgo.FindString(rest); g != "" {
			for i := range p.rel {
				p.rel[i] = -p.rel[i]
			}
			rest = rest[len(g):]
		} else if z, next, ok := parseZone(rest, 0, true); ok && p.zone == nil {
			// One zone, anywhere among them (a second is timelib's
			// "Double timezone specification").
			p.zone, rest = &z, rest[next:]
		} else {
			break
		}
	}
	if strings.TrimSpace(rest) != "" {
		return failed()
	}
	if badTime, badDate := p.h != unset && !validTime(p.h, p.i, p.s), !validDate(p.y, p.m, p.d); badTime || badDate {
		return parsedDate{}, invalidFree(s, badTime, badDate)
	}
	return p.toWeekday(weekday), nil
}

// invalidFree is the error of a string read without a format whose time
// or date is out of range: timelib's warnings, the time's first, at the
// position after the string's end, naming the NUL there.
func invalidFree(s string, badTime, badDate bool) error {
	msg := "Error parsing date string '" + s + "'"
	at := strconv.Itoa(len(s) + 1)
	if badTime {
		msg += "; " + at + ": The parsed time was invalid '\x00'"
	}
	if badDate {
		msg += "; " + at + ": The parsed date was invalid '\x00'"
	}
	return mongoerr.New(mongoerr.ConversionFailure, "%s", msg)
}

// toWeekday moves p's date forward to the weekday (0 Sunday to 6
// Saturday) a date string named, staying on it when it is that day:
// timelib's weekday behaviour 1 (do_adjust_for_weekday), so "Sun, 01 Jan
// 2024" is January 7th. A weekday of -1 (none named) leaves p as it is.
func (p parsedDate) toWeekday(weekday int) parsedDate {
	if weekday < 0 || p.y == unset || p.m == unset || p.d == unset {
		return p
	}
	t := time.Date(p.y, time.Month(p.m), p.d, 0, 0, 0, 0, time.UTC)
	t = t.AddDate(0, 0, (weekday-int(t.Weekday())+7)%7)
	p.y, p.m, p.d = t.Year(), int(t.Month()), t.Day()
	return p
}

// relTextWeek reports whether word and unit are timelib's
// relativetextweek ("next week", "this week"), which moves to a weekday
// as well and is not read here.
func relTextWeek(word, unit string) bool {
	switch strings.ToLower(word) {
	case "next", "last", "previous", "this":
		return strings.HasPrefix(strings.ToLower(unit), "w")
	}
	return false
}

// addRelative adds n of a reltextunit (freeUnits) to p's relative offset,
// as timelib_set_relative does: a week is 7 days, a fortnight 14.
func (p *parsedDate) addRelative(unit string, n int64) {
	unit = strings.ToLower(unit)
	switch {
	case strings.HasPrefix(unit, "y"):
		p.rel[0] += n
	case strings.HasPrefix(unit, "mo"):
		p.rel[1] += n
	case strings.HasPrefix(unit, "f"):
		p.rel[2] += 14 * n
	case strings.HasPrefix(unit, "w"):
		p.rel[2] += 7 * n
	case strings.HasPrefix(unit, "d"):
		p.rel[2] += n
	case strings.HasPrefix(unit, "h"):
		p.rel[3] += n
	case strings.HasPrefix(unit, "mi") && !strings.HasPrefix(unit, "mil"):
		p.rel[4] += n
	case strings.HasPrefix(unit, "s"):
		p.rel[5] += n
	default: // ms, msec, millisecond
		p.rel[6] += n
	}
}

func validDate(y, m, d int) bool {
	return m >= 1 && m <= 12 && d >= 1 && d <= time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

func validTime(h, i, s int) bool {
	return h >= 0 && h <= 23 && i >= 0 && i <= 59 && s >= 0 && s <= 59
}

func incompleteDate(s string) error {
	return mongoerr.New(mongoerr.ConversionFailure, "an incomplete date/time string has been found, with elements missing: \"%s\"", s)
}

// fromStringSpecifiers are the % specifiers of a $dateFromString format.
const fromStringSpecifiers = "bBdGHLmMSuVYzZ"

// parseFormat parses s with a $dateFromString format (checked by
// checkFormat) as timelib's parse_from_format does: a literal must match
// the string's byte; a number specifier skips what is not a digit before
// its digits; the string and format end at a NUL. The errors name the
// position where parsing stopped.
func parseFormat(s, format string) (parsedDate, error) {
	str, fmtStr := s, format
	if i := strings.IndexByte(str, 0); i >= 0 {
		str = str[:i]
	}
	if i := strings.IndexByte(fmtStr, 0); i >= 0 {
		fmtStr = fmtStr[:i]
	}
	// fail names the byte at pos, or NUL at the end of the string, as
	// MongoDB streams timelib's error character.
	fail := func(pos int, msg string) (parsedDate, error) {
		c := "\x00"
		if pos < len(str) {
			c = str[pos : pos+1]
		}
		return parsedDate{}, mongoerr.New(mongoerr.ConversionFailure, "Error parsing date string '%s'; %d: %s '%s'", s, pos, msg, c)
	}
	p := newParsedDate()
	isoYear, isoWeek, isoDay := unset, unset, unset
	pos, f := 0, 0
	// number reads up to max digits after any non-digits; exact asks for
	// exactly max.
	number := func(max int, exact bool) (int, bool) {
		for pos < len(str) && (str[pos] < '0' || str[pos] > '9') {
			pos++
		}
		start := pos
		for pos < len(str) && pos-start < max && str[pos] >= '0' && str[pos] <= '9' {
			pos++
		}
		if pos == start || exact && pos-start != max {
			return 0, false
		}
		n, _ := strconv.Atoi(str[start:pos])
		return n, true
	}
	startsDigit := func() bool { return pos < len(str) && str[pos] >= '0' && str[pos] <= '9' }
	for f < len(fmtStr) && pos < len(str) {
		begin := pos
		if fmtStr[f] != '%' || f+1 == len(fmtStr) {
			if str[pos] != fmtStr[f] {
				return fail(pos, "Format literal not found")
			}
			pos++
			f++
			continue
		}
		spec := fmtStr[f+1]
		f += 2
		var ok bool
		switch spec {
		case '%':
			if str[pos] != '%' {
				return fail(pos, "Format literal not found")
			}
			pos++
		case 'b', 'B':
			q := pos
			for q < len(str) && (str[q] >= 'a' && str[q] <= 'z' || str[q] >= 'A' && str[q] <= 'Z') {
				q++
			}
			if p.m, ok = monthNumber(str[pos:q]); !ok {
				return fail(begin, "A textual month could not be found")
			}
			pos = q
		case 'd', 'm', 'H':
			what, dst := "hour", &p.h
			switch spec {
			case 'd':
				what, dst = "day", &p.d
			case 'm':
				what, dst = "month", &p.m
			}
			if !startsDigit() {
				return fail(begin, "Unexpected data found.")
			}
			if *dst, ok = number(2, false); !ok {
				return fail(begin, "A two digit "+what+" could not be found")
			}
		case 'M', 'S':
			what, dst := "minute", &p.i
			if spec == 'S' {
				what, dst = "second", &p.s
			}
			if *dst, ok = number(2, true); !ok {
				return fail(begin, "A two digit "+what+" could not be found")
			}
		case 'Y':
			if !startsDigit() {
				return fail(begin, "Unexpected data found.")
			}
			if p.y, ok = number(4, false); !ok {
				return fail(begin, "A four digit year could not be found")
			}
		case 'L':
			if !startsDigit() {
				return fail(begin, "Unexpected data found.")
			}
			start := pos
			n, _ := number(3, false)
			for range 3 - (pos - start) {
				n *= 10
			}
			p.ms = n
		case 'G':
			if isoYear, ok = number(4, false); !ok {
				return fail(begin, "A four digit ISO year could not be found")
			}
		case 'V':
			if isoWeek, ok = number(2, false); !ok {
				return fail(begin, "A two digit ISO week could not be found")
			}
			if isoWeek < 1 || isoWeek > 53 {
				return fail(begin, "ISO Week must be between 1 and 53")
			}
		case 'u':
			if isoDay, ok = number(1, false); !ok {
				return fail(begin, "A single digit day of week could not be found")
			}
			if isoDay < 1 || isoDay > 7 {
				return fail(begin, "Day of week must be between 1 and 7")
			}
		case 'z':
			z, next, ok := parseZone(str, pos, false)
			if !ok {
				// timelib's TIMELIB_ERR_TZID_NOT_FOUND, which MongoDB words
				// as its own, never making zone identifiers available.
				return fail(begin, "passing a time zone identifier as part of the string is not allowed")
			}
			p.zone, pos = &z, next
		case 'Z':
			for pos < len(str) && str[pos] != '+' && str[pos] != '-' && (str[pos] < '0' || str[pos] > '9') {
				pos++
			}
			sign := 1
			for pos < len(str) && (str[pos] == '+' || str[pos] == '-') {
				if str[pos] == '-' {
					sign = -sign
				}
				pos++
			}
			n, ok := number(4, false)
			if !ok {
				return fail(begin, "A timezone offset in minutes could not be found")
			}
			p.zone = &dateZone{offset: sign * n * 60}
		}
	}
	if pos < len(str) {
		return fail(pos, "Trailing data")
	}
	if f < len(fmtStr) {
		return fail(pos, "Data missing")
	}
	iso := isoYear != unset || isoWeek != unset || isoDay != unset
	if iso && (p.y != unset || p.m != unset || p.d != unset) {
		return fail(pos, "Mixing of ISO dates with natural dates is not allowed")
	}
	if iso {
		if isoYear == unset {
			return fail(pos, "The parsed date was invalid")
		}
		isoWeek, isoDay = max(isoWeek, 1), max(isoDay, 1)
		t := isoWeekOne(isoYear, time.UTC).AddDate(0, 0, (isoWeek-1)*7+isoDay-1)
		p.y, p.m, p.d = t.Year(), int(t.Month()), t.Day()
	}
	if p.h != unset || p.i != unset || p.s != unset || p.ms != unset {
		p.h, p.i, p.s, p.ms = max(p.h, 0), max(p.i, 0), max(p.s, 0), max(p.ms, 0)
		if !validTime(p.h, p.i, p.s) {
			return fail(pos, "The parsed time was invalid")
		}
	}
	// timelib checks a date only when the format gave all of it; a part
	// missing is MongoDB's incomplete date.
	if p.y != unset && p.m != unset && p.d != unset && !validDate(p.y, p.m, p.d) {
		return fail(pos, "The parsed date was invalid")
	}
	return p, nil
}

// parseDate parses s with a $dateFromString format (or, when format is
// empty, in the forms read without one) into a time in loc, or in the zone
// s names; as MongoDB, a string that names a zone is ConversionFailure
// with a timezone argument other than UTC, and one without a date or with
// only part of a time is incomplete.
func parseDate(s, format string, loc *time.Location) (time.Time, error) {
	var p parsedDate
	var err error
	if format == "" {
		p, err = parseFree(s)
	} else {
		p, err = parseFormat(s, format)
	}
	if err != nil {
		return time.Time{}, err
	}
	if p.h == unset && p.i == unset && p.s == unset {
		p.h, p.i, p.s, p.ms = 0, 0, 0, 0
	}
	if p.y == unset || p.m == unset || p.d == unset || p.h == unset || p.i == unset || p.s == unset {
		return time.Time{}, incompleteDate(s)
	}
	if p.zone != nil {
		if !isUTC(loc) {
			if p.zone.abbr != "" {
				return time.Time{}, mongoerr.New(mongoerr.ConversionFailure, "you cannot pass in a date/time string with time zone information ('%s') together with a timezone argument", p.zone.abbr)
			}
			return time.Time{}, mongoerr.New(mongoerr.ConversionFailure, "you cannot pass in a date/time string with GMT offset together with a timezone argument")
		}
		loc = time.FixedZone("", p.zone.offset)
	}
	// time.Date normalizes the fields as timelib_do_normalize does: a
	// month past December is the next year's, a 31st past a short month's
	// end the next month's first days.
	r := p.rel
	ms := int64(max(p.ms, 0)) + r[6]
	secs := ms / 1000
	if ms%1000 < 0 {
		secs--
	}
	return time.Date(p.y+int(r[0]), time.Month(p.m+int(r[1])), p.d+int(r[2]), p.h+int(r[3]), p.i+int(r[4]), p.s+int(r[5]+secs), int(ms-secs*1000)*1e6, loc), nil
}

// isUTC reports whether loc is MongoDB's UTC zone: no timezone argument,
// "UTC", or a UTC offset of zero.
func isUTC(loc *time.Location) bool {
	if loc == time.UTC {
		return true
	}
	name := loc.String()
	_, off := time.Date(2000, 1, 1, 0, 0, 0, 0, loc).Zone()
	return off == 0 && (strings.HasPrefix(name, "+") || strings.HasPrefix(name, "-"))
}
