package collation

import (
	"slices"
	"sync"
	"unicode"

	"golang.org/x/text/collate"
	"golang.org/x/text/language"
)

// reorders are the scripts a locale's tailoring sorts before the others
// (CLDR's [reorder] rules, which x/text does not apply), in their order: the
// rest follow in the root order. Each entry names Unicode scripts sharing
// one range of primary weights (hiragana and katakana are one). Read from
// ICU 72 by sorting a letter of each script under every locale MongoDB
// offers; TestAgainstICU checks them.
var reorders = map[string][][]string{
	"am": {{"Ethiopic"}}, "ar": {{"Arabic"}}, "fa": {{"Arabic"}}, "fa_AF": {{"Arabic"}}, "ps": {{"Arabic"}},
	"ug": {{"Arabic"}}, "ur": {{"Arabic"}}, "bo": {{"Tibetan"}}, "chr": {{"Cherokee"}}, "el": {{"Greek"}},
	"he": {{"Hebrew"}}, "yi": {{"Hebrew"}}, "hy": {{"Armenian"}}, "ka": {{"Georgian"}}, "km": {{"Khmer"}},
	"lo": {{"Lao"}}, "my": {{"Myanmar"}}, "ne": {{"Devanagari"}}, "th": {{"Thai"}},
	"be": {{"Cyrillic"}}, "bg": {{"Cyrillic"}}, "bs_Cyrl": {{"Cyrillic"}}, "kk": {{"Cyrillic"}}, "ky": {{"Cyrillic"}},
	"mk": {{"Cyrillic"}}, "ru": {{"Cyrillic"}}, "sr": {{"Cyrillic"}}, "uk": {{"Cyrillic"}},
	"mn": {{"Cyrillic"}, {"Mongolian"}},
	"az": {{"Latin"}, {"Cyrillic"}}, "bs": {{"Latin"}, {"Cyrillic"}}, "hr": {{"Latin"}, {"Cyrillic"}}, "sr_Latn": {{"Latin"}, {"Cyrillic"}},
	"ja":      {{"Latin"}, {"Hiragana", "Katakana"}, {"Han"}},
	"ko":      {{"Hangul"}, {"Han"}},
	"zh":      {{"Han"}},
	"zh_Hant": {{"Han"}, {"Bopomofo"}},
	"as":      indic("Bengali"), "bn": indic("Bengali"), "gu": indic("Gujarati"), "hi": indic("Devanagari"),
	"kn": indic("Kannada"), "kok": indic("Devanagari"), "mr": indic("Devanagari"), "or": indic("Oriya"),
	"si": indic("Sinhala"), "ta": indic("Tamil"), "te": indic("Telugu"),
	"pa": append(indic("Gurmukhi"), []string{"Arabic"}),
	"ml": {{"Malayalam"}, {"Latin"}, {"Devanagari"}, {"Arabic"}, {"Tamil"}, {"Kannada"}, {"Telugu"}, {"Bengali"}, {"Gurmukhi"}, {"Gujarati"}, {"Oriya"}, {"Sinhala"}},
}

// indic is the order of the Indic locales: their own script, then the
// other Indic scripts in the root order.
func indic(first string) [][]string {
	out := [][]string{{first}}
	for _, s := range []string{"Devanagari", "Bengali", "Gurmukhi", "Gujarati", "Oriya", "Tamil", "Telugu", "Kannada", "Malayalam", "Sinhala"} {
		if s != first {
			out = append(out, []string{s})
		}
	}
	return out
}

// span is a range of primary weights, inclusive.
type span struct{ lo, hi int }

// reordering maps x/text's primary weights to the locale's script order.
// The weights below the first script (spaces, punctuation, symbols,
// digits) keep their place; the script ranges named move, in order, to the
// start of the scripts, and every other weight above follows in its order.
type reordering []move

// move sends the weights of from to the range starting at to.
type move struct {
	from span
	to   int
}

const maxPrimary = 1<<23 - 1

