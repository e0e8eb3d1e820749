package fts

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/fts/ftstest"
	"github.com/folio-db/folio/internal/mongoerr"
)

func extDoc(t *testing.T, j []byte) bson.Raw {
	t.Helper()
	var d bson.Raw
	if err := bson.UnmarshalExtJSON(j, false, &d); err != nil {
		t.Fatalf("%s: %v", j, err)
	}
	return d
}

// The corpus through the package: a document matches when the search
// holds it (Query.Holds: one of its index terms is a query term and the
// matcher accepts it).
func TestSearchCorpus(t *testing.T) {
	for _, c := range ftstest.Load(t, "testdata/search.json") {
		ix := extDoc(t, c.Index)
		spec, _, _, err := NewSpec(ix.Lookup("key").Document(), Options{Weights: ix.Lookup("weights"), DefaultLanguage: ix.Lookup("default_language"),
			LanguageOverride: ix.Lookup("language_override"), Version: ix.Lookup("textIndexVersion")})
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		for _, q := range c.Queries {
			lang := spec.DefaultLanguage()
			if q.Language != "" {
				if lang, err = spec.Language(q.Language); err != nil {
					t.Fatal(err)
				}
			}
			fq := ParseQuery(q.Search, lang, q.CaseSensitive, q.DiacriticSensitive)
			got := []int{}
			for _, dj := range c.Docs {
				doc := extDoc(t, dj)
				if ok, err := fq.Holds(spec, doc); err != nil || !ok {
					continue
				}
				id, _ := doc.Lookup("_id").AsInt64OK()
				got = append(got, int(id))
			}
			if !slices.Equal(got, q.IDs) {
				t.Errorf("%s: %q (case %v, diacritic %v, language %q): got %v, want %v", c.Name, q.Search, q.CaseSensitive, q.DiacriticSensitive, q.Language, got, q.IDs)
			}
		}
	}
}

// Tokens are lower-cased words without stop words, stemmed by the
// language's Snowball stemmer, without diacritics in version 3. Versions 1
// and 2 split words on ASCII white space and punctuation only, lower-case
// ASCII letters only and keep diacritics; version 1 knows a language by
// the name it was given, and only an English name has stop words.
func TestTokens(t *testing.T) {
	for _, tt := range []struct {
		version    int
		lang, text string
		opts       tokenOptions
		want       string
	}{
		{2, "none", "ÉCOLE Vôo_x a-b\x01c", filterStopWords, "École vôo_x a b\x01c"},
		{2, "english", "Café au lait", filterStopWords | caseSensitive, "Café au lait"},
		{3, "none", "ÉCOLE Vôo_x a-b", filterStopWords, "ecole voo_x a b"},
		{2, "french", "l'homme", 0, "l homm"},
		{1, "english", "The don't", filterStopWords, ""},
		{1, "en", "The don't", filterStopWords, "the don t"},
		{1, "eng", "running", filterStopWords, "run"},
		{1, "EN", "running", filterStopWords, "running"},
		{1, "klingon", "The running", filterStopWords, "the running"},
		{1, "english", "generously", 0, "generous"},
		{1, "porter", "generously", 0, "gener"},
		{3, "english", "The runners were running", filterStopWords, "runner run"},
		{3, "english", "The runners were running", 0, "the runner were run"},
		{3, "english", "don't stop-believing", filterStopWords, "stop believ"},
		{3, "english", "Café au lait, s'il vous plaît!", filterStopWords, "cafe au lait s'il vous plait"},
		{3, "english", "Café", filterStopWords | diacriticSensitive, "café"},
		{3, "english", "Jumped Over", filterStopWords | caseSensitive, "Jump"},
		{3, "french", "Les chevaux mangeaient", filterStopWords, "cheval mang"},
		{3, "french", "l'homme", filterStopWords, "homm"},
		{3, "german", "Die Häuser sind schön", filterStopWords, "haus schon"},
		{3, "spanish", "Los niños corrían rápidamente", filterStopWords, "nin corr rapid"},
		{3, "russian", "Красивые девушки", filterStopWords, "красив девушк"},
		{3, "turkish", "KİTAPLAR", filterStopWords, "kitap"},
		{3, "none", "The runners", filterStopWords, "the runners"},
		{3, "english", "a.b,c;d:e?f!g(h)i[j]k{l}m\"n", filterStopWords, "b c d e f g h j k l m n"},
		{2, "english", "a.b,c;d:e?f!g(h)i[j]k{l}m\"n", filterStopWords, "b c d e f g h j k l m n"},
	} {
		l, err := lookupLanguage(tt.lang, tt.version)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		l.tokens(tt.text, tt.opts, func(tok string) { got = append(got, tok) })
		if strings.Join(got, " ") != tt.want {
			t.Errorf("version %d %s %q: got %q, want %q", tt.version, tt.lang, tt.text, strings.Join(got, " "), tt.want)
		}
	}
}

