package pebblekv

import (
	"errors"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/batchrepr"

	"github.com/folio-db/folio/internal/storage"
)

// commitLog detects write conflicts between transactions: it numbers
// commits and remembers, for every key written since the oldest open
// transaction began, the number of the last commit that wrote it. A
// transaction that began at number s conflicts with a commit numbered above
// s that wrote one of its keys. Commits are applied under mu, in number order, so a snapshot taken under mu holds
// exactly the commits up to the current number.
type commitLog struct {
	mu      sync.Mutex
	seq     uint64
	written map[string]uint64
	// active counts the open transactions by the number they began at.
	active map[uint64]int
	// sincePrune counts commits since written was last pruned.
	sincePrune int
}

func newCommitLog() *commitLog {
	return &commitLog{written: map[string]uint64{}, active: map[uint64]int{}}
}

// begin registers a transaction starting now and takes its snapshot.
func (l *commitLog) begin(db *pebble.DB) (uint64, *pebble.Snapshot) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.active[l.seq]++
	return l.seq, db.NewSnapshot()
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
	}
}

// commit applies b unless a commit numbered after start wrote one of b's
// keys (ErrWriteConflict), and ends the transaction that began at start:
// its keys need recording only for the other transactions open.
func (l *commitLog) commit(b *pebble.Batch, start uint64) error {
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
		if l.written[string(k)] > start {
			return storage.ErrWriteConflict
		}
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return err
	}
	l.seq++
	if len(l.active) > 0 {
		if err := l.record(b.Reader()); err != nil {
			return err
		}
	}
	l.prune()
	return nil
}

// record notes the keys of a committed batch as written by the current
// commit number.
func (l *commitLog) record(r batchrepr.Reader) error {
	for {
		_, k, _, ok, err := r.Next()
		if err != nil || !ok {
			return err
		}
		l.written[string(k)] = l.seq
	}
}

// prune forgets the writes no open transaction can conflict with: those
// numbered at or below the oldest open transaction's start.
func (l *commitLog) prune() {
	if len(l.active) == 0 {
		clear(l.written)
		l.sincePrune = 0
		return
	}
	if l.sincePrune++; l.sincePrune < 1024 || len(l.written) < 4096 {
		return
	}
	l.sincePrune = 0
	oldest := l.seq
	for s := range l.active {
		oldest = min(oldest, s)
	}
	for k, s := range l.written {
		if s <= oldest {
			delete(l.written, k)
		}
	}
}

// txn is a storage.Txn: a snapshot, the Pebble batch its writes go to (in
// order, so the last write of a key wins), an overlay indexing the batch's
// copies of them for its reads, and its commit number.
type txn struct {
	d     *DB
	start uint64
	snap  *pebble.Snapshot
	view  *storage.Overlay
	b     *pebble.Batch // nil until the first write
	// ended is set once the commit log no longer counts t as open.
	ended bool
	done  bool
}

// Begin implements storage.KV.
func (d *DB) Begin() (storage.Txn, error) {
	start, snap := d.log.begin(d.db)
	return &txn{d: d, start: start, snap: snap, view: storage.NewOverlay(snapshot{snap})}, nil
}

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
func (t *txn) Set(key, value []byte) error {
	if t.done {
		return errEnded
	}
	op := t.batch().SetDeferred(len(key), len(value))
	copy(op.Key, key)
	copy(op.Value, value)
	if err := op.Finish(); err != nil {
		return err
	}
	t.view.Put(op.Key, op.Value)
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
	if t.b == nil || t.b.Empty() {
		return nil
	}
	if err := t.d.space.check(t.b.Len()); err != nil {
		return err
	}
	t.ended = true
	return t.d.log.commit(t.b, t.start)
}

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
	// The overlay points into the batch's buffer, which Pebble reuses.
	t.b, t.view = nil, nil
	return t.snap.Close()
}

// DeleteRange implements storage.KV.
func (d *DB) DeleteRange(start, end []byte) error {
	return d.db.DeleteRange(start, end, pebble.NoSync)
}
