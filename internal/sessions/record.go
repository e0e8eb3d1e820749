package sessions

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/keyenc"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/oplog"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/storage"
)

// The transaction records live in their own key space, beside the
// engine's (see engine/keys.go):
//
//	s <len:1> <lsid>                            the session's record (BSON, the
//	                                            shape of MongoDB's config.transactions)
//	s <len:1> <lsid> <txnNum:8> <stmtId:4>      the result of one executed statement
//
// The record and the results of the statements a write executes are
// staged in its storage transaction (Recorder), so a write and its record
// commit together or not at all. A new txnNumber's first write deletes the
// earlier one's results. The record's txnNum is the session's latest txnNumber that wrote.
const spaceSession = 's'

// MaxIDLen bounds an lsid's id, whose length a record key holds in a byte.
const MaxIDLen = 255

func recordKey(id string) []byte {
	k := make([]byte, 0, 2+len(id)+12)
	k = append(k, spaceSession, byte(len(id)))
	return append(k, id...)
}

func stmtKey(id string, txn int64, stmt int32) []byte {
	k := recordKey(id)
	k = binary.BigEndian.AppendUint64(k, uint64(txn))
	return binary.BigEndian.AppendUint32(k, uint32(stmt))
}

// AnonymousUID is the uid (user digest) of sessions opened without
// authentication: the SHA-256 of the empty user name, as MongoDB computes it.
var AnonymousUID = sha256.Sum256(nil)

// opTimes hands out increasing lastWriteOpTime timestamps: Folio has no
// oplog, so a record's optime is the wall clock's seconds and a counter.
var opTimes struct {
	mu   sync.Mutex
	secs uint32
	inc  uint32
}

func nextOpTime(now time.Time) (uint32, uint32) {
	opTimes.mu.Lock()
	defer opTimes.mu.Unlock()
	if s := uint32(now.Unix()); s > opTimes.secs {
		opTimes.secs, opTimes.inc = s, 0
	}
	opTimes.inc++
	return opTimes.secs, opTimes.inc
}

// appendRecord appends a session's record: {_id: {id, uid}, txnNum,
// lastWriteOpTime: {ts, t}, lastWriteDate, state (for a committed
// transaction), writeId}. writeId, Folio's own, is random, so that two
// writes of a record never leave the same bytes (see storedRecord).
func appendRecord(dst []byte, id string, txn int64, committed bool, now time.Time) []byte {
	start, dst := bsoncore.AppendDocumentStart(dst)
	idStart, dst := bsoncore.AppendDocumentElementStart(dst, "_id")
	dst = bsoncore.AppendBinaryElement(dst, "id", bson.TypeBinaryUUID, []byte(id))
	dst = bsoncore.AppendBinaryElement(dst, "uid", bson.TypeBinaryGeneric, AnonymousUID[:])
	dst, _ = bsoncore.AppendDocumentEnd(dst, idStart)
	dst = bsoncore.AppendInt64Element(dst, "txnNum", txn)
	secs, inc := nextOpTime(now)
	opStart, dst := bsoncore.AppendDocumentElementStart(dst, "lastWriteOpTime")
	dst = bsoncore.AppendTimestampElement(dst, "ts", secs, inc)
	dst = bsoncore.AppendInt64Element(dst, "t", 1)
	dst, _ = bsoncore.AppendDocumentEnd(dst, opStart)
	dst = bsoncore.AppendDateTimeElement(dst, "lastWriteDate", now.UnixMilli())
	if committed {
		dst = bsoncore.AppendStringElement(dst, "state", "committed")
	}
	dst = bsoncore.AppendInt64Element(dst, "writeId", rand.Int64())
	dst, _ = bsoncore.AppendDocumentEnd(dst, start)
	return dst
}

// storedRecord is what storage holds for a session: whether it has a
// record, its txnNum, the ids of the statement results stored under it,
// and the record's bytes (on a shared store, a record whose bytes differ
// was written by another frontend since).
type storedRecord struct {
	exists bool
	txn    int64
	stmts  []int32
	raw    []byte
}

