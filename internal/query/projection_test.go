package query

import (
	"testing"

	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/mongoerr"
	"go.mongodb.org/mongo-driver/v2/bson"
)

func TestProjection(t *testing.T) {
	tests := []struct {
		spec, doc string
		pos       int
		want      string
	}{
		{`{}`, `{"_id": 1, "a": 1}`, -1, `{"_id": 1, "a": 1}`},
		{`{"s": {"$add": ["$a", "$b"]}, "a": 1}`, `{"_id": 1, "a": 2, "b": 3}`, -1, `{"_id": 1, "a": 2, "s": 5}`},
		{`{"big": {"$gt": ["$a", 1]}, "_id": 0}`, `{"_id": 1, "a": 2}`, -1, `{"big": true}`},
		{`{"n": {"$size": "$tags"}, "first": {"$arrayElemAt": ["$tags", 0]}}`, `{"_id": 1, "tags": ["x", "y"]}`, -1, `{"_id": 1, "n": 2, "first": "x"}`},
		{`{"c": ["$a", "$missing"], "_id": 0}`, `{"_id": 1, "a": 2}`, -1, `{"c": [2, null]}`},
		{`{"a": 1}`, `{"_id": 1, "a": 2, "b": 3}`, -1, `{"_id": 1, "a": 2}`},
		{`{"b": 1, "a": 1}`, `{"a": 2, "_id": 1, "b": 3}`, -1, `{"a": 2, "_id": 1, "b": 3}`},
		{`{"a": 1, "_id": 0}`, `{"_id": 1, "a": 2, "b": 3}`, -1, `{"a": 2}`},
		{`{"_id": 1}`, `{"_id": 1, "a": 2}`, -1, `{"_id": 1}`},
		{`{"_id": 0}`, `{"_id": 1, "a": 2}`, -1, `{"a": 2}`},
		{`{"a": 0}`, `{"_id": 1, "a": 2, "b": 3}`, -1, `{"_id": 1, "b": 3}`},
		{`{"a": 0, "_id": 1}`, `{"_id": 1, "a": 2, "b": 3}`, -1, `{"_id": 1, "b": 3}`},
		{`{"a": true}`, `{"_id": 1, "a": 2}`, -1, `{"_id": 1, "a": 2}`},
		{`{"a": false}`, `{"_id": 1, "a": 2}`, -1, `{"_id": 1}`},
		{`{"a": {"$numberDecimal": "0.00"}}`, `{"_id": 1, "a": 2, "b": 3}`, -1, `{"_id": 1, "b": 3}`},
		{`{"a": {"$numberDecimal": "-0E+3"}, "_id": 0}`, `{"_id": 1, "a": 2, "b": 3}`, -1, `{"b": 3}`},
		{`{"a": {"$numberDecimal": "0.01"}}`, `{"_id": 1, "a": 2, "b": 3}`, -1, `{"_id": 1, "a": 2}`},
		{`{"x": 1}`, `{"_id": 1, "a": 2}`, -1, `{"_id": 1}`},
		{`{"a.b": 1}`, `{"_id": 1, "a": {"b": 1, "c": 2}, "d": 1}`, -1, `{"_id": 1, "a": {"b": 1}}`},
		{`{"a.b": 1}`, `{"_id": 1, "a": [{"b": 1, "c": 2}, 3, {"c": 1}, [{"b": 4, "c": 5}]]}`, -1, `{"_id": 1, "a": [{"b": 1}, {}, [{"b": 4}]]}`},
		{`{"a.b": 1}`, `{"_id": 1, "a": 5}`, -1, `{"_id": 1}`},
		{`{"a.b": 1}`, `{"_id": 1, "a": {"c": 5}}`, -1, `{"_id": 1, "a": {}}`},
		{`{"a": {"b": 1}}`, `{"_id": 1, "a": {"b": 1, "c": 2}}`, -1, `{"_id": 1, "a": {"b": 1}}`},
		{`{"a.b": 0}`, `{"_id": 1, "a": [{"b": 1, "c": 2}, 3, [{"b": 4, "c": 5}]]}`, -1, `{"_id": 1, "a": [{"c": 2}, 3, [{"c": 5}]]}`},
		{`{"a.b": 1, "a.c": 1}`, `{"a": {"c": 1, "b": 2, "d": 3}}`, -1, `{"a": {"c": 1, "b": 2}}`},
		// A computed field under an array replaces its scalars, in nested
		// arrays too, with a document of the computed fields (jstest
		// projection_semantics.js).
		{`{"a.b": "new", "_id": 0}`, `{"a": ["s", {"b": 1, "c": 2}, {"b": 3}]}`, -1, `{"a": [{"b": "new"}, {"b": "new"}, {"b": "new"}]}`},
		{`{"a.b.c": "new", "_id": 0}`, `{"a": [[], [{"b": [[1, 2], {"c": 1, "d": 1}]}]]}`, -1, `{"a": [[], [{"b": [[{"c": "new"}, {"c": "new"}], {"c": "new"}]}]]}`},
		// $slice walks one array level per component: not into an array
		// nested in an array (jstest slice1.js).
		{`{"a.b": {"$slice": 1}, "_id": 0}`, `{"a": [[{"b": [1, 2, 3]}], {"b": [4, 5]}]}`, -1, `{"a": [[{"b": [1, 2, 3]}], {"b": [4]}]}`},
		{`{"a": {"b": {"$slice": [1, 1]}}, "e": 1, "_id": 0}`, `{"a": [[{"b": [1, 2, 3], "c": 1}]], "e": 1}`, -1, `{"a": [[{"b": [1, 2, 3]}]], "e": 1}`},
		{`{"a.b": {"$slice": 1}, "c": 0}`, `{"_id": 1, "a": [[{"b": [1, 2], "c": 1}], {"b": [3, 4]}], "c": 1}`, -1, `{"_id": 1, "a": [[{"b": [1, 2], "c": 1}], {"b": [3]}]}`},

		{`{"c": {"$slice": 2}}`, `{"_id": 1, "c": [1, 2, 3], "d": 4}`, -1, `{"_id": 1, "c": [1, 2], "d": 4}`},
		{`{"c": {"$slice": -2}}`, `{"_id": 1, "c": [1, 2, 3]}`, -1, `{"_id": 1, "c": [2, 3]}`},
		{`{"c": {"$slice": -5}}`, `{"_id": 1, "c": [1, 2, 3]}`, -1, `{"_id": 1, "c": [1, 2, 3]}`},
		{`{"c": {"$slice": [1, 1]}}`, `{"_id": 1, "c": [1, 2, 3]}`, -1, `{"_id": 1, "c": [2]}`},
		{`{"c": {"$slice": [-2, 5]}}`, `{"_id": 1, "c": [1, 2, 3]}`, -1, `{"_id": 1, "c": [2, 3]}`},
		{`{"c": {"$slice": [5, 5]}}`, `{"_id": 1, "c": [1, 2, 3]}`, -1, `{"_id": 1, "c": []}`},
		{`{"c": {"$slice": 1}}`, `{"_id": 1, "c": "str"}`, -1, `{"_id": 1, "c": "str"}`},
		// $slice reads its numbers as BSONElement::numberInt: a long keeps
		// its low 32 bits, a decimal rounds half to even, and one out of
		// range is math.MinInt32 (Decimal128::toInt), a slice of all.
		{`{"c": {"$slice": {"$numberLong": "4294967297"}}}`, `{"_id": 1, "c": [1, 2, 3]}`, -1, `{"_id": 1, "c": [1]}`},
		{`{"c": {"$slice": [{"$numberLong": "-4294967295"}, 1]}}`, `{"_id": 1, "c": [1, 2, 3]}`, -1, `{"_id": 1, "c": [2]}`},
		{`{"c": {"$slice": {"$numberDecimal": "1.5"}}}`, `{"_id": 1, "c": [1, 2, 3]}`, -1, `{"_id": 1, "c": [1, 2]}`},
		{`{"c": {"$slice": {"$numberDecimal": "2.5"}}}`, `{"_id": 1, "c": [1, 2, 3]}`, -1, `{"_id": 1, "c": [1, 2]}`},
		{`{"c": {"$slice": {"$numberDecimal": "-0.6"}}}`, `{"_id": 1, "c": [1, 2, 3]}`, -1, `{"_id": 1, "c": [3]}`},
		{`{"c": {"$slice": {"$numberDecimal": "-0.5"}}}`, `{"_id": 1, "c": [1, 2, 3]}`, -1, `{"_id": 1, "c": []}`},
		{`{"c": {"$slice": {"$numberDecimal": "1E+20"}}}`, `{"_id": 1, "c": [1, 2, 3]}`, -1, `{"_id": 1, "c": [1, 2, 3]}`},
		{`{"c": {"$slice": {"$numberDecimal": "2147483648"}}}`, `{"_id": 1, "c": [1, 2, 3]}`, -1, `{"_id": 1, "c": [1, 2, 3]}`},
		{`{"c": {"$slice": [{"$numberDecimal": "0.5"}, {"$numberDecimal": "1.50"}]}}`, `{"_id": 1, "c": [1, 2, 3]}`, -1, `{"_id": 1, "c": [1, 2]}`},
		{`{"c": {"$slice": 1}, "d": 1}`, `{"_id": 1, "c": [1, 2], "d": 4, "e": 5}`, -1, `{"_id": 1, "c": [1], "d": 4}`},
		{`{"c": {"$slice": 1}, "_id": 0}`, `{"_id": 1, "c": [1, 2], "d": 4}`, -1, `{"c": [1], "d": 4}`},
		{`{"c": {"$slice": 1}, "_id": 1}`, `{"_id": 1, "c": [1, 2], "d": 4}`, -1, `{"_id": 1, "c": [1]}`},
		{`{"c": {"$slice": 1}, "d": 0}`, `{"_id": 1, "c": [1, 2], "d": 4, "e": 5}`, -1, `{"_id": 1, "c": [1], "e": 5}`},
		{`{"x.c": {"$slice": 1}}`, `{"_id": 1, "x": {"c": [1, 2], "o": 1}}`, -1, `{"_id": 1, "x": {"c": [1], "o": 1}}`},
		{`{"q": 1, "x.c": {"$slice": 1}}`, `{"_id": 1, "q": 2, "x": {"c": [1, 2], "o": 1}}`, -1, `{"_id": 1, "q": 2, "x": {"c": [1]}}`},
		{`{"a": {"$elemMatch": {"b": {"$gt": 1}}}}`, `{"_id": 1, "a": [{"b": 1}, {"b": 2}, {"b": 3}], "c": 1}`, -1, `{"_id": 1, "a": [{"b": 2}]}`},
		{`{"a": {"$elemMatch": {"b": 5}}, "c": 1}`, `{"_id": 1, "a": [{"b": 1}], "c": 1}`, -1, `{"_id": 1, "c": 1}`},
		{`{"a": {"$elemMatch": {"$gt": 1}}, "c": 1}`, `{"_id": 1, "a": [1, 3], "c": 1}`, -1, `{"_id": 1, "c": 1, "a": [3]}`},
		// In an exclusion projection, $elemMatch replaces its field in place, or drops it.
		{`{"a": {"$elemMatch": {"$gt": 1}}, "c": 0}`, `{"_id": 1, "a": [1, 3], "c": 1, "d": 2}`, -1, `{"_id": 1, "a": [3], "d": 2}`},
		{`{"a": {"$elemMatch": {"$gt": 5}}, "c": 0}`, `{"_id": 1, "a": [1, 3], "c": 1, "d": 2}`, -1, `{"_id": 1, "d": 2}`},
		{`{"a": {"$elemMatch": {"$gt": 1}}, "b": {"$slice": 1}}`, `{"_id": 1, "a": [1, 2, 3], "b": [10, 20]}`, -1, `{"_id": 1, "a": [2], "b": [10]}`},
		{`{"_id": 0, "a": {"$elemMatch": {"$gt": 1}}, "c": 0}`, `{"_id": 1, "c": 1, "a": [1, 3]}`, -1, `{"a": [3]}`},
		{`{"a.$": 1}`, `{"_id": 1, "a": [5, 6, 7], "b": 1}`, 1, `{"_id": 1, "a": [6]}`},
		{`{"a.b.$": 1}`, `{"_id": 1, "a": [{"b": 1, "c": 1}, {"b": 2, "c": 2}]}`, 1, `{"_id": 1, "a": [{"b": 2}]}`},
		{`{"a.$": 1}`, `{"_id": 1, "a": 5}`, -1, `{"_id": 1, "a": 5}`},
		{`{"x": "lit", "a": 1}`, `{"_id": 1, "x": 9, "a": 2}`, -1, `{"_id": 1, "a": 2, "x": "lit"}`},
		{`{"x": "$a.b"}`, `{"_id": 1, "a": {"b": 5}}`, -1, `{"_id": 1, "x": 5}`},
		{`{"x": "$a.b"}`, `{"_id": 1, "a": [{"b": 5}, 3, {"b": 6}, {"c": 1}]}`, -1, `{"_id": 1, "x": [5, 6]}`},
		{`{"x": "$missing"}`, `{"_id": 1}`, -1, `{"_id": 1}`},
		{`{"x": {"$literal": 1}}`, `{"_id": 1}`, -1, `{"_id": 1, "x": 1}`},
		{`{"x": null, "_id": 0}`, `{"_id": 1}`, -1, `{"x": null}`},
		{`{"x": ["$a", 2]}`, `{"_id": 1, "a": 1}`, -1, `{"_id": 1, "x": [1, 2]}`},
		{`{"x.y": "$a"}`, `{"_id": 1, "a": 1}`, -1, `{"_id": 1, "x": {"y": 1}}`},
		{`{"x": {"y": "$a", "z": 1}}`, `{"_id": 1, "a": 1, "x": {"z": 3, "w": 4}}`, -1, `{"_id": 1, "x": {"z": 3, "y": 1}}`},
		{`{"x": "$$ROOT.a"}`, `{"_id": 1, "a": 1}`, -1, `{"_id": 1, "x": 1}`},
		{`{"x": "$$REMOVE", "a": 1}`, `{"_id": 1, "a": 1}`, -1, `{"_id": 1, "a": 1}`},
		// {$slice: ["$a", 1]} has no find form: it is the $slice
		// expression, a computed field of an inclusion projection.
		{`{"a": {"$slice": ["$a", 1]}}`, `{"_id": 1, "a": [5, 6], "b": 2}`, -1, `{"_id": 1, "a": [5]}`},
		{`{"_id": 0, "s": {"$slice": ["$a", -1, 1]}, "b": 1}`, `{"_id": 1, "a": [5, 6], "b": 2}`, -1, `{"b": 2, "s": [6]}`},
		{`{"comments": {"$slice": [0, 2]}}`, `{"_id": 1, "comments": [{"t": 1}, {"t": 2}, {"t": 3}], "title": "x"}`, -1, `{"_id": 1, "comments": [{"t": 1}, {"t": 2}], "title": "x"}`},
		{`{"count": 1, "comments": {"$slice": [1, 1]}}`, `{"_id": 1, "count": 3, "comments": [{"t": 1}, {"t": 2}], "x": 1}`, -1, `{"_id": 1, "count": 3, "comments": [{"t": 2}]}`},
		// A $meta below the top level of an exclusion projection is set
		// after the exclusion (ProjectionNode::applyExpressions): in place,
		// else appended; through arrays; over a scalar.
		{`{"o": {"$meta": "textScore"}, "n.s": {"$meta": "textScore"}, "b": 0}`, `{"_id": 1, "b": 2, "n": {"s": "old", "a": 1}, "c": 3}`, -1, `{"_id": 1, "n": {"s": 1.5, "a": 1}, "c": 3, "o": 1.5}`},
		{`{"n.s": {"$meta": "textScore"}}`, `{"_id": 1, "n": 5, "c": 3}`, -1, `{"_id": 1, "n": {"s": 1.5}, "c": 3}`},
		{`{"n.s": {"$meta": "textScore"}, "n.t.u": {"$meta": "textScore"}}`, `{"_id": 1, "c": 3}`, -1, `{"_id": 1, "c": 3, "n": {"s": 1.5, "t": {"u": 1.5}}}`},
		{`{"n.s": {"$meta": "textScore"}, "n.a": 0}`, `{"_id": 1, "n": [{"a": 1, "b": 2}, 7]}`, -1, `{"_id": 1, "n": [{"b": 2, "s": 1.5}, {"s": 1.5}]}`},
	}
	for _, tt := range tests {
		p, err := CompileProjection(ext(t, tt.spec))
		if err != nil {
			t.Errorf("%s: %v", tt.spec, err)
			continue
		}
		got, err := p.ApplyMeta(ext(t, tt.doc), tt.pos, docsrc.Meta{TextScore: 1.5, HasTextScore: true})
		if err != nil {
			t.Errorf("%s on %s: %v", tt.spec, tt.doc, err)
			continue
		}
		if want := ext(t, tt.want); !bytesEqual(got, want) {
			t.Errorf("%s on %s:\n got %s\nwant %s", tt.spec, tt.doc, got, want)
		}
	}
}

