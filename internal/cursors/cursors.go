// Package cursors keeps the server-side cursors of open queries between
// getMore calls. A cursor idle longer than the timeout is closed and its id
// forgotten, so a later getMore answers CursorNotFound (43) as in MongoDB.
package cursors

import (
	"context"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/apiparams"
	"github.com/folio-db/folio/internal/auth"
	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/mongoerr"
)

// DefaultIdleTimeout is MongoDB's cursorTimeoutMillis default (10 minutes).
const DefaultIdleTimeout = 10 * time.Minute

// Source is the one document stream (docsrc.Source): a query's remaining
// documents.
type Source = docsrc.Source

// Cursor is one open cursor. Only the goroutine that checked it out uses it.
type Cursor struct {
	ID   int64
	DB   string
	Coll string
	// Tailable cursors stay open when they run out of documents. Await,
	// set on an awaitData cursor, waits up to timeout, or until ctx ends,
	// for new ones: a getMore that found none calls it, then reads again.
	Tailable bool
	Await    func(ctx context.Context, timeout time.Duration)
	// NoTimeout (find's noCursorTimeout) exempts the cursor from the idle
	// timeout.
	NoTimeout bool
	// Session is the key (sessions.Key) of the session the cursor was opened in, ""
	// for none. As in MongoDB 5.0+, a cursor of a session is not closed for
	// idleness: it lives as long as its session (Registry.SessionAlive).
	Session string
	// InTxn reports that the cursor was opened in the transaction numbered
	// TxnNumber.
	InTxn     bool
	TxnNumber int64
	// Owner is what the cursor belongs to (a transaction), for KillOwned.
	Owner any
	// User is the authenticated user that opened the cursor ("" for none):
	// under access control only that user may use it.
	User string
	// Permits, under access control, reports whether privileges still
	// grant what the command that opened the cursor needed (MongoDB's
	// originating privileges), which a getMore's user must hold; nil
	// without access control.
	Permits func(auth.Privileges) bool
	// API is the Stable API parameters of the command that opened the
	// cursor: its getMores must give the same.
	API apiparams.Params
	src Source
	// held is a document read but not yet returned (it did not fit a batch).
	held     bson.Raw
	lastUsed time.Time
	inUse    bool
	// parked is set once Reap parked the cursor's source, until its next
	// use.
	parked bool
	// interrupt ends the command that checked the cursor out (Checkout),
	// nil while it is idle.
	interrupt func(error)
	// created is when the cursor was registered, batches how many batches
	// it has served (its first, then one a getMore: Served), returned how
	// many documents they held.
	created  time.Time
	batches  int
	returned int64
}

// Served counts a batch a getMore returned from the cursor.
func (c *Cursor) Served() { c.batches++ }

// errKilled is what a command using a cursor fails with when the cursor is
// killed under it: MongoDB's CursorManager::killCursor kills the operation
// that has the cursor pinned with CursorKilled, and the operation ends with
// it at its next interruption check.
var errKilled = mongoerr.New(mongoerr.CursorKilled, "operation was interrupted")

// Restorer is a Source that can tell, before a getMore resumes it, that
// what it reads is gone (a dropped or renamed collection, a dropped index):
// Restore then fails with QueryPlanKilled, as MongoDB's plan executor does
// when it restores its state.
type Restorer interface {
	Restore() error
}

// Restore checks that the cursor's source can resume.
func (c *Cursor) Restore() error {
	if r, ok := c.src.(Restorer); ok {
		return r.Restore()
	}
	return nil
}

// Holding reports whether the cursor holds a document read but not yet
// returned.
func (c *Cursor) Holding() bool { return c.held != nil }

// Next returns the cursor's next document, or nil at the end.
func (c *Cursor) Next() (bson.Raw, error) {
	if c.held != nil {
		d := c.held
		c.held = nil
		c.returned++
		return d, nil
	}
	d, err := c.src.Next()
	if d != nil {
		c.returned++
	}
	return d, err
}

