package engine

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestKeyChecks checks compound bounds past a range or an unbounded
// field: explain shows each field's bounds, the scan tests them on the
// keys (documents of failing keys are not fetched) and seeks past the keys
// that cannot match, as MongoDB's index bounds checker does. The data are
// 4 values of a, each with 20 values of b, each with 10 values of c.
func TestKeyChecks(t *testing.T) {
	e := newTestEngine(t)
	mustCreateIndex(t, e, "k", `{"a": 1, "b": 1, "c": 1}`, false)
	var docs []bson.Raw
	id := int32(0)
	for a := range 4 {
		for b := range 20 {
			for c := range 10 {
				docs = append(docs, bsonDoc(bson.D{{Key: "_id", Value: id}, {Key: "a", Value: int32(a)}, {Key: "b", Value: int32(b)}, {Key: "c", Value: int32(c)}}))
				id++
			}
		}
	}
	if _, _, err := e.Insert("test", "k", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		filter, sort string
		limit        int64
		bounds       string
		// keys and returned are the totalKeysExamined and nReturned
		// MongoDB's bounds checker gives (docsExamined == returned).
		keys, returned int64
	}{
		// Equality, sort, range: per b, one key below the range, a seek
		// to c = 8, two matches; then the key past a = 1, where the
		// checker is done.
		{`{"a": 1, "c": {"$gte": 8}}`, `{"b": 1}`, 0,
			`{"a": ["[1, 1]"], "b": ["[MinKey, MaxKey]"], "c": ["[8, inf.0]"]}`, 61, 40},
		{`{"a": 1, "c": {"$gte": 8}}`, `{"b": 1}`, 5,
			`{"a": ["[1, 1]"], "b": ["[MinKey, MaxKey]"], "c": ["[8, inf.0]"]}`, 8, 5},
		// Equality, sort, range with the range's failing keys last in
		// each b: a limit of 9 examines nReturned+1 keys (the ninth
		// result lies past one failing key).
		{`{"a": 1, "c": {"$lte": 7}}`, `{"b": 1, "c": 1}`, 9,
			`{"a": ["[1, 1]"], "b": ["[MinKey, MaxKey]"], "c": ["[-inf.0, 7]"]}`, 10, 9},
		// Backward: per b, seek below c = 9 past the keys above it, and
		// the key below a = 1 at the end. The bounds show in the scan's
		// order.
		{`{"a": 1, "c": {"$lte": 1}}`, `{"b": -1, "c": -1}`, 0,
			`{"a": ["[1, 1]"], "b": ["[MaxKey, MinKey]"], "c": ["[1, -inf.0]"]}`, 61, 40},
		// Equality, range, equality: per b, seek to c = 3, then past b.
		{`{"a": 2, "b": {"$gte": 5, "$lt": 15}, "c": 3}`, ``, 0,
			`{"a": ["[2, 2]"], "b": ["[5, 15)"], "c": ["[3, 3]"]}`, 30, 10},
		{`{"a": 2, "b": {"$gte": 5, "$lt": 15}, "c": {"$in": [3, 7]}}`, ``, 0,
			`{"a": ["[2, 2]"], "b": ["[5, 15)"], "c": ["[3, 3]", "[7, 7]"]}`, 50, 20},
	}
	for _, tc := range tests {
		t.Run(tc.filter+tc.sort+fmt.Sprint(tc.limit), func(t *testing.T) {
			o := FindOptions{Filter: ext(t, tc.filter), Limit: tc.limit}
			if tc.sort != "" {
				o.Sort = ext(t, tc.sort)
			}
			out, err := e.Explain("test", "k", o, ExecutionStats)
			if err != nil {
				t.Fatal(err)
			}
			raw := bson.Raw(bsonDoc(out))
			stats := raw.Lookup("executionStats").Document()
			keys, returned, fetched := stats.Lookup("totalKeysExamined").AsInt64(), stats.Lookup("nReturned").AsInt64(), stats.Lookup("totalDocsExamined").AsInt64()
			if keys != tc.keys || returned != tc.returned || fetched != tc.returned {
				t.Errorf("keys %d, returned %d, fetched %d; want %d, %d, %d", keys, returned, fetched, tc.keys, tc.returned, tc.returned)
			}
			scan := findStage(raw.Lookup("queryPlanner", "winningPlan").Document(), "IXSCAN")
			if scan == nil {
				t.Fatalf("no IXSCAN in %s", raw.Lookup("queryPlanner", "winningPlan"))
			}
			if got := scan.Lookup("indexBounds").Document(); got.String() != ext(t, tc.bounds).String() {
				t.Errorf("bounds %s, want %s", got, tc.bounds)
			}
			want := findIDsIn(t, e, "k", o, `{"$natural": 1}`)
			if got := findIDsIn(t, e, "k", o, ""); !slices.Equal(got, want) {
				t.Errorf("index scan returned %v, collection scan %v", got, want)
			}
		})
	}
}

