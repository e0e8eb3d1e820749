package engine

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/folio-db/folio/internal/storage"
)

// Background jobs that write shared data (the TTL monitor, the removal of
// dropped data) run on one frontend at a time: the holder of the jobs
// lease, a key naming its owner and expiry that the owner renews with
// every heartbeat and any frontend takes once it expired. A frontend
// stops its jobs as soon as its own view of the lease runs out, a margin
// before the stored expiry, so two frontends never run them at once.

// keyJobsLease holds the jobs lease: expiry:8 (Unix nanoseconds) then the
// owner's frontend id.
var keyJobsLease = []byte{spaceMeta, 'j', 'o', 'b', 's'}

// renewJobs takes or renews the jobs lease when it is free, expired or
// ours.
func (e *Engine) renewJobs() error {
	for n := 0; ; n++ {
		start := time.Now()
		tx, err := e.kv.Begin()
		if err != nil {
			return err
		}
		var took bool
		took, err = e.takeJobs(tx, start)
		if err == nil && took {
			err = tx.Commit()
		}
		tx.Rollback()
		if errors.Is(err, storage.ErrWriteConflict) {
			backoff(n)
			continue
		}
		if err == nil && took {
			e.jobsUntil.Store(start.Add(e.lease - e.leaseMargin()).UnixNano())
		}
		return err
	}
}

// takeJobs stages the lease for this frontend in tx unless another
// frontend holds it unexpired.
func (e *Engine) takeJobs(tx storage.Txn, start time.Time) (bool, error) {
	v, ok, err := tx.Get(keyJobsLease)
	if err != nil {
		return false, err
	}
	if ok && len(v) >= 8 && string(v[8:]) != e.frontendID && int64(binary.BigEndian.Uint64(v)) > start.UnixNano() {
		return false, nil
	}
	val := binary.BigEndian.AppendUint64(nil, uint64(start.Add(e.lease).UnixNano()))
	return true, tx.Set(keyJobsLease, append(val, e.frontendID...))
}

// releaseJobs stages in tx the release of the jobs lease if this frontend
// holds it.
func (e *Engine) releaseJobs(tx storage.Txn) error {
	v, ok, err := tx.Get(keyJobsLease)
	if err != nil || !ok || len(v) < 8 || string(v[8:]) != e.frontendID {
		return err
	}
	e.jobsUntil.Store(0)
	return tx.Delete(keyJobsLease)
}

// RunsJobs reports whether this frontend holds the jobs lease now.
func (e *Engine) RunsJobs() bool { return time.Now().UnixNano() < e.jobsUntil.Load() }
