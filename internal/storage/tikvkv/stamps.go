package tikvkv

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pingcap/kvproto/pkg/kvrpcpb"
	"github.com/tikv/client-go/v2/oracle"
	"github.com/tikv/client-go/v2/tikv"
	"github.com/tikv/client-go/v2/tikvrpc"
	"github.com/tikv/client-go/v2/txnkv/txnlock"
	"github.com/tikv/client-go/v2/txnkv/txnsnapshot"

	"github.com/folio-db/folio/internal/clock"
	"github.com/folio-db/folio/internal/storage"
)

// Stamped keys (the oplog) on TiKV. A commit's stamp is its commit
// timestamp, which TiKV gives only once the commit is done, so a
// transaction cannot write a key named by it. Instead:
//
//   - The transaction writes its stamped value, with the prefix of the key
//     it is meant for, under a staged key: stagedSpace <start timestamp:8>.
//     Once committed, the staged key's commit record holds the commit
//     timestamp, as every key of the transaction's does.
//   - LastStamp takes a fresh timestamp R, lists the locks of the staged
//     keys at or below R (transactions begun and not wholly committed) and
//     resolves them as a reader would: a committed transaction's staged
//     key is committed at once, a dead writer's rolled back once its time
//     to live has passed. It then reads the committed staged keys at R
//     without waiting on locks. For each one it asks the commit timestamp
//     of its commit record (client-go's lock resolver), and moves the
//     value to <prefix><stamp> in one transaction that deletes the staged
//     key. The horizon is R's stamp, or just below the start timestamp of
//     the oldest staged key still locked: a transaction still locked
//     after the resolution commits after its start; one that prewrote
//     after the listing takes its commit timestamp after R; one committed
//     before the listing, or by the resolution, is read. So every stamped
//     key up to the horizon is in place, and none will be added there.
//
// Whoever calls LastStamp does the moving: a change stream's reader, or
// the background pass every frontend makes each second; concurrent moves
// of one staged key conflict, and the loser finds it gone. A writer that
// dies after its commit leaves its staged key for them; one that dies
// before leaves locks, resolved once their time to live has passed.
//
// A commit has one stamp, so the stamped values of one transaction are
// joined into one (storage.StampedValue.Join).
//
// The staged keys sit after Folio's own keys (which start with an ASCII
// tag) and before the chunks of large values, out of iterators' reach. A
// staged key is not the transaction's primary key (the first in order):
// were it, a transaction's other keys would wait for their asynchronous
// commit after it, and readers of contended documents would resolve
// their locks far more often.
const stagedSpace = 0xfd

// pollEvery is how often a waiter on LastStamp's channel looks again for
// other frontends' commits.
const pollEvery = 20 * time.Millisecond

// stampOf is the stamp (a cluster time: seconds in the high 32 bits) of
// a TSO timestamp: its second, and in the increment its millisecond within
// the second and its logical counter (18 bits). Stamps order as the
// timestamps do, and distinct timestamps have distinct stamps.
func stampOf(ts uint64) uint64 {
	ms := uint64(oracle.ExtractPhysical(ts))
	return ms/1000<<32 | ms%1000<<22 | uint64(oracle.ExtractLogical(ts))
}

func stagedKey(startTS uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{stagedSpace}, startTS)
}

// stageValue is a staged key's value: the offset of the stamp in the
// value, the length of the key's prefix, the prefix, then the value.
func stageValue(prefix, value []byte, stampAt int) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(stampAt))
	b = binary.BigEndian.AppendUint32(b, uint32(len(prefix)))
	b = append(b, prefix...)
	return append(b, value...)
}

// placed is the key and value of a staged value once its stamp is known.
func placed(staged []byte, stamp uint64) (key, value []byte, err error) {
	if len(staged) < 8 {
		return nil, nil, fmt.Errorf("tikv: staged value of %d bytes", len(staged))
	}
	at, n := int(binary.BigEndian.Uint32(staged)), int(binary.BigEndian.Uint32(staged[4:]))
	if n > len(staged)-8 || at < 0 || at+8 > len(staged)-8-n {
		return nil, nil, errors.New("tikv: malformed staged value")
	}
	prefix, value := staged[8:8+n], append([]byte(nil), staged[8+n:]...)
	binary.LittleEndian.PutUint64(value[at:], stamp)
	return binary.BigEndian.AppendUint64(append([]byte(nil), prefix...), stamp), value, nil
}