// Every language MongoDB's text index versions 2 and 3 name, by name and
// code in any case; version 1's names as written, others being none.
func TestLanguages(t *testing.T) {
	for _, version := range []int{2, 3} {
		for _, name := range []string{"danish", "da", "dutch", "nl", "english", "en", "EN", "finnish", "fi", "french", "fr",
			"german", "de", "hungarian", "hu", "italian", "it", "norwegian", "nb", "portuguese", "pt", "romanian", "ro",
			"russian", "ru", "spanish", "es", "swedish", "sv", "turkish", "tr", "none"} {
			if _, err := lookupLanguage(name, version); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
		if _, err := lookupLanguage("klingon", version); !mongoerr.Is(err, mongoerr.BadValue) ||
			!strings.HasSuffix(err.Error(), fmt.Sprintf(`unsupported language: "klingon" for text index version %d`, version)) {
			t.Errorf("klingon: %v", err)
		}
		for lang, stop := range map[string]string{"english": "the", "french": "les", "german": "und", "spanish": "los", "russian": "и", "danish": "og"} {
			l, _ := lookupLanguage(lang, version)
			if !l.isStopWord(stop) {
				t.Errorf("%s: %q is not a stop word", lang, stop)
			}
		}
	}
	for name, want := range map[string]string{"dan": "dan", "nld": "nld", "porter": "porter", "rum": "rum", "no": "no", "nb": "none", "En": "none", "klingon": "none"} {
		if l, err := lookupLanguage(name, 1); err != nil || l.Name != want {
			t.Errorf("version 1 %s: %v %v, want %s", name, l, err, want)
		}
	}
}

// Scores follow MongoDB's formula (see Terms).
func TestScores(t *testing.T) {
	spec, _, _, err := NewSpec(extDoc(t, []byte(`{"title": "text", "body": "text"}`)), Options{Weights: bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: extDoc(t, []byte(`{"title": 10}`))}})
	if err != nil {
		t.Fatal(err)
	}
	terms, err := spec.Terms(extDoc(t, []byte(`{"title": "Coffee", "body": "coffee coffee and the cream"}`)))
	if err != nil {
		t.Fatal(err)
	}
	// title: 10 × 1 × (0.5·1/1 + 0.5); body (3 tokens): coffe 1.5 × (0.5·2/3 + 0.5), cream 1 × (0.5/3 + 0.5).
	want := map[string]float64{"coffe": 10 + 1.5*(0.5*2/3+0.5), "cream": 0.5/3 + 0.5}
	for term, w := range want {
		if math.Abs(terms[term]-w) > 1e-12 {
			t.Errorf("%s: %v, want %v", term, terms[term], w)
		}
	}
	// A term that is the whole string scores 1.1 times.
	terms, _ = spec.Terms(extDoc(t, []byte(`{"title": "cream"}`)))
	if math.Abs(terms["cream"]-11) > 1e-12 {
		t.Errorf("whole string: %v, want 11", terms["cream"])
	}
}

