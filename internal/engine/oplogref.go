package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/oplog"
	"github.com/folio-db/folio/internal/storage"
)

// An insert outside a transaction, on a store that can write stamp
// references (Pebble), logs its entry by reference (oplog.NewRef): the
// entry names the document's key, and the document is stored marked with
// the entry's stamp (insertMark) for as long as it is the document
// inserted. Invariant: in any snapshot, an entry by reference finds its
// document marked with its stamp, or beside the entry (oplogDocKey). So
// the first write that changes or removes such a document writes it
// beside its entry in the same batch (resolveInsertEntry, from rewrite's
// commitDoc or a transaction's commit), without reading the entry; and a
// dropped collection's data stays until the entries that refer to it
// have their documents beside them (resolveDropped). readOplog gives such
// entries whole. (Entries written whole in place by earlier versions read
// as any entry whole.)

// insertRefTxn is tx as a transaction that can log c's inserts by
// reference (oplog.NewRef): on a store that stamps each write on its own
// (Pebble), for a collection whose documents change only by rewrite and
// leave only by a drop (shardCollection's copy is unmarked): not a capped
// collection (its evictions) nor a time series collection's buckets
// (stored compressed).
func (e *Engine) insertRefTxn(tx storage.Txn, c *Collection) (storage.StampRefTxn, bool) {
	if e.oplog == nil || e.oplog.store == nil || !c.replicated() || c.capped != nil || c.Options.Timeseries != nil {
		return nil, false
	}
	rt, ok := tx.(storage.StampRefTxn)
	return rt, ok
}

// insertByRef stages in rt the insert of doc at key, stored marked, with
// its oplog entry, w, referring to it.
func (e *Engine) insertByRef(rt storage.StampRefTxn, c *Collection, w *oplogWrite, key []byte, doc bson.Raw, sess oplog.Session) error {
	w.of(docOp(c, nil, doc, replaced, w.keyRoom[:0]), sess).ref = key
	if err := e.stageEntry(rt, w); err != nil {
		return err
	}
	return rt.InsertStampRef(key, markHead[:], doc, markStamp)
}

// keyRefFloor starts the floors of collections' insert entries by
// reference: m rf <collID:4> -> stamp:8, below the stamp of every entry
// that refers to a document of the collection, written with its first
// such entry and removed with its dropped data. A collection without one
// has no such entries; resolveDropped reads the oplog from it.
var keyRefFloor = []byte{spaceMeta, 'r', 'f', 0}

func refFloorKey(collID uint32) []byte {
	return binary.BigEndian.AppendUint32(append([]byte(nil), keyRefFloor...), collID)
}

// stageRefFloor stages in tx, which logs inserts into c by reference, c's
// floor (keyRefFloor) unless it is stored. Two first inserts conflict on
// it: the one that retries finds the other's.
func (e *Engine) stageRefFloor(tx storage.Txn, c *Collection) error {
	if _, ok := e.oplog.floors.Load(c.ID); ok {
		return nil
	}
	k := refFloorKey(c.ID)
	if _, ok, err := tx.Get(k); err != nil || ok {
		if ok {
			e.oplog.floors.Store(c.ID, true)
		}
		return err
	}
	// every stamp given from now on is above the latest applied
	last, _ := e.oplog.stamps.LastStamp()
	return tx.Set(k, binary.BigEndian.AppendUint64(nil, last))
}

// resolveInsertEntry stages in tx the write of doc beside the insert
// entry at stamp, unless a truncation removed the entry: the first change
// or removal of a document inserted by reference, which the entry must
// still find. The caller holds the store's refs lock shared until tx
// commits (see lockRefs), and the document's lock, or the document is a
// dropped collection's.
func (e *Engine) resolveInsertEntry(tx storage.Txn, stamp uint64, doc bson.Raw) error {
	if stamp < e.oplog.floor.Load() {
		return nil
	}
	key := oplogDocKey(stamp)
	e.oplog.staged.Add(int64(len(key) + len(doc)))
	return tx.Set(key, doc)
}

