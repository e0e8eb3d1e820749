package fts

import (
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// FuzzSearch parses any $search string and indexes any text: no panic,
// query terms sorted and distinct, no empty term or score; a document
// holding a search's words as its text holds one of its terms, unless
// stop words or negations left the search without any.
func FuzzSearch(f *testing.F) {
	for _, s := range []string{"coffee", `"coffee shop" -tea`, "-\"a b\"-c d", "Ünïcödé -", "don't stop", `"`, "- -- \"\""} {
		f.Add(s, "english", false, false)
	}
	f.Add("KİTAPLAR", "turkish", true, false)
	f.Add("próximo vôo", "pt", false, true)
	spec, _, _, err := NewSpec(bson.Raw(mustMarshal(bson.D{{Key: "a", Value: "text"}})), Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, search, lang string, caseSens, diacriticSens bool) {
		l, err := LookupLanguage(lang)
		if err != nil {
			l = languages["english"]
		}
		q := ParseQuery(search, l, caseSens, diacriticSens)
		if !slices.IsSorted(q.Terms) || len(slices.Compact(slices.Clone(q.Terms))) != len(q.Terms) {
			t.Fatalf("terms %q not sorted and distinct", q.Terms)
		}
		doc := mustMarshal(bson.D{{Key: "a", Value: search}, {Key: "language", Value: l.Name}})
		terms, err := spec.Terms(doc)
		if err != nil {
			t.Fatal(err)
		}
		for term, score := range terms {
			if term == "" || !(score > 0) {
				t.Fatalf("term %q score %v", term, score)
			}
		}
		if _, err := q.Matches(spec, doc); err != nil {
			t.Fatal(err)
		}
	})
}

func mustMarshal(d bson.D) bson.Raw {
	b, err := bson.Marshal(d)
	if err != nil {
		panic(err)
	}
	return b
}
