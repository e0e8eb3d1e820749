package sessions

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
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
//	                                            fields of MongoDB's config.transactions
//	                                            but its _id, the lsid)
//	s <len:1> <lsid> <txnNum:8> <stmtId:4>      the result of a run of executed
//	                                            statements from stmtId on
//
// A run is one statement, or consecutive statements with the same result
// that names no document (an insertMany's, a multi-statement update's);
// its value's lastStmtId, when present, is its last statement. A write
// continuing the session's last run rewrites that run's key, so a bulk
// insert stores one result per command rather than one per document.
//
// The first run a txnNumber's writes record lives in the record itself,
// as its field run ({stmtId, lastStmtId, n, ...}), and later runs of the
// same txnNumber under keys of their own: a retryable write of one
// statement, the common case, writes one key beside its document.
//
// The record and the runs of the statements a write executes are staged
// in its storage transaction (Recorder), so a write and its record commit
// together or not at all. A new txnNumber's first write replaces the
// record, with its run, and deletes the earlier txnNumber's keyed runs.
// The record's txnNum is the session's latest txnNumber that wrote.
//
// KeySpace is the first byte of every key sessions write: a store's read
// cache need not hold them (pebblekv.Options.Uncached), since the records
// are read at startup and rewritten by every retryable write.
const KeySpace = 's'

// MaxIDLen bounds an lsid's id, whose length a record key holds in a byte.
const MaxIDLen = 255

func recordKey(id string) []byte {
	k := make([]byte, 0, 2+len(id)+12)
	k = append(k, KeySpace, byte(len(id)))
	return append(k, id...)
}

func stmtKey(id string, txn int64, stmt int32) []byte {
	k := recordKey(id)
	k = binary.BigEndian.AppendUint64(k, uint64(txn))
	return binary.BigEndian.AppendUint32(k, uint32(stmt))
}

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

// appendRecord appends a session's record: {txnNum, lastWriteOpTime:
// {ts, t}, lastWriteDate, state (for a committed transaction), run (when
// held is not nil), writeId}. MongoDB's record has the lsid as its _id;
// here the key holds it (every retryable write rewrites the record, and
// the lsid was a third of its bytes). run and writeId are Folio's own;
// writeId is random, so that two writes of a record never leave the same
// bytes (see storedRecord).
func appendRecord(dst []byte, txn int64, committed bool, held *run, now time.Time) []byte {
	start, dst := bsoncore.AppendDocumentStart(dst)
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
	if held != nil {
		runStart, d := bsoncore.AppendDocumentElementStart(dst, "run")
		d = bsoncore.AppendInt32Element(d, "stmtId", held.first)
		dst, _ = bsoncore.AppendDocumentEnd(held.appendFields(d), runStart)
	}
	dst = bsoncore.AppendInt64Element(dst, "writeId", rand.Int64())
	dst, _ = bsoncore.AppendDocumentEnd(dst, start)
	return dst
}

// storedRecord is what storage holds for a session: whether it has a
// record, its txnNum, the first statement id of the run the record holds
// (when held), the first statement ids of the runs stored under keys of
// their own, and the record's bytes (on a shared store, a record whose
// bytes differ was written by another frontend since).
type storedRecord struct {
	exists bool
	txn    int64
	held   bool
	first  int32
	firsts []int32
	raw    []byte
}

// fresh reports whether the record says nothing yet of txnNumber txn.
func (st *storedRecord) fresh(txn int64) bool { return !st.exists || st.txn != txn }

// run is what statements first through last (consecutive ids) did.
type run struct {
	first, last int32
	res         Result
}

// extends reports whether statement stmt with result res continues r.
func (r run) extends(stmt int32, res Result) bool {
	return int64(stmt) == int64(r.last)+1 && r.res.plain() && res.plain() &&
		r.res.Op == res.Op && r.res.N == res.N && r.res.NModified == res.NModified && r.res.UpdatedExisting == res.UpdatedExisting
}

