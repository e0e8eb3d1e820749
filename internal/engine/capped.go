package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"slices"
	"sync"
	"sync/atomic"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/keyenc"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/storage"
)

// cappedState is what a capped collection tracks in memory: the next
// insertion number and a signal for tailable cursors. Its totals (size and
// count), which every insert keeps within the size and max limits by
// deleting the oldest documents in the same batch, are in the store
// (cappedTotalsKey), read and written by each write's own transaction, so
// that frontends sharing the store keep one set of totals: two of them
// writing the collection at once conflict on that key.
type cappedState struct {
	mu      sync.Mutex // serializes the writes of the collection
	nextSeq uint64
	// size and max are the collection's limits, which collMod changes
	// (max 0: none).
	size, max atomic.Int64
	// inserted is closed (and replaced) after each insert, waking tailable
	// cursors that wait for data.
	inserted chan struct{}
}

// naturalKey is the key of the insertion-order entry with sequence seq.
func naturalKey(collID uint32, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(naturalPrefix(collID), seq)
}

func naturalPrefix(collID uint32) []byte {
	return binary.BigEndian.AppendUint32([]byte{spaceNatural}, collID)
}

// keyCappedTotalsPrefix starts the key of a capped collection's totals:
// m cap 0x00 <collID:4> -> size:8 count:8. The removal of the dropped
// collection's data deletes it.
var keyCappedTotalsPrefix = []byte{spaceMeta, 'c', 'a', 'p', 0}

func cappedTotalsKey(collID uint32) []byte {
	return binary.BigEndian.AppendUint32(slices.Clip(keyCappedTotalsPrefix), collID)
}

// cappedTotals reads c's totals in r. A collection whose totals were never
// written (created before they were kept) has them counted from its
// documents.
func cappedTotals(r storage.Reader, c *Collection) (size, count int64, err error) {
	v, ok, err := r.Get(cappedTotalsKey(c.ID))
	if err != nil || ok && len(v) == 16 {
		return int64(binary.BigEndian.Uint64(v)), int64(binary.BigEndian.Uint64(v[8:])), err
	}
	lo, hi := docSpan(c.ID)
	docs, err := r.NewIter(lo, hi)
	if err != nil {
		return 0, 0, err
	}
	defer docs.Close()
	for docs.First(); docs.Valid(); docs.Next() {
		count++
		size += int64(storedLen(docs.Value()))
	}
	return size, count, docs.Error()
}

func setCappedTotals(tx storage.Txn, c *Collection, size, count int64) error {
	v := binary.BigEndian.AppendUint64(make([]byte, 0, 16), uint64(size))
	return tx.Set(cappedTotalsKey(c.ID), binary.BigEndian.AppendUint64(v, uint64(count)))
}

// newCappedState is the state of a capped collection with options o,
// before its first insert.
func newCappedState(o CollectionOptions) *cappedState {
	st := &cappedState{inserted: make(chan struct{})}
	st.setLimits(o)
	return st
}

// setLimits makes the stored options' size and max the limits.
func (st *cappedState) setLimits(o CollectionOptions) {
	st.size.Store(o.Size)
	st.max.Store(o.Max)
}

// loadCapped reads the next insertion number of a capped collection from
// storage.
func loadCapped(r storage.Reader, c *Collection) (*cappedState, error) {
	st := newCappedState(c.Options)
	pre := naturalPrefix(c.ID)
	it, err := r.NewIter(pre, keyenc.PrefixEnd(pre))
	if err != nil {
		return nil, err
	}
	defer it.Close()
	if it.Last() {
		st.nextSeq = binary.BigEndian.Uint64(it.Key()[len(pre):]) + 1
	}
	return st, it.Error()
}

// insertEach inserts docs one by one: into a capped collection, each in a
// transaction that also deletes the oldest documents the collection no longer has
// room for; in a transaction, each into its view.
func (e *Engine) insertEach(ctx context.Context, c *Collection, docs []bson.Raw, ordered bool, txn *Txn, rec Recorder, bypass bool) (int, []WriteError, error) {
	n := 0
	var werrs []WriteError
	for i, d := range docs {
		if err := mongoerr.Interruption(ctx); err != nil {
			return n, werrs, err
		}
		_, err := e.insertOne(ctx, c, d, txn, stmtRec{rec: rec, index: i}, bypass)
		if err == nil {
			n++
			continue
		}
		me, ok := err.(*mongoerr.Error)
		if !ok || me.Code == mongoerr.WriteConflict {
			return n, werrs, err
		}
		werrs = append(werrs, WriteError{Index: i, Err: me})
		if ordered {
			break
		}
	}
	return n, werrs, nil
}

