package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"time"

	"github.com/folio-db/folio/internal/keyenc"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/storage"
)

// The schema lease. Every engine over a store (a frontend) registers in
// it: a key per frontend holding the catalog version its image was read at
// and the expiry of its lease. The heartbeat renews it every lease/4,
// reloading the image first when the catalog changed; its transaction also
// rewrites the catalog version key, so a heartbeat overtaken by a catalog
// change conflicts and runs again on the new catalog rather than renew a
// lease on an old one. A frontend whose lease ran out refuses to commit
// writes (NotWritablePrimary, retryable) until a heartbeat succeeds again;
// a write or a backfill batch starting meanwhile waits for that heartbeat
// (awaitLease) rather than fail at once.
//
// Invariant: a state change of the schema committed as version v+1 is
// only made once every frontend whose lease is live has loaded v (a
// frontend's image is tagged with a version only once no write begun with
// an older image is running, see reloadLocked). So the writes in flight,
// at any moment, use the images of at most two adjacent state-changing
// versions, and each schema change is split into steps (index_states.go)
// such that any two adjacent steps are safe together. One frontend alone
// waits for nobody: the wait reads the registry once and finds only itself.

// DefaultSchemaLease is the schema lease of a frontend, TiDB's default.
const DefaultSchemaLease = 45 * time.Second

// keyFrontendPrefix starts the registry keys: m fe <frontend id> ->
// version:8 expiry:8 (Unix nanoseconds).
var keyFrontendPrefix = []byte{spaceMeta, 'f', 'e', 0}

func frontendKey(id string) []byte {
	return append(keyFrontendPrefix[:len(keyFrontendPrefix):len(keyFrontendPrefix)], id...)
}

// leaseMargin is how long before its registered expiry a frontend stops
// writing, so that a write it admitted commits before others count its
// lease as expired.
func (e *Engine) leaseMargin() time.Duration { return e.lease / 8 }

// DefaultFrontendID is the id of an engine given none.
const DefaultFrontendID = "local"

// heartbeat reloads the image if the catalog changed and renews this
// frontend's lease with the version loaded.
func (e *Engine) heartbeat() error {
	for n := 0; ; n++ {
		start := time.Now()
		tx, err := e.kv.Begin()
		if err != nil {
			return err
		}
		err = e.renew(tx, start)
		tx.Rollback()
		if errors.Is(err, storage.ErrWriteConflict) {
			backoff(n)
			continue
		}
		if err == nil {
			e.fence.Store(start.Add(e.lease - e.leaseMargin()).UnixNano())
			next := make(chan struct{})
			close(*e.renewed.Swap(&next))
		}
		return err
	}
}

// renew is one try of heartbeat, in tx begun at start.
func (e *Engine) renew(tx storage.Txn, start time.Time) error {
	v, err := readVersion(tx)
	if err != nil {
		return err
	}
	if v != e.cat.version.Load() {
		e.cat.mu.Lock()
		err = e.reloadLocked(tx)
		e.cat.mu.Unlock()
		if err != nil {
			return err
		}
	}
	if err := setVersion(tx, v); err != nil {
		return err
	}
	val := binary.BigEndian.AppendUint64(nil, v)
	val = binary.BigEndian.AppendUint64(val, uint64(start.Add(e.lease).UnixNano()))
	if err := tx.Set(frontendKey(e.frontendID), val); err != nil {
		return err
	}
	return tx.Commit()
}

// checkLease fails a write while this frontend's lease is expired.
func (e *Engine) checkLease() error {
	if time.Now().UnixNano() < e.fence.Load() {
		return nil
	}
	err := mongoerr.New(mongoerr.NotWritablePrimary, "frontend %s has not renewed its schema lease: writes wait until it reloads the catalog", e.frontendID)
	err.Labels = []string{RetryableWriteError}
	return err
}

// awaitLease returns at once while this frontend's lease is live. Once it
// lapsed, it waits for a heartbeat to renew it: for at most half a lease
// (the heartbeat tries again every lease/4 at most), until ctx (nil: none)
// ends or the engine closes. It fails as checkLease does when the wait
// ends without a renewal. Callers hold no lock the heartbeat takes.
func (e *Engine) awaitLease(ctx context.Context) error {
	var timeout <-chan time.Time
	var done <-chan struct{}
	if ctx != nil {
		done = ctx.Done()
	}
	for {
		renewed := *e.renewed.Load()
		err := e.checkLease()
		if err == nil {
			return nil
		}
		if timeout == nil {
			t := time.NewTimer(e.lease / 2)
			defer t.Stop()
			timeout = t.C
			e.leaseWaiters.Add(1)
			defer e.leaseWaiters.Add(-1)
		}
		select {
		case <-renewed:
		case <-timeout:
			return err
		case <-done:
			return mongoerr.Interruption(ctx)
		case <-e.stop:
			return mongoerr.New(mongoerr.InterruptedAtShutdown, "interrupted at shutdown")
		}
	}
}