// Result is what one executed statement did, enough to rebuild its reply
// (MongoDB rebuilds it from the statement's oplog entry).
type Result struct {
	N         int32
	NModified int32
	// Upserted is the _id the statement inserted as an upsert (Type 0 when
	// none).
	Upserted bson.RawValue
	// UpdatedExisting and Value are findAndModify's: whether it updated a
	// document, and the document it returned (nil for null).
	UpdatedExisting bool
	Value           bson.Raw
}

func (r Result) append(dst []byte) []byte {
	start, dst := bsoncore.AppendDocumentStart(dst)
	dst = bsoncore.AppendInt32Element(dst, "n", r.N)
	if r.NModified != 0 {
		dst = bsoncore.AppendInt32Element(dst, "nModified", r.NModified)
	}
	if r.Upserted.Type != 0 {
		dst = rawdoc.AppendElement(dst, "upserted", r.Upserted)
	}
	if r.UpdatedExisting {
		dst = bsoncore.AppendBooleanElement(dst, "updatedExisting", true)
	}
	if r.Value != nil {
		dst = bsoncore.AppendDocumentElement(dst, "value", r.Value)
	}
	dst, _ = bsoncore.AppendDocumentEnd(dst, start)
	return dst
}

func decodeResult(doc bson.Raw) (Result, error) {
	var r Result
	elems, err := doc.Elements()
	if err != nil {
		return r, err
	}
	for _, el := range elems {
		v := el.Value()
		switch el.Key() {
		case "n":
			r.N = v.Int32()
		case "nModified":
			r.NModified = v.Int32()
		case "upserted":
			r.Upserted = bson.RawValue{Type: v.Type, Value: append([]byte(nil), v.Value...)}
		case "updatedExisting":
			r.UpdatedExisting = v.Boolean()
		case "value":
			r.Value = append(bson.Raw(nil), v.Document()...)
		}
	}
	return r, nil
}

// Load reads the records in kv into the registry, which from then on
// deletes the records of the sessions it forgets. Each session's last use
// is its record's lastWriteDate, so it expires DefaultTimeout after it.
func (r *Registry) Load(kv storage.KV) error {
	r.kv = kv
	it, err := kv.NewIter([]byte{spaceSession}, []byte{spaceSession + 1})
	if err != nil {
		return err
	}
	defer it.Close()
	var cur *Session
	var stale [][]byte
	for it.First(); it.Valid(); it.Next() {
		k := it.Key()
		if len(k) < 2 || len(k) < 2+int(k[1]) {
			return fmt.Errorf("malformed session record key %x", k)
		}
		id := string(k[2 : 2+int(k[1])])
		switch rest := k[2+len(id):]; len(rest) {
		case 0:
			s, err := loadRecord(id, it.Value())
			if err != nil {
				return err
			}
			s.counts, s.shared = &r.Txns, r.Shared
			r.sessions[id] = s
			cur = s
		case 12:
			txn := int64(binary.BigEndian.Uint64(rest))
			if cur == nil || cur.ID != id || txn != cur.stored.txn {
				stale = append(stale, append([]byte(nil), k...))
				continue
			}
			if err := cur.loadResult(k, it.Value()); err != nil {
				return err
			}
		default:
			return fmt.Errorf("malformed session record key %x", k)
		}
	}
	if err := it.Error(); err != nil || len(stale) == 0 {
		return err
	}
	return deleteKeys(kv, stale, nil)
}

func loadRecord(id string, v []byte) (*Session, error) {
	doc := bson.Raw(v)
	if err := doc.Validate(); err != nil {
		return nil, fmt.Errorf("session record: %w", err)
	}
	txn, ok := doc.Lookup("txnNum").Int64OK()
	if !ok {
		return nil, fmt.Errorf("session record without txnNum: %s", doc)
	}
	s := &Session{ID: id, TxnNumber: txn, stored: storedRecord{exists: true, txn: txn, raw: bytes.Clone(v)}}
	if ms, ok := doc.Lookup("lastWriteDate").DateTimeOK(); ok {
		s.lastUse = time.UnixMilli(ms)
	}
	if state, _ := doc.Lookup("state").StringValueOK(); state == "committed" {
		s.State = TxnCommitted
	}
	return s, nil
}

