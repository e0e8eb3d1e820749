// Package sessions keeps MongoDB logical sessions: per session the latest
// transaction number, the open multi-document transaction, and the results
// of the statements of the latest retryable write, so that a retried
// statement is applied once. A session's transaction record (MongoDB's
// config.transactions) is kept in storage, written in the batch of each
// write it records, and loaded at startup, so exactly-once survives
// restarts and crashes (see record.go).
package sessions

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/folio-db/folio/internal/apiparams"
	"github.com/folio-db/folio/internal/clock"
	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/storage"
)

// DefaultTimeout is MongoDB's logicalSessionTimeoutMinutes (30 minutes).
const DefaultTimeout = 30 * time.Minute

// TxnLifetime is MongoDB's transactionLifetimeLimitSeconds default: a
// transaction idle longer is aborted.
const TxnLifetime = 60 * time.Second

// TxnState is where a session's latest transaction stands.
type TxnState int

// Transaction states.
const (
	TxnNone TxnState = iota
	TxnInProgress
	TxnCommitted
	TxnAborted
)

// Session is one logical session. Its mutex serializes the commands that
// use it, as drivers use a session from one operation at a time.
type Session struct {
	mu      sync.Mutex
	ID      string // the session's key (Key): its lsid's id and uid
	lastUse time.Time
	// ended is set, under mu, once the session was forgotten and its
	// record deleted; Acquire then takes a fresh session for the id.
	ended bool

	// TxnNumber is the highest transaction number the session has used,
	// by a transaction or a retryable write; -1 before any.
	TxnNumber int64
	// Txn is the transaction of TxnNumber while State is TxnInProgress.
	Txn   *engine.Txn
	State TxnState
	// TxnReadConcern is the read concern level the transaction of
	// TxnNumber started with ("" when none was given).
	TxnReadConcern string
	// TxnAPI is the Stable API parameters of the command that started the
	// open transaction: the transaction's other commands must give the
	// same.
	TxnAPI apiparams.Params
	// TxnEpoch is what the commands layer marks the open transaction
	// with when it begins: the member's step downs so far, so that a
	// transaction open across one is aborted at its next command.
	TxnEpoch int64
	// txnActive is when the transaction last ran a command; txnStart
	// when it began (the start of the command that began it), from which
	// its lifetime runs.
	txnActive, txnStart time.Time
	// txnBusy is how long the open transaction's commands have run, up
	// to the last one's end.
	txnBusy time.Duration
	// TxnReadTime is the cluster time the open transaction reads at (the
	// commands layer sets it as it begins one), TxnClient what that layer
	// notes of the client that ran its last command: what currentOp
	// reports of the transaction while no command runs in it.
	TxnReadTime clock.Time
	TxnClient   any
	// executed are the results of the statements of TxnNumber whose
	// writes committed, as runs in statement id order.
	executed []run
	// stored describes the session's record in storage.
	stored storedRecord
	// rec records the session's writes (see Recorder).
	rec Recorder
	// seen is what $listLocalSessions reports, read without mu.
	seen seenBy
	// counts are the registry's transaction counters (nil: none).
	counts *TxnCounters
	// shared is the registry's Shared.
	shared bool
}

// TxnCounters count the transactions of a registry's sessions, as
// serverStatus.transactions reports them: every transaction started ends
// committed or aborted. Conflicts counts those that failed with a write
// conflict (the commands layer adds them).
type TxnCounters struct {
	Started, Committed, Aborted, Conflicts atomic.Int64
	// RetriedCommands and RetriedStatements count the retryable writes
	// that found statements executed, and those statements;
	// RecordWrites the writes of session records (MongoDB's
	// RetryableWritesStats: each update of config.transactions).
	RetriedCommands, RetriedStatements, RecordWrites atomic.Int64
	// Active counts the open transactions running a command now (the
	// commands layer marks them); the others open are inactive.
	Active atomic.Int64
}

