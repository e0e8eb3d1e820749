package update

import (
	"testing"

	"github.com/folio-db/folio/internal/rawdoc"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// extremes are numbers at the edges of their types, in Extended JSON.
var extremes = []string{
	`{"$numberInt": "-2147483648"}`, `{"$numberInt": "2147483647"}`,
	`{"$numberLong": "-9223372036854775808"}`, `{"$numberLong": "9223372036854775807"}`,
	`{"$numberDouble": "NaN"}`, `{"$numberDouble": "Infinity"}`, `{"$numberDouble": "-Infinity"}`,
	`{"$numberDouble": "1.7976931348623157e308"}`, `{"$numberDouble": "-9.3e18"}`, `{"$numberDouble": "9.223372036854775807e18"}`,
	`{"$numberDouble": "-0.0"}`, `{"$numberDouble": "5e-324"}`,
	`{"$numberDecimal": "9.999999999999999999999999999999999E+6144"}`, `{"$numberDecimal": "-9.999999999999999999999999999999999E+6144"}`,
	`{"$numberDecimal": "1E-6176"}`, `{"$numberDecimal": "NaN"}`, `{"$numberDecimal": "-Infinity"}`,
	`{"$numberDecimal": "9223372036854775808"}`, `{"$numberDecimal": "-9223372036854775809"}`,
}

// FuzzApply checks that compiling and applying arbitrary updates to
// arbitrary documents never panics and, on success, yields valid BSON; a
// one-field $set gives what its update tree gives.
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
	add(`{"_id": 1, "a": 1, "b": 2, "a": 3}`, `{"$set": {"a": "x"}}`, -1)
	// Numeric arguments at their extremes.
	for _, x := range extremes {
		add(`{"_id": 1, "a": [3, 1, 2], "n": 5, "l": {"$numberLong": "9223372036854775807"}, "i": 2147483647}`,
			`{"$push": {"a": {"$each": [4], "$slice": `+x+`, "$position": `+x+`}}}`, -1)
		add(`{"_id": 1, "n": 5, "l": {"$numberLong": "-9223372036854775808"}, "i": -2147483648, "d": 1e308}`,
			`{"$inc": {"n": `+x+`, "l": `+x+`, "i": `+x+`, "d": `+x+`}, "$mul": {"m": `+x+`}}`, -1)
		add(`{"_id": 1, "l": {"$numberLong": "-9223372036854775808"}, "i": -2147483648}`,
			`{"$mul": {"l": `+x+`, "i": `+x+`}, "$min": {"m": `+x+`}, "$max": {"x": `+x+`}}`, -1)
		add(`{"_id": 1, "a": [1, 2, 3]}`, `{"$pop": {"a": `+x+`}}`, -1)
	}
	add(`{"_id": 1, "a": [1]}`, `{"$set": {"a.9223372036854775807": 1, "a.1500001": 2}}`, -1)
	add(`{"_id": 1, "a": [1]}`, `{"$unset": {"a.18446744073709551616": 1}, "$inc": {"a.2147483648": 1}}`, -1)
	add(`{"_id": 1, "i": 5}`, `{"$bit": {"i": {"and": {"$numberLong": "-9223372036854775808"}, "or": -2147483648}}}`, -1)
	f.Fuzz(func(t *testing.T, doc, spec []byte, pos int, insert bool) {
		if rawdoc.Validate(doc) != nil {
			return
		}
		u, err := Compile(spec, Options{Compile: compileQuery})
		if err != nil {
			return
		}
		if u.set.name != "" {
			sameApply(t, u, spec, doc, insert)
		}
		if pos > 1000 {
			pos %= 1000
		}
		out, delta, modified, err := u.Apply(doc, pos, insert)
		if err == nil && rawdoc.Validate(out) != nil {
			t.Fatalf("invalid output %x", out)
		}
		// A document repeating a field name has no diff naming one of them.
		if err == nil && modified && !insert && !u.IsReplacement() && !repeatsNames(doc) {
			if err := checkDelta(doc, out, delta); err != nil {
				t.Fatal(err)
			}
		}
		_, _ = UpsertSeed(spec, false)
		_, _ = UpsertSeed(spec, true)
	})
}

// repeatsNames reports whether some document in doc, or doc, has two
// fields of one name.
func repeatsNames(doc bson.Raw) bool {
	elems, _ := doc.Elements()
	seen := map[string]bool{}
	for _, e := range elems {
		if seen[e.Key()] {
			return true
		}
		seen[e.Key()] = true
		v := e.Value()
		if (v.Type == bson.TypeEmbeddedDocument || v.Type == bson.TypeArray) && repeatsNames(v.Value) {
			return true
		}
	}
	return false
}
