// Package regex compiles MongoDB regular expressions for Go's RE2 engine.
//
// MongoDB evaluates regexes with PCRE and takes the options as a separate
// string of single-letter flags:
//
//   - i: case-insensitive matching
//   - m: ^ and $ match at line breaks as well as at the ends of the subject
//   - s: . also matches a newline
//   - x: extended syntax; unescaped whitespace and #-comments to the end of
//     the line are ignored outside character classes
//   - u: Unicode; accepted and implied (RE2 always matches UTF-8)
//
// Any other letter is an error, and so is a NUL byte in the pattern. Each
// caller reports these errors with its own MongoDB code and message (the
// query language and the aggregation operators differ), so Compile returns
// an *Error saying which rule was broken.
package regex

import (
	"regexp"
	"strings"
)

// Kind classifies a compilation failure.
type Kind uint8

const (
	// BadOption is an option letter other than i, m, s, x and u.
	BadOption Kind = iota + 1
	// NullByte is a NUL byte in the pattern.
	NullByte
	// Invalid is a pattern RE2 cannot compile: a syntax error, or a PCRE
	// feature RE2 lacks (lookaround, backreferences).
	Invalid
)

// Error is the error Compile returns.
type Error struct {
	Kind Kind
	// Option is the offending option letter (BadOption).
	Option rune
	// Err is RE2's compilation error (Invalid).
	Err error
}

func (e *Error) Error() string {
	switch e.Kind {
	case BadOption:
		return "invalid flag in regex options: " + string(e.Option)
	case NullByte:
		return "regular expression cannot contain an embedded null byte"
	}
	return "regular expression is invalid: " + e.Err.Error()
}

// Compile compiles pattern with MongoDB's options for RE2. Repeated option
// letters are allowed.
func Compile(pattern, options string) (*regexp.Regexp, error) {
	var flags []byte
	extended := false
	for _, c := range options {
		switch c {
		case 'i', 'm', 's':
			if !strings.ContainsRune(string(flags), c) {
				flags = append(flags, byte(c))
			}
		case 'x':
			extended = true
		case 'u':
		default:
			return nil, &Error{Kind: BadOption, Option: c}
		}
	}
	if strings.IndexByte(pattern, 0) >= 0 {
		return nil, &Error{Kind: NullByte}
	}
	if extended {
		pattern = stripExtended(pattern)
	}
	if len(flags) > 0 {
		pattern = "(?" + string(flags) + ")" + pattern
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, &Error{Kind: Invalid, Err: err}
	}
	return re, nil
}

// stripExtended applies PCRE's extended mode: whitespace, and comments from
// an unescaped # to the end of the line, are removed outside character
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
