package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/keyenc"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/storage"
)

// TailCursor is a tailable cursor on a capped collection: it follows the
// insertion order and, once it has returned everything, returns the
// documents inserted later on the next calls.
type TailCursor struct {
	e      *Engine
	c      *Collection
	filter *query.Filter
	// proj is the find's projection, with showRecordId and returnKey
	// (compileFind), applied with each document's metadata: a
	// collection scan's, its record id when recordIDs asks for it and no
	// index key.
	proj      *query.Projection
	recordIDs bool
	next      uint64 // the next insertion sequence to read
	// at is the insertion sequence of the entry the cursor stands on (the
	// last document returned, or the last entry read when none of a
	// refill's matched): it must still be there when the cursor reads
	// on, as MongoDB's collection scan restores its position exactly.
	// hasAt is false before the cursor read any entry.
	at    uint64
	hasAt bool
	// buf are documents read but not returned yet, with their insertion
	// sequences; a getMore reads them again (Restore).
	buf []tailDoc
	// skip is how many matching documents are still to be skipped, and
	// left how many more may be returned (-1: no limit): as in MongoDB,
	// skip applies to the start and limit to every batch together; a
	// cursor past its limit stays open and returns nothing more.
	skip, left int64
	// ctx is the context of the operation reading the cursor (see
	// FindOptions.Ctx).
	ctx context.Context
}

// Tail opens a tailable cursor on a capped collection, read in insertion
// order. MongoDB refuses tailable cursors on other collections and with a
// $text or $near query; a sort other than {$natural: 1} is refused as the
// find command parses (commands.parseFind), before any collection is read.
func (e *Engine) Tail(db, coll string, o FindOptions) (*TailCursor, error) {
	q, err := compileFind(o, e.cat.get(db, coll))
	if err != nil {
		return nil, err
	}
	// CanonicalQuery::isValid's text rules come first, then a $text or
	// $near refuses the tailable cursor.
	ts, err := checkTextQuery(q, o.Hint)
	if err != nil {
		return nil, err
	}
	if ts != nil {
		return nil, mongoerr.New(mongoerr.BadValue, "text and tailable cursor not allowed in same query")
	}
	if near, _ := q.filter.GeoNear(); near != nil {
		return nil, mongoerr.New(mongoerr.BadValue, "Tailable cursors and geo $near cannot be used together")
	}
	c := e.cat.get(db, coll)
	if c == nil || c.capped == nil {
		return nil, mongoerr.New(mongoerr.BadValue, "error processing query: tailable cursor requested on non capped collection")
	}
	// A tailable query has a queryHash, but no planCacheKey: the plan
	// cache takes none (PlanCache::shouldCacheQuery).
	q.strict = apiStrictIn(o.Ctx)
	if st := opStatsIn(o.Ctx); st.noteQuery(c, q, o.Hint) {
		st.first.cached = false
	}
	left := o.Limit
	if left <= 0 {
		left = -1
	}
	c.scans.add(true)
	return &TailCursor{e: e, c: c, filter: q.filter, proj: q.proj, recordIDs: q.recordIDs, ctx: o.Ctx, skip: o.Skip, left: left}, nil
}

// tailDoc is a document a refill read, and its insertion sequence.
type tailDoc struct {
	doc bson.Raw
	seq uint64
}

// Restore, at a getMore, forgets the documents read ahead of the last one
// returned: they are read again at the latest state, as MongoDB's tailable
// collection scan reads on from its position after a yield, returning
// neither a document deleted since nor an old version of one updated.
func (t *TailCursor) Restore() error {
	if len(t.buf) > 0 {
		t.next, t.buf = t.buf[0].seq, nil
	}
	return nil
}

// tailBatch bounds how many entries one refill reads.
const tailBatch = 256

// Next returns the next matching document in insertion order, or nil when
// the cursor has caught up with the collection.
func (t *TailCursor) Next() (bson.Raw, error) {
	for t.left != 0 {
		for len(t.buf) == 0 {
			more, err := t.refill()
			if err != nil || !more {
				return nil, err
			}
		}
		doc := t.buf[0].doc
		t.at, t.hasAt = t.buf[0].seq, true
		t.buf = t.buf[1:]
		if t.skip > 0 {
			t.skip--
			continue
		}
		if t.left > 0 {
			t.left--
		}
		return doc, nil
	}
	return nil, nil
}

