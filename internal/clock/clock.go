// Package clock is Folio's logical cluster clock: the time a replica set
// member reports as $clusterTime and operationTime, and that causally
// consistent reads wait on (readConcern.afterClusterTime).
//
// A time is a BSON Timestamp: seconds and an increment. The clock is
// hybrid: a new time takes the wall clock's second and, within one second,
// an increment that is at least the microseconds elapsed in that second and
// greater than the previous one's. Times therefore only grow, and a clock
// started afresh (after a restart) starts at the wall clock, above every
// time handed out before as long as the wall clock did not step back and
// fewer than a million times were issued per second. Nothing is persisted.
package clock

import (
	"fmt"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Time is a cluster time: seconds in the high 32 bits, increment in the low.
// Times compare as integers.
type Time uint64

// FromTimestamp converts a BSON Timestamp.
func FromTimestamp(ts bson.Timestamp) Time { return Time(uint64(ts.T)<<32 | uint64(ts.I)) }

// Timestamp is t as a BSON Timestamp.
func (t Time) Timestamp() bson.Timestamp { return bson.Timestamp{T: t.Secs(), I: t.Inc()} }

// Secs is the seconds part of t.
func (t Time) Secs() uint32 { return uint32(t >> 32) }

// Inc is the increment part of t.
func (t Time) Inc() uint32 { return uint32(t) }

// String formats t as MongoDB prints a Timestamp.
func (t Time) String() string { return fmt.Sprintf("Timestamp(%d, %d)", t.Secs(), t.Inc()) }

// Source is what hands out cluster times. The in-memory Clock is one; a
// replicated log or a distributed storage engine that orders commits itself
// would be another.
type Source interface {
	// Now is the latest time handed out or learnt.
	Now() Time
	// Tick returns a new time, greater than every time before it. A write
	// calls it once committed, so every write at or before Now is visible.
	Tick() Time
	// Advance moves the clock forward to t if t is later (a time gossiped
	// by a client).
	Advance(t Time)
}

// Clock is a hybrid logical clock kept in memory. It is safe for
// concurrent use.
type Clock struct {
	cur  atomic.Uint64
	wall func() time.Time
}

// New returns a clock reading wall (time.Now when nil), starting at the
// wall clock's present.
func New(wall func() time.Time) *Clock {
	if wall == nil {
		wall = time.Now
	}
	c := &Clock{wall: wall}
	c.cur.Store(uint64(c.physical()))
	return c
}

// physical is the wall clock as a Time: its second and the microseconds
// elapsed within it.
func (c *Clock) physical() Time {
	now := c.wall()
	return Time(uint64(now.Unix())<<32 | uint64(now.Nanosecond()/1000))
}

// Now is the latest time issued or learnt.
func (c *Clock) Now() Time { return Time(c.cur.Load()) }

// Tick issues a time later than every other: the wall clock's, or the
// previous time plus one when the wall clock has not moved past it.
func (c *Clock) Tick() Time {
	for {
		old := Time(c.cur.Load())
		next := old + 1
		if p := c.physical(); p > next {
			next = p
		}
		if c.cur.CompareAndSwap(uint64(old), uint64(next)) {
			return next
		}
	}
}

// Advance moves the clock to t if t is later than Now.
func (c *Clock) Advance(t Time) {
	for {
		old := c.cur.Load()
		if uint64(t) <= old || c.cur.CompareAndSwap(old, uint64(t)) {
			return
		}
	}
}
