package fts

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// tokenOptions choose how words become tokens.
type tokenOptions uint8

const (
	// filterStopWords drops the language's stop words.
	filterStopWords tokenOptions = 1 << iota
	// caseSensitive keeps each word's case.
	caseSensitive
	// diacriticSensitive keeps each word's diacritics.
	diacriticSensitive
)

// delimiters are the code points that separate words in text index
// version 3: those with the Unicode properties White_Space, Dash, Hyphen,
// Quotation_Mark, Terminal_Punctuation, Pattern_Syntax or STerm.
var delimiters = []*unicode.RangeTable{
	unicode.White_Space, unicode.Dash, unicode.Hyphen, unicode.Quotation_Mark,
	unicode.Terminal_Punctuation, unicode.Pattern_Syntax, unicode.Sentence_Terminal,
}

// basicDelimiters are the bytes that separate words in text index
// versions 1 and 2: ASCII white space, the apostrophe and punctuation
// (but not the underscore); every other byte, non-ASCII ones included,
// is part of a word.
const basicDelimiters = " \f\v\t\r\n'~`!@#$%^&*()-=+[]{}|\\;:\"<>,./?"

// isDelimiter reports whether r separates words in l; English keeps the
// apostrophe inside words.
func (l *Language) isDelimiter(r rune) bool {
	switch {
	case r == '\'' && l.english:
		return false
	case r < utf8.RuneSelf && l.basic:
		return basicDelimiter[r]
	case r < utf8.RuneSelf:
		return asciiDelimiter[r]
	}
	return !l.basic && unicode.IsOneOf(delimiters, r)
}

// asciiDelimiter and basicDelimiter answer isDelimiter for ASCII in
// version 3 and in versions 1 and 2.
var asciiDelimiter, basicDelimiter = func() (v3, basic [utf8.RuneSelf]bool) {
	for r := range rune(utf8.RuneSelf) {
		v3[r] = unicode.IsOneOf(delimiters, r)
		basic[r] = strings.ContainsRune(basicDelimiters, r)
	}
	return v3, basic
}()

// tokens calls fn with each token of text in l, as MongoDB's tokenizers
// make them: a word is lower-cased, dropped if it is a stop word (when
// asked), stemmed (in its original case when caseSensitive), and, in
// version 3, stripped of diacritics unless diacriticSensitive; a word
// that leaves nothing (combining marks alone) is no token.
func (l *Language) tokens(text string, opts tokenOptions, fn func(token string)) {
	for len(text) > 0 {
		i := strings.IndexFunc(text, func(r rune) bool { return !l.isDelimiter(r) })
		if i < 0 {
			return
		}
		text = text[i:]
		end := strings.IndexFunc(text, l.isDelimiter)
		if end < 0 {
			end = len(text)
		}
		word := text[:end]
		text = text[end:]
		lower := l.lower(word)
		if opts&filterStopWords != 0 && l.isStopWord(lower) {
			continue
		}
		w := lower
		if opts&caseSensitive != 0 {
			w = word
		}
		w = l.stemWord(w)
		if opts&diacriticSensitive == 0 && !l.basic {
			w = stripDiacritics(w)
		}
		if w != "" {
			fn(w)
		}
	}
}

// lower is s in lower case, by the language's rules: ASCII letters only
// in versions 1 and 2.
func (l *Language) lower(s string) string {
	if l.basic {
		return asciiLower(s)
	}
	if l.turkish {
		return strings.ToLowerSpecial(unicode.TurkishCase, s)
	}
	return strings.ToLower(s)
}

// stripDiacritics removes the combining marks of s once decomposed
// ("é" is "e").
func stripDiacritics(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	d := norm.NFD.String(s)
	var b strings.Builder
	b.Grow(len(d))
	for _, r := range d {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(r)
		}
	}
	return norm.NFC.String(b.String())
}

// asciiLower is s with its ASCII letters in lower case.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// fold is s prepared for a phrase comparison: lower-cased unless
// caseSensitive, and in version 3 without diacritics unless
// diacriticSensitive.
func (l *Language) fold(s string, opts tokenOptions) string {
	if opts&caseSensitive == 0 {
		s = l.lower(s)
	}
	if opts&diacriticSensitive == 0 && !l.basic {
		s = stripDiacritics(s)
	}
	return s
}