// Lend is Next for a consumer that copies the document before its next
// call (see docsrc.Lender).
func (c *Cursor) Lend() (bson.Raw, error) {
	if c.held != nil {
		d := c.held
		c.held = nil
		c.returned++
		return d, nil
	}
	d, err := docsrc.Lend(c.src)
	if d != nil {
		c.returned++
	}
	return d, err
}

// Exhauster is a Source that can tell it has nothing left without reading
// on (MongoDB's isEOF).
type Exhauster interface {
	Exhausted() bool
}

// Exhausted reports that the cursor is known to have nothing left. A source
// that cannot tell without reading on is never known exhausted until its
// Next returns nil.
func (c *Cursor) Exhausted() bool {
	e, ok := c.src.(Exhauster)
	return c.held == nil && ok && e.Exhausted()
}

// Source returns the cursor's document source.
func (c *Cursor) Source() Source { return c.src }

// Unread puts doc back to be returned by the next call to Next.
func (c *Cursor) Unread(doc bson.Raw) { c.held, c.returned = doc, c.returned-1 }

// Registry holds the open cursors of a server.
type Registry struct {
	mu      sync.Mutex
	cursors map[int64]*Cursor
	idle    time.Duration // under mu; cursorTimeoutMillis
	now     func() time.Time
	// SessionAlive reports whether a logical session still exists; Reap
	// closes the cursors of sessions that do not. Nil: sessions never end.
	SessionAlive func(id string) bool
	// timedOut counts the cursors Reap closed (serverStatus'
	// metrics.cursor.timedOut).
	timedOut int64
	// opened counts the cursors registered, moreThanOne those closed after
	// more than one batch, and lifespans those closed by how long they
	// lived (Lifespans): serverStatus' metrics.cursor.totalOpened,
	// moreThanOneBatch and lifespan.
	opened, moreThanOne int64
	lifespans           [len(lifespanBounds) + 1]int64
}

// lifespanBounds are the upper bounds of MongoDB's cursor lifespan
// buckets (ClientCursor's incrementCursorLifespanMetric); a cursor living
// longer than the last is counted in the bucket after them.
var lifespanBounds = [...]time.Duration{time.Second, 5 * time.Second, 15 * time.Second,
	30 * time.Second, time.Minute, 10 * time.Minute}

// retire counts c, registered, as closed now (ClientCursor::dispose). The
// caller holds r.mu.
func (r *Registry) retire(c *Cursor) {
	if c.batches > 1 {
		r.moreThanOne++
	}
	life := r.now().Sub(c.created)
	i := 0
	for i < len(lifespanBounds) && life >= lifespanBounds[i] {
		i++
	}
	r.lifespans[i]++
}

// NewRegistry returns an empty registry closing cursors idle for longer than
// idle.
func NewRegistry(idle time.Duration) *Registry {
	return &Registry{cursors: map[int64]*Cursor{}, idle: idle, now: time.Now}
}

// New returns a cursor over src that is not registered yet: a query fills
// its first batch from it and registers it (Add) only if documents remain,
// so most queries never touch the registry.
func New(db, coll string, src Source) *Cursor {
	return &Cursor{DB: db, Coll: coll, src: src}
}

// Parker is a Source that can give up what it holds of the store while
// it waits for a getMore (a storage iterator, which keeps the memory of
// the writes before it), taking it again when next read. Park reports
// whether it gave up something.
type Parker interface {
	Park() bool
}

// ParkAfter is how long a cursor stays idle before Reap parks its source:
// a client reading a cursor through keeps its iterators (reopening them
// added about 20 µs to a getMore of 10 small documents, docs/benchmarks.md),
// one that leaves it waiting gives them up.
const ParkAfter = time.Second

// Add registers c, idle, under a fresh positive id, for later getMores.
func (r *Registry) Add(c *Cursor) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id := rand.Int64N(1<<62) + 1
	for r.cursors[id] != nil {
		id = rand.Int64N(1<<62) + 1
	}
	c.ID, c.inUse, c.lastUsed = id, false, r.now()
	c.created, c.batches = c.lastUsed, 1
	r.cursors[id] = c
	r.opened++
}

