package engine

import (
	"context"
	"encoding/binary"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/oplog"
	"github.com/folio-db/folio/internal/query"
)

// OplogDB and OplogColl name the oplog as a collection: local.oplog.rs,
// read in insertion (stamp) order, or newest first with $natural: -1.
const (
	OplogDB   = "local"
	OplogColl = "oplog.rs"
)

// OplogCursor is a find on local.oplog.rs, through the one scan-and-match
// loop. A tailable one follows the oplog: once it has returned every entry
// it returns the later ones on later calls.
type OplogCursor struct {
	*matchCursor
	src *oplogSource
}

// FindOplog opens a find on the oplog. A filter on ts with $gt, $gte or
// equality to a timestamp starts the scan there, as MongoDB's oplog scans
// do. The scan is in $natural order, forward unless a $natural sort or
// hint says -1 (mongodump hints {$natural: 1}); other sorts and hints, and
// a sort and hint of opposite directions, are refused (NotImplemented).
func (e *Engine) FindOplog(o FindOptions, tailable bool) (*OplogCursor, error) {
	if e.oplog == nil {
		return nil, mongoerr.New(mongoerr.NotImplemented, "local.oplog.rs is not kept by this server's storage")
	}
	dir := 0 // the hinted direction
	if o.Hint.Type != 0 {
		// The oplog has no index: only a $natural hint names a scan of it.
		if o.Hint.Type == bson.TypeEmbeddedDocument {
			if err := query.CheckNatural(o.Hint.Document(), "hint"); err != nil {
				return nil, err
			}
		}
		h, err := resolveHint(nil, o.Hint, false)
		if dir = h.natural; err != nil || dir == 0 {
			return nil, mongoerr.New(mongoerr.NotImplemented, "a hint on local.oplog.rs other than {$natural: 1} or {$natural: -1} is not supported by Folio: the oplog has no indexes")
		}
	}
	q, err := compileFind(o, nil)
	if err != nil {
		return nil, err
	}
	if q.keyRange() && !tailable {
		// No index to bound (a tailable find scans, min and max aside, as
		// MongoDB's planner does).
		if dir != 0 || q.sort != nil && q.sort.Natural() != 0 {
			return nil, noQuerySolutions()
		}
		return nil, mongoerr.New(mongoerr.MinMaxWithoutHint, "When using min()/max() a hint of which index to use must be provided")
	}
	if q.sort != nil {
		// compileFind checked a $natural sort against the hint
		d := q.sort.Natural()
		if d == 0 {
			return nil, mongoerr.New(mongoerr.NotImplemented, "a sort of local.oplog.rs other than $natural is not supported by Folio")
		}
		dir = d
	}
	reverse := dir == -1
	if tailable && reverse {
		return nil, mongoerr.New(mongoerr.BadValue, "error processing query: cannot use tailable option with a sort other than {$natural: 1}")
	}
	last := e.OplogLast()
	src := &oplogSource{e: e, next: tsLowerBound(o.Filter), reverse: reverse, tail: tailable, to: last, ids: q.recordIDs}
	if reverse {
		src.before = last + 1
	}
	scan := &matchScan{src: src, filter: q.filter, ctx: o.Ctx}
	e.oplog.scans.add(tailable)
	return &OplogCursor{matchCursor: &matchCursor{scan: scan, skip: o.Skip, limit: o.Limit, proj: q.proj}, src: src}, nil
}

// tsLowerBound is the least stamp filter's ts condition admits: its
// top-level ts equality, $gte or $gt on a timestamp, else 0.
func tsLowerBound(filter bson.Raw) uint64 {
	v := filter.Lookup("ts")
	stamp := func(v bson.RawValue) (uint64, bool) {
		t, i, ok := v.TimestampOK()
		return uint64(t)<<32 | uint64(i), ok
	}
	if st, ok := stamp(v); ok {
		return st
	}
	doc, ok := v.DocumentOK()
	if !ok {
		return 0
	}
	var lo uint64
	if st, ok := stamp(doc.Lookup("$gte")); ok {
		lo = max(lo, st)
	}
	if st, ok := stamp(doc.Lookup("$gt")); ok {
		lo = max(lo, st+1)
	}
	return lo
}

// Wait blocks until an entry after the last one read is applied, timeout
// passes or ctx ends (a tailable, awaitData cursor's getMore).
func (c *OplogCursor) Wait(ctx context.Context, timeout time.Duration) {
	c.src.e.WaitOplog(ctx, c.src.next-1, timeout, false)
}

// oplogSource yields oplog entries in pages: forward from next up to to
// (a tailable source moves to on to the latest applied stamp as it
// reads), or backward from before.
type oplogSource struct {
	e       *Engine
	next    uint64
	to      uint64
	before  uint64
	reverse bool
	tail    bool
	page    []bson.Raw
	done    bool
	// ids asks for the entries' record ids (showRecordId, {$meta:
	// "recordId"}): stamps holds the stamps of page's entries, last the
	// stamp of the entry Next returned last.
	ids    bool
	stamps []uint64
	last   uint64
}

// Meta is the metadata of the entry Next returned last: its record id
// when asked for, the 8 big-endian bytes of its stamp, the key it is
// stored under (oplogKey) as a document's record id is its _id's
// (recordid.go). MongoDB's oplog record ids are its entries' ts
// (NumberLong), in the same order.
func (s *oplogSource) Meta() docsrc.Meta {
	if !s.ids || s.last == 0 {
		return docsrc.Meta{}
	}
	return docsrc.Meta{RecordID: binary.BigEndian.AppendUint64(nil, s.last)}
}

func (s *oplogSource) Next() (bson.Raw, error) {
	if len(s.page) == 0 && !s.done {
		if err := s.refill(); err != nil {
			return nil, err
		}
	}
	if len(s.page) == 0 {
		return nil, nil
	}
	doc := s.page[0]
	s.page = s.page[1:]
	if s.ids {
		s.last, s.stamps = s.stamps[0], s.stamps[1:]
	}
	return doc, nil
}

// refill reads the next page.
func (s *oplogSource) refill() error {
	if s.reverse {
		n := 0
		err := s.e.readOplog(0, s.before-1, true, func(stamp uint64, stored oplog.Stored) (bool, error) {
			s.page = append(s.page, slices.Clone(stored.Entry()))
			if s.ids {
				s.stamps = append(s.stamps, stamp)
			}
			s.before = stamp
			n++
			return n < tailBatch, nil
		})
		s.done = n == 0 || s.before == 0
		return err
	}
	if s.tail {
		s.to = s.e.OplogLast()
	}
	n := 0
	err := s.e.ReadOplog(s.next, s.to, func(stamp uint64, stored oplog.Stored) (bool, error) {
		s.page = append(s.page, slices.Clone(stored.Entry()))
		if s.ids {
			s.stamps = append(s.stamps, stamp)
		}
		s.next = stamp + 1
		n++
		return n < tailBatch, nil
	})
	if n == 0 && !s.tail {
		s.done = true
	}
	return err
}

func (s *oplogSource) Close() error { s.page, s.stamps = nil, nil; return nil }

// IsOplog reports whether db.coll is local.oplog.rs on an engine that
// keeps an oplog.
func (e *Engine) IsOplog(db, coll string) bool {
	return db == OplogDB && coll == OplogColl && e.oplog != nil
}
