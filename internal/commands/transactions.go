package commands

import (
	"errors"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/sessions"
	"github.com/folio-db/folio/internal/timeseries"
)

func init() {
	registerAdmin(commitTransactionCmd, commitTransactionSpec, "commitTransaction")
	registerAdmin(abortTransactionCmd, abortTransactionSpec, "abortTransaction")
	// Their fields are checked after the transaction: an abort of a
	// committed transaction is TransactionCommitted whatever its fields,
	// a retried commit of one meets its unknown fields (CmdCommitTxn and
	// CmdAbortTxn parse their body in run, after the session's checkout).
	parsedInRun("commitTransaction")
	parsedInRun("abortTransaction")
}

// commitTransactionSpec and abortTransactionSpec declare the fields of
// commitTransaction and abortTransaction.
// https://www.mongodb.com/docs/v7.0/reference/command/commitTransaction/
var (
	commitTransactionSpec = &argSpec{path: "commitTransaction", fields: []argField{
		ignore("recoveryToken", tDoc, "a router's token for a sharded transaction's recovery"),
	}}
	abortTransactionSpec = &argSpec{path: "abortTransaction", fields: []argField{
		ignore("recoveryToken", tDoc, "a router's token for a sharded transaction's recovery"),
	}}
)

// inTransaction are the commands a multi-document transaction may run, as
// MongoDB 4.4+ allows.
var inTransaction = map[string]bool{
	"find": true, "getMore": true, "killCursors": true, "insert": true, "update": true, "delete": true,
	"findAndModify": true, "findandmodify": true, "aggregate": true, "distinct": true,
	"commitTransaction": true, "abortTransaction": true, "create": true, "createIndexes": true,
}

// explicitDDL are the commands that create collections or indexes
// explicitly, which a transaction may run only with read concern "local"
// (MongoDB manual, Transactions > Operations > Create Collections and
// Indexes in a Transaction); implicit creation by a write takes any.
var explicitDDL = map[string]bool{"create": true, "createIndexes": true}

// sessionless are the commands that manage sessions themselves and so do
// not run inside one.
var sessionless = map[string]bool{
	"endSessions": true, "killSessions": true, "killAllSessions": true, "killAllSessionsByPattern": true, "refreshSessions": true, "startSession": true,
}

// retryable are the writes whose statements run at most once per lsid,
// txnNumber and statement id (see retry.go).
var retryable = map[string]bool{"insert": true, "update": true, "delete": true, "findAndModify": true, "findandmodify": true}

// sessionArgs are the session fields of a command.
type sessionArgs struct {
	// lsid is the key of the session (sessions.Key): the lsid's id as
	// parsed, the user's digest added once the request's user is known
	// (Service.keySession).
	lsid             string
	uid              [32]byte // the lsid's uid, when hasUID
	hasUID           bool
	txnNumber        int64
	hasTxnNumber     bool
	inTxn            bool // autocommit: false
	startTransaction bool
	// retryCounter: a transaction's statement carries txnRetryCounter,
	// which only a sharded cluster's members take (runInSession).
	retryCounter bool
}

// sessionFields are a command's session fields as sent, each the first
// of its name (missing when absent).
type sessionFields struct {
	lsid, txnNumber, autocommit, startTransaction, txnRetryCounter bson.RawValue
}

// operationLSIDSpec declares a command's lsid (LogicalSessionFromClient):
// txnNumber and txnUUID name the internal sessions of MongoDB's routers.
var operationLSIDSpec = &argSpec{path: "OperationSessionInfo.lsid", fields: []argField{
	required("id", tUUID),
	arg("uid", tSHA256),
	refuse("txnNumber", tLong, "the internal sessions of a sharded cluster's routers"),
	refuse("txnUUID", tUUID, "the internal sessions of a sharded cluster's routers"),
}}

// take keeps v when k names a session field not yet seen, and reports
// whether k names one.
func (f *sessionFields) take(k []byte, v bson.RawValue) bool {
	var dst *bson.RawValue
	switch string(k) {
	case "lsid":
		dst = &f.lsid
	case "txnNumber":
		dst = &f.txnNumber
	case "autocommit":
		dst = &f.autocommit
	case "startTransaction":
		dst = &f.startTransaction
	case "txnRetryCounter":
		dst = &f.txnRetryCounter
	default:
		return false
	}
	if dst.Type == 0 {
		*dst = v
	}
	return true
}

