package engine

import (
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestCount checks count's skip and limit arithmetic, as the count command
// applies them: the matches past skip, at most limit.
func TestCount(t *testing.T) {
	e := newTestEngine(t)
	var docs []bson.Raw
	for i := range 10 {
		docs = append(docs, ext(t, fmt.Sprintf(`{"_id": %d, "even": %v}`, i, i%2 == 0)))
	}
	if _, _, err := e.Insert("test", "n", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		filter      string
		skip, limit int64
		want        int64
	}{
		{`{}`, 0, 0, 10},
		{`{"even": true}`, 0, 0, 5},
		{`{"even": true}`, 1, 0, 4},
		{`{"even": true}`, 1, 2, 2},
		{`{"even": true}`, 4, 3, 1},
		{`{"even": true}`, 9, 0, 0},
		{`{"_id": {"$gte": 3}}`, 2, 10, 5},
	}
	for _, tc := range tests {
		n, err := e.Count("test", "n", FindOptions{Filter: ext(t, tc.filter), Skip: tc.skip, Limit: tc.limit})
		if err != nil || n != tc.want {
			t.Errorf("count %s skip %d limit %d = %d (%v), want %d", tc.filter, tc.skip, tc.limit, n, err, tc.want)
		}
	}
	if n, err := e.Count("test", "missing", FindOptions{}); err != nil || n != 0 {
		t.Errorf("count of a missing collection = %d (%v)", n, err)
	}
}
