package sessions

import "time"

// IdleTxn is an open transaction no command is running in, as currentOp
// reports it (type "idleSession").
type IdleTxn struct {
	ID        string // the lsid's id bytes
	TxnNumber int64
	// Inactive is how long ago the transaction last ran a command.
	Inactive time.Duration
}

// IdleTransactions lists the open transactions of sessions no command
// holds now.
func (r *Registry) IdleTransactions(now time.Time) []IdleTxn {
	var out []IdleTxn
	for _, s := range r.all() {
		if !s.mu.TryLock() {
			continue // a command runs in it: currentOp lists that one
		}
		if s.State == TxnInProgress && !s.ended {
			out = append(out, IdleTxn{ID: s.ID, TxnNumber: s.TxnNumber, Inactive: now.Sub(s.txnActive)})
		}
		s.mu.Unlock()
	}
	return out
}