// Begin opens txn as the session's transaction of TxnNumber, read at the
// read concern level readConcern.
func (s *Session) Begin(txn *engine.Txn, readConcern string) {
	s.Txn, s.State, s.TxnReadConcern = txn, TxnInProgress, readConcern
	s.txnStart, s.txnBusy = s.txnActive, 0
	if s.counts != nil {
		s.counts.Started.Add(1)
	}
}

// Committed records that the open transaction committed (ok) or failed to
// commit and aborted.
func (s *Session) Committed(ok bool) {
	s.Txn = nil
	s.State = TxnAborted
	if ok {
		s.State = TxnCommitted
	}
	switch {
	case s.counts == nil:
	case ok:
		s.counts.Committed.Add(1)
	default:
		s.counts.Aborted.Add(1)
	}
}

// Lock takes the session for one command and marks it used.
func (s *Session) Lock(now time.Time) {
	s.mu.Lock()
	s.lastUse = now
	s.txnActive = now
	s.seen.lastUse.Store(now.UnixMilli())
}

// Unlock releases the session, counting the command's time as the open
// transaction's active time.
func (s *Session) Unlock() {
	if s.State == TxnInProgress {
		s.txnBusy += time.Since(s.txnActive)
	}
	s.mu.Unlock()
}

// EndTxn aborts the session's open transaction, if any.
func (s *Session) EndTxn() {
	if s.State == TxnInProgress {
		s.Txn.Abort()
		s.State = TxnAborted
		if s.counts != nil {
			s.counts.Aborted.Add(1)
		}
	}
	s.Txn = nil
}

// Advance moves the session to a higher txnNumber: the open transaction
// aborts and the results of the earlier statements are forgotten (their
// stored records are replaced in the batch of the next recorded write).
func (s *Session) Advance(txnNumber int64) {
	s.EndTxn()
	s.TxnNumber, s.State = txnNumber, TxnNone
	// A retryable write's one run reuses the array; a batch's many runs
	// are let go.
	if cap(s.executed) > 4 {
		s.executed = nil
	}
	s.executed = s.executed[:0]
}

// Executed returns the result of statement stmtID of TxnNumber when its
// write committed.
func (s *Session) Executed(stmtID int32) (Result, bool) {
	if i, ok := s.runOf(int64(stmtID)); ok {
		return s.executed[i].res, true
	}
	return Result{}, false
}

// Registry holds the sessions of a server.
type Registry struct {
	mu       sync.Mutex
	sessions map[string]*Session
	// kv holds the sessions' records; nil keeps them in memory only.
	kv storage.KV
	// OnEnd is called (with the session locked) when a transaction is
	// aborted by a timeout or a session ends, to close its cursors.
	OnEnd func(*engine.Txn)
	// Log receives failures to delete expired records.
	Log *slog.Logger
	// txnLifetime is transactionLifetimeLimitSeconds, as nanoseconds.
	txnLifetime atomic.Int64
	// Txns count the sessions' transactions.
	Txns TxnCounters
	// ReapPasses counts the passes Reap made, which abort the expired
	// transactions (serverStatus metrics.abortExpiredTransactions.passes).
	ReapPasses atomic.Int64
	// Shared says other frontends write the same records (a shared
	// store): a session is then refreshed from its record before a write
	// it records, and its record checked in the write's own transaction.
	// Set before Load.
	Shared bool
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	r := &Registry{sessions: map[string]*Session{}}
	r.txnLifetime.Store(int64(TxnLifetime))
	return r
}

// TxnLifetime is how long a transaction may stay idle before Reap aborts
// it (transactionLifetimeLimitSeconds).
func (r *Registry) TxnLifetime() time.Duration { return time.Duration(r.txnLifetime.Load()) }

// SetTxnLifetime changes the transaction lifetime (setParameter
// transactionLifetimeLimitSeconds); it applies at the next Reap.
func (r *Registry) SetTxnLifetime(d time.Duration) { r.txnLifetime.Store(int64(d)) }