// entryGone reports whether the entry at stamp is gone in the latest
// state (truncated), read past the store's cache (GetStamped), which it
// leaves to documents.
func (e *Engine) entryGone(stamp uint64) (bool, error) {
	_, found, err := e.oplog.store.GetStamped(oplogKey(stamp))
	return !found, err
}

// lockRefs takes the store's refs lock when need is set and the oplog
// has references: shared for a write that writes documents beside
// entries (see resolveInsertEntry), exclusive for a truncation. It
// returns the unlock.
func (e *Engine) lockRefs(need, exclusive bool) func() {
	if !need || e.oplog == nil || e.oplog.store == nil {
		return func() {}
	}
	refs := e.oplog.store.StampRefs()
	if exclusive {
		refs.Lock()
		return refs.Unlock
	}
	refs.RLock()
	return refs.RUnlock
}

// oplogKey is the key of the entry at stamp.
func oplogKey(stamp uint64) []byte {
	return binary.BigEndian.AppendUint64(append(make([]byte, 0, len(oplogPrefix)+9), oplogPrefix...), stamp)
}

// oplogDocKey is the key of the document of the insert entry by reference
// at stamp once the document changed: the entry's key and a zero byte, so
// that it sorts after the entry and before the next one, and a truncation
// removes both. It is not an entry (scanOplog).
func oplogDocKey(stamp uint64) []byte { return append(oplogKey(stamp), 0) }

// isOplogDocKey reports whether a key of the oplog's span is an
// oplogDocKey.
func isOplogDocKey(key []byte) bool { return len(key) == len(oplogPrefix)+9 }

// refDoc is the document the insert entry by reference at stamp
// refers to by key, read in r: at key, marked with stamp, until it
// changed, then beside the entry (oplogDocKey), which beside reports.
// Neither is errChangedInsert.
func refDoc(r storage.Reader, stamp uint64, key []byte) (doc bson.Raw, beside bool, err error) {
	v, found, err := r.Get(key)
	if err != nil {
		return nil, false, err
	}
	if doc, mark, marked := insertMark(v); found && marked && mark == stamp {
		return doc, false, nil
	}
	v, found, err = r.Get(oplogDocKey(stamp))
	if err != nil || !found {
		return nil, false, firstErr(err, errChangedInsert)
	}
	return v, true, nil
}

// errChangedInsert: an insert entry by reference finds its document
// neither marked nor beside it; a reader sees it only where a truncation
// removed the entry since it read the entry.
var errChangedInsert = errors.New("engine: an oplog entry refers to a document that is no longer the one inserted")

func errMalformedRef(stamp uint64) error {
	return fmt.Errorf("engine: the oplog entry at %d is a malformed reference", stamp)
}

