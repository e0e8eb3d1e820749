package pebblekv

import (
	"bytes"
	"context"
	"log/slog"
	"sync"

	"github.com/cockroachdb/pebble/v2"

	"github.com/folio-db/folio/internal/storage"
)

// Keys a scan steps over without returning them, deleted or overwritten
// ones, stay until a compaction reaches them, and a memtable holds them
// until it is flushed. A span written and deleted over and over (the
// catalog and the garbage records after thousands of drops) makes every
// scan of it slower than the last. So a scan that walked its whole span and
// stepped over many such keys, several for each key it returned, has the
// span compacted in the background (compactor): its next scan steps over
// none of those.
const (
	hiddenMin   = 1024 // keys stepped over that make a scan ask ...
	hiddenRatio = 4    // ... when they are this many per key returned
)

// iter is a Pebble iterator over [lower, upper) that tells a value's length
// without fetching a value kept in a blob file (storage.ValueLener), and
// reports a scan full of hidden keys when closed.
type iter struct {
	*pebble.Iterator
	c            *compactor
	lower, upper []byte
	first        bool // positioned by First
}

// newIter opens an iterator of r (the store, or a snapshot of it) over
// [lower, upper), whose scans report to c.
func newIter(c *compactor, r interface {
	NewIter(*pebble.IterOptions) (*pebble.Iterator, error)
}, lower, upper []byte) (storage.Iter, error) {
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, err
	}
	return &iter{Iterator: it, c: c, lower: lower, upper: upper}, nil
}

// First implements storage.Iter.
func (it *iter) First() bool {
	it.first = true
	return it.Iterator.First()
}

// ValueLen implements storage.ValueLener.
func (it *iter) ValueLen() int {
	v := it.LazyValue()
	return v.Len()
}

// Close closes the iterator. A scan that went forward through its whole
// span (First its only positioning, no step back, ended past the last key)
// read all of it: if it stepped over hiddenMin keys or more, and
// hiddenRatio for each key it returned, the span is compacted.
func (it *iter) Close() error {
	if !it.first || it.Valid() || it.Error() != nil || it.lower == nil || it.upper == nil {
		return it.Iterator.Close()
	}
	st := it.Stats()
	if st.ForwardSeekCount[pebble.InterfaceCall] == 1 && st.ReverseSeekCount[pebble.InterfaceCall] == 0 &&
		st.ReverseStepCount[pebble.InterfaceCall] == 0 {
		returned := uint64(st.ForwardStepCount[pebble.InterfaceCall]) + 1
		points := st.InternalStats.PointCount
		if hidden := points - min(points, returned); hidden >= hiddenMin && hidden >= hiddenRatio*returned {
			it.c.compact(it.lower, it.upper)
		}
	}
	return it.Iterator.Close()
}

// compactor compacts one span at a time in the background, at a scan's
// request; a request while one runs is dropped (the next scan asks again).
type compactor struct {
	db     *pebble.DB
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	busy   bool
	closed bool
	done   sync.WaitGroup
	// ran counts the compactions finished (tests wait on it).
	ran int
}

func newCompactor(db *pebble.DB, log *slog.Logger) *compactor {
	ctx, cancel := context.WithCancel(context.Background())
	return &compactor{db: db, log: log, ctx: ctx, cancel: cancel}
}

// compact compacts [lower, upper) in the background, unless a compaction
// runs or the store is closing.
func (c *compactor) compact(lower, upper []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.busy || c.closed || bytes.Compare(lower, upper) >= 0 {
		return
	}
	c.busy = true
	c.done.Add(1)
	lower, upper = bytes.Clone(lower), bytes.Clone(upper)
	go func() {
		defer c.done.Done()
		err := c.db.Compact(c.ctx, lower, upper, false)
		if err != nil && c.ctx.Err() == nil && c.log != nil {
			c.log.Warn("compacting a span of hidden keys", "err", err)
		}
		c.mu.Lock()
		c.busy = false
		c.ran++
		c.mu.Unlock()
	}()
}

// close stops a running compaction and waits for it; none starts after.
func (c *compactor) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.cancel()
	c.done.Wait()
}
