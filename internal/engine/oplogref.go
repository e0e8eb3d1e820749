package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

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
// document marked with its stamp. So the first write that changes or
// removes such a document writes it into its entry in the same batch
// (resolveInsertEntry, from rewrite's commitDoc or a transaction's
// commit), and a dropped collection's data stays until the entries that
// refer to it are whole (resolveGarbage). readOplog gives such entries
// whole.

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
// its oplog entry referring to it.
func (e *Engine) insertByRef(rt storage.StampRefTxn, c *Collection, key []byte, doc bson.Raw, sess *oplog.Session) error {
	w := &oplogWrite{ops: []oplog.Op{docOp(c, nil, doc, replaced)}, sess: sess, wall: time.Now(), ref: key}
	if err := e.stageEntry(rt, w); err != nil {
		return err
	}
	return rt.InsertStampRef(key, markedStored(doc), markStamp)
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

// resolveInsertEntry stages in tx the write of doc, stored marked with
// stamp, into the insert entry at stamp if that entry still refers to it:
// the first change or removal of a document inserted by reference. The
// caller holds the store's refs lock shared until tx commits (see
// lockRefs), and the document's lock, or the document is a dropped
// collection's.
func (e *Engine) resolveInsertEntry(tx storage.Txn, stamp uint64, doc bson.Raw) error {
	// The latest state, not tx's snapshot: a truncation since tx began
	// removed the entry for good.
	v, err := e.latestEntry(stamp)
	if err != nil || v == nil {
		return err
	}
	if _, isRef := oplog.Stored(v).Ref(); !isRef {
		return nil
	}
	key := oplogKey(stamp)
	whole := oplog.Stored(v).Resolve(nil, doc)
	if whole == nil {
		return errMalformedRef(stamp)
	}
	e.oplog.staged.Add(int64(len(whole) - len(v)))
	return tx.Set(key, whole)
}

// latestEntry is the stored entry at stamp in the latest state, nil when
// there is none. It is read past the store's cache (GetStamped), which
// it leaves to documents.
func (e *Engine) latestEntry(stamp uint64) ([]byte, error) {
	v, _, err := e.oplog.store.GetStamped(oplogKey(stamp))
	return v, err
}

// entryWhole reports whether the entry at stamp is gone or whole.
func (e *Engine) entryWhole(stamp uint64) (bool, error) {
	v, err := e.latestEntry(stamp)
	if err != nil || v == nil {
		return err == nil, err
	}
	_, isRef := oplog.Stored(v).Ref()
	return !isRef, nil
}

// lockRefs takes the store's refs lock when need is set and the oplog
// has references: shared for a write that makes entries whole (see
// resolveInsertEntry), exclusive for a truncation. It returns the unlock.
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
	return binary.BigEndian.AppendUint64(append(make([]byte, 0, len(oplogPrefix)+8), oplogPrefix...), stamp)
}

// insertedDocAt is the document the insert entry at stamp refers to by
// key, read in r, which must find it marked with stamp (see oplog.NewRef).
func insertedDocAt(r storage.Reader, stamp uint64, key []byte) (bson.Raw, error) {
	v, found, err := r.Get(key)
	if err != nil {
		return nil, err
	}
	doc, mark, marked := insertMark(v)
	if !found || !marked || mark != stamp {
		return nil, errChangedInsert
	}
	return doc, nil
}

// errChangedInsert: an insert entry by reference names a document no
// longer the one inserted; a reader sees it only where the document's
// change made the entry whole since it read the entry.
var errChangedInsert = errors.New("engine: an oplog entry refers to a document that is no longer the one inserted")

func errMalformedRef(stamp uint64) error {
	return fmt.Errorf("engine: the oplog entry at %d is a malformed reference", stamp)
}

// resolveDropped writes into each insert entry that refers to a document
// of the dropped collections collIDs that document (see oplog.NewRef), so
// that the entries outlive the collections' data. Nothing writes the
// collections any more. It reads the oplog once, from the lowest of their
// floors (keyRefFloor). It holds the store's refs lock only while it
// writes a batch, not while it reads the oplog: writes that make entries
// whole wait behind a truncation waiting for it.
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
		doc, err := insertedDocAt(e.kv, stamp, key)
		if errors.Is(err, errChangedInsert) {
			// another frontend's job may have made it whole and removed
			// the collection since the scan began
			if whole, err := e.entryWhole(stamp); err != nil || whole {
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
// once the insert entries that refer to their documents are whole
// (resolveDropped, one read of the oplog for all the collections due, a
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
