package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/keyenc"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/oplog"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/storage"
)

// The oplog is the key space 'o' <stamp:8>: one entry per committed write
// of a document outside a transaction, per committed transaction (its
// applyOps) and per collection or database command, staged in the storage
// transaction of the write itself and keyed by the stamp of its commit
// (storage.StampedTxn). So an acknowledged write is never missing from the
// oplog, an aborted one never appears, and the keys' order is the order in
// which the writes became visible. The oplog is capped by size: the oldest
// entries are removed (MaintainOplog). A store that does not stamp its
// commits has no oplog. On TiKV, one commit's entries are joined into one
// applyOps entry (oplogWrite.Join), as the commit has one timestamp.
var oplogPrefix = []byte{spaceOplog}

// DefaultOplogSize is the oplog's size bound when Options.OplogSize is zero.
const DefaultOplogSize = 990 << 20

// oplogState is the engine's view of the oplog.
type oplogState struct {
	stamps storage.Stamps
	// durable is the store's durable stamps when a commit may be visible
	// before it is on disk (nil otherwise, and with DurableNever, which
	// gives durability up): what a crash may take away is past them.
	durable storage.DurableStamps
	limit   int64
	uuid    [16]byte // see keyOplogUUID
	// scans counts the finds that read the oplog.
	scans ScanCounts
	// staged is the bytes of the entries this engine staged since its
	// last pass of MaintainOplog, which adds them to the count kept in the
	// store (keyOplogSize).
	staged atomic.Int64
	// estimated is set when staged took an entry's bound rather than its
	// size (a store that builds entries at commit).
	estimated atomic.Bool
	truncate  sync.Mutex
	// store is the store, when it can hold insert entries by reference
	// (storage.StampRefStore; nil otherwise): whether this engine writes
	// them is its transactions' (storage.StampRefTxn: not through a
	// test's wrapper, though the store may hold some). Its StampRefs lock
	// is held shared by a write that writes documents beside the insert
	// entries that refer to them (resolveInsertEntry), from its look at
	// floor through its commit, and exclusively by a truncation's
	// deletion and its move of floor: so no document is written beside an
	// entry removed.
	store storage.StampRefStore
	// floor is the stamp below which a truncation removed every entry:
	// the documents of insert entries by reference below it are not
	// written beside them (resolveInsertEntry). Set under the refs lock
	// held exclusively. Another engine over the same store (tests'
	// frontends) does not see it move: a document it writes beside a
	// removed entry is read by no one (scanOplog skips it) and goes with
	// the next truncation.
	floor atomic.Uint64
	// preImagesFrom is the stamp from which entries may still hold
	// pre-images ExpirePreImages would remove: where its last pass
	// stopped.
	preImagesFrom atomic.Uint64
	// floors holds the ids of the collections known to have their floor
	// (keyRefFloor) stored.
	floors sync.Map
	// measured is set once a pass measured the oplog: the first pass (the
	// reaper's, just after start) measures it instead of start-up reading
	// it all. truncations counts the passes that removed entries, and
	// measurements those that measured. Guarded by truncate.
	measured                  bool
	truncations, measurements int
}

// keyOplogSize holds the bytes of the oplog's entries as the engines over
// the store count them (8 bytes, big-endian): each adds the bytes it
// staged, at each reaper pass, and a truncation sets the bytes it
// measured less those it removed. On a shared store the one frontend that
// truncates is not the only one writing. The count only says when to
// look: adds racing a truncation's are lost, and the truncation measures.
var keyOplogSize = []byte{spaceMeta, 'o', 'p', 'l', 'o', 'g', 's', 'z'}

// keyOplogUUID holds the UUID listCollections gives local.oplog.rs (16
// bytes), made when the store's oplog starts.
var keyOplogUUID = []byte{spaceMeta, 'o', 'p', 'l', 'o', 'g', 'i', 'd'}

// initiatingSet is the object of the no-op that starts an oplog.
var initiatingSet = bson.Raw(bsoncore.NewDocumentBuilder().AppendString("msg", "initiating set").Build())