// Checkout takes cursor id for a getMore; the caller checks Permit and
// gives it back (Return) or closes it (Close). interrupt (nil for none) ends
// the getMore if the cursor is killed meanwhile (Kill).
func (r *Registry) Checkout(id int64, interrupt func(error)) (*Cursor, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.cursors[id]
	if c == nil {
		return nil, mongoerr.New(mongoerr.CursorNotFound, "cursor id %d not found", id)
	}
	if c.inUse {
		return nil, mongoerr.New(mongoerr.CursorInUse, "cursor id %d is already in use", id)
	}
	c.inUse, c.interrupt = true, interrupt
	return c, nil
}

// Origin is who opened a cursor, where, and what it took.
type Origin struct {
	User, Session string
	DB, Coll      string
	Permits       func(auth.Privileges) bool
}

// OriginOf is the origin of cursor id, and whether it exists.
func (r *Registry) OriginOf(id int64) (Origin, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.cursors[id]
	if c == nil {
		return Origin{}, false
	}
	return Origin{User: c.User, Session: c.Session, DB: c.DB, Coll: c.Coll, Permits: c.Permits}, true
}

// Return gives a checked-out cursor back for later getMores; a cursor killed
// while it was checked out is closed instead.
func (r *Registry) Return(c *Cursor) {
	r.mu.Lock()
	live := r.cursors[c.ID] == c
	c.inUse, c.parked, c.interrupt = false, false, nil
	c.lastUsed = r.now()
	r.mu.Unlock()
	if !live {
		_ = c.src.Close()
	}
}

// Close forgets a checked-out cursor and releases its source.
func (r *Registry) Close(c *Cursor) error {
	r.mu.Lock()
	if r.cursors[c.ID] == c {
		r.retire(c)
	}
	delete(r.cursors, c.ID)
	c.interrupt = nil
	r.mu.Unlock()
	return c.src.Close()
}

// Kill closes cursor id; one in use is closed when it is given back, and
// the command using it is interrupted with CursorKilled, as MongoDB kills
// the operation that has a cursor pinned. It reports whether id was found.
func (r *Registry) Kill(id int64) bool {
	r.mu.Lock()
	c := r.cursors[id]
	if c == nil {
		r.mu.Unlock()
		return false
	}
	delete(r.cursors, id)
	r.retire(c)
	inUse, interrupt := c.inUse, c.interrupt
	r.mu.Unlock()
	if !inUse {
		_ = c.src.Close()
	} else if interrupt != nil {
		interrupt(errKilled)
	}
	return true
}

// KillOwned closes every cursor whose Owner is owner.
func (r *Registry) KillOwned(owner any) {
	r.killWhere(func(c *Cursor) bool { return c.Owner == owner })
}

// KillSessions closes every cursor opened in a session for which kill
// holds, as MongoDB's killSessions and killAllSessions do; one in use is
// closed when its getMore returns.
func (r *Registry) KillSessions(kill func(session string) bool) {
	r.killWhere(func(c *Cursor) bool { return c.Session != "" && kill(c.Session) })
}

// killWhere kills (Kill) every cursor for which match holds.
func (r *Registry) killWhere(match func(*Cursor) bool) {
	r.mu.Lock()
	var ids []int64
	for id, c := range r.cursors {
		if match(c) {
			ids = append(ids, id)
		}
	}
	r.mu.Unlock()
	for _, id := range ids {
		r.Kill(id)
	}
}

