package engine

import (
	"context"
	"slices"
	"unsafe"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/storage"
)

// WriteError is the failure of one document of a batched write, by its
// position in the batch.
type WriteError struct {
	Index int
	Err   *mongoerr.Error
}

// insertChunk bounds how many documents one storage transaction carries.
const insertChunk = 1000

// Insert stores docs in db.coll, creating the collection if needed. Ordered
// inserts stop at the first failing document; unordered ones go on and
// report every failure. It returns how many documents were stored. An
// interruption (wo.Ctx) stops the batch between chunks of documents, with
// the interruption's error: the documents stored so far stay.
func (e *Engine) Insert(db, coll string, docs []bson.Raw, ordered bool, wo WriteOptions) (int, []WriteError, error) {
	if err := e.userWritable(db, coll); err != nil {
		return 0, nil, err
	}
	return e.insert(db, coll, docs, ordered, wo)
}

func (e *Engine) insert(db, coll string, docs []bson.Raw, ordered bool, wo WriteOptions) (int, []WriteError, error) {
	if err := e.CheckUserWrite(wo.Ctx, db, coll); err != nil && len(docs) > 0 {
		// Each document fails, the first alone when ordered.
		werrs := []WriteError{{Index: 0, Err: mongoerr.As(err)}}
		for i := 1; i < len(docs) && !ordered; i++ {
			werrs = append(werrs, WriteError{Index: i, Err: mongoerr.As(err)})
		}
		return 0, werrs, nil
	}
	txn := wo.Txn
	create := e.lookup(txn, db, coll) != nil
	var refused []WriteError
	if !create {
		refused, create = storable(docs, ordered)
	}
	c, err := e.writable(wo.Ctx, txn, db, coll, create, nil)
	if err != nil || c == nil {
		return 0, refused, err
	}
	defer c.mu.RUnlock()
	if txn != nil && c.capped != nil && len(docs) > 0 {
		// MongoDB refuses it as it inserts the first document, once that
		// document passed its own checks, as that document's write error
		// (handleError), which ends the batch and the transaction.
		err := CheckInsert(docs[0])
		if err == nil {
			err = cappedInTxn(c)
		}
		return 0, []WriteError{{Index: 0, Err: mongoerr.As(err)}}, nil
	}
	if c.capped != nil || txn != nil {
		n, werrs, err := e.insertEach(wo.Ctx, c, docs, ordered, txn, wo.Record, wo.BypassValidation)
		if err == nil && n > 0 && txn == nil {
			err = e.ackDurable(wo)
		}
		return n, werrs, err
	}
	inserted := 0
	var werrs []WriteError
	for start := 0; start < len(docs); start += insertChunk {
		if err := mongoerr.Interruption(wo.Ctx); err != nil {
			return inserted, werrs, err
		}
		end := min(start+insertChunk, len(docs))
		n, chunkErrs, err := e.insertChunk(wo.Ctx, c, docs[start:end], start, ordered, wo.Record, wo.BypassValidation)
		inserted += n
		werrs = append(werrs, chunkErrs...)
		if err != nil {
			return inserted, werrs, err
		}
		if ordered && len(chunkErrs) > 0 {
			break
		}
	}
	if inserted > 0 {
		if err := e.ackDurable(wo); err != nil {
			return 0, werrs, err
		}
	}
	return inserted, werrs, nil
}

// storable reports whether a document of docs reaches the collection:
// MongoDB creates a missing collection only for a batch holding a document
// that passed fixDocumentForInsert (write_ops_exec.cpp performInserts
// flushes the documents before a refused one, and an empty batch creates
// nothing). When none does (an ordered batch's first document, or every
// document of an unordered one, is refused), refused are their errors.
func storable(docs []bson.Raw, ordered bool) (refused []WriteError, ok bool) {
	for i, d := range docs {
		_, _, err := prepareInsert(d)
		if err == nil {
			return nil, true
		}
		refused = append(refused, WriteError{Index: i, Err: mongoerr.As(err)})
		if ordered {
			break
		}
	}
	return refused, false
}

type pendingInsert struct {
	index int
	doc   bson.Raw
	id    bson.RawValue
	key   []byte
	ix    indexChanges
}

