package query

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// TestCheckPartial: the partial filters MongoDB builds an index with, and
// the ones it refuses with CannotCreateIndex.
func TestCheckPartial(t *testing.T) {
	for _, tc := range []struct {
		filter string
		ok     bool
	}{
		{`{}`, true},
		{`{"a": 1}`, true},
		{`{"a": null, "b": {"$gte": 1, "$lt": 5}}`, true},
		{`{"a": {"$exists": true}, "b": {"$type": "string"}}`, true},
		{`{"a": {"$in": [1, 2]}}`, true},
		{`{"$or": [{"a": 1}, {"b": {"$gt": 2}}]}`, true},
		{`{"$and": [{"$or": [{"a": 1}, {"$and": [{"b": 1}]}]}]}`, true},
		{`{"a": {"$all": [1, 2]}}`, true},
		{`{"loc": {"$geoWithin": {"$box": [[0, 0], [1, 1]]}}}`, true},
		{`{"a": {"$ne": 1}}`, false},
		{`{"a": {"$nin": [1]}}`, false},
		{`{"a": {"$not": {"$gt": 1}}}`, false},
		{`{"a": {"$exists": false}}`, false},
		{`{"$nor": [{"a": 1}]}`, false},
		{`{"a": {"$regex": "x"}}`, false},
		{`{"a": {"$size": 2}}`, false},
		{`{"a": {"$mod": [2, 0]}}`, false},
		{`{"a": {"$elemMatch": {"$gt": 1}}}`, false},
		{`{"a": {"$bitsAllSet": 1}}`, false},
		{`{"$or": [{"a": {"$ne": 1}}]}`, false},
		{`{"$and": [{"$or": [{"$and": [{"$or": [{"a": 1}, {"b": 1}]}, {"c": 1}]}, {"d": 1}]}, {"e": 1}]}`, false},
		{`{"$and": [{"$and": [{"$and": [{"x": 3}]}]}]}`, true},
		{`{"$and": [{"$and": [{"$and": [{"$and": [{"x": 3}]}]}]}]}`, false},
	} {
		var doc bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(tc.filter), false, &doc); err != nil {
			t.Fatal(err)
		}
		f, err := Compile(doc)
		if err != nil {
			t.Fatalf("%s: %v", tc.filter, err)
		}
		err = f.CheckPartial()
		if tc.ok && err != nil || !tc.ok && !mongoerr.Is(err, mongoerr.CannotCreateIndex) {
			t.Errorf("%s: %v, want accepted %v", tc.filter, err, tc.ok)
		}
	}
}

// TestFilterEquivalent: the partial filters an index signature takes for
// one (MongoDB compares them normalized: MatchExpression::equivalent after
// parseAndNormalize).
func TestFilterEquivalent(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{`{"a": {"$gt": 2}}`, `{"a": {"$gt": 2}}`, true},
		{`{"a": {"$gt": 2}}`, `{"$and": [{"a": {"$gt": 2}}]}`, true},
		{`{"a": {"$gt": 2}}`, `{"a": {"$gt": 2.0}}`, true},
		{`{"a": {"$gt": 2}}`, `{"a": {"$gte": 2}}`, false},
		{`{"a": {"$gt": 2}}`, `{"a": {"$gt": "2"}}`, false},
		{`{"a": 1, "b": 2}`, `{"b": 2, "a": 1}`, true},
		{`{"a": 1, "b": 2}`, `{"$and": [{"a": 1}, {"$and": [{"b": 2}]}]}`, true},
		{`{"a": 1, "b": 2}`, `{"a": 1}`, false},
		{`{"$or": [{"a": 1}, {"b": 2}]}`, `{"$or": [{"b": 2}, {"$or": [{"a": 1}]}]}`, true},
		{`{"$or": [{"a": 1}, {"b": 2}]}`, `{"a": 1, "b": 2}`, false},
		{`{"a": {"$in": [1, 2]}}`, `{"a": {"$in": [2, 1, 2]}}`, true},
		{`{"a": {"$in": [1, 2]}}`, `{"a": {"$in": [1, 3]}}`, false},
		{`{"a": {"$type": ["string", "int"]}}`, `{"a": {"$type": [16, "string"]}}`, true},
		{`{"a": {"$exists": true}}`, `{"a": {"$exists": 1}}`, true},
		{`{"a": 1}`, `{"b": 1}`, false},
		// index_signature.js: a $and's clauses are sorted by kind and
		// path, not by operand; an $or of equalities on one path is a $in
		{`{"a": {"$gt": 0, "$lt": 10}, "b": "blah"}`, `{"$and": [{"b": "blah"}, {"a": {"$lt": 10}}, {"a": {"$gt": 0}}]}`, true},
		{`{"$and": [{"a": {"$type": 1}}, {"a": {"$type": 2}}]}`, `{"$and": [{"a": {"$type": 2}}, {"a": {"$type": 1}}]}`, false},
		{`{"$or": [{"a": 1}, {"a": 2}]}`, `{"$or": [{"a": 2}, {"a": 1}]}`, true},
		{`{"$or": [{"a": 1}, {"b": {"$gt": 2}}]}`, `{"$or": [{"b": {"$gt": 2}}, {"a": 1}]}`, true},
	} {
		var a, b bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(tc.a), false, &a); err != nil {
			t.Fatal(err)
		}
		if err := bson.UnmarshalExtJSON([]byte(tc.b), false, &b); err != nil {
			t.Fatal(err)
		}
		fa, err := Compile(a)
		if err != nil {
			t.Fatal(err)
		}
		fb, err := Compile(b)
		if err != nil {
			t.Fatal(err)
		}
		if got := fa.Equivalent(fb); got != tc.same {
			t.Errorf("%s vs %s: %v, want %v", tc.a, tc.b, got, tc.same)
		}
		if got := fb.Equivalent(fa); got != tc.same {
			t.Errorf("%s vs %s: %v, want %v", tc.b, tc.a, got, tc.same)
		}
	}
}
