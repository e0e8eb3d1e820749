package pebblekv

import (
	"errors"
	"hash/maphash"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/batchrepr"

	"github.com/folio-db/folio/internal/storage"
)

// commitLog detects write conflicts between transactions: it numbers
// commits and remembers, for every key written since the oldest open
// transaction began, the number of the last commit that wrote it. A
// transaction that began at number s conflicts with a commit numbered above
// s that wrote one of its keys. Commits are applied under mu, in number
// order, each counted in seq before it is applied. Keys are remembered by
// a 64-bit hash: two keys with one hash make at worst a false conflict,
// which the writer retries, and hashing spares a string per written key
// (a tenth of a bulk insert's time when keys were kept as strings).
//
// A transaction takes no Pebble snapshot of its own: while no commit has
// been applied since it began, the latest state is its state, and a read
// checks seq before and after to know it read that state. The first commit
// after a number at which transactions are open takes, before it applies,
// one snapshot they all read from then on (as does an iterator, which
// needs a fixed state for its life), closed when the last of them ends. A
// lone writer, whose reads and commit meet no other commit, never takes a
// snapshot: Pebble's cost of closing one (a compaction check under its
// mutex, and allocations) was a tenth of a one-document update.
type commitLog struct {
	mu sync.Mutex
	// seq is the number of the last commit begun; written under mu, read
	// without it by transactions checking that nothing was committed.
	seq     atomic.Uint64
	written map[uint64]uint64 // key hash → last commit number
	seed    maphash.Seed
	// active counts the open transactions by the number they began at.
	active map[uint64]int
	// snaps are the states at the numbers open transactions began at, once
	// a later commit (or an iterator) needed them.
	snaps map[uint64]*pebble.Snapshot
	// sincePrune counts commits since written was last pruned.
	sincePrune int
}

func newCommitLog() *commitLog {
	return &commitLog{written: map[uint64]uint64{}, seed: maphash.MakeSeed(), active: map[uint64]int{}, snaps: map[uint64]*pebble.Snapshot{}}
}

// begin registers a transaction starting now and returns its number.
func (l *commitLog) begin() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	start := l.seq.Load()
	l.active[start]++
	return start
}

// end deregisters a transaction that began at start.
func (l *commitLog) end(start uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.release(start)
}

func (l *commitLog) release(start uint64) {
	if l.active[start]--; l.active[start] <= 0 {
		delete(l.active, start)
		if s := l.snaps[start]; s != nil {
			s.Close()
			delete(l.snaps, start)
		}
	}
}

// keep takes the snapshot of the current number for the transactions open
// at it, unless taken already; the caller holds mu.
func (l *commitLog) keep(db *pebble.DB) {
	seq := l.seq.Load()
	if l.active[seq] > 0 && l.snaps[seq] == nil {
		l.snaps[seq] = db.NewSnapshot()
	}
}

// snapshot returns the state at start of a transaction open since then.
func (l *commitLog) snapshot(db *pebble.DB, start uint64) *pebble.Snapshot {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seq.Load() == start {
		l.keep(db)
	}
	return l.snaps[start]
}

// commit applies b unless a commit numbered after start wrote one of b's
// keys (ErrWriteConflict), and ends the transaction that began at start:
// its keys need recording only for the other transactions open.
//
// The stamped writes get their stamps under the lock, so stamps grow in the
// order batches are applied.
func (l *commitLog) commit(d *DB, b *pebble.Batch, start uint64, fresh []uint32, stamped []stampedWrite, values []byte, refs []stampRef) error {
	db := d.db
	l.mu.Lock()
	defer l.mu.Unlock()
	l.release(start)
	for r := b.Reader(); ; {
		_, k, _, ok, err := r.Next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if l.written[maphash.Bytes(l.seed, k)] > start {
			return storage.ErrWriteConflict
		}
	}
	l.keep(db)
	l.seq.Add(1)
	// Stamped keys are new at every commit: no transaction can conflict
	// on them and no cached value is theirs, so only the keys before them
	// are recorded and forgotten.
	unstamped := b.Count()
	var last uint64
	if len(stamped) > 0 {
		var err error
		if last, err = d.stamps.apply(b, stamped, values); err != nil {
			return err
		}
		patchRefs(b, refs, stamped)
	}
	// Counted before Pebble applies it, so that the flush that writes it
	// out began after and drops it (see unflushed).
	d.unflushed.add(b, 1)
	if err := d.apply(b, unstamped, fresh); err != nil {
		d.unflushed.add(b, -1)
		return err
	}
	if len(stamped) > 0 {
		d.stamps.applied(last)
	}
	if len(l.active) > 0 {
		if err := l.record(b.Reader(), unstamped); err != nil {
			return err
		}
	}
	l.prune()
	return nil
}

