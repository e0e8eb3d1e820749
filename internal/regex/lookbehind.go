package regex

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// errLookbehind is PCRE2's (10.40, MongoDB 7.0's) refusal of a lookbehind
// with a branch whose length varies; regexp2 would run it.
var errLookbehind = errors.New("lookbehind assertion is not fixed length")

// lookbehindFixed reports whether each top-level branch of the lookbehind
// whose body starts at p[i] has a fixed length in characters. The
// branches may differ from each other; within one, a group's alternatives
// must have one length, and a quantifier must be {n}.
func lookbehindFixed(p string, i int) bool {
	lp := lenParser{p: p, i: i}
	for _, n := range lp.alternatives() {
		if n < 0 {
			return false
		}
	}
	return true
}

// lenParser measures the length of pattern text: -1 stands for a
// length that varies.
type lenParser struct {
	p string
	i int
}

func addLen(a, b int) int {
	if a < 0 || b < 0 {
		return -1
	}
	return a + b
}

// alternatives measures each branch up to the group's closing parenthesis
// (consumed) or the end of the pattern.
func (lp *lenParser) alternatives() []int {
	var lens []int
	n := 0
	for lp.i < len(lp.p) {
		switch lp.p[lp.i] {
		case ')':
			lp.i++
			return append(lens, n)
		case '|':
			lens = append(lens, n)
			n = 0
			lp.i++
		default:
			n = addLen(n, lp.item())
		}
	}
	return append(lens, n)
}

// item measures the item at i with its quantifier.
func (lp *lenParser) item() int {
	p := lp.p
	n := 1
	switch c := p[lp.i]; {
	case c == '\\':
		n = lp.escape()
	case c == '[':
		lp.skipClass()
	case c == '(':
		n = lp.group()
	case c == '^' || c == '$':
		n = 0
		lp.i++
	default:
		_, size := utf8.DecodeRuneInString(p[lp.i:])
		lp.i += size
	}
	if lp.i == len(p) {
		return n
	}
	switch c := p[lp.i]; {
	case c == '*' || c == '+' || c == '?':
		lp.i++
		if n != 0 {
			n = -1
		}
	case c == '{' && quantifierLen(p[lp.i:]) > 0:
		q := p[lp.i+1 : lp.i+quantifierLen(p[lp.i:])-1]
		lp.i += quantifierLen(p[lp.i:])
		lo, hi, comma := strings.Cut(q, ",")
		if comma && hi != lo {
			if n != 0 {
				n = -1
			}
		} else if n > 0 {
			k := 0
			for _, d := range lo {
				k = min(k*10+int(d-'0'), 1<<20)
			}
			n *= k
		}
	default:
		return n
	}
	if lp.i < len(p) && (p[lp.i] == '?' || p[lp.i] == '+') {
		lp.i++
	}
	return n
}

// escape measures the escape at i.
func (lp *lenParser) escape() int {
	p := lp.p
	if lp.i+1 == len(p) {
		lp.i++
		return 1
	}
	c := p[lp.i+1]
	switch {
	case c == 'Q':
		rest := p[lp.i+2:]
		end := strings.Index(rest, `\E`)
		if end < 0 {
			lp.i = len(p)
			return utf8.RuneCountInString(rest)
		}
		lp.i += 2 + end + 2
		return utf8.RuneCountInString(rest[:end])
	case strings.IndexByte("bBAzZGKE", c) >= 0:
		lp.i += 2
		return 0
	case c >= '1' && c <= '9' || c == 'g' || c == 'k' || c == 'R' || c == 'X':
		lp.i += 2 // a backreference, \R or \X: variable
		return -1
	case c == 'p' || c == 'P' || c == 'x':
		lp.i += escapeLen(p[lp.i:])
	case c == 'o' || c == 'N' && lp.i+2 < len(p) && p[lp.i+2] == '{':
		if end := strings.IndexByte(p[lp.i:], '}'); end > 0 {
			lp.i += end + 1
		} else {
			lp.i += 2
		}
	case c == 'c':
		lp.i = min(lp.i+3, len(p))
	default:
		_, size := utf8.DecodeRuneInString(p[lp.i+1:])
		lp.i += 1 + size
	}
	return 1
}

// skipClass moves past the character class at i.
func (lp *lenParser) skipClass() {
	p := lp.p
	lp.i++
	if lp.i < len(p) && p[lp.i] == '^' {
		lp.i++
	}
	if lp.i < len(p) && p[lp.i] == ']' {
		lp.i++
	}
	for lp.i < len(p) && p[lp.i] != ']' {
		switch {
		case p[lp.i] == '\\':
			lp.i += 2
		case strings.HasPrefix(p[lp.i:], "[:"):
			if end := strings.Index(p[lp.i:], ":]"); end > 0 {
				lp.i += end + 2
				continue
			}
			lp.i++
		default:
			lp.i++
		}
	}
	lp.i = min(lp.i+1, len(p))
}

// group measures the group at i: a lookaround or an option setting has no
// length, another group the one length all its alternatives share.
func (lp *lenParser) group() int {
	s := lp.p[lp.i:]
	header := 1
	zeroWidth := false
	switch {
	case strings.HasPrefix(s, "(?#"):
		end := strings.IndexByte(s, ')')
		if end < 0 {
			end = len(s) - 1
		}
		lp.i += end + 1
		return 0
	case strings.HasPrefix(s, "(?=") || strings.HasPrefix(s, "(?!"):
		header, zeroWidth = 3, true
	case strings.HasPrefix(s, "(?<=") || strings.HasPrefix(s, "(?<!"):
		header, zeroWidth = 4, true
	case strings.HasPrefix(s, "(?<") || strings.HasPrefix(s, "(?P<"):
		header = strings.IndexByte(s, '>') + 1
	case strings.HasPrefix(s, "(?'"):
		header = strings.IndexByte(s[3:], '\'') + 4
	case strings.HasPrefix(s, "(?("):
		lp.i++
		lp.alternatives()
		return -1
	case strings.HasPrefix(s, "(?"):
		end := strings.IndexAny(s, ":)")
		if end < 0 {
			lp.i = len(lp.p)
			return 0
		}
		if s[end] == ')' { // an option setting
			lp.i += end + 1
			return 0
		}
		header = end + 1
	}
	if header <= 0 {
		header = len(s)
	}
	lp.i += header
	lens := lp.alternatives()
	if zeroWidth {
		return 0
	}
	for _, n := range lens {
		if n != lens[0] {
			return -1
		}
	}
	return lens[0]
}
