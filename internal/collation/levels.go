package collation

import (
	"bytes"
	"slices"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/collate"
	"golang.org/x/text/language"
	"golang.org/x/text/unicode/norm"
)

// ICU options x/text does not have are built here on its keys. An x/text
// key is a level each of the collation elements' non-zero weights:
// primaries (2 bytes, or 3 with the high bit set), 00 00, secondaries (2
// bytes), 00 00, tertiaries (1 byte), then with shifted variables 00 and
// quaternaries. A level-by-level key is split into those levels (one
// secondary and one tertiary per non-ignorable element: they align),
// changed as ICU would, and joined again in ICU's order: primary,
// secondary, case level, tertiary, quaternary.
//
// - caseLevel: a level of each element's case, after the secondaries (after
//   the primaries at strength 1, counting only elements with a primary); the
//   tertiaries then no longer tell case apart.
// - caseFirst: the case ranks first within each tertiary weight, upper or
//   lower case before the other.
// - maxVariable "space" (with alternate "shifted"): only spaces are
//   variable. The string is keyed in the pieces between its spaces, without
//   variables, and each space adds its primary to the quaternaries, where
//   ICU puts a shifted variable, and elements after a space that have no
//   primary (marks) are ignored, as after any variable.
// - the script order of a locale's tailoring (reorder.go): each primary is
//   moved, and all are then written as 3 bytes.
// - Japanese at strength 4 and 5: a quaternary level telling hiragana from
//   katakana.

// An element's case is found by keying the string lower-cased and
// upper-cased as well: an element whose tertiary weight is the lower-cased
// string's is lower case, the upper-cased string's upper case, and neither
// mixed (a tailored contraction such as Danish "Aa"); the lower-cased
// string's weight is the element's without case. Where the three keys do
// not align, or case mapping does not change the weight (kana), the DUCET
// tertiary weight tells: these are its upper-case variants (capital, wide
// capital, compatibility and font capitals, circled capital, normal-size
// kana, square capitals), each paired with its lower-case weight.
var upperTertiary = [32]uint8{
	0x08: 0x02, 0x09: 0x03, 0x0A: 0x04, 0x0B: 0x05, 0x0C: 0x06,
	0x0E: 0x0D, 0x11: 0x0F, 0x12: 0x10, 0x1D: 0x1C,
}

func isUpper(t byte) bool { return t < 32 && upperTertiary[t] != 0 }

// levelled reports whether keys under s are rebuilt level by level.
func (s *Spec) levelled() bool {
	return s.cased() || s.spaceVariable() || reorders[s.Locale] != nil
}

// cased: the case level or case first are asked for.
func (s *Spec) cased() bool { return s.CaseLevel || s.CaseFirst != "off" }

// spaceVariable: only spaces are variable (else punctuation too, as x/text
// does).
func (s *Spec) spaceVariable() bool { return s.MaxVariable == "space" && s.Alternate == "shifted" }

// spacePrimaries are the primary weights of the spaces (Unicode's
// White_Space characters that x/text makes variable), as key bytes; built
// by the first collation with spaces alone variable.
var spacePrimaries = sync.OnceValue(func() map[rune][]byte {
	plain := collate.New(language.Und, collate.Loose)
	shifted := collate.New(language.MustParse("und-u-ka-shifted-ks-level1"))
	var buf collate.Buffer
	m := map[rune][]byte{}
	for _, r16 := range unicode.White_Space.R16 {
		for r := rune(r16.Lo); r <= rune(r16.Hi); r += rune(r16.Stride) {
			s := string(r)
			if len(shifted.KeyFromString(&buf, s)) == 0 {
				if p := plain.KeyFromString(&buf, s); len(p) > 0 {
					m[r] = bytes.Clone(p)
				}
			}
			buf.Reset()
		}
	}
	return m
})

// levels are a key's weights by level.
type levels struct {
	p, s, t, q []byte
	primaries  int // elements with a primary weight
}

func (l *levels) reset() {
	l.p, l.s, l.t, l.q, l.primaries = l.p[:0], l.s[:0], l.t[:0], l.q[:0], 0
}

// firstPrimary decodes the primary weight a key starts with and its
// length: 2 bytes, or 3 when the first has its high bit set (x/text's
// encoding, weights of up to 23 bits). A truncated weight is all of k.
func firstPrimary(k []byte) (w, n int) {
	switch {
	case len(k) >= 3 && k[0]&0x80 != 0:
		return int(k[0]&0x7F)<<16 | int(k[1])<<8 | int(k[2]), 3
	case len(k) >= 2 && k[0]&0x80 == 0:
		return int(k[0])<<8 | int(k[1]), 2
	}
	return 0, len(k)
}

// add appends an x/text key's levels, its primaries moved by r if not nil;
// with variableSpaces it appends a quaternary 0xFF per element, as x/text
// does for a non-variable one.
func (l *levels) add(k []byte, variableSpaces bool, r reordering) {
	i := 0
	for i+1 < len(k) && (k[i] != 0 || k[i+1] != 0) {
		w, n := firstPrimary(k[i:])
		if r == nil {
			l.p = append(l.p, k[i:i+n]...)
		} else {
			l.p = r.appendPrimary(l.p, w)
		}
		i += n
		l.primaries++
	}
	i += 2
	j := i
	for j+1 < len(k) && (k[j] != 0 || k[j+1] != 0) {
		j += 2
	}
	if i < len(k) {
		l.s = append(l.s, k[i:min(j, len(k))]...)
	}
	j += 2
	if j >= len(k) {
		return
	}
	t := k[j:]
	if z := bytes.IndexByte(t, 0); z >= 0 {
		l.q = append(l.q, t[z+1:]...)
		t = t[:z]
	}
	l.t = append(l.t, t...)
	if variableSpaces {
		for range t {
			l.q = append(l.q, 0xFF)
		}
	}
}

