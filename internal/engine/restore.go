package engine

import (
	"encoding/binary"
	"encoding/hex"
	"slices"

	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/mongoerr"
)

// scanCursor is a find's cursor that remembers what its plan reads, so that
// a getMore can tell (Restore) that the collection was dropped, renamed or
// sharded (its documents moved), or the index the plan scans dropped,
// since the find. The cursor's
// snapshot would still read them, but MongoDB kills such a query when it
// resumes, with QueryPlanKilled (175), and so does Folio.
type scanCursor struct {
	Cursor
	e *Engine
	c *Collection
	// ixs are the indexes the plan scans (none: the document store).
	ixs []*Index
	// scan is the scan a streaming cursor reads on (nil for sorted
	// results), which rechecks its documents once restored (recheck.go).
	scan *matchScan
}

// Meta is the metadata (text score) of the document read last.
func (s *scanCursor) Meta() docsrc.Meta { return docsrc.MetaOf(s.Cursor) }

// Restore checks the collection by name first: another collection under
// that name means the one read was dropped; none means it was dropped, or
// renamed if its UUID lives on under another name.
func (s *scanCursor) Restore() error {
	if s.c.pending.Load() {
		// Only its transaction sees the collection, and nothing drops
		// or renames it; the cursor dies when the transaction ends.
		return nil
	}
	now := s.e.cat.get(s.c.DB, s.c.Name)
	if now == nil {
		if to := s.e.cat.byUUID(s.c.UUID); to != nil {
			return mongoerr.New(mongoerr.QueryPlanKilled, "collection renamed from '%s.%s' to '%s.%s'. UUID %s",
				s.c.DB, s.c.Name, to.DB, to.Name, uuidString(s.c.UUID))
		}
	}
	if now == nil || now.UUID != s.c.UUID {
		return mongoerr.New(mongoerr.QueryPlanKilled, "collection dropped. UUID %s", uuidString(s.c.UUID))
	}
	if now.ID != s.c.ID {
		// Sharding copied the documents under a new id and removes
		// the ones the cursor reads.
		return mongoerr.New(mongoerr.QueryPlanKilled, "collection %s.%s was sharded: its documents moved to shard key order", now.DB, now.Name)
	}
	for _, used := range s.ixs {
		if !slices.ContainsFunc(now.indexesWritten(), func(ix *Index) bool { return ix.ID == used.ID && ix.state == statePublic }) {
			return mongoerr.New(mongoerr.QueryPlanKilled, "query plan killed :: index '%s' dropped", used.Name)
		}
	}
	if s.scan != nil {
		if err := s.cappedPosition(); err != nil {
			return err
		}
		s.scan.recheck.restored()
		if rs, ok := s.scan.src.(restoredSource); ok && s.scan.recheck.on {
			rs.restored()
		}
	}
	return nil
}

// cappedPosition fails, as MongoDB's collection scan does when it
// restores, a scan of a capped collection in insertion order whose last
// returned document is gone since (evicted or deleted): it would skip
// what it never saw. A scan that keeps its snapshot (in a transaction, at
// a snapshot read concern: no recheck) still holds its position.
func (s *scanCursor) cappedPosition() error {
	ps, ok := s.scan.src.(*planSource)
	if !ok || s.c.capped == nil || !s.scan.recheck.able || ps.lastNatural == nil {
		return nil
	}
	_, found, err := s.e.kv.Get(ps.lastNatural)
	if err != nil || found {
		return err
	}
	return cappedPositionLost(binary.BigEndian.Uint64(ps.lastNatural[len(ps.lastNatural)-8:]))
}

// cappedPositionLost is MongoDB's error for a scan of a capped collection
// whose position, the record seq, was deleted. It names the record id
// MongoDB gives that record: a capped collection's records are numbered
// in insertion order from 1, the natural order's seq from 0.
func cappedPositionLost(seq uint64) error {
	return mongoerr.New(mongoerr.CappedPositionLost, "CollectionScan died due to position in capped collection being deleted. Last seen record id: RecordId(%d)", seq+1)
}

// Park gives up the scan's storage iterators while the cursor waits for a
// getMore (planSource.park); its next read opens them again. A cursor of
// sorted results holds none: its sort read the scan to its end.
func (s *scanCursor) Park() bool {
	if s.scan == nil {
		return false
	}
	p, ok := s.scan.src.(parker)
	return ok && p.park()
}

// parker is a scan that can give up its iterators between reads; park
// reports whether it closed one.
type parker interface{ park() bool }

// byUUID returns the collection with uuid, or nil.
func (c *catalog) byUUID(uuid [16]byte) *Collection {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.byUUIDLocked(uuid)
}

// byUUIDLocked is byUUID for a caller that holds c.mu.
func (c *catalog) byUUIDLocked(uuid [16]byte) *Collection {
	for _, coll := range c.colls {
		if coll.UUID == uuid {
			return coll
		}
	}
	return nil
}

// uuidString shows a UUID as MongoDB's messages do.
func uuidString(u [16]byte) string {
	h := hex.EncodeToString(u[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
