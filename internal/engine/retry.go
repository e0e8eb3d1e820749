package engine

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/storage"
)

// attempt is one try of a write outside a multi-document transaction: it
// reads what it needs in tx, decides, stages its writes in tx and commits
// it (through Engine.commit). A storage.ErrWriteConflict it returns makes
// retry run it again on a new transaction.
type attempt func(tx storage.Txn) error

// retry runs try in a storage transaction until it does not fail with a
// write conflict, as MongoDB retries a write that conflicts outside a
// multi-document transaction (writeConflictRetry): every try re-reads,
// re-matches and re-applies. Conflicts past the first back off a little;
// the retries end with ctx's interruption (nil ctx: never).
func (e *Engine) retry(ctx context.Context, try attempt) error {
	for n := 0; ; n++ {
		tx, err := e.kv.Begin()
		if err != nil {
			return err
		}
		err = try(tx)
		tx.Rollback()
		if err == nil {
			noteCommit(ctx, tx)
		}
		if !errors.Is(err, storage.ErrWriteConflict) {
			return err
		}
		if err := mongoerr.Interruption(ctx); err != nil {
			return err
		}
		backoff(n)
	}
}

// backoff waits before the retry following the n-th conflict (from 0):
// nothing the first time, then a random wait growing to at most 10 ms, so
// that writers conflicting on other engines stop meeting.
func backoff(n int) {
	if n == 0 {
		return
	}
	limit := time.Duration(min(1<<min(n, 10), 10_000)) * time.Microsecond
	time.Sleep(rand.N(limit) + time.Microsecond)
}
