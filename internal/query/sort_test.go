package query

import (
	"slices"
	"testing"

	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/mongoerr"
	"go.mongodb.org/mongo-driver/v2/bson"
)

func TestSort(t *testing.T) {
	tests := []struct {
		spec string
		docs []string // in input order; each has an integer _id
		want []int32  // _ids in sorted order (stable)
	}{
		{`{"a": 1}`, []string{`{"_id": 1, "a": 3}`, `{"_id": 2, "a": 1}`, `{"_id": 3, "a": 2}`}, []int32{2, 3, 1}},
		{`{"a": -1}`, []string{`{"_id": 1, "a": 3}`, `{"_id": 2, "a": 1}`, `{"_id": 3, "a": 2}`}, []int32{1, 3, 2}},
		{`{"a": 1}`, []string{`{"_id": 1, "a": "x"}`, `{"_id": 2, "a": 1}`, `{"_id": 3}`, `{"_id": 4, "a": null}`, `{"_id": 5, "a": {"b": 1}}`, `{"_id": 6, "a": []}`},
			[]int32{6, 3, 4, 2, 1, 5}},
		{`{"a": -1}`, []string{`{"_id": 1, "a": "x"}`, `{"_id": 2, "a": 1}`, `{"_id": 3}`, `{"_id": 4, "a": null}`, `{"_id": 6, "a": []}`},
			[]int32{1, 2, 3, 4, 6}},
		{`{"a": 1}`, []string{`{"_id": 1, "a": [5, 1]}`, `{"_id": 2, "a": 2}`, `{"_id": 3, "a": [3, 4]}`}, []int32{1, 2, 3}},
		{`{"a": -1}`, []string{`{"_id": 1, "a": [5, 1]}`, `{"_id": 2, "a": 2}`, `{"_id": 3, "a": [3, 4]}`}, []int32{1, 3, 2}},
		{`{"a.b": 1}`, []string{`{"_id": 1, "a": [{"b": 5}, {"b": 0}]}`, `{"_id": 2, "a": {"b": 1}}`, `{"_id": 3, "a": [{"b": 3}, {"c": 1}]}`}, []int32{3, 1, 2}},
		{`{"a": 1, "b": -1}`, []string{`{"_id": 1, "a": 1, "b": 1}`, `{"_id": 2, "a": 1, "b": 2}`, `{"_id": 3, "a": 0, "b": 0}`}, []int32{3, 2, 1}},
		{`{"a": 1}`, []string{`{"_id": 1, "a": 2.5}`, `{"_id": 2, "a": {"$numberLong": "2"}}`, `{"_id": 3, "a": {"$numberDecimal": "2.4"}}`}, []int32{2, 3, 1}},
		{`{"a": 1}`, []string{`{"_id": 1, "a": [[1], 2]}`, `{"_id": 2, "a": 1.5}`}, []int32{2, 1}},
		{`{"time": -1}`, []string{`{"_id": 1, "time": {"$date": "2020-01-01T00:00:00Z"}}`, `{"_id": 2, "time": {"$date": "2021-01-01T00:00:00Z"}}`}, []int32{2, 1}},
		{`{"a": 1}`, []string{`{"_id": 1, "a": 1}`, `{"_id": 2, "a": 1}`, `{"_id": 3, "a": 0}`}, []int32{3, 1, 2}},
		// Fields through the same array take their values from one
		// element at a time (MongoDB's jstests sort_dotted_paths.js).
		{`{"a.c": 1, "a.b": 1}`, []string{`{"_id": 1, "a": [{"b": 4, "c": 1}, {"b": 1, "c": 2}]}`, `{"_id": 2, "a": [{"b": 2, "c": 1}, {"b": 4, "c": 2}]}`}, []int32{2, 1}},
		{`{"a.c": 1, "a.b": -1}`, []string{`{"_id": 1, "a": [{"b": 4, "c": 1}, {"b": 9, "c": 2}]}`, `{"_id": 2, "a": [{"b": 5, "c": 1}, {"b": 0, "c": 2}]}`}, []int32{2, 1}},
		{`{"a.c": 1, "a": 1}`, []string{`{"_id": 1, "a": [{"c": 1, "z": 2}, {"c": 0, "z": 9}]}`, `{"_id": 2, "a": [{"c": 0, "z": 1}]}`}, []int32{2, 1}},
		// A numeric component selects the element at that offset.
		{`{"a.0.b": 1, "_id": -1}`, []string{`{"_id": 1, "a": [{"b": [4, 1]}]}`, `{"_id": 2, "a": [{"b": 2}]}`, `{"_id": 3, "a": [{"c": 1}, {"b": 0}]}`}, []int32{3, 1, 2}},
		// An empty array before the path's end yields null, at its end
		// undefined.
		{`{"a.b.c": -1}`, []string{`{"_id": 1, "a": {"b": {"c": []}}}`, `{"_id": 2, "a": [{"b": []}, {"b": {"c": []}}]}`}, []int32{2, 1}},
		{`{"a.b": 1}`, []string{`{"_id": 1, "a": [1, {"b": 0}]}`, `{"_id": 2, "a": {"b": []}}`, `{"_id": 3, "a": []}`}, []int32{2, 1, 3}},
	}
	for _, tt := range tests {
		s, err := CompileSort(ext(t, tt.spec))
		if err != nil {
			t.Fatalf("%s: %v", tt.spec, err)
		}
		docs := make([]bson.Raw, len(tt.docs))
		for i, d := range tt.docs {
			docs[i] = ext(t, d)
		}
		keys := make([][]bson.RawValue, len(docs))
		idx := make([]int, len(docs))
		for i, d := range docs {
			if keys[i], err = s.KeysErr(d); err != nil {
				t.Fatalf("%s on %s: %v", tt.spec, d, err)
			}
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int { return s.CompareKeys(keys[a], keys[b]) })
		got := make([]int32, len(idx))
		for i, j := range idx {
			got[i] = docs[j].Lookup("_id").Int32()
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: order %v, want %v", tt.spec, got, tt.want)
		}
	}
}