// record notes the first n keys of a committed batch as written by the
// current commit number.
func (l *commitLog) record(r batchrepr.Reader, n uint32) error {
	seq := l.seq.Load()
	for ; n > 0; n-- {
		_, k, _, ok, err := r.Next()
		if err != nil || !ok {
			return err
		}
		l.written[maphash.Bytes(l.seed, k)] = seq
	}
	return nil
}

// prune forgets the writes no open transaction can conflict with: those
// numbered at or below the oldest open transaction's start.
func (l *commitLog) prune() {
	if len(l.active) == 0 {
		// clear takes time in the map's capacity, not its length: a map
		// grown by a large batch is replaced instead.
		if len(l.written) > 64 {
			l.written = map[uint64]uint64{}
		} else if len(l.written) > 0 {
			clear(l.written)
		}
		l.sincePrune = 0
		return
	}
	if l.sincePrune++; l.sincePrune < 1024 || len(l.written) < 4096 {
		return
	}
	l.sincePrune = 0
	oldest := l.seq.Load()
	for s := range l.active {
		oldest = min(oldest, s)
	}
	for k, s := range l.written {
		if s <= oldest {
			delete(l.written, k)
		}
	}
}

// txn is a storage.Txn: its commit number, the snapshot of its state once
// it needs one (shared, see commitLog), the Pebble batch its writes go to
// (in order, so the last write of a key wins), and an overlay indexing the
// batch's copies of them over its state, for its reads.
type txn struct {
	d     *DB
	start uint64
	snap  *pebble.Snapshot // nil until needed; owned by the commit log
	view  *storage.Overlay
	b     *pebble.Batch // nil until the first write
	// stamped are the SetStamped writes, keyed at commit; values holds
	// their values (pooled, see stampedValues).
	stamped []stampedWrite
	values  *[]byte
	// stamp is the stamp of the last stamped write, once committed.
	stamp uint64
	// refs are the InsertStampRef writes' stamps to write at commit.
	refs []stampRef
	// fresh are the positions in b of the writes of new keys (Insert),
	// in order.
	fresh []uint32
	// ended is set once the commit log no longer counts t as open.
	ended bool
	done  bool
}

// Begin implements storage.KV.
func (d *DB) Begin() (storage.Txn, error) {
	t := &txn{d: d, start: d.log.begin()}
	t.view = storage.NewOverlay(state{t})
	return t, nil
}

// state is what a transaction reads under its own writes: the committed
// state at its start.
type state struct{ t *txn }

func (s state) Get(key []byte) ([]byte, bool, error) {
	t := s.t
	if t.snap == nil {
		l := t.d.log
		if l.seq.Load() == t.start {
			v, ok, err := t.d.Get(key)
			if l.seq.Load() == t.start {
				return v, ok, err
			}
		}
		if t.snap = l.snapshot(t.d.db, t.start); t.snap == nil {
			return nil, false, errNoState
		}
	}
	return get(t.snap.Get(key))
}

func (s state) NewIter(lower, upper []byte) (storage.Iter, error) {
	t := s.t
	if t.snap == nil {
		if t.snap = t.d.log.snapshot(t.d.db, t.start); t.snap == nil {
			return nil, errNoState
		}
	}
	return newIter(t.d.compact, t.snap, lower, upper)
}

// errNoState would be the error of a transaction whose state no snapshot
// kept: a commit after its start failed to keep one (a bug).
var errNoState = errors.New("pebblekv: no snapshot kept the transaction's state")

// errEnded is the error of a read or write of a transaction that ended.
var errEnded = errors.New("pebblekv: transaction already committed or rolled back")

func (t *txn) Get(key []byte) ([]byte, bool, error) {
	if t.done {
		return nil, false, errEnded
	}
	return t.view.Get(key)
}

func (t *txn) NewIter(lower, upper []byte) (storage.Iter, error) {
	if t.done {
		return nil, errEnded
	}
	return t.view.NewIter(lower, upper)
}

func (t *txn) batch() *pebble.Batch {
	if t.b == nil {
		t.b = t.d.db.NewBatch(pebble.WithMaxRetainedSizeBytes(batchRetained))
	}
	return t.b
}

// Set implements storage.Txn: the batch copies key and value once, and the
// overlay indexes that copy (it stays valid as the batch grows: Pebble
// grows a batch into a new buffer).
func (t *txn) Set(key, value []byte) error { return t.set(key, value, nil) }

// set is Set of key holding head followed by body.
func (t *txn) set(key, head, body []byte) error {
	if t.done {
		return errEnded
	}
	op := t.batch().SetDeferred(len(key), len(head)+len(body))
	copy(op.Key, key)
	copy(op.Value[copy(op.Value, head):], body)
	if err := op.Finish(); err != nil {
		return err
	}
	t.view.Put(op.Key, op.Value)
	return nil
}

