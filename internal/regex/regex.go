// Package regex compiles and runs MongoDB regular expressions. MongoDB
// evaluates them with PCRE2; Folio runs them on regexp2, a backtracking
// engine, after rewriting the PCRE syntax it spells differently (see
// translate), so that lookaround, backreferences, atomic groups,
// possessive quantifiers and conditionals work as in MongoDB.
//
// MongoDB takes the options as a separate string of single-letter flags:
//
//   - i: case-insensitive matching
//   - m: ^ and $ match at line breaks as well as at the ends of the subject
//   - s: . also matches a newline
//   - x: extended syntax; unescaped whitespace and #-comments to the end of
//     the line are ignored outside character classes
//   - u: Unicode; accepted and implied (subjects are UTF-8)
//
// Any other letter is an error, and so is a NUL byte in the pattern or the
// options. Each
// caller reports these errors with its own MongoDB code and message (the
// query language and the aggregation operators differ), so Compile returns
// an *Error saying which rule was broken.
//
// As in PCRE2 without (*UCP), \d, \w, \s, \b and the POSIX classes are
// ASCII; $ matches at the end or before a final newline. Indexes are
// counted in code points, as $regexFind's idx.
package regex

import (
	"errors"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/dlclark/regexp2/v2"
	"github.com/dlclark/regexp2/v2/syntax"
)

// Kind classifies a compilation failure.
type Kind uint8

const (
	// BadOption is an option letter other than i, m, s, x and u.
	BadOption Kind = iota + 1
	// NullByte is a NUL byte in the pattern.
	NullByte
	// OptionsNullByte is a NUL byte in the options.
	OptionsNullByte
	// Invalid is a pattern that does not compile.
	Invalid
	// Unsupported is valid PCRE2 syntax Folio does not run (recursion,
	// branch reset, \K, \X, the newline conventions of more than one
	// character); Err names it.
	Unsupported
)

// Error is the error Compile returns.
type Error struct {
	Kind Kind
	// Option is the offending option letter (BadOption).
	Option rune
	// Err is the compilation error (Invalid), or names the construct
	// (Unsupported).
	Err error
}

func (e *Error) Error() string {
	switch e.Kind {
	case BadOption:
		return "invalid flag in regex options: " + string(e.Option)
	case NullByte:
		return "regular expression cannot contain an embedded null byte"
	case OptionsNullByte:
		return "regular expression options string cannot contain an embedded null byte"
	case Unsupported:
		return e.Err.Error()
	}
	return "regular expression is invalid: " + e.Err.Error()
}

// Unwrap is the compilation error (Invalid) or the construct (Unsupported).
func (e *Error) Unwrap() error { return e.Err }

// ErrMatchLimit is the error of a match that backtracked past the engine's
// bounds, as PCRE2's match limit: the query language counts it as no match,
// the aggregation operators fail with it.
var ErrMatchLimit = errors.New("match limit exceeded")

// matchTimeout bounds one match's time, in place of PCRE2's bound on its
// steps (match_limit, ten million by default, some 100 ms of work). It is
// wall time: a match the scheduler stalls on a loaded machine (seen at
// 100 ms, a load average of 15 on two cores) would be cut short, which the
// query language counts as no match, so it allows ten times PCRE2's work.
const matchTimeout = time.Second

// maxPatternLength is the longest pattern MongoDB lets PCRE2 compile, in
// bytes.
const maxPatternLength = 16384

// maxBacktrack bounds one match's backtracking stack (in regexp2's
// slots), as PCRE2's depth and heap limits bound its memory.
const maxBacktrack = 1 << 22

// Regexp is a compiled MongoDB regular expression. It is safe for
// concurrent use.
type Regexp struct {
	re *regexp2.Regexp
}

