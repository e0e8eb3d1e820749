package pebblekv

import (
	"encoding/binary"
	"errors"
	"sync"

	"github.com/cockroachdb/pebble/v2"

	"github.com/folio-db/folio/internal/clock"
	"github.com/folio-db/folio/internal/storage"
)

// stamps gives commits their stamps: times of the store's clock, taken
// under the commit log's lock just before the batch is applied, so that
// stamps grow in the order commits become visible.
type stamps struct {
	clock clock.Source
	mu    sync.Mutex
	last  uint64
	next  chan struct{} // closed when a commit after last is applied
	// durable is the last stamp applied when the latest Sync began, which
	// that Sync put on disk with every earlier commit; durableNext is
	// closed when it moves.
	durable     uint64
	durableNext chan struct{}
	// refs is the store's storage.StampRefStore lock.
	refs sync.RWMutex
}

func newStamps(c clock.Source) *stamps {
	if c == nil {
		c = clock.New(nil)
	}
	return &stamps{clock: c, next: make(chan struct{}), durableNext: make(chan struct{})}
}

// stampedWrite is one SetStamped call waiting for its commit: its value
// is values[start:end] of the transaction's stampedValues.
type stampedWrite struct {
	prefix     []byte
	start, end int
	stampAt    int
	// prevAt is where the stamp of the write before it goes, -1 for
	// none (SetStampedChain).
	prevAt int
	stamp  uint64 // given at commit
}

// stampRef is one InsertStampRef call: the batch offset where the stamp of
// stamped write write goes.
type stampRef struct {
	at    int
	write int
}

// stampedValues pools the buffers transactions build their stamped values
// in (an insert's oplog entries), kept if at most maxStampedValues bytes.
var stampedValues = sync.Pool{New: func() any { return new([]byte) }}

const maxStampedValues = 16 << 20

// apply adds the stamped writes, whose values are in values, to b; the
// caller holds the commit log's lock and applies b next.
func (s *stamps) apply(b *pebble.Batch, writes []stampedWrite, values []byte) (uint64, error) {
	var st uint64
	key := make([]byte, 0, 64)
	for i := range writes {
		w := &writes[i]
		st = uint64(s.clock.Tick())
		w.stamp = st
		key = binary.BigEndian.AppendUint64(append(key[:0], w.prefix...), st)
		v := values[w.start:w.end]
		binary.LittleEndian.PutUint64(v[w.stampAt:], st)
		if w.prevAt >= 0 {
			binary.LittleEndian.PutUint64(v[w.prevAt:], writes[i-1].stamp)
		}
		if err := b.Set(key, v, nil); err != nil {
			return 0, err
		}
	}
	return st, nil
}

// applied publishes last as the latest stamp applied.
func (s *stamps) applied(last uint64) {
	s.mu.Lock()
	s.last = last
	close(s.next)
	s.next = make(chan struct{})
	s.mu.Unlock()
}

// LastStamp implements storage.Stamps.
func (d *DB) LastStamp() (uint64, <-chan struct{}) {
	s := d.stamps
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last, s.next
}

// synced publishes st, the last stamp applied before a sync of the log
// began, as durable.
func (s *stamps) synced(st uint64) {
	s.mu.Lock()
	if st > s.durable {
		s.durable = st
		close(s.durableNext)
		s.durableNext = make(chan struct{})
	}
	s.mu.Unlock()
}

// DurableStamp implements storage.DurableStamps: the stamp the latest Sync
// made durable; in memory, where nothing is ever on disk and nothing is
// lost but by the end of the process, LastStamp.
func (d *DB) DurableStamp() (uint64, <-chan struct{}) {
	if d.inMemory {
		return d.LastStamp()
	}
	s := d.stamps
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.durable, s.durableNext
}

// AdvanceStamp implements storage.Stamps.
func (d *DB) AdvanceStamp(st uint64) {
	d.stamps.clock.Advance(clock.Time(st))
	d.stamps.mu.Lock()
	d.stamps.last = max(d.stamps.last, st)
	d.stamps.mu.Unlock()
}

// Clock is the clock the store's stamps come from.
func (d *DB) Clock() clock.Source { return d.stamps.clock }

// SetStamped implements storage.StampedTxn: each write gets its own stamp.
func (t *txn) SetStamped(prefix []byte, value storage.StampedValue) error {
	if t.done {
		return errEnded
	}
	t.batch()
	// built now, outside the commit's lock
	if t.values == nil {
		t.values = stampedValues.Get().(*[]byte)
	}
	start := len(*t.values)
	var at int
	*t.values, at = value.AppendValue(*t.values)
	t.stamped = append(t.stamped, stampedWrite{prefix: prefix, start: start, end: len(*t.values), stampAt: at, prevAt: -1})
	return nil
}

// SetStampedChain implements storage.StampChainTxn: the writes are
// consecutive in the batch, and apply stamps them in order, so each
// takes the stamp of the one staged just before it.
func (t *txn) SetStampedChain(prefix []byte, values []storage.ChainedValue) error {
	for i, v := range values {
		if err := t.SetStamped(prefix, v); err != nil {
			return err
		}
		w := &t.stamped[len(t.stamped)-1]
		if at := v.PrevStampAt(); i > 0 {
			if at < 0 || at+8 > w.end-w.start {
				return errors.New("pebblekv: a chained value after the first needs 8 bytes for the previous stamp")
			}
			w.prevAt = at
		}
	}
	return nil
}

// StampRefs implements storage.StampRefStore.
func (d *DB) StampRefs() *sync.RWMutex { return &d.stamps.refs }

// GetStamped implements storage.StampRefStore: a read of Pebble, not of
// the row cache.
func (d *DB) GetStamped(key []byte) ([]byte, bool, error) { return get(d.db.Get(key)) }

// InsertStampRef implements storage.StampRefTxn.
func (t *txn) InsertStampRef(key, head, body []byte, at int) error {
	if len(t.stamped) == 0 || at < 0 || at+8 > len(head) {
		return errors.New("pebblekv: InsertStampRef needs a stamped write before it, and 8 bytes of its head at its offset")
	}
	if err := t.insert(key, head, body); err != nil {
		return err
	}
	// The value is the batch's last bytes.
	t.refs = append(t.refs, stampRef{at: t.b.Len() - len(head) - len(body) + at, write: len(t.stamped) - 1})
	return nil
}

// patchRefs writes their stamps into the values of the stamp references;
// the caller holds the commit log's lock, after stamps.apply.
func patchRefs(b *pebble.Batch, refs []stampRef, writes []stampedWrite) {
	if len(refs) == 0 {
		return
	}
	repr := b.Repr()
	for _, r := range refs {
		binary.LittleEndian.PutUint64(repr[r.at:], writes[r.write].stamp)
	}
}

var (
	_ storage.Stamps        = (*DB)(nil)
	_ storage.DurableStamps = (*DB)(nil)
	_ storage.StampRefTxn   = (*txn)(nil)
	_ storage.StampRefStore = (*DB)(nil)
)