// Insert implements storage.Inserter: the commit gives key, new, an entry
// in the row cache only if its shard has room, without looking for one.
func (t *txn) Insert(key, value []byte) error { return t.insert(key, value, nil) }

// insert is Insert of key holding head followed by body.
func (t *txn) insert(key, head, body []byte) error {
	var at uint32
	if t.b != nil {
		at = t.b.Count()
	}
	if err := t.set(key, head, body); err != nil {
		return err
	}
	t.fresh = append(t.fresh, at)
	return nil
}

// Delete implements storage.Txn.
func (t *txn) Delete(key []byte) error {
	if t.done {
		return errEnded
	}
	op := t.batch().DeleteDeferred(len(key))
	copy(op.Key, key)
	if err := op.Finish(); err != nil {
		return err
	}
	t.view.Put(op.Key, nil)
	return nil
}

// Commit implements storage.Txn. When the batch would take the disk below
// its reserve, or the disk is full, it fails with OutOfDiskSpace and writes
// nothing.
func (t *txn) Commit() error {
	if t.done {
		return nil
	}
	defer t.Rollback()
	if t.b == nil || (t.b.Empty() && len(t.stamped) == 0) {
		return nil
	}
	if err := t.d.space.check(t.b.Len()); err != nil {
		return err
	}
	t.ended = true
	var values []byte
	if t.values != nil {
		values = *t.values
	}
	err := t.d.log.commit(t.d, t.b, t.start, t.fresh, t.stamped, values, t.refs)
	if err == nil && len(t.stamped) > 0 {
		t.stamp = t.stamped[len(t.stamped)-1].stamp
	}
	return err
}

// CommitStamp implements storage.StampedTxn.
func (t *txn) CommitStamp() uint64 { return t.stamp }

// Rollback implements storage.Txn.
func (t *txn) Rollback() error {
	if t.done {
		return nil
	}
	t.done = true
	if !t.ended {
		t.d.log.end(t.start)
	}
	if t.b != nil {
		t.b.Close()
	}
	if t.values != nil && cap(*t.values) <= maxStampedValues {
		*t.values = (*t.values)[:0]
		stampedValues.Put(t.values)
	}
	t.values = nil
	// The overlay points into the batch's buffer, which Pebble reuses.
	t.b, t.view, t.snap = nil, nil, nil
	return nil
}

// apply commits b, forgetting the cached values of its first n keys
// around it and then giving those with entries the values committed (see
// forget and rewrite); the others are new keys, stamped, that the cache
// does not hold. The writes at the positions fresh (in order) are of new
// keys too, which get an entry only where there is room (see forget). The
// caller holds the commit log's lock.
func (d *DB) apply(b *pebble.Batch, n uint32, fresh []uint32) error {
	if d.rows == nil {
		return b.Commit(pebble.NoSync)
	}
	var touched shardSet
	defer d.rows.settle(&touched)
	entries := d.rows.entries[:0]
	defer func() { d.rows.entries = entries[:0] }()
	r := b.Reader()
	for i := range n {
		kind, k, v, ok, err := r.Next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		isNew := len(fresh) > 0 && fresh[0] == i
		if isNew {
			fresh = fresh[1:]
		}
		if !d.rows.holds(k) {
			// No entry, and no read fills one.
			entries = append(entries, noEntry)
			continue
		}
		entries = append(entries, d.rows.forget(k, v, kind == pebble.InternalKeyKindSet, isNew, &touched))
	}
	err := b.Commit(pebble.NoSync)
	// A batch that cannot be read back (it was read above) is not the
	// commit's failure: the cache is emptied instead, since a key written
	// twice may have kept its first value.
	r = b.Reader()
	for _, state := range entries {
		kind, k, v, ok, rerr := r.Next()
		if rerr != nil {
			d.rows.forgetRange(nil, nil, &touched)
			break
		}
		if !ok {
			break
		}
		if state != noEntry {
			d.rows.rewrite(k, v, err == nil && kind == pebble.InternalKeyKindSet, state)
		}
	}
	return err
}

// DeleteRange implements storage.KV. It is applied under the commit log's
// lock, as commits are, so that the row cache forgets around it; the
// unflushed bytes of the groups it covers stop counting.
func (d *DB) DeleteRange(start, end []byte) error {
	d.log.mu.Lock()
	defer d.log.mu.Unlock()
	d.unflushed.forget(start, end)
	if d.rows == nil {
		return d.db.DeleteRange(start, end, pebble.NoSync)
	}
	var touched shardSet
	defer d.rows.settle(&touched)
	d.rows.forgetRange(start, end, &touched)
	return d.db.DeleteRange(start, end, pebble.NoSync)
}
