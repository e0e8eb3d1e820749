package commands

import (
	"slices"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
)

// The change stream error labels MongoDB's error label builder adds
// (engine has those of writes and transactions).
const (
	resumableChangeStreamError    = "ResumableChangeStreamError"
	nonResumableChangeStreamError = "NonResumableChangeStreamError"
)

// replyLabels are the errorLabels of the reply to r, command name, that
// failed with code (OK: it did not) or met a write concern error with
// wcCode (OK: none), besides those its error carries (own):
// RetryableWriteError on a retryable write, commitTransaction or
// abortTransaction that met a retriable error or write concern error;
// TransientTransactionError on a command of a transaction whose error
// lets the whole transaction be retried (transientInTxn);
// ResumableChangeStreamError on a change stream's aggregate or getMore
// (once it found its cursor) that met an error after which a stream
// resumes (resumable); NonResumableChangeStreamError on
// ChangeStreamFatalError and ChangeStreamHistoryLost, whichever command
// met them. A failCommand fail point's errorLabels replace them all.
func replyLabels(r *Request, name string, own []string, code, wcCode mongoerr.Code) []string {
	if r.failLabels != nil {
		return *r.failLabels
	}
	labels := own
	add := func(l string) {
		if !slices.Contains(labels, l) {
			labels = append(slices.Clip(labels), l)
		}
	}
	a := r.Args.Session
	commitOrAbort := name == "commitTransaction" || name == "abortTransaction"
	retryableWrite := a.hasTxnNumber && !a.inTxn && retryable[name]
	if (retryableWrite || commitOrAbort) && (mongoerr.Retriable(code) || mongoerr.Retriable(wcCode)) {
		add(engine.RetryableWriteError)
	}
	if a.inTxn && transientInTxn(code, wcCode != mongoerr.OK, commitOrAbort) {
		add(engine.TransientTransactionError)
	}
	if wcCode == mongoerr.OK && resumable(code) && r.onChangeStream(name) {
		add(resumableChangeStreamError)
	}
	if code == mongoerr.ChangeStreamFatalError || code == mongoerr.ChangeStreamHistoryLost {
		add(nonResumableChangeStreamError)
	}
	return labels
}

// transientInTxn reports whether a transaction whose command failed with
// code may be retried whole, as MongoDB decides: after a write conflict, a
// lock timeout, a prepared transaction in the way or a snapshot error;
// after NoSuchTransaction, unless commitTransaction or abortTransaction
// also met a write concern error (the commit may stand); and, for its
// other commands, after a retriable error.
func transientInTxn(code mongoerr.Code, wce, commitOrAbort bool) bool {
	switch code {
	case mongoerr.WriteConflict, mongoerr.LockTimeout, mongoerr.PreparedTransactionInProgress,
		mongoerr.SnapshotTooOld, mongoerr.SnapshotUnavailable, mongoerr.StaleDbVersion,
		mongoerr.ShardCannotRefreshDueToLocksHeld:
		return true
	case mongoerr.NoSuchTransaction:
		return !commitOrAbort || !wce
	}
	return !commitOrAbort && mongoerr.Retriable(code)
}

// resumable reports whether a change stream resumes after code: a
// retriable error, a stale routing table, or a read preference no node
// satisfied.
func resumable(code mongoerr.Code) bool {
	switch code {
	case mongoerr.StaleEpoch, mongoerr.StaleConfig, mongoerr.RetryChangeStream, mongoerr.FailedToSatisfyReadPreference:
		return true
	}
	return mongoerr.Retriable(code)
}

// onChangeStream reports whether r, command name, reads a change stream:
// an aggregate whose pipeline opens with $changeStream, or a getMore that
// found a change stream's cursor.
func (r *Request) onChangeStream(name string) bool {
	switch name {
	case "getMore":
		return r.streamCursor
	case "aggregate":
		if r.args.spec == nil {
			return false
		}
		stages, err := r.args.docs("pipeline")
		return err == nil && len(stages) > 0 && rawdoc.FirstKey(stages[0]) == "$changeStream"
	}
	return false
}