// Compile compiles pattern with MongoDB's options. Repeated option letters
// are allowed.
func Compile(pattern, options string) (*Regexp, error) {
	if strings.IndexByte(options, 0) >= 0 {
		return nil, &Error{Kind: OptionsNullByte}
	}
	var opts regexp2.RegexOptions
	extended := false
	for _, c := range options {
		switch c {
		case 'i':
			opts |= regexp2.IgnoreCase
		case 'm':
			opts |= regexp2.Multiline
		case 's':
			opts |= regexp2.Singleline
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
	if len(pattern) > maxPatternLength {
		return nil, &Error{Kind: Invalid, Err: errors.New("pattern string is longer than the limit set by the application")}
	}
	if extended {
		var err error
		if pattern, err = stripExtended(pattern, newlineOf(pattern).byteOf()); err != nil {
			return nil, err
		}
	}
	translated, ucp, err := translate(pattern, opts&regexp2.Multiline != 0, opts&regexp2.Singleline != 0, opts&regexp2.IgnoreCase != 0)
	if err != nil {
		return nil, err
	}
	if !ucp {
		opts |= regexp2.RE2 // ASCII \d, \w, \s, \b and POSIX classes
	}
	re, err := regexp2.Compile(translated, opts,
		regexp2.OptionMaxBacktrackingStackSize(maxBacktrack), regexp2.OptionMaintainCaptureOrder())
	if err != nil {
		return nil, &Error{Kind: Invalid, Err: pcre2Error(err)}
	}
	re.MatchTimeout = matchTimeout
	return &Regexp{re: re}, nil
}

// Match reports whether b, UTF-8 text, holds a match; a match past the
// engine's bounds is no match, as in MongoDB's query language.
func (r *Regexp) Match(b []byte) bool {
	// regexp2 reads the string into runes and keeps no reference to it.
	ok, err := r.re.MatchString(unsafe.String(unsafe.SliceData(b), len(b)))
	return ok && err == nil
}

// MatchString reports whether s holds a match, or ErrMatchLimit.
func (r *Regexp) MatchString(s string) (bool, error) {
	ok, err := r.re.MatchString(s)
	if err != nil {
		return false, ErrMatchLimit
	}
	return ok, nil
}

// Captures is the number of capturing groups.
func (r *Regexp) Captures() int { return len(r.re.GetGroupNumbers()) - 1 }

// Found is one match: its text, the code point index where it starts,
// and each capturing group's text, nil for a group that took no part.
type Found struct {
	Match    string
	Index    int
	Captures []*string
}

// FindAll calls yield with the matches in s from its start, up to limit
// of them (all when limit < 0), until yield returns false. As MongoDB's
// $regexFindAll: after an empty match the next search starts one code
// point further on, and no search starts at the end of a non-empty s.
// It returns ErrMatchLimit for a match past the engine's bounds.
func (r *Regexp) FindAll(s string, limit int, yield func(Found) bool) error {
	m, err := r.re.FindStringMatch(s)
	length := -1 // in code points, counted when needed
	for n := 0; m != nil && err == nil && n != limit; n++ {
		f := Found{Match: m.String(), Index: m.RuneIndex}
		groups := m.Groups()
		if len(groups) > 1 {
			f.Captures = make([]*string, len(groups)-1)
			for i, g := range groups[1:] {
				if len(g.Captures) > 0 {
					c := g.String()
					f.Captures[i] = &c
				}
			}
		}
		if !yield(f) {
			return nil
		}
		if length < 0 {
			length = utf8.RuneCountInString(s)
		}
		if next := m.RuneIndex + max(m.RuneLength, 1); next >= length && length > 0 {
			return nil
		}
		m, err = r.re.FindNextMatch(m)
	}
	if err != nil {
		return ErrMatchLimit
	}
	return nil
}

// stripExtended applies PCRE's extended mode: whitespace, and comments from
// an unescaped # to the end of the line (the newline character nl), are
// removed outside character classes, \Q...\E quotes and (?#...) comments.
// A { whose quantifier they would complete ({1 ,3}, which PCRE2 10.40
// reads as literal text) is escaped instead of joined.
func stripExtended(p string, nl byte) (string, error) {
	b := make([]byte, 0, len(p))
	inClass := false
	brace := -1 // where in b a { is that digits and commas follow so far
	// paren is where in b an unescaped ( is when it is the last byte, and
	// gap is set when whitespace or a comment followed it.
	paren, gap := -1, false
	// verbatim copies p from i to the end of the first until after it, or
	// to the end of p.
	verbatim := func(i int, until string) int {
		end := len(p)
		if j := strings.Index(p[i:], until); j >= 0 {
			end = i + j + len(until)
		}
		b = append(b, p[i:end]...)
		return end - 1
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p) && p[i+1] == 'Q':
			i = verbatim(i, `\E`)
			brace = -1
		case c == '\\' && i+1 < len(p):
			b = append(b, c, p[i+1])
			i++
			brace = -1
		case inClass:
			if c == '[' && posixClassEnd(p, i) > 0 {
				i = verbatim(i, ":]")
				continue
			}
			if c == ']' {
				inClass = false
			}
			b = append(b, c)
		case c == '[':
			inClass = true
			b = append(b, c)
			// a ] first (after any ^) is a member, not the end
			if strings.HasPrefix(p[i+1:], "^") {
				b = append(b, '^')
				i++
			}
			if strings.HasPrefix(p[i+1:], "]") {
				b = append(b, ']')
				i++
			}
			brace = -1
		case strings.HasPrefix(p[i:], "(?#"):
			i = verbatim(i, ")")
			brace = -1
		case c == '#' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			if c == '#' {
				for i < len(p) && p[i] != nl {
					i++
				}
			}
			if brace >= 0 {
				b = append(b[:brace], append([]byte(`\{`), b[brace+1:]...)...)
				brace = -1
			}
			if paren == len(b)-1 {
				gap = true
			}
		default:
			if gap && paren == len(b)-1 && strings.IndexByte("?*+", c) >= 0 {
				// "( ?" is no group: a quantifier after the parenthesis
				return "", &Error{Kind: Invalid, Err: errors.New("quantifier does not follow a repeatable item")}
			}
			gap, paren = false, -1
			if c == '(' {
				paren = len(b)
			}
			switch {
			case c == '{':
				brace = len(b)
			case brace >= 0 && (c >= '0' && c <= '9' || c == ','):
			default:
				brace = -1
			}
			b = append(b, c)
		}
	}
	return string(b), nil
}

