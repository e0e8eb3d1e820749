// Package engine owns the catalog and the read and write paths of documents
// over a storage.KV. Every write of one document commits in one storage
// transaction, which re-reads the document, re-matches it and commits only
// if no other commit wrote its keys meanwhile (else it runs again), so no
// update is lost and no two findAndModify calls claim the same document,
// also with other engines over the same store. Within one engine,
// concurrent writers of the same document are serialized by a lock on its
// key first, so that they rarely conflict.
package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/folio-db/folio/internal/clock"
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
	// FrontendID names this engine among those sharing its store (see
	// schema_lease.go): engines over one store must have different ids.
	// Empty means DefaultFrontendID, right for a store no other engine
	// uses (Pebble's directory lock): a restart then takes over the
	// registration and jobs lease its predecessor may have left. An
	// engine with an id does without seek hints (hints.go), which only
	// its own writes would invalidate.
	FrontendID string
	// SchemaLease is how long a frontend's catalog image stays valid
	// without renewal; zero means DefaultSchemaLease.
	SchemaLease time.Duration
	// OplogSize bounds the oplog, in bytes; zero means DefaultOplogSize.
	OplogSize int64
	// MaxTxnOpsPerOplogEntry is MongoDB's startup parameter
	// maxNumberOfTransactionOperationsInSingleOplogEntry: the operations
	// a transaction's applyOps entry holds at most before the next entry
	// of its chain (oplog.SplitTxn); zero means MongoDB's default, no
	// bound but the entry's 16 MB.
	MaxTxnOpsPerOplogEntry int
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
	// Collation is the command's collation document for matching; nil
	// applies the collection's default.
	Collation []byte
	// Journal asks for the write to be on disk when it is acknowledged
	// (j: true, or w: "majority").
	Journal bool
	// DeferDurable leaves the wait for durability (Journal, or the
	// engine's DurableAlways) to the caller, which calls Durable once its
	// command's statements are done, as MongoDB waits for a command's
	// write concern once, after all of them.
	DeferDurable bool
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
	// Clock is the cluster clock, which an update's $currentDate ticks
	// for each timestamp it sets; nil leaves them to the wall clock (see
	// update.Options.Clock).
	Clock clock.Source
}

// Engine is the database: catalog plus documents over one KV store.
type Engine struct {
	kv storage.KV
	// maxKey is the longest key kv writes (storage.KeyLimit); 0 for any.
	maxKey int
	// oplog is nil when the store does not stamp its commits.
	oplog *oplogState
	opts  Options
	log   *slog.Logger
	cat   catalog
	// scans counts the collection scans of every collection (AllScans).
	scans ScanCounts
	// locks serialize writers of a document (by its key); uniqueLocks
	// serialize writers of an entry of a unique index. A writer takes
	// document locks first, then unique-entry locks, each set at once.
	locks       lockTable
	uniqueLocks lockTable
	// intents are the documents open transactions wrote.
	intents intents
	// views are the states held for snapshot reads (readview.go).
	views views
	// dropped is called with each collection leaving the catalog
	// (OnDropped).
	dropped atomic.Pointer[func(db, coll string)]
	// dirty is set by every commit not yet synced by the journal flusher.
	dirty atomic.Bool
	// sortLimit bounds the memory of one in-memory sort.
	sortLimit atomic.Int64
	// trial holds the multi-planner's trial bounds (plan_trial.go).
	trial trialBounds
	// writesBlocked is the user write block (writeblock.go).
	writesBlocked atomic.Bool
	// frontendID and lease are this frontend's name and schema lease;
	// fence is when (Unix nanoseconds) it stops writing unless the lease
	// is renewed, jobsUntil when it stops running background jobs.
	frontendID string
	lease      time.Duration
	fence      atomic.Int64
	jobsUntil  atomic.Int64
	// renewed is closed, and replaced, at each renewal of the lease;
	// leaseWaiters counts the callers awaitLease holds (tests).
	renewed      atomic.Pointer[chan struct{}]
	leaseWaiters atomic.Int32
	// pauseHeartbeat stops renewals (tests: a frontend cut off).
	pauseHeartbeat atomic.Bool
	// beforeBackfillCommit, when set, runs before each backfill batch
	// commits (tests: a batch that commits late).
	beforeBackfillCommit func()
	heartbeatDone        chan struct{}
	// retiring is set while retireAbandoned runs; jobs counts the
	// background jobs Close waits for.
	retiring atomic.Bool
	// leftBehind holds the indexes Open found in a build's or drop's
	// states under this frontend's id: a process before this one (a
	// crashed server, on Pebble always) left them midway, and no build of
	// this engine moves them. Set before Open returns, read only after.
	leftBehind map[indexRef]bool
	jobs       sync.WaitGroup
	// resolving is set while resolveGarbage runs in the background, and
	// resolveAgain when it should run once more. startJobs guards closed,
	// set once Close waits for the jobs: no job starts after.
	resolving    atomic.Bool
	resolveAgain atomic.Bool
	startJobs    sync.Mutex
	closed       bool
	closeOnce    sync.Once
	closeErr     error
	stop         chan struct{}
	done         chan struct{}
}