// Reap closes the cursors MongoDB would close on its own: those outside a
// session idle for longer than the timeout (unless NoTimeout), and those
// whose session has ended or expired. It parks the sources of the others
// idle for ParkAfter (Parker), under the registry's lock, which their
// getMores need to check them out. Cursors in use are left alone.
func (r *Registry) Reap() int {
	r.mu.Lock()
	var stale []*Cursor
	sessions := map[string]bool{}
	now := r.now()
	cutoff, parkCutoff := now.Add(-r.idle), now.Add(-ParkAfter)
	for id, c := range r.cursors {
		switch {
		case c.inUse:
			continue
		case c.Session != "":
			sessions[c.Session] = true
		case !c.NoTimeout && c.lastUsed.Before(cutoff):
			stale = append(stale, c)
			delete(r.cursors, id)
			r.retire(c)
			continue
		}
		if p, ok := c.src.(Parker); ok && !c.parked && c.lastUsed.Before(parkCutoff) {
			p.Park()
			c.parked = true
		}
	}
	r.timedOut += int64(len(stale))
	alive := r.SessionAlive
	r.mu.Unlock()
	if alive != nil && len(sessions) > 0 {
		for id := range sessions {
			sessions[id] = alive(id)
		}
		r.mu.Lock()
		for id, c := range r.cursors {
			if live, known := sessions[c.Session]; known && !live && !c.inUse {
				stale = append(stale, c)
				delete(r.cursors, id)
				r.retire(c)
			}
		}
		r.mu.Unlock()
	}
	for _, c := range stale {
		_ = c.src.Close()
	}
	return len(stale)
}

// Counts are serverStatus' cursor counters: the cursors registered, those
// closed after more than one batch, and those closed by lifespan, in the
// order of lifespanBounds (under 1 s, 5 s, 15 s, 30 s, 1 min, 10 min, then
// 10 min or more).
func (r *Registry) Counts() (opened, moreThanOneBatch int64, lifespans []int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.opened, r.moreThanOne, slices.Clone(r.lifespans[:])
}

// IdleTimeout is how long a cursor may stay idle before Reap closes it.
func (r *Registry) IdleTimeout() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.idle
}

// SetIdleTimeout changes the idle timeout (setParameter
// cursorTimeoutMillis); it applies to every open cursor at the next Reap.
func (r *Registry) SetIdleTimeout(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.idle = d
}

// TimedOut is the number of cursors Reap has closed.
func (r *Registry) TimedOut() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.timedOut
}

// CloseAll closes every cursor not in use (at shutdown).
func (r *Registry) CloseAll() {
	r.mu.Lock()
	var idle []*Cursor
	for id, c := range r.cursors {
		if !c.inUse {
			idle = append(idle, c)
		}
		delete(r.cursors, id)
	}
	r.mu.Unlock()
	for _, c := range idle {
		_ = c.src.Close()
	}
}

// IdleCursor is an open cursor no command is using, as currentOp reports
// it (type "idleCursor").
type IdleCursor struct {
	ID                             int64
	DB, Coll, Session, User        string
	NoTimeout, Tailable, AwaitData bool
	Created, LastUsed              time.Time
	// Returned and Batches are the documents and batches the cursor
	// returned.
	Returned, Batches int64
	// Source is what the cursor reads, for what its opener tells of it
	// (the command that opened it).
	Source Source
}

// Info is c as currentOp reports it; for a checked-out cursor, by the
// command using it (LastUsed is then the end of its previous use).
func (c *Cursor) Info() IdleCursor {
	return IdleCursor{ID: c.ID, DB: c.DB, Coll: c.Coll, Session: c.Session, User: c.User,
		NoTimeout: c.NoTimeout, Tailable: c.Tailable, AwaitData: c.Await != nil, Created: c.created, LastUsed: c.lastUsed,
		Returned: c.returned, Batches: int64(c.batches), Source: c.src}
}

// Idle lists the open cursors not checked out, by id.
func (r *Registry) Idle() []IdleCursor {
	r.mu.Lock()
	var out []IdleCursor
	for _, c := range r.cursors {
		if !c.inUse {
			out = append(out, c.Info())
		}
	}
	r.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// OpenCounts are the numbers of open cursors serverStatus reports: all of
// them, those exempt from the idle timeout (noCursorTimeout), and those
// pinned (checked out by a command running now).
func (r *Registry) OpenCounts() (total, noTimeout, pinned int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.cursors {
		if c.NoTimeout {
			noTimeout++
		}
		if c.inUse {
			pinned++
		}
	}
	return int64(len(r.cursors)), noTimeout, pinned
}

// Len is the number of open cursors.
func (r *Registry) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.cursors)
}