// openOplog finds the oplog's extent, makes the store's stamps follow its
// newest entry, and starts it with MongoDB's "initiating set" no-op when
// it is empty. Without stamping storage there is no oplog (e.oplog nil).
func (e *Engine) openOplog() error {
	stamps, ok := storage.StampsOf(e.kv)
	if !ok {
		return nil
	}
	o := &oplogState{stamps: stamps, limit: e.opts.OplogSize}
	if d, ok := storage.As[storage.DurableStamps](e.kv); ok && e.opts.Durability != DurableNever {
		o.durable = d
	}
	o.scans.up = &e.scans
	if o.limit <= 0 {
		o.limit = DefaultOplogSize
	}
	end := keyenc.PrefixEnd(oplogPrefix)
	it, err := e.kv.NewIter(oplogPrefix, end)
	if err != nil {
		return err
	}
	var first, last uint64
	if it.First() {
		first = binary.BigEndian.Uint64(it.Key()[len(oplogPrefix):])
	}
	if it.Last() {
		last = binary.BigEndian.Uint64(it.Key()[len(oplogPrefix):])
	}
	if err := firstErr(it.Error(), it.Close()); err != nil {
		return err
	}
	if err := e.oplogUUID(o); err != nil {
		return err
	}
	if st, ok := storage.As[storage.StampRefStore](e.kv); ok {
		o.store = st
	}
	o.floor.Store(first)
	e.oplog = o
	if last != 0 {
		stamps.AdvanceStamp(last)
	} else if err := e.retry(context.Background(), func(tx storage.Txn) error {
		if err := e.logOp(tx, oplog.Op{Kind: oplog.Noop, O: initiatingSet}, oplog.Session{}); err != nil {
			return err
		}
		return tx.Commit()
	}); err != nil {
		return err
	}
	// what the store recovered, or the first entry, is majority committed
	// once on disk
	return e.kv.Sync()
}

// oplogUUID reads the oplog's UUID into o, making it on a store that has
// none. A store that cannot take the write (a full disk) starts with a
// UUID of this run, kept by a later start.
func (e *Engine) oplogUUID(o *oplogState) error {
	v, ok, err := e.kv.Get(keyOplogUUID)
	if err != nil || ok && len(v) == len(o.uuid) {
		copy(o.uuid[:], v)
		return err
	}
	err = e.retry(context.Background(), func(tx storage.Txn) error {
		if v, ok, err := tx.Get(keyOplogUUID); err != nil || ok {
			copy(o.uuid[:], v) // another frontend made it
			return err
		}
		if err := newUUID(&o.uuid); err != nil {
			return err
		}
		if err := tx.Set(keyOplogUUID, o.uuid[:]); err != nil {
			return err
		}
		return tx.Commit()
	})
	if err != nil {
		e.log.Warn("the oplog's UUID was not stored; this run's is used", "err", err)
	}
	return nil
}

// logOp stages op's entry in tx; sess is the session of the write.
func (e *Engine) logOp(tx storage.Txn, op oplog.Op, sess oplog.Session) error {
	if e.oplog == nil {
		return nil
	}
	return e.stageEntry(tx, new(oplogWrite).of(op, sess))
}

// stageEntry stages an entry, stamped at commit.
func (e *Engine) stageEntry(tx storage.Txn, w *oplogWrite) error {
	st, ok := tx.(storage.StampedTxn)
	if !ok {
		return errors.New("engine: the store keeps an oplog but this transaction cannot stamp its entry")
	}
	if err := st.SetStamped(oplogPrefix, w); err != nil {
		return err
	}
	e.countStaged(w)
	return nil
}

// countStaged adds w's bytes to those staged since the last pass of
// MaintainOplog.
func (e *Engine) countStaged(w *oplogWrite) {
	n := w.built
	if n == 0 {
		// The store builds the value at commit, maybe joined with others:
		// the count takes a bound, and the next truncation measures.
		n = w.size()
		e.oplog.estimated.Store(true)
	}
	e.oplog.staged.Add(int64(len(oplogPrefix) + 8 + n))
}

// oplogEntryOverhead bounds an entry's bytes other than its namespace and
// documents: field names, ui, ts, t, v, wall and a session's lsid.
const oplogEntryOverhead = 256

// oplogWrite is an oplog entry staged in a storage transaction, built when
// the store asks for its value (storage.StampedValue): the entry of its one
// operation, or an applyOps entry for a transaction's commit and for the
// writes a store joins under one stamp (as MongoDB logs a batched write).
type oplogWrite struct {
	ops []oplog.Op
	// pre are the documents before operations, of collections that
	// record pre-images.
	pre []txnPreImage
	// one holds ops' operation when the entry has one (of), keyRoom the
	// bytes of its document's key when they fit (docOp).
	one     [1]oplog.Op
	keyRoom [48]byte
	// sess is the session of the write, its LSID nil for none.
	sess oplog.Session
	// applyOps: the entry is an applyOps even with one operation.
	applyOps bool
	// chain places a transaction's applyOps entry in its chain (nil for
	// any other entry); prevAt is where, once built, the ts of the
	// chain's entry before it goes (storage.ChainedValue), -1 for none.
	chain  *oplog.Chain
	prevAt int
	// joined: the write is the join of others, and owns its slices.
	joined bool
	wall   time.Time
	// built is the size of the value the store had built at staging, 0
	// until it does.
	built int
	// ref is the storage key of the document an insert's entry refers to
	// instead of holding it (oplog.NewRef); nil for an entry whole. Such
	// an entry is never joined: only a store that stamps each write on its
	// own (storage.StampRefTxn) takes one.
	ref []byte
}