// TestProjectionSortKey: a {$meta: "sortKey"} field shows the find's
// sort key (Sort.SortKeyArray, which the find puts in the document's
// metadata), an array of each sort field's key as the sort compares the
// document (sortl.js: {b: [2]} for a sort by {a: 1} of {a: 2}), at any
// depth and inside expressions; under returnKey it is kept beside the
// index key.
func TestProjectionSortKey(t *testing.T) {
	tests := []struct {
		spec, sort, doc string
		returnKey       bool
		want            string
	}{
		{`{"b": {"$meta": "sortKey"}}`, `{"a": 1}`, `{"_id": 1, "a": 2}`, false, `{"_id": 1, "a": 2, "b": [2]}`},
		{`{"k": {"$meta": "sortKey"}, "_id": 0}`, `{"a": 1, "b": -1}`, `{"_id": 1, "a": [3, 1, 2], "b": 5}`, false, `{"a": [3, 1, 2], "b": 5, "k": [1, 5]}`},
		{`{"k": {"$meta": "sortKey"}, "a": 1}`, `{"a": -1, "c.d": 1}`, `{"_id": 1, "a": [3, 1, 2]}`, false, `{"_id": 1, "a": [3, 1, 2], "k": [3, null]}`},
		{`{"k": {"$meta": "sortKey"}, "_id": 0, "a": 1}`, `{"s": {"$meta": "textScore"}, "a": 1}`, `{"_id": 1, "a": "x"}`, false, `{"a": "x", "k": [1.5, "x"]}`},
		{`{"k": {"$meta": "sortKey"}, "t": {"$meta": "textScore"}}`, `{"a": 1}`, `{"_id": 1, "a": 4}`, true, `{"a": 4, "k": [4]}`},
		{`{"k": {"$meta": "sortKey"}}`, `{"$natural": -1}`, `{"_id": 1, "a": 4}`, false, `{"_id": 1, "a": 4}`},
		{`{"x.y": {"$meta": "sortKey"}}`, `{"a": -1}`, `{"_id": 1, "a": [3, 1, 2], "x": {"z": 1}}`, false, `{"_id": 1, "a": [3, 1, 2], "x": {"z": 1, "y": [3]}}`},
		{`{"x": {"y": {"$meta": "sortKey"}}, "_id": 0}`, `{"b": 1}`, `{"_id": 1, "a": 1}`, false, `{"a": 1, "x": {"y": [null]}}`},
		{`{"a": 1, "k": {"$concatArrays": [{"$meta": "sortKey"}, [7]]}}`, `{"a": 1, "_id": -1}`, `{"_id": 1, "a": 2}`, false, `{"_id": 1, "a": 2, "k": [2, 1, 7]}`},
		{`{"a": 1, "k": {"$meta": "sortKey"}}`, `{"$natural": 1}`, `{"_id": 1, "a": 2}`, false, `{"_id": 1, "a": 2}`},
		// return_key.js: returnKey keeps a nested sortKey field too, set on the key
		{`{"c.d": {"$meta": "sortKey"}}`, `{"b": 1}`, `{"_id": 1, "a": 4, "b": 1}`, true, `{"a": 4, "c": {"d": [1]}}`},
		{`{"c": {"d": {"$meta": "sortKey"}}, "k": {"$meta": "sortKey"}}`, `{"b": -1}`, `{"_id": 1, "b": 2}`, true, `{"a": 4, "c": {"d": [2]}, "k": [2]}`},
		{`{"a": {"$meta": "sortKey"}, "b": 1}`, `{"b": 1}`, `{"_id": 1, "b": 3}`, true, `{"a": [3]}`},
	}
	for _, tt := range tests {
		p, err := CompileProjection(ext(t, tt.spec))
		if err != nil {
			t.Fatalf("%s: %v", tt.spec, err)
		}
		s, err := CompileSort(ext(t, tt.sort))
		if err != nil {
			t.Fatalf("%s: %v", tt.sort, err)
		}
		if tt.returnKey {
			p = ReturnKey(p)
		}
		meta := docsrc.Meta{TextScore: 1.5, HasTextScore: true, IndexKey: ext(t, `{"a": 4}`)}
		if meta.SortKey, err = s.SortKeyArray(ext(t, tt.doc), meta); err != nil {
			t.Fatalf("%s on %s: %v", tt.sort, tt.doc, err)
		}
		got, err := p.ApplyMeta(ext(t, tt.doc), -1, meta)
		if err != nil {
			t.Errorf("%s sorted by %s on %s: %v", tt.spec, tt.sort, tt.doc, err)
			continue
		}
		if want := ext(t, tt.want); !bytesEqual(got, want) {
			t.Errorf("%s sorted by %s on %s:\n got %s\nwant %s", tt.spec, tt.sort, tt.doc, got, want)
		}
	}
}

