package tikvkv

import (
	"encoding/json"
	"errors"
	"fmt"

	tikverr "github.com/tikv/client-go/v2/error"
	"github.com/tikv/client-go/v2/txnkv/transaction"

	"github.com/folio-db/folio/internal/storage"
)

// txn is a storage.Txn: a client-go optimistic transaction. Its start
// timestamp comes from the oracle at Begin; its writes are buffered in
// client-go's memory buffer; Commit runs Percolator's two phases, and TiKV
// refuses the prewrite of a key committed by another transaction after the
// start timestamp (the first committer wins).
type txn struct {
	s    *Store
	t    *transaction.KVTxn
	done bool
	// scratch holds a prefixed value while client-go copies it.
	scratch []byte
	// large counts the values written in chunks (chunks.go).
	large uint32
	// stamped is the transaction's stamped value, for the key prefix
	// stampedPrefix (stamps.go).
	stamped       storage.StampedValue
	stampedPrefix []byte
	// stamp is the stamp of the commit's timestamp, once a commit with a
	// stamped value succeeded.
	stamp uint64
}

// Begin implements storage.KV.
func (s *Store) Begin() (storage.Txn, error) {
	t, err := s.kv.Begin()
	if err != nil {
		return nil, unavailable(fmt.Errorf("tikv: begin: %w", err))
	}
	return &txn{s: s, t: t}, nil
}

func (t *txn) Get(key []byte) ([]byte, bool, error) {
	ctx, cancel := t.s.ctx()
	defer cancel()
	v, err := t.t.Get(ctx, key)
	if tikverr.IsErrNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, unavailable(err)
	}
	v, ok, err := t.s.decodeStored(t.t.BatchGet, key, v)
	return append([]byte{}, v...), ok, err
}

func (t *txn) NewIter(lower, upper []byte) (storage.Iter, error) {
	return newIter(txnSource(t.s, t.t), lower, upper), nil
}

// Set implements storage.Txn; a value longer than chunkSize goes to
// chunks (chunks.go).
func (t *txn) Set(key, value []byte) error {
	if len(key) > maxKeySize {
		return storage.KeyTooLong(len(key), maxKeySize)
	}
	if len(value) > chunkSize {
		t.large++
		h, chunks := splitValue(value, t.t.StartTS(), t.large)
		for i, k := range h.keys(key) {
			if err := t.t.Set(k, chunks[i]); err != nil {
				return err
			}
		}
		return t.t.Set(key, h.encode())
	}
	t.scratch = append(append(t.scratch[:0], valuePrefix), value...)
	return t.t.Set(key, t.scratch)
}

func (t *txn) Delete(key []byte) error { return t.t.Delete(key) }

// Commit implements storage.Txn; a write conflict (TiKV's, or the local
// latches') is storage.ErrWriteConflict, and a cluster that did not
// answer, or lost the answer, HostUnreachable (unavailable).
func (t *txn) Commit() error {
	if t.done {
		return nil
	}
	if err := t.stage(); err != nil {
		t.Rollback()
		return err
	}
	t.done = true
	var commitTS uint64
	if t.stamped != nil {
		// client-go reports the commit timestamp only to this callback,
		// called before Commit returns.
		t.t.SetCommitCallback(func(info string, err error) {
			if err == nil {
				var ti transaction.TxnInfo
				if json.Unmarshal([]byte(info), &ti) == nil {
					commitTS = ti.CommitTS
				}
			}
		})
	}
	ctx, cancel := t.s.ctx()
	defer cancel()
	err := t.t.Commit(ctx)
	if err == nil {
		if t.stamped != nil {
			t.stamp = stampOf(commitTS)
			t.s.stamps.wake()
		}
		return nil
	}
	var latch *tikverr.ErrWriteConflictInLatch
	if tikverr.IsErrWriteConflict(err) || errors.As(err, &latch) {
		return fmt.Errorf("%w: %v", storage.ErrWriteConflict, err)
	}
	return unavailable(err)
}

// CommitStamp implements storage.StampedTxn: every stamped value of a
// commit has its one stamp.
func (t *txn) CommitStamp() uint64 { return t.stamp }

// Rollback implements storage.Txn.
func (t *txn) Rollback() error {
	if t.done {
		return nil
	}
	t.done = true
	return t.t.Rollback()
}
