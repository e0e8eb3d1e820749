package pebblekv

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"hash/maphash"
	"math/bits"
	"slices"
	"sync"
)

// rowCache holds copies of values of the latest committed state, so that a
// point read of a recently read key (a document by _id, an index entry)
// skips Pebble's memtables, filters, index and blob blocks: those were a
// fifth of a YCSB-A server's time.
//
// Invariant: an entry holds its key's value in the latest applied state,
// unless a range deletion its shard holds, numbered above the entry's
// stamp, covers its key; such an entry is dropped before it is served.
// Commits (and range deletes) are applied one at a time, under the commit
// log's lock. A commit calls forget on its keys before applying, which
// drops their entries, a range delete forgetRange; both mark shards
// pending, and settle after ends the shards' pending state; both bump the
// shards' versions. A read
// that missed fills its entry only if its shard is not pending and its
// version did not move since the lookup: a value read from Pebble while a
// commit of the shard was being applied, which may be from either side of
// the commit, is never kept. Absent keys are not cached. Reads fill
// entries, evicting others at random; a commit keeps the values it writes
// of keys that have entries, and of new keys where a shard has room (see
// forget), so that a document just written is read from the cache.
//
// A shard maps the 64-bit hash of a key to its entry, which holds the key
// and the value in one allocation (see makeEntry): a lookup compares the
// key and finds the value in memory it fetches once, where a map of key
// strings fetched the key, then the value, from two places (lookups and
// the first read of the value took 7% of a YCSB-A server's time, 4% now).
// Two keys with one hash share a slot: the entry is one key's, a miss to
// the other, and a write or fill of either replaces it.
//
// A range deletion does not search the cache (searching it took a
// collection's drop 40 ms per range with a million entries, under the
// commit log's lock): each shard records the range, numbered, and an
// entry records the number of the last range it was checked against.
// A lookup of an entry older than the shard's last range checks it
// against the newer ones, dropping it if one covers its key. Each range
// deletion also sweeps one shard, in turn, checking all its entries and
// clearing its ranges, so that a shard holds at most rowCacheShards
// ranges; a shard short of room for an entry sweeps itself first.
type rowCache struct {
	seed   maphash.Seed
	shards [rowCacheShards]rowShard
	// entries holds, for the commit being applied, forget's answer for
	// each of its keys; it is guarded by the commit log's lock.
	entries []entryState
	// deleted numbers the range deletions; guarded by the commit log's
	// lock.
	deleted uint64
	// uncached marks the key spaces the cache never holds (see
	// Options.Uncached): their reads go to Pebble, their writes skip
	// forget and rewrite.
	uncached [256]bool
}

const (
	rowCacheShards = 256
	// rowCacheMaxValue is the largest value kept: a few huge documents
	// would otherwise evict thousands of small ones.
	rowCacheMaxValue = 64 << 10
)

// deletedRange is a range deletion [start, end) (a nil bound open),
// numbered by rowCache.deleted.
type deletedRange struct {
	start, end []byte
	n          uint64
}

func (r *deletedRange) covers(key []byte) bool {
	return (r.start == nil || string(key) >= string(r.start)) && (r.end == nil || string(key) < string(r.end))
}

// A shard's rows map key hashes to entries; a nil entry is one awaiting a
// commit (see forget), a miss to readers.
type rowShard struct {
	mu sync.Mutex
	// version counts forgets and settles; pending is set between a
	// commit's forget and its settle. Both are guarded by mu.
	version uint64
	pending bool
	rows    map[uint64][]byte
	// bytes is the sum of the lengths of the entries (none for one
	// awaiting a commit), at most limit; spaces counts the entries by
	// their key's first byte (the engine's key space). add and remove
	// keep both.
	bytes  int
	limit  int
	spaces [256]int32
	// reclaimable is set when a range deletion recorded in ranges spans a
	// key space holding entries, so that a sweep may free room (hasRoom);
	// a sweep clears it. Entries kept after the range are never covered.
	reclaimable bool
	// ranges are the range deletions since the shard's last sweep, in
	// order; checked is the number of the last range deletion, which
	// every entry kept now is checked against.
	ranges  []*deletedRange
	checked uint64
	// hits and misses count lookups, under mu: a counter shared by all
	// shards would bounce between CPUs on every read.
	hits, misses uint64
	_            [24]byte // keeps neighbouring shards' locks off one cache line
}