// parse validates the session fields of cmd as MongoDB's
// OperationSessionInfoFromClient and initializeOperationSessionInfo do: a
// null field is absent; autocommit and startTransaction are bools, the
// former only false and the latter only true; a txnNumber is taken only by
// a replica set member (replSet), is not negative, and without autocommit
// only a retryable write takes one. txnRetryCounter, an int, is refused
// with a txnNumber as initializeOperationSessionInfo refuses it (on a
// retryable write, or negative); a transaction's is refused at its
// session's checkout (runInSession); without a txnNumber Folio refuses it
// as a sharding argument it does not honour.
func (f *sessionFields) parse(cmd bson.Raw, replSet bool) (sessionArgs, error) {
	var a sessionArgs
	given := func(v bson.RawValue) bool {
		return v.Type != 0 && v.Type != bson.TypeNull && v.Type != bson.TypeUndefined
	}
	if v := f.lsid; given(v) {
		doc, ok := v.DocumentOK()
		if !ok {
			return a, wrongType("OperationSessionInfo", "lsid", v, "object")
		}
		l, err := parseSub(doc, operationLSIDSpec)
		if err != nil {
			return a, err
		}
		_, id := l.value("id").Binary()
		a.lsid = string(id)
		if uid := l.value("uid"); uid.Type != 0 {
			_, data := uid.Binary()
			a.uid, a.hasUID = [32]byte(data), true
		}
	}
	if v := f.txnNumber; given(v) {
		if v.Type != bson.TypeInt64 {
			return a, wrongType(Name(cmd), "txnNumber", v, "long")
		}
		a.txnNumber, a.hasTxnNumber = v.Int64(), true
	}
	var autocommit, start bson.RawValue
	if v := f.autocommit; given(v) {
		if v.Type != bson.TypeBoolean {
			return a, wrongType("OperationSessionInfo", "autocommit", v, "bool")
		}
		autocommit, a.inTxn = v, true
	}
	if v := f.startTransaction; given(v) {
		if v.Type != bson.TypeBoolean {
			return a, wrongType("OperationSessionInfo", "startTransaction", v, "bool")
		}
		start, a.startTransaction = v, true
	}
	var retryCounter int32
	if v := f.txnRetryCounter; given(v) {
		if v.Type != bson.TypeInt32 {
			return a, wrongType("OperationSessionInfo", "txnRetryCounter", v, "int")
		}
		retryCounter, a.retryCounter = v.Int32(), true
	}
	switch {
	case a.hasTxnNumber && a.lsid == "":
		return a, mongoerr.New(mongoerr.InvalidOptions, "Transaction number requires a session ID to also be specified")
	case a.hasTxnNumber && !replSet:
		return a, mongoerr.New(mongoerr.IllegalOperation, "Transaction numbers are only allowed on a replica set member or mongos")
	case a.hasTxnNumber && a.txnNumber < 0:
		return a, mongoerr.New(mongoerr.InvalidOptions, "Transaction number cannot be negative")
	case a.retryCounter && !a.hasTxnNumber:
		return a, notHonoured("txnRetryCounter")
	case a.retryCounter && !a.inTxn:
		return a, mongoerr.New(mongoerr.InvalidOptions, "Cannot specify txnRetryCounter for a retryable write")
	case a.retryCounter && retryCounter < 0:
		return a, mongoerr.New(mongoerr.InvalidOptions, "txnRetryCounter cannot be negative")
	case a.inTxn && !a.hasTxnNumber:
		return a, mongoerr.New(mongoerr.InvalidOptions, "'autocommit' field requires a transaction number to also be specified")
	case a.inTxn && autocommit.Boolean():
		return a, mongoerr.New(mongoerr.InvalidOptions, "Specifying autocommit=true is not allowed.")
	case a.startTransaction && !a.inTxn:
		return a, mongoerr.New(mongoerr.InvalidOptions, "'startTransaction' field requires 'autocommit' field to also be specified")
	case a.startTransaction && !start.Boolean():
		return a, mongoerr.New(mongoerr.InvalidOptions, "Specifying startTransaction=false is not allowed.")
	case a.hasTxnNumber && !a.inTxn && !retryable[Name(cmd)]:
		return a, mongoerr.New(mongoerr.NotARetryableWriteCommand, "txnNumber may only be provided for multi-document transactions and retryable write commands. autocommit:false was not provided, and %s is not a retryable write command.", Name(cmd))
	}
	return a, nil
}