// of makes w the entry of op alone, written in sess, and returns it.
func (w *oplogWrite) of(op oplog.Op, sess oplog.Session) *oplogWrite {
	w.one[0], w.sess, w.wall = op, sess, time.Now()
	w.ops = w.one[:]
	return w
}

// session is the entry's session, nil for none.
func (w *oplogWrite) session() *oplog.Session {
	if w.sess.LSID == nil {
		return nil
	}
	return &w.sess
}

// AppendValue implements storage.StampedValue: the entry and its
// pre-images, as stored (oplog.Stored), and where its ts goes.
func (w *oplogWrite) AppendValue(dst []byte) ([]byte, int) {
	start := len(dst)
	if w.ref != nil {
		dst, at := oplog.NewRef(dst, w.ops[0], w.ref, w.session(), w.wall)
		w.built = len(dst) - start
		return dst, at
	}
	// room for the pre-images too, so that building copies a document once
	dst = slices.Grow(dst, w.size())
	var ent oplog.Entry
	if len(w.ops) == 1 && !w.applyOps {
		ent = oplog.New(dst, w.ops[0], w.session(), w.wall)
	} else {
		ent = oplog.NewApplyOps(dst, w.ops, w.session(), w.wall, w.chain)
	}
	w.prevAt = ent.PrevAt
	if len(ent.Doc) <= cap(dst)-start {
		dst = dst[:start+len(ent.Doc)] // built in place
	} else {
		dst = append(dst, ent.Doc...)
	}
	for _, p := range w.pre {
		dst = oplog.AppendPreImage(dst, p.index, p.doc)
	}
	w.built = len(dst) - start
	return dst, ent.TSAt
}

// PrevStampAt implements storage.ChainedValue.
func (w *oplogWrite) PrevStampAt() int { return w.prevAt }

// Join implements storage.StampedValue: one applyOps entry of w's
// operations then next's, without a session, as MongoDB logs a batched
// write outside a transaction (its change events carry no lsid).
func (w *oplogWrite) Join(next storage.StampedValue) storage.StampedValue {
	n := next.(*oplogWrite)
	if w.ref != nil || n.ref != nil {
		panic("engine: an insert's entry by reference joined")
	}
	j := w
	if !w.joined {
		// the first join copies: later ones append to the copy
		j = &oplogWrite{ops: slices.Clone(w.ops), pre: slices.Clone(w.pre), applyOps: true, joined: true, wall: w.wall}
	}
	for _, p := range n.pre {
		j.pre = append(j.pre, txnPreImage{index: p.index + len(j.ops), doc: p.doc})
	}
	j.ops = append(j.ops, n.ops...)
	return j
}

// size bounds the bytes of the entry's stored form.
func (w *oplogWrite) size() int {
	n := oplogEntryOverhead
	for _, op := range w.ops {
		n += len(op.NS) + len(op.O) + len(op.O2) + oplogEntryOverhead
	}
	for _, p := range w.pre {
		n += 4 + len(p.doc)
	}
	return n
}

// logDoc stages the entry of one document's change outside a transaction.
// A collection that records pre-images keeps the document before an
// update, replace or delete with the entry.
func (e *Engine) logDoc(tx storage.Txn, c *Collection, old, next bson.Raw, what change, sess oplog.Session) error {
	if e.oplog == nil || !c.replicated() {
		return nil
	}
	w := new(oplogWrite)
	w.of(docOp(c, old, next, what, w.keyRoom[:0]), sess)
	if old != nil && c.preImages.Load() {
		w.pre = []txnPreImage{{index: 0, doc: old}}
	}
	return e.stageEntry(tx, w)
}

// replicated reports whether c's changes are logged: those of a
// replicated namespace (isReplicated) but admin.system.advise, where
// builds before local.system.advise kept the advisor's observations
// unlogged, so that its removal at startup is not logged either.
func (c *Collection) replicated() bool {
	return IsReplicated(c.DB, c.Name) && !(c.DB == LegacyAdviseDB && c.Name == AdviseCollection)
}