// A text index MongoDB's FTSSpec::fixSpec refuses fails with
// CannotCreateIndex and its message; version 1 checks far less.
func TestNewSpecErrors(t *testing.T) {
	str := func(s string) bson.RawValue { return bson.RawValue{Type: bson.TypeString, Value: bsonString(s)} }
	i32 := func(n int32) bson.RawValue {
		return bson.RawValue{Type: bson.TypeInt32, Value: bsoncore.AppendInt32(nil, n)}
	}
	doc := func(j string) bson.RawValue {
		return bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: extDoc(t, []byte(j))}
	}
	for _, tt := range []struct {
		key  string
		opts Options
		msg  string // "" for none
	}{
		{`{"a": "text", "b": 1, "c": "text"}`, Options{}, "'text' fields in index must all be adjacent"},
		{`{"a": "text", "b": 2}`, Options{}, "expected value 1 or -1 for non-text key in compound index"},
		{`{"a": "text", "b": 1.5}`, Options{}, ""},
		{`{"_fts": "x", "_ftsx": 1}`, Options{}, `expecting _fts:"text"`},
		{`{"_fts": "text", "_ftsx": 2}`, Options{}, "expecting _ftsx:1"},
		{`{"a": 1, "_fts": "text", "b": 1}`, Options{Weights: doc(`{"t": 1}`)}, "expected _ftsx after _fts"},
		{`{"a": 1, "_fts": "text", "_ftsx": 1}`, Options{}, "text index option 'weights' must specify fields or the wildcard"},
		{`{"a": 1, "_fts": "text", "_ftsx": 1}`, Options{Weights: doc(`{}`)}, "text index option 'weights' must specify fields or the wildcard"},
		{`{"a": "text"}`, Options{Weights: str("a")}, "text index option 'weights' must be an object"},
		{`{"a": "text"}`, Options{Weights: doc(`{"b": "x"}`)}, "weight for text index needs numeric type"},
		{`{"a": "text"}`, Options{Weights: doc(`{"b": 100000}`)}, "text index weight must be in the exclusive interval (0,100000) but found: 100000"},
		{`{"a": "text"}`, Options{Weights: doc(`{"b": 0.5}`)}, "text index weight must be in the exclusive interval (0,100000) but found: 0"},
		{`{"a": "text"}`, Options{Weights: doc(`{"b..c": 1}`)}, "weight cannot have empty path component"},
		{`{"a": "text"}`, Options{Weights: doc(`{"b.$c": 1}`)}, "weight cannot have path component with $ prefix"},
		{`{"a": "text"}`, Options{Weights: doc(`{"": 1}`)}, "weight cannot be on an empty field"},
		{`{"a": "text"}`, Options{DefaultLanguage: i32(1)}, "default_language needs a string type"},
		{`{"a": "text"}`, Options{DefaultLanguage: str("klingon")}, "default_language is not valid"},
		{`{"a": "text"}`, Options{DefaultLanguage: str("eng")}, "default_language is not valid"},
		{`{"a": "text"}`, Options{LanguageOverride: str("$lang")}, "language_override is not valid"},
		{`{"a": "text"}`, Options{Version: i32(4)}, "bad textIndexVersion: 4"},
		{`{"a": "text"}`, Options{Version: i32(0)}, "bad textIndexVersion: 0"},
		{`{"a": "text"}`, Options{Version: i32(2), DefaultLanguage: str("EN")}, ""},
		// Version 1.
		{`{"a": "text", "b": 2}`, Options{Version: i32(1), DefaultLanguage: str("klingon"), LanguageOverride: str("$x"), Weights: str("b")}, ""},
		{`{"a": "text"}`, Options{Version: i32(1), Weights: doc(`{"b": "x"}`)}, "text index weight must be in the exclusive interval (0,100000) but found: 0"},
		{`{"a": "text"}`, Options{Version: bson.RawValue{Type: bson.TypeDouble, Value: bsoncore.AppendDouble(nil, 1.9)}, Weights: doc(`{"b": 100000}`)},
			"text index weight must be in the exclusive interval (0,100000) but found: 100000"},
	} {
		_, _, _, err := NewSpec(extDoc(t, []byte(tt.key)), tt.opts)
		switch {
		case tt.msg == "" && err != nil:
			t.Errorf("%s %+v: %v", tt.key, tt.opts, err)
		case tt.msg != "" && (!mongoerr.Is(err, mongoerr.CannotCreateIndex) || !strings.HasSuffix(err.Error(), tt.msg)):
			t.Errorf("%s %+v: %v, want CannotCreateIndex %q", tt.key, tt.opts, err, tt.msg)
		}
	}
	// The stored form reads back as itself.
	_, key, opts, err := NewSpec(extDoc(t, []byte(`{"a": 1, "t": "text", "u": "text", "b": -1}`)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	k, _ := bson.Marshal(key)
	o, _ := bson.Marshal(opts)
	if got := bson.Raw(k).String(); got != `{"a": {"$numberInt":"1"},"_fts": "text","_ftsx": {"$numberInt":"1"},"b": {"$numberInt":"-1"}}` {
		t.Errorf("key %s", got)
	}
	oraw := bson.Raw(o)
	_, key2, opts2, err := NewSpec(k, Options{Weights: oraw.Lookup("weights"), DefaultLanguage: oraw.Lookup("default_language"),
		LanguageOverride: oraw.Lookup("language_override"), Version: oraw.Lookup("textIndexVersion")})
	k2, _ := bson.Marshal(key2)
	o2, _ := bson.Marshal(opts2)
	if err != nil || string(k2) != string(k) || string(o2) != string(o) {
		t.Errorf("fixed spec does not read back: %v %s %s", err, bson.Raw(k2), bson.Raw(o2))
	}
}

func bsonString(s string) []byte {
	b, _ := bson.Marshal(bson.D{{Key: "s", Value: s}})
	return bson.Raw(b).Lookup("s").Value
}

// Version 1 reads a document as MongoDB's legacy scoring does: a weighted
// path as extractElementAtPath finds it (no array traversal, a dotted
// field name itself first, an array's documents searched for the whole
// path again), and on a wildcard index every string weighted by its bare
// field name; the language is only ever the top-level override's.
// Versions 2 and 3 (FTSElementIterator) weight a string on a wildcard
// index by its own path's weight only, else 1 (SERVER-45363).
func TestTerms(t *testing.T) {
	for _, tt := range []struct {
		key, weights, doc string
		want              map[string]float64
		version           int32
	}{
		{`{"$**": "text"}`, `{"name": 500}`, `{"name": "Spot", "guardian": "Kevin"}`, map[string]float64{"spot": 550, "kevin": 1.1}, 3},
		{`{"$**": "text"}`, `{"name": 500, "tag": 250}`, `{"special": "Kevin", "tag": "Nice", "a": {"name": "x"}, "name": ["y"]}`, map[string]float64{"kevin": 1.1, "nice": 275, "x": 1.1, "y": 550}, 3},
		{`{"$**": "text"}`, `{"a.b": 5}`, `{"a": {"b": "x", "a": "z"}}`, map[string]float64{"x": 5.5, "z": 1.1}, 2},
		{`{"a.b": "text"}`, ``, `{"a": [{"b": "x"}]}`, map[string]float64{}, 1},
		{`{"a.b": "text"}`, ``, `{"a": {"b": "x"}}`, map[string]float64{"x": 1.1}, 1},
		{`{"a.b": "text"}`, ``, `{"a.b": "x", "a": {"b": "y"}}`, map[string]float64{"x": 1.1}, 1},
		{`{"a.b": "text"}`, ``, `{"a": [{"b": "x"}, "y"], "b": "z"}`, map[string]float64{}, 1},
		{`{"a": "text"}`, ``, `{"a": [{"a": "x"}, "y", {"b": "z"}]}`, map[string]float64{"x": 1.1, "y": 1.1}, 1},
		{`{"a.1": "text"}`, ``, `{"a": ["x", "y"]}`, map[string]float64{"y": 1.1}, 1},
		{`{"$**": "text"}`, `{"b": 5}`, `{"a": {"b": "x"}, "language": "none", "c": ["y"], "d": {"language": "z"}}`, map[string]float64{"x": 5.5, "y": 1.1}, 1},
		{`{"a": "text"}`, ``, `{"a": "the running", "language": "english"}`, map[string]float64{"run": 1}, 1},
		{`{"a": "text"}`, ``, `{"a": "the running", "language": "fre"}`, map[string]float64{"the": 0.75, "running": 0.75}, 1},
		{`{"a": "text"}`, ``, `{"a": "the running", "language": 3}`, map[string]float64{"run": 1}, 1},
	} {
		opts := Options{Version: bson.RawValue{Type: bson.TypeInt32, Value: bsoncore.AppendInt32(nil, tt.version)}}
		if tt.weights != "" {
			opts.Weights = bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: extDoc(t, []byte(tt.weights))}
		}
		spec, _, _, err := NewSpec(extDoc(t, []byte(tt.key)), opts)
		if err != nil {
			t.Fatal(err)
		}
		got, err := spec.Terms(extDoc(t, []byte(tt.doc)))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(tt.want) {
			t.Errorf("%s %s: %v, want %v", tt.key, tt.doc, got, tt.want)
			continue
		}
		for term, w := range tt.want {
			if math.Abs(got[term]-w) > 1e-12 {
				t.Errorf("%s %s: %v, want %v", tt.key, tt.doc, got, tt.want)
			}
		}
	}
}
