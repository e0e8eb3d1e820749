package engine

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/keyenc"
	"github.com/folio-db/folio/internal/mongoerr"
)

// TestIndexKeys checks the keys a document contributes to an index:
// missing fields index as null, arrays as one key per element, an empty
// array as undefined, compound keys as products, and parallel arrays fail
// with 171.
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
		{"same array twice", `{"attrs.n": 1, "attrs.v": 1}`, false,
			`{"attrs": [{"n": "color", "v": "red"}, {"n": "size", "v": 9}]}`,
			[]string{`["color", "red"]`, `["color", 9]`, `["size", "red"]`, `["size", 9]`}, 0},
		{"parallel arrays", `{"a": 1, "b": 1}`, false, `{"a": [1], "b": [2]}`, nil, mongoerr.CannotIndexParallelArrays},
		{"numbers of any type are one key", `{"a": 1}`, false, `{"a": [1, 1.0, {"$numberLong": "1"}]}`, []string{`[1]`}, 0},
		{"whole subdocument", `{"a": 1}`, false, `{"a": {"x": 1}}`, []string{`[{"x": 1}]`}, 0},
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

// TestIndexConflicts checks MongoDB's codes for conflicting definitions.
func TestIndexConflicts(t *testing.T) {
	e := newTestEngine(t)
	mustCreateIndex(t, e, "c", `{"a": 1}`, false)
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
	if n := len(e.Collection("test", "c").Indexes()); n != 1 {
		t.Fatalf("%d indexes, want 1", n)
	}
}

func TestSameKeyPattern(t *testing.T) {
	if !sameKeyPattern(ext(t, `{"a": 1, "b": -1}`), ext(t, `{"a": 1.0, "b": {"$numberLong": "-1"}}`)) {
		t.Error("numeric directions of different types differ")
	}
	if sameKeyPattern(ext(t, `{"a": 1, "b": 1}`), ext(t, `{"b": 1, "a": 1}`)) {
		t.Error("field order ignored")
	}
	if !bytes.Equal(idKeyPattern, ext(t, `{"_id": 1}`)) {
		t.Error("idKeyPattern")
	}
}

// TestIndexBuildProgress checks that a build on existing documents reports
// its progress, from 0 to every batch, against the collection's size.
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
	want := [][2]int64{{0, total}, {indexBuildBatch, total}, {2 * indexBuildBatch, total}}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Fatalf("progress %v, want %v", seen, want)
	}
	mustValidate(t, e, "b")
}

// TestConcurrentSameIndexJoins: concurrent createIndexes of one index on
// one frontend all succeed (the later ones join the build under way, as in
// MongoDB) and build it once.
func TestConcurrentSameIndexJoins(t *testing.T) {
	e := newTestEngine(t)
	var docs []bson.Raw
	for i := range 2000 {
		docs = append(docs, ext(t, fmt.Sprintf(`{"_id": %d, "k": %d}`, i, i%97)))
	}
	if _, _, err := e.Insert("test", "join", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 6)
	for range 6 {
		go func() {
			_, err := e.CreateIndexes("test", "join", []IndexSpec{{Key: ext(t, `{"k": 1}`)}}, nil)
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
}