// IsReplicated is MongoDB's NamespaceString::isReplicated: the oplog logs
// the writes and commands of every namespace but those of the local
// database and of a database's system.profile (coll "" for the database
// itself), whose changes stay on the member
// (ReplicationCoordinator::isOplogDisabledForNS).
func IsReplicated(db, coll string) bool {
	return db != "local" && coll != ProfileCollection
}

// logTxn stages the applyOps entries of a transaction's commit, with the
// pre-images of its operations on collections that record them: one
// entry, or as MongoDB's onUnpreparedTransactionCommit, when the
// operations pass 16 MB (oplog.SplitTxn), a chain of entries written
// together (storage.StampChainTxn), each with the pre-images of its own
// operations by their index in it. A store that gives a commit one stamp
// (TiKV) keeps the transaction one entry.
func (e *Engine) logTxn(tx storage.Txn, ops []oplog.Op, pre []txnPreImage, sess oplog.Session) error {
	if e.oplog == nil || len(ops) == 0 {
		return nil
	}
	wall := time.Now()
	ct, chains := tx.(storage.StampChainTxn)
	var ends []int
	if chains {
		ends = oplog.SplitTxn(nil, ops, oplog.MaxTxnEntryBytes, e.opts.MaxTxnOpsPerOplogEntry)
	}
	if len(ends) <= 1 {
		return e.stageEntry(tx, &oplogWrite{ops: ops, pre: pre, sess: sess, applyOps: true, chain: &oplog.Chain{}, wall: wall})
	}
	ws := make([]*oplogWrite, len(ends))
	vals := make([]storage.ChainedValue, len(ends))
	start := 0
	for i, end := range ends {
		w := &oplogWrite{ops: ops[start:end], sess: sess, applyOps: true, wall: wall,
			chain: &oplog.Chain{Prev: i > 0, Partial: i < len(ends)-1}}
		if !w.chain.Partial {
			w.chain.Count = int64(len(ops))
		}
		for _, p := range pre {
			if p.index >= start && p.index < end {
				w.pre = append(w.pre, txnPreImage{index: p.index - start, doc: p.doc})
			}
		}
		ws[i], vals[i] = w, w
		start = end
	}
	if err := ct.SetStampedChain(oplogPrefix, vals); err != nil {
		return err
	}
	for _, w := range ws {
		e.countStaged(w)
	}
	return nil
}

// txnPreImage is the document before a transaction's operation index.
type txnPreImage struct {
	index int
	doc   bson.Raw
}

// logCommand stages a command entry on db: o is the command as MongoDB
// logs it ({create: coll, ...}, {drop: coll}, {dropDatabase: 1}, ...), o2
// its o2 when it has one (a collMod's, collModO2); c is the collection it
// concerns (nil for the database).
func (e *Engine) logCommand(tx storage.Txn, db string, c *Collection, o, o2 bson.D) error {
	if e.oplog == nil || c != nil && !c.replicated() || !IsReplicated(db, "") {
		return nil
	}
	raw, err := bson.Marshal(o)
	if err != nil {
		return err
	}
	op := oplog.Op{Kind: oplog.Command, NS: db + ".$cmd", O: raw}
	if o2 != nil {
		if op.O2, err = bson.Marshal(o2); err != nil {
			return err
		}
	}
	if c != nil {
		op.UUID = c.UUID[:]
	}
	return e.logOp(tx, op, oplog.Session{})
}

// logIndex stages the entry of an index's creation (kind createIndexes:
// o is {createIndexes: coll, <the spec's fields>}) or drop (dropIndexes: o
// is {dropIndexes: coll, index: name} and o2 the spec), as MongoDB logs
// them.
func (e *Engine) logIndex(tx storage.Txn, c *Collection, kind string, spec bson.Raw) error {
	if e.oplog == nil || !c.replicated() {
		return nil
	}
	return e.logOp(tx, indexOp(c, kind, spec), oplog.Session{})
}

// indexOp is the oplog operation of an index's creation or drop (see
// logIndex).
func indexOp(c *Collection, kind string, spec bson.Raw) oplog.Op {
	start, o := bsoncore.AppendDocumentStart(nil)
	o = bsoncore.AppendStringElement(o, kind, c.Name)
	op := oplog.Op{Kind: oplog.Command, NS: c.DB + ".$cmd", UUID: c.UUID[:]}
	if kind == "createIndexes" {
		o = append(o, spec[4:len(spec)-1]...)
	} else {
		o = bsoncore.AppendStringElement(o, "index", spec.Lookup("name").StringValue())
		op.O2 = spec
	}
	o, _ = bsoncore.AppendDocumentEnd(o, start)
	op.O = o
	return op
}

