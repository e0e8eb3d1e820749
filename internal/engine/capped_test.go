package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// cappedIDs lists the _ids of a capped collection in natural order (or
// reversed).
func cappedIDs(t *testing.T, e *Engine, coll string, sort string) []string {
	t.Helper()
	o := FindOptions{}
	if sort != "" {
		o.Sort = ext(t, sort)
	}
	cur, err := e.Find("test", coll, o)
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	var ids []string
	for {
		doc, err := cur.Next()
		if err != nil {
			t.Fatal(err)
		}
		if doc == nil {
			return ids
		}
		ids = append(ids, doc.Lookup("_id").StringValue())
	}
}

// TestCappedLimits checks that max and size evict the oldest documents at
// every insert, that reads follow insertion order both ways, that an
// update may change a document's size (MongoDB refuses it only below FCV
// 5.3), the totals following it, and that a document larger than the size
// limit is kept alone.
func TestCappedLimits(t *testing.T) {
	e := newTestEngine(t)
	if err := e.CreateCollection("test", "m", CollectionOptions{Capped: true, Size: 1 << 20, Max: 3}); err != nil {
		t.Fatal(err)
	}
	mustCreateIndex(t, e, "m", `{"n": 1}`, false)
	for i, id := range []string{"e", "d", "c", "b", "a"} {
		if _, _, err := e.Insert("test", "m", []bson.Raw{ext(t, fmt.Sprintf(`{"_id": %q, "n": %d}`, id, i))}, true, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if got := cappedIDs(t, e, "m", ""); !slices.Equal(got, []string{"c", "b", "a"}) {
		t.Fatalf("natural order %v", got)
	}
	if got := cappedIDs(t, e, "m", `{"$natural": -1}`); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("reverse natural order %v", got)
	}
	mustValidate(t, e, "m")
	if _, err := e.Update("test", "m", UpdateSpec{Filter: ext(t, `{"_id": "a"}`), Update: ext(t, `{"$set": {"grown": "yes"}}`)}); err != nil {
		t.Fatalf("size-changing update: %v", err)
	}
	mustValidate(t, e, "m")
	if _, err := e.Delete("test", "m", ext(t, `{"_id": "b"}`), 1, bson.RawValue{}, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := cappedIDs(t, e, "m", ""); !slices.Equal(got, []string{"c", "a"}) {
		t.Fatalf("after delete %v", got)
	}

	// 250-byte documents in a 1024-byte collection: four fit.
	if err := e.CreateCollection("test", "s", CollectionOptions{Capped: true, Size: 1024}); err != nil {
		t.Fatal(err)
	}
	pad := string(make([]byte, 220))
	for i := 0; i < 10; i++ {
		doc, _ := bson.Marshal(bson.D{{Key: "_id", Value: fmt.Sprint(i)}, {Key: "p", Value: pad}})
		if _, _, err := e.Insert("test", "s", []bson.Raw{doc}, true, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if got := cappedIDs(t, e, "s", ""); !slices.Equal(got, []string{"6", "7", "8", "9"}) {
		t.Fatalf("size-limited %v", got)
	}
	// Growing "9" by 300 bytes puts the collection over its size; the next
	// insert evicts the oldest until it fits: "9" and "10" remain.
	if _, err := e.Update("test", "s", UpdateSpec{Filter: ext(t, `{"_id": "9"}`), Update: ext(t, fmt.Sprintf(`{"$set": {"q": %q}}`, strings.Repeat("q", 300)))}); err != nil {
		t.Fatal(err)
	}
	doc, _ := bson.Marshal(bson.D{{Key: "_id", Value: "10"}, {Key: "p", Value: pad}})
	if _, _, err := e.Insert("test", "s", []bson.Raw{doc}, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := cappedIDs(t, e, "s", ""); !slices.Equal(got, []string{"9", "10"}) {
		t.Fatalf("after a grown document %v", got)
	}
	// A document larger than the whole collection is kept, alone.
	big, _ := bson.Marshal(bson.D{{Key: "_id", Value: "big"}, {Key: "p", Value: string(make([]byte, 2000))}})
	if _, _, err := e.Insert("test", "s", []bson.Raw{big}, true, WriteOptions{}); err != nil {
		t.Fatalf("oversized document: %v", err)
	}
	if got := cappedIDs(t, e, "s", ""); !slices.Equal(got, []string{"big"}) {
		t.Fatalf("after an oversized document %v", got)
	}
	mustValidate(t, e, "s")
}

// TestTailableCursor checks that a tailable cursor returns documents
// inserted after it caught up, and that Wait wakes on an insert.
func TestTailableCursor(t *testing.T) {
	e := newTestEngine(t)
	if err := e.CreateCollection("test", "t", CollectionOptions{Capped: true, Size: 4096}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Tail("test", "plain", FindOptions{}); !mongoerr.Is(err, mongoerr.BadValue) {
		t.Fatalf("tailing a missing collection: %v", err)
	}
	insert := func(id int) {
		if _, _, err := e.Insert("test", "t", []bson.Raw{ext(t, fmt.Sprintf(`{"_id": %d}`, id))}, true, WriteOptions{}); err != nil {
			t.Error(err)
		}
	}
	insert(1)
	tc, err := e.Tail("test", "t", FindOptions{Filter: ext(t, `{"_id": {"$ne": 3}}`)})
	if err != nil {
		t.Fatal(err)
	}
	next := func() bson.Raw {
		doc, err := tc.Next()
		if err != nil {
			t.Fatal(err)
		}
		return doc
	}
	if d := next(); d == nil || d.Lookup("_id").Int32() != 1 {
		t.Fatalf("first %v", d)
	}
	if d := next(); d != nil {
		t.Fatalf("caught up, got %v", d)
	}
	go func() {
		insert(3)
		insert(4)
	}()
	for {
		tc.Wait(context.Background(), 10*time.Second)
		if d := next(); d != nil {
			if id := d.Lookup("_id").Int32(); id != 4 {
				t.Fatalf("tailed %d, want 4 (3 is filtered out)", id)
			}
			return
		}
	}
}