func newReordering(groups [][]string, tag language.Tag) reordering {
	starts := scriptStarts(tag)
	var moved []span
	first := scriptSpan(starts, "Latin").lo
	for _, g := range groups {
		sp := scriptSpan(starts, g[0])
		moved = append(moved, sp)
		first = min(first, sp.lo)
	}
	// The rest: the gaps between the moved ranges, from the first script up.
	sorted := slices.SortedFunc(slices.Values(moved), func(a, b span) int { return a.lo - b.lo })
	var rest []span
	at := first
	for _, sp := range sorted {
		if sp.lo > at {
			rest = append(rest, span{at, sp.lo - 1})
		}
		at = max(at, sp.hi+1)
	}
	if at <= maxPrimary {
		rest = append(rest, span{at, maxPrimary})
	}
	var r reordering
	next := first
	for _, sp := range append(moved, rest...) {
		r = append(r, move{sp, next})
		next += sp.hi - sp.lo + 1
	}
	slices.SortFunc(r, func(a, b move) int { return a.from.lo - b.from.lo })
	return r
}

// appendPrimary appends primary weight w, moved, as 3 bytes: all primaries
// are written alike, and the first byte is never 0.
func (r reordering) appendPrimary(dst []byte, w int) []byte {
	if w >= r[0].from.lo {
		i, _ := slices.BinarySearchFunc(r, w, func(m move, w int) int {
			switch {
			case m.from.hi < w:
				return -1
			case m.from.lo > w:
				return 1
			}
			return 0
		})
		w = w - r[i].from.lo + r[i].to
	}
	w += 1 << 16
	return append(dst, byte(w>>16), byte(w>>8), byte(w))
}

// scriptSpan is the range of primary weights of a script: from its start up
// to the next script's.
func scriptSpan(starts []scriptStart, name string) span {
	i := slices.IndexFunc(starts, func(s scriptStart) bool { return s.name == name })
	if i < 0 {
		return span{maxPrimary, maxPrimary}
	}
	hi := maxPrimary
	if i+1 < len(starts) {
		hi = starts[i+1].start - 1
	}
	return span{starts[i].start, hi}
}

type scriptStart struct {
	name          string
	start, median int
}

// unknownOffset is x/text's implicit primary weight of a character its
// table does not hold, less the code point (ideographs have others).
const unknownOffset = 0x50000

var (
	startsMu sync.Mutex
	starts   = map[language.Tag][]scriptStart{}
)

// scriptStarts are the scripts with letters in the Basic Multilingual Plane
// under the locale's tailoring (which may move letters: Chinese gives
// ideographs explicit weights), in its order before reordering, each with
// the first primary weight of its range. A script is placed by the median
// of its letters' primaries (some letters sort with other scripts) and
// starts at the first of its letters after the script before it. Letters
// x/text's table does not hold are left out, as are those beyond the BMP
// (many newer than the table). Hiragana and katakana share their weights
// and count as one, "Hiragana".
func scriptStarts(tag language.Tag) []scriptStart {
	startsMu.Lock()
	defer startsMu.Unlock()
	if s, ok := starts[tag]; ok {
		return s
	}
	c := collate.New(tag, collate.Loose)
	var buf collate.Buffer
	primary := func(r rune) int {
		buf.Reset()
		w, _ := firstPrimary(c.KeyFromString(&buf, string(r)))
		return w
	}
	byScript := map[string][]int{}
	for name, t := range unicode.Scripts {
		if name == "Common" || name == "Inherited" {
			continue
		}
		if name == "Katakana" {
			name = "Hiragana"
		}
		for _, rg := range t.R16 {
			for r := rune(rg.Lo); r <= rune(rg.Hi); r += rune(rg.Stride) {
				if unicode.IsLetter(r) {
					if p := primary(r); p > 0 && p != int(r)+unknownOffset {
						byScript[name] = append(byScript[name], p)
					}
				}
			}
		}
	}
	var out []scriptStart
	for name, ps := range byScript {
		slices.Sort(ps)
		out = append(out, scriptStart{name: name, median: ps[len(ps)/2]})
	}
	slices.SortFunc(out, func(a, b scriptStart) int { return a.median - b.median })
	for i := range out {
		ps := byScript[out[i].name]
		after := primary('9')
		if i > 0 {
			after = out[i-1].median
		}
		j, _ := slices.BinarySearch(ps, after+1)
		out[i].start = ps[min(j, len(ps)-1)]
		if i > 0 {
			out[i].start = max(out[i].start, out[i-1].start+1)
		}
	}
	starts[tag] = out
	return out
}
