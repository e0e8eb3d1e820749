package regex

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// translate rewrites a PCRE2 pattern for regexp2: in RE2 compatibility
// mode (ASCII classes, POSIX classes, (?P<name>...)), or in its default
// .NET mode when the pattern starts with (*UCP), which ucp reports.
// multiline is the m option. The rewrites:
//
//   - $ outside (?m) and \Z become (?=\n?\z): the end, or before a final
//     newline (regexp2's RE2 mode reads both as the end only); ^ in (?m)
//     matches after no newline that ends the subject;
//   - a possessive quantifier (a*+, a++, a?+, a{n,m}+) becomes an atomic
//     group around its atom and the greedy quantifier;
//   - \Q...\E becomes the escaped literal text;
//   - \b and \B see ASCII word characters, as PCRE2's, and \W is the
//     class of the other characters, which i does not widen;
//   - \s also matches a vertical tab, as PCRE2's; \h, \v, \R and \N
//     become the classes PCRE2 gives them (.NET reads \v as a vertical tab);
//   - \g{N}, \g{-N}, \gN, \g{name}, \k{name} and (?P=name) become \k<...>;
//     (?(<name>)...) becomes (?(name)...); \o{...} becomes \x{...};
//   - (*UTF) and the start-of-pattern optimization and limit settings are
//     dropped; (*FAIL) becomes (?!).
//
// A lookbehind must have branches of fixed length, as in PCRE2 10.40
// (lookbehindFixed). What regexp2 cannot run is refused (Unsupported):
// recursion and
// subroutine calls, branch reset (?|, \K, \X, \C, backtracking verbs,
// the U and J flags, and newline conventions other than LF.
func translate(p string, multiline bool) (string, bool, error) {
	t := &translator{p: p, m: multiline, atom: -1}
	if err := t.startOptions(); err != nil {
		return "", false, err
	}
	for t.i < len(t.p) {
		if err := t.step(); err != nil {
			return "", false, err
		}
	}
	return string(t.out), t.ucp, nil
}

type translator struct {
	p   string
	i   int
	out []byte
	ucp bool
	// m and x are the multiline and extended flags in effect.
	m, x bool
	// open holds the groups open at i.
	open []group
	// atom is where in out the last quantifiable item starts, -1 when none.
	atom int
	// captures counts the capturing groups opened so far; names holds
	// their names.
	captures int
	names    map[string]bool
}

type group struct {
	start int
	m, x  bool // the flags in effect before the group
}

func unsupported(format string, args ...any) error {
	return &Error{Kind: Unsupported, Err: fmt.Errorf("Folio does not support "+format+" in regular expressions", args...)}
}

// startOptions consumes PCRE2's start-of-pattern items: (*UTF), (*UCP),
// optimization switches and limits, and newline conventions.
func (t *translator) startOptions() error {
	for strings.HasPrefix(t.p[t.i:], "(*") {
		end := strings.IndexByte(t.p[t.i:], ')')
		if end < 0 {
			return nil
		}
		name := t.p[t.i+2 : t.i+end]
		switch {
		case name == "UTF" || name == "UTF8" || name == "LF" ||
			name == "NO_AUTO_POSSESS" || name == "NO_START_OPT" || name == "NO_DOTSTAR_ANCHOR" || name == "NO_JIT" ||
			strings.HasPrefix(name, "LIMIT_MATCH=") || strings.HasPrefix(name, "LIMIT_DEPTH=") ||
			strings.HasPrefix(name, "LIMIT_HEAP=") || strings.HasPrefix(name, "LIMIT_RECURSION="):
		case name == "UCP":
			t.ucp = true
		case name == "CR" || name == "CRLF" || name == "ANYCRLF" || name == "ANY" || name == "NUL" ||
			name == "BSR_ANYCRLF" || name == "BSR_UNICODE" || name == "NOTEMPTY" || name == "NOTEMPTY_ATSTART":
			return unsupported("(*%s)", name)
		default:
			return nil // a backtracking verb, for step
		}
		t.i += end + 1
	}
	return nil
}

