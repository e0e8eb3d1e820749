package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// planTestEngine holds 600 varied documents under several indexes.
func planTestEngine(t *testing.T) *Engine {
	e := newTestEngine(t)
	rng := rand.New(rand.NewPCG(1, 2))
	var docs []bson.Raw
	for i := 0; i < 600; i++ {
		d := bson.D{{Key: "_id", Value: int32(i)}}
		if i%7 != 0 {
			d = append(d, bson.E{Key: "a", Value: int32(rng.IntN(10))})
		}
		d = append(d, bson.E{Key: "b", Value: rng.Float64() * 100})
		d = append(d, bson.E{Key: "path", Value: fmt.Sprintf(",Books,%s,%d", []string{"Programming", "Fiction", "Poetry"}[i%3], i)})
		switch i % 4 {
		case 0:
			d = append(d, bson.E{Key: "tags", Value: bson.A{"t" + fmt.Sprint(i%5), "x"}})
		case 1:
			d = append(d, bson.E{Key: "tags", Value: bson.A{}})
		case 2:
			d = append(d, bson.E{Key: "tags", Value: "t1"})
		}
		if i%3 == 0 {
			d = append(d, bson.E{Key: "attrs", Value: bson.A{
				bson.D{{Key: "n", Value: "color"}, {Key: "v", Value: []string{"red", "silver"}[i%2]}},
				bson.D{{Key: "n", Value: "size"}, {Key: "v", Value: int32(i % 11)}},
			}})
		}
		if i%5 == 0 {
			d = append(d, bson.E{Key: "s", Value: int32(i)})
		}
		raw, _ := bson.Marshal(d)
		docs = append(docs, raw)
	}
	if _, _, err := e.Insert("test", "p", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, spec := range []IndexSpec{
		{Key: ext(t, `{"a": 1, "b": -1}`)},
		{Key: ext(t, `{"path": 1}`)},
		{Key: ext(t, `{"tags": 1}`)},
		{Key: ext(t, `{"attrs.n": 1, "attrs.v": 1}`)},
		{Key: ext(t, `{"s": 1}`), Sparse: true},
	} {
		spec.ExpireAfter = -1
		if _, err := e.CreateIndexes("test", "p", []IndexSpec{spec}, nil); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// TestPlans checks which access path each query takes, and that every plan
// returns exactly what a full scan returns, in the same order when sorted.
func TestPlans(t *testing.T) {
	e := planTestEngine(t)
	tests := []struct {
		filter, sort string
		index        string // "" collection scan, "_id_" the _id order
		sorted       bool
	}{
		{`{}`, ``, "", false},
		{`{"a": 3}`, ``, "a_1_b_-1", false},
		{`{"a": 3}`, `{"b": -1}`, "a_1_b_-1", true},
		{`{"a": 3}`, `{"b": 1}`, "a_1_b_-1", true},
		{`{"a": {"$in": [2, 3]}, "b": {"$gt": 50}}`, ``, "a_1_b_-1", false},
		{`{"a": {"$gte": 8}}`, `{"a": -1, "b": 1}`, "a_1_b_-1", true},
		{`{"a": null}`, ``, "a_1_b_-1", false},
		{`{"b": {"$lt": 10}}`, ``, "", false},
		{`{"a": 3, "b": {"$gt": 10, "$lte": 60}}`, ``, "a_1_b_-1", false},
		{`{"a": 3, "b": {"$gt": 60, "$lt": 10}}`, ``, "a_1_b_-1", false},
		{`{"tags": {"$gt": "t1", "$lt": "t3"}}`, ``, "tags_1", false},
		{`{}`, `{"a": 1, "b": -1}`, "a_1_b_-1", true},
		{`{"path": {"$regex": "^,Books,Programming,"}}`, ``, "path_1", false},
		{`{"path": {"$regex": "^,books,", "$options": "i"}}`, ``, "path_1", false},
		{`{"path": {"$regex": "Poetry"}}`, ``, "path_1", false},
		{`{"tags": "t1"}`, ``, "tags_1", false},
		{`{"tags": {"$all": ["t0", "x"]}}`, ``, "tags_1", false},
		{`{"tags": []}`, ``, "tags_1", false},
		{`{"tags": ["t0", "x"]}`, ``, "tags_1", false},
		{`{"attrs": {"$elemMatch": {"n": "color", "v": "silver"}}}`, ``, "attrs.n_1_attrs.v_1", false},
		{`{"attrs.n": "size", "attrs.v": {"$gt": 5}}`, ``, "attrs.n_1_attrs.v_1", false},
		{`{"s": {"$gt": 100}}`, ``, "s_1", false},
		{`{"s": null}`, ``, "", false},
		{`{"_id": 42}`, ``, "_id_", false},
		{`{"_id": {"$gte": 590}}`, `{"_id": -1}`, "_id_", true},
		{`{}`, `{"_id": -1}`, "_id_", true},
		{`{"a": 3, "_id": {"$lt": 100}}`, `{"b": -1}`, "a_1_b_-1", true},
		// Equality before range: a_1_b_-1 comes first but bounds a range.
		{`{"a": {"$gt": 5}, "path": ",Books,Poetry,5"}`, ``, "path_1", false},
		{`{"a": {"$in": [3, 4]}, "tags": {"$gt": "t1"}}`, ``, "a_1_b_-1", false},
		// A multikey index yields a sort only over unbounded sort fields.
		{`{"tags": {"$gt": "t1"}}`, `{"tags": 1}`, "tags_1", false},
		{`{}`, `{"tags": 1}`, "tags_1", true},
		{`{"s": {"$exists": true}}`, `{"s": 1}`, "s_1", true},
	}
	for _, tc := range tests {
		t.Run(tc.filter+tc.sort, func(t *testing.T) {
			o := FindOptions{Filter: ext(t, tc.filter)}
			if tc.sort != "" {
				o.Sort = ext(t, tc.sort)
			}
			q, err := compileFind(o, nil)
			if err != nil {
				t.Fatal(err)
			}
			p, _, err := e.planFind(context.Background(), e.Collection("test", "p"), q, bson.RawValue{}, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			switch {
			case p.Index != nil:
				got = p.Index.Name
			case p.Intervals != nil || p.Sorted:
				got = idIndexName
			}
			if got != tc.index || p.Sorted != tc.sorted {
				t.Fatalf("plan %q sorted=%v, want %q sorted=%v", got, p.Sorted, tc.index, tc.sorted)
			}
			want := findIDs(t, e, o, `{"$natural": 1}`)
			if have := findIDs(t, e, o, ""); !slices.Equal(have, want) {
				t.Fatalf("plan returned %v\nscan returned %v", have, want)
			}
		})
	}
}

// findIDs runs a find on test.p and returns the _ids, in result order
// when it sorts.
func findIDs(t *testing.T, e *Engine, o FindOptions, hint string) []int32 {
	t.Helper()
	ids := findIDsIn(t, e, "p", o, hint)
	if o.Sort == nil {
		slices.Sort(ids)
	}
	return ids
}

// TestRangeIntersection checks that two ranges on a field no document
// holds an array in narrow one interval, and that a multikey field keeps
// only one of them (different elements may satisfy each).
func TestRangeIntersection(t *testing.T) {
	e := planTestEngine(t)
	c := e.Collection("test", "p")
	for _, tc := range []struct {
		filter, bounds string
	}{
		{`{"a": 3, "b": {"$gt": 10, "$lte": 60}}`, `[60, 10)`},
		{`{"tags": {"$gt": "t1", "$lt": "t3"}}`, `("t1", {})`},
	} {
		q, err := compileFind(FindOptions{Filter: ext(t, tc.filter)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		p, _, err := e.planFind(context.Background(), c, q, bson.RawValue{}, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		bounds := p.Bounds()
		last := bounds[len(bounds)-1].Value.([]string)
		if len(last) != 1 || last[0] != tc.bounds {
			t.Errorf("%s: bounds %v, want %s", tc.filter, last, tc.bounds)
		}
	}
	if !c.FindIndex("tags_1").Multikey() || c.FindIndex("a_1_b_-1").Multikey() {
		t.Error("multikey flags")
	}
}

// TestPositionalPaths checks that an index on a path with an
// array position neither bounds nor sorts it (see positional).
func TestPositionalPaths(t *testing.T) {
	e := newTestEngine(t)
	mustCreateIndex(t, e, "m", `{"a.0": 1}`, false)
	if _, _, err := e.Insert("test", "m", []bson.Raw{ext(t, `{"_id": 1, "a": [2, {"0": 1}]}`)}, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	c := e.Collection("test", "m")
	for _, tc := range []struct{ filter, sort string }{{`{"a.0": 2}`, ``}, {`{}`, `{"a.0": 1}`}} {
		o := FindOptions{Filter: ext(t, tc.filter)}
		if tc.sort != "" {
			o.Sort = ext(t, tc.sort)
		}
		q, err := compileFind(o, nil)
		if err != nil {
			t.Fatal(err)
		}
		p, _, err := e.planFind(context.Background(), c, q, bson.RawValue{}, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if p.Index != nil || p.Sorted {
			t.Errorf("%s %s: plan on %v sorted=%v, want a collection scan", tc.filter, tc.sort, p.Index != nil, p.Sorted)
		}
	}
}
