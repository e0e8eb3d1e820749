package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/keyenc"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/storage"
)

// A sharded collection stores its documents ordered by its shard key:
// a document's key is d <collID> <keyenc([shard key values..., _id])>
// (a hashed field contributes its hash; one encoded array, so that the
// record id is one key field as an _id is, ordered field by field), so a range of the key lives in a
// few of the store's regions (a write that changes a document's shard key
// value moves it: deletes it at its key and stores it at the new one, with
// its index entries, in one transaction). Its record id, the part after the
// collection id, is what its index entries point to; _id alone no longer
// finds a document, so such a collection has a real unique _id index (in
// the index space, like any index) that keeps _id unique and serves reads
// by _id, and the document store is only ever scanned whole. A
// collection's layout is fixed for its collection id: sharding a
// collection copies it under a new id (ShardCollection).

// shardLayout is a sharded collection's document order.
type shardLayout struct {
	// key is the shard key pattern.
	key bson.Raw
	// values derives a document's shard key values, as an index on the
	// pattern would (never stored as one).
	values *Index
	// idIndex is the collection's unique _id index.
	idIndex *Index
}

// storedShard is a sharded collection's layout in its catalog entry.
type storedShard struct {
	Key     bson.Raw `bson:"key"`
	IDIndex int64    `bson:"idIndex"`
}

func (l *shardLayout) stored() *storedShard {
	if l == nil {
		return nil
	}
	return &storedShard{Key: l.key, IDIndex: int64(l.idIndex.ID)}
}

// newShardLayout builds the layout of key, whose _id index (with id
// idIndexID) follows the collection's default collation (given as its
// normalized document, nil for simple), as the _id order does.
func newShardLayout(key bson.Raw, idIndexID uint32, collation bson.Raw) (*shardLayout, error) {
	values, err := newIndex(0, IndexSpec{Key: key, Name: "shard key", ExpireAfter: -1})
	if err != nil {
		return nil, err
	}
	idIndex, err := newIndex(idIndexID, IndexSpec{Key: idKeyPattern, Name: idIndexName, Unique: true, ExpireAfter: -1, Collation: collation})
	if err != nil {
		return nil, err
	}
	return &shardLayout{key: key, values: values, idIndex: idIndex}, nil
}

// Sharded reports whether c's documents are ordered by a shard key, and
// which.
func (c *Collection) Sharded() (key bson.Raw, ok bool) {
	if c.shard == nil {
		return nil, false
	}
	return c.shard.key, true
}

// recordKey is the storage key of doc: by _id, following the collection's
// default collation (values equal under it collide, as in MongoDB's _id
// index), after the shard key values on a sharded collection. A shard key
// value that is an array fails with ShardKeyNotFound, as MongoDB's.
func (c *Collection) recordKey(doc bson.Raw) ([]byte, error) {
	id := c.DefaultCollator().Transform(documentID(doc))
	if c.shard == nil {
		return docKey(c.ID, id), nil
	}
	keys, multikey, err := c.shard.values.keys(doc)
	if err != nil {
		return nil, err
	}
	if multikey || len(keys) != 1 {
		return nil, mongoerr.New(mongoerr.ShardKeyNotFound, "Shard key cannot contain array values or array descendants.")
	}
	start, arr := bsoncore.AppendArrayStart(nil)
	for i, v := range append(keys[0].vals, id) {
		arr = rawdoc.AppendElement(arr, strconv.Itoa(i), v)
	}
	arr, _ = bsoncore.AppendArrayEnd(arr, start)
	return keyenc.AppendValue(docPrefix(c.ID), bson.RawValue{Type: bson.TypeArray, Value: arr}), nil
}

// movedKey is the key of the document at key once it is next (nil: a
// delete): key itself, unless next has other shard key values.
func (c *Collection) movedKey(key []byte, next bson.Raw) ([]byte, error) {
	if c.shard == nil || next == nil {
		return key, nil
	}
	return c.recordKey(next)
}