// resolveDropped writes beside each insert entry that refers to a
// document of the dropped collections collIDs that document (see
// resolveInsertEntry), so that the entries outlive the collections' data. Nothing writes the
// collections any more. It reads the oplog once, from the lowest of their
// floors (keyRefFloor). It holds the store's refs lock only while it
// writes a batch, not while it reads the oplog: writes beside entries wait
// behind a truncation waiting for it.
func (e *Engine) resolveDropped(collIDs []uint32) error {
	if e.oplog == nil || e.oplog.store == nil {
		return nil
	}
	from := ^uint64(0)
	var spans [][2][]byte
	for _, id := range collIDs {
		floor, ok, err := e.kv.Get(refFloorKey(id))
		if err != nil {
			return err
		}
		if ok && len(floor) == 8 {
			from = min(from, binary.BigEndian.Uint64(floor))
			lo, hi := docSpan(id)
			spans = append(spans, [2][]byte{lo, hi})
		}
	}
	if len(spans) == 0 {
		return nil // never inserted into by reference
	}
	dropped := func(key []byte) bool {
		for _, s := range spans {
			if bytes.Compare(key, s[0]) >= 0 && bytes.Compare(key, s[1]) < 0 {
				return true
			}
		}
		return false
	}
	var batch []insertedDoc
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		unlock := e.lockRefs(true, false)
		defer unlock()
		err := e.retry(context.Background(), func(tx storage.Txn) error {
			for _, d := range batch {
				if err := e.resolveInsertEntry(tx, d.stamp, d.doc); err != nil {
					return err
				}
			}
			return tx.Commit()
		})
		batch = batch[:0]
		return err
	}
	scanned := 0
	err := scanOplog(e.kv, from, ^uint64(0), false, func(stamp uint64, it storage.Iter) (bool, error) {
		if scanned++; scanned%1024 == 0 {
			select {
			case <-e.stop:
				return false, mongoerr.New(mongoerr.InterruptedAtShutdown, "interrupted at shutdown")
			default:
			}
		}
		key, ok := oplog.Stored(it.Value()).Ref()
		if !ok || !dropped(key) {
			return true, nil
		}
		doc, beside, err := refDoc(e.kv, stamp, key)
		if beside {
			return true, nil
		}
		if errors.Is(err, errChangedInsert) {
			// a truncation may have removed the entry since the scan
			// began
			if gone, err := e.entryGone(stamp); err != nil || gone {
				return err == nil, err
			}
		}
		if err != nil {
			return false, err
		}
		batch = append(batch, insertedDoc{stamp: stamp, doc: bytes.Clone(doc)})
		if len(batch) < resolveBatch {
			return true, nil
		}
		return true, flush()
	})
	if err != nil {
		return err
	}
	return flush()
}

// resolveBatch is how many entries resolveDropped writes per transaction.
const resolveBatch = 256

// hasRefFloor reports whether the collection collID has a floor
// (keyRefFloor): insert entries may refer to its documents.
func (e *Engine) hasRefFloor(collID uint32) bool {
	if e.oplog == nil || e.oplog.store == nil {
		return false
	}
	_, ok, err := e.kv.Get(refFloorKey(collID))
	return ok || err != nil // an error: the job meets it
}

// resolveGarbageInBackground runs resolveGarbage in a goroutine of its
// own, one at a time, and once more when asked while it runs; none starts
// once Close waits for the jobs.
func (e *Engine) resolveGarbageInBackground() {
	e.resolveAgain.Store(true)
	if !e.resolving.CompareAndSwap(false, true) {
		return
	}
	e.startJobs.Lock()
	defer e.startJobs.Unlock()
	if e.closed {
		e.resolving.Store(false)
		return
	}
	e.jobs.Add(1)
	go func() {
		defer e.jobs.Done()
		for {
			for e.resolveAgain.Swap(false) {
				if err := e.resolveGarbage(); err != nil {
					if !mongoerr.Is(err, mongoerr.InterruptedAtShutdown) {
						e.log.Error("removing dropped data", "err", err)
					}
					e.resolving.Store(false)
					return
				}
			}
			e.resolving.Store(false)
			// a request that came after the last run, and found it running
			if !e.resolveAgain.Load() || !e.resolving.CompareAndSwap(false, true) {
				return
			}
		}
	}()
}

// resolveGarbage removes the dropped collections collectGarbage left,
// once the insert entries that refer to their documents have them beside
// them (resolveDropped, one read of the oplog for all the collections due, a
// dropped database's say). A drop that leaves more while it runs asks for
// another run (resolveGarbageInBackground).
func (e *Engine) resolveGarbage() error {
	recs, err := e.dueGarbage()
	if err != nil {
		return err
	}
	var due []garbageRecord
	var ids []uint32
	for _, g := range recs {
		if g.index == nil && e.hasRefFloor(g.collID) {
			due, ids = append(due, g), append(ids, g.collID)
		}
	}
	if len(due) == 0 {
		return nil
	}
	if err := e.resolveDropped(ids); err != nil {
		return err
	}
	return e.removeGarbage(due)
}