// deleteRecord deletes s's record and statement results. On a shared
// store, a record another frontend wrote since this one last saw it is
// that frontend's to expire, and stays.
func (r *Registry) deleteRecord(s *Session) error {
	if !s.stored.exists || r.kv == nil {
		return nil
	}
	keys := [][]byte{recordKey(s.ID)}
	for _, stmt := range s.stored.stmts {
		keys = append(keys, stmtKey(s.ID, s.stored.txn, stmt))
	}
	var unchanged func(storage.Txn) (bool, error)
	if s.shared {
		unchanged = func(tx storage.Txn) (bool, error) {
			v, _, err := tx.Get(keys[0])
			return bytes.Equal(v, s.stored.raw), err
		}
	}
	if err := deleteKeys(r.kv, keys, unchanged); err != nil {
		return err
	}
	s.stored = storedRecord{}
	return nil
}

// deleteKeys deletes keys in one storage transaction, when unchanged (if
// given) says so in it. A write conflict is another engine's deletion of
// the same stale records, or on a shared store another frontend's write of
// the record: the deletion runs again.
func deleteKeys(kv storage.KV, keys [][]byte, unchanged func(storage.Txn) (bool, error)) error {
	for {
		tx, err := kv.Begin()
		if err != nil {
			return err
		}
		ok := true
		if unchanged != nil {
			ok, err = unchanged(tx)
		}
		for _, k := range keys {
			if err == nil && ok {
				err = tx.Delete(k)
			}
		}
		if err == nil {
			err = tx.Commit()
		}
		tx.Rollback()
		if !errors.Is(err, storage.ErrWriteConflict) {
			return err
		}
	}
}

// ErrMoved fails a retryable write or commit whose session's record
// another frontend of a shared store wrote since this one read it: the
// command runs again on the refreshed session (Registry.Refresh), where
// the statements the other frontend executed are answered from their
// results. It is a WriteConflict, failing the whole batch, should it
// reach a client.
var ErrMoved = mongoerr.New(mongoerr.WriteConflict, "the session's transaction record was written by another frontend")

// Refresh brings s, which the caller holds locked, up to date with its
// record on a shared store: a later transaction number, a commit, or the
// statements another frontend executed. On a store only this server
// writes, the session is always up to date and Refresh reads nothing.
func (r *Registry) Refresh(s *Session) error {
	if !s.shared || r.kv == nil {
		return nil
	}
	key := recordKey(s.ID)
	v, ok, err := r.kv.Get(key)
	if err != nil || bytes.Equal(v, s.stored.raw) {
		return err
	}
	if !ok {
		// deleted by another frontend (the session expired there): what
		// this frontend knows stays, and its next write records anew
		s.stored = storedRecord{}
		return nil
	}
	stored, err := loadRecord(s.ID, v)
	if err != nil {
		return err
	}
	if stored.TxnNumber < s.TxnNumber || stored.TxnNumber == s.TxnNumber && s.State == TxnInProgress {
		// this frontend moved the session on before writing
		s.stored = storedRecord{exists: true, txn: stored.TxnNumber, raw: stored.stored.raw}
		return nil
	}
	if stored.TxnNumber > s.TxnNumber {
		r.endTxn(s)
		s.Advance(stored.TxnNumber)
	}
	if stored.State == TxnCommitted {
		s.State = TxnCommitted
	}
	s.stored = storedRecord{exists: true, txn: stored.TxnNumber, raw: stored.stored.raw}
	prefix := binary.BigEndian.AppendUint64(key, uint64(stored.TxnNumber))
	it, err := r.kv.NewIter(prefix, keyenc.PrefixEnd(prefix))
	if err != nil {
		return err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		k := it.Key()
		if len(k) != len(prefix)+4 {
			continue
		}
		if err := s.loadResult(k, it.Value()); err != nil {
			return err
		}
	}
	return it.Error()
}

// loadResult adds to s the stored result v of the statement whose key
// (stmtKey, the statement id last) is k.
func (s *Session) loadResult(k, v []byte) error {
	res, err := decodeResult(v)
	if err != nil {
		return fmt.Errorf("session record %x: %w", k, err)
	}
	stmt := int32(binary.BigEndian.Uint32(k[len(k)-4:]))
	if s.executed == nil {
		s.executed = map[int32]Result{}
	}
	s.executed[stmt] = res
	s.stored.stmts = append(s.stored.stmts, stmt)
	return nil
}

