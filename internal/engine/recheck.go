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
// results, which MongoDB serves from its sort's memory too.

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
