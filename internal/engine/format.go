package engine

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/folio-db/folio/internal/storage"
)

// The store's format is the version of the way the engine lays out its
// data, recorded under keyStoreFormat. A build reads every format up to
// storeFormat, records its own in a store of an earlier one, and refuses
// a store of a later one, which may hold data it would misread:
//
//	1  every store written before the format was recorded
//	2  documents stored marked with their insert entry's stamp, and insert
//	   entries by reference (oplogref.go)
const storeFormat = 2

// keyStoreFormat: m fmt -> format:8.
var keyStoreFormat = []byte{spaceMeta, 'f', 'm', 't'}

// checkFormat refuses a store written in a later format than this build's
// and records this build's in any other.
func (e *Engine) checkFormat() error {
	return e.retry(context.Background(), func(tx storage.Txn) error {
		v, ok, err := tx.Get(keyStoreFormat)
		if err != nil {
			return err
		}
		format := uint64(1)
		if ok {
			if len(v) != 8 {
				return fmt.Errorf("engine: malformed store format %x", v)
			}
			format = binary.BigEndian.Uint64(v)
		}
		switch {
		case format > storeFormat:
			return fmt.Errorf("the store holds data in format %d, written by a later Folio; this build reads formats up to %d", format, storeFormat)
		case ok && format == storeFormat:
			return nil
		}
		if err := tx.Set(keyStoreFormat, binary.BigEndian.AppendUint64(nil, storeFormat)); err != nil {
			return err
		}
		return tx.Commit()
	})
}
