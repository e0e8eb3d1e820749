package engine

import (
	"context"
	"encoding/binary"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/keyenc"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
)

// TailCursor is a tailable cursor on a capped collection: it follows the
// insertion order and, once it has returned everything, returns the
// documents inserted later on the next calls.
type TailCursor struct {
	e      *Engine
	c      *Collection
	filter *query.Filter
	proj   *query.Projection
	next   uint64 // the next insertion sequence to read
	buf    []bson.Raw
}

// Tail opens a tailable cursor on a capped collection. MongoDB refuses
// tailable cursors on other collections and with a sort other than
// $natural.
func (e *Engine) Tail(db, coll string, o FindOptions) (*TailCursor, error) {
	q, err := compileFind(o)
	if err != nil {
		return nil, err
	}
	if q.sort != nil && q.sort.Natural() <= 0 {
		return nil, mongoerr.New(mongoerr.BadValue, "error processing query: cannot use tailable option with a sort other than {$natural: 1}")
	}
	c := e.cat.get(db, coll)
	if c == nil || c.capped == nil {
		return nil, mongoerr.New(mongoerr.BadValue, "error processing query: tailable cursor requested on non capped collection")
	}
	return &TailCursor{e: e, c: c, filter: q.filter, proj: q.proj}, nil
}

// tailBatch bounds how many entries one refill reads.
const tailBatch = 256

// Next returns the next matching document in insertion order, or nil when
// the cursor has caught up with the collection.
func (t *TailCursor) Next() (bson.Raw, error) {
	for len(t.buf) == 0 {
		more, err := t.refill()
		if err != nil || !more {
			return nil, err
		}
	}
	doc := t.buf[0]
	t.buf = t.buf[1:]
	return doc, nil
}

// refill reads the entries after the last one read; it reports false when
// there were none.
func (t *TailCursor) refill() (bool, error) {
	snap := t.e.kv.NewSnapshot()
	defer snap.Close()
	pre := naturalPrefix(t.c.ID)
	it, err := snap.NewIter(naturalKey(t.c.ID, t.next), keyenc.PrefixEnd(pre))
	if err != nil {
		return false, err
	}
	defer it.Close()
	read := 0
	for it.First(); it.Valid() && read < tailBatch; it.Next() {
		read++
		t.next = binary.BigEndian.Uint64(it.Key()[len(pre):]) + 1
		doc, found, err := snap.Get(docKeyFromEncodedID(t.c.ID, it.Value()))
		if err != nil {
			return false, err
		}
		if !found {
			continue
		}
		ok, pos, err := t.filter.MatchErr(doc)
		if err != nil {
			return false, err
		}
		if !ok {
			continue
		}
		if t.proj != nil {
			if doc, err = t.proj.Apply(doc, pos); err != nil {
				return false, err
			}
		}
		t.buf = append(t.buf, slices.Clip(doc))
	}
	return read > 0, it.Error()
}

// Wait blocks until a document is inserted into the collection, timeout
// passes or ctx (the getMore's operation) ends.
func (t *TailCursor) Wait(ctx context.Context, timeout time.Duration) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-t.c.insertedSignal():
	case <-timer.C:
	case <-ctx.Done():
	}
}

// Close releases the cursor.
func (t *TailCursor) Close() error { t.buf = nil; return nil }