// Get returns the session with id, creating it.
func (r *Registry) Get(id string) *Session {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.sessions[id]
	if s == nil {
		s = &Session{ID: id, TxnNumber: -1, counts: &r.Txns, shared: r.Shared}
		r.sessions[id] = s
	}
	return s
}

// Acquire returns the session with id, created if needed, locked for one
// command (see Session.Lock).
func (r *Registry) Acquire(id string, now time.Time) *Session {
	for {
		s := r.Get(id)
		s.Lock(now)
		if !s.ended {
			return s
		}
		s.Unlock()
	}
}

// End forgets the session with id, aborting its transaction and deleting
// its record.
func (r *Registry) End(id string) {
	r.mu.Lock()
	s := r.sessions[id]
	r.mu.Unlock()
	if s != nil {
		s.mu.Lock()
		r.forget(s)
		s.mu.Unlock()
	}
}

// forget ends s, which the caller holds locked: its transaction aborts,
// its record is deleted, and only then is the id free for a new session,
// so a new session's record is never deleted with the old one's.
func (r *Registry) forget(s *Session) {
	if s.ended {
		return
	}
	r.endTxn(s)
	if err := r.deleteRecord(s); err != nil && r.Log != nil {
		r.Log.Error("deleting a session's transaction record", "err", err)
	}
	s.ended = true
	r.mu.Lock()
	if r.sessions[s.ID] == s {
		delete(r.sessions, s.ID)
	}
	r.mu.Unlock()
}

func (r *Registry) endTxn(s *Session) {
	if s.State == TxnInProgress && r.OnEnd != nil {
		r.OnEnd(s.Txn)
	}
	s.EndTxn()
}

func (r *Registry) all() []*Session {
	r.mu.Lock()
	defer r.mu.Unlock()
	all := make([]*Session, 0, len(r.sessions))
	for _, s := range r.sessions {
		all = append(all, s)
	}
	return all
}

// EndWhere forgets the sessions whose keys match (the kill commands).
func (r *Registry) EndWhere(match func(key string) bool) {
	for _, s := range r.all() {
		if !match(s.ID) {
			continue
		}
		s.mu.Lock()
		r.forget(s)
		s.mu.Unlock()
	}
}

// AbortAll aborts every open transaction, keeping the sessions' records:
// what a shutdown does.
func (r *Registry) AbortAll() {
	for _, s := range r.all() {
		s.mu.Lock()
		r.endTxn(s)
		s.mu.Unlock()
	}
}

// AbortIdle aborts the open transaction of every session not running a
// command: what a step down does, having interrupted the statements of
// the others, whose transactions end with their error.
func (r *Registry) AbortIdle() {
	for _, s := range r.all() {
		if s.mu.TryLock() {
			r.endTxn(s)
			s.mu.Unlock()
		}
	}
}

// Reap aborts the transactions begun longer than the transaction lifetime
// ago, active or not, as MongoDB expires a transaction at its start plus
// transactionLifetimeLimitSeconds (TransactionParticipant's
// transactionExpireDate), and forgets sessions idle for longer than
// timeout, deleting their records, as MongoDB expires config.transactions
// entries with their sessions. Sessions busy with a command are left
// alone until it returns.
func (r *Registry) Reap(now time.Time, timeout time.Duration) {
	r.ReapPasses.Add(1)
	lifetime := r.TxnLifetime()
	for _, s := range r.all() {
		if !s.mu.TryLock() {
			continue
		}
		if s.State == TxnInProgress && now.Sub(s.txnStart) > lifetime {
			r.endTxn(s)
		}
		if now.Sub(s.lastUse) > timeout {
			r.forget(s)
		}
		s.mu.Unlock()
	}
}

// Len is the number of sessions.
func (r *Registry) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.sessions)
}
