// Package tikvkv implements storage.KV on TiKV with the official client,
// github.com/tikv/client-go/v2 (v2.0.4: the newest version the module proxy
// serves). A Txn is a client-go optimistic transaction (Percolator) whose
// start and commit timestamps come from PD's timestamp oracle; reads outside
// a transaction read a snapshot at a fresh timestamp, so they see every
// commit that returned before they began, from any client of the cluster.
// Region errors, region paging of scans and lock resolution are client-go's.
//
// Values are stored behind a one-byte prefix: client-go refuses empty values
// (it uses them for deletions), and storage.KV allows them.
package tikvkv

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	tikverr "github.com/tikv/client-go/v2/error"
	"github.com/tikv/client-go/v2/oracle"
	"github.com/tikv/client-go/v2/tikv"
	"github.com/tikv/client-go/v2/txnkv/txnsnapshot"

	"github.com/folio-db/folio/internal/storage"
)

// valuePrefix precedes every stored value.
const valuePrefix = 0

// DefaultTimeout bounds each call to the cluster.
const DefaultTimeout = 30 * time.Second

// Store is a storage.KV over one client-go store.
type Store struct {
	kv      *tikv.KVStore
	timeout time.Duration
	// closeFn runs after the client-go store is closed (the mock cluster's
	// shutdown when this store owns it).
	closeFn func() error
	stamps  stamps
	clock   tsoClock
	// log receives the Store's warnings (stamps.go).
	log *slog.Logger
}

var (
	_ storage.KV      = (*Store)(nil)
	_ storage.Sweeper = (*Store)(nil)
)

func newStore(kv *tikv.KVStore, log *slog.Logger) *Store {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Store{kv: kv, timeout: DefaultTimeout, log: log}
	s.stamps.holdWarning = defaultHoldWarning
	s.clock.s = s
	if ts, err := s.timestamp(); err == nil {
		s.clock.cur.Store(stampOf(ts))
	}
	return s
}

// ctx returns the context of one call: its deadline is the store's timeout.
func (s *Store) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.timeout)
}

// timestamp returns a fresh timestamp from the oracle.
func (s *Store) timestamp() (uint64, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	return s.kv.GetOracle().GetTimestamp(ctx, &oracle.Option{TxnScope: oracle.GlobalTxnScope})
}

func (s *Store) freshSnapshot() (*txnsnapshot.KVSnapshot, error) {
	ts, err := s.timestamp()
	if err != nil {
		return nil, unavailable(fmt.Errorf("tikv: timestamp: %w", err))
	}
	return s.kv.GetSnapshot(ts), nil
}

// Get implements storage.Reader on a snapshot at a fresh timestamp.
func (s *Store) Get(key []byte) ([]byte, bool, error) {
	snap, err := s.freshSnapshot()
	if err != nil {
		return nil, false, err
	}
	return snapGet(s, snap, key)
}

// NewIter implements storage.Reader on a snapshot at a fresh timestamp.
func (s *Store) NewIter(lower, upper []byte) (storage.Iter, error) {
	snap, err := s.freshSnapshot()
	if err != nil {
		return nil, err
	}
	return newIter(snapSource(s, snap), lower, upper), nil
}

// NewSnapshot implements storage.KV: a client-go snapshot at a fixed
// timestamp. A timestamp that cannot be had makes every read of the
// snapshot fail with the error.
func (s *Store) NewSnapshot() storage.Snapshot {
	snap, err := s.freshSnapshot()
	return &snapshot{s: s, snap: snap, err: err}
}

// Exist implements storage.KV with one BatchGet (one request per region).
func (s *Store) Exist(keys [][]byte, found []bool) error {
	snap, err := s.freshSnapshot()
	if err != nil {
		return err
	}
	ctx, cancel := s.ctx()
	defer cancel()
	m, err := snap.BatchGet(ctx, keys)
	if err != nil {
		return unavailable(err)
	}
	for i, k := range keys {
		_, found[i] = m[string(k)]
	}
	return nil
}

// Sync implements storage.KV: nothing to do. A commit has been replicated
// by Raft to a majority of each region's peers when Commit returns, which
// is TiKV's durability.
func (s *Store) Sync() error { return nil }

// DeleteRange implements storage.KV with client-go's range deletion
// (rangetask.DeleteRangeTask: TiKV's DeleteRange on every region of the
// range), which removes every version at once; storage.KV only asks it of
// ranges no transaction reads or writes any more.
func (s *Store) DeleteRange(start, end []byte) error {
	ctx, cancel := s.ctx()
	defer cancel()
	_, err := s.kv.DeleteRange(ctx, start, end, 4)
	return err
}

// Close implements storage.KV.
func (s *Store) Close() error {
	err := s.kv.Close()
	if s.closeFn != nil {
		err = errors.Join(err, s.closeFn())
	}
	return err
}

// KVStore is the client-go store, for tools that need the cluster's view
// (region layout).
func (s *Store) KVStore() *tikv.KVStore { return s.kv }

func snapGet(s *Store, snap *txnsnapshot.KVSnapshot, key []byte) ([]byte, bool, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	v, err := snap.Get(ctx, key)
	if isNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, unavailable(err)
	}
	return s.decodeStored(snap.BatchGet, key, v)
}

func isNotFound(err error) bool { return tikverr.IsErrNotFound(err) }

// decodeValue strips the prefix of a stored value.
func decodeValue(v []byte) ([]byte, bool, error) {
	if len(v) == 0 || v[0] != valuePrefix {
		return nil, false, fmt.Errorf("tikv: value without Folio's prefix (%d bytes)", len(v))
	}
	return v[1:], true, nil
}

// snapshot is a storage.Snapshot at a fixed timestamp.
type snapshot struct {
	s    *Store
	snap *txnsnapshot.KVSnapshot
	err  error
}

func (n *snapshot) Get(key []byte) ([]byte, bool, error) {
	if n.err != nil {
		return nil, false, n.err
	}
	return snapGet(n.s, n.snap, key)
}

func (n *snapshot) NewIter(lower, upper []byte) (storage.Iter, error) {
	if n.err != nil {
		return nil, n.err
	}
	return newIter(snapSource(n.s, n.snap), lower, upper), nil
}

// Close implements storage.Snapshot: a client-go snapshot holds nothing
// to release (TiKV's GC safe point is what bounds its life).
func (n *snapshot) Close() error { return nil }
