package engine

import (
	"bytes"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// A find's cursor reads the snapshot its scan took. MongoDB's plan
// executor gives its snapshot up between getMores instead, and fetches each
// document it reads after one from the latest state: a document deleted
// since is not returned, and one updated since is returned as it is now,
// if it still matches. A cursor here does the same from the first getMore
// after a commit changed its collection (Collection.changed), or from its
// first getMore on a store other frontends write: each document its scan
// yields is read again at the latest state before it is matched. Reads in
// a transaction or at a snapshot read concern keep their snapshot, as in
// MongoDB; so do covered scans, whose documents are index keys, and sorted
// results, which MongoDB serves from its sort's memory too. A source may
// know better (recheckingSource): a $near search returns the documents it
// had read before the getMore as it read them, as MongoDB's near stage
// returns its buffered ones; a $text search drops a document that no
// longer holds the index key it was found by, as MongoDB's fetch of a
// key read before a yield does (WorkingSetCommon::fetch).

// recheckingSource is a source whose documents a resumed cursor rechecks
// its own way: recheckLatest is doc as the cursor returns it (nil: not at
// all), r.latest where the plain recheck applies.
type recheckingSource interface {
	recheckLatest(r *recheck, doc bson.Raw) (bson.Raw, error)
}

// restoredSource is a source told that its cursor resumes after a getMore
// (scanCursor.Restore) when rechecking is on.
type restoredSource interface {
	restored()
}

// recheck reads a scan's documents again at the latest state once on.
type recheck struct {
	e *Engine
	c *Collection
	// since is c.changed read before the scan's snapshot was taken; able
	// reports that the scan may recheck at all.
	since uint64
	able  bool
	on    bool
	buf   []byte
}

// newRecheck is the recheck of a scan of c about to take its snapshot.
func newRecheck(e *Engine, c *Collection, able bool) recheck {
	return recheck{e: e, c: c, since: c.changed.Load(), able: able}
}

// restored turns rechecking on at a getMore if documents of the
// collection may have changed since the snapshot.
func (r *recheck) restored() {
	if r.able && !r.on {
		r.on = r.e.opts.FrontendID != "" || r.c.changed.Load() != r.since
	}
}

// check is doc as a cursor rechecking src returns it: nil if it is not to
// be returned.
func (r *recheck) check(src docSource, doc bson.Raw) (bson.Raw, error) {
	if rs, ok := src.(recheckingSource); ok {
		return rs.recheckLatest(r, doc)
	}
	return r.latest(doc)
}

// latest is doc as the latest state holds it: doc itself if unchanged, a
// copy of the new version if updated, nil if deleted.
func (r *recheck) latest(doc bson.Raw) (bson.Raw, error) {
	key, err := r.c.recordKey(doc)
	if err != nil {
		return nil, err
	}
	now, found, err := getDoc(r.e.kv, key, &r.buf)
	switch {
	case err != nil || !found:
		return nil, err
	case bytes.Equal(now, doc):
		return doc, nil
	}
	return bytes.Clone(now), nil
}