func (t *translator) emit(s string) { t.out = append(t.out, s...) }

// item emits s as a quantifiable item and moves past n bytes of pattern.
func (t *translator) item(s string, n int) {
	t.atom = len(t.out)
	t.emit(s)
	t.i += n
}

func (t *translator) step() error {
	c := t.p[t.i]
	switch {
	case c == '\\':
		return t.escape()
	case c == '[':
		return t.class()
	case c == '(':
		return t.openGroup()
	case c == ')':
		t.closeGroup()
	case c == '|':
		t.emit("|")
		t.atom = -1
		t.i++
	case c == '*' || c == '+' || c == '?':
		t.quantifier(1)
	case c == '{' && quantifierLen(t.p[t.i:]) > 0:
		t.quantifier(quantifierLen(t.p[t.i:]))
	case c == '$' && !t.m:
		t.item(`(?=\n?\z)`, 1)
	case c == '^' && t.m:
		t.item(`(?:\A|(?<=\n)(?!\z))`, 1)
	case t.x && c == '#':
		end := strings.IndexByte(t.p[t.i:], '\n')
		if end < 0 {
			end = len(t.p) - t.i - 1
		}
		t.emit(t.p[t.i : t.i+end+1])
		t.i += end + 1
	case t.x && strings.IndexByte(" \t\n\r\f\v", c) >= 0:
		t.emit(t.p[t.i : t.i+1])
		t.i++
	default:
		_, n := utf8.DecodeRuneInString(t.p[t.i:])
		t.item(t.p[t.i:t.i+n], n)
	}
	return nil
}

// quantifierLen is the length of the {n}, {n,} or {n,m} quantifier s
// starts with, 0 when the brace is a literal.
func quantifierLen(s string) int {
	i := 1
	digits := func() int {
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - j
	}
	if digits() == 0 {
		return 0
	}
	if i < len(s) && s[i] == ',' {
		i++
		digits()
	}
	if i < len(s) && s[i] == '}' {
		return i + 1
	}
	return 0
}

// quantifier emits the n-byte quantifier at i with its lazy or possessive
// suffix; a possessive one wraps its atom in an atomic group.
func (t *translator) quantifier(n int) {
	q := t.p[t.i : t.i+n]
	t.i += n
	possessive := false
	if t.i < len(t.p) && t.p[t.i] == '?' {
		q += "?"
		t.i++
	} else if t.i < len(t.p) && t.p[t.i] == '+' && t.atom >= 0 {
		possessive = true
		t.i++
	}
	if t.atom < 0 {
		t.emit(q) // regexp2 reports the quantifier without an atom
		return
	}
	body := string(t.out[t.atom:])
	if strings.Contains(body, "(?>") {
		// regexp2 merges a loop around an atomic loop of one character
		// or class ((?>a+)* or {2,}) into one atomic loop ((?>a*) or
		// (?>a{2,})), which neither gives back iterations nor needs them
		// separate as PCRE2's; a neutral \G? between them keeps them
		// apart.
		body = "(?:" + body + `\G?)`
	}
	if possessive {
		body = "(?>" + body + q + ")"
	} else {
		body += q
	}
	t.out = append(t.out[:t.atom], body...)
	t.atom = -1
}

// The classes PCRE2 gives \s (with the vertical tab), \h and \v, without
// their brackets.
const (
	spaceClass    = `\t\n\x0B\f\r `
	hSpaceClass   = `\t \xA0\x{1680}\x{180E}\x{2000}-\x{200A}\x{202F}\x{205F}\x{3000}`
	vSpaceClass   = `\n\x0B\f\r\x{85}\x{2028}\x{2029}`
	lineBreakExpr = `(?>\r\n|[` + vSpaceClass + `])`
	// regexp2 reads \b and \B with Unicode word characters even in RE2
	// mode; PCRE2's are ASCII.
	asciiBoundary    = `(?:(?<=[A-Za-z0-9_])(?![A-Za-z0-9_])|(?<![A-Za-z0-9_])(?=[A-Za-z0-9_]))`
	asciiNonBoundary = `(?:(?<=[A-Za-z0-9_])(?=[A-Za-z0-9_])|(?<![A-Za-z0-9_])(?![A-Za-z0-9_]))`
)

