package engine

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/fts"
	"github.com/folio-db/folio/internal/keyenc"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/storage/testkv"
)

// TestIndexKeys checks the keys a document contributes to an index:
// missing fields index as null, arrays as one key per element, an empty
// array as undefined, compound keys as products (fields running through
// one array paired by element, unless the index predates it), parallel arrays fail
// with 171, an ambiguous numeric path component with 16746, and an index with a hashed field takes no array in any field
// (16766).
func TestIndexKeys(t *testing.T) {
	tests := []struct {
		name   string
		key    string
		sparse bool
		doc    string
		want   []string // each an Extended JSON array of the key's field values
		code   mongoerr.Code
	}{
		{"scalar", `{"a": 1}`, false, `{"a": 5}`, []string{`[5]`}, 0},
		{"missing is null", `{"a": 1}`, false, `{"b": 5}`, []string{`[null]`}, 0},
		{"sparse skips missing", `{"a": 1}`, true, `{"b": 5}`, nil, 0},
		{"sparse keeps null", `{"a": 1}`, true, `{"a": null}`, []string{`[null]`}, 0},
		{"array elements", `{"a": 1}`, false, `{"a": [3, 1, 3]}`, []string{`[1]`, `[3]`}, 0},
		{"empty array is undefined", `{"a": 1}`, false, `{"a": []}`, []string{`[{"$undefined": true}]`}, 0},
		{"nested array element kept whole", `{"a": 1}`, false, `{"a": [[1, 2]]}`, []string{`[[1, 2]]`}, 0},
		{"dotted", `{"a.b": 1}`, false, `{"a": {"b": "x"}}`, []string{`["x"]`}, 0},
		{"through array of docs", `{"a.b": 1}`, false, `{"a": [{"b": 1}, {"c": 2}]}`, []string{`[null]`, `[1]`}, 0},
		{"positional component", `{"a.0": 1}`, false, `{"a": [7, 8]}`, []string{`[7]`}, 0},
		{"compound product", `{"a": 1, "b": -1}`, false, `{"a": [1, 2], "b": "x"}`, []string{`[1, "x"]`, `[2, "x"]`}, 0},
		// Fields running through one array take one element's values
		// (btree_key_generator.cpp).
		{"same array twice", `{"attrs.n": 1, "attrs.v": 1}`, false,
			`{"attrs": [{"n": "color", "v": "red"}, {"n": "size", "v": 9}]}`,
			[]string{`["color", "red"]`, `["size", 9]`}, 0},
		{"same array, fields missing", `{"attrs.n": 1, "attrs.v": 1}`, false,
			`{"attrs": [{"n": "a"}, {"v": 1}]}`, []string{`["a", null]`, `[null, 1]`}, 0},
		{"same array, an element and its field", `{"x": 1, "x.b": 1}`, false,
			`{"x": [1, {"b": 2}]}`, []string{`[1, null]`, `[{"b": 2}, 2]`}, 0},
		{"same array, an inner array", `{"x.b": 1, "x.c": 1}`, false,
			`{"x": [{"b": 1, "c": [2, 3]}, {"b": 4, "c": 5}]}`, []string{`[1, 2]`, `[1, 3]`, `[4, 5]`}, 0},
		{"same array, deeper", `{"x.y.b": 1, "x.y.c": -1}`, false,
			`{"x": [{"y": [{"b": 1, "c": 2}, {"b": 3, "c": 4}]}, {"y": {"b": 5, "c": 6}}]}`, []string{`[1, 2]`, `[3, 4]`, `[5, 6]`}, 0},
		{"same array, empty", `{"x.b": 1, "x.c": 1}`, false, `{"x": []}`, []string{`[null, null]`}, 0},
		{"shared start, one array", `{"o.p": 1, "o.q": 1}`, false, `{"o": {"p": 1, "q": [1, 2]}}`, []string{`[1, 1]`, `[1, 2]`}, 0},
		{"same array, parallel inner arrays", `{"x.b": 1, "x.c": 1}`, false, `{"x": [{"b": [1], "c": [2]}]}`, nil, mongoerr.CannotIndexParallelArrays},
		{"parallel arrays", `{"a": 1, "b": 1}`, false, `{"a": [1], "b": [2]}`, nil, mongoerr.CannotIndexParallelArrays},
		// MongoDB checks for parallel arrays within each element of the
		// array it walks: inner arrays in different elements are not
		// parallel (getKeysImplWithArray).
		{"inner arrays in different elements", `{"x.b": 1, "x.c": 1}`, false,
			`{"x": [{"b": [1, 2]}, {"c": [3, 4]}]}`, []string{`[1, null]`, `[2, null]`, `[null, 3]`, `[null, 4]`}, 0},
		{"inner arrays in different elements, one a leaf", `{"a.b.c": 1, "a.d": 1}`, false,
			`{"a": [{"d": [1, 2]}, {"b": [{"c": 3}, {}]}]}`, []string{`[null, 1]`, `[null, 2]`, `[3, null]`, `[null, null]`}, 0},
		{"inner arrays in one element of two", `{"x.b": 1, "x.c": 1}`, false,
			`{"x": [{"b": [1]}, {"b": [2], "c": [3]}]}`, nil, mongoerr.CannotIndexParallelArrays},
		{"an outer array and an inner one", `{"x.b": 1, "y": 1}`, false,
			`{"x": [{"b": [1]}, {"b": 2}], "y": [3]}`, nil, mongoerr.CannotIndexParallelArrays},
		// A numeric component naming both an element and an embedded
		// document's field is ambiguous (update_numeric_field_name.js).
		{"ambiguous positional", `{"a.0.c": 1}`, false, `{"a": [{"0": 1}]}`, nil, mongoerr.AmbiguousArrayField},
		{"ambiguous positional, later element", `{"a.0.c": 1}`, false, `{"a": [{"c": 1}, {"0": {"c": 2}}]}`, nil, mongoerr.AmbiguousArrayField},
		{"ambiguous positional, deeper", `{"a.0.c": 1}`, false, `{"a": [{"0": {"0": 1}}, 5]}`, nil, mongoerr.AmbiguousArrayField},
		// "01" names no element (elements are named "0", "1", ...), so it is
		// a field of the array's documents.
		{"non-canonical positional is a field", `{"a.01": 1}`, false, `{"a": [{"01": 1}, 5]}`, []string{`[null]`, `[1]`}, 0},
		{"positional past the end uses fields", `{"a.5": 1}`, false, `{"a": [{"5": 1}]}`, []string{`[1]`}, 0},
		{"numbers of any type are one key", `{"a": 1}`, false, `{"a": [1, 1.0, {"$numberLong": "1"}]}`, []string{`[1]`}, 0},
		{"whole subdocument", `{"a": 1}`, false, `{"a": {"x": 1}}`, []string{`[{"x": 1}]`}, 0},
		{"hashed compound keeps other values", `{"a": 1, "b": "hashed"}`, false, `{"a": 5}`,
			[]string{`[5, {"$numberLong": "2338878944348059895"}]`}, 0},
		{"hashed compound: array in another field", `{"a": 1, "b": "hashed", "c": 1}`, false, `{"c": []}`, nil, mongoerr.HashedArrayValue},
		{"hashed compound: array along another path", `{"field1.field2.0.field4": "hashed", "field2.0.field4": 1}`, false,
			`{"field2": []}`, nil, mongoerr.HashedArrayValue},
		{"hashed compound: array inside another path", `{"field1.field2.0.field4": "hashed", "field2.0.field4": 1}`, false,
			`{"field2": {"0": [0]}}`, nil, mongoerr.HashedArrayValue},
		{"hashed compound: array at another path", `{"field1.field2.0.field4": "hashed", "field2.0.field4": 1}`, false,
			`{"field2": {"0": {"field4": []}}}`, nil, mongoerr.HashedArrayValue},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ix, err := newIndex(1, IndexSpec{Key: ext(t, tc.key), Sparse: tc.sparse, ExpireAfter: -1})
			if err != nil {
				t.Fatal(err)
			}
			keys, _, err := ix.keys(ext(t, tc.doc))
			if tc.code != 0 {
				if !mongoerr.Is(err, tc.code) {
					t.Fatalf("got %v, want code %d", err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var want [][]byte
			for _, w := range tc.want {
				arr := ext(t, `{"v": `+w+`}`).Lookup("v").Array()
				vals, _ := arr.Values()
				var enc []byte
				for i, v := range vals {
					enc = keyenc.AppendField(enc, v, ix.Fields[i].Desc)
				}
				want = append(want, enc)
			}
			if len(keys) != len(want) {
				t.Fatalf("got %d keys, want %d", len(keys), len(want))
			}
			for _, w := range want {
				if !slices.ContainsFunc(keys, func(k indexKey) bool { return bytes.Equal(k.enc, w) }) {
					t.Errorf("missing key for %x", w)
				}
			}
		})
	}
}

// TestIndexCrossKeys checks that an index keyed before fields running
// through one array were paired by element goes on keying every
// combination, so that its entries are removed by the keys that wrote
// them.
func TestIndexCrossKeys(t *testing.T) {
	ix, err := newIndex(1, IndexSpec{Key: ext(t, `{"attrs.n": 1, "attrs.v": 1}`), ExpireAfter: -1})
	if err != nil {
		t.Fatal(err)
	}
	doc := ext(t, `{"attrs": [{"n": "color", "v": "red"}, {"n": "size", "v": 9}]}`)
	for _, tc := range []struct {
		cross bool
		want  int
	}{{false, 2}, {true, 4}} {
		ix.crossKeys = tc.cross
		if keys, _, err := ix.keys(doc); err != nil || len(keys) != tc.want {
			t.Errorf("crossKeys %v: %d keys (%v), want %d", tc.cross, len(keys), err, tc.want)
		}
	}
}

// TestElementKeysStored checks that the catalog says how an index is keyed:
// one created now is keyed by element on every frontend, one whose entry
// predates the flag by every combination.
func TestElementKeysStored(t *testing.T) {
	kvs := testkv.OpenShared(t, 2)
	first := openEngine(t, kvs[0])
	mustCreateIndex(t, first, "c", `{"attrs.n": 1, "attrs.v": 1}`, false)
	second := openEngine(t, kvs[1])
	for _, e := range []*Engine{first, second} {
		ix := e.Collection("test", "c").Indexes()[0]
		if !ix.pairsArrays() {
			t.Fatalf("%s is not keyed by element", ix.Name)
		}
		si := ix.stored()
		if !si.ElementKeys {
			t.Fatal("stored without elementKeys")
		}
		si.ElementKeys = false // an entry from before the flag
		old, err := syncIndex(nil, si)
		if err != nil {
			t.Fatal(err)
		}
		if old.pairsArrays() || old.stored().ElementKeys {
			t.Fatal("an entry without elementKeys is keyed by element")
		}
	}
}

// TestFieldArraysStored checks that the array components of an index's
// fields reach every frontend before the write that met them returns, and
// that an entry multikey without them loads as an index not tracking them.
func TestFieldArraysStored(t *testing.T) {
	kvs := testkv.OpenShared(t, 2)
	first := openEngine(t, kvs[0])
	mustCreateIndex(t, first, "c", `{"x": 1, "o.p": 1, "o.q.r": 1}`, false)
	second := openEngine(t, kvs[1])
	if _, werrs, err := first.Insert("test", "c", []bson.Raw{ext(t, `{"_id": 1, "x": 5, "o": {"p": 1, "q": [{"r": [1]}]}}`)}, true, WriteOptions{}); err != nil || werrs != nil {
		t.Fatal(err, werrs)
	}
	want := []uint64{0, 0, 2 | 4} // o.q and o.q.r
	for _, e := range []*Engine{first, second} {
		ix := e.Collection("test", "c").Indexes()[0]
		if got := ix.fieldArrays(); !slices.Equal(got, want) {
			t.Fatalf("field arrays %v, want %v", got, want)
		}
		si := ix.stored()
		si.FieldArrays = nil // multikey before Folio recorded them
		old, err := syncIndex(nil, si)
		if err != nil {
			t.Fatal(err)
		}
		if old.fieldArrays() != nil || old.tracksArrays() || old.raiseArrays(want) {
			t.Fatal("an entry multikey without fieldArrays tracks them")
		}
		if p := old.planned(); p.FieldArrays != nil || !p.Multikey {
			t.Fatalf("planned as %+v", p)
		}
	}
}

// TestUniqueIndex checks unique enforcement on insert, update and build,
// with keyPattern and keyValue in the error.
func TestUniqueIndex(t *testing.T) {
	e := newTestEngine(t)
	mustCreateIndex(t, e, "u", `{"email": 1}`, true)
	docs := []bson.Raw{ext(t, `{"_id": 1, "email": "a"}`), ext(t, `{"_id": 2, "email": "a"}`), ext(t, `{"_id": 3, "email": "b"}`)}
	n, werrs, err := e.Insert("test", "u", docs, false, WriteOptions{})
	if err != nil || n != 2 || len(werrs) != 1 || werrs[0].Index != 1 || werrs[0].Err.Code != mongoerr.DuplicateKey {
		t.Fatalf("insert: n=%d werrs=%v err=%v", n, werrs, err)
	}
	if kv := werrs[0].Err.Extra; len(kv) != 2 || kv[0].Key != "keyPattern" || kv[1].Key != "keyValue" {
		t.Fatalf("dup error extra = %v", kv)
	}
	_, err = e.Update("test", "u", UpdateSpec{Filter: ext(t, `{"_id": 3}`), Update: ext(t, `{"$set": {"email": "a"}}`)})
	if !mongoerr.Is(err, mongoerr.DuplicateKey) {
		t.Fatalf("update to a taken key: %v", err)
	}
	if _, err := e.Update("test", "u", UpdateSpec{Filter: ext(t, `{"_id": 1}`), Update: ext(t, `{"$set": {"email": "c"}}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Update("test", "u", UpdateSpec{Filter: ext(t, `{"_id": 3}`), Update: ext(t, `{"$set": {"email": "a"}}`)}); err != nil {
		t.Fatalf("key freed by the earlier update: %v", err)
	}
	mustValidate(t, e, "u")
	if _, _, err := e.Insert("test", "v", []bson.Raw{ext(t, `{"k": 1}`), ext(t, `{"k": 1}`)}, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = e.CreateIndexes("test", "v", []IndexSpec{{Key: ext(t, `{"k": 1}`), Unique: true, ExpireAfter: -1}}, nil)
	if !mongoerr.Is(err, mongoerr.DuplicateKey) {
		t.Fatalf("unique build over duplicates: %v", err)
	}
	if len(e.Collection("test", "v").Indexes()) != 0 {
		t.Fatal("failed build left an index behind")
	}
}

// TestIndexConflicts checks MongoDB's codes for conflicting definitions;
// wildcardProjections compare normalized (index_signature.js): nested or
// dotted, in any order, with or without _id's default exclusion.
func TestIndexConflicts(t *testing.T) {
	e := newTestEngine(t)
	mustCreateIndex(t, e, "c", `{"a": 1}`, false)
	wc := IndexSpec{Key: ext(t, `{"$**": 1}`), Name: "wc", WildcardProjection: ext(t, `{"a.b": 1, "a.c": 1}`), ExpireAfter: -1}
	if _, err := e.CreateIndexes("test", "c", []IndexSpec{wc}, nil); err != nil {
		t.Fatal(err)
	}
	wildcard := func(name, proj string) IndexSpec {
		return IndexSpec{Key: ext(t, `{"$**": 1}`), Name: name, WildcardProjection: ext(t, proj)}
	}
	tests := []struct {
		name string
		spec IndexSpec
		code mongoerr.Code
	}{
		{"same definition", IndexSpec{Key: ext(t, `{"a": 1}`)}, 0},
		{"same definition, double direction", IndexSpec{Key: ext(t, `{"a": 1.0}`)}, 0},
		{"same key other name", IndexSpec{Key: ext(t, `{"a": 1}`), Name: "other"}, mongoerr.IndexOptionsConflict},
		{"same name other key", IndexSpec{Key: ext(t, `{"b": 1}`), Name: "a_1"}, mongoerr.IndexKeySpecsConflict},
		{"same name other options", IndexSpec{Key: ext(t, `{"a": 1}`), Unique: true}, mongoerr.IndexKeySpecsConflict},
		{"the _id index", IndexSpec{Key: ext(t, `{"_id": 1}`), Name: "_id_"}, 0},
		{"projection nested", wildcard("wc", `{"a": {"b": 1, "c": 1}}`), 0},
		{"projection reordered", wildcard("wc", `{"a": {"c": true, "b": 1}}`), 0},
		{"projection with _id: 0", wildcard("wc", `{"_id": 0, "a.c": 1, "a.b": 1}`), 0},
		{"equivalent projection other name", wildcard("wc2", `{"a": {"c": 1, "b": 1}}`), mongoerr.IndexOptionsConflict},
		{"projection with _id: 1", wildcard("wc", `{"_id": 1, "a.b": 1, "a.c": 1}`), mongoerr.IndexKeySpecsConflict},
		{"projection of fewer paths", wildcard("wc", `{"a.b": 1}`), mongoerr.IndexKeySpecsConflict},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.spec.ExpireAfter = -1
			_, err := e.CreateIndexes("test", "c", []IndexSpec{tc.spec}, nil)
			if tc.code == 0 && err != nil || tc.code != 0 && !mongoerr.Is(err, tc.code) {
				t.Fatalf("got %v, want code %d", err, tc.code)
			}
		})
	}
	if n := len(e.Collection("test", "c").Indexes()); n != 2 {
		t.Fatalf("%d indexes, want 2", n)
	}
}

func TestSameKeyPattern(t *testing.T) {
	if !SameKeyPattern(ext(t, `{"a": 1, "b": -1}`), ext(t, `{"a": 1.0, "b": {"$numberLong": "-1"}}`)) {
		t.Error("numeric directions of different types differ")
	}
	if SameKeyPattern(ext(t, `{"a": 1, "b": 1}`), ext(t, `{"b": 1, "a": 1}`)) {
		t.Error("field order ignored")
	}
	if !bytes.Equal(idKeyPattern, ext(t, `{"_id": 1}`)) {
		t.Error("idKeyPattern")
	}
}

// TestIndexBuildProgress checks that a build on existing documents reports
// its progress, from 0 to every batch, against the collection's size: a
// batch ends at backfillBatch documents, or sooner once it wrote
// backfillEntries index entries.
func TestIndexBuildProgress(t *testing.T) {
	e := newTestEngine(t)
	var docs []bson.Raw
	for i := 0; i < 2*indexBuildBatch+10; i++ {
		d, _ := bson.Marshal(bson.D{{Key: "_id", Value: int32(i)}, {Key: "v", Value: int32(i % 7)}})
		docs = append(docs, d)
	}
	if _, _, err := e.Insert("test", "b", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	var seen [][2]int64
	if _, err := e.CreateIndexes("test", "b", []IndexSpec{{Key: ext(t, `{"v": 1}`), ExpireAfter: -1}}, func(done, total int64) error {
		seen = append(seen, [2]int64{done, total})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	total := int64(len(docs))
	want := [][2]int64{{0, total}}
	for done := int64(backfillBatch); ; done += backfillBatch {
		want = append(want, [2]int64{min(done, total), total})
		if done >= total {
			break
		}
	}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Fatalf("progress %v, want %v", seen, want)
	}
	mustValidate(t, e, "b")

	// 40 keys a document: a batch ends after the document that reaches
	// backfillEntries entries.
	seen = seen[:0]
	const perDoc = 40
	var arr bson.A
	for i := range perDoc {
		arr = append(arr, int32(i))
	}
	set, _ := bson.Marshal(bson.D{{Key: "$set", Value: bson.D{{Key: "arr", Value: arr}}}})
	if _, err := e.Update("test", "b", UpdateSpec{Filter: ext(t, `{}`), Update: set, Multi: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CreateIndexes("test", "b", []IndexSpec{{Key: ext(t, `{"arr": 1}`), ExpireAfter: -1}}, func(done, total int64) error {
		seen = append(seen, [2]int64{done, total})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	step := int64((backfillEntries + perDoc - 1) / perDoc)
	if len(seen) < 2 || seen[1][0] != step {
		t.Fatalf("progress %v, want batches of %d documents", seen, step)
	}
	mustValidate(t, e, "b")
}

// TestConcurrentSameIndexJoins: concurrent createIndexes of one index on
// one frontend all succeed (the later ones join the build under way, as in
// MongoDB) and build it once, however each request spells the index: its
// default name given or not, the simple collation named or left out (as
// mongorestore sends an index its oplog entry created), a text index's
// key as given or as stored.
func TestConcurrentSameIndexJoins(t *testing.T) {
	k, text := ext(t, `{"k": 1}`), ext(t, `{"t": "text"}`)
	for _, tc := range []struct {
		name     string
		variants []IndexSpec
	}{
		{"same", []IndexSpec{{Key: k}}},
		{"spelled", []IndexSpec{{Key: k}, {Key: k, Name: "k_1"}, {Key: k, Collation: ext(t, `{"locale": "simple"}`)}}},
		{"text", []IndexSpec{{Key: text}, {Key: ext(t, `{"_fts": "text", "_ftsx": 1}`), Name: "t_text", Text: fts.Options{Weights: bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: ext(t, `{"t": 1}`)}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEngine(t)
			var docs []bson.Raw
			for i := range 2000 {
				docs = append(docs, ext(t, fmt.Sprintf(`{"_id": %d, "k": %d, "t": "w%d"}`, i, i%97, i%89)))
			}
			if _, _, err := e.Insert("test", "join", docs, true, WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			errs := make(chan error, 6)
			for i := range 6 {
				go func() {
					spec := tc.variants[i%len(tc.variants)]
					spec.ExpireAfter = -1
					_, err := e.CreateIndexes("test", "join", []IndexSpec{spec}, nil)
					errs <- err
				}()
			}
			for range 6 {
				if err := <-errs; err != nil {
					t.Error(err)
				}
			}
			if n := len(e.Collection("test", "join").Indexes()); n != 1 {
				t.Errorf("%d secondary indexes, want 1", n)
			}
			mustValidate(t, e, "join")
		})
	}
}

// TestConvertToUnique runs MongoDB's conversion of an index to unique:
// prepareUnique refuses new duplicates and keeps the old ones, the
// conversion lists the duplicates until they are gone, and the converted
// index, keyed with the record id as it was built, refuses duplicates and
// answers queries after the engine is reopened.
func TestConvertToUnique(t *testing.T) {
	kv := testkv.Open(t)
	e := openEngine(t, kv)
	mustCreateIndex(t, e, "c", `{"k": 1}`, false)
	insert := func(e *Engine, doc string) error {
		_, werrs, err := e.Insert("test", "c", []bson.Raw{ext(t, doc)}, true, WriteOptions{})
		if err == nil && len(werrs) > 0 {
			err = werrs[0].Err
		}
		return err
	}
	for _, d := range []string{`{"_id": 1, "k": "a"}`, `{"_id": 2, "k": "b"}`, `{"_id": 3, "k": "a"}`} {
		if err := insert(e, d); err != nil {
			t.Fatal(err)
		}
	}
	unique := IndexChange{Unique: true}
	if _, _, err := e.ModifyIndex("test", "c", "k_1", nil, unique); !mongoerr.Is(err, mongoerr.InvalidOptions) {
		t.Fatalf("unique without prepareUnique: %v", err)
	}
	on := true
	before, after, err := e.ModifyIndex("test", "c", "", ext(t, `{"k": 1}`), IndexChange{PrepareUnique: &on})
	if err != nil || before.PrepareUnique || !after.PrepareUnique || after.Spec.Lookup("prepareUnique").Boolean() != true {
		t.Fatalf("prepareUnique: %v %v %v", before, after, err)
	}
	if err := insert(e, `{"_id": 4, "k": "b"}`); !mongoerr.Is(err, mongoerr.DuplicateKey) {
		t.Fatalf("new duplicate under prepareUnique: %v", err)
	}
	if _, err := e.Update("test", "c", UpdateSpec{Filter: ext(t, `{"_id": 2}`), Update: ext(t, `{"$set": {"k": "a"}}`)}); !mongoerr.Is(err, mongoerr.DuplicateKey) {
		t.Fatalf("update onto a held key under prepareUnique: %v", err)
	}
	// an old duplicate may keep its key
	if _, err := e.Update("test", "c", UpdateSpec{Filter: ext(t, `{"_id": 3}`), Update: ext(t, `{"$set": {"x": 1}}`)}); err != nil {
		t.Fatal(err)
	}
	// the scan for duplicates stops with its operation
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := e.ModifyIndex("test", "c", "k_1", nil, IndexChange{Unique: true, Ctx: cancelled}); !mongoerr.Is(err, mongoerr.Interrupted) {
		t.Fatalf("conversion of an interrupted operation: %v", err)
	}
	for _, dry := range []bool{true, false} {
		unique.DryRun = dry
		_, _, err := e.ModifyIndex("test", "c", "k_1", nil, unique)
		me := mongoerr.As(err)
		extra, _ := bson.Marshal(me.Extra)
		if err == nil || me.Code != mongoerr.CannotConvertIndexToUnique ||
			bson.Raw(extra).String() != `{"violations": [{"ids": [{"$numberInt":"1"},{"$numberInt":"3"}]}]}` {
			t.Fatalf("conversion over duplicates (dry run %v): %v %v", dry, err, me.Extra)
		}
	}
	if _, err := e.Delete("test", "c", ext(t, `{"_id": 3}`), 1, bson.RawValue{}, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	unique.DryRun = true
	if _, after, err := e.ModifyIndex("test", "c", "k_1", nil, unique); err != nil || after.Unique {
		t.Fatalf("dry run without duplicates: %v %v", after, err)
	}
	unique.DryRun = false
	if _, after, err = e.ModifyIndex("test", "c", "k_1", nil, unique); err != nil || !after.Unique || after.PrepareUnique {
		t.Fatalf("conversion: %v %v", after, err)
	}
	mustValidate(t, e, "c")
	e.Close()
	e = openEngine(t, kv)
	ix := e.Collection("test", "c").Indexes()[0]
	if !ix.Unique || !ix.idKeyed {
		t.Fatalf("reopened: unique %v, keyed with the record id %v", ix.Unique, ix.idKeyed)
	}
	if err := insert(e, `{"_id": 5, "k": "a"}`); !mongoerr.Is(err, mongoerr.DuplicateKey) {
		t.Fatalf("duplicate after the conversion: %v", err)
	}
	if err := insert(e, `{"_id": 6, "k": "c"}`); err != nil {
		t.Fatal(err)
	}
	if got := findIDsIn(t, e, "c", FindOptions{Filter: ext(t, `{"k": "a"}`)}, `"k_1"`); len(got) != 1 || got[0] != 1 {
		t.Fatalf("find k a on the converted index: %v", got)
	}
	mustValidate(t, e, "c")
}

// TestForceNonUnique runs collMod's forceNonUnique: false is BadValue; an
// index collMod made unique (keyed with the record id) becomes
// non-unique, takes duplicates and stays so after the engine is reopened;
// a non-unique index is left as it is; an index created unique, whose
// entries are keyed by value, and the _id index are refused (238).
func TestForceNonUnique(t *testing.T) {
	kv := testkv.Open(t)
	e := openEngine(t, kv)
	mustCreateIndex(t, e, "c", `{"k": 1}`, false)
	mustCreateIndex(t, e, "u", `{"k": 1}`, true)
	insert := func(e *Engine, doc string) error {
		_, werrs, err := e.Insert("test", "c", []bson.Raw{ext(t, doc)}, true, WriteOptions{})
		if err == nil && len(werrs) > 0 {
			err = werrs[0].Err
		}
		return err
	}
	on, off := true, false
	if _, _, err := e.ModifyIndex("test", "c", "k_1", nil, IndexChange{ForceNonUnique: &on}); err != nil {
		t.Fatalf("forceNonUnique of a non-unique index: %v", err)
	}
	if ix := e.Collection("test", "c").Indexes()[0]; ix.Unique || ix.Spec.Lookup("unique").Type != 0 {
		t.Fatalf("non-unique index after forceNonUnique: %s", ix.Spec)
	}
	if _, _, err := e.ModifyIndex("test", "c", "k_1", nil, IndexChange{PrepareUnique: &on}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.ModifyIndex("test", "c", "k_1", nil, IndexChange{Unique: true}); err != nil {
		t.Fatal(err)
	}
	if err := insert(e, `{"_id": 1, "k": "a"}`); err != nil {
		t.Fatal(err)
	}
	if err := insert(e, `{"_id": 2, "k": "a"}`); !mongoerr.Is(err, mongoerr.DuplicateKey) {
		t.Fatalf("duplicate on the unique index: %v", err)
	}
	if _, _, err := e.ModifyIndex("test", "c", "k_1", nil, IndexChange{ForceNonUnique: &off}); !mongoerr.Is(err, mongoerr.BadValue) {
		t.Fatalf("forceNonUnique false: %v", err)
	}
	before, after, err := e.ModifyIndex("test", "c", "", ext(t, `{"k": 1}`), IndexChange{ForceNonUnique: &on})
	if err != nil || !before.Unique || after.Unique || after.Spec.Lookup("unique").Type != 0 {
		t.Fatalf("forceNonUnique: %v %v %v", before, after, err)
	}
	if err := insert(e, `{"_id": 2, "k": "a"}`); err != nil {
		t.Fatalf("duplicate after forceNonUnique: %v", err)
	}
	// its collMod entry names the option, as makeCollModCmdObj writes it
	// (on TiKV, once moved into place)
	if _, err := e.MaintainOplog(); err != nil {
		t.Fatal(err)
	}
	entries, _ := oplogOf(t, e)
	var logged bson.Raw
	for _, ent := range entries {
		for _, f := range ent {
			if o, ok := f.Value.(bson.D); ok && f.Key == "o" && len(o) > 0 && o[0].Key == "collMod" {
				logged, _ = bson.Marshal(o)
			}
		}
	}
	if got := logged.Lookup("index").String(); got != `{"name": "k_1","forceNonUnique": true}` {
		t.Fatalf("collMod entry of forceNonUnique: %s", logged)
	}
	mustValidate(t, e, "c")
	e.Close()
	e = openEngine(t, kv)
	if ix := e.Collection("test", "c").Indexes()[0]; ix.Unique || !ix.idKeyed {
		t.Fatalf("reopened: unique %v, keyed with the record id %v", ix.Unique, ix.idKeyed)
	}
	if err := insert(e, `{"_id": 3, "k": "a"}`); err != nil {
		t.Fatal(err)
	}
	if got := findIDsIn(t, e, "c", FindOptions{Filter: ext(t, `{"k": "a"}`)}, `"k_1"`); len(got) != 3 {
		t.Fatalf("find k a on the index made non-unique: %v", got)
	}
	mustValidate(t, e, "c")
	for _, name := range []string{"k_1", "_id_"} {
		if _, _, err := e.ModifyIndex("test", "u", name, nil, IndexChange{ForceNonUnique: &on}); !mongoerr.Is(err, mongoerr.NotImplemented) {
			t.Fatalf("forceNonUnique of %s created unique: %v", name, err)
		}
	}
	if _, _, err := e.ModifyIndex("test", "u", "_id_", nil, IndexChange{ForceNonUnique: &off}); !mongoerr.Is(err, mongoerr.BadValue) {
		t.Fatalf("forceNonUnique false on _id: %v", err)
	}
}

// TestPrepareUniqueConcurrentWriters: writers on two engines over one store
// insert documents with the same keys into an index refusing new
// duplicates (keyed with the record id, so their entries differ): each key
// ends up held by one document.
func TestPrepareUniqueConcurrentWriters(t *testing.T) {
	kvs := testkv.OpenShared(t, 2)
	engines := []*Engine{openEngine(t, kvs[0]), openEngine(t, kvs[1])}
	if _, err := engines[0].CreateIndexes("test", "p", []IndexSpec{{Key: ext(t, `{"k": 1}`), PrepareUnique: true, ExpireAfter: -1}}, nil); err != nil {
		t.Fatal(err)
	}
	// each round, six writers insert one key at once
	const keys, writers = 40, 6
	for k := range keys {
		var wg sync.WaitGroup
		for w := range writers {
			e := engines[w%2]
			wg.Add(1)
			go func() {
				defer wg.Done()
				doc := ext(t, fmt.Sprintf(`{"_id": %d, "k": %d}`, k*writers+w, k))
				if _, werrs, err := e.Insert("test", "p", []bson.Raw{doc}, true, WriteOptions{}); err != nil {
					t.Error(err)
				} else if len(werrs) > 0 && werrs[0].Err.Code != mongoerr.DuplicateKey {
					t.Error(werrs[0].Err)
				}
			}()
		}
		wg.Wait()
	}
	held := map[int32]int{}
	for _, doc := range findDocs(t, engines[0], "p", FindOptions{}) {
		held[doc.Lookup("k").Int32()]++
	}
	for k := range int32(keys) {
		if held[k] != 1 {
			t.Errorf("key %d held by %d documents", k, held[k])
		}
	}
	mustValidate(t, engines[0], "p")
}
