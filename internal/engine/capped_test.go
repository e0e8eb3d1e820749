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

// TestTailableCursorAfterWrites: a tailable cursor that returned part of
// what it read resumes at a getMore (Restore) from the last document it
// returned, at the latest state: a document deleted or updated since is
// not returned as it was read, and one whose returned position (the last
// document returned, or the last entry examined when none matched) was
// deleted fails with CappedPositionLost, as MongoDB's tailable collection
// scan restores its position exactly.
func TestTailableCursorAfterWrites(t *testing.T) {
	tests := []struct {
		name   string
		filter string
		read   int
		// write is an update {_id: id} with $set x: 1, or a delete
		write string
		id    int
		want  string // the _ids and x of the rest, or "lost" and the record id the error names
	}{
		{"delete ahead", `{}`, 2, "delete", 3, "[2 4 5]"},
		{"update ahead", `{}`, 2, "update", 3, "[2 3x 4 5]"},
		{"delete position", `{}`, 2, "delete", 1, "lost RecordId(2)"},
		{"delete before position", `{}`, 2, "delete", 0, "[2 3 4 5]"},
		{"position past non-matching entries", `{"_id": {"$lt": 1}}`, 1, "delete", 0, "[]"},
		{"examined position deleted", `{"_id": {"$lt": 1}}`, 1, "delete", 5, "lost RecordId(6)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEngine(t)
			if err := e.CreateCollection("test", "tw", CollectionOptions{Capped: true, Size: 1 << 20}); err != nil {
				t.Fatal(err)
			}
			for id := range 6 {
				if _, _, err := e.Insert("test", "tw", []bson.Raw{ext(t, fmt.Sprintf(`{"_id": %d}`, id))}, true, WriteOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			tc0, err := e.Tail("test", "tw", FindOptions{Filter: ext(t, tc.filter)})
			if err != nil {
				t.Fatal(err)
			}
			for range tc.read {
				if d, err := tc0.Next(); d == nil || err != nil {
					t.Fatalf("first documents: %v %v", d, err)
				}
			}
			if tc.read == 1 {
				// caught up: every entry examined
				if d, err := tc0.Next(); d != nil || err != nil {
					t.Fatalf("caught up, got %v %v", d, err)
				}
			}
			f := ext(t, fmt.Sprintf(`{"_id": %d}`, tc.id))
			if tc.write == "delete" {
				_, err = e.Delete("test", "tw", f, 1, bson.RawValue{}, WriteOptions{})
			} else {
				_, err = e.Update("test", "tw", UpdateSpec{Filter: f, Update: ext(t, `{"$set": {"x": 1}}`)})
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := tc0.Restore(); err != nil {
				t.Fatal(err)
			}
			var got []string
			for {
				d, err := tc0.Next()
				if mongoerr.Is(err, mongoerr.CappedPositionLost) {
					msg := err.Error()
					got = append(got, "lost "+msg[strings.LastIndex(msg, " ")+1:])
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if d == nil {
					break
				}
				s := fmt.Sprint(d.Lookup("_id").Int32())
				if _, err := d.LookupErr("x"); err == nil {
					s += "x"
				}
				got = append(got, s)
			}
			if s := fmt.Sprint(got); s != tc.want && !(strings.HasPrefix(tc.want, "lost") && s == "["+tc.want+"]") && !(tc.want == "[]" && len(got) == 0) {
				t.Errorf("after the getMore %v, want %s", got, tc.want)
			}
		})
	}
}

// TestCappedRefusesTTL checks MongoDB 7.0's refusal of a TTL index on a
// capped collection: createIndexes fails with CannotCreateIndex (67), a
// plain index is still built (collMod's refusal is the command's:
// TestCollModCappedTTL).
func TestCappedRefusesTTL(t *testing.T) {
	e := newTestEngine(t)
	if err := e.CreateCollection("test", "ttl", CollectionOptions{Capped: true, Size: 4096}); err != nil {
		t.Fatal(err)
	}
	_, err := e.CreateIndexes("test", "ttl", []IndexSpec{{Key: ext(t, `{"t": 1}`), ExpireAfter: 10}}, nil)
	if !mongoerr.Is(err, mongoerr.CannotCreateIndex) || !strings.Contains(err.Error(), "Cannot create TTL index on a capped collection") {
		t.Fatalf("TTL index on a capped collection: %v", err)
	}
	mustCreateIndex(t, e, "ttl", `{"t": 1}`, false)
	for _, ix := range e.Collection("test", "ttl").Indexes() {
		if ix.ExpireAfter >= 0 {
			t.Fatalf("index %s has a TTL", ix.Name)
		}
	}
}

// TestTailableCursorWaitEndsAtDrop: a Wait on a tailable cursor returns as
// soon as its collection leaves the catalog, dropped or renamed away, and
// the next read fails with QueryPlanKilled, as MongoDB's capped insert
// notifier wakes an awaitData getMore when the collection goes.
func TestTailableCursorWaitEndsAtDrop(t *testing.T) {
	for _, how := range []string{"drop", "rename"} {
		t.Run(how, func(t *testing.T) {
			e := newTestEngine(t)
			if err := e.CreateCollection("test", "t", CollectionOptions{Capped: true, Size: 4096}); err != nil {
				t.Fatal(err)
			}
			tc, err := e.Tail("test", "t", FindOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if d, err := tc.Next(); d != nil || err != nil {
				t.Fatalf("empty collection: %v, %v", d, err)
			}
			done := make(chan error, 1)
			go func() {
				time.Sleep(50 * time.Millisecond)
				var err error
				if how == "drop" {
					_, err = e.DropCollection("test", "t")
				} else {
					err = e.RenameCollection("test", "t", "test", "u", false)
				}
				done <- err
			}()
			start := time.Now()
			tc.Wait(context.Background(), 10*time.Second)
			waited := time.Since(start)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if waited > 5*time.Second {
				t.Fatalf("Wait returned after %v, not at the %s", waited, how)
			}
			if _, err := tc.Next(); !mongoerr.Is(err, mongoerr.QueryPlanKilled) {
				t.Fatalf("read after the %s: %v, want QueryPlanKilled", how, err)
			}
		})
	}
}

// TestTailableCursorMetadata: a tailable find is a collection scan
// (MongoDB's planner plans nothing else for one), whose documents carry
// their record ids and no index key: showRecordId ends each with the
// record id a plain find gives it, {$meta: "recordId"} projects it, and
// returnKey makes each document {} (showRecordId adding nothing to it),
// in the first batch as in those read after a getMore.
func TestTailableCursorMetadata(t *testing.T) {
	e := newTestEngine(t)
	if err := e.CreateCollection("test", "tm", CollectionOptions{Capped: true, Size: 4096}); err != nil {
		t.Fatal(err)
	}
	id := 0
	insert := func() {
		t.Helper()
		id++
		if _, _, err := e.Insert("test", "tm", []bson.Raw{ext(t, fmt.Sprintf(`{"_id": %d}`, id))}, true, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	readAll := func(c interface{ Next() (bson.Raw, error) }, render func(bson.Raw) string) []string {
		t.Helper()
		var got []string
		for {
			d, err := c.Next()
			if err != nil {
				t.Fatal(err)
			}
			if d == nil {
				return got
			}
			got = append(got, render(d))
		}
	}
	insert()
	insert()
	tests := []struct {
		name   string
		o      FindOptions
		render func(bson.Raw) string
	}{
		{"showRecordId", FindOptions{ShowRecordID: true}, func(d bson.Raw) string { return d.Lookup("$recordId").String() }},
		{"meta recordId", FindOptions{Projection: ext(t, `{"_id": 0, "r": {"$meta": "recordId"}}`)}, func(d bson.Raw) string { return d.Lookup("r").String() }},
		{"returnKey", FindOptions{ReturnKey: true, ShowRecordID: true}, func(d bson.Raw) string { return d.String() }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tail, err := e.Tail("test", "tm", tc.o)
			if err != nil {
				t.Fatal(err)
			}
			defer tail.Close()
			got := readAll(tail, tc.render)
			insert()
			if err := tail.Restore(); err != nil {
				t.Fatal(err)
			}
			got = append(got, readAll(tail, tc.render)...)
			plain, err := e.Find("test", "tm", FindOptions{ShowRecordID: true})
			if err != nil {
				t.Fatal(err)
			}
			defer plain.Close()
			want := readAll(plain, func(d bson.Raw) string { return d.Lookup("$recordId").String() })
			if tc.o.ReturnKey {
				for i := range want {
					want[i] = "{}"
				}
			}
			if !slices.Equal(got, want) || slices.Contains(got, "") {
				t.Fatalf("read %q, want %q", got, want)
			}
		})
	}
}