func TestSortSpec(t *testing.T) {
	s, err := CompileSort(ext(t, `{"$natural": -1}`))
	if err != nil || s.Natural() != -1 || !s.Empty() {
		t.Fatalf("$natural: %v %v", s, err)
	}
	// Directions read as MongoDB's safeNumberLong: doubles truncated,
	// decimals rounded half to even.
	s, err = CompileSort(ext(t, `{"a": 1.0, "b": {"$numberLong": "-1"}, "c": 1.999, "d": {"$numberDecimal": "-0.51"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if f, d := s.Fields(); !slices.Equal(f, []string{"a", "b", "c", "d"}) || !slices.Equal(d, []int{1, -1, 1, -1}) {
		t.Fatalf("Fields = %v %v", f, d)
	}
	tests := []struct {
		spec string
		code mongoerr.Code
		msg  string
	}{
		{`{"a": 2}`, 15975, ""},
		{`{"a": 0}`, 15975, ""},
		{`{"a": "x"}`, 15974, ""},
		{`{"a": true}`, 15974, ""},
		{`{"a": 0.999}`, 15975, ""},
		{`{"a": {"$numberDecimal": "0.5"}}`, 15975, ""},
		{`{"a": {"$numberDecimal": "1.5"}}`, 15975, ""},
		{`{"a": {"$numberLong": "9223372036854775807"}}`, 15975, ""},
		{`{"a": {"$numberDouble": "NaN"}}`, 15975, ""},
		// SortPattern: $meta first, alone, then one of the names it sorts by.
		{`{"a": {"$meta": "bogus"}}`, 31138, `Illegal $meta sort: $meta: "bogus"`},
		{`{"a": {"$meta": 1}}`, 31138, `Illegal $meta sort: $meta: 1`},
		{`{"a": {"$meta": "indexKey"}}`, 31138, `Illegal $meta sort: $meta: "indexKey"`},
		{`{"a": {"$meta": "geoNearPoint"}}`, 31138, `Illegal $meta sort: $meta: "geoNearPoint"`},
		{`{"a": {"$meta": "searchScore"}}`, 31218, "$meta sort by 'searchScore' metadata is not supported"},
		{`{"a": {"$meta": "searchHighlights"}}`, 31219, "$meta sort by 'searchHighlights' metadata is not supported"},
		{`{"a": {"$meta": "textScore", "extra": 1}}`, 9, "Cannot have additional keys in a $meta sort specification"},
		{`{"a": {"$meta": "bogus", "extra": 1}}`, 9, "Cannot have additional keys in a $meta sort specification"},
		{`{"a": {"extra": 1, "$meta": "textScore"}}`, 17312, "$meta is the only expression supported by $sort right now"},
		{`{"a": {"x": 1}}`, 17312, ""},
		{`{"": 1}`, 40352, ""},
		{`{"a..b": 1}`, 15998, ""},
		{`{"$a": 1}`, 16410, ""},
	}
	for _, tt := range tests {
		_, err := CompileSort(ext(t, tt.spec))
		checkErr(t, tt.spec, err, tt.code, tt.msg)
	}
}

func TestSortParallelArrays(t *testing.T) {
	tests := []struct {
		spec, doc string
		parallel  bool
	}{
		{`{"a": 1, "b": 1}`, `{"a": [1, 2], "b": [3, 4]}`, true},
		{`{"a": 1, "b": -1}`, `{"a": [], "b": [3]}`, true},
		{`{"a": 1, "b": 1}`, `{"a": [1, 2], "b": 3}`, false},
		{`{"a": 1, "b": 1}`, `{"a": 1}`, false},
		{`{"a": 1}`, `{"a": [1, 2], "b": [3, 4]}`, false},
		{`{"a.x": 1, "a.y": 1}`, `{"a": [{"x": 1, "y": 2}, {"x": 3}]}`, false},
		{`{"a.x": 1, "a.y": 1}`, `{"a": [{"x": [1], "y": 2}, {"x": 3, "y": [4]}]}`, false},
		{`{"a.x": 1, "a.y": 1}`, `{"a": [{"x": [1], "y": [2]}]}`, true},
		{`{"a.x": 1, "b.y": 1}`, `{"a": {"x": [1]}, "b": [{"y": 1}]}`, true},
		{`{"a.x": 1, "b.y": 1}`, `{"a": {"x": 1}, "b": [{"y": [1]}]}`, false},
		{`{"a": 1, "a.x": 1}`, `{"a": [{"x": 1}]}`, false},
		{`{"a.0": 1, "b": 1}`, `{"a": [1, 2], "b": [3, 4]}`, false},
		{`{"a.0.x": 1, "b": 1}`, `{"a": [{"x": [1]}], "b": [3, 4]}`, true},
	}
	for _, tt := range tests {
		s, err := CompileSort(ext(t, tt.spec))
		if err != nil {
			t.Fatalf("%s: %v", tt.spec, err)
		}
		doc := ext(t, tt.doc)
		keys, err := s.KeysErr(doc)
		if tt.parallel {
			checkErr(t, tt.spec+" on "+tt.doc, err, mongoerr.BadValue, "cannot sort with keys that are parallel arrays")
			continue
		}
		if err != nil {
			t.Errorf("%s on %s: %v", tt.spec, tt.doc, err)
		} else if len(keys) != len(s.keys) {
			t.Errorf("%s on %s: KeysErr %v", tt.spec, tt.doc, keys)
		}
	}
}

// TestSortGeoNearDistance: MongoDB 7.0's SortPattern sorts by {$meta:
// "geoNearDistance"}, descending as every $meta key, a document without a
// distance keyed null.
func TestSortGeoNearDistance(t *testing.T) {
	s, err := CompileSort(ext(t, `{"d": {"$meta": "geoNearDistance"}, "a": 1}`))
	if err != nil {
		t.Fatal(err)
	}
	if !s.NeedsGeoNearDistance() || !s.ByMeta() || s.NeedsTextScore() {
		t.Fatalf("NeedsGeoNearDistance %v ByMeta %v NeedsTextScore %v", s.NeedsGeoNearDistance(), s.ByMeta(), s.NeedsTextScore())
	}
	doc := ext(t, `{"a": 1}`)
	key := func(m docsrc.Meta) []bson.RawValue {
		k, err := s.KeysMeta(doc, m)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	near := key(docsrc.Meta{HasGeoNear: true, GeoNearDistance: 2})
	far := key(docsrc.Meta{HasGeoNear: true, GeoNearDistance: 7.5})
	none := key(docsrc.Meta{})
	if near[0].Double() != 2 || none[0].Type != bson.TypeNull {
		t.Fatalf("keys %v %v", near, none)
	}
	if s.CompareKeys(far, near) >= 0 || s.CompareKeys(near, none) >= 0 {
		t.Fatal("want the farthest first and a missing distance last")
	}
}