// Open loads the catalog from kv. The Engine does not own kv: close kv after
// the Engine is no longer used.
func Open(kv storage.KV, opts Options) (*Engine, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	e := &Engine{kv: kv, maxKey: storage.MaxKeySize(kv), opts: opts, log: log, intents: intents{owner: map[string]*Txn{}}, stop: make(chan struct{}), done: make(chan struct{})}
	e.sortLimit.Store(DefaultSortMemoryLimit)
	e.trial.init()
	if opts.SortMemoryLimit > 0 {
		e.sortLimit.Store(opts.SortMemoryLimit)
	}
	e.frontendID, e.lease = opts.FrontendID, opts.SchemaLease
	if e.frontendID == "" {
		e.frontendID = DefaultFrontendID
	}
	if e.lease <= 0 {
		e.lease = DefaultSchemaLease
	}
	e.heartbeatDone = make(chan struct{})
	renewed := make(chan struct{})
	e.renewed.Store(&renewed)
	if g, ok := storage.As[storage.UnflushedGrouper](kv); ok {
		// The size estimates count what the store has not flushed yet.
		g.GroupUnflushed(sizeGroup)
	}
	if err := e.checkFormat(); err != nil {
		return nil, err
	}
	e.cat.mu.Lock()
	err := e.reloadLatestLocked()
	e.cat.mu.Unlock()
	if err != nil {
		return nil, err
	}
	e.leftBehind = e.ownUnfinished()
	if err := e.heartbeat(); err != nil {
		return nil, err
	}
	if err := e.loadWriteBlock(); err != nil {
		return nil, err
	}
	if err := e.openOplog(); err != nil {
		return nil, err
	}
	if err := e.renewJobs(); err != nil {
		return nil, err
	}
	go e.flushJournal()
	go e.runHeartbeat()
	if len(e.leftBehind) > 0 && e.RunsJobs() {
		e.retireAbandonedInBackground()
	}
	return e, nil
}

// Close stops the journal flusher and the heartbeat, leaves the registry
// of frontends (releasing the jobs lease) and syncs. Close the KV store
// after the engine.
func (e *Engine) Close() error {
	e.closeOnce.Do(func() {
		close(e.stop)
		<-e.done
		<-e.heartbeatDone
		e.startJobs.Lock()
		e.closed = true
		e.startJobs.Unlock()
		e.jobs.Wait()
		e.ReleaseViews(time.Now(), -1)
		e.closeErr = errors.Join(e.unregister(), e.kv.Sync())
	})
	return e.closeErr
}

// flushJournal syncs, every JournalInterval, the writes acknowledged
// without waiting for the disk, and the oplog entries a sync that began
// before their commit missed, which are not majority committed until then.
func (e *Engine) flushJournal() {
	defer close(e.done)
	t := time.NewTicker(JournalInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if e.dirty.Swap(false) && e.opts.Durability == DurableOnRequest || e.oplog.majorityLags() {
				if err := e.kv.Sync(); err != nil {
					e.log.Error("journal sync", "err", err)
				}
			}
		case <-e.stop:
			return
		}
	}
}

// commit commits tx without waiting for the disk (durable decides when a
// write waits for it). Writers call it while holding their document locks:
// the locks are not held across an fsync, and the sync that follows is
// shared by every concurrent writer; the journal flusher syncs the others.
func (e *Engine) commit(tx storage.Txn) error {
	if err := e.checkLease(); err != nil {
		return err
	}
	e.dirty.Store(true)
	return tx.Commit()
}

// ackDurable is the wait for durability a write made with wo owes before
// it is acknowledged, once it changed something: none when its caller
// waits instead (DeferDurable).
func (e *Engine) ackDurable(wo WriteOptions) error {
	if wo.DeferDurable {
		return nil
	}
	return e.Durable(wo.Journal)
}

// Durable waits until every write committed so far is on disk, when the
// write asked for it (journal) or the engine makes every write durable:
// also the wait a WriteOptions.DeferDurable caller owes once its writes
// are done.
func (e *Engine) Durable(journal bool) error {
	switch {
	case e.opts.Durability == DurableNever:
		return nil
	case journal || e.opts.Durability == DurableAlways:
		return e.kv.Sync()
	}
	return nil
}