// findStage finds the stage named name in an explain plan tree.
func findStage(plan bson.Raw, name string) bson.Raw {
	for plan != nil {
		if plan.Lookup("stage").StringValue() == name {
			return plan
		}
		in, ok := plan.Lookup("inputStage").DocumentOK()
		if !ok {
			return nil
		}
		plan = in
	}
	return nil
}

// findIDsIn runs a find on test.coll (with hint, when not empty) and
// returns the _ids in result order.
func findIDsIn(t *testing.T, e *Engine, coll string, o FindOptions, hint string) []int32 {
	t.Helper()
	if hint != "" {
		o.Hint = ext(t, `{"h": `+hint+`}`).Lookup("h")
	}
	var ids []int32
	for _, doc := range findDocs(t, e, coll, o) {
		ids = append(ids, doc.Lookup("_id").Int32())
	}
	return ids
}

// findDocs runs a find on test.coll and returns its documents in result
// order.
func findDocs(t *testing.T, e *Engine, coll string, o FindOptions) []bson.Raw {
	t.Helper()
	cur, err := e.Find("test", coll, o)
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	return cursorDocs(t, cur)
}

// cursorDocs reads cur to its end and returns its documents in result
// order; the caller closes it.
func cursorDocs(t *testing.T, cur Cursor) []bson.Raw {
	t.Helper()
	var out []bson.Raw
	for {
		doc, err := cur.Next()
		if err != nil {
			t.Fatal(err)
		}
		if doc == nil {
			return out
		}
		out = append(out, bytes.Clone(doc))
	}
}

