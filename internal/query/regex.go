package query

import (
	"regexp"
	"strings"

	"github.com/folio-db/folio/internal/mongoerr"
)

// compileRegex compiles a MongoDB (PCRE) regex with its options for Go's
// RE2 engine. Options i, m and s map to the same RE2 flags; x (extended)
// removes unescaped whitespace and #-comments outside character classes; u
// is accepted (RE2 is always UTF-8). Other options fail with MongoDB's code
// 51108, and patterns RE2 cannot compile (lookaround, backreferences) with
// 51091.
func compileRegex(pattern, options string) (*regexp.Regexp, error) {
	var flags strings.Builder
	extended := false
	for _, c := range options {
		switch c {
		case 'i', 'm', 's':
			if !strings.ContainsRune(flags.String(), c) {
				flags.WriteRune(c)
			}
		case 'x':
			extended = true
		case 'u':
		default:
			return nil, mongoerr.New(51108, "invalid flag in regex options: %c", c)
		}
	}
	if strings.IndexByte(pattern, 0) >= 0 {
		return nil, mongoerr.New(51109, "Regular expression cannot contain an embedded null byte")
	}
	if extended {
		pattern = stripExtended(pattern)
	}
	if flags.Len() > 0 {
		pattern = "(?" + flags.String() + ")" + pattern
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, mongoerr.New(51091, "Regular expression is invalid: %s", err.Error())
	}
	return re, nil
}

// stripExtended applies PCRE's extended mode: whitespace and comments from
// an unescaped # to the end of the line are ignored outside character
// classes.
func stripExtended(p string) string {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			b.WriteByte(c)
			b.WriteByte(p[i+1])
			i++
		case inClass:
			if c == ']' {
				inClass = false
			}
			b.WriteByte(c)
		case c == '[':
			inClass = true
			b.WriteByte(c)
		case c == '#':
			for i < len(p) && p[i] != '\n' {
				i++
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