// makeEntry returns the entry of key holding v: the key's length (4 bytes,
// little-endian), the number of the last range deletion it was checked
// against (its stamp: 8 bytes, set by keep, lookup and sweep under the
// shard's lock, never read by those reading the value), the key, the
// value.
func makeEntry(key, v []byte) []byte {
	e := make([]byte, entryHeader+len(key)+len(v))
	binary.LittleEndian.PutUint32(e, uint32(len(key)))
	copy(e[entryHeader:], key)
	copy(e[entryHeader+len(key):], v)
	return e
}

const entryHeader = 12

// entrySize is the length of the entry of key holding v.
func entrySize(key, v []byte) int { return entryHeader + len(key) + len(v) }

// entryKey and entryValue are the key and the value an entry holds.
func entryKey(e []byte) []byte   { return e[entryHeader : entryHeader+binary.LittleEndian.Uint32(e)] }
func entryValue(e []byte) []byte { return e[entryHeader+binary.LittleEndian.Uint32(e):] }

// entryChecked and setEntryChecked read and write the number of the last
// range deletion the entry was checked against.
func entryChecked(e []byte) uint64       { return binary.LittleEndian.Uint64(e[4:entryHeader]) }
func setEntryChecked(e []byte, n uint64) { binary.LittleEndian.PutUint64(e[4:entryHeader], n) }

// newRowCache returns a cache holding about size bytes of keys and values,
// never those of the key spaces uncached, or nil (no cache) for a size of
// zero or less.
func newRowCache(size int64, uncached []byte) *rowCache {
	if size <= 0 {
		return nil
	}
	per := max(int(size/rowCacheShards), 1)
	c := &rowCache{seed: maphash.MakeSeed()}
	for _, space := range uncached {
		c.uncached[space] = true
	}
	for i := range c.shards {
		c.shards[i].rows = map[uint64][]byte{}
		c.shards[i].limit = per
	}
	return c
}

// holds reports whether key's value may be cached: c is a cache and key
// is outside the key spaces it never holds.
func (c *rowCache) holds(key []byte) bool {
	return c != nil && (len(key) == 0 || !c.uncached[key[0]])
}

// shard returns key's shard, its number and key's hash.
func (c *rowCache) shard(key []byte) (*rowShard, int, uint64) {
	h := maphash.Bytes(c.seed, key)
	i := int(h % rowCacheShards)
	return &c.shards[i], i, h
}

// lookup returns key's cached value, which no one modifies (an entry's
// key and value are replaced, never changed; only its stamp changes, under
// mu), or, on a miss, the shard's version to hand to fill.
func (c *rowCache) lookup(key []byte) (v []byte, hit bool, version uint64) {
	s, _, h := c.shard(key)
	s.mu.Lock()
	if e := s.rows[h]; e != nil && string(entryKey(e)) == string(key) && s.current(h, e) {
		s.hits++
		s.mu.Unlock()
		return entryValue(e), true, 0
	}
	version = s.version
	s.misses++
	s.mu.Unlock()
	return nil, false, version
}

// stats sums the shards' lookups that hit and missed.
func (c *rowCache) stats() (hits, misses uint64) {
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		hits, misses = hits+s.hits, misses+s.misses
		s.mu.Unlock()
	}
	return hits, misses
}

// fill keeps e, key's entry (makeEntry) with the value read from the
// latest state after a lookup of key returned version, unless a commit of
// the shard is being applied or began since.
func (c *rowCache) fill(key, e []byte, version uint64) {
	s, _, h := c.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending || s.version != version {
		return
	}
	s.keep(h, e)
}

// current checks e, the entry at h, against the ranges deleted since it
// was last checked: it drops e and reports false when one covers its key.
// The caller holds mu.
func (s *rowShard) current(h uint64, e []byte) bool {
	n := entryChecked(e)
	if n == s.checked {
		return true
	}
	key := entryKey(e)
	// the ranges are in order: those after the entry's stamp
	first, _ := slices.BinarySearchFunc(s.ranges, n, func(r *deletedRange, n uint64) int { return cmp.Compare(r.n, n+1) })
	for _, r := range s.ranges[first:] {
		if r.covers(key) {
			s.remove(e)
			delete(s.rows, h)
			return false
		}
	}
	setEntryChecked(e, s.checked)
	return true
}

