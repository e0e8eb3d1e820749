package planner

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/keyenc"
)

// regexBounds bounds a $regex condition as MongoDB's
// IndexBoundsBuilder::translateRegex does: a pattern with a simple prefix
// (see regexPrefix) by the strings starting with it, shown from the
// prefix up to the prefix with its last byte incremented, excluded; any
// other pattern by every string, ["", {}); and both by the regex value
// itself, which a stored regex with the same pattern and options matches.
// On an index under a collation (collated), whose keys of strings are
// collation keys and not the strings a prefix bounds, every string
// (simpleRegex's INEXACT_FETCH for an index with a collator).
func regexBounds(re bson.RawValue, desc, collated bool) fieldBounds {
	pattern, opts := re.Regex()
	var str fieldInterval
	if prefix, _, ok := regexPrefix(pattern, opts); ok && !collated {
		enc := keyenc.Encode(bson.RawValue{Type: bson.TypeString, Value: appendString(nil, prefix)})
		enc = enc[:len(enc)-2] // drop the string terminator: the bytes every extension starts with
		if desc {
			for i := range enc {
				enc[i] = ^enc[i]
			}
		}
		// The ends show as the strings they are, unescaped (BSONElement::toString).
		lo := bson.RawValue{Type: bson.TypeString, Value: appendString(nil, prefix)}
		hi := bson.RawValue{Type: bson.TypeString, Value: appendString(nil, prefix[:len(prefix)-1]+string([]byte{prefix[len(prefix)-1] + 1}))}
		str = fieldInterval{lo: enc, hi: keyenc.PrefixEnd(enc), loVal: lo, hiVal: hi, loIncl: true}
		if desc {
			str.loVal, str.hiVal, str.loIncl, str.hiIncl = hi, lo, false, true
		}
	} else {
		str = typeBounds([]bson.Type{bson.TypeString}, desc).ivs[0]
	}
	self := keyenc.AppendField(nil, re, desc)
	shown := showValue(re)
	point := fieldInterval{lo: self, hi: keyenc.PrefixEnd(self), loShown: "[" + shown, hiShown: shown + "]"}
	ivs := []fieldInterval{str, point}
	if bytes.Compare(point.lo, str.lo) < 0 {
		ivs[0], ivs[1] = point, str
	}
	return fieldBounds{ivs: ivs}
}

// regexPrefix is the literal prefix every string a regex matches starts
// with, following MongoDB's rules for index bounds of a regex
// (analyze_regex::getRegexPrefixMatch, which IndexBoundsBuilder::simpleRegex
// calls): the pattern must be anchored at the start of the subject (^, or
// \A) and hold no alternation (a | not escaped by a backslash, judged as
// mayHaveUnescapedPipe does); with the m option only \A anchors it (^ also
// matches after a newline); the options must be among m, s and x (i, u or
// any other gives no prefix). The prefix runs up to the first
// metacharacter or escaped letter or digit; a quantifier that allows zero
// repetitions (*, ?, {) drops the character before it. Text between \Q and
// \E, and any other escaped character (a non-ASCII one too), stands for
// itself. With x, whitespace is skipped and # ends the pattern. ok is false
// when there is no non-empty prefix; whole reports that the prefix decides
// the match (simpleRegex's EXACT tightness, where others are
// INEXACT_COVERED): the prefix is the whole pattern, or the pattern is
// ^-anchored and ends in the prefix and a final .* (/^abc.*/ matches what
// /^abc/ does; /^.*/ matches every string, whole with no prefix).
func regexPrefix(pattern, opts string) (prefix string, whole, ok bool) {
	var multilineOK bool
	switch {
	case strings.HasPrefix(pattern, `\A`):
		multilineOK, pattern = true, pattern[2:]
	case strings.HasPrefix(pattern, "^"):
		pattern = pattern[1:]
	default:
		return "", false, false
	}
	if mayHaveUnescapedPipe(pattern) {
		return "", false, false
	}
	extended := false
	for _, o := range opts {
		switch o {
		case 'm':
			if !multilineOK {
				return "", false, false
			}
		case 's':
		case 'x':
			extended = true
		default:
			return "", false, false
		}
	}
	var b strings.Builder
	dropLast := func() string {
		s := b.String()
		_, n := utf8.DecodeLastRuneInString(s)
		return s[:len(s)-n]
	}
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case c == '*' || c == '?' || c == '{':
			p, ok := nonEmpty(dropLast())
			return p, false, ok
		case c == '\\':
			if i+1 == len(pattern) {
				p, ok := nonEmpty(b.String())
				return p, false, ok
			}
			n := pattern[i+1]
			switch {
			case n == 'Q':
				// \Q...\E (or to the end) is literal text.
				quoted := pattern[i+2:]
				end := strings.Index(quoted, `\E`)
				if end < 0 {
					end = len(quoted)
				}
				b.WriteString(quoted[:end])
				i += 1 + end + 2
			case n >= 'a' && n <= 'z' || n >= 'A' && n <= 'Z' || n >= '0' && n <= '9':
				p, ok := nonEmpty(b.String())
				return p, false, ok
			default:
				// Any other escaped character, a multibyte one included,
				// stands for itself.
				_, size := utf8.DecodeRuneInString(pattern[i+1:])
				b.WriteString(pattern[i+1 : i+1+size])
				i += size
			}
		case c == '.' && !multilineOK && i+2 == len(pattern) && pattern[i+1] == '*':
			p, _ := nonEmpty(b.String())
			return p, true, p != ""
		case strings.IndexByte("^$.[()+", c) >= 0, extended && c == '#':
			p, ok := nonEmpty(b.String())
			return p, false, ok
		case extended && strings.IndexByte(" \t\n\r\f\v", c) >= 0:
		default:
			b.WriteByte(c)
		}
	}
	p, ok := nonEmpty(b.String())
	return p, ok, ok
}

func nonEmpty(s string) (string, bool) { return s, s != "" }

// mayHaveUnescapedPipe reports whether pattern (after its anchor) may hold
// an alternation, as MongoDB's stringMayHaveUnescapedPipe judges it: a |
// not preceded by a backslash, or preceded by one that a backslash
// precedes. A | inside \Q...\E or a character class counts too, as there.
func mayHaveUnescapedPipe(pattern string) bool {
	for i := 0; i < len(pattern); i++ {
		if pattern[i] != '|' {
			continue
		}
		if i == 0 || pattern[i-1] != '\\' || i >= 2 && pattern[i-2] == '\\' {
			return true
		}
	}
	return false
}

func appendString(dst []byte, s string) []byte {
	n := int32(len(s) + 1)
	dst = append(dst, byte(n), byte(n>>8), byte(n>>16), byte(n>>24))
	dst = append(dst, s...)
	return append(dst, 0)
}
