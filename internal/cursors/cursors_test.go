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

// TestRegistryLifecycle checks checkout rules (in use as 46, unknown ids
// as 43), that killing or reaping closes a cursor's source exactly when it
// is not checked out, and that a cursor killed while checked out is closed
// when it is returned.
func TestRegistryLifecycle(t *testing.T) {
	now := time.Unix(1000, 0)
	r := NewRegistry(time.Minute)
	r.now = func() time.Time { return now }

	src := &source{n: 3}
	c := New("db", "coll", src)
	r.Add(c)
	if _, err := r.Checkout(c.ID, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Checkout(c.ID, nil); !mongoerr.Is(err, mongoerr.CursorInUse) {
		t.Fatalf("a cursor in use was checked out twice: %v", err)
	}
	r.Return(c)
	if _, err := r.Checkout(c.ID+1, nil); !mongoerr.Is(err, mongoerr.CursorNotFound) {
		t.Fatalf("checkout of an unknown id: %v", err)
	}
	var interrupted error
	got, err := r.Checkout(c.ID, func(err error) { interrupted = err })
	if err != nil || got != c {
		t.Fatal(got, err)
	}
	if !r.Kill(c.ID) || src.closed {
		t.Fatal("kill of a checked-out cursor must wait for its return")
	}
	if !mongoerr.Is(interrupted, mongoerr.CursorKilled) {
		t.Fatalf("the getMore using a killed cursor was interrupted with %v, not CursorKilled", interrupted)
	}
	r.Return(c)
	if !src.closed || r.Len() != 0 {
		t.Fatal("a killed cursor was not closed on return")
	}

	idle, busy := &source{}, &source{}
	r.Add(New("db", "coll", idle))
	busyCursor := New("db", "coll", busy)
	r.Add(busyCursor)
	if _, err := r.Checkout(busyCursor.ID, nil); err != nil {
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
				if got, err := r.Checkout(c.ID, nil); err == nil {
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

// TestReapTimeouts checks which cursors the reaper closes, as MongoDB 7.0
// does (https://www.mongodb.com/docs/v7.0/reference/method/cursor.noCursorTimeout/
// and "Cursors Opened Within a Session" in the cursor docs): outside a
// session, those idle past the timeout unless noCursorTimeout; inside one,
// only those whose session has ended, however long idle.
func TestReapTimeouts(t *testing.T) {
	now := time.Unix(1000, 0)
	r := NewRegistry(time.Minute)
	r.now = func() time.Time { return now }
	live := map[string]bool{"A": true, "B": true}
	r.SessionAlive = func(id string) bool { return live[id] }

	open := func(session string, noTimeout bool) *source {
		src := &source{}
		c := New("db", "coll", src)
		c.Session, c.NoTimeout = session, noTimeout
		r.Add(c)
		return src
	}
	plain, noTimeout := open("", false), open("", true)
	inA, inB := open("A", false), open("B", true)

	now = now.Add(30 * time.Second)
	if n := r.Reap(); n != 0 {
		t.Fatalf("reaped %d cursors before the timeout", n)
	}
	now = now.Add(time.Hour)
	if n := r.Reap(); n != 1 || !plain.closed || noTimeout.closed || inA.closed || inB.closed {
		t.Fatalf("reaped %d: plain %v, noCursorTimeout %v, session A %v, session B %v",
			n, plain.closed, noTimeout.closed, inA.closed, inB.closed)
	}
	delete(live, "A")
	if n := r.Reap(); n != 1 || !inA.closed || inB.closed {
		t.Fatalf("reaped %d after session A ended: A %v, B %v", n, inA.closed, inB.closed)
	}
	if r.Len() != 2 {
		t.Fatalf("%d cursors left, want 2", r.Len())
	}
}

// parkingSource is a source that counts its parkings.
type parkingSource struct {
	source
	parks int
}

func (p *parkingSource) Park() bool { p.parks++; return true }

// TestReapParks: Reap parks the source of a cursor idle for ParkAfter,
// once until its next use, in a session or not; a cursor in use or used
// within ParkAfter keeps its source as it is.
func TestReapParks(t *testing.T) {
	now := time.Unix(1000, 0)
	r := NewRegistry(time.Hour)
	r.now = func() time.Time { return now }
	r.SessionAlive = func(string) bool { return true }
	open := func(session string) (*Cursor, *parkingSource) {
		src := &parkingSource{}
		c := New("db", "coll", src)
		c.Session = session
		r.Add(c)
		return c, src
	}
	idle, idleSrc := open("")
	_, sessionSrc := open("S")
	busy, busySrc := open("")
	if _, err := r.Checkout(busy.ID, nil); err != nil {
		t.Fatal(err)
	}
	now = now.Add(ParkAfter / 2)
	r.Reap()
	if idleSrc.parks+sessionSrc.parks+busySrc.parks != 0 {
		t.Fatalf("parked before ParkAfter: %d %d %d", idleSrc.parks, sessionSrc.parks, busySrc.parks)
	}
	now = now.Add(ParkAfter)
	r.Reap()
	r.Reap()
	if idleSrc.parks != 1 || sessionSrc.parks != 1 || busySrc.parks != 0 {
		t.Fatalf("after ParkAfter, two reaps: idle parked %d times, in a session %d, in use %d; want 1, 1, 0", idleSrc.parks, sessionSrc.parks, busySrc.parks)
	}
	// used again, then idle again: parked again
	if _, err := r.Checkout(idle.ID, nil); err != nil {
		t.Fatal(err)
	}
	r.Return(idle)
	r.Return(busy)
	r.Reap()
	if idleSrc.parks != 1 || busySrc.parks != 0 {
		t.Fatalf("parked just after use: %d, %d", idleSrc.parks, busySrc.parks)
	}
	now = now.Add(2 * ParkAfter)
	r.Reap()
	if idleSrc.parks != 2 || busySrc.parks != 1 || sessionSrc.parks != 1 {
		t.Fatalf("idle again: parked %d, %d, %d times; want 2, 1, 1", idleSrc.parks, busySrc.parks, sessionSrc.parks)
	}
}

// TestPermit checks getMore's ownership rules and MongoDB's codes for
// them, and that the session appears in messages as MongoDB shows it.
func TestPermit(t *testing.T) {
	sessA := string([]byte{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 1, 2, 3, 4, 5, 6, 7, 8})
	plain := New("db", "coll", &source{})
	plain.ID = 7
	inA := New("db", "coll", &source{})
	inA.ID, inA.Session = 8, sessA
	inTxn := New("db", "coll", &source{})
	inTxn.ID, inTxn.Session, inTxn.InTxn, inTxn.TxnNumber = 9, sessA, true, 3
	tests := []struct {
		name        string
		c           *Cursor
		db, coll    string
		session     string
		inTxn       bool
		txnNumber   int64
		want        mongoerr.Code
		wantMessage string
	}{
		{"same namespace, no session", plain, "db", "coll", "", false, 0, 0, ""},
		{"other collection", plain, "db", "other", "", false, 0, mongoerr.Unauthorized,
			"Requested getMore on namespace 'db.other', but cursor belongs to a different namespace db.coll"},
		{"other database", plain, "db2", "coll", "", false, 0, mongoerr.Unauthorized, ""},
		{"session on a sessionless cursor", plain, "db", "coll", sessA, false, 0, 50736, ""},
		{"same session", inA, "db", "coll", sessA, false, 0, 0, ""},
		{"no session", inA, "db", "coll", "", false, 0, 50737,
			"Cannot run getMore on cursor 8, which was created in session 12345678-9abc-def0-0102-030405060708 - 47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU= -  - , without an lsid"},
		{"other session", inA, "db", "coll", "other-session-id", false, 0, 50738, ""},
		{"session checked before namespace", inA, "db", "other", "", false, 0, 50737, ""},
		{"transaction on a plain cursor", inA, "db", "coll", sessA, true, 3, 50739, ""},
		{"no transaction on a transaction's cursor", inTxn, "db", "coll", sessA, false, 0, 50740, ""},
		{"other transaction", inTxn, "db", "coll", sessA, true, 4, 50741, ""},
		{"same transaction", inTxn, "db", "coll", sessA, true, 3, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.c.Permit(tt.db, tt.coll, tt.session, tt.inTxn, tt.txnNumber)
			if tt.want == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !mongoerr.Is(err, tt.want) {
				t.Fatalf("got %v, want code %d", err, tt.want)
			}
			if tt.wantMessage != "" && mongoerr.As(err).Msg != tt.wantMessage {
				t.Fatalf("message %q\nwant    %q", mongoerr.As(err).Msg, tt.wantMessage)
			}
		})
	}
}
