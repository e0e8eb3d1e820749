package storagetest

import (
	"errors"
	"math/rand/v2"
	"sync/atomic"

	"github.com/folio-db/folio/internal/storage"
)

// Conflicting wraps kv so that a fraction p of the commits of transactions
// that write fail with storage.ErrWriteConflict without applying anything,
// as when another writer wins: code over it must run such a transaction
// again or report the conflict, and lose or duplicate nothing. Injected
// counts the failures.
func Conflicting(kv storage.KV, p float64) *ConflictingKV {
	return &ConflictingKV{KV: kv, p: p}
}

// ConflictingKV is the store Conflicting returns.
type ConflictingKV struct {
	storage.KV
	p        float64
	injected atomic.Int64
}

// Injected is how many commits failed by injection so far.
func (c *ConflictingKV) Injected() int64 { return c.injected.Load() }

// Begin implements storage.KV.
func (c *ConflictingKV) Begin() (storage.Txn, error) {
	tx, err := c.KV.Begin()
	if err != nil {
		return nil, err
	}
	return &conflictingTxn{Txn: tx, kv: c}, nil
}

// EstimateDiskUsage passes through to the wrapped store when it estimates.
func (c *ConflictingKV) EstimateDiskUsage(lower, upper []byte) (uint64, error) {
	if est, ok := c.KV.(storage.DiskUsageEstimator); ok {
		return est.EstimateDiskUsage(lower, upper)
	}
	return 0, nil
}

type conflictingTxn struct {
	storage.Txn
	kv    *ConflictingKV
	wrote bool
}

func (t *conflictingTxn) Set(key, value []byte) error {
	t.wrote = true
	return t.Txn.Set(key, value)
}

func (t *conflictingTxn) Delete(key []byte) error {
	t.wrote = true
	return t.Txn.Delete(key)
}

func (t *conflictingTxn) Commit() error {
	if t.wrote && rand.Float64() < t.kv.p {
		t.wrote = false
		t.kv.injected.Add(1)
		if err := t.Txn.Rollback(); err != nil {
			return err
		}
		return storage.ErrWriteConflict
	}
	return t.Txn.Commit()
}

// Unwrap is the wrapped store (storage.StampsOf looks through it).
func (c *ConflictingKV) Unwrap() storage.KV { return c.KV }

// SetStamped passes through to the wrapped transaction; it counts as a
// write.
func (t *conflictingTxn) SetStamped(prefix []byte, value storage.StampedValue) error {
	st, ok := t.Txn.(storage.StampedTxn)
	if !ok {
		return errors.New("storagetest: the wrapped store does not stamp commits")
	}
	t.wrote = true
	return st.SetStamped(prefix, value)
}

// CommitStamp passes through to the wrapped transaction.
func (t *conflictingTxn) CommitStamp() uint64 {
	if st, ok := t.Txn.(storage.StampedTxn); ok {
		return st.CommitStamp()
	}
	return 0
}