// runInSession runs a command within its session: it opens, continues or
// checks the session's transaction, and moves the session to a retryable
// write's txnNumber.
func (s *Service) runInSession(r *Request, name string, h handler) (bson.Raw, error) {
	if sessionless[name] {
		return h(s, r)
	}
	a := r.Args.Session
	if a.lsid == "" {
		return h(s, r)
	}
	sess := s.Sessions.Acquire(a.lsid, time.Now())
	defer sess.Unlock()
	if owner, err := s.sessionOwner(r); err == nil {
		sess.Claim(owner)
	}
	r.session = sess
	ownTxn := sess.State == sessions.TxnInProgress && a.txnNumber == sess.TxnNumber
	if a.hasTxnNumber && !ownTxn {
		if err := s.Sessions.Refresh(sess); err != nil {
			return nil, err
		}
	}
	if a.inTxn {
		if a.retryCounter {
			// MongoDB's TransactionParticipant takes a retry counter
			// only on a shard or config server.
			return nil, mongoerr.New(mongoerr.InvalidOptions, "txnRetryCounter is only supported in sharded clusters")
		}
		return s.runInTxn(sess, a, r, name, h)
	}
	if !a.hasTxnNumber || !retryable[name] {
		return h(s, r)
	}
	for {
		if err := moveToRetryableWrite(s, sess, a.txnNumber); err != nil {
			return nil, err
		}
		r.retryable = true
		reply, err := h(s, r)
		if !errors.Is(err, sessions.ErrMoved) {
			return reply, err
		}
		// Another frontend wrote the session's record meanwhile: run
		// again on the session as it now stands.
		if err := s.Sessions.Refresh(sess); err != nil {
			return nil, err
		}
	}
}

// moveToRetryableWrite checks a retryable write's txnNumber against its
// session's and moves the session to it.
func moveToRetryableWrite(s *Service, sess *sessions.Session, txnNumber int64) error {
	if txnNumber < sess.TxnNumber {
		newer := "retryable write"
		if sess.State != sessions.TxnNone {
			newer = "transaction"
		}
		return mongoerr.New(mongoerr.TransactionTooOld,
			"Retryable write with txnNumber %d is prohibited on session %s because a newer %s with txnNumber %d has already started on this session.",
			txnNumber, sessions.Text(sess.ID), newer, sess.TxnNumber)
	}
	switch {
	case txnNumber > sess.TxnNumber:
		s.endTxn(sess)
		sess.Advance(txnNumber)
	case sess.State != sessions.TxnNone:
		return mongoerr.New(mongoerr.IncompleteTransactionHistory, "Cannot retry a retryable write that has been converted into a transaction")
	}
	return nil
}