func bytesEqual(a, b bson.Raw) bool { return string(a) == string(b) }

// positionalInMiddle is MongoDB's 31394 message.
const positionalInMiddle = "As of 4.4, it's illegal to specify positional operator in the middle of a path.Positional projection may only be used at the end, for example: a.b.$. If the query previously used a form like a.b.$.d, remove the parts following the '$' and the results will be equivalent."

func TestProjectionErrors(t *testing.T) {
	tests := []struct {
		spec string
		code mongoerr.Code
		msg  string
	}{
		{`{"a": 1, "b": 0}`, 31254, "Cannot do exclusion on field b in inclusion projection"},
		{`{"a": 0, "b": 1}`, 31253, "Cannot do inclusion on field b in exclusion projection"},
		{`{"a": 0, "b": "x"}`, 31310, ""},
		{`{"a": 0, "b": {"$literal": 1}}`, 31252, "Cannot use expression other than $meta in exclusion projection"},
		{`{"a": 1, "a.b": 1}`, 31249, "Path collision at a.b remaining portion b"},
		{`{"a.b": 1, "a": 1}`, 31250, "Path collision at a"},
		{`{"a.$": 1, "b.$": 1}`, 31276, "Cannot specify more than one positional projection per query."},
		{`{"a.$": 1, "b": {"$elemMatch": {"x": 1}}}`, 31255, "Cannot specify positional operator and $elemMatch."},
		{`{"b": {"$elemMatch": {"x": 1}}, "a.$": 1}`, 31256, "Cannot specify positional operator and $elemMatch."},
		{`{"a.$.b.$": 1}`, 31394, positionalInMiddle},
		{`{"a.$.b": 1}`, 31394, positionalInMiddle},
		{`{"$.a.$.b": 1}`, 31394, positionalInMiddle},
		{`{"a.$.": 1}`, 31394, positionalInMiddle},
		{`{"a.$.b": 0}`, 31394, positionalInMiddle},
		{`{"a.$": false}`, 31395, "positional projection cannot be used with exclusion"},
		{`{"a": {"b.$": 0}}`, 31395, "positional projection cannot be used with exclusion"},
		{`{"a.$": 1, "b": 0}`, 31254, "Cannot do exclusion on field b in inclusion projection"},
		{`{"$": 1}`, 16410, "FieldPath field names may not start with '$'. Consider using $getField or $setField."},
		{`{"$.a.$": 1}`, 16410, "FieldPath field names may not start with '$'. Consider using $getField or $setField."},
		{`{"a..$": 1}`, 40353, "FieldPath must not end with a '.'."},
		{`{"a.": 1}`, 40353, "FieldPath must not end with a '.'."},
		{`{".$": 1}`, 5392900, "Projection on field .$ is invalid"},
		{`{"a.$": 1, "a.b": 1}`, 31249, "Path collision at a.b remaining portion b"},
		{`{"a.$": {"$slice": 1}}`, 31271, ""},
		{`{"a.$": "x"}`, 31308, ""},
		{`{"a.b": {"$elemMatch": {"x": 1}}}`, 31275, "Cannot use $elemMatch projection on a nested field."},
		{`{"a": {"$elemMatch": 1}}`, 31274, ""},
		// An $elemMatch projection is parsed without special features
		// (kBanAllSpecialFeatures).
		{`{"a": {"$elemMatch": {"$jsonSchema": {}}}}`, 224, "$jsonSchema is not allowed in this context"},
		// A $slice of no find form is the $slice expression
		// (projection_parser.cpp's parseSubObjectAsExpression); when that
		// fails too, its error carries the find form's as context.
		{`{"a": {"$slice": "x"}}`, 28667, `Invalid $slice syntax. The given syntax { $slice: "x" } did not match the find() syntax because :: Location31273: $slice only supports numbers and [skip, limit] arrays :: The given syntax did not match the expression $slice syntax. :: caused by :: Expression $slice takes at least 2 arguments, and at most 3, but 1 were passed in.`},
		{`{"a": {"$slice": [1]}}`, 28667, `Invalid $slice syntax. The given syntax { $slice: [ 1 ] } did not match the find() syntax because :: Location31272: $slice array argument should be of form [skip, limit] :: The given syntax did not match the expression $slice syntax. :: caused by :: Expression $slice takes at least 2 arguments, and at most 3, but 1 were passed in.`},
		{`{"a": {"$slice": {"b": 1, "c": 2}}}`, 28667, ""},
		{`{"b": 0, "a": {"$slice": ["$a", 1]}}`, 31252, `Invalid $slice syntax. The given syntax { $slice: [ "$a", 1 ] } did not match the find() syntax because :: Location31257: $slice expects the skip argument to be a number, got string :: The given syntax did not match the expression $slice syntax. :: caused by :: Cannot use expression other than $meta in exclusion projection`},
		{`{"a": {"$slice": [1, 0]}}`, 28724, ""},
		{`{"a": {"$slice": ["x", 1]}}`, 28724, ""},
		{`{"a": {}}`, 51270, "An empty sub-projection is not a valid value. Found empty object at path"},
		{`{"a": {"b": {}}, "c": 1}`, 51270, "An empty sub-projection is not a valid value. Found empty object at path"},
		{`{"a": {"$elemMatch": {"$bad": 1}}}`, 2, "unknown operator: $bad"},
		{`{"a": {"$bogus": [1, 2]}}`, 31325, "Unknown expression $bogus"},
		{`{"a": {"$bogus.$": 1}}`, 31325, "Unknown expression $bogus.$"},
		{`{"a": {"$type": {"$bogus": 1}}}`, 168, "Unrecognized expression '$bogus'"},
		{`{"a": {"$type": 42, "$op": 42}}`, 16410, "FieldPath field names may not start with '$'. Consider using $getField or $setField."},
		{`{"a": 0, "b": {"$add": [1, "$$nope"]}}`, 31252, "Cannot use expression other than $meta in exclusion projection"},
		{`{"$a": 1}`, 16410, ""},
		{`{"a..b": 1}`, 15998, ""},
	}
	for _, tt := range tests {
		_, err := CompileProjection(ext(t, tt.spec))
		checkErr(t, tt.spec, err, tt.code, tt.msg)
	}
}

