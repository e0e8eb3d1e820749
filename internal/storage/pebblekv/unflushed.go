package pebblekv

import (
	"bytes"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
)

// unflushed counts the bytes (keys and values; a deletion's key) of the
// commits Pebble holds in its memtables, which Pebble's EstimateDiskUsage
// does not see until a flush writes them to tables: a fresh collection
// would take no space at all until its store's first flush.
//
// The bytes are counted by group (storage.UnflushedGrouper: a prefix of
// the key, whose length the grouping installed gives), in two
// generations: recent, committed since the latest flush began, and
// flushing, committed before it began, which that flush is writing out. A
// flush's begin moves every group's recent bytes to flushing and its end
// drops flushing. A commit is counted just before Pebble applies it, so
// the flush that writes it out begins after it was counted and drops it:
// no byte counts past the flush that wrote it, nor forever. The error is
// the other way: a commit that landed in a fresh memtable after the
// flushed one was set aside, but before the flush began, is dropped with
// it while still in memory (an undercount until a later flush writes it
// to tables). Groups with nothing left are forgotten when a flush ends,
// and DeleteRange forgets the groups it covers: a dropped range stops
// counting at once.
//
// Commits are counted under the commit log's lock, in the order Pebble
// applies them: one walk of the batch summing its bytes by group, then one
// lookup in the sorted groups per group it wrote (the last groups found
// are tried first); no allocation but a new group's prefix, no map. The
// flush events run under Pebble's mutex; mu is never held while calling
// into Pebble or taking another lock.
type unflushed struct {
	group atomic.Pointer[func([]byte) int]
	mu    sync.Mutex
	// groups are sorted by prefix; each prefix is the group's own copy.
	groups []pendingGroup
	// hints are positions in groups of the groups found last (stale ones
	// are told by their prefix), nextHint the one to replace next.
	hints    [4]int
	nextHint int
}

type pendingGroup struct {
	prefix           []byte
	recent, flushing int64
}

// setGroup installs the grouping (storage.UnflushedGrouper).
func (u *unflushed) setGroup(group func([]byte) int) { u.group.Store(&group) }

// add counts the writes of b, a batch Pebble is about to apply (sign 1),
// or takes them back when Pebble failed to (sign -1).
func (u *unflushed) add(b *pebble.Batch, sign int64) {
	gp := u.group.Load()
	if gp == nil {
		return
	}
	group := *gp
	// A commit writes few groups (a collection's documents, its indexes,
	// the oplog): their bytes are summed here first, with prefixes pointing
	// into the batch, so that the groups are looked up once per commit.
	var sums [16]groupSum
	used := 0
	for r := b.Reader(); ; {
		kind, k, v, ok, err := r.Next()
		if err != nil || !ok {
			break
		}
		var n int64
		switch kind {
		case pebble.InternalKeyKindSet:
			n = int64(len(k) + len(v))
		case pebble.InternalKeyKindDelete, pebble.InternalKeyKindSingleDelete:
			n = int64(len(k))
		default:
			continue
		}
		g := group(k)
		if g <= 0 || g > len(k) {
			continue
		}
		p := k[:g]
		i := 0
		for i < used && !bytes.Equal(sums[i].prefix, p) {
			i++
		}
		if i == used {
			if used == len(sums) {
				u.merge(sums[:used], sign)
				used, i = 0, 0
			}
			sums[i] = groupSum{prefix: p}
			used++
		}
		sums[i].n += n
	}
	u.merge(sums[:used], sign)
}

// groupSum is the bytes a commit writes into one group.
type groupSum struct {
	prefix []byte
	n      int64
}

// merge adds sums, times sign, to the groups.
func (u *unflushed) merge(sums []groupSum, sign int64) {
	if len(sums) == 0 {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, s := range sums {
		u.addLocked(s.prefix, sign*s.n)
	}
}

// addLocked adds n bytes to the recent generation of the group prefix; a
// negative n takes them from recent, then from flushing, down to none.
func (u *unflushed) addLocked(prefix []byte, n int64) {
	if n == 0 {
		return
	}
	i, found := u.find(prefix)
	switch {
	case found:
	case n > 0:
		u.groups = slices.Insert(u.groups, i, pendingGroup{prefix: bytes.Clone(prefix)})
	default:
		return
	}
	g := &u.groups[i]
	g.recent += n
	if g.recent < 0 {
		g.flushing = max(0, g.flushing+g.recent)
		g.recent = 0
	}
}

// flushBegan is Pebble's FlushBegin: what was committed so far is what
// the flush writes out.
func (u *unflushed) flushBegan(pebble.FlushInfo) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for i := range u.groups {
		g := &u.groups[i]
		g.flushing += g.recent
		g.recent = 0
	}
}

// flushEnded is Pebble's FlushEnd: the flushing generation is in tables
// now. A failed flush, which Pebble retries, drops it too (an undercount
// rather than a count that could outlive the data in memory).
func (u *unflushed) flushEnded(pebble.FlushInfo) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.groups = slices.DeleteFunc(u.groups, func(g pendingGroup) bool { return g.recent == 0 })
	for i := range u.groups {
		u.groups[i].flushing = 0
	}
}

// sum is the bytes of the groups wholly inside [lower, upper) (a nil upper
// is unbounded).
func (u *unflushed) sum(lower, upper []byte) int64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	var n int64
	for i := u.first(lower); i < len(u.groups) && below(u.groups[i].prefix, upper); i++ {
		if g := &u.groups[i]; within(g.prefix, upper) {
			n += g.recent + g.flushing
		}
	}
	return n
}

// forget drops the groups wholly inside [lower, upper), whose keys a range
// deletion removed.
func (u *unflushed) forget(lower, upper []byte) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.groups = slices.DeleteFunc(u.groups, func(g pendingGroup) bool {
		return bytes.Compare(g.prefix, lower) >= 0 && within(g.prefix, upper)
	})
}

// find is the position of the group prefix, or where to insert it. The
// groups found last are looked at first: commits mostly write the groups
// the previous ones wrote (a collection's, the oplog's).
func (u *unflushed) find(prefix []byte) (int, bool) {
	for _, i := range u.hints {
		if i < len(u.groups) && bytes.Equal(u.groups[i].prefix, prefix) {
			return i, true
		}
	}
	i := u.first(prefix)
	if i == len(u.groups) || !bytes.Equal(u.groups[i].prefix, prefix) {
		return i, false
	}
	u.hints[u.nextHint] = i
	u.nextHint = (u.nextHint + 1) % len(u.hints)
	return i, true
}

// first is the position of the first group whose prefix is at least
// lower: an earlier group does not lie in a range from lower, since its
// prefix is a key of it below lower.
func (u *unflushed) first(lower []byte) int {
	lo, hi := 0, len(u.groups)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if bytes.Compare(u.groups[m].prefix, lower) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// below reports whether prefix < upper (nil: unbounded): groups from the
// first that is not cannot lie below upper.
func below(prefix, upper []byte) bool { return upper == nil || bytes.Compare(prefix, upper) < 0 }

// within reports whether every key beginning with prefix is below upper
// (nil: unbounded), for a prefix at least the range's lower bound: the
// group lies wholly in the range.
func within(prefix, upper []byte) bool {
	return upper == nil || (bytes.Compare(prefix, upper) < 0 && !bytes.HasPrefix(upper, prefix))
}