// pcre2Texts are PCRE2's compile error texts (pcre2_error.c, which MongoDB
// reports) for the regexp2 parse errors that stand for the same mistake.
var pcre2Texts = map[syntax.ErrorCode]string{
	syntax.ErrUnterminatedBracket: "missing terminating ] for character class",
	syntax.ErrMissingParen:        "missing closing parenthesis",
	syntax.ErrUnexpectedParen:     "unmatched closing parenthesis",
	syntax.ErrInvalidRepeatSize:   "numbers out of order in {} quantifier",
	syntax.ErrReversedCharRange:   "range out of order in character class",
	syntax.ErrIllegalEndEscape:    `\ at end of pattern`,
	syntax.ErrIncompleteSlashP:    `malformed \P or \p sequence`,
	syntax.ErrMalformedSlashP:     `malformed \P or \p sequence`,
	syntax.ErrUndefinedBackRef:    "reference to non-existent subpattern",
	syntax.ErrUndefinedNameRef:    "reference to non-existent subpattern",
	syntax.ErrUndefinedReference:  "reference to non-existent subpattern",
	syntax.ErrTooManyAlternates:   "conditional subpattern contains more than two branches",
	syntax.ErrUnrecognizedControl: `\c must be followed by a printable ASCII character`,
	syntax.ErrMissingControl:      `\c at end of pattern`,
	syntax.ErrInvalidHex:          `character code point value in \x{} or \o{} is too large`,
	syntax.ErrUnterminatedComment: "missing ) after (?# comment",
}

// pcre2Error is err, a regexp2 compile error, with PCRE2's text when the
// mistake has one (regexp2's names the translated pattern, not the one
// given); other errors keep regexp2's text.
func pcre2Error(err error) error {
	var se *syntax.Error
	if errors.As(err, &se) {
		if text, ok := pcre2Texts[se.Code]; ok {
			return errors.New(text)
		}
	}
	return err
}