// escape translates the escape sequence at i, outside a class.
func (t *translator) escape() error {
	if t.i+1 == len(t.p) {
		t.item(`\`, 1) // regexp2 reports the trailing backslash
		return nil
	}
	n := t.p[t.i+1]
	switch n {
	case 'Q':
		t.quoted()
	case 'E':
		t.i += 2
	case 'Z':
		t.item(`(?=\n?\z)`, 2)
	case 'K', 'X', 'C':
		return unsupported(`\%c`, n)
	case 's', 'S':
		if t.ucp {
			t.item(t.p[t.i:t.i+2], 2)
		} else if n == 's' {
			t.item("["+spaceClass+"]", 2)
		} else {
			t.item("[^"+spaceClass+"]", 2)
		}
	case 'b', 'B':
		if t.ucp {
			t.item(t.p[t.i:t.i+2], 2)
		} else if n == 'b' {
			t.item(asciiBoundary, 2)
		} else {
			t.item(asciiNonBoundary, 2)
		}
	case 'W':
		if t.ucp {
			t.item(`\W`, 2)
		} else {
			// regexp2's \W under i also takes the letters whose case
			// folds with a non-ASCII one (S with ſ, K with the Kelvin sign)
			t.item(`[^A-Za-z0-9_]`, 2)
		}
	case 'h':
		t.item("["+hSpaceClass+"]", 2)
	case 'H':
		t.item("[^"+hSpaceClass+"]", 2)
	case 'v':
		t.item("["+vSpaceClass+"]", 2)
	case 'V':
		t.item("[^"+vSpaceClass+"]", 2)
	case 'R':
		t.item(lineBreakExpr, 2)
	case 'N':
		if t.i+2 < len(t.p) && t.p[t.i+2] == '{' {
			return unsupported(`\N{...}`)
		}
		t.item(`[^\n]`, 2)
	case 'g':
		return t.backreference()
	case 'k':
		// \k{name}, \k<name>, \k'name'
		closing := map[byte]byte{'{': '}', '<': '>', '\'': '\''}
		if t.i+2 < len(t.p) && closing[t.p[t.i+2]] != 0 {
			if end := strings.IndexByte(t.p[t.i+3:], closing[t.p[t.i+2]]); end >= 0 {
				t.item(`\k<`+t.p[t.i+3:t.i+3+end]+`>`, 3+end+1)
				return nil
			}
		}
		t.item(`\k`, 2) // regexp2 reports the malformed reference
	case 'o':
		return t.octal()
	case 'p', 'P', 'x':
		t.item(t.p[t.i:t.i+escapeLen(t.p[t.i:])], escapeLen(t.p[t.i:]))
	case 'c':
		t.item(t.p[t.i:min(t.i+3, len(t.p))], min(3, len(t.p)-t.i))
	default:
		_, size := utf8.DecodeRuneInString(t.p[t.i+1:])
		t.item(t.p[t.i:t.i+1+size], 1+size)
	}
	return nil
}

// escapeLen is the length of the \p, \P or \x escape s starts with: its
// braced form, or one letter (\pL) or up to two hex digits (\xhh).
func escapeLen(s string) int {
	if len(s) > 2 && s[2] == '{' {
		if end := strings.IndexByte(s, '}'); end > 0 {
			return end + 1
		}
		return len(s)
	}
	if s[1] != 'x' {
		return min(3, len(s))
	}
	n := 2
	for n < len(s) && n < 4 && strings.IndexByte("0123456789abcdefABCDEF", s[n]) >= 0 {
		n++
	}
	return n
}

// quoted emits the text of \Q...\E (or to the end) escaped, each character
// an item, so that a quantifier after it applies to the last one.
func (t *translator) quoted() {
	rest := t.p[t.i+2:]
	end := strings.Index(rest, `\E`)
	text := rest
	if end >= 0 {
		text = rest[:end]
		t.i += 2 + end + 2
	} else {
		t.i = len(t.p)
	}
	for _, r := range text {
		t.atom = len(t.out)
		t.out = appendLiteral(t.out, r)
	}
}

// appendLiteral appends r, escaped when it is an ASCII punctuation or
// whitespace character a pattern would read otherwise.
func appendLiteral(out []byte, r rune) []byte {
	if r < utf8.RuneSelf && !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
		return fmt.Appendf(out, `\x%02X`, r)
	}
	return utf8.AppendRune(out, r)
}

// backreference translates \g: \gN, \g{N}, \g-N, \g{-N} (relative to the
// groups opened so far) and \g{name}; \g<...> and \g'...' are subroutine
// calls.
func (t *translator) backreference() error {
	s := t.p[t.i+2:]
	var ref string
	n := 2
	switch {
	case strings.HasPrefix(s, "{"):
		end := strings.IndexByte(s, '}')
		if end < 0 {
			return &Error{Kind: Invalid, Err: fmt.Errorf(`\g is not followed by a braced, angle-bracketed, or quoted name/number or by a plain number`)}
		}
		ref, n = s[1:end], n+end+1
	case strings.HasPrefix(s, "<") || strings.HasPrefix(s, "'"):
		return unsupported(`subroutine calls (\g<...>)`)
	default:
		j := 0
		if j < len(s) && (s[j] == '-' || s[j] == '+') {
			j++
		}
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		ref, n = s[:j], n+j
	}
	if num, err := strconv.Atoi(ref); err == nil {
		if num < 0 {
			num += t.captures + 1
		}
		if num <= 0 || strings.HasPrefix(ref, "+") {
			return &Error{Kind: Invalid, Err: fmt.Errorf("a relative value of zero is not allowed")}
		}
		ref = strconv.Itoa(num)
	} else if ref == "" {
		return &Error{Kind: Invalid, Err: fmt.Errorf(`\g is not followed by a braced, angle-bracketed, or quoted name/number or by a plain number`)}
	}
	t.item(`\k<`+ref+`>`, n)
	return nil
}

// octal translates \o{ddd} to \x{hh}.
func (t *translator) octal() error {
	s := t.p[t.i+2:]
	end := strings.IndexByte(s, '}')
	if !strings.HasPrefix(s, "{") || end < 0 {
		return &Error{Kind: Invalid, Err: fmt.Errorf(`missing opening brace after \o`)}
	}
	v, err := strconv.ParseUint(s[1:end], 8, 32)
	if err != nil {
		return &Error{Kind: Invalid, Err: fmt.Errorf(`non-octal character in \o{} (closing brace missing?)`)}
	}
	t.item(fmt.Sprintf(`\x{%X}`, v), 2+end+1)
	return nil
}

// class translates the character class at i.
func (t *translator) class() error {
	start := len(t.out)
	t.emit("[")
	t.i++
	if t.i < len(t.p) && t.p[t.i] == '^' {
		t.emit("^")
		t.i++
	}
	if t.i < len(t.p) && t.p[t.i] == ']' { // a leading ] is a literal
		t.emit(`\]`)
		t.i++
	}
	for t.i < len(t.p) && t.p[t.i] != ']' {
		c := t.p[t.i]
		switch {
		case c == '\\' && t.i+1 < len(t.p):
			if err := t.classEscape(); err != nil {
				return err
			}
		case strings.HasPrefix(t.p[t.i:], "[:"):
			end := strings.Index(t.p[t.i:], ":]")
			if end < 0 {
				t.emit(`\[`)
				t.i++
				continue
			}
			name := t.p[t.i+2 : t.i+end]
			if t.ucp {
				s, ok := ucpPOSIX[name]
				if !ok {
					return unsupported("[:%s:] with (*UCP)", name)
				}
				t.emit(s)
			} else {
				t.emit(t.p[t.i : t.i+end+2]) // regexp2's RE2 mode reads it
			}
			t.i += end + 2
		case c == '[':
			t.emit(`\[`) // .NET reads -[...] as a subtraction
			t.i++
		default:
			_, n := utf8.DecodeRuneInString(t.p[t.i:])
			t.emit(t.p[t.i : t.i+n])
			t.i += n
		}
	}
	if t.i < len(t.p) {
		t.emit("]")
		t.i++
	}
	t.atom = start
	return nil
}

// ucpPOSIX is the class body of each POSIX class with (*UCP), as PCRE2
// gives it; the others stay ASCII.
var ucpPOSIX = map[string]string{
	"alpha": `\p{L}`, "lower": `\p{Ll}`, "upper": `\p{Lu}`, "digit": `\p{Nd}`,
	"alnum": `\p{L}\p{N}`, "word": `\p{L}\p{N}_`, "space": `\s`,
	"blank":  hSpaceClass,
	"xdigit": `0-9A-Fa-f`, "cntrl": `\x00-\x1F\x7F`, "punct": `!-/:-@\[-` + "`" + `{-~`,
}

// classEscape translates the escape at i inside a class.
func (t *translator) classEscape() error {
	n := t.p[t.i+1]
	switch n {
	case 's':
		if !t.ucp {
			t.emit(spaceClass)
			t.i += 2
			return nil
		}
	case 'h':
		t.emit(hSpaceClass)
		t.i += 2
		return nil
	case 'v':
		t.emit(vSpaceClass)
		t.i += 2
		return nil
	case 'H', 'V':
		return unsupported(`\%c in a character class`, n)
	case 'E':
		t.i += 2
		return nil
	case 'Q':
		rest := t.p[t.i+2:]
		end := strings.Index(rest, `\E`)
		text := rest
		if end >= 0 {
			text, t.i = rest[:end], t.i+2+end+2
		} else {
			t.i = len(t.p)
		}
		for _, r := range text {
			t.out = appendLiteral(t.out, r)
		}
		return nil
	case 'p', 'P', 'x':
		l := escapeLen(t.p[t.i:])
		t.emit(t.p[t.i : t.i+l])
		t.i += l
		return nil
	}
	_, size := utf8.DecodeRuneInString(t.p[t.i+1:])
	t.emit(t.p[t.i : t.i+1+size])
	t.i += 1 + size
	return nil
}

// openGroup translates the group, verb or inline option setting at i.
func (t *translator) openGroup() error {
	s := t.p[t.i:]
	if strings.HasPrefix(s, "(*") {
		end := strings.IndexByte(s, ')')
		if end < 0 {
			return &Error{Kind: Invalid, Err: fmt.Errorf("(*VERB) not recognized or malformed")}
		}
		if name := s[2:end]; name == "FAIL" || name == "F" {
			t.item("(?!)", end+1)
			return nil
		}
		return unsupported("the backtracking control verb %s", s[:end+1])
	}
	if !strings.HasPrefix(s, "(?") {
		t.captures++
		t.push("(", 1)
		return nil
	}
	if len(s) < 3 {
		t.push("(?", 2)
		return nil
	}
	switch c := s[2]; {
	case c == '#':
		end := strings.IndexByte(s, ')')
		if end < 0 {
			end = len(s) - 1
		}
		t.emit(s[:end+1])
		t.i += end + 1
	case c == ':' || c == '=' || c == '!' || c == '>':
		t.push(s[:3], 3)
	case c == '<' && len(s) > 3 && (s[3] == '=' || s[3] == '!'):
		if !lookbehindFixed(t.p, t.i+4) {
			return &Error{Kind: Invalid, Err: errLookbehind}
		}
		t.push(s[:4], 4)
	case c == '<' || c == '\'' || strings.HasPrefix(s[2:], "P<"):
		return t.namedGroup(s)
	case strings.HasPrefix(s[2:], "P="):
		end := strings.IndexByte(s, ')')
		if end < 0 {
			return &Error{Kind: Invalid, Err: fmt.Errorf("syntax error in subpattern name (missing terminator?)")}
		}
		t.item(`\k<`+s[4:end]+`>`, end+1)
	case c == '|':
		return unsupported("branch reset groups (?|")
	case c == 'R' || c == '&' || c >= '0' && c <= '9' || c == '+' ||
		c == '-' && len(s) > 3 && s[3] >= '0' && s[3] <= '9' || strings.HasPrefix(s[2:], "P>"):
		return unsupported("recursion and subroutine calls")
	case c == '(':
		return t.condition()
	default:
		return t.options()
	}
	return nil
}

// namedGroup opens the named capturing group s starts with: (?<name>,
// (?'name' or (?P<name>. A name given twice is an error, as in PCRE2
// without (?J); regexp2 would merge the groups.
func (t *translator) namedGroup(s string) error {
	start, closing := 3, byte('>')
	switch {
	case s[2] == 'P':
		start = 4
	case s[2] == '\'':
		closing = '\''
	}
	end := strings.IndexByte(s[start:], closing)
	if end < 0 {
		return &Error{Kind: Invalid, Err: fmt.Errorf("syntax error in subpattern name (missing terminator?)")}
	}
	name := s[start : start+end]
	if t.names[name] {
		return &Error{Kind: Invalid, Err: fmt.Errorf("two named subpatterns have the same name (PCRE2_DUPNAMES not set)")}
	}
	if t.names == nil {
		t.names = map[string]bool{}
	}
	t.names[name] = true
	t.captures++
	t.push("(?<"+name+">", start+end+1)
	return nil
}

// push opens a group written as open, n bytes of pattern.
func (t *translator) push(open string, n int) {
	t.open = append(t.open, group{start: len(t.out), m: t.m, x: t.x})
	t.emit(open)
	t.i += n
	t.atom = -1
}

func (t *translator) closeGroup() {
	t.emit(")")
	t.i++
	if len(t.open) == 0 {
		t.atom = -1 // regexp2 reports the unmatched parenthesis
		return
	}
	g := t.open[len(t.open)-1]
	t.open = t.open[:len(t.open)-1]
	t.m, t.x = g.m, g.x
	t.atom = g.start
}

// condition translates the start of a conditional group: a group number,
// a name ((?(<name>)...), (?('name')...) or bare) or an assertion.
func (t *translator) condition() error {
	s := t.p[t.i+3:]
	t.push("(?(", 3)
	switch {
	case strings.HasPrefix(s, "<") || strings.HasPrefix(s, "'"):
		end := strings.IndexByte(s, ')')
		if end < 2 {
			return &Error{Kind: Invalid, Err: fmt.Errorf("malformed number or name after (?(")}
		}
		t.emit(s[1:end-1] + ")")
		t.i += end + 1
	case strings.HasPrefix(s, "R") || strings.HasPrefix(s, "DEFINE") || strings.HasPrefix(s, "VERSION"):
		return unsupported("the condition of (?(%s", s[:min(len(s), 6)])
	}
	return nil
}

// options translates an inline option setting, (?imsx-imsx) for the rest
// of the group or (?imsx-imsx:...) for a group of its own.
func (t *translator) options() error {
	s := t.p[t.i:]
	j := 2
	on := true
	m, x := t.m, t.x
	for ; j < len(s) && s[j] != ')' && s[j] != ':'; j++ {
		switch s[j] {
		case '-':
			on = false
		case 'm':
			m = on
		case 'x':
			x = on
		case 'i', 's', 'n':
		case 'U', 'J', '^':
			return unsupported("the inline option (?%c)", s[j])
		default:
			return &Error{Kind: Invalid, Err: fmt.Errorf("unrecognized character after (? or (?-")}
		}
	}
	if j == len(s) {
		return &Error{Kind: Invalid, Err: fmt.Errorf("missing closing parenthesis")}
	}
	if s[j] == ':' {
		t.push(s[:j+1], j+1)
	} else {
		t.emit(s[:j+1])
		t.i += j + 1
		t.atom = -1
	}
	t.m, t.x = m, x
	return nil
}