// logIndexBuild stages a two-phase build's startIndexBuild,
// commitIndexBuild or abortIndexBuild entry (kind): o is {<kind>: coll,
// indexBuildUUID, indexes: specs}, and an abort's cause, the error that
// failed the build, as {ok: false, code, codeName, errmsg, <its extra
// fields>}: as MongoDB's op observer logs them (see indexBuild).
func (e *Engine) logIndexBuild(tx storage.Txn, c *Collection, kind string, buildUUID [16]byte, specs []bson.Raw, cause error) error {
	if e.oplog == nil || !c.replicated() {
		return nil
	}
	start, o := bsoncore.AppendDocumentStart(nil)
	o = bsoncore.AppendStringElement(o, kind, c.Name)
	o = bsoncore.AppendBinaryElement(o, "indexBuildUUID", bson.TypeBinaryUUID, buildUUID[:])
	arr, o := bsoncore.AppendArrayElementStart(o, "indexes")
	for i, spec := range specs {
		o = bsoncore.AppendDocumentElement(o, strconv.Itoa(i), spec)
	}
	o, _ = bsoncore.AppendArrayEnd(o, arr)
	if cause != nil {
		c, co := bsoncore.AppendDocumentElementStart(o, "cause")
		var err error
		if co, err = mongoerr.As(cause).AppendStatus(bsoncore.AppendBooleanElement(co, "ok", false)); err != nil {
			return err
		}
		o, _ = bsoncore.AppendDocumentEnd(co, c)
	}
	o, _ = bsoncore.AppendDocumentEnd(o, start)
	return e.logOp(tx, oplog.Op{Kind: oplog.Command, NS: c.DB + ".$cmd", UUID: c.UUID[:], O: o}, oplog.Session{})
}

// logBuildAborts stages an abortIndexBuild entry, with cause, for each
// two-phase build among ixs, indexes of c being retired, naming its
// indexes among them.
func (e *Engine) logBuildAborts(tx storage.Txn, c *Collection, ixs []*Index, cause error) error {
	for i, ix := range ixs {
		if ix.buildUUID == ([16]byte{}) || slices.ContainsFunc(ixs[:i], func(o *Index) bool { return o.buildUUID == ix.buildUUID }) {
			continue
		}
		var specs []bson.Raw
		for _, o := range ixs[i:] {
			if o.buildUUID == ix.buildUUID {
				specs = append(specs, o.Spec)
			}
		}
		if err := e.logIndexBuild(tx, c, "abortIndexBuild", ix.buildUUID, specs, cause); err != nil {
			return err
		}
	}
	return nil
}

// docOp is the oplog operation of a document's change from old to next
// (nil for absent) in c: an insert, a delete, a replacement (what is
// substitute) or an update, logged as MongoDB's $v: 2 delta. The
// document's key is built in keyBuf's room when it fits.
func docOp(c *Collection, old, next bson.Raw, what change, keyBuf []byte) oplog.Op {
	op := oplog.Op{NS: c.ns, UUID: c.UUID[:]}
	doc := old // an update names the document as it was (a new shard key value moves it)
	if doc == nil {
		doc = next
	}
	key := c.appendDocumentKey(keyBuf, doc)
	switch {
	case old == nil:
		op.Kind, op.O, op.O2 = oplog.Insert, next, key
	case next == nil:
		op.Kind, op.O = oplog.Delete, key
	case what.kind == substitute:
		op.Kind, op.O, op.O2 = oplog.Update, next, key
	case what.delta != nil:
		op.Kind, op.O, op.O2 = oplog.Update, oplog.DeltaO(nil, what.delta), key
	default:
		op.Kind, op.O, op.O2 = oplog.Update, oplog.UpdateO(nil, old, next), key
	}
	return op
}

// appendDocumentKey appends how the oplog and change events name doc:
// {_id}, or on a sharded collection its shard key fields (those it has, by
// their paths) then _id, as MongoDB's documentKey does.
func (c *Collection) appendDocumentKey(dst []byte, doc bson.Raw) bson.Raw {
	id := documentID(doc)
	// {_id} in at most one allocation: its length, _id's type and name,
	// the value, the end
	dst = slices.Grow(dst, 4+1+len("_id\x00")+len(id.Value)+1)
	start, out := bsoncore.AppendDocumentStart(dst)
	if c.shard != nil {
		for _, f := range c.shard.values.Fields {
			if f.Path == "_id" {
				continue
			}
			if v, err := doc.LookupErr(f.Parts...); err == nil {
				out = rawdoc.AppendElement(out, f.Path, v)
			}
		}
	}
	out = rawdoc.AppendElement(out, "_id", id)
	out, _ = bsoncore.AppendDocumentEnd(out, start)
	return out
}

