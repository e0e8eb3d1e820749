package planner

import (
	"testing"

	"github.com/folio-db/folio/internal/query"
)

// TestIDRangeDecides: a plan over _id ranges decides the filter only when
// the bounds express it exactly (as index bounds do for COUNT_SCAN).
func TestIDRangeDecides(t *testing.T) {
	for _, tc := range []struct {
		filter string
		want   bool
	}{
		{`{"_id": {"$gte": "user1"}}`, true},
		{`{"_id": {"$gt": 5, "$lt": 9}}`, true},
		{`{"_id": {"$in": [1, 2, 3]}}`, true},
		{`{"_id": {"$gte": "a"}, "x": 1}`, false},
		{`{"_id": {"$gte": null}}`, false},
		{`{"_id": {"$gt": {"$numberDouble": "NaN"}}}`, false},
		{`{"_id": {"$gte": {"$minKey": 1}}}`, true},
		{`{"_id": {"$gt": {"$minKey": 1}}}`, true},
		{`{"_id": {"$lt": {"$maxKey": 1}, "$gt": 3}}`, true},
		{`{"_id": {"$in": [1, {"$regularExpression": {"pattern": "a", "options": ""}}]}}`, false},
		{`{"_id": {"$ne": 1}}`, true},
		{`{"_id.a": {"$gte": 1}}`, false},
		{`{}`, false},
	} {
		f, err := query.Compile(ext(t, tc.filter))
		if err != nil {
			t.Fatal(err)
		}
		var got bool
		for _, p := range Candidates(testCatalog{}, Query{Filter: f}) {
			if p.Index == nil && p.Or == nil {
				got = p.IDRangeDecides()
			}
		}
		if got != tc.want {
			t.Errorf("%s: IDRangeDecides %v, want %v", tc.filter, got, tc.want)
		}
	}
}