// runInTxn runs a command of a multi-document transaction (run has
// refused those transactions do not run, checkTxnCommand). Any failure
// aborts the transaction, as in MongoDB.
func (s *Service) runInTxn(sess *sessions.Session, a sessionArgs, r *Request, name string, h handler) (bson.Raw, error) {
	if err := checkTxnReadConcern(r.Args.ReadConcern, a.startTransaction); err != nil {
		return nil, err
	}
	if api := r.Args.API; !a.startTransaction && sess.State == sessions.TxnInProgress && a.txnNumber == sess.TxnNumber && api != sess.TxnAPI {
		// the open transaction's commands give the parameters its first
		// gave (service_entry_point_common.cpp)
		return nil, mongoerr.New(mongoerr.APIMismatchError, "API parameter mismatch: %s used params %s, the transaction's first command used %s", name, api, sess.TxnAPI)
	}
	if a.txnNumber < sess.TxnNumber {
		// the newer one's txnRetryCounter: 0 for a transaction, -1 (none)
		// for a retryable write
		newer, counter := "transaction", 0
		if sess.State == sessions.TxnNone {
			newer, counter = "retryable write", -1
		}
		return nil, mongoerr.New(mongoerr.TransactionTooOld,
			"Cannot start transaction with { txnNumber: %d } on session %s because a newer %s with txnNumberAndRetryCounter { txnNumber: %d, txnRetryCounter: %d } has already started on this session.",
			a.txnNumber, sessions.Text(sess.ID), newer, sess.TxnNumber, counter)
	}
	if a.startTransaction {
		if a.txnNumber == sess.TxnNumber {
			// On a replica set a transaction number is used once, by a
			// transaction or by a retryable write.
			return nil, mongoerr.New(mongoerr.ConflictingOperationInProgress, "Only servers in a sharded cluster can start a new transaction at the active transaction number")
		}
		s.endTxn(sess)
		sess.Advance(a.txnNumber)
		txn, err := s.Engine.Begin()
		if err != nil {
			return nil, err
		}
		sess.Begin(txn, r.Args.ReadConcern.Level)
		sess.TxnAPI, sess.TxnReadTime = r.Args.API, r.readTime
		sess.TxnEpoch = s.topo.downs.Load()
	} else {
		if sess.State == sessions.TxnInProgress && sess.TxnEpoch != s.topo.downs.Load() {
			// open across a step down, its session busy then
			s.endTxn(sess)
		}
		if err := checkTxn(sess, a.txnNumber, name); err != nil {
			return nil, err
		}
	}
	r.Txn = sess.Txn
	if r.Conn != nil {
		sess.TxnClient = r.Conn // for currentOp's report of it idle
	}
	s.Sessions.Txns.Active.Add(1)
	defer s.Sessions.Txns.Active.Add(-1)
	var reply bson.Raw
	var err error
	switch {
	case explicitDDL[name] && sess.TxnReadConcern != "" && sess.TxnReadConcern != "local":
		err = mongoerr.New(mongoerr.InvalidOptions, "Command %s does not support { readConcern: { level: \"%s\" } } :: caused by :: read concern not supported", name, sess.TxnReadConcern)
	default:
		reply, err = h(s, r)
	}
	if err == nil && hasWriteErrors(reply) {
		s.endTxn(sess)
	}
	if err != nil && sess.State == sessions.TxnInProgress {
		s.endTxn(sess)
		me := mongoerr.As(err)
		if me.Code == mongoerr.WriteConflict || me.Code == mongoerr.NoSuchTransaction {
			me.Labels = []string{engine.TransientTransactionError}
		}
		if me.Code == mongoerr.WriteConflict {
			s.Sessions.Txns.Conflicts.Add(1)
		}
	}
	return reply, err
}

// checkTxnReadConcern refuses, before the transaction is begun or
// touched, a read concern given by a statement but the first
// (service_entry_point_common.cpp) and a first statement's level other
// than local, majority and snapshot (_extractReadConcern).
func checkTxnReadConcern(rc ReadConcern, start bool) error {
	switch {
	case !start && rc != ReadConcern{}:
		return mongoerr.New(mongoerr.InvalidOptions, "Only the first command in a transaction may specify a readConcern")
	case start && rc.Level != "" && rc.Level != "local" && rc.Level != "majority" && rc.Level != "snapshot":
		return mongoerr.New(mongoerr.InvalidOptions, "The readConcern level must be either 'local' (default), 'majority' or 'snapshot' in order to run in a transaction")
	}
	return nil
}

// checkTxnCommand refuses, in a transaction, the commands MongoDB does
// not run there, in validateSessionOptions' order: count (with its own
// message) and the others outside inTransaction, any but
// commitTransaction and abortTransaction on the admin, config and local
// databases, any on a system.profile collection (coll, the command's
// collection or empty: CommandHelpers::canUseTransactions); and as the
// first statement, killCursors, commitTransaction and abortTransaction.
// The transaction stays as it was
// (jstests/core/txns/commands_not_allowed_in_txn.js, empty_commit_abort.js,
// banned_collection_reads_in_txn.js).
func checkTxnCommand(db, coll, name string, first bool) error {
	switch {
	case name == "count":
		return mongoerr.New(mongoerr.OperationNotSupportedInTransaction, "Cannot run 'count' in a multi-document transaction. Please see http://dochub.mongodb.org/core/transaction-count for a recommended alternative.")
	case !inTransaction[name]:
		return mongoerr.New(mongoerr.OperationNotSupportedInTransaction, "Cannot run '%s' in a multi-document transaction.", name)
	case (db == "admin" || db == "config" || db == "local") && name != "commitTransaction" && name != "abortTransaction":
		return mongoerr.New(mongoerr.OperationNotSupportedInTransaction, "Cannot run command against the '%s' database in a transaction.", db)
	case coll == engine.ProfileCollection:
		return mongoerr.New(mongoerr.OperationNotSupportedInTransaction, "Cannot run command against the '%s.%s' collection in a transaction.", db, coll)
	case first && name == "killCursors":
		return mongoerr.New(mongoerr.OperationNotSupportedInTransaction, "Cannot run killCursors as the first operation in a multi-document transaction.")
	case first && name == "commitTransaction":
		return mongoerr.New(mongoerr.OperationNotSupportedInTransaction, "Cannot start a transaction with a commit")
	case first && name == "abortTransaction":
		return mongoerr.New(mongoerr.OperationNotSupportedInTransaction, "Cannot start a transaction with an abort")
	}
	return nil
}

