package tikvkv

import (
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
}

// Begin implements storage.KV.
func (s *Store) Begin() (storage.Txn, error) {
	t, err := s.kv.Begin()
	if err != nil {
		return nil, fmt.Errorf("tikv: begin: %w", err)
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
		return nil, false, err
	}
	v, ok, err := decodeValue(v)
	return append([]byte{}, v...), ok, err
}

func (t *txn) NewIter(lower, upper []byte) (storage.Iter, error) {
	return newIter(txnSource(t.t), lower, upper), nil
}

func (t *txn) Set(key, value []byte) error {
	t.scratch = append(append(t.scratch[:0], valuePrefix), value...)
	return t.t.Set(key, t.scratch)
}

func (t *txn) Delete(key []byte) error { return t.t.Delete(key) }

// Commit implements storage.Txn; a write conflict (TiKV's, or the local
// latches') is storage.ErrWriteConflict.
func (t *txn) Commit() error {
	if t.done {
		return nil
	}
	t.done = true
	ctx, cancel := t.s.ctx()
	defer cancel()
	err := t.t.Commit(ctx)
	if err == nil {
		return nil
	}
	var latch *tikverr.ErrWriteConflictInLatch
	if tikverr.IsErrWriteConflict(err) || errors.As(err, &latch) {
		return fmt.Errorf("%w: %v", storage.ErrWriteConflict, err)
	}
	return err
}

// Rollback implements storage.Txn.
func (t *txn) Rollback() error {
	if t.done {
		return nil
	}
	t.done = true
	return t.t.Rollback()
}
