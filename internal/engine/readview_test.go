package engine

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestReadViews checks that a held view keeps its state for the scans
// that read it, whatever is written since, and that ReleaseViews lets go
// of a view only once no scan reads it and its window has passed.
func TestReadViews(t *testing.T) {
	e := newTestEngine(t)
	if _, _, err := e.Insert("test", "v", []bson.Raw{ext(t, `{"_id": 1, "x": 1}`), ext(t, `{"_id": 2, "x": 1}`)}, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	v := e.HoldView(7)
	if again := e.HoldView(7); again != v {
		t.Fatal("a second hold of one time made another view")
	}
	if _, err := e.Update("test", "v", UpdateSpec{Filter: ext(t, `{}`), Update: ext(t, `{"$set": {"x": 2}}`), Multi: true}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.Insert("test", "v", []bson.Raw{ext(t, `{"_id": 3, "x": 2}`)}, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	ctx := WithReadView(context.Background(), v)
	for _, filter := range []string{`{}`, `{"_id": 1}`, `{"_id": {"$in": [1, 3]}}`} {
		n, err := e.Count("test", "v", FindOptions{Filter: ext(t, filter), Ctx: ctx})
		if err != nil {
			t.Fatal(err)
		}
		m, err := e.Count("test", "v", FindOptions{Filter: ext(t, `{"$and": [`+filter+`, {"x": 1}]}`), Ctx: ctx})
		if err != nil || m != n || n == 0 {
			t.Errorf("%s at the view: %d documents, %d of them as they were (%v)", filter, n, m, err)
		}
	}
	cur, err := e.Find("test", "v", FindOptions{Ctx: ctx})
	if err != nil {
		t.Fatal(err)
	}
	if left := e.ReleaseViews(time.Now().Add(time.Hour), time.Minute); left != 1 {
		t.Fatalf("a view an open cursor reads was let go (%d left)", left)
	}
	seen := len(cursorDocs(t, cur))
	cur.Close()
	if seen != 2 {
		t.Errorf("the cursor at the view read %d documents, want 2", seen)
	}
	if left := e.ReleaseViews(time.Now(), time.Minute); left != 1 {
		t.Fatalf("a view used within its window was let go (%d left)", left)
	}
	if left := e.ReleaseViews(time.Now().Add(2*time.Minute), time.Minute); left != 0 {
		t.Fatalf("%d views left after their window", left)
	}
	if _, ok := e.View(7); ok {
		t.Fatal("a view let go is still found")
	}
}

// TestReadViewsBounded checks that no more than maxHeldViews states are
// held, the least recently used going first, and a pinned one never.
func TestReadViewsBounded(t *testing.T) {
	e := newTestEngine(t)
	unpin := e.PinView(e.HoldView(0))
	for at := uint64(1); at < maxHeldViews; at++ {
		e.HoldView(at)
	}
	e.View(1) // used again: kept over 2, 3...
	for at := uint64(maxHeldViews); at < maxHeldViews+10; at++ {
		e.HoldView(at)
	}
	if n := len(e.views.byTime); n != maxHeldViews {
		t.Fatalf("%d views held, want %d", n, maxHeldViews)
	}
	for at, want := range map[uint64]bool{0: true, 1: true, 2: false, 11: false, 12: true, maxHeldViews + 9: true} {
		if _, ok := e.View(at); ok != want {
			t.Errorf("view %d held: %v, want %v", at, ok, want)
		}
	}
	unpin()
}
