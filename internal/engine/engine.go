// Package engine owns the catalog and the read and write paths of documents
// over a storage.KV. Every write of one document commits in one atomic
// batch; concurrent writers of the same document are serialized by a lock on
// its key, and each re-reads the document under that lock, so no update is
// lost and no two findAndModify calls claim the same document.
package engine

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/storage"
)

// Options configure an Engine.
type Options struct {
	// Durability says when an acknowledged write is on disk.
	Durability Durability
	// TempDir holds the runs of sorts that spill to disk; empty means the
	// system's temporary directory.
	TempDir string
	// SortMemoryLimit bounds the memory of one in-memory sort; zero means
	// DefaultSortMemoryLimit.
	SortMemoryLimit int64
	Logger          *slog.Logger
}

// Durability is when writes reach the disk.
type Durability int

const (
	// DurableOnRequest is MongoDB's default: a write is on disk when it is
	// acknowledged if its write concern asks for the journal (j: true, or
	// w: "majority"), and otherwise within JournalInterval, as MongoDB
	// commits its journal every 100 ms.
	DurableOnRequest Durability = iota
	// DurableAlways makes every write durable before it is acknowledged.
	DurableAlways
	// DurableNever leaves syncing to Pebble and shutdown: fastest, and a
	// machine crash may lose acknowledged writes.
	DurableNever
)

var durabilityNames = [...]string{DurableOnRequest: "default", DurableAlways: "always", DurableNever: "never"}

func (d Durability) String() string { return durabilityNames[d] }

// ParseDurability reads a Durability by name: default, always or never.
func ParseDurability(name string) (Durability, error) {
	for d, n := range durabilityNames {
		if n == name {
			return Durability(d), nil
		}
	}
	return 0, fmt.Errorf("unknown durability %q: want default, always or never", name)
}

// JournalInterval is how often writes not asked to be durable are synced,
// as MongoDB's commitIntervalMs default.
const JournalInterval = 100 * time.Millisecond

// WriteOptions are a write command's transaction and write concern.
type WriteOptions struct {
	// Txn, when set, buffers the write in the transaction.
	Txn *Txn
	// Journal asks for the write to be on disk when it is acknowledged
	// (j: true, or w: "majority").
	Journal bool
	// Record, when set outside a transaction, records each statement in
	// the batch of its write (a retryable write's session record).
	Record Recorder
	// Ctx is the operation's context: a multi-document write stops with its
	// interruption's error between documents, the documents already
	// changed staying changed, as in MongoDB. Nil never ends.
	Ctx context.Context
	// Let is the statement's variables (a command's let, an update's
	// constants), seen by its filter's $expr and its update pipeline. Nil
	// binds none.
	Let *expr.Let
	// BypassValidation skips the collection's document validation
	// (bypassDocumentValidation).
	BypassValidation bool
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
	// dirty is set by every commit not yet synced by the journal flusher.
	dirty atomic.Bool
	// sortLimit bounds the memory of one in-memory sort.
	sortLimit atomic.Int64
	stop      chan struct{}
	done      chan struct{}
}

// Open loads the catalog from kv. The Engine does not own kv: close kv after
// the Engine is no longer used.
func Open(kv storage.KV, opts Options) (*Engine, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	e := &Engine{kv: kv, opts: opts, log: log, intents: intents{owner: map[string]*Txn{}}, stop: make(chan struct{}), done: make(chan struct{})}
	e.sortLimit.Store(DefaultSortMemoryLimit)
	if opts.SortMemoryLimit > 0 {
		e.sortLimit.Store(opts.SortMemoryLimit)
	}
	if err := e.cat.load(kv); err != nil {
		return nil, err
	}
	go e.flushJournal()
	return e, nil
}

// Close stops the journal flusher after a last sync. Close the KV store
// after the engine.
func (e *Engine) Close() error {
	close(e.stop)
	<-e.done
	return e.kv.Sync()
}

// flushJournal syncs, every JournalInterval, the writes acknowledged
// without waiting for the disk.
func (e *Engine) flushJournal() {
	defer close(e.done)
	t := time.NewTicker(JournalInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if e.opts.Durability == DurableOnRequest && e.dirty.Swap(false) {
				if err := e.kv.Sync(); err != nil {
					e.log.Error("journal sync", "err", err)
				}
			}
		case <-e.stop:
			return
		}
	}
}

// commit commits b and, unless the engine runs without sync, waits until it
// is durable. Writers call it while holding their document locks: the batch
// commits without waiting for the disk, so the locks are not held across an
// fsync, and the sync that follows is shared by every concurrent writer.
func (e *Engine) commit(b storage.Batch) error {
	if b.Empty() {
		return nil
	}
	e.dirty.Store(true)
	return b.Commit(false)
}

// durable waits until every write committed so far is on disk, when the
// write asked for it (journal) or the engine makes every write durable.
func (e *Engine) durable(journal bool) error {
	switch {
	case e.opts.Durability == DurableNever:
		return nil
	case journal || e.opts.Durability == DurableAlways:
		return e.kv.Sync()
	}
	return nil
}