// TestPlanRebuiltWhenMultikey checks that a plan built while its index
// held no array is rebuilt when a write made the index multikey before
// the scan's snapshot: the intersected range (1, 3) would miss [0, 5].
func TestPlanRebuiltWhenMultikey(t *testing.T) {
	e := newTestEngine(t)
	mustCreateIndex(t, e, "m", `{"a": 1}`, false)
	if _, _, err := e.Insert("test", "m", []bson.Raw{ext(t, `{"_id": 1, "a": 2}`)}, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	c := e.Collection("test", "m")
	o := FindOptions{Filter: ext(t, `{"a": {"$gt": 1, "$lt": 3}}`)}
	q, err := compileFind(o, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := e.planFind(context.Background(), c, q, bson.RawValue{}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if p.Index == nil || p.Index.Multikey {
		t.Fatalf("plan on %v, want a_1 built single-key", p.Index)
	}
	if _, _, err := e.Insert("test", "m", []bson.Raw{ext(t, `{"_id": 2, "a": [0, 5]}`)}, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	cur, err := e.execute(c, q, p, o, &OpStats{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	if n := len(cursorDocs(t, cur)); n != 2 {
		t.Errorf("found %d documents, want 2", n)
	}
}

// TestKeysExaminedAcrossIntervals: a scan of several intervals of keys
// examines, as MongoDB's index scan with its IndexBoundsChecker, each key
// in them and each key its cursor finds in a gap or past the last one;
// one into a gap after a trailing field, where the next interval has
// other leading values, makes the checker seek past the leading values
// and examine the key found there too. A scan of one interval stops at
// its end. The document store read by _id counts as the _id index. The
// two-field rows are jstests/core/index/indexj.js's classic-engine
// figures; the others follow from the same algorithm.
func TestKeysExaminedAcrossIntervals(t *testing.T) {
	e := newTestEngine(t)
	mustCreateIndex(t, e, "j", `{"a": 1, "b": 1}`, false)
	mustCreateIndex(t, e, "x", `{"x": 1}`, false)
	insert := func(coll string, docs ...string) {
		t.Helper()
		var raw []bson.Raw
		for _, d := range docs {
			raw = append(raw, ext(t, d))
		}
		if _, _, err := e.Insert("test", coll, raw, true, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	insert("j", `{"_id": 1, "a": 1, "b": 1}`, `{"_id": 2, "a": 1, "b": 2}`, `{"_id": 3, "a": 2, "b": 1}`, `{"_id": 4, "a": 2, "b": 2}`,
		`{"_id": 5, "a": 1, "b": 1}`, `{"_id": 6, "a": 1, "b": 1}`)
	for i := range 10 {
		insert("x", fmt.Sprintf(`{"_id": %d, "x": %d}`, i, i))
	}
	type row struct {
		coll, filter, hint, sort string
		keys                     int64
	}
	check := func(rows []row) {
		t.Helper()
		for _, r := range rows {
			o := FindOptions{Filter: ext(t, r.filter)}
			if r.hint != "" {
				o.Hint = ext(t, `{"h": `+r.hint+`}`).Lookup("h")
			}
			if r.sort != "" {
				o.Sort = ext(t, r.sort)
			}
			out, err := e.Explain("test", r.coll, o, ExecutionStats)
			if err != nil {
				t.Fatal(err)
			}
			stats := bson.Raw(bsonDoc(out)).Lookup("executionStats").Document()
			if keys := stats.Lookup("totalKeysExamined").AsInt64(); keys != r.keys {
				t.Errorf("%s %s sort %s: totalKeysExamined %d, want %d", r.coll, r.filter, r.sort, keys, r.keys)
			}
			want := findIDsIn(t, e, r.coll, FindOptions{Filter: o.Filter, Sort: o.Sort}, `{"$natural": 1}`)
			if got := findIDsIn(t, e, r.coll, FindOptions{Filter: o.Filter, Sort: o.Sort, Hint: o.Hint}, ""); !slices.Equal(got, want) {
				t.Errorf("%s %s: index scan returned %v, collection scan %v", r.coll, r.filter, got, want)
			}
		}
	}
	ab := `{"a": 1, "b": 1}`
	check([]row{
		{"j", `{"a": {"$in": [1, 2]}, "b": {"$gt": 1, "$lt": 2}}`, ab, "", 3},
		{"j", `{"a": {"$in": [1, 2]}, "b": {"$gt": 1, "$lt": 2}}`, ab, `{"a": -1, "b": -1}`, 3},
		{"j", `{"a": {"$in": [1, 1.9]}, "b": {"$gt": 1, "$lt": 2}}`, ab, "", 2},
		{"j", `{"a": {"$in": [1.1, 2]}, "b": {"$gt": 1, "$lt": 2}}`, ab, `{"a": -1, "b": -1}`, 2},
		{"j", `{"a": {"$gt": 4, "$lt": 5}}`, ab, "", 0},
		// 1, 2 (gap), 5, 6 (gap), 8, 9 (past the last)
		{"x", `{"x": {"$in": [1, 5, 8]}}`, `{"x": 1}`, "", 6},
		{"x", `{"x": {"$in": [1, 5, 8]}}`, `{"x": 1}`, `{"x": -1}`, 6},
		// 1, 2, 5, 6, 9 and the end of the index
		{"x", `{"x": {"$in": [1, 5, 9]}}`, `{"x": 1}`, "", 5},
		{"x", `{"x": {"$in": [0, 9]}}`, `{"x": 1}`, "", 3},
		{"x", `{"x": {"$gt": 5}}`, `{"x": 1}`, "", 4},
		{"x", `{"_id": {"$in": [1, 5, 8]}}`, "", "", 6},
		{"x", `{"_id": {"$in": [1, 5, 8]}}`, "", `{"_id": -1}`, 6},
		{"x", `{"_id": {"$gt": 5}}`, "", "", 4},
		{"x", `{"_id": {"$gte": 2, "$lt": 5}}`, "", "", 3},
	})
	insert("j", `{"_id": 7, "a": 1, "b": 1.5}`)
	check([]row{{"j", `{"a": {"$in": [1, 2]}, "b": {"$gt": 1, "$lt": 2}}`, ab, "", 4}})

	// jstests/core/index/index_check6.js's exact figures: ages 10 to 49,
	// ratings 0 to 9; a range then a checked field.
	mustCreateIndex(t, e, "r", `{"age": 1, "rating": 1}`, false)
	id := 0
	for age := 10; age < 50; age++ {
		for rating := range 10 {
			insert("r", fmt.Sprintf(`{"_id": %d, "age": %d, "rating": %d}`, id, age, rating))
			id++
		}
	}
	ar := `{"age": 1, "rating": 1}`
	check([]row{
		{"r", `{"age": 30}`, ar, "", 10},
		{"r", `{"age": {"$gte": 29, "$lte": 30}}`, ar, "", 20},
		{"r", `{"age": {"$gte": 25, "$lte": 30}, "rating": {"$in": [0, 9]}}`, ar, "", 19},
		{"r", `{"age": {"$gte": 25, "$lte": 30}, "rating": {"$in": [0, 8]}}`, ar, "", 24},
		{"r", `{"age": {"$gte": 25, "$lte": 30}, "rating": {"$in": [1, 8]}}`, ar, "", 29},
		{"r", `{"age": {"$gte": 29, "$lte": 30}, "rating": 5}`, ar, "", 5},
		{"r", `{"age": {"$gte": 29, "$lte": 30}, "rating": {"$gte": 4, "$lte": 5}}`, ar, "", 7},
		{"r", `{"age": 30, "rating": {"$gte": 4, "$lte": 5}}`, ar, "", 2},
		// backward: per age its 8 and 0, the 7 between them and the
		// next age's 9, then the key below age 25, where it is done
		{"r", `{"age": {"$gte": 25, "$lte": 30}, "rating": {"$in": [0, 8]}}`, ar, `{"age": -1, "rating": -1}`, 24},
	})
}

// TestKeysPastIntervals (ofquery8's rows, from regex3.js, regex6.js and MongoDB's
// IndexScan and IndexBoundsChecker): the keys examined forward and backward
// by scans of several intervals, the _id index's included.
func TestKeysPastIntervals(t *testing.T) {
	e := newTestEngine(t)
	mustCreateIndex(t, e, "names", `{"name": 1}`, false)
	mustCreateIndex(t, e, "nums", `{"a": 1}`, false)
	var names, nums []bson.Raw
	for i, n := range []string{"eliot", "emily", "bob", "aaron", "[with]some?symbols"} {
		names = append(names, bsonDoc(bson.D{{Key: "_id", Value: int32(i)}, {Key: "name", Value: n}}))
	}
	for i := range 5 {
		nums = append(nums, bsonDoc(bson.D{{Key: "_id", Value: int32(i)}, {Key: "a", Value: int32(i + 1)}}))
	}
	if _, _, err := e.Insert("test", "names", names, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.Insert("test", "nums", nums, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		coll, filter string
		// keys forward and backward (a descending sort on the filter's
		// field), and returned
		keys, keysBack, returned int64
	}{
		// A prefix regex is two intervals, its strings and its own value;
		// backward the scan starts below the regex, at the last string.
		{"names", `{"name": {"$regex": "^bob"}}`, 2, 3, 1},
		{"names", `{"name": {"$regex": "^\\/"}}`, 1, 1, 0},
		{"names", `{"name": {"$regex": "^\\."}}`, 1, 1, 0},
		{"names", `{"name": {"$regex": "^e"}}`, 2, 3, 2},
		// The key past the first point lies in the second: counted once.
		{"names", `{"name": {"$in": ["bob", "eliot"]}}`, 3, 3, 2},
		{"nums", `{"a": {"$in": [2, 4]}}`, 4, 4, 2},
		// The key past several empty intervals is counted once.
		{"nums", `{"a": {"$in": [1.5, 1.6, 1.7, 5]}}`, 2, 3, 1},
		{"nums", `{"a": {"$in": [0, 9]}}`, 1, 1, 0},
		// One interval ends where the cursor's end position does.
		{"nums", `{"a": {"$gte": 2, "$lte": 3}}`, 2, 2, 2},
		{"nums", `{"a": 3}`, 1, 1, 1},
		// The document store serves as the _id index: a document read
		// by _id bounds is a key examined (nums' _id are 0 to 4).
		{"nums", `{"_id": {"$in": [1, 3]}}`, 4, 4, 2},
		{"nums", `{"_id": {"$gte": 1, "$lte": 2}}`, 2, 2, 2},
		{"nums", `{"_id": {"$in": [7, 8]}}`, 0, 1, 0},
		{"nums", `{"_id": {"$in": [-1, 9]}}`, 1, 1, 0},
	}
	for _, tc := range tests {
		field := map[string]string{"names": "name", "nums": "a"}[tc.coll]
		if strings.HasPrefix(tc.filter, `{"_id"`) {
			field = "_id"
		}
		for _, dir := range []string{"", `{"` + field + `": -1}`} {
			t.Run(tc.filter+dir, func(t *testing.T) {
				o := FindOptions{Filter: ext(t, tc.filter)}
				if dir != "" {
					o.Sort = ext(t, dir)
				}
				out, err := e.Explain("test", tc.coll, o, ExecutionStats)
				if err != nil {
					t.Fatal(err)
				}
				stats := bson.Raw(bsonDoc(out)).Lookup("executionStats").Document()
				want := tc.keys
				if dir != "" {
					want = tc.keysBack
				}
				keys, returned := stats.Lookup("totalKeysExamined").AsInt64(), stats.Lookup("nReturned").AsInt64()
				if keys != want || returned != tc.returned {
					t.Errorf("keys %d, returned %d; want %d, %d", keys, returned, want, tc.returned)
				}
			})
		}
	}
}

// TestKeyFiltersBeforeFetch: a regex (other than a literal prefix) or a
// $mod on a field of an index that is neither multikey nor collated is
// tested on each key's value before its document is fetched, as MongoDB's
// IXSCAN filter (and3.js): only the documents whose key passes are
// examined, and the results are the collection scan's.
func TestKeyFiltersBeforeFetch(t *testing.T) {
	e := newTestEngine(t)
	mustCreateIndex(t, e, "k", `{"a": 1}`, false)
	mustCreateIndex(t, e, "k", `{"n": 1, "a": 1}`, false)
	var docs []bson.Raw
	for i, d := range []string{`"a": 1, "n": 1`, `"a": "foo", "n": 2`, `"a": "bar", "n": 3`, `"a": "boo", "n": 4`, `"n": 5`, `"a": null, "n": 6`, `"a": 7.5, "n": 7`} {
		docs = append(docs, ext(t, fmt.Sprintf(`{"_id": %d, %s}`, i, d)))
	}
	if _, _, err := e.Insert("test", "k", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		filter, hint       string
		returned, examined int64
	}{
		{`{"a": {"$regex": "o"}}`, `{"a": 1}`, 2, 2},
		{`{"a": {"$regex": "a"}}`, `{"a": 1}`, 1, 1},
		{`{"a": {"$regex": "z"}}`, `{"a": 1}`, 0, 0},
		{`{"a": {"$regex": "^b", "$options": "i"}}`, `{"a": 1}`, 2, 2},
		{`{"a": {"$not": {"$regex": "o"}}}`, `{"a": 1}`, 5, 7},
		{`{"$and": [{"a": {"$regex": "oo"}}, {"a": {"$not": {"$regex": "f"}}}]}`, `{"a": 1}`, 1, 2},
		{`{"a": {"$mod": [2, 1]}}`, `{"a": 1}`, 2, 2},
		{`{"n": {"$mod": [2, 0]}}`, `{"n": 1, "a": 1}`, 3, 3},
		{`{"n": {"$gt": 1}, "a": {"$regex": "oo"}}`, `{"n": 1, "a": 1}`, 2, 2},
		// A literal prefix: its bounds decide it.
		{`{"a": {"$regex": "^b"}}`, `{"a": 1}`, 2, 2},
	} {
		o := FindOptions{Filter: ext(t, r.filter), Hint: ext(t, `{"h": `+r.hint+`}`).Lookup("h")}
		out, err := e.Explain("test", "k", o, ExecutionStats)
		if err != nil {
			t.Fatal(err)
		}
		stats := bson.Raw(bsonDoc(out)).Lookup("executionStats").Document()
		if n, d := stats.Lookup("nReturned").AsInt64(), stats.Lookup("totalDocsExamined").AsInt64(); n != r.returned || d != r.examined {
			t.Errorf("%s: nReturned %d, totalDocsExamined %d; want %d, %d", r.filter, n, d, r.returned, r.examined)
		}
		want := findIDsIn(t, e, "k", FindOptions{Filter: o.Filter}, `{"$natural": 1}`)
		got := findIDsIn(t, e, "k", o, "")
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: index scan returned %v, collection scan %v", r.filter, got, want)
		}
	}
}
