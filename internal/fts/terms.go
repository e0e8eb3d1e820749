package fts

import (
	"slices"
	"sort"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
)

// visitText calls fn with every string the index reads in doc, its
// language and weight, walking as MongoDB's FTSElementIterator does: a
// (sub)document's language override field sets the language below it; a
// string is read at a weighted path with its weight (on a wildcard index
// at any path, weighted 1 unless it is a weighted path: SERVER-45363);
// sub-documents are entered on the way to a weighted path, arrays from
// outside arrays (anything on a wildcard index); a field whose name holds
// a dot or starts with $ is skipped.
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
		if strings.Contains(name, ".") || strings.HasPrefix(name, "$") {
			// A field named with a dot or a $ prefix is no path a query
			// can name: MongoDB's iterator skips it, so {"a.b": "x"}
			// is not read as a.b (SERVER-78238).
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
		if exact {
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
	l, err := lookupLanguage(name, s.version)
	if err != nil {
		return nil, mongoerr.New(mongoerr.TextLanguageUnsupported, "language override unsupported: %s", name)
	}
	return l, nil
}

// Terms are the terms doc is indexed under with their scores, as MongoDB
// scores them: in each string read with weight w, a term met n times
// among the string's N tokens (stop words left out) scores
// w × (1 + 1/2 + … + 1/2^(n-1)) × (0.5 + 0.5·n/N), times 1.1 when the term
// is the whole string (up to ASCII case); a term's scores add up over the
// strings. Version 1 reads the strings its own way (visitTextV1).
func (s *Spec) Terms(doc bson.Raw) (map[string]float64, error) {
	scores := map[string]float64{}
	add := func(text string, lang *Language, w float64) { scoreString(scores, text, lang, w) }
	if s.version == 1 {
		s.visitTextV1(doc, add)
		return scores, nil
	}
	return scores, s.visitText(doc, add)
}

// scoreString adds the scores of text's terms, read in lang with weight
// w, to scores.
func scoreString(scores map[string]float64, text string, lang *Language, w float64) {
	type count struct {
		n    int
		freq float64
		exp  float64
	}
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
		if len(text) == len(term) && asciiLower(text) == asciiLower(term) {
			adjust += 0.1
		}
		scores[term] += w * c.freq * coeff * adjust
	}
}

// visitTextV1 calls fn with every string a version 1 index reads in doc,
// its language and weight, as MongoDB's legacy scoring does: the language
// is the top-level override field's when it is a non-empty string, else
// the default one (sub-documents cannot change it); on a wildcard index
// every string is read, below sub-documents and arrays too, except those
// of fields named as the override field, each weighted by the weight of
// its bare field name, else 1; otherwise each weighted path is looked up
// as extractElementAtPath does (rawdoc.ElementAtPath), and is read if a string,
// or, if an array, so are its strings, and in each of its sub-documents
// (or arrays) the string at the same whole path.
func (s *Spec) visitTextV1(doc bson.Raw, fn func(text string, lang *Language, w float64)) {
	lang := s.defaultLanguage
	if name, ok := doc.Lookup(s.languageOverride).StringValueOK(); ok && name != "" {
		lang, _ = lookupLanguage(name, 1)
	}
	if s.wildcard {
		s.walkV1(doc, lang, fn)
		return
	}
	for _, w := range s.weights {
		switch e := rawdoc.ElementAtPath(doc, w.path); e.Type {
		case bson.TypeString:
			fn(e.StringValue(), lang, w.w)
		case bson.TypeArray:
			vals, _ := bson.Raw(e.Value).Values()
			for _, x := range vals {
				if x.Type == bson.TypeEmbeddedDocument || x.Type == bson.TypeArray {
					x = rawdoc.ElementAtPath(x.Value, w.path)
				}
				if x.Type == bson.TypeString {
					fn(x.StringValue(), lang, w.w)
				}
			}
		}
	}
}

func (s *Spec) walkV1(doc bson.Raw, lang *Language, fn func(text string, lang *Language, w float64)) {
	elems, _ := doc.Elements()
	for _, el := range elems {
		name, v := el.Key(), el.Value()
		switch {
		case name == s.languageOverride:
		case v.Type == bson.TypeString:
			w := 1.0
			if i, ok := slices.BinarySearchFunc(s.weights, name, func(w weight, name string) int { return strings.Compare(w.path, name) }); ok {
				w = s.weights[i].w
			}
			fn(v.StringValue(), lang, w)
		case v.Type == bson.TypeEmbeddedDocument || v.Type == bson.TypeArray:
			s.walkV1(v.Value, lang, fn)
		}
	}
}
