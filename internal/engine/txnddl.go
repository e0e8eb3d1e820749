package engine

import (
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/oplog"
	"github.com/folio-db/folio/internal/storage"
)

// A transaction owns the collections it creates, explicitly (create), by
// createIndexes or implicitly by a write, and the indexes it builds on
// them, as MongoDB 4.4+ allows: until the commit only the transaction sees
// them; the commit stores their catalog entries in its own batch, and
// fails with WriteConflict when a collection of the same name was created
// meanwhile (or the storage transaction conflicts); an abort leaves nothing
// behind. Other DDL is not allowed in
// a transaction (the commands layer refuses it).

// resolve is the collection a transaction's write to db.name uses, c
// being the one its lookup found, as MongoDB acquires a collection for a
// write in a multi-document transaction (shard_role.cpp): the collection
// the transaction's snapshot holds must still be the catalog's, else the
// write fails with WriteConflict "due to catalog changes" (dropped, or
// dropped and created again, since the snapshot); a collection created
// since the snapshot is not the transaction's to see, so resolve returns
// nil and the write creates the transaction's own, whose commit conflicts
// (stageCreated). Each collection is checked against the snapshot once
// per transaction, which costs its first write to a collection one read.
func (t *Txn) resolve(c *Collection, db, name string) (*Collection, error) {
	if c != nil && (c.pending.Load() || slices.Contains(t.resolved, c)) {
		return c, nil
	}
	v, inSnap, err := t.tx.Get(catalogKey(db, name))
	if err != nil || !inSnap {
		return nil, err
	}
	if id, ok := bson.Raw(v).Lookup("id").Int64OK(); c == nil || !ok || id != int64(c.ID) {
		// The image may be older than the snapshot (another frontend's
		// change not loaded yet, which a transaction does not wait for):
		// then the commit finds the difference (stageCreated).
		snap, err := readVersion(t.tx)
		if err != nil || t.e.cat.version.Load() < snap {
			return c, err
		}
		return nil, catalogChanged(db, name)
	}
	t.resolved = append(t.resolved, c)
	return c, nil
}

// catalogChanged is the WriteConflict of a transaction's write to a
// collection changed since its snapshot (resolve).
func catalogChanged(db, name string) error {
	err := mongoerr.New(mongoerr.WriteConflict, "Unable to write to collection '%s.%s' due to catalog changes; please retry the operation :: Please retry your operation or multi-document transaction.", db, name)
	err.Labels = []string{TransientTransactionError}
	return err
}

// create makes db.name one of the transaction's own collections.
func (t *Txn) create(db, name string, opts CollectionOptions) (*Collection, error) {
	if t.ended {
		return nil, mongoerr.New(mongoerr.NoSuchTransaction, "Transaction has been aborted.")
	}
	c, err := t.e.newCollection(db, name, opts, nil, false)
	if err != nil {
		return nil, err
	}
	c.pending.Store(true)
	if t.created == nil {
		t.created = map[string]*Collection{}
	}
	t.created[nsKey(db, name)] = c
	t.createdOrder = append(t.createdOrder, c)
	if t.e.oplog != nil && c.replicated() {
		o, err := bson.Marshal(createEntry(c))
		if err != nil {
			return nil, err
		}
		t.ops = append(t.ops, oplog.Op{Kind: oplog.Command, NS: db + ".$cmd", UUID: c.UUID[:], O: o})
	}
	return c, nil
}

// CreateCollection creates db.name inside the transaction. A collection
// the transaction sees already fails with NamespaceExists, whatever its
// options (MongoDB 7.0 surfaces the error inside transactions rather than
// accepting an identical create). One created by others after the
// transaction's snapshot is not seen, as in MongoDB: the create succeeds
// and the commit fails with WriteConflict.
func (t *Txn) CreateCollection(db, name string, opts CollectionOptions) error {
	if t.ended {
		return mongoerr.New(mongoerr.NoSuchTransaction, "Transaction has been aborted.")
	}
	exists := t.created[nsKey(db, name)] != nil
	if !exists && t.e.cat.get(db, name) != nil {
		_, inSnap, err := t.tx.Get(catalogKey(db, name))
		if err != nil {
			return err
		}
		exists = inSnap
	}
	if exists {
		return mongoerr.New(mongoerr.NamespaceExists, "Collection already exists. NS: %s.%s", db, name)
	}
	_, err := t.create(db, name, opts)
	return err
}

