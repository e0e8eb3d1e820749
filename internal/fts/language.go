// Package fts is MongoDB's text search (text index version 3) without
// I/O: languages with their Snowball stemmers and stop words, the
// tokenizer, a text index's specification and the terms and scores it
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
	"github.com/blevesearch/snowballstem/portuguese"
	"github.com/blevesearch/snowballstem/romanian"
	"github.com/blevesearch/snowballstem/russian"
	"github.com/blevesearch/snowballstem/spanish"
	"github.com/blevesearch/snowballstem/swedish"
	"github.com/blevesearch/snowballstem/turkish"

	"github.com/folio-db/folio/internal/mongoerr"
)

// Language is one of the languages of text index version 3: its Snowball
// stemmer and stop words ("none" has neither).
type Language struct {
	Name string
	stem func(*snowballstem.Env) bool
	// stopList is the language's Snowball stop word list as the library
	// ships it; stop is read from it once.
	stopList []byte
	stopOnce sync.Once
	stop     map[string]struct{}
	// english keeps the apostrophe inside words ("don't"), as MongoDB's
	// English delimiter list does; turkish folds case the Turkish way.
	english, turkish bool
}

// languages are MongoDB's text search languages by name and ISO 639-1
// code. MongoDB's stop word lists are the Snowball project's, which these
// are; Romanian has none in MongoDB.
var languages = func() map[string]*Language {
	m := map[string]*Language{}
	add := func(name, code string, stem func(*snowballstem.Env) bool, stop []byte) {
		l := &Language{Name: name, stem: stem, stopList: stop, english: name == "english", turkish: name == "turkish"}
		m[name] = l
		if code != "" {
			m[code] = l
		}
	}
	add("danish", "da", danish.Stem, da.DanishStopWords)
	add("dutch", "nl", dutch.Stem, nl.DutchStopWords)
	add("english", "en", english.Stem, en.EnglishStopWords)
	add("finnish", "fi", finnish.Stem, fi.FinnishStopWords)
	add("french", "fr", french.Stem, fr.FrenchStopWords)
	add("german", "de", german.Stem, de.GermanStopWords)
	add("hungarian", "hu", hungarian.Stem, hu.HungarianStopWords)
	add("italian", "it", italian.Stem, it.ItalianStopWords)
	add("norwegian", "nb", norwegian.Stem, no.NorwegianStopWords)
	add("portuguese", "pt", portuguese.Stem, pt.PortugueseStopWords)
	add("romanian", "ro", romanian.Stem, nil)
	add("russian", "ru", russian.Stem, ru.RussianStopWords)
	add("spanish", "es", spanish.Stem, es.SpanishStopWords)
	add("swedish", "sv", swedish.Stem, sv.SwedishStopWords)
	add("turkish", "tr", turkish.Stem, tr.TurkishStopWords)
	add("none", "", nil, nil)
	return m
}()

// LookupLanguage is the language named name (a name or an ISO code, in
// any case), or MongoDB's BadValue for an unsupported one.
func LookupLanguage(name string) (*Language, error) {
	if l, ok := languages[strings.ToLower(name)]; ok {
		return l, nil
	}
	return nil, mongoerr.New(mongoerr.BadValue, "unsupported language: \"%s\" for text index version 3", name)
}

// isStopWord reports whether the lower-cased word is one of the
// language's stop words.
func (l *Language) isStopWord(word string) bool {
	l.stopOnce.Do(func() { l.stop = parseStopWords(l.stopList) })
	_, ok := l.stop[word]
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
	l.stem(env)
	return env.Current()
}
