package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"

	"github.com/folio-db/folio/internal/keyenc"
	"github.com/folio-db/folio/internal/storage"
)

// Dropped data is removed after its catalog change, once no frontend can
// still write it: the change records the dropped collection (or index) as
// garbage, tagged with the change's version; the dropping frontend waits
// until every live frontend has loaded that version, then deletes its
// ranges (DeleteRange) and the record. A collection that insert entries
// may refer to is removed by a job in the background once it has made
// them whole (resolveGarbage). A record left by a frontend that
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
// live frontend has loaded. A dropped collection whose documents insert
// entries may still refer to (it has a floor, keyRefFloor) is left to
// a job in the background, which writes the documents beside those
// entries first
// (resolveGarbage): the drop does not wait for that.
func (e *Engine) collectGarbage() error {
	recs, err := e.dueGarbage()
	if err != nil {
		return err
	}
	var due []garbageRecord
	resolve := false
	for _, g := range recs {
		if g.index == nil && e.hasRefFloor(g.collID) {
			resolve = true
			continue
		}
		due = append(due, g)
	}
	if resolve {
		e.resolveGarbageInBackground()
	}
	return e.removeGarbage(due)
}

// garbageRecord is a garbage record: its key, the collection's id, and
// the index's id (nil for the whole collection).
type garbageRecord struct {
	key    []byte
	collID uint32
	index  *uint32
}

// dueGarbage lists the garbage recorded at versions every live frontend
// has loaded.
func (e *Engine) dueGarbage() ([]garbageRecord, error) {
	_, lowest, err := e.laggingFrontends(0)
	if err != nil {
		return nil, err
	}
	it, err := e.kv.NewIter(keyGarbagePrefix, keyenc.PrefixEnd(keyGarbagePrefix))
	if err != nil {
		return nil, err
	}
	var out []garbageRecord
	for it.First(); it.Valid(); it.Next() {
		if len(it.Value()) != 8 || binary.BigEndian.Uint64(it.Value()) > lowest {
			continue
		}
		rest := it.Key()[len(keyGarbagePrefix):]
		g := garbageRecord{key: bytes.Clone(it.Key()), collID: binary.BigEndian.Uint32(rest)}
		if len(rest) == 8 {
			id := binary.BigEndian.Uint32(rest[4:])
			g.index = &id
		}
		out = append(out, g)
	}
	return out, errors.Join(it.Error(), it.Close())
}

// removeGarbage removes the data of recs and the records. Removals of one
// record may run together: each step can be done twice.
func (e *Engine) removeGarbage(recs []garbageRecord) error {
	var done [][]byte
	for _, g := range recs {
		var spans [][2][]byte
		if g.index != nil {
			lo, hi := indexSpan(g.collID, *g.index)
			spans = append(spans, [2][]byte{lo, hi})
		} else {
			spans = collSpans(g.collID)
			done = append(done, cappedTotalsKey(g.collID), refFloorKey(g.collID))
			if e.oplog != nil {
				e.oplog.floors.Delete(g.collID)
			}
		}
		for _, s := range spans {
			if err := e.kv.DeleteRange(s[0], s[1]); err != nil {
				return err
			}
		}
		done = append(done, g.key)
	}
	if len(done) == 0 {
		return nil
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
