package fts

import (
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Query is a parsed $text search: the terms that select documents through
// the index (Terms, stemmed and lower-cased), the terms and phrases a
// match must hold or must not, and the sensitivity of the comparisons.
type Query struct {
	// Terms are the index terms to look up, sorted and distinct.
	Terms []string
	// positive and negated are the terms a document's tokens are checked
	// against: Terms themselves unless the search is case or diacritic
	// sensitive.
	positive, negated       map[string]struct{}
	Phrases, NegatedPhrases []string
	lang                    *Language
	opts                    tokenOptions
}

// ParseQuery parses a $search string as MongoDB does: words separated by
// spaces (and \n \v \f \r), "-" before a word (with no space between)
// negating it up to the next space, double quotes around a phrase (a
// phrase's words are also searched for as terms, unless it is negated),
// stop words dropped and words stemmed in lang.
func ParseQuery(search string, lang *Language, caseSens, diacriticSens bool) *Query {
	q := &Query{lang: lang, positive: map[string]struct{}{}, negated: map[string]struct{}{}}
	if caseSens {
		q.opts |= caseSensitive
	}
	if diacriticSens {
		q.opts |= diacriticSensitive
	}
	var positive, negative strings.Builder
	inNegation, inPhrase := false, false
	quote := 0
	isSpace := func(c byte) bool { return c == ' ' || c == '\n' || c == '\v' || c == '\f' || c == '\r' }
	i := 0
	for i < len(search) && isSpace(search[i]) {
		i++
	}
	prevSpace := true
	for i < len(search) {
		start := i
		c := search[i]
		i++
		if c != '-' && c != '"' {
			for i < len(search) && !isSpace(search[i]) && search[i] != '-' && search[i] != '"' {
				i++
			}
		}
		tokSpace := prevSpace
		j := i
		for i < len(search) && isSpace(search[i]) {
			i++
		}
		prevSpace = i > j
		switch c {
		case '-':
			if !inPhrase && tokSpace {
				inNegation = true
			}
		case '"':
			if inPhrase {
				phrase := search[quote+1 : start]
				if inNegation {
					q.NegatedPhrases = append(q.NegatedPhrases, phrase)
				} else {
					q.Phrases = append(q.Phrases, phrase)
				}
				inPhrase = false
			} else {
				inPhrase = true
				if inNegation && tokSpace {
					inNegation = false
				}
				quote = start
			}
		default:
			if inPhrase && inNegation {
				continue
			}
			if inNegation && tokSpace {
				inNegation = false
			}
			if inNegation {
				negative.WriteString(search[start:j])
				negative.WriteByte(' ')
			} else {
				positive.WriteString(search[start:j])
				positive.WriteByte(' ')
			}
		}
	}
	q.addTerms(positive.String(), false)
	q.addTerms(negative.String(), true)
	slices.Sort(q.Terms)
	q.Terms = slices.Compact(q.Terms)
	return q
}

func (q *Query) addTerms(sentence string, negated bool) {
	active := q.positive
	if negated {
		active = q.negated
	}
	q.lang.tokens(sentence, filterStopWords, func(term string) {
		if !negated {
			q.Terms = append(q.Terms, term)
		}
		if q.opts == 0 {
			active[term] = struct{}{}
		}
	})
	if q.opts != 0 {
		q.lang.tokens(sentence, filterStopWords|q.opts, func(term string) { active[term] = struct{}{} })
	}
}

// PositiveTerms are the terms a match must hold one of, sorted, as
// explain's parsedTextQuery shows them.
func (q *Query) PositiveTerms() []string { return sortedSet(q.positive) }

// NegatedTerms are the terms a match must not hold, sorted.
func (q *Query) NegatedTerms() []string { return sortedSet(q.negated) }

func sortedSet(m map[string]struct{}) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Holds reports whether doc, indexed by s, answers the query wherever it
// was found: s indexes it under one of the searched terms, and it Matches.
// A $text clause in a branch of an $or is checked on the documents the
// union's other branches found too, which no term lookup selected.
func (q *Query) Holds(s *Spec, doc bson.Raw) (bool, error) {
	terms, err := s.Terms(doc)
	if err != nil {
		return false, err
	}
	if !slices.ContainsFunc(q.Terms, func(t string) bool { _, ok := terms[t]; return ok }) {
		return false, nil
	}
	return q.Matches(s, doc)
}

// Matches reports whether doc, indexed by s, answers the query beyond
// holding one of its terms in the index: with a case or diacritic
// sensitive search it holds a positive term as written; it holds no
// negated term; it holds every phrase and no negated phrase (a phrase
// compares within one string, lower-cased and without diacritics unless
// the search is sensitive to them).
func (q *Query) Matches(s *Spec, doc bson.Raw) (bool, error) {
	type text struct {
		s    string
		lang *Language
	}
	var texts []text
	if err := s.visitText(doc, func(t string, lang *Language, _ float64) { texts = append(texts, text{t, lang}) }); err != nil {
		return false, err
	}
	has := func(terms map[string]struct{}) bool {
		found := false
		for _, t := range texts {
			t.lang.tokens(t.s, q.opts, func(tok string) {
				if _, ok := terms[tok]; ok {
					found = true
				}
			})
			if found {
				return true
			}
		}
		return false
	}
	if q.opts != 0 && !has(q.positive) {
		return false, nil
	}
	if len(q.negated) > 0 && has(q.negated) {
		return false, nil
	}
	phrase := func(p string) bool {
		for _, t := range texts {
			if strings.Contains(t.lang.fold(t.s, q.opts), t.lang.fold(p, q.opts)) {
				return true
			}
		}
		return false
	}
	for _, p := range q.Phrases {
		if !phrase(p) {
			return false, nil
		}
	}
	for _, p := range q.NegatedPhrases {
		if phrase(p) {
			return false, nil
		}
	}
	return true, nil
}