// runHeartbeat renews the lease (and the jobs lease) every lease/4 until
// the engine closes, and looks at the catalog version more often (every
// versionPoll, at most lease/4): a newer one is loaded and reported at
// once, so that a schema change waits about that long per state for each
// other frontend rather than lease/4.
func (e *Engine) runHeartbeat() {
	defer close(e.heartbeatDone)
	every := e.lease / 4
	t := time.NewTicker(min(versionPoll, every))
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-t.C:
			if e.pauseHeartbeat.Load() {
				continue
			}
			renew := time.Since(last) >= every-every/8
			if !renew {
				v, err := readVersion(e.kv)
				if err != nil {
					e.log.Error("reading the catalog version", "err", err)
					continue
				}
				if v == e.cat.version.Load() {
					continue
				}
			}
			start := time.Now()
			if err := e.heartbeat(); err != nil {
				e.log.Error("schema lease", "err", err)
				continue
			}
			if !renew {
				continue
			}
			last = start
			if err := e.renewJobs(); err != nil {
				e.log.Error("jobs lease", "err", err)
			}
			if e.RunsJobs() {
				if err := e.collectGarbage(); err != nil {
					e.log.Error("removing dropped data", "err", err)
				}
				if err := storage.Sweep(e.kv); err != nil {
					e.log.Error("sweeping the store's garbage", "err", err)
				}
				e.retireAbandonedInBackground()
			}
		case <-e.stop:
			return
		}
	}
}

// versionPoll is how often a frontend reads the catalog version between
// renewals.
const versionPoll = time.Second

// unregister removes this frontend from the registry (at Close).
func (e *Engine) unregister() error {
	for n := 0; ; n++ {
		tx, err := e.kv.Begin()
		if err != nil {
			return err
		}
		err = tx.Delete(frontendKey(e.frontendID))
		if err == nil {
			err = e.releaseJobs(tx)
		}
		if err == nil {
			err = tx.Commit()
		}
		tx.Rollback()
		if !errors.Is(err, storage.ErrWriteConflict) {
			return err
		}
		backoff(n)
	}
}

// laggingFrontends counts the other frontends with a live lease whose
// image is older than version v, and returns the lowest version a live
// frontend (this one included) has loaded.
func (e *Engine) laggingFrontends(v uint64) (lagging int, lowest uint64, err error) {
	lowest = e.cat.version.Load()
	it, err := e.kv.NewIter(keyFrontendPrefix, keyenc.PrefixEnd(keyFrontendPrefix))
	if err != nil {
		return 0, 0, err
	}
	defer it.Close()
	now := time.Now().UnixNano()
	self := frontendKey(e.frontendID)
	for it.First(); it.Valid(); it.Next() {
		val := it.Value()
		if len(val) != 16 || string(it.Key()) == string(self) {
			continue
		}
		loaded, expiry := binary.BigEndian.Uint64(val), int64(binary.BigEndian.Uint64(val[8:]))
		if expiry <= now {
			continue
		}
		lowest = min(lowest, loaded)
		if loaded < v {
			lagging++
		}
	}
	return lagging, lowest, it.Error()
}

// liveFrontends are the ids of the frontends whose lease is live, this
// one included.
func (e *Engine) liveFrontends() (map[string]bool, error) {
	live := map[string]bool{e.frontendID: true}
	it, err := e.kv.NewIter(keyFrontendPrefix, keyenc.PrefixEnd(keyFrontendPrefix))
	if err != nil {
		return nil, err
	}
	defer it.Close()
	now := time.Now().UnixNano()
	for it.First(); it.Valid(); it.Next() {
		if val := it.Value(); len(val) == 16 && int64(binary.BigEndian.Uint64(val[8:])) > now {
			live[string(it.Key()[len(keyFrontendPrefix):])] = true
		}
	}
	return live, it.Error()
}

// awaitVersion waits until every other frontend with a live lease has
// loaded catalog version v, or its lease expired. With no other frontend
// it returns at once.
func (e *Engine) awaitVersion(v uint64) error {
	poll := min(max(e.lease/32, time.Millisecond), 250*time.Millisecond)
	for {
		n, _, err := e.laggingFrontends(v)
		if err != nil || n == 0 {
			return err
		}
		select {
		case <-time.After(poll):
		case <-e.stop:
			return mongoerr.New(mongoerr.InterruptedAtShutdown, "interrupted at shutdown")
		}
	}
}

// retireAbandonedInBackground runs retireAbandoned in a goroutine of its
// own (it waits for the other frontends at each state), one at a time.
func (e *Engine) retireAbandonedInBackground() {
	if !e.retiring.CompareAndSwap(false, true) {
		return
	}
	e.jobs.Add(1)
	go func() {
		defer e.jobs.Done()
		defer e.retiring.Store(false)
		if err := e.retireAbandoned(); err != nil {
			e.log.Error("retiring abandoned indexes", "err", err)
		}
	}()
}
