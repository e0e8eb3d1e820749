package engine

import (
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// planRegressions are queries an index once answered wrongly. Each row
// states the documents (their _ids are their positions), the indexes, the
// query and the _ids MongoDB returns, in order when sorted; the planner's
// answer and a collection scan's (hint {$natural: 1}) must both equal it.
var planRegressions = []struct {
	name    string
	docs    []string
	indexes []IndexSpec
	filter  string
	sort    string
	want    []int32
	wantErr int32 // an error code instead of want
}{
	{
		// An alternation is not a prefix: the bound "programming" would
		// miss "math".
		name:    "regex alternation",
		docs:    []string{`{"s": "programming"}`, `{"s": "math"}`, `{"s": "poetry"}`, `{"s": "programming language"}`},
		indexes: []IndexSpec{{Key: bson.Raw(bsonDoc(bson.D{{Key: "s", Value: 1}}))}},
		filter:  `{"s": {"$regex": "^programming|math"}}`,
		want:    []int32{0, 1, 3},
	},
	{
		// With m, ^ also matches after a newline.
		name:    "regex multiline",
		docs:    []string{`{"s": "abc"}`, `{"s": "x\nabc"}`, `{"s": "x"}`},
		indexes: []IndexSpec{{Key: bson.Raw(bsonDoc(bson.D{{Key: "s", Value: 1}}))}},
		filter:  `{"s": {"$regex": "^abc", "$options": "m"}}`,
		want:    []int32{0, 1},
	},
	{
		name:    "regex case-insensitive",
		docs:    []string{`{"s": "abc"}`, `{"s": "ABC"}`, `{"s": "x"}`},
		indexes: []IndexSpec{{Key: bson.Raw(bsonDoc(bson.D{{Key: "s", Value: 1}}))}},
		filter:  `{"s": {"$regex": "^abc", "$options": "i"}}`,
		want:    []int32{0, 1},
	},
	{
		// A quantifier makes the character before it optional, even a
		// multi-byte one.
		name:    "regex optional rune",
		docs:    []string{`{"s": "a"}`, `{"s": "aé"}`, `{"s": "b"}`},
		indexes: []IndexSpec{{Key: bson.Raw(bsonDoc(bson.D{{Key: "s", Value: 1}}))}},
		filter:  `{"s": {"$regex": "^aé*$"}}`,
		want:    []int32{0, 1},
	},
	{
		// A stored regex with the same pattern and options matches too.
		name:    "regex stored value",
		docs:    []string{`{"s": {"$regularExpression": {"pattern": "^ab", "options": ""}}}`, `{"s": "abc"}`, `{"s": "b"}`},
		indexes: []IndexSpec{{Key: bson.Raw(bsonDoc(bson.D{{Key: "s", Value: 1}}))}},
		filter:  `{"s": {"$regex": "^ab"}}`,
		want:    []int32{0, 1},
	},
	{
		// An array sorts by its smallest element ascending, whatever the
		// bounds: [1, 5] sorts before [4], though the scan of (3, ∞) meets
		// it at 5.
		name:    "multikey sort with bounds",
		docs:    []string{`{"a": [1, 5]}`, `{"a": [4]}`, `{"a": 2}`, `{"a": [0, 9]}`},
		indexes: []IndexSpec{{Key: bson.Raw(bsonDoc(bson.D{{Key: "a", Value: 1}}))}},
		filter:  `{"a": {"$gt": 3}}`,
		sort:    `{"a": 1}`,
		want:    []int32{3, 0, 1},
	},
	{
		name:    "multikey sort descending with bounds",
		docs:    []string{`{"a": [1, 5]}`, `{"a": [4]}`, `{"a": 2}`, `{"a": [0, 9]}`},
		indexes: []IndexSpec{{Key: bson.Raw(bsonDoc(bson.D{{Key: "a", Value: 1}}))}},
		filter:  `{"a": {"$lt": 4.5}}`,
		sort:    `{"a": -1}`,
		want:    []int32{3, 0, 1, 2},
	},
	{
		// {$exists: 1} is {$exists: true}: a sparse index holds every match.
		name:    "sparse exists",
		docs:    []string{`{"s": 1}`, `{"t": 1}`, `{"s": null}`},
		indexes: []IndexSpec{{Key: bson.Raw(bsonDoc(bson.D{{Key: "s", Value: 1}})), Sparse: true}},
		filter:  `{"s": {"$exists": 1}}`,
		sort:    `{"s": 1, "_id": 1}`,
		want:    []int32{2, 0},
	},
	{
		// {$gt: MinKey} matches a missing field: a sparse index lacks it.
		name:    "sparse minkey",
		docs:    []string{`{"s": 1}`, `{"t": 1}`},
		indexes: []IndexSpec{{Key: bson.Raw(bsonDoc(bson.D{{Key: "s", Value: 1}})), Sparse: true}},
		filter:  `{"s": {"$gt": {"$minKey": 1}}}`,
		sort:    `{"s": 1, "_id": 1}`,
		want:    []int32{1, 0},
	},
	{
		// null matches undefined, which indexes apart from null.
		name:    "null matches undefined",
		docs:    []string{`{"s": {"$undefined": true}}`, `{"s": null}`, `{"t": 1}`, `{"s": 0}`},
		indexes: []IndexSpec{{Key: bson.Raw(bsonDoc(bson.D{{Key: "s", Value: 1}}))}},
		filter:  `{"s": null}`,
		want:    []int32{0, 1, 2},
	},
	{
		// On an array, a.0 is both the first element and field "0" of the
		// documents in it; the index holds only the element.
		name:    "positional path null",
		docs:    []string{`{"a": [{"x": []}, 3]}`, `{"a": [null]}`, `{"a": [1]}`},
		indexes: []IndexSpec{{Key: bson.Raw(bsonDoc(bson.D{{Key: "a.0", Value: 1}}))}},
		filter:  `{"a.0": null}`,
		want:    []int32{0, 1},
	},
	{
		// Sorting by fields that reach two arrays fails, index or not.
		name:    "parallel sort",
		docs:    []string{`{"a": [1], "b": [2]}`},
		indexes: []IndexSpec{{Key: bson.Raw(bsonDoc(bson.D{{Key: "a", Value: 1}}))}},
		filter:  `{}`,
		sort:    `{"a": 1, "b": 1}`,
		wantErr: 2,
	},
	{
		// a.0 selects the first element of a, which a.x expands too, and
		// does not expand it: no parallel arrays, index or not. Keys
		// (a.x, a.0): 0 (null, [1]) and (1, [1]); 1 (2, {x: 2}).
		name:    "positional path beside its array in a sort",
		docs:    []string{`{"a": [[1], {"x": 1}]}`, `{"a": [{"x": 2}]}`},
		indexes: []IndexSpec{{Key: bson.Raw(bsonDoc(bson.D{{Key: "a.x", Value: -1}, {Key: "a.0", Value: 1}}))}},
		filter:  `{}`,
		sort:    `{"a.x": -1, "a.0": 1}`,
		want:    []int32{1, 0},
	},
}

func TestPlanRegressions(t *testing.T) {
	for _, tc := range planRegressions {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEngine(t)
			var docs []bson.Raw
			for i, d := range tc.docs {
				var fields bson.D
				if err := bson.UnmarshalExtJSON([]byte(d), false, &fields); err != nil {
					t.Fatal(err)
				}
				docs = append(docs, bson.Raw(bsonDoc(append(bson.D{{Key: "_id", Value: int32(i)}}, fields...))))
			}
			if _, _, err := e.Insert("test", "p", docs, true, WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			for _, spec := range tc.indexes {
				spec.ExpireAfter = -1
				if _, err := e.CreateIndexes("test", "p", []IndexSpec{spec}, nil); err != nil {
					t.Fatal(err)
				}
			}
			o := FindOptions{Filter: ext(t, tc.filter)}
			if tc.sort != "" {
				o.Sort = ext(t, tc.sort)
			}
			for _, hint := range []string{"", `{"$natural": 1}`} {
				if tc.wantErr != 0 {
					cur, err := e.Find("test", "p", o)
					if err == nil {
						_, err = cur.Next()
						cur.Close()
					}
					if mongoerr.As(err).Code != mongoerr.Code(tc.wantErr) {
						t.Errorf("hint %q: error %v, want code %d", hint, err, tc.wantErr)
					}
					continue
				}
				if got := findIDs(t, e, o, hint); !slices.Equal(got, tc.want) {
					t.Errorf("hint %q: got %v, want %v", hint, got, tc.want)
				}
			}
		})
	}
}

