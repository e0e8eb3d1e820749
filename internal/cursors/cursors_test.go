package cursors

import (
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// source is a Source of n empty documents that records its Close.
type source struct {
	n      int
	closed bool
}

func (s *source) Next() (bson.Raw, error) {
	if s.n == 0 {
		return nil, nil
	}
	s.n--
	return bson.Raw{5, 0, 0, 0, 0}, nil
}

func (s *source) Close() error { s.closed = true; return nil }

// TestRegistryLifecycle checks checkout rules (namespace, in use, unknown
// ids as 43), that killing or reaping closes a cursor's source exactly when
// it is not checked out, and that a cursor killed while checked out is
// closed when it is returned.
func TestRegistryLifecycle(t *testing.T) {
	now := time.Unix(1000, 0)
	r := NewRegistry(time.Minute)
	r.now = func() time.Time { return now }

	src := &source{n: 3}
	c := New("db", "coll", src)
	r.Add(c)
	if _, err := r.Checkout(c.ID, "db", "coll"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Checkout(c.ID, "db", "coll"); err == nil {
		t.Fatal("a cursor in use was checked out twice")
	}
	r.Return(c)
	if _, err := r.Checkout(c.ID, "db", "other"); !mongoerr.Is(err, mongoerr.Unauthorized) {
		t.Fatalf("checkout from another namespace: %v", err)
	}
	if _, err := r.Checkout(c.ID+1, "db", "coll"); !mongoerr.Is(err, mongoerr.CursorNotFound) {
		t.Fatalf("checkout of an unknown id: %v", err)
	}
	got, err := r.Checkout(c.ID, "db", "coll")
	if err != nil || got != c {
		t.Fatal(got, err)
	}
	if !r.Kill(c.ID) || src.closed {
		t.Fatal("kill of a checked-out cursor must wait for its return")
	}
	r.Return(c)
	if !src.closed || r.Len() != 0 {
		t.Fatal("a killed cursor was not closed on return")
	}

	idle, busy := &source{}, &source{}
	r.Add(New("db", "coll", idle))
	busyCursor := New("db", "coll", busy)
	r.Add(busyCursor)
	if _, err := r.Checkout(busyCursor.ID, "db", "coll"); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Minute)
	if n := r.Reap(); n != 1 || !idle.closed || busy.closed {
		t.Fatalf("reaped %d: idle closed %v, busy closed %v", n, idle.closed, busy.closed)
	}
	r.Return(busyCursor)

	owned := &source{}
	oc := New("db", "coll", owned)
	oc.Owner = "txn"
	r.Add(oc)
	r.KillOwned("txn")
	if !owned.closed {
		t.Fatal("KillOwned left the transaction's cursor open")
	}
	r.CloseAll()
	if !busy.closed || r.Len() != 0 {
		t.Fatal("CloseAll left cursors open")
	}
}

// TestUnread checks that a document put back is returned first.
func TestUnread(t *testing.T) {
	c := New("db", "coll", &source{n: 1})
	doc, _ := c.Next()
	c.Unread(doc)
	if again, _ := c.Next(); again == nil {
		t.Fatal("unread document lost")
	}
	if end, _ := c.Next(); end != nil {
		t.Fatal("more documents than the source had")
	}
}

// TestConcurrentRegistry opens, checks out, returns and kills cursors from
// many goroutines, for the race detector.
func TestConcurrentRegistry(t *testing.T) {
	r := NewRegistry(time.Minute)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 200 {
				c := New("db", "coll", &source{n: 2})
				r.Add(c)
				if got, err := r.Checkout(c.ID, "db", "coll"); err == nil {
					r.Return(got)
				}
				r.Kill(c.ID)
				r.Reap()
			}
		})
	}
	wg.Wait()
	if r.Len() != 0 {
		t.Fatalf("%d cursors left", r.Len())
	}
}
