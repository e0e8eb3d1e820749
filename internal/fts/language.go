// Package fts is MongoDB's text search (text index versions 1, 2 and 3)
// without I/O: languages with their Snowball stemmers and stop words, the
// tokenizers, a text index's specification and the terms and scores it
// indexes for a document, and the parsed $text query with its matcher.
package fts

import (
	"bytes"
	"strings"
	"sync"

	"github.com/blevesearch/bleve/v2/analysis/lang/da"
	"github.com/blevesearch/bleve/v2/analysis/lang/de"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/lang/es"
	"github.com/blevesearch/bleve/v2/analysis/lang/fi"
	"github.com/blevesearch/bleve/v2/analysis/lang/fr"
	"github.com/blevesearch/bleve/v2/analysis/lang/hu"
	"github.com/blevesearch/bleve/v2/analysis/lang/it"
	"github.com/blevesearch/bleve/v2/analysis/lang/nl"
	"github.com/blevesearch/bleve/v2/analysis/lang/no"
	"github.com/blevesearch/bleve/v2/analysis/lang/pt"
	"github.com/blevesearch/bleve/v2/analysis/lang/ru"
	"github.com/blevesearch/bleve/v2/analysis/lang/sv"
	"github.com/blevesearch/bleve/v2/analysis/lang/tr"
	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/danish"
	"github.com/blevesearch/snowballstem/dutch"
	"github.com/blevesearch/snowballstem/english"
	"github.com/blevesearch/snowballstem/finnish"
	"github.com/blevesearch/snowballstem/french"
	"github.com/blevesearch/snowballstem/german"
	"github.com/blevesearch/snowballstem/hungarian"
	"github.com/blevesearch/snowballstem/italian"
	"github.com/blevesearch/snowballstem/norwegian"
	"github.com/blevesearch/snowballstem/porter"
	"github.com/blevesearch/snowballstem/portuguese"
	"github.com/blevesearch/snowballstem/romanian"
	"github.com/blevesearch/snowballstem/russian"
	"github.com/blevesearch/snowballstem/spanish"
	"github.com/blevesearch/snowballstem/swedish"
	"github.com/blevesearch/snowballstem/turkish"

	"github.com/folio-db/folio/internal/mongoerr"
)

// snowball is one of Snowball's languages: its stemmer and its stop
// word list as the library ships it, read once into stop.
type snowball struct {
	stem     func(*snowballstem.Env) bool
	stopList []byte
	stopOnce sync.Once
	stop     map[string]struct{}
}

// snowballs are the languages by their English name. MongoDB's stop word
// lists are the Snowball project's, which these are; Romanian has none
// in MongoDB. Porter is the original Porter stemmer, which only text
// index version 1 names.
var snowballs = map[string]*snowball{
	"danish":     {stem: danish.Stem, stopList: da.DanishStopWords},
	"dutch":      {stem: dutch.Stem, stopList: nl.DutchStopWords},
	"english":    {stem: english.Stem, stopList: en.EnglishStopWords},
	"finnish":    {stem: finnish.Stem, stopList: fi.FinnishStopWords},
	"french":     {stem: french.Stem, stopList: fr.FrenchStopWords},
	"german":     {stem: german.Stem, stopList: de.GermanStopWords},
	"hungarian":  {stem: hungarian.Stem, stopList: hu.HungarianStopWords},
	"italian":    {stem: italian.Stem, stopList: it.ItalianStopWords},
	"norwegian":  {stem: norwegian.Stem, stopList: no.NorwegianStopWords},
	"portuguese": {stem: portuguese.Stem, stopList: pt.PortugueseStopWords},
	"romanian":   {stem: romanian.Stem},
	"russian":    {stem: russian.Stem, stopList: ru.RussianStopWords},
	"spanish":    {stem: spanish.Stem, stopList: es.SpanishStopWords},
	"swedish":    {stem: swedish.Stem, stopList: sv.SwedishStopWords},
	"turkish":    {stem: turkish.Stem, stopList: tr.TurkishStopWords},
	"porter":     {stem: porter.Stem},
}

// Language is a language of one text index version: the name an index
// or query gave it (versions 2 and 3 know it by its English name), its
// stemmer, its stop words and its tokenizer. "none" has neither stemmer
// nor stop words.
type Language struct {
	Name  string
	stem  *snowball // nil for none
	stops *snowball // nil for no stop words
	// basic is the tokenizer of versions 1 and 2: words split on ASCII
	// white space and punctuation, lower-cased in ASCII only, diacritics
	// kept. Version 3's splits on Unicode delimiters, lower-cases every
	// letter (the Turkish way in Turkish) and strips diacritics.
	basic bool
	// english keeps the apostrophe inside words ("don't"), as MongoDB's
	// English delimiters do; turkish folds case the Turkish way.
	english, turkish bool
}

