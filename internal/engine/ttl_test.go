package engine

import (
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestExpireTTL checks that the TTL pass deletes exactly the documents
// whose date (or one of whose dates) is older than expireAfterSeconds, and
// keeps documents without a date.
func TestExpireTTL(t *testing.T) {
	e := newTestEngine(t)
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	if _, err := e.CreateIndexes("test", "s", []IndexSpec{{Key: ext(t, `{"at": 1}`), ExpireAfter: 3600}}, nil); err != nil {
		t.Fatal(err)
	}
	ms := func(d time.Duration) int64 { return now.Add(d).UnixMilli() }
	docs := []bson.Raw{
		ext(t, fmt.Sprintf(`{"_id": "old", "at": {"$date": {"$numberLong": "%d"}}}`, ms(-2*time.Hour))),
		ext(t, fmt.Sprintf(`{"_id": "fresh", "at": {"$date": {"$numberLong": "%d"}}}`, ms(-30*time.Minute))),
		ext(t, fmt.Sprintf(`{"_id": "array", "at": [{"$date": {"$numberLong": "%d"}}, {"$date": {"$numberLong": "%d"}}]}`, ms(0), ms(-3*time.Hour))),
		ext(t, `{"_id": "string", "at": "yesterday"}`),
		ext(t, `{"_id": "none"}`),
	}
	if _, _, err := e.Insert("test", "s", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	n, err := e.ExpireTTL(now)
	if err != nil || n != 2 {
		t.Fatalf("expired %d (%v), want 2", n, err)
	}
	left, err := e.Count("test", "s", FindOptions{})
	if err != nil || left != 3 {
		t.Fatalf("%d left (%v), want 3", left, err)
	}
	mustValidate(t, e, "s")
}
