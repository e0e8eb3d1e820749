package query

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/rawdoc"
)

// FuzzMatch checks that compiling arbitrary filters and matching them
// against arbitrary valid documents never panics.
func FuzzMatch(f *testing.F) {
	for _, c := range loadMatchCases(f) {
		f.Add([]byte(c.filter), []byte(c.doc))
	}
	f.Fuzz(func(t *testing.T, filter, doc []byte) {
		fl, err := Compile(filter)
		if err != nil || rawdoc.Validate(doc) != nil {
			return
		}
		fl.Match(doc)
		fl.MatchPositional(doc)
		if err := normalizedMatchesAlike(filter, doc); err != nil {
			t.Fatal(err)
		}
		if s, err := CompileSort(filter); err == nil {
			if k, err := s.KeysErr(doc); err == nil && s.CompareKeys(k, k) != 0 {
				t.Fatalf("key %v differs from itself", k)
			}
		}
	})
}

// FuzzProjection checks that compiling arbitrary projections and applying
// them to arbitrary valid documents never panics and yields valid BSON.
func FuzzProjection(f *testing.F) {
	seeds := [][2]string{
		{`{"a": 1}`, `{"_id": 1, "a": [1, {"b": 2}]}`},
		{`{"a.b": 0, "c": {"$slice": [1, 2]}}`, `{"a": [{"b": 1}, 2], "c": [1, 2, 3]}`},
		{`{"a.$": 1}`, `{"a": [1, 2]}`},
		{`{"x": "$a.b", "y": ["$c", 1]}`, `{"a": [{"b": 1}], "c": 2}`},
		{`{"a": {"$elemMatch": {"b": 1}}}`, `{"a": [{"b": 1}]}`},
		{`{"a": 1, "m.s": {"$meta": "textScore"}, "d": {"$add": [{"$meta": "geoNearDistance"}, 1]}}`, `{"a": 1, "m": 2}`},
	}
	for _, s := range seeds {
		f.Add([]byte(ext(f, s[0])), []byte(ext(f, s[1])), 0)
	}
	f.Fuzz(func(t *testing.T, spec, doc []byte, pos int) {
		if rawdoc.Validate(spec) != nil || rawdoc.Validate(doc) != nil {
			return
		}
		p, err := CompileProjection(spec)
		if err != nil {
			return
		}
		meta := docsrc.Meta{TextScore: 1.5, HasTextScore: pos%2 == 0, GeoNearDistance: 3, HasGeoNear: true}
		out, err := p.ApplyMeta(bson.Raw(doc), pos, meta)
		if err == nil {
			if err := bsoncore.Document(out).Validate(); err != nil {
				t.Fatalf("invalid output %x: %v", out, err)
			}
		}
	})
}
