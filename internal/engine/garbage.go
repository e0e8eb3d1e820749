package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/folio-db/folio/internal/keyenc"
	"github.com/folio-db/folio/internal/oplog"
	"github.com/folio-db/folio/internal/storage"
)

// Dropped data is removed after its catalog change, once no frontend can
// still write it: the change records the dropped collection (or index) as
// garbage, tagged with the change's version; the dropping frontend waits
// until every live frontend has loaded that version, then deletes its
// ranges (DeleteRange) and the record. A record left by a frontend that
// stopped in between is collected by the holder of the jobs lease.

// keyGarbagePrefix starts the garbage records: m gc <collID:4>
// [<indexID:4>] -> version:8.
var keyGarbagePrefix = []byte{spaceMeta, 'g', 'c', 0}

// markGarbage records in tx, a catalog change, that the data of the
// collection collID (indexID nil) or of its index *indexID is garbage once
// the change is loaded everywhere.
func markGarbage(tx storage.Txn, collID uint32, indexID *uint32) error {
	v, err := readVersion(tx)
	if err != nil {
		return err
	}
	k := binary.BigEndian.AppendUint32(append([]byte(nil), keyGarbagePrefix...), collID)
	if indexID != nil {
		k = binary.BigEndian.AppendUint32(k, *indexID)
	}
	return tx.Set(k, binary.BigEndian.AppendUint64(nil, v+1))
}

// dropData waits until every live frontend loaded catalog version v, then
// removes the garbage of that version and before.
func (e *Engine) dropData(v uint64) error {
	if err := e.awaitVersion(v); err != nil {
		return err
	}
	return e.collectGarbage()
}

// collectGarbage removes the data recorded as garbage at versions every
// live frontend has loaded.
func (e *Engine) collectGarbage() error {
	e.collecting.Lock()
	defer e.collecting.Unlock()
	_, lowest, err := e.laggingFrontends(0)
	if err != nil {
		return err
	}
	it, err := e.kv.NewIter(keyGarbagePrefix, keyenc.PrefixEnd(keyGarbagePrefix))
	if err != nil {
		return err
	}
	var done [][]byte
	for it.First(); it.Valid(); it.Next() {
		if len(it.Value()) != 8 || binary.BigEndian.Uint64(it.Value()) > lowest {
			continue
		}
		rest := it.Key()[len(keyGarbagePrefix):]
		collID := binary.BigEndian.Uint32(rest)
		var spans [][2][]byte
		if len(rest) == 8 {
			lo, hi := indexSpan(collID, binary.BigEndian.Uint32(rest[4:]))
			spans = append(spans, [2][]byte{lo, hi})
		} else {
			if err := e.resolveDropped(collID); err != nil {
				it.Close()
				return err
			}
			spans = collSpans(collID)
			done = append(done, cappedTotalsKey(collID))
		}
		for _, s := range spans {
			if err := e.kv.DeleteRange(s[0], s[1]); err != nil {
				it.Close()
				return err
			}
		}
		done = append(done, append([]byte(nil), it.Key()...))
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil || len(done) == 0 {
		return err
	}
	return e.retry(context.Background(), func(tx storage.Txn) error {
		for _, k := range done {
			if err := tx.Delete(k); err != nil {
				return err
			}
		}
		return tx.Commit()
	})
}

// resolveDropped writes into each insert entry that refers to a document
// of the dropped collection collID that document (see oplog.NewRef), so
// that the entries outlive the collection's data. Nothing writes the
// collection any more. It reads the oplog from the oldest entry, or for a
// collection made since the engine opened from the first insert by
// reference into it. It holds the oplog's refs lock only while it
// writes a batch, not while it reads the oplog: writes that make entries
// whole wait behind a truncation waiting for it.
func (e *Engine) resolveDropped(collID uint32) error {
	if e.oplog == nil || !e.oplog.byRef {
		return nil
	}
	var from uint64
	if collID >= e.oplog.newIDs {
		floor, ok := e.oplog.floors.Load(collID)
		if !ok {
			return nil // made in this run, and never inserted into by reference
		}
		from = floor.(uint64)
	}
	lo, hi := docSpan(collID)
	var batch []insertedDoc
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		unlock := e.lockRefs(true)
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
	err := scanOplog(e.kv, from, ^uint64(0), false, func(stamp uint64, it storage.Iter) (bool, error) {
		key, ok := oplog.Stored(it.Value()).Ref()
		if !ok || bytes.Compare(key, lo) < 0 || bytes.Compare(key, hi) >= 0 {
			return true, nil
		}
		v, found, err := e.kv.Get(key)
		if err != nil {
			return false, err
		}
		if mark, marked := insertMark(v); !found || !marked || mark != stamp {
			return false, fmt.Errorf("engine: the oplog entry at %d refers to a document that is no longer the one inserted", stamp)
		}
		batch = append(batch, insertedDoc{stamp: stamp, doc: bytes.Clone(v[markHeader:])})
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
