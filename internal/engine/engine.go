// Package engine owns the catalog and the read and write paths of documents
// over a storage.KV. Every write of one document commits in one atomic
// batch; concurrent writers of the same document are serialized by a lock on
// its key, and each re-reads the document under that lock, so no update is
// lost and no two findAndModify calls claim the same document.
package engine

import (
	"log/slog"

	"github.com/folio-db/folio/internal/storage"
)

// Options configure an Engine.
type Options struct {
	// NoSync acknowledges writes before they reach the disk: faster, but a
	// crash may lose the last writes. By default every acknowledged write
	// is durable (MongoDB's j:true).
	NoSync bool
	// TempDir holds the runs of sorts that spill to disk; empty means the
	// system's temporary directory.
	TempDir string
	// SortMemoryLimit bounds the memory of one in-memory sort; zero means
	// DefaultSortMemoryLimit.
	SortMemoryLimit int64
	Logger          *slog.Logger
}

// Engine is the database: catalog plus documents over one KV store.
type Engine struct {
	kv   storage.KV
	opts Options
	log  *slog.Logger
	cat  catalog
	// locks serialize writers of a document (by its key); uniqueLocks
	// serialize writers of an entry of a unique index. A writer takes
	// document locks first, then unique-entry locks, each set at once.
	locks       lockTable
	uniqueLocks lockTable
	// intents are the documents open transactions wrote.
	intents intents
}

// Open loads the catalog from kv. The Engine does not own kv: close kv after
// the Engine is no longer used.
func Open(kv storage.KV, opts Options) (*Engine, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	e := &Engine{kv: kv, opts: opts, log: log, intents: intents{owner: map[string]*Txn{}}}
	if err := e.cat.load(kv); err != nil {
		return nil, err
	}
	return e, nil
}

// commit commits b and, unless the engine runs without sync, waits until it
// is durable. Writers call it while holding their document locks: the batch
// commits without waiting for the disk, so the locks are not held across an
// fsync, and the sync that follows is shared by every concurrent writer.
func (e *Engine) commit(b storage.Batch) error {
	if b.Empty() {
		return nil
	}
	return b.Commit(false)
}

// durable waits until every write committed so far is on disk.
func (e *Engine) durable() error {
	if e.opts.NoSync {
		return nil
	}
	return e.kv.Sync()
}