// stageCapped adds to tx what a write of a capped collection changes beyond
// the document and its indexes: the insertion-order entry of a new
// document, the eviction of the oldest documents past the limits, or the
// removal of a deleted document's entry, read in tx. An update may change
// a document's size (MongoDB refuses that only below FCV 5.3): it changes
// the totals and evicts nothing, the next insert does. A new document
// larger than the size limit is kept, every older one evicted, as
// MongoDB's capped delete never removes the document just inserted. The
// caller holds st.mu, taken before tx began, and runs the returned
// function once tx committed. (An eviction by another engine of a document tx changes makes
// tx's commit conflict: it writes the same document key.)
func (e *Engine) stageCapped(tx storage.Txn, c *Collection, encID []byte, old, next bson.Raw) (func(), error) {
	st := c.capped
	if old != nil && next != nil && len(old) == len(next) {
		return func() {}, nil
	}
	size, count, err := cappedTotals(tx, c)
	if err != nil {
		return nil, err
	}
	if old != nil && next != nil {
		return func() {}, setCappedTotals(tx, c, size+int64(len(next))-int64(len(old)), count)
	}
	if old != nil {
		key, err := findNatural(tx, c, encID)
		if err != nil {
			return nil, err
		}
		if key != nil {
			if err := tx.Delete(key); err != nil {
				return nil, err
			}
		}
		return func() {}, setCappedTotals(tx, c, size-int64(len(old)), count-1)
	}
	limit, maxDocs := st.size.Load(), st.max.Load()
	size, count = size+int64(len(next)), count+1
	pre := naturalPrefix(c.ID)
	it, err := tx.NewIter(pre, keyenc.PrefixEnd(pre))
	if err != nil {
		return nil, err
	}
	defer it.Close()
	// The insertion number follows the last one in tx's snapshot too: an
	// insert of another engine then makes both write the same entry, and
	// the later commit conflicts instead of overwriting it.
	seq := st.nextSeq
	if it.Last() {
		seq = max(seq, binary.BigEndian.Uint64(it.Key()[len(pre):])+1)
	}
	for it.First(); it.Valid() && (size > limit || (maxDocs > 0 && count > maxDocs)); it.Next() {
		victimKey := docKeyFromEncodedID(c.ID, it.Value())
		var buf []byte
		victim, found, err := getDoc(tx, victimKey, &buf)
		if err != nil {
			return nil, err
		}
		if err := tx.Delete(append([]byte(nil), it.Key()...)); err != nil {
			return nil, err
		}
		if !found {
			continue
		}
		ch, err := c.indexChanges(it.Value(), victim, nil)
		if err == nil {
			err = tx.Delete(victimKey)
		}
		if err == nil {
			err = ch.stage(tx)
		}
		if err != nil {
			return nil, err
		}
		size -= int64(len(victim))
		count--
	}
	if err := it.Error(); err != nil {
		return nil, err
	}
	if err := tx.Set(naturalKey(c.ID, seq), encID); err != nil {
		return nil, err
	}
	if err := setCappedTotals(tx, c, size, count); err != nil {
		return nil, err
	}
	return func() {
		st.nextSeq = seq + 1
		close(st.inserted)
		st.inserted = make(chan struct{})
	}, nil
}

// findNatural finds the insertion-order entry of the document encID in r.
func findNatural(r storage.Reader, c *Collection, encID []byte) ([]byte, error) {
	pre := naturalPrefix(c.ID)
	it, err := r.NewIter(pre, keyenc.PrefixEnd(pre))
	if err != nil {
		return nil, err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		if bytes.Equal(it.Value(), encID) {
			return append([]byte(nil), it.Key()...), nil
		}
	}
	return nil, it.Error()
}

// insertedSignal returns a channel closed at the next insert into c.
func (c *Collection) insertedSignal() <-chan struct{} {
	c.capped.mu.Lock()
	defer c.capped.mu.Unlock()
	return c.capped.inserted
}