// The languages of versions 2 and 3 by English name and ISO 639-1 code,
// looked up in any case (lookupLanguage).
var (
	languagesV3 = modernLanguages(false)
	languagesV2 = modernLanguages(true)
)

func modernLanguages(basic bool) map[string]*Language {
	m := map[string]*Language{"none": {Name: "none", basic: basic}}
	for name, code := range map[string]string{
		"danish": "da", "dutch": "nl", "english": "en", "finnish": "fi", "french": "fr",
		"german": "de", "hungarian": "hu", "italian": "it", "norwegian": "nb", "portuguese": "pt",
		"romanian": "ro", "russian": "ru", "spanish": "es", "swedish": "sv", "turkish": "tr",
	} {
		sb := snowballs[name]
		l := &Language{Name: name, stem: sb, stops: sb, basic: basic, english: name == "english", turkish: name == "turkish"}
		m[name], m[code] = l, l
	}
	return m
}

// languagesV1 are the languages of text index version 1 by the names it
// takes, as they are written (case counts): those Snowball's stemmer
// library accepts, its English names and its two- and three-letter
// codes. A language is known by the name it was given, and only an
// English name has stop words ("eng" stems as English and keeps "the").
var languagesV1 = func() map[string]*Language {
	m := map[string]*Language{"none": {Name: "none", basic: true}}
	for name, aliases := range map[string][]string{
		"danish": {"da", "dan"}, "dutch": {"nl", "dut", "nld"}, "english": {"en", "eng"},
		"finnish": {"fi", "fin"}, "french": {"fr", "fra", "fre"}, "german": {"de", "deu", "ger"},
		"hungarian": {"hu", "hun"}, "italian": {"it", "ita"}, "norwegian": {"no", "nor"},
		"porter": nil, "portuguese": {"pt", "por"}, "romanian": {"ro", "ron", "rum"},
		"russian": {"ru", "rus"}, "spanish": {"es", "esl", "spa"}, "swedish": {"sv", "swe"},
		"turkish": {"tr", "tur"},
	} {
		sb := snowballs[name]
		m[name] = &Language{Name: name, stem: sb, stops: sb, basic: true, english: name == "english"}
		for _, a := range aliases {
			m[a] = &Language{Name: a, stem: sb, basic: true}
		}
	}
	return m
}()

// lookupLanguage is the language named name in a text index version:
// in versions 2 and 3 a name or an ISO code in any case, else MongoDB's
// BadValue; in version 1 a name as written, else none.
func lookupLanguage(name string, version int) (*Language, error) {
	if version == 1 {
		if l, ok := languagesV1[name]; ok {
			return l, nil
		}
		return languagesV1["none"], nil
	}
	m := languagesV3
	if version == 2 {
		m = languagesV2
	}
	if l, ok := m[strings.ToLower(name)]; ok {
		return l, nil
	}
	return nil, mongoerr.New(mongoerr.BadValue, "unsupported language: \"%s\" for text index version %d", name, version)
}

// isStopWord reports whether the lower-cased word is one of the
// language's stop words.
func (l *Language) isStopWord(word string) bool {
	if l.stops == nil {
		return false
	}
	sb := l.stops
	sb.stopOnce.Do(func() { sb.stop = parseStopWords(sb.stopList) })
	_, ok := sb.stop[word]
	return ok
}

// parseStopWords reads a stop word list: one or more words per line, with
// comments after '|' (Snowball's format) or starting a line with '#'.
func parseStopWords(list []byte) map[string]struct{} {
	m := map[string]struct{}{}
	for _, line := range bytes.Split(list, []byte("\n")) {
		if i := bytes.IndexByte(line, '|'); i >= 0 {
			line = line[:i]
		}
		if bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			continue
		}
		for _, w := range strings.Fields(string(line)) {
			m[w] = struct{}{}
		}
	}
	return m
}

// stemWord is word's Snowball stem in the language, or word itself.
func (l *Language) stemWord(word string) string {
	if l.stem == nil {
		return word
	}
	env := snowballstem.NewEnv(word)
	l.stem.stem(env)
	return env.Current()
}
