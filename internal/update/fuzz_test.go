package update

import (
	"testing"

	"github.com/folio-db/folio/internal/rawdoc"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// FuzzApply checks that compiling and applying arbitrary updates to
// arbitrary documents never panics and, on success, yields valid BSON.
func FuzzApply(f *testing.F) {
	add := func(doc, upd string, pos int) {
		var d, u bson.Raw
		if bson.UnmarshalExtJSON([]byte(doc), false, &d) != nil || bson.UnmarshalExtJSON([]byte(upd), false, &u) != nil {
			f.Fatalf("bad seed %s %s", doc, upd)
		}
		f.Add([]byte(d), []byte(u), pos, false)
	}
	add(`{"_id": 1, "a": [1, {"b": 2}]}`, `{"$set": {"a.1.b": 3, "a.5": 1}}`, -1)
	add(`{"_id": 1, "a": [1, 2]}`, `{"$inc": {"a.$": 1}, "$push": {"b": {"$each": [3, 1], "$sort": 1, "$slice": -1}}}`, 1)
	add(`{"_id": 1, "a": {"b": 1}}`, `{"$rename": {"a.b": "c.d"}, "$unset": {"x": 1}}`, -1)
	add(`{"_id": 1, "a": [[1], [2]]}`, `{"$pull": {"a": {"$in": [[1]]}}, "$addToSet": {"b": {"$each": [1, 1]}}}`, -1)
	add(`{"_id": 1, "a": [1, 2]}`, `{"$mul": {"a.$[]": 2}, "$bit": {"n": {"xor": 5}}, "$min": {"m": 1}}`, -1)
	add(`{"_id": 1}`, `{"x": 1}`, -1)
	f.Fuzz(func(t *testing.T, doc, spec []byte, pos int, insert bool) {
		if rawdoc.Validate(doc) != nil {
			return
		}
		u, err := Compile(spec, Options{Compile: compileQuery})
		if err != nil {
			return
		}
		if pos > 1000 {
			pos %= 1000
		}
		out, _, err := u.Apply(doc, pos, insert)
		if err == nil && rawdoc.Validate(out) != nil {
			t.Fatalf("invalid output %x", out)
		}
		_, _ = UpsertSeed(spec)
	})
}