// Recorder is the engine.Recorder of one command's writes in a session
// (which the command holds locked): it stages the session's record and
// the results of the statements each write executes, and once its storage
// transaction committed, makes them the session's executed statements.
type Recorder struct {
	s *Session
	// stmtIDs are the statement ids by position in the engine call.
	stmtIDs []int32
	// result is what a statement that changed a document did.
	result func(engine.Write) Result
	// commit records a transaction's commit.
	commit  bool
	pending []executed
	buf     []byte
	// record is the record the latest Stage wrote.
	record []byte
}

type executed struct {
	stmt int32
	res  Result
}

// RecordStatements returns the Recorder of a retryable write whose
// statements have ids stmtIDs (by position in the engine call), result
// telling what a statement did from the document it changed.
func (s *Session) RecordStatements(stmtIDs []int32, result func(engine.Write) Result) *Recorder {
	return &Recorder{s: s, stmtIDs: stmtIDs, result: result}
}

// RecordCommit returns the Recorder of the commit of the session's
// transaction: its record then says committed, so that a retried
// commitTransaction succeeds, also after a restart.
func (s *Session) RecordCommit() *Recorder { return &Recorder{s: s, commit: true} }

// Stage implements engine.Recorder.
func (r *Recorder) Stage(tx storage.Txn, writes []engine.Write) error {
	s := r.s
	r.pending = r.pending[:0]
	if s.shared {
		// Two frontends running one statement both write the record, so
		// one of them conflicts and, retrying, finds it changed here.
		v, _, err := tx.Get(recordKey(s.ID))
		if err != nil {
			return err
		}
		if !bytes.Equal(v, s.stored.raw) {
			return ErrMoved
		}
	}
	if s.stored.exists && s.stored.txn != s.TxnNumber {
		for _, stmt := range s.stored.stmts {
			if err := tx.Delete(stmtKey(s.ID, s.stored.txn, stmt)); err != nil {
				return err
			}
		}
	}
	for _, w := range writes {
		stmt := r.stmtIDs[w.Index]
		res := r.result(w)
		r.buf = res.append(r.buf[:0])
		if err := tx.Set(stmtKey(s.ID, s.TxnNumber, stmt), r.buf); err != nil {
			return err
		}
		r.pending = append(r.pending, executed{stmt: stmt, res: res})
	}
	r.record = appendRecord(r.record[:0], s.ID, s.TxnNumber, r.commit, time.Now())
	return tx.Set(recordKey(s.ID), r.record)
}

// Committed implements engine.Recorder.
func (r *Recorder) Committed() {
	s := r.s
	if !s.stored.exists || s.stored.txn != s.TxnNumber {
		s.stored = storedRecord{exists: true, txn: s.TxnNumber, stmts: s.stored.stmts[:0]}
	}
	s.stored.raw = append(s.stored.raw[:0], r.record...)
	if len(r.pending) > 0 && s.executed == nil {
		s.executed = make(map[int32]Result, len(r.pending))
	}
	for _, p := range r.pending {
		s.executed[p.stmt] = p.res
		s.stored.stmts = append(s.stored.stmts, p.stmt)
	}
	r.pending = r.pending[:0]
}

// OplogSession implements engine.OplogSession: the lsid as the session's
// record names it, the transaction number and the statement at position
// index (-1: a transaction's commit, which has none).
func (r *Recorder) OplogSession(index int) *oplog.Session {
	s := r.s
	start, lsid := bsoncore.AppendDocumentStart(nil)
	lsid = bsoncore.AppendBinaryElement(lsid, "id", bson.TypeBinaryUUID, []byte(s.ID))
	lsid = bsoncore.AppendBinaryElement(lsid, "uid", bson.TypeBinaryGeneric, AnonymousUID[:])
	lsid, _ = bsoncore.AppendDocumentEnd(lsid, start)
	stmt := int32(-1)
	if index >= 0 && index < len(r.stmtIDs) {
		stmt = r.stmtIDs[index]
	}
	return &oplog.Session{LSID: lsid, TxnNumber: s.TxnNumber, StmtID: stmt}
}