// shardSet is a set of shard numbers.
type shardSet [rowCacheShards / 64]uint64

// entryState is what forget found or made for a key a commit writes.
type entryState uint8

const (
	noEntry  entryState = iota // the key stays uncached
	kept                       // the key had an entry
	admitted                   // a new key given an entry, with room for its value
)

// forget, before a commit writing key (a Set of v, or a deletion) is
// applied, marks key's entry as awaiting the commit, giving a new key an
// entry so marked if it is set to a value its shard has room for. It marks
// the shard pending and collects it in touched for settle, and reports
// the entry's state, which rewrite gets once the commit is applied.
//
// A key the caller knows is absent from the latest state (isNew: an
// Insert) has no entry: where its shard has no room for it, there is
// nothing to do, and the shard's map is not searched (searching it was a
// fifth of the commit log's time in bulk inserts once the cache was full).
// A read of the key meanwhile finds it absent, or its value once the
// commit is applied: either way none fills a stale value.
func (c *rowCache) forget(key, v []byte, set, isNew bool, touched *shardSet) entryState {
	s, i, h := c.shard(key)
	s.mu.Lock()
	room := set && len(v) <= rowCacheMaxValue && s.hasRoom(entrySize(key, v))
	if isNew && !room {
		s.mu.Unlock()
		return noEntry
	}
	state := noEntry
	if old, ok := s.rows[h]; ok {
		s.remove(old)
		s.rows[h] = nil
		state = kept
	} else if room {
		s.rows[h] = nil
		state = admitted
	}
	s.version++
	s.pending = true
	s.mu.Unlock()
	touched[i/64] |= 1 << (i % 64)
	return state
}

// rewrite gives the entry forget left for a key a commit wrote the value
// written, or drops it for a deletion or a failed commit. An entry the key
// had may evict others to make room; one forget admitted is dropped
// instead when the commit's other keys took the room: writes never evict
// what reads keep. The commit's writes of a key are rewritten in order, so
// the last one stays. It runs after the commit, before settle: the entries
// of the commit's keys are then those forget marked or rewrite made.
func (c *rowCache) rewrite(key, v []byte, set bool, state entryState) {
	s, _, h := c.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.rows[h]
	if !ok {
		return
	}
	if set && len(v) <= rowCacheMaxValue && (state == kept || s.hasRoom(entrySize(key, v)-len(old))) {
		s.keep(h, makeEntry(key, v)) // v is in the commit's batch
		return
	}
	s.remove(old)
	delete(s.rows, h)
}

// keep makes e, whose key and value no one modifies, the entry of the key
// hashed h, replacing the entry there, evicting others to make room; the
// caller holds mu.
func (s *rowShard) keep(h uint64, e []byte) {
	if old, had := s.rows[h]; had {
		s.remove(old)
		delete(s.rows, h)
	}
	if len(e) > s.limit {
		return
	}
	if !s.hasRoom(len(e)) {
		// Map iteration starts at a random entry: this evicts at random.
		for k, o := range s.rows {
			s.remove(o)
			delete(s.rows, k)
			if s.bytes+len(e) <= s.limit {
				break
			}
		}
	}
	setEntryChecked(e, s.checked)
	s.rows[h] = e
	s.add(e)
}

// add and remove count entry e in (out of) the shard's bytes and key
// spaces; a placeholder (nil) counts for nothing.
func (s *rowShard) add(e []byte) {
	s.bytes += len(e)
	s.spaces[spaceOf(e)]++
}

func (s *rowShard) remove(e []byte) {
	if e != nil {
		s.bytes -= len(e)
		s.spaces[spaceOf(e)]--
	}
}

// spaceOf is the first byte of entry e's key (0 for an empty key).
func spaceOf(e []byte) byte {
	if k := entryKey(e); len(k) > 0 {
		return k[0]
	}
	return 0
}

// settle ends the pending state of the touched shards once the commit is
// applied (or failed), bumping their versions: reads that began during it
// do not fill.
func (c *rowCache) settle(touched *shardSet) {
	for w, set := range touched {
		for ; set != 0; set &= set - 1 {
			s := &c.shards[w*64+bits.TrailingZeros64(set)]
			s.mu.Lock()
			s.version++
			s.pending = false
			s.mu.Unlock()
		}
	}
}

