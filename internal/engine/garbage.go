package engine

import (
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
