// Package sessions keeps MongoDB logical sessions: per session the latest
// transaction number, the open multi-document transaction, and the reply of
// the latest retryable write, so that a retried write is applied once.
package sessions

import (
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
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
	ID      string // the lsid's id bytes
	lastUse time.Time

	// TxnNumber is the highest transaction number the session has used,
	// by a transaction or a retryable write.
	TxnNumber int64
	// Txn is the transaction of TxnNumber while State is TxnInProgress.
	Txn   *engine.Txn
	State TxnState
	// RetryReply is the reply to the retryable write of TxnNumber.
	RetryReply bson.Raw
	// txnActive is when the transaction last ran a command.
	txnActive time.Time
}

// Lock takes the session for one command and marks it used.
func (s *Session) Lock(now time.Time) {
	s.mu.Lock()
	s.lastUse = now
	s.txnActive = now
}

// Unlock releases the session.
func (s *Session) Unlock() { s.mu.Unlock() }

// EndTxn aborts the session's open transaction, if any.
func (s *Session) EndTxn() {
	if s.State == TxnInProgress {
		s.Txn.Abort()
		s.State = TxnAborted
	}
	s.Txn = nil
}

// Registry holds the sessions of a server.
type Registry struct {
	mu       sync.Mutex
	sessions map[string]*Session
	// OnEnd is called (with the session locked) when a transaction is
	// aborted by a timeout or a session ends, to close its cursors.
	OnEnd func(*engine.Txn)
	// txnLifetime is transactionLifetimeLimitSeconds, as nanoseconds.
	txnLifetime atomic.Int64
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
		s = &Session{ID: id}
		r.sessions[id] = s
	}
	return s
}

// End forgets the session with id, aborting its transaction.
func (r *Registry) End(id string) {
	r.mu.Lock()
	s := r.sessions[id]
	delete(r.sessions, id)
	r.mu.Unlock()
	if s != nil {
		s.mu.Lock()
		r.endTxn(s)
		s.mu.Unlock()
	}
}

func (r *Registry) endTxn(s *Session) {
	if s.State == TxnInProgress && r.OnEnd != nil {
		r.OnEnd(s.Txn)
	}
	s.EndTxn()
}

// EndAll forgets every session.
func (r *Registry) EndAll() {
	r.mu.Lock()
	ids := make([]string, 0, len(r.sessions))
	for id := range r.sessions {
		ids = append(ids, id)
	}
	r.mu.Unlock()
	for _, id := range ids {
		r.End(id)
	}
}

// Reap aborts transactions idle for longer than the transaction lifetime and forgets
// sessions idle for longer than timeout. Sessions busy with a command are
// left alone.
func (r *Registry) Reap(now time.Time, timeout time.Duration) {
	r.mu.Lock()
	all := make([]*Session, 0, len(r.sessions))
	for _, s := range r.sessions {
		all = append(all, s)
	}
	r.mu.Unlock()
	lifetime := r.TxnLifetime()
	for _, s := range all {
		if !s.mu.TryLock() {
			continue
		}
		if s.State == TxnInProgress && now.Sub(s.txnActive) > lifetime {
			r.endTxn(s)
		}
		stale := now.Sub(s.lastUse) > timeout
		s.mu.Unlock()
		if stale {
			r.End(s.ID)
		}
	}
}

// Len is the number of sessions.
func (r *Registry) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.sessions)
}