// stamps is a Store's view of its stamps.
type stamps struct {
	// placing serializes the Store's moves of staged values, and guards
	// warned.
	placing sync.Mutex
	// warned is when the horizon last made a warning; holdWarning is how
	// long a lock holds it back before one, and how often one is made.
	warned      time.Time
	holdWarning time.Duration
	mu          sync.Mutex
	// last is the latest horizon found.
	last uint64
	// next is closed at the next time to look, or at a local stamped
	// commit; nil until someone waits.
	next chan struct{}
}

// wake closes the waiters' channel.
func (s *stamps) wake() {
	s.mu.Lock()
	if s.next != nil {
		close(s.next)
		s.next = nil
	}
	s.mu.Unlock()
}

// waitChan is the channel closed at the next time to look; the caller
// holds mu.
func (s *stamps) waitChan() <-chan struct{} {
	if s.next == nil {
		ch := make(chan struct{})
		s.next = ch
		time.AfterFunc(pollEvery, func() {
			s.mu.Lock()
			if s.next == ch {
				close(ch)
				s.next = nil
			}
			s.mu.Unlock()
		})
	}
	return s.next
}

// LastStamp implements storage.Stamps: it moves every committed staged
// value into place and returns the stamp of the timestamp it read at. A
// failure keeps the horizon found before, which stays true.
func (s *Store) LastStamp() (uint64, <-chan struct{}) {
	h, err := s.placeStaged()
	st := &s.stamps
	st.mu.Lock()
	defer st.mu.Unlock()
	if err == nil && h > st.last {
		st.last = h
	}
	s.clock.Advance(clock.Time(st.last))
	return st.last, st.waitChan()
}

// AdvanceStamp implements storage.Stamps: nothing to do, TiKV's timestamp
// oracle only moves forward.
func (s *Store) AdvanceStamp(uint64) {}

// placeStaged moves the committed staged values into place and returns
// the horizon, one Store at a time.
func (s *Store) placeStaged() (uint64, error) {
	s.stamps.placing.Lock()
	defer s.stamps.placing.Unlock()
	for n := 0; ; n++ {
		h, err := s.placeStagedOnce()
		if !errors.Is(err, storage.ErrWriteConflict) || n == 10 {
			if err != nil {
				s.warnHorizon("the oplog's horizon was not moved", "err", err)
			}
			return h, err
		}
	}
}

// defaultHoldWarning is how long a transaction's lock may hold the
// horizon back before the Store says so: each reader of the oplog (a
// change stream) waits for it. client-go gives a small transaction's locks
// 3 s to live, plus the time it ran before its commit.
const defaultHoldWarning = 10 * time.Second

// warnHorizon logs why the horizon did not move, at most every
// holdWarning; the caller holds placing.
func (s *Store) warnHorizon(msg string, args ...any) {
	if now := time.Now(); now.Sub(s.stamps.warned) >= s.stamps.holdWarning {
		s.stamps.warned = now
		s.log.Warn(msg, args...)
	}
}