// OplogSession is implemented by a Recorder of a session's write: the
// session as the oplog names it, for the statement at position index of
// the engine call (-1: a transaction's commit).
type OplogSession interface {
	OplogSession(index int) oplog.Session
}

// sessionOf is rec's session, or nil.
func sessionOf(rec Recorder, index int) oplog.Session {
	if s, ok := rec.(OplogSession); ok {
		return s.OplogSession(index)
	}
	return oplog.Session{}
}

// session is the oplog session of the statement sr records.
func (s stmtRec) session() oplog.Session { return sessionOf(s.rec, s.index) }

// MaxTxnOpsPerOplogEntry is Options.MaxTxnOpsPerOplogEntry as MongoDB
// reports maxNumberOfTransactionOperationsInSingleOplogEntry: its default
// is the largest int32.
func (e *Engine) MaxTxnOpsPerOplogEntry() int32 {
	if n := e.opts.MaxTxnOpsPerOplogEntry; n > 0 {
		return int32(n)
	}
	return math.MaxInt32
}

// HasOplog reports whether the engine keeps an oplog.
func (e *Engine) HasOplog() bool { return e.oplog != nil }

// OplogInfo is the oplog's UUID and its size bound in bytes, as
// listCollections describes local.oplog.rs; the engine must have an oplog.
func (e *Engine) OplogInfo() (uuid [16]byte, limit int64) { return e.oplog.uuid, e.oplog.limit }

// OplogLast is a stamp up to which every entry is readable: the latest
// commit's on Pebble.
func (e *Engine) OplogLast() uint64 {
	last, _ := e.oplog.stamps.LastStamp()
	return last
}

// OplogMajority is a stamp up to which every entry is majority committed:
// readable and on disk, so that no crash takes it away, as a one-member
// set's majority commit point with its journal (at most OplogLast; with
// DurableNever, or a store whose commits are durable, OplogLast). A
// change stream returns no entry past it, as MongoDB's reads majority
// committed entries only.
func (e *Engine) OplogMajority() uint64 {
	st, _ := e.oplog.majority()
	return st
}

// OplogPoints are OplogLast and OplogMajority read together, the majority
// point never past the last: on TiKV each read of the last stamp takes a
// new timestamp, and there the two are one.
func (e *Engine) OplogPoints() (last, majority uint64) { return e.oplog.points() }

// points are OplogPoints.
func (o *oplogState) points() (last, majority uint64) {
	last, _ = o.stamps.LastStamp()
	if o.durable == nil {
		return last, last
	}
	m, _ := o.durable.DurableStamp()
	return last, min(m, last)
}

// majority is OplogMajority and a channel closed once it may have moved.
func (o *oplogState) majority() (uint64, <-chan struct{}) {
	if o.durable == nil {
		return o.stamps.LastStamp()
	}
	return o.durable.DurableStamp()
}

// majorityLags reports whether an entry is readable that is not majority
// committed (not yet on disk).
func (o *oplogState) majorityLags() bool {
	if o == nil || o.durable == nil {
		return false
	}
	last, majority := o.points()
	return majority < last
}

// OplogOldest is the stamp of the oldest entry kept (0: none), read from
// the store: on a shared store another frontend may have truncated the
// oplog. whole reports that no entry was ever truncated: the oldest is
// the "initiating set" no-op the oplog starts with, so nothing before it
// was lost (MongoDB's test before ChangeStreamHistoryLost).
func (e *Engine) OplogOldest() (oldest uint64, whole bool, err error) {
	err = scanOplog(e.kv, 0, ^uint64(0), false, func(stamp uint64, it storage.Iter) (bool, error) {
		oldest, whole = stamp, isInitiatingSet(oplog.Stored(it.Value()).Entry())
		return false, nil
	})
	return oldest, whole, err
}

// isInitiatingSet reports whether entry is the no-op that starts an
// oplog: {op: "n", o: {msg: "initiating set"}}.
func isInitiatingSet(entry bson.Raw) bool {
	op, _ := entry.Lookup("op").StringValueOK()
	o, _ := entry.Lookup("o").DocumentOK()
	return op == "n" && bytes.Equal(o, initiatingSet)
}

// FirstOplogStamp is the stamp of the first entry in [from, to], and
// whether there is one.
func (e *Engine) FirstOplogStamp(from, to uint64) (stamp uint64, ok bool, err error) {
	err = scanOplog(e.kv, from, to, false, func(st uint64, _ storage.Iter) (bool, error) {
		stamp, ok = st, true
		return false, nil
	})
	return stamp, ok, err
}

