package fts

import (
	"sort"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// visitText calls fn with every string the index reads in doc, its
// language and weight, walking as MongoDB's FTSElementIterator does: a
// (sub)document's language override field sets the language below it; a
// string is read at a weighted path (any path on a wildcard index, whose
// weight is then that of the first weighted path not before it, or 1);
// sub-documents are entered on the way to a weighted path, arrays from
// outside arrays (anything on a wildcard index).
func (s *Spec) visitText(doc bson.Raw, fn func(text string, lang *Language, w float64)) error {
	return s.walk(doc, "", false, s.defaultLanguage, fn)
}

func (s *Spec) walk(doc bson.Raw, parent string, isArray bool, lang *Language, fn func(string, *Language, float64)) error {
	lang, err := s.languageOf(doc, lang)
	if err != nil {
		return err
	}
	elems, err := doc.Elements()
	if err != nil {
		return err
	}
	for _, el := range elems {
		name, v := el.Key(), el.Value()
		if s.wildcard && name == s.languageOverride {
			continue
		}
		dotted := name
		switch {
		case parent != "" && isArray:
			dotted = parent
		case parent != "":
			dotted = parent + "." + name
		}
		bound := dotted
		if v.Type == bson.TypeEmbeddedDocument {
			bound += "."
		}
		i := sort.Search(len(s.weights), func(i int) bool { return s.weights[i].path >= bound })
		possible := i < len(s.weights)
		if !s.wildcard && (!possible || !pathPrefix(dotted, s.weights[i].path)) {
			continue
		}
		exact := possible && s.weights[i].path == dotted
		w := 1.0
		if possible {
			w = s.weights[i].w
		}
		switch v.Type {
		case bson.TypeString:
			if exact || s.wildcard {
				fn(v.StringValue(), lang, w)
			}
		case bson.TypeEmbeddedDocument:
			if !exact || s.wildcard {
				if err := s.walk(v.Document(), dotted, false, lang, fn); err != nil {
					return err
				}
			}
		case bson.TypeArray:
			if !isArray || s.wildcard {
				if err := s.walk(bson.Raw(v.Array()), dotted, true, lang, fn); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// pathPrefix reports whether weighted is path or below it.
func pathPrefix(path, weighted string) bool {
	return weighted == path || strings.HasPrefix(weighted, path+".")
}

// languageOf is the language of doc's strings: its language override
// field's, else the enclosing one.
func (s *Spec) languageOf(doc bson.Raw, enclosing *Language) (*Language, error) {
	v, err := doc.LookupErr(s.languageOverride)
	if err != nil {
		return enclosing, nil
	}
	name, ok := v.StringValueOK()
	if !ok {
		return nil, mongoerr.New(mongoerr.TextLanguageNotString, "found language override field in document with non-string type")
	}
	l, err := LookupLanguage(name)
	if err != nil {
		return nil, mongoerr.New(mongoerr.TextLanguageUnsupported, "language override unsupported: %s", name)
	}
	return l, nil
}

// Terms are the terms doc is indexed under with their scores, as MongoDB
// scores them: in each string read with weight w, a term met n times
// among the string's N tokens (stop words left out) scores
// w × (1 + 1/2 + … + 1/2^(n-1)) × (0.5 + 0.5·n/N), times 1.1 when the term
// is the whole string; a term's scores add up over the strings.
func (s *Spec) Terms(doc bson.Raw) (map[string]float64, error) {
	scores := map[string]float64{}
	type count struct {
		n    int
		freq float64
		exp  float64
	}
	err := s.visitText(doc, func(text string, lang *Language, w float64) {
		counts := map[string]*count{}
		tokens := 0
		lang.tokens(text, filterStopWords, func(term string) {
			c := counts[term]
			if c == nil {
				c = &count{exp: 1}
				counts[term] = c
			} else {
				c.exp *= 2
			}
			c.n++
			c.freq += 1 / c.exp
			tokens++
		})
		for term, c := range counts {
			coeff := 0.5*float64(c.n)/float64(tokens) + 0.5
			adjust := 1.0
			if len(text) == len(term) && strings.EqualFold(text, term) {
				adjust += 0.1
			}
			scores[term] += w * c.freq * coeff * adjust
		}
	})
	return scores, err
}