func (s *Store) placeStagedOnce() (uint64, error) {
	ts, err := s.timestamp()
	if err != nil {
		return 0, err
	}
	horizon := stampOf(ts)
	oldest, err := s.oldestStagedLock(ts)
	if err != nil {
		return 0, err
	}
	if oldest != 0 {
		horizon = min(horizon, stampOf(oldest)-1)
		if held := time.Duration(oracle.ExtractPhysical(ts)-oracle.ExtractPhysical(oldest)) * time.Millisecond; held >= s.stamps.holdWarning {
			s.warnHorizon("the oplog's horizon is held back by a transaction still locked", "startTS", oldest, "for", held)
		}
	}
	moves, err := s.committedStaged(ts)
	if err != nil {
		return 0, err
	}
	if len(moves) == 0 {
		return horizon, nil
	}
	tx, err := s.Begin()
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	for _, m := range moves {
		if _, ok, err := tx.Get(m.staged); err != nil {
			return 0, err
		} else if !ok {
			continue // moved by another
		}
		if err := tx.Delete(m.staged); err != nil {
			return 0, err
		}
		if err := tx.Set(m.key, m.value); err != nil {
			return 0, err
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, err
	}
	return horizon, nil
}

// move is a committed staged key and the key and value it becomes.
type move struct{ staged, key, value []byte }

// committedStaged reads the staged keys committed at or below ts, without
// waiting on locks, and what each becomes at its commit's stamp.
func (s *Store) committedStaged(ts uint64) (moves []move, err error) {
	snap := s.kv.GetSnapshot(ts)
	snap.SetIsolationLevel(txnsnapshot.RC)
	it := &iter{src: snapSource(s, snap), lower: []byte{stagedSpace}, upper: []byte{stagedSpace + 1}}
	defer func() { err = errors.Join(err, it.Close()) }()
	for ok := it.First(); ok; ok = it.Next() {
		staged := clone(it.Key())
		value := it.Value()
		if it.Error() != nil {
			return nil, nil // Close reports it
		}
		if len(staged) != 9 {
			return nil, fmt.Errorf("tikv: staged key %x", staged)
		}
		startTS := binary.BigEndian.Uint64(staged[1:])
		status, err := s.kv.GetLockResolver().GetTxnStatus(startTS, ts, staged)
		if err != nil {
			return nil, fmt.Errorf("tikv: the commit of staged key %x: %w", staged, err)
		}
		if !status.IsCommitted() {
			return nil, fmt.Errorf("tikv: staged key %x is visible but its transaction is not committed", staged)
		}
		key, value, err := placed(value, stampOf(status.CommitTS()))
		if err != nil {
			return nil, err
		}
		moves = append(moves, move{staged: staged, key: key, value: value})
	}
	return moves, nil
}

// oldestStagedLock is the smallest start timestamp among the locks on
// staged keys of transactions begun at or before ts that are still
// pending (0: none). Every lock found is resolved first, as a reader
// meeting it would: a lock whose transaction has committed (its primary
// key is, and the staged key waits for the asynchronous commit of
// client-go's secondaries) is committed, so that the read at ts that
// follows finds a write acknowledged before ts; a lock whose writer died
// is rolled back once its time to live has passed. Only the others hold
// the horizon back.
func (s *Store) oldestStagedLock(ts uint64) (uint64, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	bo := tikv.NewBackoffer(ctx, int(s.timeout/time.Millisecond))
	var locks []*txnlock.Lock
	stagedEnd := []byte{stagedSpace + 1}
	for key := []byte{stagedSpace}; ; {
		loc, err := s.kv.GetRegionCache().LocateKey(bo, key)
		if err != nil {
			return 0, err
		}
		end := loc.EndKey
		if len(end) == 0 || bytes.Compare(end, stagedEnd) > 0 {
			end = stagedEnd
		}
		req := tikvrpc.NewRequest(tikvrpc.CmdScanLock, &kvrpcpb.ScanLockRequest{MaxVersion: ts, StartKey: key, EndKey: end, Limit: scanLockLimit})
		resp, err := s.kv.SendReq(bo, req, loc.Region, tikv.ReadTimeoutMedium)
		if err != nil {
			return 0, err
		}
		if regionErr, err := resp.GetRegionError(); err != nil {
			return 0, err
		} else if regionErr != nil {
			// a split: the region cache has learnt the new regions
			if regionErr.GetEpochNotMatch() == nil {
				if err := bo.Backoff(tikv.BoRegionMiss(), errors.New(regionErr.String())); err != nil {
					return 0, err
				}
			}
			continue
		}
		r, ok := resp.Resp.(*kvrpcpb.ScanLockResponse)
		if !ok || r.GetError() != nil {
			return 0, fmt.Errorf("tikv: scanning the staged keys' locks: %v", r.GetError())
		}
		found := r.GetLocks()
		for _, l := range found {
			lock := txnlock.NewLock(l)
			// mocktikv's ScanLock leaves the time to live out, and
			// client-go rolls back a lock of none at once
			lock.TTL = max(lock.TTL, staleLock)
			locks = append(locks, lock)
		}
		if len(found) == scanLockLimit {
			key = append(clone(found[len(found)-1].GetKey()), 0)
		} else {
			key = end
		}
		if bytes.Compare(key, stagedEnd) >= 0 {
			break
		}
	}
	if len(locks) == 0 {
		return 0, nil
	}
	// A caller start of 0 leaves the pending transactions' commit
	// timestamps where they are: a caller's start pushes them past it,
	// and pushed at every pass a writer's commit would be retried again
	// and again. A resolved lock is then among the ignored ones, whether
	// it committed (at or before ts: read next) or was rolled back.
	res, err := s.kv.GetLockResolver().ResolveLocksWithOpts(bo, txnlock.ResolveLocksOptions{CallerStartTS: 0, Locks: locks, Lite: true})
	if err != nil {
		return 0, err
	}
	var oldest uint64
	for _, l := range locks {
		if slices.Contains(res.IgnoreLocks, l.TxnID) {
			continue
		}
		if oldest == 0 || l.TxnID < oldest {
			oldest = l.TxnID
		}
	}
	return oldest, nil
}

// staleLock is the least time to live, in milliseconds, given to a
// staged key's lock found without one (client-go gives a small
// transaction's locks 3 s to live, plus the time it took before its
// prewrite): the resolution asks the primary lock's own time to live, and
// rolls back only a transaction past it, but client-go would roll back a
// lock of none at once.
const staleLock = 5000

// scanLockLimit bounds the locks one ScanLock request returns.
const scanLockLimit = 256

// SetStamped implements storage.StampedTxn: the transaction's stamped
// values are joined into one, staged at commit.
func (t *txn) SetStamped(prefix []byte, value storage.StampedValue) error {
	if t.done {
		return errors.New("tikv: transaction ended")
	}
	switch {
	case t.stamped == nil:
		t.stamped, t.stampedPrefix = value, append([]byte(nil), prefix...)
	case !bytes.Equal(prefix, t.stampedPrefix):
		return errors.New("tikv: a transaction's stamped keys must share their prefix")
	default:
		t.stamped = t.stamped.Join(value)
	}
	return nil
}

// stage writes the transaction's staged key, before its commit.
func (t *txn) stage() error {
	if t.stamped == nil {
		return nil
	}
	v, at := t.stamped.AppendValue(nil)
	return t.Set(stagedKey(t.t.StartTS()), stageValue(t.stampedPrefix, v, at))
}

// tsoClock is the cluster clock of a Store (clock.Source): the stamps of
// the oracle's timestamps, so that operationTime and the oplog's times
// agree across frontends.
type tsoClock struct {
	s   *Store
	cur atomic.Uint64
}

// Now is the latest time handed out or learnt.
func (c *tsoClock) Now() clock.Time { return clock.Time(c.cur.Load()) }

// Tick is the stamp of a fresh timestamp; without the oracle, a time just
// above the latest.
func (c *tsoClock) Tick() clock.Time {
	ts, err := c.s.timestamp()
	if err != nil {
		return clock.Time(c.cur.Add(1))
	}
	c.Advance(clock.Time(stampOf(ts)))
	return c.Now()
}

// Advance moves the clock to t if t is later.
func (c *tsoClock) Advance(t clock.Time) {
	for {
		cur := c.cur.Load()
		if uint64(t) <= cur || c.cur.CompareAndSwap(cur, uint64(t)) {
			return
		}
	}
}

// Clock is the store's cluster clock.
func (s *Store) Clock() clock.Source { return &s.clock }

var (
	_ storage.Stamps     = (*Store)(nil)
	_ storage.StampedTxn = (*txn)(nil)
)
