package regex

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// translate rewrites a PCRE2 pattern for regexp2: in RE2 compatibility
// mode (ASCII classes, POSIX classes, (?P<name>...)), or in its default
// .NET mode when the pattern starts with (*UCP), which ucp reports.
// multiline and caseless are the m and i options. The rewrites:
//
//   - $ outside (?m) and \Z become (?=\n?\z): the end, or before a final
//     newline (regexp2's RE2 mode reads both as the end only); ^ in (?m)
//     matches after no newline that ends the subject;
//   - a possessive quantifier (a*+, a++, a?+, a{n,m}+) becomes an atomic
//     group around its atom and the greedy quantifier;
//   - \Q...\E becomes the escaped literal text;
//   - \b and \B see ASCII word characters, as PCRE2's; i does not widen
//     \w, \W, \b, \B, properties, or the escapes and POSIX classes in a
//     class, as it does not in PCRE2 (regexp2's would match ſ and the
//     Kelvin sign with S and K);
//   - PCRE2's special properties \p{Xan}, \p{Xwd}, \p{Xsp}, \p{Xps},
//     \p{Xuc}, \p{L&} and \p{Any} (and their \P and \p{^...} negations)
//     become the classes PCRE2 gives them (a negated one inside a class
//     is refused);
//   - \s also matches a vertical tab, as PCRE2's; \h, \v, \R and \N
//     become the classes PCRE2 gives them (.NET reads \v as a vertical tab);
//   - \g{N}, \g{-N}, \gN, \g{name}, \k{name} and (?P=name) become \k<...>;
//     (?(<name>)...) becomes (?(name)...);
//   - a character escape (\xhh, \x{...}, \o{...}, \N{U+...}, \cX, and
//     \ddd where PCRE2 reads octal rather than a backreference) becomes
//     \x{...}; a letter PCRE2 gives no meaning after a backslash, a code
//     point it refuses, and an escape a class may not hold are errors, as
//     in PCRE2; [[:<:]] and [[:>:]] become a boundary and an assertion;
//   - a conditional's assertion gets its own parenthesis, (?((?=...))...),
//     and each of its branches is wrapped in (?:...) (regexp2 loses later
//     captures without the one and refuses an option group without the
//     other);
//   - a lookbehind holding a backreference or a conditional is matched
//     forwards from the start of each branch, as PCRE2 matches it;
//   - under (*CR) or (*NUL), the newline convention, . and \N match any
//     character but that one, and ^, $ and \Z find line ends at it;
//     (*BSR_ANYCRLF) makes \R match CR, LF and CR LF only;
//   - a repeat of ., \N, \R, \s, \S or \v followed by an item PCRE2's
//     auto-possessification takes for disjoint from it, although it is not,
//     is made possessive as PCRE2 makes it (see misjudged), unless the
//     pattern starts with (*NO_AUTO_POSSESS);
//   - (*UTF) and the other start-of-pattern optimization settings are
//     dropped; (*FAIL) becomes (?!); the alphabetic assertions (*pla:,
//     (*nla:, (*plb:, (*nlb:, (*atomic: and their long names become the
//     groups they name.
//
// Each branch of a lookbehind must match a fixed number of characters,
// as in PCRE2 10.40 (the translator measures what it emits; see width),
// and a quantifier must follow a repeatable item (not an anchor).
// What regexp2 cannot run is refused (Unsupported): recursion and
// subroutine calls, branch reset (?|, \K, \X, \C, backtracking verbs,
// non-atomic and script-run assertions,
// the U and J flags, match limits, and the newline conventions of more
// than one character ((*CRLF), (*ANYCRLF), (*ANY)), with which PCRE2 also
// moves a search past a CR LF pair at once.
func translate(p string, multiline, dotall, caseless bool) (string, bool, error) {
	t := &translator{p: p, m: multiline, s: dotall, fold: caseless, atom: -1}
	err := t.run()
	if t.forward && errors.Is(err, errLookbehind) {
		t = &translator{p: p, m: multiline, s: dotall, fold: caseless, atom: -1, earlier: t}
		err = t.run()
	}
	if err != nil {
		return "", false, err
	}
	return string(t.out), t.ucp, nil
}

func (t *translator) run() error {
	if err := t.startOptions(); err != nil {
		return err
	}
	var refused error
	for t.i < len(t.p) {
		err := t.step()
		if t.forward && t.earlier == nil && errors.Is(err, errLookbehind) {
			refused = err // the second pass decides once later groups are measured
			continue
		}
		if err != nil {
			return err
		}
	}
	if refused == nil {
		// A condition may name a group defined after it, not one no group
		// has.
		for _, name := range t.conditionNames {
			if _, ok := t.names[name]; !ok {
				return invalid(errNoSubpattern)
			}
		}
	}
	return refused
}

type translator struct {
	p   string
	i   int
	out []byte
	ucp bool
	// nl is the newline convention, bsrCRLF is set by (*BSR_ANYCRLF) and
	// noAutoPossess by (*NO_AUTO_POSSESS), from the start-of-pattern items.
	nl            newline
	bsrCRLF       bool
	noAutoPossess bool
	// m, s, x and fold are the multiline, dotall, extended and caseless
	// flags in effect.
	m, s, x, fold bool
	// typed is the kind of the item emitted at typedAt, for
	// auto-possessification (see misjudged).
	typed   autoType
	typedAt int
	// open holds the groups open at i.
	open []group
	// atom is where in out the last quantifiable item starts, -1 when none.
	atom int
	// width is the number of characters the current branch matches so
	// far (varies when not fixed); atomWidth is the last item's part of
	// it, added to what the branch had before it, beforeAtom; atomAhead
	// is set when that item is a lookahead.
	width, atomWidth, beforeAtom int
	atomAhead                    bool
	// captures counts the capturing groups opened so far; names maps
	// their names to their numbers, and widths (by number) holds the
	// width of each group closed so far.
	captures int
	names    map[string]int
	widths   []int
	// earlier is the first pass over the pattern when this is the second:
	// a backreference to a later group takes that group's width from it.
	// forward records that a lookbehind was refused for a reference to a
	// later group, which the second pass measures.
	earlier *translator
	forward bool
	// conditionNames are the group names conditions test, (?(<name>)...).
	conditionNames []string
}

type group struct {
	start         int
	m, s, x, fold bool // the flags in effect before the group
	kind          groupKind
	// capture is the group's number when it captures, else 0.
	capture int
	// before is the enclosing branch's width when the group opened;
	// branches is the width all the group's finished branches share
	// (unset before the first, varies when they differ) and fixed
	// whether each of them has a fixed width.
	before, branches int
	fixed            bool
	// A lookbehind holding a backreference or a condition on a group is
	// matched forwards (ltr), as PCRE2 matches each: regexp2 matches a
	// lookbehind backwards, so a group captured in it is not yet set
	// where it is referred to. bars are then the positions in out of the
	// lookbehind's own |, and lengths the widths of its branches.
	ltr     bool
	bars    []int
	lengths []int
	// A conditional group's branches are each wrapped in (?:...) once
	// its condition is read (wrapped): regexp2 does not read an option
	// group, (?i:...), at the start of a branch of a conditional. ends
	// marks the assertion that is a condition.
	wrapped, ends bool
}

type groupKind uint8

const (
	plainGroup groupKind = iota
	lookahead
	lookbehind
	conditional
)

// Widths in characters: varies stands for a width that is not fixed,
// unset for a group with no finished branch.
const (
	varies = -1
	unset  = -2
)

