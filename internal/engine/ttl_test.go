package engine

import (
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestExpireTTL checks that the TTL pass deletes exactly the documents
// whose date (or one of whose dates) is older than expireAfterSeconds, and
// keeps documents without a date; a hidden TTL index expires them too, as
// in MongoDB.
func TestExpireTTL(t *testing.T) {
	for _, hidden := range []bool{false, true} {
		e := newTestEngine(t)
		now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
		if _, err := e.CreateIndexes("test", "s", []IndexSpec{{Key: ext(t, `{"at": 1}`), ExpireAfter: 3600, Hidden: hidden}}, nil); err != nil {
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
			t.Fatalf("hidden %v: expired %d (%v), want 2", hidden, n, err)
		}
		left, err := e.Count("test", "s", FindOptions{})
		if err != nil || left != 3 {
			t.Fatalf("hidden %v: %d left (%v), want 3", hidden, left, err)
		}
		mustValidate(t, e, "s")
	}
}

// TestExpireClustered: a clustered collection with expireAfterSeconds
// expires the documents whose _id is an older date (one exactly
// expireAfterSeconds old included), and only those.
func TestExpireClustered(t *testing.T) {
	e := newTestEngine(t)
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	ttl := int64(3600)
	if err := e.CreateCollection("test", "clu", CollectionOptions{ClusteredIndex: ext(t, `{"v": 2, "key": {"_id": 1}, "name": "_id_", "unique": true}`), ExpireAfterSeconds: &ttl}); err != nil {
		t.Fatal(err)
	}
	ms := func(d time.Duration) int64 { return now.Add(d).UnixMilli() }
	docs := []bson.Raw{
		ext(t, fmt.Sprintf(`{"_id": {"$date": {"$numberLong": "%d"}}, "v": "old"}`, ms(-2*time.Hour))),
		ext(t, fmt.Sprintf(`{"_id": {"$date": {"$numberLong": "%d"}}, "v": "edge"}`, ms(-time.Hour))),
		ext(t, fmt.Sprintf(`{"_id": {"$date": {"$numberLong": "%d"}}, "v": "fresh"}`, ms(-10*time.Minute))),
		ext(t, `{"_id": "not a date"}`),
	}
	if _, _, err := e.Insert("test", "clu", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	n, err := e.ExpireTTL(now)
	if err != nil || n != 2 {
		t.Fatalf("expired %d (%v), want 2", n, err)
	}
	left, err := e.Count("test", "clu", FindOptions{})
	if err != nil || left != 2 {
		t.Fatalf("%d left (%v), want 2", left, err)
	}
}

// TestExpireTTLUnderWriteBlock: while user writes are blocked the TTL pass
// leaves user collections alone and still expires the internal databases'
// documents; once the block lifts, the user collection's expire too.
func TestExpireTTLUnderWriteBlock(t *testing.T) {
	e := newTestEngine(t)
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	old := ext(t, fmt.Sprintf(`{"_id": 1, "at": {"$date": {"$numberLong": "%d"}}}`, now.Add(-2*time.Hour).UnixMilli()))
	for _, db := range []string{"test", "config"} {
		if _, err := e.CreateIndexes(db, "s", []IndexSpec{{Key: ext(t, `{"at": 1}`), ExpireAfter: 60}}, nil); err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.Insert(db, "s", []bson.Raw{old}, true, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.SetUserWritesBlocked(true); err != nil {
		t.Fatal(err)
	}
	if n, err := e.ExpireTTL(now); err != nil || n != 1 {
		t.Fatalf("blocked: expired %d (%v), want the config document alone", n, err)
	}
	if err := e.SetUserWritesBlocked(false); err != nil {
		t.Fatal(err)
	}
	if n, err := e.ExpireTTL(now); err != nil || n != 1 {
		t.Fatalf("unblocked: expired %d (%v), want the test document", n, err)
	}
}

// TestExpireTTLSkipsText: a text index keeps an expireAfterSeconds, as
// MongoDB's does, and the TTL pass skips it, as MongoDB's TTL monitor
// skips a stored key pattern of more than one field ({_fts, _ftsx}), even
// for a document whose _fts field is an old date.
func TestExpireTTLSkipsText(t *testing.T) {
	e := newTestEngine(t)
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	if _, err := e.CreateIndexes("test", "tx", []IndexSpec{{Key: ext(t, `{"body": "text"}`), Name: "body_text", ExpireAfter: 3600}}, nil); err != nil {
		t.Fatal(err)
	}
	doc := ext(t, fmt.Sprintf(`{"_id": 1, "body": "words", "_fts": {"$date": {"$numberLong": "%d"}}}`, now.Add(-2*time.Hour).UnixMilli()))
	if _, _, err := e.Insert("test", "tx", []bson.Raw{doc}, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if n, err := e.ExpireTTL(now); err != nil || n != 0 {
		t.Fatalf("expired %d (%v), want 0", n, err)
	}
	mustValidate(t, e, "tx")
}

// TestExpireTTLPartial: a partial TTL index expires only the documents it
// holds, hidden or not (MongoDB's TTL monitor scans the index), its filter
// read under the index's collation; a document dated exactly
// expireAfterSeconds ago has expired (ttl.cpp's range includes its end).
func TestExpireTTLPartial(t *testing.T) {
	for _, hidden := range []bool{false, true} {
		e := newTestEngine(t)
		now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
		spec := IndexSpec{Key: ext(t, `{"at": 1}`), ExpireAfter: 3600, Hidden: hidden,
			Partial: ext(t, `{"k": "A"}`), Collation: ext(t, `{"locale": "en", "strength": 2}`)}
		if _, err := e.CreateIndexes("test", "p", []IndexSpec{spec}, nil); err != nil {
			t.Fatal(err)
		}
		ms := func(d time.Duration) int64 { return now.Add(d).UnixMilli() }
		docs := []bson.Raw{
			ext(t, fmt.Sprintf(`{"_id": "held", "k": "a", "at": {"$date": {"$numberLong": "%d"}}}`, ms(-2*time.Hour))),
			ext(t, fmt.Sprintf(`{"_id": "edge", "k": "A", "at": {"$date": {"$numberLong": "%d"}}}`, ms(-time.Hour))),
			ext(t, fmt.Sprintf(`{"_id": "fresh", "k": "A", "at": {"$date": {"$numberLong": "%d"}}}`, ms(-time.Hour+time.Millisecond))),
			ext(t, fmt.Sprintf(`{"_id": "outside", "k": "b", "at": {"$date": {"$numberLong": "%d"}}}`, ms(-2*time.Hour))),
			ext(t, fmt.Sprintf(`{"_id": "nokey", "at": {"$date": {"$numberLong": "%d"}}}`, ms(-2*time.Hour))),
		}
		if _, _, err := e.Insert("test", "p", docs, true, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		n, err := e.ExpireTTL(now)
		if err != nil || n != 2 {
			t.Fatalf("hidden %v: expired %d (%v), want held and edge", hidden, n, err)
		}
		for _, id := range []string{"fresh", "outside", "nokey"} {
			left, err := e.Count("test", "p", FindOptions{Filter: ext(t, fmt.Sprintf(`{"_id": %q}`, id))})
			if err != nil || left != 1 {
				t.Fatalf("hidden %v: %s: %d left (%v), want 1", hidden, id, left, err)
			}
		}
		mustValidate(t, e, "p")
	}
}

// TestExpireTTLSkipsSpecial: MongoDB's TTL monitor expires documents only
// through an ordinary index (getValidTTLIndex skips a special one), so a
// hashed index keeping an expireAfterSeconds deletes nothing.
func TestExpireTTLSkipsSpecial(t *testing.T) {
	e := newTestEngine(t)
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	if _, err := e.CreateIndexes("test", "h", []IndexSpec{{Key: ext(t, `{"at": "hashed"}`), ExpireAfter: 0}}, nil); err != nil {
		t.Fatal(err)
	}
	doc := ext(t, fmt.Sprintf(`{"_id": 1, "at": {"$date": {"$numberLong": "%d"}}}`, now.Add(-2*time.Hour).UnixMilli()))
	if _, _, err := e.Insert("test", "h", []bson.Raw{doc}, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if n, err := e.ExpireTTL(now); err != nil || n != 0 {
		t.Fatalf("expired %d (%v), want 0", n, err)
	}
}
