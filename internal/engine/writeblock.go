package engine

import (
	"context"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/storage"
)

// User write blocking (setUserWriteBlockMode, MongoDB 6.0+): while it is
// on, a write to a namespace outside the internal databases (admin,
// config, local), other than a system.profile collection, fails with
// UserWritesBlocked (371), unless the operation's context bypasses the
// block (BypassWriteBlock: a user with the bypassWriteBlockingMode
// privilege). The check is made where a document is inserted, changed or
// removed, as MongoDB makes it in its op observers: an update that matches
// nothing succeeds. Background deletions (TTL) are blocked too. The state
// is kept in the store and survives a restart.

// keyUserWritesBlocked is present while user writes are blocked.
var keyUserWritesBlocked = []byte{spaceMeta, 'u', 'w', 'b'}

type bypassWriteBlockKey struct{}

// BypassWriteBlock marks ctx as exempt from the user write block.
func BypassWriteBlock(ctx context.Context) context.Context {
	return context.WithValue(ctx, bypassWriteBlockKey{}, true)
}

// SetUserWritesBlocked turns the user write block on or off, on disk
// before it returns.
func (e *Engine) SetUserWritesBlocked(on bool) error {
	err := e.retry(context.Background(), func(tx storage.Txn) error {
		var err error
		if on {
			err = tx.Set(keyUserWritesBlocked, []byte{1})
		} else {
			err = tx.Delete(keyUserWritesBlocked)
		}
		if err == nil {
			err = e.commit(tx)
		}
		return err
	})
	if err == nil {
		err = e.kv.Sync()
	}
	if err == nil {
		e.writesBlocked.Store(on)
	}
	return err
}

// loadWriteBlock reads the user write block's state from the store.
func (e *Engine) loadWriteBlock() error {
	_, on, err := e.kv.Get(keyUserWritesBlocked)
	e.writesBlocked.Store(on)
	return err
}

// CheckUserWrite fails a write to db.coll under ctx while user writes are
// blocked (GlobalUserWriteBlockState::checkUserWritesAllowed); coll is ""
// for a database's catalog.
func (e *Engine) CheckUserWrite(ctx context.Context, db, coll string) error {
	if !e.writesBlocked.Load() || db == "admin" || db == "config" || db == "local" || coll == ProfileCollection {
		return nil
	}
	if ctx != nil && ctx.Value(bypassWriteBlockKey{}) != nil {
		return nil
	}
	return mongoerr.New(mongoerr.UserWritesBlocked, "User writes blocked")
}
