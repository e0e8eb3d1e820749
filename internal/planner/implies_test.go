package planner

import (
	"testing"

	"github.com/folio-db/folio/internal/query"
)

// TestImplies checks when a query provably stays inside a partial index's
// filter, so that the planner may use the index.
func TestImplies(t *testing.T) {
	tests := []struct {
		filter, partial string
		want            bool
	}{
		{`{"user": 1, "state": "CART"}`, `{"state": "CART"}`, true},
		{`{"user": 1, "state": "DONE"}`, `{"state": "CART"}`, false},
		{`{"user": 1}`, `{"state": "CART"}`, false},
		{`{"a": 5}`, `{"a": {"$exists": true}}`, true},
		{`{"a": null}`, `{"a": {"$exists": true}}`, false},
		{`{"a": {"$gt": 10}}`, `{"a": {"$exists": true}}`, true},
		{`{"a": 15}`, `{"a": {"$gte": 10}}`, true},
		{`{"a": 5}`, `{"a": {"$gte": 10}}`, false},
		{`{"a": "x"}`, `{"a": {"$gte": 10}}`, false},
		{`{"a": {"$gt": 20}}`, `{"a": {"$gt": 10}}`, true},
		{`{"a": {"$gt": 10}}`, `{"a": {"$gte": 10}}`, true},
		{`{"a": {"$gte": 10}}`, `{"a": {"$gt": 10}}`, false},
		// The same comparison implies itself (isSubsetOf: the two
		// expressions are equivalent), within one canonical type only.
		{`{"a": {"$gt": 10}}`, `{"a": {"$gt": 10}}`, true},
		{`{"a": {"$gte": 10}}`, `{"a": {"$gte": 10.0}}`, true},
		{`{"a": {"$lt": 10}}`, `{"a": {"$lt": 10}}`, true},
		{`{"a": {"$lte": 10}}`, `{"a": {"$lt": 10}}`, false},
		{`{"a": {"$lt": 9}}`, `{"a": {"$lte": 10}}`, true},
		{`{"a": {"$gt": "x"}}`, `{"a": {"$gt": 10}}`, false},
		{`{"a": {"$gt": "x"}}`, `{"a": {"$gt": "x"}}`, true},
		{`{"a": {"$gte": 11}}`, `{"a": {"$gt": 10}}`, true},
		{`{"a": {"$lte": 9}}`, `{"a": {"$lt": 10}}`, true},
		{`{"a": {"$lte": 9}}`, `{"a": {"$gt": 1}}`, false},
		{`{"a": {"$gt": 11}}`, `{"a": {"$lte": 20}}`, false},
		{`{"a": {"$lt": 20}}`, `{"a": {"$gt": 10}}`, false},
		{`{"a": 1, "b": {"$gt": 3}}`, `{"a": 1, "b": {"$gt": 2}}`, true},
		// MongoDB's optimizer makes this $or of equalities on a a $in
		// (OrMatchExpression's rewrite), which implies a exists.
		{`{"$or": [{"a": 1}, {"a": 2}]}`, `{"a": {"$exists": true}}`, true},
		{`{"$or": [{"a": 1}, {"b": 2}]}`, `{"a": {"$exists": true}}`, false},
		// A filter's $in and $or (MongoDB's expression::isSubsetOf; jstest
		// core/index/index_partial_read_ops.js).
		{`{"x": 2, "a": 3}`, `{"a": {"$in": [3, 5]}}`, true},
		{`{"x": 2, "a": 4}`, `{"a": {"$in": [3, 5]}}`, false},
		{`{"a": {"$in": [3, 5]}}`, `{"a": {"$in": [5, 7, 3]}}`, true},
		{`{"a": {"$in": [3, 8]}}`, `{"a": {"$in": [3, 5]}}`, false},
		{`{"a": {"$lt": 6}}`, `{"a": {"$in": [3, 5]}}`, false},
		{`{"a": {"$in": [3, 5]}}`, `{"a": {"$gte": 3}}`, true},
		{`{"a": {"$in": [3, "x"]}}`, `{"a": {"$gte": 3}}`, false},
		{`{"a": {"$in": [3, 5]}}`, `{"a": 3}`, false},
		{`{"a": {"$in": [null, 1]}}`, `{"a": {"$exists": true}}`, false},
		{`{"a": {"$in": [{"$regularExpression": {"pattern": "x", "options": ""}}]}}`, `{"a": {"$exists": true}}`, true},
		{`{"a": {"$in": [{"$regularExpression": {"pattern": "x", "options": ""}}]}}`, `{"a": {"$gte": ""}}`, false},
		{`{"a": {"$in": [{"$regularExpression": {"pattern": "x", "options": ""}}]}}`, `{"a": {"$in": [1, {"$regularExpression": {"pattern": "x", "options": ""}}]}}`, true},
		{`{"x": 4, "a": 3}`, `{"$or": [{"a": 3}, {"$and": [{"a": 5}, {"b": 5}]}]}`, true},
		{`{"x": 5, "a": 5, "b": 5}`, `{"$or": [{"a": 3}, {"$and": [{"a": 5}, {"b": 5}]}]}`, true},
		{`{"x": 2, "a": 5}`, `{"$or": [{"a": 3}, {"$and": [{"a": 5}, {"b": 5}]}]}`, false},
		{`{"x": 3, "a": 5, "b": 1}`, `{"$or": [{"a": 3}, {"$and": [{"a": 5}, {"b": 5}]}]}`, false},
		{`{"a": 1, "b": 2}`, `{"$and": [{"a": 1}, {"$or": [{"b": 2}, {"c": 3}]}]}`, true},
		{`{"a": 1, "c": 4}`, `{"$and": [{"a": 1}, {"$or": [{"b": 2}, {"c": 3}]}]}`, false},
	}
	for _, tc := range tests {
		f, err := query.Compile(ext(t, tc.filter))
		if err != nil {
			t.Fatal(err)
		}
		p, err := query.Compile(ext(t, tc.partial))
		if err != nil {
			t.Fatal(err)
		}
		if got := implies(constraintLeaves(f.Root()), p); got != tc.want {
			t.Errorf("%s implies %s = %v, want %v", tc.filter, tc.partial, got, tc.want)
		}
	}
}