func addWidth(a, b int) int {
	if a == varies || b == varies {
		return varies
	}
	return min(a+b, 1<<30)
}

// errLookbehind is PCRE2's (10.40, MongoDB 7.0's) refusal of a lookbehind
// with a branch whose width varies; regexp2 would run it.
var errLookbehind = errors.New("lookbehind assertion is not fixed length")

func unsupported(format string, args ...any) error {
	return &Error{Kind: Unsupported, Err: fmt.Errorf("Folio does not support "+format+" in regular expressions", args...)}
}

// newline is a PCRE2 newline convention of one character: the zero value
// is LF, PCRE2's default (MongoDB builds it so).
type newline uint8

const (
	newlineLF newline = iota
	newlineCR
	newlineNUL
)

// escaped is the convention's character as an escape sequence.
func (nl newline) escaped() string {
	switch nl {
	case newlineCR:
		return `\r`
	case newlineNUL:
		return `\x00`
	}
	return `\n`
}

// byteOf is the convention's character.
func (nl newline) byteOf() byte {
	switch nl {
	case newlineCR:
		return '\r'
	case newlineNUL:
		return 0
	}
	return '\n'
}

// newlineOf is the newline convention p's start-of-pattern items set
// (the last one given wins, as in PCRE2).
func newlineOf(p string) newline {
	t := translator{p: p}
	_ = t.startOptions() // translate reports the items it refuses
	return t.nl
}

// startOptions consumes PCRE2's start-of-pattern items: (*UTF), (*UCP),
// optimization switches, the newline conventions of one character and
// \R's; it refuses limits, the other newline conventions and the match
// options.
func (t *translator) startOptions() error {
	for strings.HasPrefix(t.p[t.i:], "(*") {
		end := strings.IndexByte(t.p[t.i:], ')')
		if end < 0 {
			return nil
		}
		name := t.p[t.i+2 : t.i+end]
		switch {
		case name == "UTF" || name == "UTF8" || name == "NO_START_OPT" || name == "NO_DOTSTAR_ANCHOR" || name == "NO_JIT":
		case name == "NO_AUTO_POSSESS":
			t.noAutoPossess = true
		case name == "LF":
			t.nl = newlineLF
		case name == "CR":
			t.nl = newlineCR
		case name == "NUL":
			t.nl = newlineNUL
		case name == "BSR_ANYCRLF" || name == "BSR_UNICODE":
			t.bsrCRLF = name == "BSR_ANYCRLF"
		case strings.HasPrefix(name, "LIMIT_MATCH=") || strings.HasPrefix(name, "LIMIT_DEPTH=") ||
			strings.HasPrefix(name, "LIMIT_HEAP=") || strings.HasPrefix(name, "LIMIT_RECURSION="):
			// PCRE2 fails a match past them (51156); Folio's engine
			// cannot count its steps
			return unsupported("(*%s)", name)
		case name == "UCP":
			t.ucp = true
		case name == "CRLF" || name == "ANYCRLF" || name == "ANY" || name == "NOTEMPTY" || name == "NOTEMPTY_ATSTART":
			return unsupported("(*%s)", name)
		default:
			return nil // a backtracking verb, for step
		}
		t.i += end + 1
	}
	return nil
}

func (t *translator) emit(s string) { t.out = append(t.out, s...) }

// item emits s as a quantifiable item matching w characters (0, 1 or
// varies) and moves past n bytes of pattern.
func (t *translator) item(s string, n, w int) {
	t.atom = len(t.out)
	t.emit(s)
	t.i += n
	t.widen(w)
}

// anchor emits s, an anchor PCRE2 does not let a quantifier repeat, and
// moves past n bytes of pattern.
func (t *translator) anchor(s string, n int) {
	t.emit(s)
	t.i += n
	t.atom = -1
}

// widen adds an item of width w to the current branch.
func (t *translator) widen(w int) {
	t.beforeAtom, t.atomWidth, t.atomAhead = t.width, w, false
	t.width = addWidth(t.width, w)
}

func (t *translator) step() error {
	c := t.p[t.i]
	switch {
	case c == '\\':
		return t.escape()
	case strings.HasPrefix(t.p[t.i:], "[[:<:]]"), strings.HasPrefix(t.p[t.i:], "[[:>:]]"):
		t.wordEdge(t.p[t.i+3] == '<')
	case c == '[':
		return t.class()
	case c == '(':
		return t.openGroup()
	case c == ')':
		return t.closeGroup()
	case c == '|':
		if len(t.open) > 0 && t.open[len(t.open)-1].wrapped {
			t.emit(")|(?:")
		} else {
			t.emit("|")
		}
		t.atom = -1
		t.i++
		if len(t.open) > 0 {
			g := &t.open[len(t.open)-1]
			if g.kind == lookbehind {
				g.bars = append(g.bars, len(t.out)-1)
			}
			g.endBranch(t.width)
		}
		t.width = 0
	case c == '*' || c == '+' || c == '?':
		return t.quantifier(1)
	case c == '{' && quantifierLen(t.p[t.i:]) > 0:
		return t.quantifier(quantifierLen(t.p[t.i:]))
	case c == '$' && !t.m:
		t.anchor(`(?=`+t.nl.escaped()+`?\z)`, 1)
	case c == '$' && t.nl != newlineLF:
		t.anchor(`(?=`+t.nl.escaped()+`|\z)`, 1)
	case c == '^' && t.m:
		t.anchor(`(?:\A|(?<=`+t.nl.escaped()+`)(?!\z))`, 1)
	case c == '.' && !t.s:
		if t.nl == newlineLF {
			t.item(".", 1, 1)
		} else {
			t.item(`[^`+t.nl.escaped()+`]`, 1, 1)
		}
		t.mark(autoAny)
	case t.x && c == '#':
		// passed on to regexp2, which ends it at a LF (and so keeps the
		// items on either side apart, as PCRE2 does: {1#c\n,3} is no
		// quantifier), with a LF where PCRE2 ends it, at the newline
		// convention's character, and none before
		end := strings.IndexByte(t.p[t.i:], t.nl.byteOf())
		if end < 0 {
			end = len(t.p) - t.i
		}
		t.emit(strings.ReplaceAll(t.p[t.i:t.i+end], "\n", " "))
		if t.i+end < len(t.p) {
			t.emit("\n")
			end++
		}
		t.i += end
	case t.x && strings.IndexByte(" \t\n\r\f\v", c) >= 0:
		t.emit(t.p[t.i : t.i+1])
		t.i++
	case c == '^' || c == '$':
		t.anchor(t.p[t.i:t.i+1], 1)
	case c == '{':
		// not a quantifier (else above): escaped, for regexp2 in (?x)
		// would read {1 ,3} as one, where PCRE2 10.40 reads the text
		t.item(`\{`, 1, 1)
	default:
		_, n := utf8.DecodeRuneInString(t.p[t.i:])
		t.item(t.p[t.i:t.i+n], n, 1)
	}
	return nil
}

// quantifierLen is the length of the {n}, {n,} or {n,m} quantifier s
// starts with, 0 when the brace is a literal.
// wordEdge translates PCRE2's [[:<:]] (start of a word) and [[:>:]] (end),
// which PCRE2 reads as \b(?=\w) and \b(?<=\w), word characters ASCII
// without (*UCP): a quantifier after them repeats the assertion.
func (t *translator) wordEdge(start bool) {
	boundary, word := asciiBoundary, `(?-i:[A-Za-z0-9_])`
	if t.ucp {
		boundary, word = `\b`, `\w`
	}
	look := "(?="
	if !start {
		look = "(?<="
	}
	t.anchor(boundary, 0)
	t.item(look+word+")", len("[[:<:]]"), 0)
	t.atomAhead = true
}

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

