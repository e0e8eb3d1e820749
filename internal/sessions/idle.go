package sessions

import (
	"time"

	"github.com/folio-db/folio/internal/clock"
)

// IdleTxn is an open transaction no command is running in, as currentOp
// reports it (type "idleSession"), at the time it was listed.
type IdleTxn struct {
	ID        string // the lsid's id bytes
	TxnNumber int64
	// ReadConcern is its read concern level ("" for none), ReadTime the
	// cluster time it reads at.
	ReadConcern string
	ReadTime    clock.Time
	// Start is when it began, Expiry when Reap aborts it; Open is how
	// long it has been open, Active how long its commands ran.
	Start, Expiry time.Time
	Open, Active  time.Duration
	// Client is what the commands layer noted of the client of its last
	// command (Session.TxnClient).
	Client any
}

// IdleTransactions lists the open transactions of sessions no command
// holds now.
func (r *Registry) IdleTransactions(now time.Time) []IdleTxn {
	var out []IdleTxn
	lifetime := r.TxnLifetime()
	for _, s := range r.all() {
		if !s.mu.TryLock() {
			continue // a command runs in it: currentOp lists that one
		}
		if s.State == TxnInProgress && !s.ended {
			out = append(out, IdleTxn{ID: s.ID, TxnNumber: s.TxnNumber, ReadConcern: s.TxnReadConcern, ReadTime: s.TxnReadTime,
				Start: s.txnStart, Expiry: s.txnStart.Add(lifetime), Open: now.Sub(s.txnStart), Active: s.txnBusy, Client: s.TxnClient})
		}
		s.mu.Unlock()
	}
	return out
}