func TestPositionalApplyError(t *testing.T) {
	p, err := CompileProjection(ext(t, `{"a.$": 1}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Apply(ext(t, `{"a": [1, 2]}`), -1)
	checkErr(t, "no position", err, 51246, "")
}

func TestPositionalWithFilter(t *testing.T) {
	f, err := Compile(ext(t, `{"ancestors.id": 2}`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := CompileProjection(ext(t, `{"ancestors.$": 1, "_id": 0}`))
	if err != nil {
		t.Fatal(err)
	}
	doc := ext(t, `{"_id": 1, "ancestors": [{"id": 1, "n": "a"}, {"id": 2, "n": "b"}]}`)
	ok, pos := f.MatchPositional(doc)
	if !ok || pos != 1 {
		t.Fatalf("MatchPositional = %v, %d", ok, pos)
	}
	got, err := p.Apply(doc, pos)
	if err != nil {
		t.Fatal(err)
	}
	if want := ext(t, `{"ancestors": [{"id": 2, "n": "b"}]}`); !bytesEqual(got, want) {
		t.Fatalf("got %s, want %s", got, want)
	}
}

// TestPositionalProjectionWithFilter runs find's positional projection
// end to end (MatchPositional, then Apply) on cases from MongoDB's
// jstests/core/positional_projection.js. Since MongoDB 4.4 the filter need
// not name the projected field: the position recorded by the filter applies
// to the first array on the projected path, and only a document whose
// projected path reaches an array without a recorded position fails, at run
// time, with 51246 (51247 when the position is past the array's end).
func TestPositionalProjectionWithFilter(t *testing.T) {
	tests := []struct {
		filter, proj, doc string
		want              string // the projected document, or "" when code is set
		code              mongoerr.Code
	}{
		{`{"x.a": 2}`, `{"x.$": 1, "_id": 0}`, `{"x": [{"a": 1, "b": 2}, {"a": 2, "c": 3}], "y": [1]}`, `{"x": [{"a": 2, "c": 3}]}`, 0},
		{`{"x.y.a": 1}`, `{"x.y.$": 1, "_id": 0}`, `{"x": {"y": [{"a": 1, "b": 1}, {"a": 1, "b": 2}]}}`, `{"x": {"y": [{"a": 1, "b": 1}]}}`, 0},
		{`{}`, `{"g.$": 1, "_id": 0}`, `{"x": [1, 2]}`, `{}`, 0},
		{`{"x": 1}`, `{"a.$": 1, "_id": 0}`, `{"x": 1}`, `{}`, 0},
		{`{"x": {"$gt": 0}}`, `{"a.b.c.$": 1, "_id": 0}`, `{"x": [-1, 1, 2], "a": {"b": {"c": 123}}}`, `{"a": {"b": {"c": 123}}}`, 0},
		{`{"x.y.z": 1}`, `{"a.b.c.$": 1, "_id": 0}`, `{"x": {"y": {"z": [0, 1, 2]}}, "a": {"b": {"c": [1, 2, 3]}}}`, `{"a": {"b": {"c": [2]}}}`, 0},
		{`{"x": {"$elemMatch": {"$gt": 1, "$lt": 3}}}`, `{"x.$": 1, "_id": 0}`, `{"x": [1, 2, 3]}`, `{"x": [2]}`, 0},
		{`{"$and": [{"a": 1}, {"a": 2}, {"a": 3}]}`, `{"b.$": 1, "_id": 0}`, `{"a": [1, 2, 3], "b": [4, 5, 6]}`, `{"b": [6]}`, 0},
		{`{"a": {"$in": [2, 3]}}`, `{"b.$": 1, "_id": 0}`, `{"a": [1, 2, 3], "b": [4, 5, 6]}`, `{"b": [5]}`, 0},
		{`{"$or": [{"a": 2}, {"a": 3}]}`, `{"b.$": 1, "_id": 0}`, `{"a": [1, 2, 3], "b": [4, 5, 6]}`, `{"b": [5]}`, 0},
		{`{}`, `{"x.$": 1}`, `{"x": [{"a": 1}]}`, "", 51246},
		{`{"b": [4, 5, 6]}`, `{"c.$": 1}`, `{"a": [1, 2, 3], "b": [4, 5, 6], "c": [7, 8, 9]}`, "", 51246},
		{`{"$nor": [{"a": -1}, {"a": -2}]}`, `{"a.$": 1}`, `{"a": [1, 2, 3]}`, "", 51246},
		{`{"a": 3}`, `{"b.$": 1}`, `{"a": [1, 2, 3], "b": [4]}`, "", 51247},
		// The element is taken from the array the projection made: where a
		// nested inclusion dropped the scalars, the index may be past its
		// end (FerretDB's PositionalOperatorMismatch).
		{`{"v": 42}`, `{"v.foo.$": 1}`, `{"_id": 1, "v": [42]}`, "", 51247},
		{`{"v": 42}`, `{"v.foo.$": 1}`, `{"_id": 1, "v": 42}`, `{"_id": 1}`, 0},
		{`{"a.b": 1}`, `{"a.b.$": 1, "_id": 0}`, `{"a": [5, {"b": 1, "c": 2}]}`, "", 51247},
		{`{"a.b": 1}`, `{"a.b.$": 1, "_id": 0}`, `{"a": [{"b": 1, "c": 2}, 5, {"b": 2}]}`, `{"a": [{"b": 1}]}`, 0},
		{`{"a.b": 2}`, `{"a.b.$": 1, "_id": 0}`, `{"a": [{"b": 1, "c": 2}, {"c": 3}, {"b": 2}]}`, `{"a": [{"b": 2}]}`, 0},
		{`{"a.b": 2}`, `{"a": {"b.$": 1}, "_id": 0}`, `{"a": [{"b": 1, "c": 2}, {"b": 2}]}`, `{"a": [{"b": 2}]}`, 0},
		// A value on the path that is neither a document nor an array is
		// passed over: the next name is looked up in the same document, and
		// the element found there is set at the path (MongoDB's walk).
		{`{"b": 2}`, `{"a.b.$": 1, "b": 1, "_id": 0}`, `{"a": 5, "b": [1, 2]}`, `{"b": [1, 2], "a": {"b": [2]}}`, 0},
		{`{"x": 1}`, `{"a.b.$": 1, "_id": 0}`, `{"x": 1, "a": {"b": 7}}`, `{"a": {"b": 7}}`, 0},
	}
	for _, tt := range tests {
		what := tt.filter + " " + tt.proj
		f, err := Compile(ext(t, tt.filter))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		p, err := CompileProjection(ext(t, tt.proj))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		doc := ext(t, tt.doc)
		ok, pos := f.MatchPositional(doc)
		if !ok {
			t.Errorf("%s: filter does not match %s", what, tt.doc)
			continue
		}
		got, err := p.Apply(doc, pos)
		if tt.code != 0 {
			checkErr(t, what, err, tt.code, "")
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", what, err)
		} else if want := ext(t, tt.want); !bytesEqual(got, want) {
			t.Errorf("%s: got %s, want %s", what, got, want)
		}
	}
}