// CreateIndexes builds indexes inside the transaction, as MongoDB allows
// there: requesting only indexes that exist is a no-op on any collection;
// otherwise the collection must be missing (it is then created) or one the
// transaction created and still empty in its view. The collection is the
// one the transaction's snapshot holds (resolve), as for its writes: one
// created by others since is missing to it, so the indexes go on a
// collection of its own and the commit fails with WriteConflict, whatever
// that collection's indexes (jstests/core/txns/create_indexes_parallel.js).
func (t *Txn) CreateIndexes(db, coll string, specs []IndexSpec) (CreateIndexesResult, error) {
	var res CreateIndexesResult
	if strings.HasPrefix(coll, "system.") {
		return res, mongoerr.New(mongoerr.OperationNotSupportedInTransaction, "Cannot write to system collection %s.%s within a transaction.", db, coll)
	}
	if t.ended {
		return res, mongoerr.New(mongoerr.NoSuchTransaction, "Transaction has been aborted.")
	}
	c := t.created[nsKey(db, coll)]
	own := c != nil
	if c == nil {
		var err error
		if c, err = t.resolve(t.e.cat.get(db, coll), db, coll); err != nil {
			return res, err
		}
	}
	if c == nil {
		var err error
		if c, err = t.create(db, coll, CollectionOptions{}); err != nil {
			return res, err
		}
		own, res.CreatedCollection = true, true
	}
	existing := c.Indexes()
	res.Before = len(existing) + 1
	build, err := planIndexBuild(c, existing, specs)
	if err != nil {
		return res, err
	}
	if len(build) > 0 {
		if !own {
			return res, mongoerr.New(mongoerr.OperationNotSupportedInTransaction, "Cannot create new indexes on existing collection %s.%s in a multi-document transaction.", db, coll)
		}
		empty, err := collectionEmpty(t.tx, c)
		if err != nil {
			return res, err
		}
		if !empty {
			return res, mongoerr.New(mongoerr.OperationNotSupportedInTransaction, "Cannot create new indexes on non-empty collection %s.%s in a multi-document transaction.", db, coll)
		}
		// Only this transaction sees c, one operation at a time, and it
		// holds no document: the indexes need no entries.
		all := append(append([]*Index(nil), existing...), build...)
		c.nextIndexID += uint32(len(build))
		c.indexes.Store(&all)
		// Each index's createIndexes entry joins the transaction's
		// applyOps, as MongoDB's onCreateIndex logs it there (a
		// change stream's createIndexes event).
		if t.e.oplog != nil && c.replicated() {
			for _, ix := range build {
				t.ops = append(t.ops, indexOp(c, "createIndexes", ix.Spec))
			}
		}
	}
	res.After = len(c.Indexes()) + 1
	return res, nil
}

// collectionEmpty reports whether r (a snapshot, a transaction's view)
// holds no document of c.
func collectionEmpty(r storage.Reader, c *Collection) (bool, error) {
	lo, hi := docSpan(c.ID)
	it, err := r.NewIter(lo, hi)
	if err != nil {
		return false, err
	}
	defer it.Close()
	it.First()
	return !it.Valid(), it.Error()
}

// stageCreated adds the catalog entries of the collections the
// transaction created to its storage transaction; the caller holds
// e.cat.mu. It does not bump the catalog version, which would make the
// transaction conflict with every catalog change made while it is open:
// installCreated does after the commit, and catalog changes meanwhile
// check the store for the names they create (checkAbsent). Two creators
// of one name write its entry: the second to commit conflicts.
func (t *Txn) stageCreated(tx storage.Txn) error {
	if len(t.createdOrder) == 0 {
		return nil
	}
	for _, c := range t.createdOrder {
		// Another frontend may have created it: its entry is in the
		// store before this frontend's image shows it.
		if _, ok, err := tx.Get(catalogKey(c.DB, c.Name)); err != nil || ok {
			if err == nil {
				err = writeConflict()
			}
			return err
		}
		if err := putCatalogEntry(tx, c); err != nil {
			return err
		}
	}
	return nil
}

// installCreated adds the committed collections to the catalog image, then
// announces them with a new catalog version (reloading the image, which
// keeps those objects); the caller holds e.cat.mu.
func (t *Txn) installCreated() error {
	if len(t.createdOrder) == 0 {
		return nil
	}
	for _, c := range t.createdOrder {
		t.e.cat.colls[nsKey(c.DB, c.Name)] = c
		t.e.cat.opened[c.DB] = true
		c.pending.Store(false)
	}
	_, err := t.e.catalogChange(func(storage.Txn) error { return nil })
	return err
}
