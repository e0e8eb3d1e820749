package engine

import (
	"bytes"
	"sync"
	"sync/atomic"
)

// seekHints remember, per scan start of an index, the first live key a
// recent forward scan found there. A work queue deletes the entries at the
// head of its index range one by one; in an LSM store every later scan
// would step over all of those deletions again. With a hint it seeks past
// them.
//
// A hint claims that no live key lies in [start, first) in any snapshot
// taken after the hint was stored. Writers keep the claim true: a put into
// the index removes the hints whose range holds its key both before and
// after its commit, and bumps the epoch each time; a scan stores a hint
// only if the epoch did not move between the moment before it took its
// snapshot and the store, so no put was in flight. A reader uses only hints
// stored before it took its snapshot (by the hint clock).
type seekHints struct {
	mu    sync.Mutex
	epoch uint64
	hints map[string]seekHint
}

type seekHint struct {
	first []byte
	clock uint64
}

// maxSeekHints bounds the hints kept per index.
const maxSeekHints = 64

// hintClock orders hint stores against snapshots.
var hintClock atomic.Uint64

// readEpoch is read before a scan's snapshot is taken.
func (h *seekHints) readEpoch() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.epoch
}

// lookup returns the first live key at or after start that a hint stored
// before clock now knows of, or start.
func (h *seekHints) lookup(start []byte, now uint64) []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	if hint, ok := h.hints[string(start)]; ok && hint.clock <= now {
		return hint.first
	}
	return start
}

// store records that first is the first live key at or after start, found
// by a scan that read epoch before its snapshot.
func (h *seekHints) store(start, first []byte, epoch uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.epoch != epoch {
		return
	}
	if h.hints == nil || len(h.hints) >= maxSeekHints {
		h.hints = map[string]seekHint{}
	}
	h.hints[string(start)] = seekHint{first: bytes.Clone(first), clock: hintClock.Add(1)}
}

// invalidate removes the hints whose skipped range holds key, and bumps the
// epoch. Writers call it for every key they put, before and after commit.
func (h *seekHints) invalidate(key []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.epoch++
	for start, hint := range h.hints {
		if bytes.Compare(key, []byte(start)) >= 0 && bytes.Compare(key, hint.first) < 0 {
			delete(h.hints, start)
		}
	}
}