// checkShardKeyUpdate applies MongoDB 7.0's rules to an update from old to
// next that changes a sharded document's shard key value: its filter pins
// the whole shard key by equality (31025), it updates one document
// (InvalidOptions) and it is a retryable write or in a transaction
// (IllegalOperation). An update that keeps the value passes.
func (c *Collection) checkShardKeyUpdate(old, next bson.Raw, f *query.Filter, multi, retryable bool) error {
	if c.shard == nil || old == nil || next == nil {
		return nil
	}
	was, _, err := c.shard.values.keys(old)
	if err != nil {
		return err
	}
	now, _, err := c.shard.values.keys(next)
	if err != nil {
		return err
	}
	if len(was) == 1 && len(now) == 1 && bytes.Equal(was[0].enc, now[0].enc) {
		return nil
	}
	paths := make([]string, len(c.shard.values.Fields))
	for i, f := range c.shard.values.Fields {
		paths[i] = f.Path
	}
	if _, _, pinned := equalityPrefix(f, paths, false); !pinned {
		return mongoerr.New(mongoerr.ShardKeyUpdateWithoutFullKey, "Shard key update is not allowed without specifying the full shard key in the query")
	}
	if multi {
		return mongoerr.New(mongoerr.InvalidOptions, "Multi-update operations are not allowed when updating the shard key field.")
	}
	if !retryable {
		return mongoerr.New(mongoerr.IllegalOperation, "Must run update to shard key field in a multi-statement transaction or with retryWrites: true.")
	}
	return nil
}

// indexesWritten are the indexes a write of c maintains: the public ones,
// those being built, and a sharded collection's _id index.
func (c *Collection) indexesWritten() []*Index {
	all := c.Indexes()
	if b := c.Building(); len(b) > 0 {
		all = append(slices.Clip(all), b...)
	}
	if c.shard != nil {
		all = append(slices.Clip(all), c.shard.idIndex)
	}
	return all
}

// thawWait bounds how long a write waits for a collection being sharded.
const thawWait = time.Minute