// repeatedWidth is the width of an item of width w under a quantifier: as
// in PCRE2, fixed only for an exact count ({n}, {n,n}; count is n's
// digits), whatever w, or for a lookahead, which any quantifier leaves of
// width 0.
func repeatedWidth(w int, exact bool, count string, lookahead bool) int {
	switch {
	case lookahead:
		return 0
	case w == varies || !exact:
		return varies
	}
	k, _ := strconv.Atoi(count) // at most 65,535 (quantifier)
	return min(w*k, 1<<30)
}

// quantifier emits the n-byte quantifier at i with its lazy or possessive
// suffix; a possessive one wraps its atom in an atomic group. Nothing
// before it, an anchor, an option setting or another quantifier is an
// error, as in PCRE2.
func (t *translator) quantifier(n int) error {
	bare := t.p[t.i : t.i+n] // without the lazy or possessive suffix
	q := bare
	t.i += n
	possessive := false
	if t.i < len(t.p) && t.p[t.i] == '?' {
		q += "?"
		t.i++
	} else if t.i < len(t.p) && t.p[t.i] == '+' {
		possessive = true
		t.i++
	}
	if t.atom < 0 {
		return &Error{Kind: Invalid, Err: errors.New("quantifier does not follow a repeatable item")}
	}
	if !possessive && !t.noAutoPossess && t.typed != autoNone && t.atom == t.typedAt && misjudged(t.typed, t.next(t.i, q != bare)) {
		// PCRE2 makes the repeat possessive, and greedy
		q, possessive = bare, true
	}
	t.typed = autoNone
	var lo, hi string
	ranged := false
	if bare[0] == '{' {
		lo, hi, ranged = strings.Cut(bare[1:len(bare)-1], ",")
		for _, num := range [...]string{lo, hi} {
			num = strings.TrimLeft(num, "0")
			if len(num) > 5 || len(num) == 5 && num > "65535" {
				return &Error{Kind: Invalid, Err: errors.New("number too big in {} quantifier")}
			}
		}
		if l, errL := strconv.Atoi(lo); ranged && hi != "" && errL == nil {
			if h, _ := strconv.Atoi(hi); h < l {
				return invalid("numbers out of order in {} quantifier")
			}
		}
	}
	exact := bare[0] == '{' && (!ranged || hi == lo)
	t.width = addWidth(t.beforeAtom, repeatedWidth(t.atomWidth, exact, lo, t.atomAhead))
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
	return nil
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
	// (PCRE2's i does not widen them; regexp2's would add S and K for ſ
	// and the Kelvin sign.)
	asciiBoundary    = `(?-i:(?<=[A-Za-z0-9_])(?![A-Za-z0-9_])|(?<![A-Za-z0-9_])(?=[A-Za-z0-9_]))`
	asciiNonBoundary = `(?-i:(?<=[A-Za-z0-9_])(?=[A-Za-z0-9_])|(?<![A-Za-z0-9_])(?![A-Za-z0-9_]))`
)