// TestLargeInScansItsPoints: an $in of 1,000 values on an indexed field is
// an index scan of its points, not a scan of the whole index or
// collection (MongoDB bounds a field by any number of points).
func TestLargeInScansItsPoints(t *testing.T) {
	e := newTestEngine(t)
	var docs []bson.Raw
	for i := range 5000 {
		d, _ := bson.Marshal(bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i * 2}})
		docs = append(docs, d)
	}
	if _, _, err := e.Insert("test", "bigin", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	mustCreateIndex(t, e, "bigin", `{"a": 1}`, false)
	in := bson.A{}
	for i := range 1000 {
		in = append(in, i*3)
	}
	filter, _ := bson.Marshal(bson.D{{Key: "a", Value: bson.D{{Key: "$in", Value: in}}}})
	out, err := e.Explain("test", "bigin", FindOptions{Filter: filter}, ExecutionStats)
	if err != nil {
		t.Fatal(err)
	}
	doc := bson.Raw(bsonDoc(out))
	// a holds the even numbers; the values are the multiples of 3 below
	// 3,000: the matches are the 500 multiples of 6. For every 6, MongoDB's
	// checker examines the match, the key after it (in the gap before the
	// next point) and the key the seek to the odd point finds (in the gap
	// before the next): 1,500 keys.
	stats := doc.Lookup("executionStats").Document()
	if n := stats.Lookup("nReturned").AsInt64(); n != 500 {
		t.Fatalf("nReturned %d, want 500", n)
	}
	if keys, docs := stats.Lookup("totalKeysExamined").AsInt64(), stats.Lookup("totalDocsExamined").AsInt64(); keys != 1500 || docs != 500 {
		t.Fatalf("examined %d keys and %d documents for 500 matches of 1,000 points", keys, docs)
	}
}