// ReadOplog calls fn with each entry whose stamp is in [from, to], in
// order, until fn returns false; stored is valid until fn returns.
func (e *Engine) ReadOplog(from, to uint64, fn func(stamp uint64, stored oplog.Stored) (bool, error)) error {
	return e.readOplog(from, to, false, fn)
}

// readOplog is ReadOplog, newest first when reverse. It reads one
// snapshot, where an insert's entry that refers to its document finds it
// marked with the entry's stamp or beside the entry (see refDoc),
// and gives it whole.
func (e *Engine) readOplog(from, to uint64, reverse bool, fn func(stamp uint64, stored oplog.Stored) (bool, error)) error {
	snap := e.kv.NewSnapshot()
	defer snap.Close()
	var buf []byte
	return scanOplog(snap, from, to, reverse, func(stamp uint64, it storage.Iter) (bool, error) {
		stored := oplog.Stored(it.Value())
		if key, ok := stored.Ref(); ok {
			doc, _, err := refDoc(snap, stamp, key)
			if err != nil {
				return false, err
			}
			if buf = stored.Resolve(buf[:0], doc); buf == nil {
				return false, errMalformedRef(stamp)
			}
			stored = buf
		}
		return fn(stamp, stored)
	})
}

// oplogSizes calls fn with the stamp and the stored bytes (key and value)
// of each entry, in order, until fn returns false; the store need not read
// the values (see storage.ValueLen).
func (e *Engine) oplogSizes(fn func(stamp uint64, size int64) bool) error {
	return scanOplogKeys(e.kv, 0, ^uint64(0), false, true, func(stamp uint64, it storage.Iter) (bool, error) {
		return fn(stamp, int64(len(it.Key())+storage.ValueLen(it))), nil
	})
}

// scanOplog calls fn with the iterator at each entry of r whose stamp is
// in [from, to], in order or newest first, until fn returns false.
func scanOplog(r storage.Reader, from, to uint64, reverse bool, fn func(stamp uint64, it storage.Iter) (bool, error)) error {
	return scanOplogKeys(r, from, to, reverse, false, fn)
}

// scanOplogKeys is scanOplog, calling fn at the documents kept beside
// insert entries too (oplogDocKey), with their entries' stamps, when docs
// is set.
func scanOplogKeys(r storage.Reader, from, to uint64, reverse, docs bool, fn func(stamp uint64, it storage.Iter) (bool, error)) error {
	if to < from {
		return nil
	}
	lo := oplogKey(from)
	var hi []byte
	if to == ^uint64(0) {
		hi = keyenc.PrefixEnd(oplogPrefix)
	} else {
		hi = oplogKey(to + 1)
	}
	it, err := r.NewIter(lo, hi)
	if err != nil {
		return err
	}
	first, next := it.First, it.Next
	if reverse {
		first, next = it.Last, it.Prev
	}
	for ok := first(); ok; ok = next() {
		if !docs && isOplogDocKey(it.Key()) {
			continue
		}
		more, err := fn(binary.BigEndian.Uint64(it.Key()[len(oplogPrefix):]), it)
		if err != nil || !more {
			return firstErr(err, it.Close())
		}
	}
	return firstErr(it.Error(), it.Close())
}

