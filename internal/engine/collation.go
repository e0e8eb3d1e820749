package engine

import (
	"bytes"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/planner"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/update"
)

// collatorBox holds a collection's parsed default collation (nil: simple).
type collatorBox struct{ c *collation.Collator }

// DefaultCollator is the collection's default collation, nil for the
// simple one: the collation of its commands that name none, and of its
// indexes created without one.
func (c *Collection) DefaultCollator() *collation.Collator {
	if b := c.coll.Load(); b != nil {
		return b.c
	}
	coll := c.Options.collator()
	c.coll.Store(&collatorBox{coll})
	return coll
}

// collator is the default collation of options o (nil: simple).
func (o CollectionOptions) collator() *collation.Collator {
	if len(o.Collation) == 0 {
		return nil
	}
	// Stored normalized by create, so it parses.
	coll, _ := collation.Parse(o.Collation)
	return coll
}

// CommandCollator is the collation a command on c follows: the one it
// names (doc; {locale: "simple"} opts out of the default), else c's
// default. An empty document names none, as in MongoDB's commands. A
// missing collection (nil) has the simple default.
func CommandCollator(c *Collection, doc bson.Raw) (*collation.Collator, error) {
	if namesCollation(doc) {
		return collation.Parse(doc)
	}
	if c == nil {
		return nil, nil
	}
	return c.DefaultCollator(), nil
}

// namesCollation reports whether a command's collation document names
// one (it is not absent or empty).
func namesCollation(doc bson.Raw) bool { return len(doc) > 5 }

// resolveIndexCollation settles the collation of a requested index: the
// one it names, normalized, or the collection's default when it names
// none; nil for the simple collation, which listIndexes does not report,
// and for every index of version 1.
func resolveIndexCollation(c *Collection, spec *IndexSpec) error {
	if spec.Version == 1 {
		// A version 1 index has no collation and does not inherit
		// the collection's (MongoDB's validateIndexSpecCollation).
		return nil
	}
	coll, err := CommandCollator(c, spec.Collation)
	if err != nil {
		return err
	}
	spec.Collation = nil
	if coll != nil {
		spec.Collation = coll.Document()
	}
	return nil
}

// sameCollation reports whether an index has the (resolved) collation of
// spec: MongoDB tells indexes with one key pattern apart by collation.
func sameCollation(ix *Index, spec IndexSpec) bool {
	if ix.coll == nil {
		return spec.Collation == nil
	}
	return bytes.Equal(ix.coll.Document(), spec.Collation)
}

// writeFilter compiles the filter of an update, delete or findAndModify on
// db.coll under the command's collation or the collection's default. An
// upsert's filter is parsed without $expr, whose equalities MongoDB cannot
// extract, and CanonicalUpdate words its refusal for the upsert.
func (e *Engine) writeFilter(txn *Txn, db, coll string, filter bson.Raw, wo WriteOptions, upsert bool) (*query.Filter, error) {
	c, err := CommandCollator(e.lookup(txn, db, coll), wo.Collation)
	if err != nil {
		return nil, err
	}
	if !upsert {
		return query.CompileCollated(filter, wo.Let, c)
	}
	f, err := query.CompileAllowed(filter, wo.Let, c, query.AllFeatures&^query.FeatureExpr)
	if mongoerr.Is(err, mongoerr.QueryFeatureNotAllowed) {
		return nil, mongoerr.New(mongoerr.QueryFeatureNotAllowed, "$expr is not allowed in the query predicate for an upsert")
	}
	return f, err
}

// idHackWrite reports whether MongoDB runs a write by filter f on c
// through its IDHACK fast path without canonicalizing the query
// (getExecutorUpdate, getExecutorDelete; ParsedUpdate::parseQuery): f is
// on one simple _id, under c's default collation, with no hint, no fields
// returned and no positional update, and c has an _id index (is not
// clustered). Such a write has no queryHash.
func idHackWrite(c *Collection, f *query.Filter, hint bson.RawValue, fields bson.Raw, positional bool) bool {
	return !positional && len(fields) <= 5 && !hinted(hint) && !c.Clustered() && planner.SimpleIDQuery(f.Doc()) &&
		collation.Equal(f.Collator(), c.DefaultCollator())
}

// positional reports whether upd writes through the positional $.
func positional(upd updater) bool {
	u, ok := upd.(*update.Update)
	return ok && u.Positional()
}

// writeQuery is the query of a write whose filter f writeFilter compiled
// under wo's collation.
func writeQuery(f *query.Filter, wo WriteOptions) compiledFind {
	return compiledFind{filter: f, inheritedCollation: f.Collator() != nil && !namesCollation(wo.Collation)}
}
