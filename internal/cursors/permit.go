package cursors

import (
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/sessions"
)

// Permit checks that a getMore on db.coll, run in session (the lsid's id,
// "" for none) and, when inTxn, in transaction txnNumber, may use c. The
// checks and their codes are MongoDB's, in its order: the session (50736,
// 50737, 50738), the transaction (50739, 50740, 50741), then the namespace
// (Unauthorized). A refused getMore leaves the cursor open.
func (c *Cursor) Permit(db, coll, session string, inTxn bool, txnNumber int64) error {
	switch {
	case session != "" && c.Session == "":
		return mongoerr.New(mongoerr.GetMoreSessionMismatchNoSession, "Cannot run getMore on cursor %d, which was not created in a session, in session %s", c.ID, sessions.Text(session))
	case session == "" && c.Session != "":
		return mongoerr.New(mongoerr.GetMoreSessionMismatchNoLsid, "Cannot run getMore on cursor %d, which was created in session %s, without an lsid", c.ID, sessions.Text(c.Session))
	case session != c.Session:
		return mongoerr.New(mongoerr.GetMoreSessionMismatch, "Cannot run getMore on cursor %d, which was created in session %s, in session %s", c.ID, sessions.Text(c.Session), sessions.Text(session))
	case inTxn && !c.InTxn:
		return mongoerr.New(mongoerr.GetMoreTxnMismatchNoTxn, "Cannot run getMore on cursor %d, which was not created in a transaction, in transaction %d", c.ID, txnNumber)
	case !inTxn && c.InTxn:
		return mongoerr.New(mongoerr.GetMoreTxnMismatchNoTxnNumber, "Cannot run getMore on cursor %d, which was created in transaction %d, without a txnNumber", c.ID, c.TxnNumber)
	case inTxn && txnNumber != c.TxnNumber:
		return mongoerr.New(mongoerr.GetMoreTxnMismatch, "Cannot run getMore on cursor %d, which was created in transaction %d, in transaction %d", c.ID, c.TxnNumber, txnNumber)
	case db != c.DB || coll != c.Coll:
		return mongoerr.New(mongoerr.Unauthorized,
			"Requested getMore on namespace '%s.%s', but cursor belongs to a different namespace %s.%s", db, coll, c.DB, c.Coll)
	}
	return nil
}
