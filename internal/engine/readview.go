package engine

import (
	"context"
	"sync"
	"time"

	"github.com/folio-db/folio/internal/storage"
)

// Reads at readConcern snapshot outside a transaction read a point in
// time: the first at the present, which its reply names (atClusterTime),
// and the later reads that name that time (a snapshot session's) the same
// state. MongoDB keeps its history for minSnapshotHistoryWindowInSeconds;
// Folio keeps the states it handed out: each is a store snapshot held
// under its time (views) until that long after it was last used and its
// last scan closed.

// A ReadView is a held state of the store: the scans of an operation whose
// context carries one (WithReadView) read it instead of the latest state.
type ReadView struct {
	snap storage.Snapshot
	// under views.mu: its pins (PinView) and the time of its last use
	scans    int
	lastUsed time.Time
}

// views are the held states by their time.
type views struct {
	mu     sync.Mutex
	byTime map[uint64]*ReadView
}

type readViewKey struct{}

// WithReadView returns ctx whose scans read v.
func WithReadView(ctx context.Context, v *ReadView) context.Context {
	return context.WithValue(ctx, readViewKey{}, v)
}

func readViewOf(ctx context.Context) *ReadView {
	if ctx == nil {
		return nil
	}
	v, _ := ctx.Value(readViewKey{}).(*ReadView)
	return v
}

// HoldView returns the state held for time at, holding the latest state
// under it if none is: the caller took at from the cluster clock before,
// so every write up to at is in it.
func (e *Engine) HoldView(at uint64) *ReadView {
	e.views.mu.Lock()
	defer e.views.mu.Unlock()
	if v := e.views.byTime[at]; v != nil {
		v.lastUsed = time.Now()
		return v
	}
	if e.views.byTime == nil {
		e.views.byTime = map[uint64]*ReadView{}
	}
	v := &ReadView{snap: e.kv.NewSnapshot(), lastUsed: time.Now()}
	e.views.byTime[at] = v
	if len(e.views.byTime) > maxHeldViews {
		e.views.evictLeastRecent()
	}
	return v
}

// maxHeldViews bounds the states held at once: each keeps the versions
// written since it from compaction. Past it the state least recently used
// that no scan reads goes first, as MongoDB gives up history under cache
// pressure (its reads then fail with SnapshotTooOld).
const maxHeldViews = 1000

// evictLeastRecent lets go of the unpinned view used least recently. The
// caller holds mu.
func (vs *views) evictLeastRecent() {
	var oldest *ReadView
	var oldestAt uint64
	for at, v := range vs.byTime {
		if v.scans == 0 && (oldest == nil || v.lastUsed.Before(oldest.lastUsed)) {
			oldest, oldestAt = v, at
		}
	}
	if oldest != nil {
		_ = oldest.snap.Close()
		delete(vs.byTime, oldestAt)
	}
}

// View returns the state held for time at, if one is.
func (e *Engine) View(at uint64) (*ReadView, bool) {
	e.views.mu.Lock()
	defer e.views.mu.Unlock()
	v := e.views.byTime[at]
	if v != nil {
		v.lastUsed = time.Now()
	}
	return v, v != nil
}

// ReleaseViews lets go of the states no scan reads and none used since
// window before now, and returns how many remain held. At the engine's
// close all go.
func (e *Engine) ReleaseViews(now time.Time, window time.Duration) int {
	e.views.mu.Lock()
	defer e.views.mu.Unlock()
	for at, v := range e.views.byTime {
		if v.scans == 0 && now.Sub(v.lastUsed) >= window || window < 0 {
			_ = v.snap.Close()
			delete(e.views.byTime, at)
		}
	}
	return len(e.views.byTime)
}

// PinView keeps v held until the returned unpin, whatever its window: for
// each scan that reads it, and for a cursor whose later reads may.
func (e *Engine) PinView(v *ReadView) (unpin func()) {
	e.views.mu.Lock()
	v.scans++
	e.views.mu.Unlock()
	return func() {
		e.views.mu.Lock()
		v.scans--
		v.lastUsed = time.Now()
		e.views.mu.Unlock()
	}
}