// appendLevelled appends the key of s, a string in NFD, under a levelled
// collation.
func (c *Collator) appendLevelled(dst []byte, w *worker, s []byte) []byte {
	l, lower, upper := &w.levels[0], &w.levels[1], &w.levels[2]
	c.split(w, l, s)
	cased := c.spec.cased()
	if cased {
		// Case maps the composed string (İ lower-cases to i, its
		// decomposition to i and a dot above); a string its case mapping
		// leaves alone keys as itself.
		composed := norm.NFC.Bytes(s)
		for i, m := range []func([]byte) []byte{bytes.ToLower, bytes.ToUpper} {
			to := &w.levels[i+1]
			if ms := m(composed); !bytes.Equal(ms, composed) {
				c.split(w, to, norm.NFD.Bytes(ms))
			} else {
				to.t = append(to.t[:0], l.t...)
			}
		}
		if len(lower.t) != len(l.t) || len(upper.t) != len(l.t) {
			lower.t, upper.t = lower.t[:0], upper.t[:0]
		}
	}
	// caseOf ranks element i's case: 1 sorts first, 3 last, mixed 2; and
	// gives its tertiary weight without case.
	upperFirst := c.spec.CaseFirst == "upper"
	caseOf := func(i int) (rank, plain byte) {
		t := l.t[i]
		up := isUpper(t)
		plain = t
		if up {
			plain = upperTertiary[t]
		}
		if len(lower.t) > 0 && lower.t[i] != upper.t[i] {
			switch t {
			case lower.t[i]:
				up = false
			case upper.t[i]:
				up = true
			default:
				return 2, lower.t[i]
			}
			plain = lower.t[i]
		}
		if up == upperFirst {
			return 1, plain
		}
		return 3, plain
	}
	dst = append(dst, l.p...)
	if c.spec.Strength >= 2 {
		dst = append(append(dst, 0, 0), l.s...)
	}
	if c.spec.CaseLevel {
		dst = append(dst, 0, 0)
		for i := range l.t {
			// At strength 1 only elements with a primary count. When some
			// have none, those with one are told by their secondary: the
			// common one (marks have others).
			if c.spec.Strength == 1 && l.primaries != len(l.t) && len(l.s) == 2*len(l.t) && (l.s[2*i] != 0 || l.s[2*i+1] != 0x20) {
				continue
			}
			rank, _ := caseOf(i)
			dst = append(dst, rank)
		}
	}
	if c.spec.Strength >= 3 {
		dst = append(dst, 0, 0)
		for i, t := range l.t {
			if cased {
				rank, plain := caseOf(i)
				if c.spec.CaseLevel {
					t = plain
				} else {
					t |= rank << 5
				}
			}
			dst = append(dst, t)
		}
	}
	switch {
	case c.spec.Strength >= 4 && c.spec.Alternate == "shifted":
		dst = append(append(dst, 0), l.q...)
	case c.spec.Strength >= 4 && c.spec.Locale == "ja":
		// Japanese tells hiragana from katakana at the quaternary level,
		// katakana after: a weight for each character (s is decomposed).
		dst = append(dst, 0)
		for _, r := range string(s) {
			if unicode.Is(unicode.Katakana, r) && unicode.IsLetter(r) {
				dst = append(dst, 2)
			} else {
				dst = append(dst, 1)
			}
		}
	}
	return dst
}

// split sets l to s's levels.
func (c *Collator) split(w *worker, l *levels, s []byte) {
	l.reset()
	if !c.spec.spaceVariable() {
		w.buf.Reset()
		l.add(w.c.Key(&w.buf, s), false, c.reorder)
		return
	}
	// The secondaries of pieces keyed backwards are each reversed: the
	// whole string's are the pieces' in reverse order.
	spaces := spacePrimaries()
	var pieces [][]byte
	afterSpace := false
	for len(s) > 0 {
		end := 0
		for end < len(s) {
			r, n := utf8.DecodeRune(s[end:])
			if _, ok := spaces[r]; ok {
				break
			}
			if afterSpace && end == 0 && (unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r)) {
				s = s[n:]
				continue
			}
			afterSpace = false
			end += n
		}
		if end > 0 {
			w.buf.Reset()
			at := len(l.s)
			l.add(w.c.Key(&w.buf, s[:end]), true, c.reorder)
			if c.spec.Backwards {
				pieces = append(pieces, slices.Clone(l.s[at:]))
			}
			s = s[end:]
		}
		if len(s) > 0 {
			r, n := utf8.DecodeRune(s)
			l.q = append(l.q, spaces[r]...)
			s = s[n:]
			afterSpace = true
		}
	}
	if c.spec.Backwards {
		l.s = l.s[:0]
		for i := len(pieces) - 1; i >= 0; i-- {
			l.s = append(l.s, pieces[i]...)
		}
	}
}
