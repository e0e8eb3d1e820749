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
		{`{"a": {"$lt": 20}}`, `{"a": {"$gt": 10}}`, false},
		{`{"a": 1, "b": {"$gt": 3}}`, `{"a": 1, "b": {"$gt": 2}}`, true},
		{`{"$or": [{"a": 1}, {"a": 2}]}`, `{"a": {"$exists": true}}`, false},
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
