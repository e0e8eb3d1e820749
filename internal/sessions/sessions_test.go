package sessions

import (
	"testing"
	"time"

	"github.com/folio-db/folio/internal/engine"
)

// TestReap checks that a transaction begun longer than
// transactionLifetimeLimit ago is aborted (and its cursors closed through
// OnEnd), though it ran a command since, that one a command runs in is
// not, and an idle session past the session timeout is forgotten.
func TestReap(t *testing.T) {
	e, err := engine.Open(memStore(t), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	r := NewRegistry()
	var ended []*engine.Txn
	r.OnEnd = func(txn *engine.Txn) { ended = append(ended, txn) }
	start := time.Now()
	open := func(id string) *Session {
		s := r.Get(id)
		s.Lock(start)
		txn, err := e.Begin()
		if err != nil {
			t.Fatal(err)
		}
		s.TxnNumber = 1
		s.Begin(txn, "")
		s.Unlock()
		return s
	}
	idle, busy := open("idle"), open("busy")
	busy.Lock(start) // a command is running in it
	r.Reap(start.Add(TxnLifetime/2), DefaultTimeout)
	if idle.State != TxnInProgress {
		t.Fatal("a transaction within its lifetime was aborted")
	}
	// a command late in its lifetime does not extend it
	idle.Lock(start.Add(TxnLifetime - time.Second))
	idle.Unlock()
	r.Reap(start.Add(TxnLifetime+time.Second), DefaultTimeout)
	if idle.State != TxnAborted || len(ended) != 1 {
		t.Fatalf("idle transaction: state %v, %d ended", idle.State, len(ended))
	}
	if busy.State != TxnInProgress {
		t.Fatal("a busy session's transaction was aborted")
	}
	busy.Unlock()
	r.Reap(start.Add(DefaultTimeout+time.Minute), DefaultTimeout)
	if r.Len() != 0 {
		t.Fatalf("%d sessions left after the timeout", r.Len())
	}
	if n := r.ReapPasses.Load(); n != 3 {
		t.Fatalf("%d passes counted, want 3", n)
	}
}