func (e *Engine) insertChunk(ctx context.Context, c *Collection, docs []bson.Raw, base int, ordered bool, rec Recorder, bypass bool) (int, []WriteError, error) {
	var werrs []WriteError
	fail := func(i int, err error) { werrs = append(werrs, WriteError{Index: i, Err: mongoerr.As(err)}) }
	pending := make([]pendingInsert, 0, len(docs))
	keys := make([][]byte, 0, len(docs))
	var uniques [][]byte
	for i, d := range docs {
		doc, id, err := prepareInsert(d)
		var k []byte
		var ch indexChanges
		if err == nil {
			err = e.validate(c, nil, doc, bypass)
		}
		if err == nil {
			k, err = c.recordKey(doc)
		}
		if err == nil {
			ch, err = c.indexChanges(idFromDocKey(k), nil, doc)
		}
		if err != nil {
			fail(base+i, err)
			if ordered {
				break
			}
			continue
		}
		pending = append(pending, pendingInsert{index: base + i, doc: doc, id: id, key: k, ix: ch})
		keys = append(keys, k)
		uniques = append(uniques, uniqueKeys(ch)...)
	}
	if len(pending) == 0 {
		return 0, werrs, nil
	}
	held, err := e.lockWritable(ctx, keys...)
	if err != nil {
		return 0, werrs, err
	}
	defer held.unlock()
	if len(uniques) > 0 {
		heldUnique := e.uniqueLocks.lock(uniques...)
		defer heldUnique.unlock()
	}
	var n int
	var chunkErrs []WriteError
	flagged := false
	err = e.retry(ctx, func(tx storage.Txn) error {
		chunkErrs = slices.Clone(werrs)
		var err error
		n, err = e.commitInserts(tx, c, pending, keys, ordered, rec, &chunkErrs, &flagged, opStatsIn(ctx))
		return err
	})
	if err != nil {
		return 0, werrs, err
	}
	sortWriteErrors(chunkErrs)
	return n, chunkErrs, nil
}

// commitInserts commits in tx the documents of pending (whose document keys
// are keys) that are not duplicates, appending the failures of the others
// to werrs, and returns how many it inserted; once they are committed,
// st (when not nil) counts the index keys they added. The caller holds the
// locks of keys; flagged carries, across retries, that it raised an
// index's flag.
func (e *Engine) commitInserts(tx storage.Txn, c *Collection, pending []pendingInsert, keys [][]byte, ordered bool, rec Recorder, werrs *[]WriteError, flagged *bool, st *OpStats) (int, error) {
	fail := func(i int, err error) { *werrs = append(*werrs, WriteError{Index: i, Err: mongoerr.As(err)}) }
	// Under the locks and after tx began, whether each _id is taken: one
	// pass over the store for the chunk rather than a lookup per document.
	// An _id another engine inserts after this pass makes tx conflict.
	exists := make([]bool, len(keys))
	if err := e.kv.Exist(keys, exists); err != nil {
		return 0, err
	}
	rt, byRef := e.insertRefTxn(tx, c)
	if byRef {
		if err := e.stageRefFloor(tx, c); err != nil {
			return 0, err
		}
	}
	var entries []oplogWrite // the oplog entries by reference, one allocation
	if byRef {
		entries = make([]oplogWrite, len(pending))
	}
	seen := make(map[string]struct{}, len(pending))
	staged := map[string][]byte{}
	n := 0
	written := make([]*pendingInsert, 0, len(pending))
	var recorded []Write
	if rec != nil {
		recorded = make([]Write, 0, len(pending))
	}
	for i, p := range pending {
		if ordered && len(*werrs) > 0 && (*werrs)[len(*werrs)-1].Index < p.index {
			break
		}
		err := e.checkInsert(c, p, exists[i], seen, staged)
		if err == nil && rec != nil {
			err = unloggedRetryable(c)
		}
		if err != nil {
			fail(p.index, err)
			if ordered {
				break
			}
			continue
		}
		// p.key is not changed after: the map may name its bytes
		seen[unsafe.String(unsafe.SliceData(p.key), len(p.key))] = struct{}{}
		encID := idFromDocKey(p.key)
		for _, u := range p.ix.uniques {
			staged[string(u.lock)] = encID
		}
		if byRef {
			err = e.insertByRef(rt, c, &entries[i], p.key, p.doc, sessionOf(rec, p.index))
		} else if err = storage.Insert(tx, p.key, c.stored(p.doc)); err == nil {
			err = e.logDoc(tx, c, nil, p.doc, replaced, sessionOf(rec, p.index))
		}
		if err == nil {
			err = p.ix.stage(tx)
		}
		if err != nil {
			return 0, err
		}
		*flagged = *flagged || p.ix.flagged
		written = append(written, &pending[i])
		if rec != nil {
			recorded = append(recorded, Write{Index: p.index, New: p.doc})
		}
		n++
	}
	if *flagged {
		if err := e.persistIndexFlags(tx, c); err != nil {
			return 0, err
		}
	}
	if rec != nil && len(recorded) > 0 {
		if err := rec.Stage(tx, recorded); err != nil {
			return 0, err
		}
	}
	for _, p := range written {
		p.ix.invalidateHints()
	}
	err := e.commit(tx)
	for _, p := range written {
		p.ix.invalidateHints()
	}
	if err != nil {
		return 0, err
	}
	for _, p := range written {
		st.wrote(nil, p.doc, p.ix)
	}
	if rec != nil && len(recorded) > 0 {
		rec.Committed()
	}
	return n, nil
}

// checkInsert fails when p's keys are too long for the store, its _id
// exists (committed, which exists says, or earlier in the batch) or one of
// its unique index keys is taken.
func (e *Engine) checkInsert(c *Collection, p pendingInsert, exists bool, seen map[string]struct{}, staged map[string][]byte) error {
	if err := e.checkKeyLengths(p.key, p.ix); err != nil {
		return err
	}
	if _, dup := seen[string(p.key)]; exists || dup {
		return duplicateIDError(c, p.id)
	}
	return e.checkUnique(c, idFromDocKey(p.key), nil, p.ix, staged)
}
