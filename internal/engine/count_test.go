package engine

import (
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
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

// TestDeadline checks that a read past its deadline (maxTimeMS) fails with
// MaxTimeMSExpired: find, sorted find and count alike.
func TestDeadline(t *testing.T) {
	e := newTestEngine(t)
	var docs []bson.Raw
	for i := range 2 * deadlineCheckEvery {
		docs = append(docs, ext(t, fmt.Sprintf(`{"_id": %d}`, i)))
	}
	if _, _, err := e.Insert("test", "d", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Second)
	for _, o := range []FindOptions{{Deadline: past}, {Deadline: past, Sort: ext(t, `{"x": 1}`)}} {
		cur, err := e.Find("test", "d", o)
		for err == nil {
			var doc bson.Raw
			if doc, err = cur.Next(); doc == nil && err == nil {
				t.Fatal("read to the end past the deadline")
			}
		}
		if !mongoerr.Is(err, mongoerr.MaxTimeMSExpired) {
			t.Fatalf("%+v: %v, want 50", o, err)
		}
	}
	if _, err := e.Count("test", "d", FindOptions{Deadline: past}); !mongoerr.Is(err, mongoerr.MaxTimeMSExpired) {
		t.Fatalf("count: %v, want 50", err)
	}
}
