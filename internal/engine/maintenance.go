package engine

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"hash"

	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/storage"
)

// Sync makes every write committed so far durable (fsync).
func (e *Engine) Sync() error { return e.kv.Sync() }

// SoleWriter reports whether this engine is the only one writing its
// store (no FrontendID: no other frontend shares it).
func (e *Engine) SoleWriter() bool { return e.opts.FrontendID == "" }

// ScanDocuments calls fn with each document of db.coll in _id order (a
// find without filter reads the documents in their key order), the read
// of dbHash and dataSize; doc is valid until fn returns. A missing
// collection has none.
func (e *Engine) ScanDocuments(ctx context.Context, db, coll string, fn func(doc []byte)) error {
	cur, err := e.Find(db, coll, FindOptions{Ctx: ctx})
	if err != nil {
		return err
	}
	defer cur.Close()
	for {
		doc, err := docsrc.Lend(cur)
		if doc == nil || err != nil {
			return err
		}
		fn(doc)
	}
}

// CollectionHash is the MD5 of db.coll's documents, each as stored (its
// BSON), in _id order: dbHash's per-collection hash, the same before and
// after a restart and different after any change.
func (e *Engine) CollectionHash(ctx context.Context, db, coll string) (string, error) {
	var h hash.Hash = md5.New()
	if err := e.ScanDocuments(ctx, db, coll, func(doc []byte) { h.Write(doc) }); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Compact compacts db.coll's documents and index entries in the store and
// reports the disk space they took before and after. A store that cannot
// compact a range fails with NotImplemented.
func (e *Engine) Compact(ctx context.Context, db, coll string) (before, after int64, err error) {
	c := e.cat.get(db, coll)
	if c == nil {
		// compactCollection's checks: the database, then the collection
		if len(e.Collections(db)) == 0 {
			return 0, 0, mongoerr.New(mongoerr.NamespaceNotFound, "database does not exist")
		}
		return 0, 0, mongoerr.New(mongoerr.NamespaceNotFound, "collection does not exist")
	}
	cp, ok := e.kv.(storage.Compacter)
	if !ok {
		return 0, 0, mongoerr.New(mongoerr.NotImplemented, "compact is supported only on Folio's embedded Pebble storage")
	}
	dlo, dhi := docSpan(c.ID)
	ilo, ihi := collIndexSpan(c.ID)
	before = e.diskUsage(dlo, dhi) + e.diskUsage(ilo, ihi)
	for _, span := range [][2][]byte{{dlo, dhi}, {ilo, ihi}} {
		if err := cp.Compact(ctx, span[0], span[1]); err != nil {
			return 0, 0, err
		}
	}
	after = e.diskUsage(dlo, dhi) + e.diskUsage(ilo, ihi)
	return before, after, nil
}