// Result is what one executed statement did, enough to rebuild its reply
// (MongoDB rebuilds it from the statement's oplog entry).
type Result struct {
	// Op is the kind of change the statement made, as its oplog entry's
	// op: OpInsert (an upsert's too), OpUpdate or OpDelete; 0 in a record
	// written before Folio kept it.
	Op        byte
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

// The kinds of change a statement made (Result.Op).
const (
	OpInsert = 'i'
	OpUpdate = 'u'
	OpDelete = 'd'
)

// plain reports whether r names no document, so that statements with
// equal results can share a run.
func (r Result) plain() bool { return r.Upserted.Type == 0 && r.Value == nil }

// append appends the stored value of run r, kept under its own key.
func (r run) append(dst []byte) []byte {
	start, dst := bsoncore.AppendDocumentStart(dst)
	dst, _ = bsoncore.AppendDocumentEnd(r.appendFields(dst), start)
	return dst
}

// appendFields appends the fields of r's stored value.
func (r run) appendFields(dst []byte) []byte {
	if r.last != r.first {
		dst = bsoncore.AppendInt32Element(dst, "lastStmtId", r.last)
	}
	res := r.res
	if res.Op != 0 {
		dst = bsoncore.AppendStringElement(dst, "op", string(rune(res.Op)))
	}
	dst = bsoncore.AppendInt32Element(dst, "n", res.N)
	if res.NModified != 0 {
		dst = bsoncore.AppendInt32Element(dst, "nModified", res.NModified)
	}
	if res.Upserted.Type != 0 {
		dst = rawdoc.AppendElement(dst, "upserted", res.Upserted)
	}
	if res.UpdatedExisting {
		dst = bsoncore.AppendBooleanElement(dst, "updatedExisting", true)
	}
	if res.Value != nil {
		dst = bsoncore.AppendDocumentElement(dst, "value", res.Value)
	}
	return dst
}

// decodeRun decodes the stored value of the run from statement first;
// a run held in a record names its first statement (stmtId) itself.
func decodeRun(first int32, doc bson.Raw) (run, error) {
	out := run{first: first, last: first}
	r := &out.res
	elems, err := doc.Elements()
	if err != nil {
		return out, err
	}
	for _, el := range elems {
		v := el.Value()
		switch el.Key() {
		case "stmtId":
			out.first, out.last = v.Int32(), v.Int32()
		case "lastStmtId":
			out.last = v.Int32()
		case "op":
			if op := v.StringValue(); len(op) == 1 {
				r.Op = op[0]
			}
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
	if out.last < out.first {
		return out, fmt.Errorf("run from statement %d ends at %d", out.first, out.last)
	}
	return out, nil
}

// Load reads the records in kv into the registry, which from then on
// deletes the records of the sessions it forgets. Each session's last use
// is its record's lastWriteDate, so it expires DefaultTimeout after it.
func (r *Registry) Load(kv storage.KV) error {
	r.kv = kv
	it, err := kv.NewIter([]byte{KeySpace}, []byte{KeySpace + 1})
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
	if held, ok := doc.Lookup("run").DocumentOK(); ok {
		r, err := decodeRun(0, held)
		if err != nil {
			return nil, fmt.Errorf("session record %s: %w", doc, err)
		}
		s.addRun(r)
		s.stored.held, s.stored.first = true, r.first
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
	for _, first := range s.stored.firsts {
		keys = append(keys, stmtKey(s.ID, s.stored.txn, first))
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
	s.stored = stored.stored
	for _, r := range stored.executed {
		s.addRun(r)
	}
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

// loadResult adds to s the stored run v whose key (stmtKey, the first
// statement id last) is k.
func (s *Session) loadResult(k, v []byte) error {
	r, err := decodeRun(int32(binary.BigEndian.Uint32(k[len(k)-4:])), v)
	if err != nil {
		return fmt.Errorf("session record %x: %w", k, err)
	}
	s.addRun(r)
	s.stored.firsts = append(s.stored.firsts, r.first)
	return nil
}

// Recorder is the engine.Recorder of one command's writes in a session
// (which the command holds locked): it stages the session's record and
// the runs of the statements each write executes, and once its storage
// transaction committed, makes them the session's executed statements.
// A session has one, which each write reuses with its buffers: the writes
// of a session run one after another.
type Recorder struct {
	s *Session
	// stmtIDs are the statement ids by position in the engine call.
	stmtIDs []int32
	// result is what a statement that changed a document did.
	result func(engine.Write) Result
	// commit records a transaction's commit.
	commit bool
	// pending are the runs the latest Stage wrote: new ones, and the
	// session's runs it continued, under their first statement.
	pending []run
	// held is the index in pending of the run the record holds, -1 when
	// none of them; holds and first say whether the record holds a run
	// and its first statement.
	held  int
	holds bool
	first int32
	buf   []byte
	// record is the record the latest Stage wrote.
	record []byte
	// lsid is the session's lsid as oplog entries name it, made once.
	lsid bson.Raw
}

// RecordStatements returns the Recorder of a retryable write whose
// statements have ids stmtIDs (by position in the engine call), result
// telling what a statement did from the document it changed.
func (s *Session) RecordStatements(stmtIDs []int32, result func(engine.Write) Result) *Recorder {
	r := &s.rec
	r.s, r.stmtIDs, r.result, r.commit = s, stmtIDs, result, false
	return r
}

// RecordCommit returns the Recorder of the commit of the session's
// transaction: its record then says committed, so that a retried
// commitTransaction succeeds, also after a restart.
func (s *Session) RecordCommit() *Recorder {
	r := &s.rec
	r.s, r.stmtIDs, r.result, r.commit = s, nil, nil, true
	return r
}

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
	fresh := s.stored.fresh(s.TxnNumber)
	if fresh && s.stored.exists {
		for _, first := range s.stored.firsts {
			if err := tx.Delete(stmtKey(s.ID, s.stored.txn, first)); err != nil {
				return err
			}
		}
	}
	for _, w := range writes {
		stmt, res := r.stmtIDs[w.Index], r.result(w)
		if n := len(r.pending); n > 0 && r.pending[n-1].extends(stmt, res) {
			r.pending[n-1].last = stmt
			continue
		}
		next := run{first: stmt, last: stmt, res: res}
		if i, ok := s.runOf(int64(stmt) - 1); ok && s.executed[i].extends(stmt, res) {
			next.first = s.executed[i].first
		}
		r.pending = append(r.pending, next)
	}
	// The record holds the txnNumber's first run, continued or not.
	r.held = -1
	var held *run
	for i, p := range r.pending {
		if fresh && i == 0 || !fresh && s.stored.held && p.first == s.stored.first {
			r.held, held = i, &r.pending[i]
			continue
		}
		r.buf = p.append(r.buf[:0])
		if err := tx.Set(stmtKey(s.ID, s.TxnNumber, p.first), r.buf); err != nil {
			return err
		}
	}
	if held == nil && !fresh && s.stored.held {
		if i, ok := s.runOf(int64(s.stored.first)); ok {
			held = &s.executed[i]
		}
	}
	r.holds = held != nil
	if r.holds {
		r.first = held.first
	}
	r.record = appendRecord(r.record[:0], s.TxnNumber, r.commit, held, time.Now())
	return tx.Set(recordKey(s.ID), r.record)
}

// Committed implements engine.Recorder.
func (r *Recorder) Committed() {
	s := r.s
	if s.counts != nil {
		s.counts.RecordWrites.Add(1)
	}
	fresh := s.stored.fresh(s.TxnNumber)
	if fresh {
		s.stored = storedRecord{exists: true, txn: s.TxnNumber, firsts: s.stored.firsts[:0], raw: s.stored.raw}
	}
	s.stored.raw = append(s.stored.raw[:0], r.record...)
	s.stored.held, s.stored.first = r.holds, r.first
	for i, p := range r.pending {
		// A new key, unless p continues a run stored under its key
		// (after a fresh record, one known but not stored).
		if added := s.addRun(p); (added || fresh) && i != r.held {
			s.stored.firsts = append(s.stored.firsts, p.first)
		}
	}
	r.pending = r.pending[:0]
}

// runOf returns the index of the run of executed holding statement id.
func (s *Session) runOf(id int64) (int, bool) {
	i, _ := slices.BinarySearchFunc(s.executed, id, func(r run, id int64) int { return cmp.Compare(int64(r.last), id) })
	return i, i < len(s.executed) && int64(s.executed[i].first) <= id
}

// addRun makes r one of the session's runs, replacing those it covers
// (the run it continues, or the same run read again from storage), and
// reports whether none of them started at r's first statement.
func (s *Session) addRun(r run) bool {
	lo, _ := s.runOf(int64(r.first)) // the first run ending at r.first or after
	hi := lo
	for hi < len(s.executed) && s.executed[hi].first <= r.last {
		hi++
	}
	added := lo == hi || s.executed[lo].first != r.first
	s.executed = slices.Replace(s.executed, lo, hi, r)
	return added
}

// OplogSession implements engine.OplogSession: the lsid as the session's
// record names it, the transaction number and the statement at position
// index (-1: a transaction's commit, which has none).
func (r *Recorder) OplogSession(index int) oplog.Session {
	if r.lsid == nil {
		start, lsid := bsoncore.AppendDocumentStart(nil)
		r.lsid, _ = bsoncore.AppendDocumentEnd(appendLSIDFields(lsid, r.s.ID), start)
	}
	stmt := int32(-1)
	if index >= 0 && index < len(r.stmtIDs) {
		stmt = r.stmtIDs[index]
	}
	return oplog.Session{LSID: r.lsid, TxnNumber: r.s.TxnNumber, StmtID: stmt}
}
