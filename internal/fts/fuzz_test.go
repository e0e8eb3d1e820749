package fts

import (
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
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
	var specs []*Spec
	for version := int32(1); version <= 3; version++ {
		spec, _, _, err := NewSpec(bson.Raw(mustMarshal(bson.D{{Key: "a", Value: "text"}})),
			Options{Version: bson.RawValue{Type: bson.TypeInt32, Value: bsoncore.AppendInt32(nil, version)}})
		if err != nil {
			f.Fatal(err)
		}
		specs = append(specs, spec)
	}
	f.Fuzz(func(t *testing.T, search, lang string, caseSens, diacriticSens bool) {
		for _, spec := range specs {
			l, err := spec.Language(lang)
			if err != nil {
				l = spec.DefaultLanguage()
			}
			q := ParseQuery(search, l, caseSens, diacriticSens)
			if !slices.IsSorted(q.Terms) || len(slices.Compact(slices.Clone(q.Terms))) != len(q.Terms) {
				t.Fatalf("version %d: terms %q not sorted and distinct", spec.Version(), q.Terms)
			}
			doc := mustMarshal(bson.D{{Key: "a", Value: search}, {Key: "language", Value: l.Name}})
			terms, err := spec.Terms(doc)
			if err != nil {
				t.Fatal(err)
			}
			for term, score := range terms {
				if term == "" || !(score > 0) {
					t.Fatalf("version %d: term %q score %v", spec.Version(), term, score)
				}
			}
			if _, err := q.Matches(spec, doc); err != nil {
				t.Fatal(err)
			}
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