// forgetRange records, before it is applied, the deletion of the keys in
// [start, end), a nil bound being open, and marks every shard pending;
// settle(touched) follows it. The entries it covers are dropped when next
// looked up or when their shard is swept (see rowCache); a deletion of
// every key drops them all at once.
func (c *rowCache) forgetRange(start, end []byte, touched *shardSet) {
	c.deleted++
	r := &deletedRange{start: bytes.Clone(start), end: bytes.Clone(end), n: c.deleted}
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		s.version++
		s.pending = true
		s.checked = c.deleted
		if start == nil && end == nil {
			clear(s.rows)
			s.bytes = 0
			clear(s.spaces[:])
			s.ranges, s.reclaimable = nil, false
		} else {
			s.ranges = append(s.ranges, r)
			s.reclaimable = s.reclaimable || s.holdsSpaces(r)
			if uint64(i) == c.deleted%rowCacheShards {
				s.sweep(true)
			}
		}
		s.mu.Unlock()
	}
	for w := range touched {
		touched[w] = ^uint64(0)
	}
}

// hasRoom reports whether the shard can take n more bytes, first dropping
// the entries its range deletions cover when it cannot and one may cover
// some: the entries of a dropped collection would otherwise hold the room
// until reads evicted them, and commits of new keys, which do not evict,
// would find none (the inserts of a collection created after a drop went
// uncached, and its reads to Pebble). A sweep checks each entry (66 µs
// for a shard of a 128 MB cache of 1 KB documents, 0.8 ms with 60-byte
// values), so a range whose key spaces held no entry when it was
// recorded (an oplog truncation: oplog entries are seldom cached) costs
// none. The caller holds mu.
func (s *rowShard) hasRoom(n int) bool {
	if s.bytes+n <= s.limit {
		return true
	}
	if !s.reclaimable {
		return false
	}
	s.sweep(false)
	return s.bytes+n <= s.limit
}

// holdsSpaces reports whether the shard holds entries in a key space
// (first byte) that r spans.
func (s *rowShard) holdsSpaces(r *deletedRange) bool {
	lo, hi := 0, 255
	if len(r.start) > 0 {
		lo = int(r.start[0])
	}
	if len(r.end) > 0 {
		hi = int(r.end[0])
	}
	for b := lo; b <= hi; b++ {
		if s.spaces[b] > 0 {
			return true
		}
	}
	return false
}

// sweep checks every entry against the shard's ranges, then forgets the
// ranges; the caller holds mu. An entry outside their union, most of them,
// is found so by a binary search. With placeholders, one left by a commit
// that failed before applying goes too, which only a caller no commit is
// applying beside may ask.
func (s *rowShard) sweep(placeholders bool) {
	u := unionOf(s.ranges)
	for h, e := range s.rows {
		switch {
		case e == nil:
			if placeholders {
				delete(s.rows, h)
			}
		case u.covers(entryKey(e)):
			s.current(h, e)
		default:
			setEntryChecked(e, s.checked)
		}
	}
	clear(s.ranges)
	s.ranges = s.ranges[:0]
	s.reclaimable = false
}

// keySpans are disjoint ranges [start, end) in order; a nil end is open.
type keySpans []deletedRange

// unionOf returns the union of rs (their numbers left out).
func unionOf(rs []*deletedRange) keySpans {
	u := make(keySpans, 0, len(rs))
	for _, r := range rs {
		u = append(u, deletedRange{start: r.start, end: r.end})
	}
	slices.SortFunc(u, func(a, b deletedRange) int { return bytes.Compare(a.start, b.start) })
	out := u[:0]
	for _, r := range u {
		if n := len(out); n > 0 && (out[n-1].end == nil || bytes.Compare(r.start, out[n-1].end) <= 0) {
			if out[n-1].end != nil && (r.end == nil || bytes.Compare(r.end, out[n-1].end) > 0) {
				out[n-1].end = r.end
			}
			continue
		}
		out = append(out, r)
	}
	return out
}

// covers reports whether one of the spans holds key.
func (u keySpans) covers(key []byte) bool {
	// the first span starting after key; the one before it may hold key
	i, _ := slices.BinarySearchFunc(u, key, func(r deletedRange, k []byte) int {
		if bytes.Compare(r.start, k) <= 0 {
			return -1
		}
		return 1
	})
	return i > 0 && u[i-1].covers(key)
}