// txnCollection is the collection a command of a transaction names, as
// MongoDB's invocation namespace: a collection command's first field,
// getMore's collection; empty for the others.
func txnCollection(r *Request, c command, name string) string {
	switch {
	case name == "getMore":
		return r.args.str("collection")
	case c.collection:
		coll, _ := r.args.first().StringValueOK()
		return coll
	}
	return ""
}

// txnWriteAllowed is MongoDB's doTransactionValidationForWrites, which
// insert, update, delete and findAndModify run first: a transaction
// writes no system collection but a time series' buckets (the privilege
// collections are on admin, where a transaction does not run).
func txnWriteAllowed(r *Request, db, coll string) error {
	if r.Txn != nil && strings.HasPrefix(coll, "system.") && !strings.HasPrefix(coll, timeseries.BucketsPrefix) {
		return mongoerr.New(mongoerr.SystemCollectionWriteInTransaction, "Cannot write to system collection %s.%s within a transaction.", db, coll)
	}
	return nil
}

// txnReadAllowed is getLockModeForQuery's check as a read acquires its
// collection: a transaction does not read system.views.
func txnReadAllowed(r *Request, coll string) error {
	if r.Txn != nil && coll == engine.ViewsCollection {
		return mongoerr.New(mongoerr.SystemViewsReadInTransaction, "Cannot query system.views within a transaction")
	}
	return nil
}

// checkTxn fails a transaction command whose transaction is not the
// session's open one, with MongoDB's errors.
func checkTxn(sess *sessions.Session, txnNumber int64, name string) error {
	noSuch := func(format string, args ...any) error {
		err := mongoerr.New(mongoerr.NoSuchTransaction, format, args...)
		err.Labels = []string{engine.TransientTransactionError}
		return err
	}
	switch {
	case txnNumber != sess.TxnNumber || sess.State == sessions.TxnNone:
		return noSuch("Given transaction number %d does not match any in-progress transactions. The active transaction number is %d", txnNumber, sess.TxnNumber)
	case sess.State == sessions.TxnAborted:
		return noSuch("Transaction with { txnNumber: %d } has been aborted.", txnNumber)
	case sess.State == sessions.TxnCommitted && name != "commitTransaction":
		return mongoerr.New(mongoerr.TransactionCommitted, "Transaction with { txnNumber: %d } has been committed.", txnNumber)
	}
	return nil
}

// endTxn aborts the session's open transaction and closes its cursors.
func (s *Service) endTxn(sess *sessions.Session) {
	if sess.State == sessions.TxnInProgress {
		s.Cursors.KillOwned(sess.Txn)
	}
	sess.EndTxn()
}

// hasWriteErrors reports whether a write reply lists failed statements.
func hasWriteErrors(reply bson.Raw) bool {
	_, err := reply.LookupErr("writeErrors")
	return err == nil
}

// commitTransactionCmd commits the session's transaction, recording the
// commit in the commit's own batch. A retried commit of a committed
// transaction succeeds, also after a restart: the record says committed.
func commitTransactionCmd(s *Service, r *Request) (bson.Raw, error) {
	sess := r.session
	if !r.Args.Session.inTxn {
		return nil, mongoerr.New(mongoerr.CommandFailed, "commitTransaction must be run within a transaction")
	}
	if r.Txn == nil && sess.State == sessions.TxnCommitted {
		return nil, nil // a retried commit
	}
	s.Cursors.KillOwned(r.Txn)
	err := r.Txn.CommitRecorded(r.Ctx, sess.RecordCommit())
	sess.Committed(err == nil)
	if err != nil && mongoerr.As(err).Code == mongoerr.WriteConflict {
		s.Sessions.Txns.Conflicts.Add(1)
	}
	return nil, err
}

func abortTransactionCmd(s *Service, r *Request) (bson.Raw, error) {
	if r.Txn == nil {
		return nil, mongoerr.New(mongoerr.CommandFailed, "abortTransaction must be run within a transaction")
	}
	s.endTxn(r.session)
	return nil, nil
}