// WaitOplog blocks until an entry after stamp after is readable (and
// majority committed, when majority: see OplogMajority), timeout passes or
// ctx ends.
func (e *Engine) WaitOplog(ctx context.Context, after uint64, timeout time.Duration, majority bool) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		last, next := e.oplog.stamps.LastStamp()
		if majority {
			last, next = e.oplog.majority()
		}
		if last > after {
			if _, found, err := e.FirstOplogStamp(after+1, last); found || err != nil {
				return // the read that follows meets the error
			}
		}
		select {
		case <-next:
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// MaintainOplog is the oplog's housekeeping, each reaper pass on every
// engine: on TiKV it first moves the entries committed meanwhile into
// place (those of writers that died after their commit too, see
// tikvkv/stamps.go); it adds the bytes this engine staged to the oplog's
// count; then, on the engine running the background jobs (the only one on
// Pebble), it removes the oldest entries while the count says the oplog
// is larger than its bound, down to 90% of it, and reports how many bytes
// it removed, which it takes off the count. The count is the entries'
// bytes as stored (an insert's entry by reference counts the reference,
// so the bound holds more entries than it would whole; a document
// written beside one counts too, twice when its write was retried; a
// pre-image expired is taken off), but for retried commits, counted
// twice: the first pass, every remeasureEvery-th truncation, and one
// after entries counted by a bound
// (on TiKV, which builds them at commit) measure the whole oplog instead
// of trusting it. (Measuring at every truncation read the whole oplog, its
// bound's worth of documents, each time a tenth of it was written: a
// fifth of a bulk-loading server's time.)
func (e *Engine) MaintainOplog() (int64, error) {
	o := e.oplog
	if o == nil {
		return 0, nil
	}
	o.stamps.LastStamp()
	o.truncate.Lock()
	defer o.truncate.Unlock()
	total, err := e.countOplog(o.staged.Swap(0))
	if err != nil || !e.RunsJobs() || o.measured && total <= o.limit {
		return 0, err
	}
	estimated := o.estimated.Swap(false)
	measure := estimated || !o.measured || o.truncations%remeasureEvery == 0
	if measure {
		total = 0
		if err := e.oplogSizes(func(_ uint64, size int64) bool {
			total += size
			return true
		}); err != nil {
			return 0, err
		}
		o.measured = true
		o.measurements++
	}
	excess := total - o.limit*9/10
	if total <= o.limit || excess <= 0 {
		if measure {
			return 0, e.setOplogCount(total)
		}
		return 0, nil
	}
	var removed int64
	var cut, next uint64
	// The newest entry stays: it tells where the oplog ends.
	if err := e.oplogSizes(func(stamp uint64, size int64) bool {
		if removed >= excess {
			next = stamp
			return false
		}
		removed += size
		cut = stamp
		return true
	}); err != nil {
		return 0, err
	}
	if next == 0 {
		// The scan read the whole oplog without reaching the excess: the
		// count was high, and removed is what the oplog holds.
		return 0, e.setOplogCount(removed)
	}
	hi := oplogKey(cut + 1)
	unlock := e.lockRefs(true, true)
	err = e.kv.DeleteRange(oplogPrefix, hi)
	if err == nil {
		o.floor.Store(cut + 1)
	}
	unlock()
	if err != nil {
		return 0, err
	}
	o.truncations++
	if measure {
		return removed, e.setOplogCount(total - removed)
	}
	_, err = e.countOplog(-removed)
	return removed, err
}

// remeasureEvery is how many truncations trust the oplog's count before
// one measures the oplog again.
const remeasureEvery = 8

// countOplog adds delta bytes to the oplog's count and returns it; when
// the addition fails, delta is kept for the next pass.
func (e *Engine) countOplog(delta int64) (int64, error) {
	var n int64
	err := e.retry(context.Background(), func(tx storage.Txn) error {
		v, ok, err := tx.Get(keyOplogSize)
		if err != nil {
			return err
		}
		n = 0
		if ok && len(v) == 8 {
			n = int64(binary.BigEndian.Uint64(v))
		}
		if delta == 0 {
			return nil
		}
		n += delta
		if err := tx.Set(keyOplogSize, binary.BigEndian.AppendUint64(nil, uint64(n))); err != nil {
			return err
		}
		return tx.Commit()
	})
	if err != nil {
		e.oplog.staged.Add(delta)
	}
	return n, err
}

// setOplogCount sets the oplog's count to n bytes, measured.
func (e *Engine) setOplogCount(n int64) error {
	return e.retry(context.Background(), func(tx storage.Txn) error {
		if err := tx.Set(keyOplogSize, binary.BigEndian.AppendUint64(nil, uint64(n))); err != nil {
			return err
		}
		return tx.Commit()
	})
}

// AppendOplogNote writes a no-op entry holding data to the oplog, as
// appendOplogNote does: tools write one to advance the cluster time (and
// a change stream's high-water mark) without changing data. A store
// without an oplog has none to write to (NoReplicationEnabled).
func (e *Engine) AppendOplogNote(ctx context.Context, data bson.Raw) error {
	if e.oplog == nil {
		return mongoerr.New(mongoerr.NoReplicationEnabled, "Must have replication set up to run \"appendOplogNote\"")
	}
	return e.retry(ctx, func(tx storage.Txn) error {
		if err := e.logOp(tx, oplog.Op{Kind: oplog.Noop, O: data}, oplog.Session{}); err != nil {
			return err
		}
		return e.commit(tx)
	})
}

// collModO2 is the o2 of a collMod entry, as MongoDB's
// OpObserverImpl::onCollMod writes it: c's options before the change
// (optionsWithUUID) and, for an index's change, what the index was in
// the options the change named (indexOld, possibly empty). Change
// streams report them as a modify event's stateBeforeChange.
func collModO2(c *Collection, before CollectionOptions, indexOld bson.D) bson.D {
	o2 := bson.D{{Key: "collectionOptions_old", Value: c.optionsWithUUID(before)}}
	if indexOld != nil {
		o2 = append(o2, bson.E{Key: "indexOptions_old", Value: indexOld})
	}
	return o2
}