// escape translates the escape sequence at i, outside a class.
func (t *translator) escape() error {
	if t.i+1 == len(t.p) {
		t.item(`\`, 1, 1) // regexp2 reports the trailing backslash
		return nil
	}
	n := t.p[t.i+1]
	switch n {
	case 'Q':
		t.quoted()
	case 'E':
		t.i += 2
	case 'Z':
		t.anchor(`(?=`+t.nl.escaped()+`?\z)`, 2)
	case 'K', 'X', 'C':
		return unsupported(`\%c`, n)
	case 's', 'S':
		if t.ucp {
			t.item(t.p[t.i:t.i+2], 2, 1)
		} else if n == 's' {
			t.item("["+spaceClass+"]", 2, 1)
			t.mark(autoSpace)
		} else {
			t.item("[^"+spaceClass+"]", 2, 1)
			t.mark(autoNotSpace)
		}
	case 'b', 'B':
		if t.ucp {
			t.anchor(t.p[t.i:t.i+2], 2)
		} else if n == 'b' {
			t.anchor(asciiBoundary, 2)
		} else {
			t.anchor(asciiNonBoundary, 2)
		}
	case 'h':
		t.item("["+hSpaceClass+"]", 2, 1)
	case 'H':
		t.item("[^"+hSpaceClass+"]", 2, 1)
	case 'v':
		t.item("["+vSpaceClass+"]", 2, 1)
		t.mark(autoVSpace)
	case 'V':
		t.item("[^"+vSpaceClass+"]", 2, 1)
	case 'R':
		if t.bsrCRLF {
			t.item(`(?>\r\n|[\r\n])`, 2, varies)
		} else {
			t.item(lineBreakExpr, 2, varies)
		}
		t.mark(autoLineBreak)
	case 'N':
		if rest := t.p[t.i+2:]; strings.HasPrefix(rest, "{") && quantifierLen(rest) == 0 {
			// Not a repeat of \N: a character by its code point, \N{U+hh...},
			// or a character name, which PCRE2 refuses.
			if !strings.HasPrefix(rest, "{U+") {
				return invalid(errPerlEscape)
			}
			r, l, err := bracedCodePoint(rest[3:], false)
			if err != nil {
				return err
			}
			t.item(fmt.Sprintf(`\x{%X}`, r), 5+l, 1)
			return nil
		}
		t.item(`[^`+t.nl.escaped()+`]`, 2, 1)
		t.mark(autoAny)
	case 'g':
		return t.backreference()
	case 'k':
		// \k{name}, \k<name>, \k'name'
		closing := map[byte]byte{'{': '}', '<': '>', '\'': '\''}
		if t.i+2 < len(t.p) && closing[t.p[t.i+2]] != 0 {
			if end := strings.IndexByte(t.p[t.i+3:], closing[t.p[t.i+2]]); end >= 0 {
				name := t.p[t.i+3 : t.i+3+end]
				t.item(`\k<`+name+`>`, 3+end+1, t.refWidth(name))
				return nil
			}
		}
		t.item(`\k`, 2, varies) // regexp2 reports the malformed reference
	case 'w', 'W', 'p', 'P':
		if body, negated, l, ok := specialProperty(t.p[t.i:]); ok {
			hat := ""
			if negated {
				hat = "^"
			}
			t.item("["+hat+body+"]", l, 1)
			return nil
		}
		// PCRE2's i does not widen \w, \W (ASCII without UCP) or a
		// property; regexp2's would add ſ and the Kelvin sign to S and K.
		l, esc := 2, t.p[t.i:t.i+2]
		if n == 'p' || n == 'P' {
			l = escapeLen(t.p[t.i:])
			esc = property(t.p[t.i : t.i+l])
		}
		if t.fold && (!t.ucp || n == 'p' || n == 'P') {
			t.item(`(?-i:`+esc+`)`, l, 1)
		} else {
			t.item(esc, l, 1)
		}
	case 'x', 'c', 'o':
		r, l, err := t.characterEscape()
		if err != nil {
			return err
		}
		t.item(fmt.Sprintf(`\x{%X}`, r), l, 1)
	case 'A', 'z', 'G':
		t.anchor(t.p[t.i:t.i+2], 2)
	case '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return t.digitEscape()
	default:
		if err := letterEscapeError(n, false); err != nil {
			return err
		}
		_, size := utf8.DecodeRuneInString(t.p[t.i+1:])
		t.item(t.p[t.i:t.i+1+size], 1+size, 1)
	}
	return nil
}

// digitEscape translates \ followed by a digit other than 0. As PCRE2
// reads it, the decimal number is a backreference when it is below 10,
// starts with 8 or 9, or that many groups have opened before it; otherwise
// up to three octal digits give a character and any other digits are
// literals (\101 is A, \18 is \x01 and 8).
func (t *translator) digitEscape() error {
	j := t.i + 1
	for j < len(t.p) && t.p[j] >= '0' && t.p[j] <= '9' {
		j++
	}
	digits := t.p[t.i+1 : j]
	num, err := strconv.Atoi(digits)
	if err != nil || len(digits) > 9 {
		num = math.MaxInt32
	}
	if num < 10 || digits[0] >= '8' || num <= t.captures {
		if num < 10 {
			t.item(t.p[t.i:j], j-t.i, t.refWidth(digits))
		} else {
			t.item(`\k<`+strconv.Itoa(num)+`>`, j-t.i, t.refWidth(strconv.Itoa(num)))
		}
		return nil
	}
	var r rune
	n := 0
	for n < 3 && n < len(digits) && digits[n] <= '7' {
		r = r<<3 | rune(digits[n]-'0')
		n++
	}
	t.item(fmt.Sprintf(`\x{%X}`, r), 1+n, 1)
	return nil
}

// PCRE2's compile errors for escapes.
const (
	errUnrecognizedEscape = `unrecognized character follows \`
	errPerlEscape         = `PCRE2 does not support \F, \L, \l, \N{name}, \U, or \u`
	errClassEscape        = `escape sequence is invalid in character class`
	errDigitsMissing      = `digits missing in \x{} or \o{} or \N{U+}`
	errNonHex             = `non-hex character in \x{} (closing brace missing?)`
	errNonOctal           = `non-octal character in \o{} (closing brace missing?)`
	errTooLarge           = `character code point value in \x{} or \o{} is too large`
	errSurrogate          = `disallowed Unicode code point (>= 0xd800 && <= 0xdfff)`
	errNoSubpattern       = "reference to non-existent subpattern"
)

// invalid is the compile error PCRE2 reports with text.
func invalid(text string) error { return &Error{Kind: Invalid, Err: errors.New(text)} }

// letterEscapeError is PCRE2's error for a backslash followed by the ASCII
// letter n, nil when PCRE2 gives the escape a meaning there (in a class
// when inClass). PCRE2 gives none to most letters: \F, \L, \l, \U and \u
// (Perl's case escapes) fail with a message naming them, the others as
// unrecognized; in a class, the escapes that match no single character
// (the anchors, \B, \R, \X, \C, \K, \k) are invalid, and \N has its own
// error.
func letterEscapeError(n byte, inClass bool) error {
	switch n {
	case 'F', 'L', 'l', 'U', 'u':
		return invalid(errPerlEscape)
	case 'I', 'J', 'M', 'O', 'T', 'Y', 'i', 'j', 'm', 'q', 'y':
		return invalid(errUnrecognizedEscape)
	}
	if inClass {
		switch n {
		case 'N':
			return invalid(`\N is not supported in a class`)
		case 'A', 'B', 'C', 'G', 'K', 'R', 'X', 'Z', 'k', 'z':
			return invalid(errClassEscape)
		}
	}
	return nil
}

// characterEscape reads the \x, \o or \c escape at i: the character it
// stands for and its length. \xhh takes up to two hexadecimal digits
// (none is NUL); \x{...} a code point, \o{...} one in octal; \cX is the
// printable ASCII character X, upper-cased, with bit 6 flipped.
func (t *translator) characterEscape() (rune, int, error) {
	s := t.p[t.i+2:]
	if t.p[t.i+1] == 'o' {
		if !strings.HasPrefix(s, "{") {
			return 0, 0, invalid(`missing opening brace after \o`)
		}
		r, l, err := bracedCodePoint(s[1:], true)
		return r, 3 + l, err
	}
	if t.p[t.i+1] == 'c' {
		switch {
		case s == "":
			return 0, 0, invalid(`\c at end of pattern`)
		case s[0] < ' ' || s[0] > '~':
			return 0, 0, invalid(`\c must be followed by a printable ASCII character`)
		}
		c := s[0]
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		return rune(c ^ 0x40), 3, nil
	}
	if strings.HasPrefix(s, "{") {
		r, l, err := bracedCodePoint(s[1:], false)
		return r, 3 + l, err
	}
	var r rune
	n := 0
	for n < len(s) && n < 2 {
		v := hexDigit(s[n])
		if v < 0 {
			break
		}
		r = r<<4 | rune(v)
		n++
	}
	return r, 2 + n, nil
}

// hexDigit is the value of the hexadecimal digit c, or -1.
func hexDigit(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// bracedCodePoint reads the digits and closing brace of \x{...}, \o{...}
// (octal) or \N{U+...}, s starting after the opening: the code point and
// the length read. As in PCRE2's UTF mode, no digits, a value past
// U+10FFFF, a surrogate, or something other than a digit before the
// brace is an error.
func bracedCodePoint(s string, octal bool) (rune, int, error) {
	if s == "" || s[0] == '}' {
		return 0, 0, invalid(errDigitsMissing)
	}
	var v int64
	i := 0
	for ; i < len(s); i++ {
		d := hexDigit(s[i])
		if octal && (s[i] < '0' || s[i] > '7') {
			d = -1
		}
		if d < 0 {
			break
		}
		if octal {
			v = v<<3 | int64(d)
		} else {
			v = v<<4 | int64(d)
		}
		if v > utf8.MaxRune {
			return 0, 0, invalid(errTooLarge)
		}
	}
	switch {
	case i == len(s) || s[i] != '}':
		if octal {
			return 0, 0, invalid(errNonOctal)
		}
		return 0, 0, invalid(errNonHex)
	case v >= 0xD800 && v <= 0xDFFF:
		return 0, 0, invalid(errSurrogate)
	}
	return rune(v), i + 1, nil
}

// pcreProperties are the class bodies of PCRE2's special properties, which
// regexp2 does not know: Xan (alphanumeric), Xsp and Xps (Perl and POSIX
// space: Z and the spaces of \h and \v), Xwd (word: alphanumeric and _),
// Xuc (what a universal character name can stand for), L& (a cased letter)
// and Any.
// PCRE2 matches them with Unicode properties with or without (*UCP).
var pcreProperties = map[string]string{
	"Xan": `\p{L}\p{N}`, "Xwd": `\p{L}\p{N}_`,
	"Xsp": `\p{Z}` + hSpaceClass + vSpaceClass, "Xps": `\p{Z}` + hSpaceClass + vSpaceClass,
	"Xuc": `$@` + "`" + `\x{A0}-\x{D7FF}\x{E000}-\x{10FFFF}`,
	"L&":  `\p{Lu}\p{Ll}\p{Lt}`, "Any": `\x{0}-\x{10FFFF}`,
}

// specialProperty reads the \p{...} or \P{...} escape s starts with when it
// names one of pcreProperties (\p{^...} negates, as \P): the class body,
// whether the escape is negated, and its length.
func specialProperty(s string) (body string, negated bool, n int, ok bool) {
	if len(s) < 4 || s[2] != '{' {
		return "", false, 0, false
	}
	end := strings.IndexByte(s, '}')
	if end < 0 {
		return "", false, 0, false
	}
	name := s[3:end]
	negated = s[1] == 'P'
	if strings.HasPrefix(name, "^") {
		name, negated = name[1:], !negated
	}
	body, ok = pcreProperties[name]
	return body, negated, end + 1, ok
}

// property is the \p or \P escape esc with PCRE2's negation in braces,
// \p{^L}, written as regexp2 reads it, \P{L}.
func property(esc string) string {
	if !strings.HasPrefix(esc[2:], "{^") {
		return esc
	}
	flipped := "p"
	if esc[1] == 'p' {
		flipped = "P"
	}
	return `\` + flipped + "{" + esc[4:]
}

// escapeLen is the length of the \p or \P escape s starts with: its
// braced form, or one letter (\pL).
func escapeLen(s string) int {
	if len(s) > 2 && s[2] == '{' {
		if end := strings.IndexByte(s, '}'); end > 0 {
			return end + 1
		}
		return len(s)
	}
	return min(3, len(s))
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
		t.widen(1)
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
		// A signed number counts from the groups opened so far: -1 is the
		// last, +1 the next.
		if strings.HasPrefix(ref, "-") || strings.HasPrefix(ref, "+") {
			if num, err = t.relativeGroup(num); err != nil {
				return err
			}
		} else if num <= 0 {
			return invalid(errNoSubpattern)
		}
		ref = strconv.Itoa(num)
	} else if ref == "" {
		return &Error{Kind: Invalid, Err: fmt.Errorf(`\g is not followed by a braced, angle-bracketed, or quoted name/number or by a plain number`)}
	}
	t.item(`\k<`+ref+`>`, n, t.refWidth(ref))
	return nil
}

// relativeGroup is the number of the group a signed reference num
// (\g{-1}, (?(+1)...)) names, counting from the groups opened so far: -1
// the last, +1 the next.
func (t *translator) relativeGroup(num int) (int, error) {
	switch {
	case num == 0:
		return 0, invalid("a relative value of zero is not allowed")
	case num < 0:
		num += t.captures + 1
	default:
		num += t.captures
	}
	if num <= 0 {
		return 0, invalid(errNoSubpattern)
	}
	return num, nil
}

// class translates the character class at i.
func (t *translator) class() error {
	start := len(t.out)
	t.emit("[")
	t.i++
	negated := t.i < len(t.p) && t.p[t.i] == '^'
	if negated {
		t.emit("^")
		t.i++
	}
	// PCRE2's i widens a class's characters and ranges (lits) but not its
	// escapes and POSIX classes with letters (sets); regexp2's i widens
	// both, adding ſ and the Kelvin sign to S and K.
	var sets, lits []byte
	if t.i < len(t.p) && t.p[t.i] == ']' { // a leading ] is a literal
		t.emit(`\]`)
		t.i++
		lits = append(lits, `\]`...)
	}
	// last is the kind of the previous member: a set cannot end a range.
	var last classMember
	member := func(m classMember) error {
		switch {
		case m == setMember && last == rangeDash,
			m == dashMember && last == setMember && t.i < len(t.p) && t.p[t.i] != ']':
			return &Error{Kind: Invalid, Err: errors.New("invalid range in character class")}
		case m == dashMember && last == literalMember:
			last = rangeDash
		case m != setMember && last == rangeDash:
			last = rangeEnd
		case m == dashMember:
			last = literalMember
		default:
			last = m
		}
		return nil
	}
	for t.i < len(t.p) && t.p[t.i] != ']' {
		c := t.p[t.i]
		from := len(t.out)
		cased := true
		switch {
		case c == '\\' && t.i+1 < len(t.p):
			n := t.p[t.i+1]
			cased = strings.IndexByte("wWdDSpP", n) < 0
			kind := literalMember
			if strings.IndexByte("wWdDsShHvVpP", n) >= 0 {
				kind = setMember
			}
			if err := member(kind); err != nil {
				return err
			}
			if err := t.classEscape(); err != nil {
				return err
			}
		case strings.HasPrefix(t.p[t.i:], "[:"):
			end := posixClassEnd(t.p, t.i) - t.i
			if end < 0 {
				t.emit(`\[`)
				t.i++
				lits = append(lits, `\[`...)
				continue
			}
			name := t.p[t.i+2 : t.i+end]
			cased = false
			if err := member(setMember); err != nil {
				return err
			}
			if t.ucp {
				s, ok := ucpPOSIX[name]
				if !ok {
					return unsupported("[:%s:] with (*UCP)", name)
				}
				t.emit(s)
			} else if body, ok := asciiClass(name, t.fold); ok {
				t.emit(body)
			} else {
				return invalid("unknown POSIX class name")
			}
			t.i += end + 2
		case c == '[':
			t.emit(`\[`) // .NET reads -[...] as a subtraction
			t.i++
		default:
			r, n := utf8.DecodeRuneInString(t.p[t.i:])
			t.emit(t.p[t.i : t.i+n])
			t.i += n
			kind := literalMember
			if r == '-' {
				kind = dashMember
			}
			if err := member(kind); err != nil {
				return err
			}
		}
		if cased {
			lits = append(lits, t.out[from:]...)
		} else {
			sets = append(sets, t.out[from:]...)
		}
	}
	if t.i < len(t.p) {
		t.emit("]")
		t.i++
		if t.fold && !t.ucp && len(sets) > 0 {
			t.out = append(t.out[:start], foldClass(sets, lits, negated)...)
		}
	}
	t.atom = start
	t.widen(1)
	return nil
}

// posixClassEnd is the index of the :] ending the POSIX class name that
// "[:" at i opens in a class, or -1 when PCRE2 reads no name there
// (check_posix_syntax): a ] or another [: comes first (\] and \\ are
// skipped), or there is no :]. The [ is then a literal.
func posixClassEnd(p string, i int) int {
	for j := i + 2; j+1 < len(p); j++ {
		switch {
		case p[j] == '\\' && (p[j+1] == ']' || p[j+1] == '\\'):
			j++
		case p[j] == ']' || p[j] == '[' && p[j+1] == ':':
			return -1
		case p[j] == ':' && p[j+1] == ']':
			return j
		}
	}
	return -1
}

// foldClass is a class under i whose sets i must not widen: (?-i:[sets])
// or [lits], or for a negated class, neither.
func foldClass(sets, lits []byte, negated bool) string {
	hat := ""
	if negated {
		hat = "^"
	}
	if len(lits) == 0 {
		return "(?-i:[" + hat + string(sets) + "])"
	}
	if lits[0] == '^' {
		lits = append([]byte(`\`), lits...)
	}
	if negated {
		return "(?:(?!(?-i:[" + string(sets) + "]))[^" + string(lits) + "])"
	}
	return "(?:(?-i:[" + string(sets) + "])|[" + string(lits) + "])"
}

// classMember is the kind of a character class's member, for the ranges
// PCRE2 refuses: [\d-z], [a-\d].
type classMember uint8

const (
	noMember      classMember = iota
	literalMember             // a character
	setMember                 // an escape or a POSIX class
	dashMember                // a -
	rangeDash                 // a - after a character: a range's
	rangeEnd                  // the end of a range
)

// asciiPOSIX is each POSIX class without (*UCP): PCRE2 keeps them ASCII,
// where regexp2 reads [:digit:] as every decimal digit and [:space:] as
// every space.
var asciiPOSIX = map[string]func(c byte) bool{
	"alpha": func(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' },
	"lower": func(c byte) bool { return c >= 'a' && c <= 'z' },
	"upper": func(c byte) bool { return c >= 'A' && c <= 'Z' },
	"digit": func(c byte) bool { return c >= '0' && c <= '9' },
	"alnum": func(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' || c >= '0' && c <= '9' },
	"word":  func(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' || c >= '0' && c <= '9' || c == '_' },
	"space": func(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' },
	"blank": func(c byte) bool { return c == ' ' || c == '\t' },
	"xdigit": func(c byte) bool {
		return c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'f'
	},
	"cntrl": func(c byte) bool { return c < 0x20 || c == 0x7F },
	"punct": func(c byte) bool {
		return c > ' ' && c < 0x7F && !(c|0x20 >= 'a' && c|0x20 <= 'z' || c >= '0' && c <= '9')
	},
	"graph": func(c byte) bool { return c > ' ' && c < 0x7F },
	"print": func(c byte) bool { return c >= ' ' && c < 0x7F },
	"ascii": func(c byte) bool { return c < 0x80 },
}

// asciiClass is the class body of the POSIX class name ("^name" negated)
// without (*UCP), as ranges of code points; under i (fold) upper and lower
// are alpha, as PCRE2 makes them, and i widens nothing further (the caller
// keeps the body out of regexp2's folding).
func asciiClass(name string, fold bool) (string, bool) {
	negated := strings.HasPrefix(name, "^")
	name = strings.TrimPrefix(name, "^")
	if fold && (name == "upper" || name == "lower") {
		name = "alpha"
	}
	in, ok := asciiPOSIX[name]
	if !ok {
		return "", false
	}
	var b strings.Builder
	for lo := 0; lo < 0x80; {
		if in(byte(lo)) == negated {
			lo++
			continue
		}
		hi := lo
		for hi+1 < 0x80 && in(byte(hi+1)) != negated {
			hi++
		}
		fmt.Fprintf(&b, `\x{%X}-\x{%X}`, lo, hi)
		lo = hi + 1
	}
	if negated {
		b.WriteString(`\x{80}-\x{10FFFF}`)
	}
	return b.String(), true
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
	case 'x', 'c', 'o':
		r, l, err := t.characterEscape()
		if err != nil {
			return err
		}
		t.emit(fmt.Sprintf(`\x{%X}`, r))
		t.i += l
		return nil
	case 'g':
		t.emit("g") // a literal in a class
		t.i += 2
		return nil
	case 'p', 'P':
		if body, negated, l, ok := specialProperty(t.p[t.i:]); ok {
			if negated {
				return unsupported("%s in a character class", t.p[t.i:t.i+l])
			}
			t.emit(body)
			t.i += l
			return nil
		}
		l := escapeLen(t.p[t.i:])
		t.emit(property(t.p[t.i : t.i+l]))
		t.i += l
		return nil
	}
	if err := letterEscapeError(n, true); err != nil {
		return err
	}
	_, size := utf8.DecodeRuneInString(t.p[t.i+1:])
	t.emit(t.p[t.i : t.i+1+size])
	t.i += 1 + size
	return nil
}

// openGroup translates the group, verb or inline option setting at i.
func (t *translator) openGroup() error {
	if len(t.open) == maxNesting {
		return &Error{Kind: Invalid, Err: errors.New("parentheses are too deeply nested")}
	}
	s := t.p[t.i:]
	if strings.HasPrefix(s, "(*") {
		return t.verb(s)
	}
	if !strings.HasPrefix(s, "(?") {
		t.captures++
		t.push("(", 1, plainGroup)
		t.open[len(t.open)-1].capture = t.captures
		return nil
	}
	if len(s) < 3 {
		t.push("(?", 2, plainGroup)
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
	case c == '=' || c == '!':
		t.push(s[:3], 3, lookahead)
	case c == ':' || c == '>':
		t.push(s[:3], 3, plainGroup)
	case c == '<' && len(s) > 3 && (s[3] == '=' || s[3] == '!'):
		t.push(s[:4], 4, lookbehind)
	case c == '<' || c == '\'' || strings.HasPrefix(s[2:], "P<"):
		return t.namedGroup(s)
	case strings.HasPrefix(s[2:], "P="):
		end := strings.IndexByte(s, ')')
		if end < 0 {
			return &Error{Kind: Invalid, Err: fmt.Errorf("syntax error in subpattern name (missing terminator?)")}
		}
		t.item(`\k<`+s[4:end]+`>`, end+1, t.refWidth(s[4:end]))
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

// alphaAssertions are PCRE2's (10.34+) alphabetic names of the assertions
// and atomic groups regexp2 has, written (*name:...), as the groups they
// stand for.
var alphaAssertions = map[string]struct {
	open string
	kind groupKind
}{
	"pla": {"(?=", lookahead}, "positive_lookahead": {"(?=", lookahead},
	"nla": {"(?!", lookahead}, "negative_lookahead": {"(?!", lookahead},
	"plb": {"(?<=", lookbehind}, "positive_lookbehind": {"(?<=", lookbehind},
	"nlb": {"(?<!", lookbehind}, "negative_lookbehind": {"(?<!", lookbehind},
	"atomic": {"(?>", plainGroup},
}

// verb translates the (* item at the start of s, past the start of the
// pattern, as PCRE2 parses it: a lowercase name is an alphabetic
// assertion, which a colon must follow (those regexp2 cannot run are
// refused, an unknown name is invalid); (*FAIL) and (*F) never match; the
// other backtracking control verbs are refused; any other name, a
// start-of-pattern item such as (*UCP) among them, is invalid.
func (t *translator) verb(s string) error {
	n := 2
	for n < len(s) && (s[n] >= 'a' && s[n] <= 'z' || s[n] == '_') {
		n++
	}
	if n > 2 {
		name := s[2:n]
		if a, ok := alphaAssertions[name]; ok && n < len(s) && s[n] == ':' {
			t.push(a.open, n+1, a.kind)
			return nil
		}
		switch name {
		case "napla", "naplb", "non_atomic_positive_lookahead", "non_atomic_positive_lookbehind",
			"sr", "script_run", "asr", "atomic_script_run":
			if n < len(s) && s[n] == ':' {
				return unsupported("the assertion (*%s:", name)
			}
		}
		return &Error{Kind: Invalid, Err: errors.New("(*alpha_assertion) not recognized")}
	}
	end := strings.IndexByte(s, ')')
	if end < 0 {
		return &Error{Kind: Invalid, Err: errors.New("(*VERB) not recognized or malformed")}
	}
	name, arg, _ := strings.Cut(s[2:end], ":")
	switch name {
	case "FAIL", "F": // with a name, (*MARK:name)(*FAIL); marks are not reported
		t.item("(?!)", end+1, 0)
		return nil
	case "MARK", "":
		if arg == "" {
			return &Error{Kind: Invalid, Err: errors.New("(*MARK) must have an argument")}
		}
		return unsupported("the backtracking control verb %s", s[:end+1])
	case "ACCEPT", "COMMIT", "PRUNE", "SKIP", "THEN":
		return unsupported("the backtracking control verb %s", s[:end+1])
	}
	return &Error{Kind: Invalid, Err: errors.New("(*VERB) not recognized or malformed")}
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
	if _, ok := t.names[name]; ok {
		return &Error{Kind: Invalid, Err: fmt.Errorf("two named subpatterns have the same name (PCRE2_DUPNAMES not set)")}
	}
	if t.names == nil {
		t.names = map[string]int{}
	}
	t.captures++
	t.names[name] = t.captures
	t.push("(?<"+name+">", start+end+1, plainGroup)
	t.open[len(t.open)-1].capture = t.captures
	return nil
}

// maxNesting is how deeply MongoDB lets PCRE2 nest parentheses.
const maxNesting = 250

// push opens a group written as open, n bytes of pattern.
func (t *translator) push(open string, n int, kind groupKind) {
	t.open = append(t.open, group{start: len(t.out), m: t.m, s: t.s, x: t.x, fold: t.fold, kind: kind, before: t.width, branches: unset, fixed: true})
	t.emit(open)
	t.i += n
	t.atom = -1
	t.width = 0
}

// endBranch records the width w of a finished branch.
func (g *group) endBranch(w int) {
	if g.kind == lookbehind {
		g.lengths = append(g.lengths, w)
	}
	g.fixed = g.fixed && w != varies
	if g.branches == unset {
		g.branches = w
	} else if g.branches != w {
		g.branches = varies
	}
}

// closeGroup closes the innermost group, an item whose width is 0 for an
// assertion and otherwise the width its branches share (a conditional
// group's too).
func (t *translator) closeGroup() error {
	if len(t.open) > 0 && t.open[len(t.open)-1].wrapped {
		t.emit(")")
	}
	t.emit(")")
	t.i++
	if len(t.open) == 0 {
		t.atom = -1 // regexp2 reports the unmatched parenthesis
		return nil
	}
	g := t.open[len(t.open)-1]
	t.open = t.open[:len(t.open)-1]
	g.endBranch(t.width)
	t.m, t.s, t.x, t.fold = g.m, g.s, g.x, g.fold
	t.atom = g.start
	t.width = g.before
	var err error
	switch g.kind {
	case lookbehind:
		if !g.fixed {
			err = &Error{Kind: Invalid, Err: errLookbehind}
		} else if g.ltr {
			t.forwards(&g)
		}
		t.widen(0)
	case lookahead:
		t.widen(0)
		t.atomAhead = true
	default:
		t.widen(g.branches)
	}
	if g.capture > 0 {
		for len(t.widths) <= g.capture {
			t.widths = append(t.widths, unset)
		}
		t.widths[g.capture] = g.branches
	}
	if g.ends {
		t.emit(")")
		t.startBranches()
	}
	return err
}

// forwards rewrites the lookbehind g, just closed, to be matched forwards:
// each branch (?<=X becomes (?<=(?=X)[\s\S]{n}, which steps back the n
// characters X matches and then matches X from there.
func (t *translator) forwards(g *group) {
	head := g.start + len("(?<=")
	body := string(t.out[head : len(t.out)-1])
	t.out = t.out[:head]
	from := head
	for i, w := range g.lengths {
		to := len(body) + head
		if i < len(g.bars) {
			to = g.bars[i]
		}
		if i > 0 {
			t.emit("|")
		}
		t.emit("(?=" + body[from-head:to-head] + ")")
		if w > 0 {
			t.out = fmt.Appendf(t.out, `[\s\S]{%d}`, w)
		}
		from = to + 1
	}
	t.emit(")")
}

// inLookbehind marks the innermost open lookbehind to be matched forwards.
func (t *translator) inLookbehind() {
	for i := len(t.open) - 1; i >= 0; i-- {
		if t.open[i].kind == lookbehind {
			t.open[i].ltr = true
			return
		}
	}
}

// refWidth is the width of a backreference to the group named ref (a
// number or a name): the group's, once closed (PCRE2 allows one of fixed
// width in a lookbehind), and otherwise varies.
func (t *translator) refWidth(ref string) int {
	t.inLookbehind()
	num, err := strconv.Atoi(ref)
	if err != nil {
		var ok bool
		if num, ok = t.names[ref]; !ok && t.earlier != nil {
			num = t.earlier.names[ref]
		}
	}
	switch {
	case num > 0 && num < len(t.widths) && t.widths[num] != unset:
		return t.widths[num]
	case num > t.captures || num == 0: // a later group
		if t.earlier != nil && num > 0 && num < len(t.earlier.widths) && t.earlier.widths[num] != unset {
			return t.earlier.widths[num]
		}
		t.forward = true
	}
	return varies
}

// condition translates the start of a conditional group: a group number,
// a name ((?(<name>)...), (?('name')...) or bare) or an assertion.
func (t *translator) condition() error {
	s := t.p[t.i+3:]
	t.inLookbehind()
	t.push("(?(", 3, conditional)
	switch {
	case strings.HasPrefix(s, "<") || strings.HasPrefix(s, "'"):
		end := strings.IndexByte(s, ')')
		if end < 2 {
			return &Error{Kind: Invalid, Err: fmt.Errorf("malformed number or name after (?(")}
		}
		t.conditionNames = append(t.conditionNames, s[1:end-1])
		t.emit(s[1:end-1] + ")")
		t.i += end + 1
		t.startBranches()
	case strings.HasPrefix(s, "R") || strings.HasPrefix(s, "DEFINE") || strings.HasPrefix(s, "VERSION"):
		return unsupported("the condition of (?(%s", s[:min(len(s), 6)])
	case strings.HasPrefix(s, "?=") || strings.HasPrefix(s, "?!"):
		// The assertion shares the condition's parenthesis in PCRE2;
		// regexp2 loses the captures of later groups unless it has its
		// own, (?((?=...))...).
		t.push("(?"+s[1:2], 2, lookahead)
		t.open[len(t.open)-1].ends = true
	case strings.HasPrefix(s, "?<=") || strings.HasPrefix(s, "?<!"):
		t.push("(?"+s[1:3], 3, lookbehind)
		t.open[len(t.open)-1].ends = true
	case !strings.HasPrefix(s, "?"): // a group number or a bare name
		if end := strings.IndexByte(s, ')'); end >= 0 {
			ref := s[:end]
			if num, err := strconv.Atoi(ref); err != nil {
				t.conditionNames = append(t.conditionNames, ref)
			} else if ref[0] == '-' || ref[0] == '+' {
				// relative to the groups opened so far, as \g{-1}
				if num, err = t.relativeGroup(num); err != nil {
					return err
				}
				t.emit(strconv.Itoa(num) + ")")
				t.i += end + 1
				t.startBranches()
				return nil
			}
			t.emit(s[:end+1])
			t.i += end + 1
			t.startBranches()
		}
	}
	return nil
}

// startBranches opens the first branch of the conditional group at the
// top of open, its condition read.
func (t *translator) startBranches() {
	if len(t.open) > 0 && t.open[len(t.open)-1].kind == conditional {
		t.emit("(?:")
		t.open[len(t.open)-1].wrapped = true
		t.atom = -1
	}
}

// options translates an inline option setting, (?imsx-imsx) for the rest
// of the group or (?imsx-imsx:...) for a group of its own.
func (t *translator) options() error {
	s := t.p[t.i:]
	j := 2
	on := true
	m, dotall, x, fold := t.m, t.s, t.x, t.fold
	for ; j < len(s) && s[j] != ')' && s[j] != ':'; j++ {
		switch s[j] {
		case '-':
			on = false
		case 'm':
			m = on
		case 'x':
			x = on
		case 'i':
			fold = on
		case 's':
			dotall = on
		case 'n':
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
		t.push(s[:j+1], j+1, plainGroup)
	} else {
		t.emit(s[:j+1])
		t.i += j + 1
		t.atom = -1
	}
	t.m, t.s, t.x, t.fold = m, dotall, x, fold
	return nil
}

// autoType is the kind of a repeatable item for PCRE2's
// auto-possessification (pcre2_auto_possess.c): a repeat followed by an
// item it takes for disjoint becomes possessive. Its table of character
// types takes some pairs for disjoint that are not, which changes what
// matches; those items are the kinds here.
type autoType uint8

const (
	autoNone      autoType = iota
	autoAny                // . without s, and \N
	autoLineBreak          // \R
	autoSpace              // \s without (*UCP)
	autoNotSpace           // \S without (*UCP)
	autoVSpace             // \v
)

// mark records that the item just emitted is of kind k.
func (t *translator) mark(k autoType) { t.typed, t.typedAt = k, t.atom }

// misjudged reports whether PCRE2 (10.40 and later) makes a repeat of an
// item of kind a possessive when an item of kind b follows it, although
// both match a character: a CR, a vertical tab, a form feed, U+0085,
// U+2028 or U+2029 (. is taken never to match a line break, \R never to
// match a space, \S never to match a vertical space). Without (*UCP):
// .*\R does not match "a\r", \R+\s does not match "\r\r".
func misjudged(a, b autoType) bool {
	switch a {
	case autoAny:
		return b == autoLineBreak
	case autoLineBreak:
		return b == autoAny || b == autoSpace
	case autoNotSpace:
		return b == autoLineBreak || b == autoVSpace
	case autoVSpace:
		return b == autoNotSpace
	}
	return false
}

// next is the kind of the item PCRE2 compares a repeat ending at j with
// (lazy when it is): the next item, past comments and option settings,
// the end of the groups the repeat closes (for a greedy repeat, when the
// group is not repeated; past the other branches after a |), and the
// start of a group of one branch that follows. It is autoNone for any
// other item, and where the walk would go further than this (an item
// that may match nothing, a group of several branches or one that may
// match nothing, a lookaround): the repeat then stays as it is.
func (t *translator) next(j int, lazy bool) autoType {
	if t.x {
		return autoNone
	}
	p, depth, dotall := t.p, len(t.open), t.s
	entered := false
	for j < len(p) {
		switch {
		case strings.HasPrefix(p[j:], "(?#"):
			end := strings.IndexByte(p[j:], ')')
			if end < 0 {
				return autoNone
			}
			j += end + 1
		case strings.HasPrefix(p[j:], `\Q\E`):
			j += 4
		case strings.HasPrefix(p[j:], `\E`):
			j += 2
		case p[j] == '|' || p[j] == ')':
			if entered {
				return autoNone // an empty branch
			}
			if p[j] == '|' {
				j = closing(p, j)
			}
			if lazy || depth == 0 || j >= len(p) {
				return autoNone
			}
			depth--
			if g := t.open[depth]; g.kind != plainGroup || minZero(p, j+1) || repeated(p, j+1) {
				return autoNone
			}
			j++
		case p[j] == '(':
			open := groupOpening(p[j:])
			if open == 0 {
				if on, ok := dotallSetting(p[j:]); ok {
					dotall = on
					j += strings.IndexByte(p[j:], ')') + 1
					continue
				}
				return autoNone
			}
			end := closing(p, j+open)
			if end >= len(p) || branches(p, j+open, end) || minZero(p, end+1) {
				return autoNone
			}
			j += open
			entered = true
		case p[j] == '.':
			if dotall || minZero(p, j+1) {
				return autoNone
			}
			return autoAny
		case p[j] == '\\' && j+1 < len(p):
			k := autoNone
			switch p[j+1] {
			case 'R':
				k = autoLineBreak
			case 'N':
				if !strings.HasPrefix(p[j+2:], "{") {
					k = autoAny
				}
			case 's':
				if !t.ucp {
					k = autoSpace
				}
			case 'S':
				if !t.ucp {
					k = autoNotSpace
				}
			case 'v':
				k = autoVSpace
			}
			if minZero(p, j+2) {
				return autoNone
			}
			return k
		default:
			return autoNone
		}
	}
	return autoNone
}

// groupOpening is the length of the opening of the group p starts with
// when PCRE2 compiles it as a bracket it looks into ((, (?:, (?>, a named
// group, (?flags:), else 0.
func groupOpening(p string) int {
	if !strings.HasPrefix(p, "(?") {
		return 1
	}
	switch {
	case strings.HasPrefix(p, "(?:") || strings.HasPrefix(p, "(?>"):
		return 3
	case strings.HasPrefix(p, "(?<") && len(p) > 3 && p[3] != '=' && p[3] != '!',
		strings.HasPrefix(p, "(?P<"), strings.HasPrefix(p, "(?'"):
		end := strings.IndexAny(p, ">'")
		if end < 0 {
			return 0
		}
		return end + 1
	}
	end := strings.IndexAny(p, ":)")
	if end < 0 || p[end] != ':' || strings.Trim(p[2:end], "imsx-") != "" {
		return 0
	}
	return end + 1
}

// dotallSetting reads an option setting, (?flags), p starts with: whether
// it turns s on or off (on is the setting in effect when it names no s).
func dotallSetting(p string) (on, ok bool) {
	end := strings.IndexByte(p, ')')
	if !strings.HasPrefix(p, "(?") || end < 0 || strings.Trim(p[2:end], "imsx-") != "" {
		return false, false
	}
	flags := p[2:end]
	if i := strings.IndexByte(flags, 's'); i >= 0 {
		return !strings.Contains(flags[:i], "-"), true
	}
	return false, false
}

// closing is the index of the ) closing the group whose text runs from i
// (len(p) when there is none), past escapes, \Q...\E, classes and
// nested groups.
func closing(p string, i int) int {
	depth := 0
	for ; i < len(p); i++ {
		switch p[i] {
		case '\\':
			if strings.HasPrefix(p[i:], `\Q`) {
				end := strings.Index(p[i:], `\E`)
				if end < 0 {
					return len(p)
				}
				i += end + 1
			} else {
				i++
			}
		case '[':
			i = classEnd(p, i)
		case '(':
			depth++
		case ')':
			if depth == 0 {
				return i
			}
			depth--
		}
	}
	return len(p)
}

// branches reports whether p[i:end], a group's text, has a | of its own.
func branches(p string, i, end int) bool {
	for i < end {
		switch p[i] {
		case '\\':
			i++
		case '[':
			i = classEnd(p, i)
		case '(':
			i = closing(p, i+1)
		case '|':
			return true
		}
		i++
	}
	return false
}

// classEnd is the index of the ] closing the class opened at i.
func classEnd(p string, i int) int {
	i++
	if i < len(p) && p[i] == '^' {
		i++
	}
	if i < len(p) && p[i] == ']' {
		i++
	}
	for ; i < len(p); i++ {
		switch {
		case p[i] == '\\':
			i++
		case strings.HasPrefix(p[i:], "[:"):
			if end := posixClassEnd(p, i); end >= 0 {
				i = end + 1
			}
		case p[i] == ']':
			return i
		}
	}
	return len(p)
}

// minZero reports whether a quantifier that lets the item before it match
// nothing starts at j: *, ? or {0...}.
func minZero(p string, j int) bool {
	return j < len(p) && (p[j] == '*' || p[j] == '?' || strings.HasPrefix(p[j:], "{0") && quantifierLen(p[j:]) > 0)
}

// repeated reports whether a quantifier starts at j.
func repeated(p string, j int) bool {
	return j < len(p) && (p[j] == '*' || p[j] == '+' || p[j] == '?' || p[j] == '{' && quantifierLen(p[j:]) > 0)
}
