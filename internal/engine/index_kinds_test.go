package engine

import (
	"slices"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// TestWildcardKeys checks the keys of a wildcard index against MongoDB's
// wildcard key generation: (path, value) per scalar leaf, array elements
// under the array's path (recorded as multikey), arrays in arrays and
// empty objects as values, empty arrays as undefined, _id and dotted field
// names left out, and the paths a projection or prefix selects.
func TestWildcardKeys(t *testing.T) {
	cases := []struct {
		key, proj, doc string
		want           []string
		multikey       []string
	}{
		{`{"$**": 1}`, ``, `{"_id": 1, "a": 1, "b": {"c": "x", "d": {}}}`,
			[]string{`a 1`, `b.c "x"`, `b.d {}`}, nil},
		{`{"$**": 1}`, ``, `{"_id": 1, "a": [1, [2, 3], {"k": true}, []], "e": [], "f.g": 1}`,
			[]string{`a 1`, `a [ 2, 3 ]`, `a.k true`, `a []`, `e undefined`}, []string{"a", "e"}},
		{`{"a.$**": 1}`, ``, `{"_id": 1, "a": {"x": [{"y": 1}]}, "b": 2}`,
			[]string{`a.x.y 1`}, []string{"a.x"}},
		{`{"$**": 1}`, `{"b": 1, "_id": 1}`, `{"_id": 7, "a": 1, "b": {"c": 2}}`,
			[]string{`_id 7`, `b.c 2`}, nil},
		{`{"$**": 1}`, `{"b": 0}`, `{"_id": 7, "a": 1, "b": {"c": 2}}`,
			[]string{`a 1`}, nil},
		{`{"$**": 1}`, `{"_id": 1}`, `{"_id": 7, "a": 1}`,
			[]string{`_id 7`}, nil},
		{`{"$**": 1}`, `{"_id": 1, "a": 0}`, `{"_id": 7, "a": 1, "b": 2}`,
			[]string{`_id 7`, `b 2`}, nil},
		{`{"_id.$**": 1}`, ``, `{"_id": {"x": 1, "y": [2]}, "a": 1}`,
			[]string{`_id.x 1`, `_id.y 2`}, []string{"_id.y"}},
	}
	for _, c := range cases {
		spec := IndexSpec{Key: ext(t, c.key), ExpireAfter: -1}
		if c.proj != "" {
			spec.WildcardProjection = ext(t, c.proj)
		}
		ix, err := newIndex(1, spec)
		if err != nil {
			t.Fatalf("%s: %v", c.key, err)
		}
		keys, _, err := ix.keys(ext(t, c.doc))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, k := range keys {
			got = append(got, k.vals[0].StringValue()+" "+shown(k.vals[1]))
		}
		slices.Sort(got)
		want := slices.Clone(c.want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s %s on %s: keys %q, want %q", c.key, c.proj, c.doc, got, want)
		}
		if mk := ix.wild.multikeyPaths(); !slices.Equal(mk, c.multikey) && (len(mk) > 0 || len(c.multikey) > 0) {
			t.Errorf("%s on %s: multikey paths %v, want %v", c.key, c.doc, mk, c.multikey)
		}
	}
}

// TestCompoundWildcardKeys: a compound wildcard index's keys are the
// wildcard's (path, value) pairs with the other fields' values around
// them; a document with no covered path gets one key of MinKey for the
// path and value; an array at another field is refused (7246301).
func TestCompoundWildcardKeys(t *testing.T) {
	cases := []struct {
		key, doc string
		want     []string
		code     mongoerr.Code
	}{
		{`{"t": 1, "a.$**": 1}`, `{"_id": 1, "t": 5, "a": {"x": 1, "y": [2, 3]}}`,
			[]string{`5 "a.x" 1`, `5 "a.y" 2`, `5 "a.y" 3`}, 0},
		{`{"a.$**": 1, "t": -1, "u.v": 1}`, `{"_id": 1, "t": "s", "a": {"x": 1}}`,
			[]string{`"a.x" 1 "s" null`}, 0},
		{`{"t": 1, "a.$**": 1}`, `{"_id": 1, "b": 2}`,
			[]string{`null MinKey MinKey`}, 0},
		{`{"t": 1, "a.$**": 1}`, `{"_id": 1, "t": [1], "a": {"x": 1}}`, nil, mongoerr.WildcardRegularFieldMultikey},
		{`{"t.u": 1, "a.$**": 1}`, `{"_id": 1, "t": [{"u": 1}]}`, nil, mongoerr.WildcardRegularFieldMultikey},
	}
	for _, c := range cases {
		ix, err := newIndex(1, IndexSpec{Key: ext(t, c.key), ExpireAfter: -1})
		if err != nil {
			t.Fatalf("%s: %v", c.key, err)
		}
		keys, _, err := ix.keys(ext(t, c.doc))
		if c.code != 0 {
			if !mongoerr.Is(err, c.code) {
				t.Errorf("%s on %s: %v, want code %d", c.key, c.doc, err, c.code)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, k := range keys {
			var vals []string
			for _, v := range k.vals {
				vals = append(vals, shown(v))
			}
			got = append(got, strings.Join(vals, " "))
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s on %s: keys %q, want %q", c.key, c.doc, got, c.want)
		}
	}
}

func shown(v bson.RawValue) string {
	if v.Type == bson.TypeUndefined {
		return "undefined"
	}
	return values.Shell(v)
}

// TestIndexKindsValidate: after inserts, updates and deletes, a hashed and
// a wildcard index hold exactly the entries of the documents.
func TestIndexKindsValidate(t *testing.T) {
	e := newTestEngine(t)
	mustCreateIndex(t, e, "k", `{"h": "hashed", "n": 1}`, false)
	mustCreateIndex(t, e, "k", `{"$**": 1}`, false)
	var docs []bson.Raw
	for _, s := range []string{`{"_id": 1, "h": "x", "n": 1, "w": {"a": [1, {"b": 2}]}}`, `{"_id": 2, "h": 2.5}`, `{"_id": 3}`} {
		docs = append(docs, ext(t, s))
	}
	if _, _, err := e.Insert("test", "k", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Update("test", "k", UpdateSpec{Filter: ext(t, `{"_id": 1}`), Update: ext(t, `{"$set": {"w.a": 5, "h": "z"}}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Delete("test", "k", ext(t, `{"_id": 2}`), 1, bson.RawValue{}, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	res := mustValidate(t, e, "k")
	if res.KeysPerIndex["h_hashed_n_1"] != 2 || res.KeysPerIndex["$**_1"] != 3 {
		t.Errorf("keys per index %v", res.KeysPerIndex)
	}
}