// awaitThaw waits until db.name is no longer frozen for its sharding
// (or is gone), reloading the catalog as other frontends change it, or
// until ctx (nil: never) ends.
func (e *Engine) awaitThaw(ctx context.Context, db, name string) error {
	deadline := time.Now().Add(thawWait)
	for {
		if err := mongoerr.Interruption(ctx); err != nil {
			return err
		}
		if err := e.reloadCatalog(); err != nil {
			return err
		}
		if c := e.lookup(nil, db, name); c == nil || !c.frozen.Load() {
			return nil
		}
		if time.Now().After(deadline) {
			return mongoerr.New(mongoerr.ExceededTimeLimit, "timed out waiting for the sharding of %s.%s to finish", db, name)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// copyBatch is how many documents one transaction of a relayout copies.
const copyBatch = 256

// errShardingAborted ends a sharding whose collection was dropped,
// renamed or had its indexes changed while it was copied.
var errShardingAborted = errors.New("engine: sharding aborted")

// ShardCollection orders db.name's documents by the shard key pattern key
// (see shardLayout); a collection already sharded is left as it is. It
// runs as three steps, each safe beside the one before it under the schema
// lease (schema_lease.go):
//
//  1. a catalog change freezes the collection: writers wait (a transaction
//     fails with WriteConflict) until its sharding ends; once every live
//     frontend has loaded it, nothing writes the collection;
//  2. the documents and every index's entries are copied, in batches,
//     under a new collection id with the new layout, which only this
//     copy knows;
//  3. a catalog change points the collection (same name, same UUID) at
//     the new id, unfrozen, and records the old id's data as garbage.
//
// A drop, rename or index change that overtakes the copy aborts it, and
// so does the end of ctx (nil: never), between batches.
func (e *Engine) ShardCollection(ctx context.Context, db, name string, key bson.Raw) error {
	e.cat.mu.Lock()
	c := e.cat.colls[nsKey(db, name)]
	switch {
	case c == nil:
		e.cat.mu.Unlock()
		return mongoerr.New(mongoerr.NamespaceNotFound, "Collection %s.%s does not exist", db, name)
	case c.shard != nil:
		e.cat.mu.Unlock()
		return nil
	case c.Options.Capped:
		e.cat.mu.Unlock()
		return mongoerr.New(mongoerr.InvalidOptions, "can't shard a capped collection")
	case c.Options.Timeseries != nil:
		e.cat.mu.Unlock()
		return mongoerr.New(mongoerr.NotImplemented, "Folio does not support sharding a time series collection (%s.%s)", db, name)
	case len(c.Building()) > 0:
		e.cat.mu.Unlock()
		return mongoerr.New(mongoerr.ConflictingOperationInProgress, "an index build on %s.%s is in progress", db, name)
	}
	oldID := c.ID
	v, err := e.catalogChange(func(tx storage.Txn) error {
		cur := e.cat.colls[nsKey(db, name)]
		if cur == nil || cur.ID != oldID || len(cur.Building()) > 0 {
			return errShardingAborted
		}
		ent := cur.entry(cur.CurrentOptions(), cur.Indexes())
		ent.Frozen = true
		return putEntry(tx, db, name, ent)
	})
	e.cat.mu.Unlock()
	if err == nil {
		err = e.awaitVersion(v)
	}
	if err != nil {
		return e.abortSharding(db, name, oldID, 0, err)
	}
	// Frozen everywhere: the image's collection is the one to copy.
	c = e.lookup(nil, db, name)
	if c == nil || c.ID != oldID {
		return e.abortSharding(db, name, oldID, 0, errShardingAborted)
	}
	newID, err := e.allocCollID()
	if err != nil {
		return e.abortSharding(db, name, oldID, 0, err)
	}
	layout, err := newShardLayout(key, c.nextIndexID, c.Options.Collation)
	if err != nil {
		return e.abortSharding(db, name, oldID, newID, err)
	}
	next := e.newEntry(db, name, newID)
	next.UUID, next.Options, next.shard = c.UUID, c.Options, layout
	copied := slices.Clone(c.Indexes())
	next.indexes.Store(&copied)
	if err := e.copyDocuments(ctx, c, next); err != nil {
		return e.abortSharding(db, name, oldID, newID, err)
	}
	e.cat.mu.Lock()
	v, err = e.catalogChange(func(tx storage.Txn) error {
		cur := e.cat.colls[nsKey(db, name)]
		if cur == nil || cur.ID != oldID || !slices.Equal(cur.Indexes(), copied) || len(cur.Building()) > 0 {
			return errShardingAborted
		}
		ent := cur.entry(cur.CurrentOptions(), copied)
		ent.ID, ent.NextIndexID, ent.Frozen = int64(newID), int64(cur.nextIndexID)+1, false
		ent.Shard = layout.stored()
		if err := putEntry(tx, db, name, ent); err != nil {
			return err
		}
		return markGarbage(tx, oldID, nil)
	})
	e.cat.mu.Unlock()
	if err != nil {
		return e.abortSharding(db, name, oldID, newID, err)
	}
	return e.dropData(v)
}

// copyDocuments writes every document of from, with every index entry,
// under to's id and layout, copyBatch documents per transaction, stopping
// between batches once ctx ends; nothing writes from meanwhile (it is
// frozen) and nothing else knows to's id.
func (e *Engine) copyDocuments(ctx context.Context, from, to *Collection) error {
	snap := e.kv.NewSnapshot()
	defer snap.Close()
	lo, hi := docSpan(from.ID)
	it, err := snap.NewIter(lo, hi)
	if err != nil {
		return err
	}
	defer it.Close()
	var buf []byte
	for it.First(); it.Valid(); {
		if err := mongoerr.Interruption(ctx); err != nil {
			return err
		}
		tx, err := e.kv.Begin()
		if err != nil {
			return err
		}
		for n := 0; n < copyBatch && it.Valid() && err == nil; n++ {
			var doc bson.Raw
			var k []byte
			var ch indexChanges
			if doc, err = docOf(it.Value(), &buf); err == nil {
				k, err = to.recordKey(doc)
			}
			if err == nil {
				ch, err = to.indexChanges(idFromDocKey(k), nil, doc)
			}
			if err == nil {
				// as stored, but unmarked: the insert entries refer to
				// the documents under from's id (see oplog.NewRef)
				v := it.Value()
				if doc, _, marked := insertMark(v); marked {
					v = doc
				}
				err = tx.Set(k, bytes.Clone(v))
			}
			if err == nil {
				err = ch.stage(tx)
			}
			it.Next()
		}
		if err == nil {
			err = it.Error()
		}
		if err == nil {
			err = tx.Commit()
		}
		tx.Rollback()
		if err != nil {
			return err
		}
	}
	return it.Error()
}

// abortSharding undoes a sharding that failed with cause: it unfreezes
// the collection (when it is still the one frozen) and removes the copy
// under newID (0: none made), then returns cause (explained when the
// collection changed under the copy).
func (e *Engine) abortSharding(db, name string, oldID, newID uint32, cause error) error {
	e.cat.mu.Lock()
	_, err := e.catalogChange(func(tx storage.Txn) error {
		cur := e.cat.colls[nsKey(db, name)]
		if cur == nil || cur.ID != oldID || !cur.frozen.Load() {
			return errNoChange
		}
		ent := cur.entry(cur.CurrentOptions(), append(slices.Clone(cur.Indexes()), cur.Building()...))
		ent.Frozen = false
		return putEntry(tx, db, name, ent)
	})
	e.cat.mu.Unlock()
	if newID != 0 && err == nil {
		for _, span := range collSpans(newID) {
			if err = e.kv.DeleteRange(span[0], span[1]); err != nil {
				break
			}
		}
	}
	if errors.Is(cause, errShardingAborted) {
		cause = mongoerr.New(mongoerr.ConflictingOperationInProgress, "%s.%s was dropped, renamed or had its indexes changed while it was being sharded", db, name)
	}
	if err != nil {
		return fmt.Errorf("%w (undoing it failed: %v)", cause, err)
	}
	return cause
}

// ShardChunks are the points where a sharded collection's chunks meet:
// its documents are cut where the store's ranges (TiKV's regions) begin,
// each point being the shard key of the first document at or after a
// range's start, as a {field: value} document; they increase strictly.
// A store of one range, or a collection in one, has none. It stops, with
// ctx's interruption, when ctx ends (it seeks once per range).
func (e *Engine) ShardChunks(ctx context.Context, c *Collection) ([]bson.D, error) {
	if c.shard == nil {
		return nil, nil
	}
	lo, hi := docSpan(c.ID)
	starts, err := storage.SplitKeys(e.kv, lo, hi)
	if err != nil || len(starts) == 0 {
		return nil, err
	}
	snap := e.kv.NewSnapshot()
	defer snap.Close()
	it, err := snap.NewIter(lo, hi)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var buf []byte
	// shardKey is the shard key of the document at it.
	shardKey := func() (indexKey, error) {
		doc, err := docOf(it.Value(), &buf)
		if err != nil {
			return indexKey{}, err
		}
		keys, _, err := c.shard.values.keys(doc)
		if err == nil && len(keys) != 1 {
			err = fmt.Errorf("engine: the document at %x has %d shard keys", it.Key(), len(keys))
		}
		if err != nil {
			return indexKey{}, err
		}
		return keys[0], nil
	}
	var out []bson.D
	var last []byte // a range starting at the first document cuts nothing off
	if it.First() {
		k, err := shardKey()
		if err != nil {
			return nil, err
		}
		last = k.enc
	}
	for _, start := range starts {
		if err := mongoerr.Interruption(ctx); err != nil {
			return nil, err
		}
		if !it.SeekGE(start) {
			break
		}
		k, err := shardKey()
		if err != nil {
			return nil, err
		}
		if bytes.Equal(k.enc, last) {
			continue // the range starts among documents of one shard key
		}
		last = k.enc
		point := make(bson.D, len(k.vals))
		for i, f := range c.shard.values.Fields {
			point[i] = bson.E{Key: f.Path, Value: bson.RawValue{Type: k.vals[i].Type, Value: bytes.Clone(k.vals[i].Value)}}
		}
		out = append(out, point)
	}
	return out, it.Error()
}