// refill reads the entries after the last one read, through the one
// scan-and-match loop; it reports false when there were none.
func (t *TailCursor) refill() (bool, error) {
	t.c.mu.RLock()
	dropped := t.c.dropped
	t.c.mu.RUnlock()
	if dropped {
		return false, mongoerr.New(mongoerr.QueryPlanKilled, "collection dropped or renamed while a tailable cursor read it: %s.%s", t.c.DB, t.c.Name)
	}
	snap := t.e.kv.NewSnapshot()
	pre := naturalPrefix(t.c.ID)
	it, err := snap.NewIter(naturalKey(t.c.ID, t.next), keyenc.PrefixEnd(pre))
	if err != nil {
		snap.Close()
		return false, err
	}
	if t.hasAt {
		// The entry the cursor stands on must still be there: a capped
		// collection that evicted it (or a delete that removed it) has
		// moved past the cursor, which fails, as in MongoDB, rather than
		// skip what it never returned.
		if _, found, err := snap.Get(naturalKey(t.c.ID, t.at)); err != nil || !found {
			it.Close()
			snap.Close()
			if err == nil {
				err = cappedPositionLost(t.at)
			}
			return false, err
		}
	}
	src := &tailSource{t: t, snap: snap, it: it, pre: pre, ids: t.recordIDs}
	scan := &matchScan{src: src, filter: t.filter, ctx: t.ctx}
	defer scan.close()
	// The documents the refill read count as examined by the operation
	// reading the cursor, as a collection scan's do.
	defer func() {
		if st := opStatsIn(t.ctx); st != nil {
			st.DocsExamined += src.examined
		}
	}()
	for {
		doc, pos, err := scan.next()
		if err != nil {
			return false, err
		}
		if doc == nil {
			if len(t.buf) == 0 && t.next > 0 {
				// nothing matched: the cursor stands on the last
				// entry it examined
				t.at, t.hasAt = t.next-1, true
			}
			return src.read > 0, nil
		}
		if t.proj != nil {
			if doc, err = t.proj.ApplyMeta(doc, pos, src.Meta()); err != nil {
				return false, err
			}
		}
		t.buf = append(t.buf, tailDoc{doc: slices.Clip(doc), seq: src.seq})
	}
}

// tailSource yields the documents of up to tailBatch insertion-order
// entries after the cursor's last one, advancing it past each entry read.
type tailSource struct {
	t    *TailCursor
	snap storage.Snapshot
	it   storage.Iter
	pre  []byte
	read int
	// examined counts the documents read (an entry whose document is
	// gone is none).
	examined int64
	started  bool
	seq      uint64 // the insertion sequence of the entry read last
	docBuf   []byte // see docOf
	// ids asks for the record id (the encoded _id the entry holds) of
	// the document read last, in lastID.
	ids    bool
	lastID []byte
}

// Meta is the metadata of the document Next returned last: its record id
// when asked for; a collection scan's documents have no index key.
func (s *tailSource) Meta() docsrc.Meta {
	if !s.ids || s.lastID == nil {
		return docsrc.Meta{}
	}
	return docsrc.Meta{RecordID: bytes.Clone(s.lastID)}
}

func (s *tailSource) Next() (bson.Raw, error) {
	for {
		if s.started {
			s.it.Next()
		} else {
			s.it.First()
			s.started = true
		}
		if !s.it.Valid() || s.read >= tailBatch {
			return nil, s.it.Error()
		}
		s.read++
		s.seq = binary.BigEndian.Uint64(s.it.Key()[len(s.pre):])
		s.t.next = s.seq + 1
		doc, found, err := getDoc(s.snap, docKeyFromEncodedID(s.t.c.ID, s.it.Value()), &s.docBuf)
		if found {
			s.examined++
			if s.ids {
				s.lastID = append(s.lastID[:0], s.it.Value()...)
			}
		}
		if err != nil || found {
			return doc, err
		}
	}
}

func (s *tailSource) Close() error { return firstErr(s.it.Close(), s.snap.Close()) }

// Wait blocks until a document is inserted into the collection, the
// collection leaves the catalog (dropped, renamed away), timeout
// passes or ctx (the getMore's operation) ends.
func (t *TailCursor) Wait(ctx context.Context, timeout time.Duration) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-t.c.insertedSignal():
	case <-t.c.gone:
	case <-timer.C:
	case <-ctx.Done():
	}
}

// Close releases the cursor.
func (t *TailCursor) Close() error { t.buf = nil; return nil }
