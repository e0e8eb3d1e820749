package fts

import (
	"math"
	"slices"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

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

// The corpus through the package: a document matches when one of its
// index terms is a query term and the matcher accepts it.
func TestSearchCorpus(t *testing.T) {
	for _, c := range ftstest.Load(t, "testdata/search.json") {
		ix := extDoc(t, c.Index)
		spec, _, _, err := NewSpec(ix.Lookup("key").Document(), Options{DefaultLanguage: ix.Lookup("default_language")})
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		for _, q := range c.Queries {
			lang := spec.DefaultLanguage()
			if q.Language != "" {
				if lang, err = LookupLanguage(q.Language); err != nil {
					t.Fatal(err)
				}
			}
			fq := ParseQuery(q.Search, lang, q.CaseSensitive, q.DiacriticSensitive)
			got := []int{}
			for _, dj := range c.Docs {
				doc := extDoc(t, dj)
				terms, err := spec.Terms(doc)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.ContainsFunc(fq.Terms, func(term string) bool { _, ok := terms[term]; return ok }) {
					continue
				}
				if ok, err := fq.Matches(spec, doc); err != nil || !ok {
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
// language's Snowball stemmer, without diacritics.
func TestTokens(t *testing.T) {
	for _, tt := range []struct {
		lang, text string
		opts       tokenOptions
		want       string
	}{
		{"english", "The runners were running", filterStopWords, "runner run"},
		{"english", "The runners were running", 0, "the runner were run"},
		{"english", "don't stop-believing", filterStopWords, "stop believ"},
		{"english", "Café au lait, s'il vous plaît!", filterStopWords, "cafe au lait s'il vous plait"},
		{"english", "Café", filterStopWords | diacriticSensitive, "café"},
		{"english", "Jumped Over", filterStopWords | caseSensitive, "Jump"},
		{"french", "Les chevaux mangeaient", filterStopWords, "cheval mang"},
		{"french", "l'homme", filterStopWords, "homm"},
		{"german", "Die Häuser sind schön", filterStopWords, "haus schon"},
		{"spanish", "Los niños corrían rápidamente", filterStopWords, "nin corr rapid"},
		{"russian", "Красивые девушки", filterStopWords, "красив девушк"},
		{"turkish", "KİTAPLAR", filterStopWords, "kitap"},
		{"none", "The runners", filterStopWords, "the runners"},
		{"english", "a.b,c;d:e?f!g(h)i[j]k{l}m\"n", filterStopWords, "b c d e f g h j k l m n"},
	} {
		l, err := LookupLanguage(tt.lang)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		l.tokens(tt.text, tt.opts, func(tok string) { got = append(got, tok) })
		if strings.Join(got, " ") != tt.want {
			t.Errorf("%s %q: got %q, want %q", tt.lang, tt.text, strings.Join(got, " "), tt.want)
		}
	}
}

// Every language MongoDB's text index version 3 names, by name and code.
func TestLanguages(t *testing.T) {
	for _, name := range []string{"danish", "da", "dutch", "nl", "english", "en", "EN", "finnish", "fi", "french", "fr",
		"german", "de", "hungarian", "hu", "italian", "it", "norwegian", "nb", "portuguese", "pt", "romanian", "ro",
		"russian", "ru", "spanish", "es", "swedish", "sv", "turkish", "tr", "none"} {
		if _, err := LookupLanguage(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := LookupLanguage("klingon"); !mongoerr.Is(err, mongoerr.BadValue) {
		t.Errorf("klingon: %v", err)
	}
	for lang, stop := range map[string]string{"english": "the", "french": "les", "german": "und", "spanish": "los", "russian": "и", "danish": "og"} {
		l, _ := LookupLanguage(lang)
		if !l.isStopWord(stop) {
			t.Errorf("%s: %q is not a stop word", lang, stop)
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

func TestNewSpecErrors(t *testing.T) {
	str := func(s string) bson.RawValue { return bson.RawValue{Type: bson.TypeString, Value: bsonString(s)} }
	for _, tt := range []struct {
		key  string
		opts Options
		code mongoerr.Code
	}{
		{`{"a": "text", "b": 1, "c": "text"}`, Options{}, mongoerr.TextFieldsNotAdjacent},
		{`{"a": "text", "b": 2}`, Options{}, mongoerr.TextCompoundNotDirection},
		{`{"_fts": "x", "_ftsx": 1}`, Options{}, mongoerr.TextFTSNotText},
		{`{"_fts": "text", "_ftsx": 2}`, Options{}, mongoerr.TextFTSXNotOne},
		{`{"a": "text"}`, Options{Weights: str("a")}, mongoerr.TextWeightsNotObject},
		{`{"a": "text"}`, Options{DefaultLanguage: bson.RawValue{Type: bson.TypeInt32, Value: []byte{1, 0, 0, 0}}}, mongoerr.TextDefaultLanguageNotString},
		{`{"a": "text"}`, Options{DefaultLanguage: str("klingon")}, mongoerr.BadValue},
		{`{"a": "text"}`, Options{LanguageOverride: str("$lang")}, mongoerr.TextLanguageOverrideInvalid},
		{`{"a": "text"}`, Options{Version: bson.RawValue{Type: bson.TypeInt32, Value: []byte{4, 0, 0, 0}}}, mongoerr.TextIndexVersionUnsupported},
		{`{"a": "text"}`, Options{Version: bson.RawValue{Type: bson.TypeInt32, Value: []byte{2, 0, 0, 0}}}, mongoerr.NotImplemented},
	} {
		if _, _, _, err := NewSpec(extDoc(t, []byte(tt.key)), tt.opts); !mongoerr.Is(err, tt.code) {
			t.Errorf("%s %+v: %v, want %d", tt.key, tt.opts, err, tt.code)
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
