package engine

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/storage"
)

// Collection is one collection's catalog entry. Writers hold mu for reading
// while they write its documents; drop and rename hold it exclusively, so a
// collection never changes identity under a write in flight.
type Collection struct {
	DB      string
	Name    string
	ID      uint32
	UUID    [16]byte
	Options CollectionOptions

	mu      sync.RWMutex
	dropped bool // set under mu once the catalog entry is gone
	// pending is set while the collection belongs to the open transaction
	// that created it, before that transaction commits.
	pending atomic.Bool

	// indexes are the secondary indexes, replaced whole (copy on write)
	// under mu held exclusively, so readers load them without locking.
	indexes     atomic.Pointer[[]*Index]
	nextIndexID uint32
	// capped is set for capped collections.
	capped *cappedState
	// metaMu orders the catalog writes that record multikey indexes.
	metaMu sync.Mutex
	// plans is the plan cache (plancache.go).
	plans planCache
	// validation is the document validation collMod may change
	// (docvalidation.go); nil when the collection has none.
	validation atomic.Pointer[validation]
}

// Indexes returns the collection's secondary indexes.
func (c *Collection) Indexes() []*Index {
	if p := c.indexes.Load(); p != nil {
		return *p
	}
	return nil
}

// FindIndex returns the index named name, or nil.
func (c *Collection) FindIndex(name string) *Index {
	for _, ix := range c.Indexes() {
		if ix.Name == name {
			return ix
		}
	}
	return nil
}

// CollectionOptions are the create options Folio stores with a collection,
// those it acts on (capped, size, max) and those it keeps and reports
// without acting on them.
type CollectionOptions struct {
	Capped bool  `bson:"capped,omitempty"`
	Size   int64 `bson:"size,omitempty"`
	Max    int64 `bson:"max,omitempty"`
	// AutoIndexID is nil unless create set autoIndexId.
	AutoIndexID *bool `bson:"autoIndexId,omitempty"`
	Temp        bool  `bson:"temp,omitempty"`
	// StorageEngine and IndexStorageEngine (indexOptionDefaults'
	// storageEngine) are storage engine options, kept as given.
	StorageEngine      bson.Raw `bson:"storageEngine,omitempty"`
	IndexStorageEngine bson.Raw `bson:"indexStorageEngine,omitempty"`
	// Validator, ValidationLevel and ValidationAction are the document
	// validation rules (docvalidation.go), as given; the level and action
	// alone have no effect, as in MongoDB. A collection's current ones are
	// in CurrentOptions, since collMod changes them.
	Validator        bson.Raw `bson:"validator,omitempty"`
	ValidationLevel  string   `bson:"validationLevel,omitempty"`
	ValidationAction string   `bson:"validationAction,omitempty"`
}

// CurrentOptions are c's options with the validation collMod last set.
func (c *Collection) CurrentOptions() CollectionOptions {
	o := c.Options
	if v := c.validation.Load(); v != nil {
		o.Validator, o.ValidationLevel, o.ValidationAction = v.spec, v.level, v.action
	}
	return o
}

// Equal reports whether two option sets are the same.
func (o CollectionOptions) Equal(p CollectionOptions) bool {
	return o.Capped == p.Capped && o.Size == p.Size && o.Max == p.Max &&
		(o.AutoIndexID == nil) == (p.AutoIndexID == nil) && (o.AutoIndexID == nil || *o.AutoIndexID == *p.AutoIndexID) &&
		o.Temp == p.Temp && bytes.Equal(o.StorageEngine, p.StorageEngine) &&
		bytes.Equal(o.IndexStorageEngine, p.IndexStorageEngine) &&
		bytes.Equal(o.Validator, p.Validator) &&
		o.ValidationLevel == p.ValidationLevel && o.ValidationAction == p.ValidationAction
}

// Doc is the options document listCollections reports, in MongoDB's order
// (CollectionOptions::toBSON); numbers are int32 when they fit, as
// MongoDB's appendNumber makes them.
func (o CollectionOptions) Doc() bson.D {
	d := bson.D{}
	if o.Capped {
		d = append(d, bson.E{Key: "capped", Value: true}, bson.E{Key: "size", Value: smallestInt(o.Size)})
		if o.Max != 0 {
			d = append(d, bson.E{Key: "max", Value: smallestInt(o.Max)})
		}
	}
	if o.AutoIndexID != nil {
		d = append(d, bson.E{Key: "autoIndexId", Value: *o.AutoIndexID})
	}
	if o.Temp {
		d = append(d, bson.E{Key: "temp", Value: true})
	}
	if len(o.StorageEngine) > 0 {
		d = append(d, bson.E{Key: "storageEngine", Value: o.StorageEngine})
	}
	if len(o.IndexStorageEngine) > 0 {
		d = append(d, bson.E{Key: "indexOptionDefaults", Value: bson.D{{Key: "storageEngine", Value: o.IndexStorageEngine}}})
	}
	if len(o.Validator) > 0 {
		d = append(d, bson.E{Key: "validator", Value: o.Validator})
	}
	if o.ValidationLevel != "" {
		d = append(d, bson.E{Key: "validationLevel", Value: o.ValidationLevel})
	}
	if o.ValidationAction != "" {
		d = append(d, bson.E{Key: "validationAction", Value: o.ValidationAction})
	}
	return d
}

// smallestInt is n as an int32 when it fits, else as an int64.
func smallestInt(n int64) any {
	if n >= math.MinInt32 && n <= math.MaxInt32 {
		return int32(n)
	}
	return n
}

// catalogEntry is the stored form of a Collection.
type catalogEntry struct {
	ID          int64             `bson:"id"`
	UUID        []byte            `bson:"uuid"`
	Options     CollectionOptions `bson:"options"`
	Indexes     []storedIndex     `bson:"indexes"`
	NextIndexID int64             `bson:"nextIndexID"`
}

// storedIndex is an index in the catalog: its id and its listIndexes spec.
type storedIndex struct {
	ID       int64    `bson:"id"`
	Spec     bson.Raw `bson:"spec"`
	Multikey bool     `bson:"multikey,omitempty"`
}

// catalog is the in-memory image of the stored catalog. mu orders catalog
// changes; the image is updated only after the change has committed.
type catalog struct {
	mu     sync.RWMutex
	colls  map[string]*Collection // by nsKey
	nextID uint32
}

func nsKey(db, coll string) string { return db + "\x00" + coll }

func (c *catalog) load(r storage.Reader) error {
	c.colls = map[string]*Collection{}
	c.nextID = 1
	if v, ok, err := r.Get(keyNextCollID); err != nil {
		return err
	} else if ok {
		c.nextID = binary.BigEndian.Uint32(v)
	}
	lo, hi := catalogSpan()
	it, err := r.NewIter(lo, hi)
	if err != nil {
		return err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		db, name, _ := strings.Cut(string(it.Key()[1:]), "\x00")
		var e catalogEntry
		if err := bson.Unmarshal(it.Value(), &e); err != nil {
			return err
		}
		coll := &Collection{DB: db, Name: name, ID: uint32(e.ID), Options: e.Options, nextIndexID: uint32(e.NextIndexID)}
		copy(coll.UUID[:], e.UUID)
		var ixs []*Index
		for _, si := range e.Indexes {
			ix, err := indexFromSpec(uint32(si.ID), si.Spec)
			if err != nil {
				return err
			}
			ix.multikey.Store(si.Multikey)
			ixs = append(ixs, ix)
		}
		coll.indexes.Store(&ixs)
		if err := coll.initValidation(); err != nil {
			return err
		}
		if coll.Options.Capped {
			if coll.capped, err = loadCapped(r, coll); err != nil {
				return err
			}
		}
		c.colls[nsKey(db, name)] = coll
	}
	return it.Error()
}

func (c *catalog) get(db, name string) *Collection {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.colls[nsKey(db, name)]
}

// Collection returns the named collection, or nil when it does not exist.
// Collections created by open transactions are not in it.
func (e *Engine) Collection(db, name string) *Collection { return e.cat.get(db, name) }

// CollectionIn returns the named collection as txn sees it: one txn
// created, else the catalog's. A nil txn sees the catalog.
func (e *Engine) CollectionIn(txn *Txn, db, name string) *Collection { return e.lookup(txn, db, name) }

func (e *Engine) lookup(txn *Txn, db, name string) *Collection {
	if txn != nil {
		if c := txn.created[nsKey(db, name)]; c != nil {
			return c
		}
	}
	return e.cat.get(db, name)
}

// newCollectionLocked makes the catalog entry of a new collection with a
// fresh id; the caller holds e.cat.mu and stores or discards it.
func (e *Engine) newCollectionLocked(db, name string, opts CollectionOptions) (*Collection, error) {
	if err := ValidateDBName(db); err != nil {
		return nil, err
	}
	if err := ValidateCollName(db, name); err != nil {
		return nil, err
	}
	coll := &Collection{DB: db, Name: name, ID: e.cat.nextID, Options: opts, nextIndexID: 1}
	if err := coll.initValidation(); err != nil {
		return nil, err
	}
	if opts.Capped {
		coll.capped = &cappedState{inserted: make(chan struct{})}
	}
	if _, err := rand.Read(coll.UUID[:]); err != nil {
		return nil, err
	}
	e.cat.nextID++
	return coll, nil
}

// createLocked adds a collection; the caller holds e.cat.mu.
func (e *Engine) createLocked(db, name string, opts CollectionOptions) (*Collection, error) {
	coll, err := e.newCollectionLocked(db, name, opts)
	if err != nil {
		return nil, err
	}
	b := e.kv.NewBatch()
	defer b.Close()
	if err := putCatalogEntry(b, coll); err != nil {
		return nil, err
	}
	if err := b.Set(keyNextCollID, binary.BigEndian.AppendUint32(nil, e.cat.nextID)); err != nil {
		return nil, err
	}
	if err := b.Commit(true); err != nil {
		return nil, err
	}
	e.cat.colls[nsKey(db, name)] = coll
	return coll, nil
}

func putCatalogEntry(b storage.Batch, coll *Collection) error {
	return putCatalogEntryWith(b, coll, coll.Indexes())
}

// putCatalogEntryWith stores coll's entry with the given index list.
func putCatalogEntryWith(b storage.Batch, coll *Collection, ixs []*Index) error {
	entry := catalogEntry{ID: int64(coll.ID), UUID: coll.UUID[:], Options: coll.CurrentOptions(), NextIndexID: int64(coll.nextIndexID)}
	for _, ix := range ixs {
		entry.Indexes = append(entry.Indexes, storedIndex{ID: int64(ix.ID), Spec: ix.Spec, Multikey: ix.Multikey()})
	}
	v, err := bson.Marshal(entry)
	if err != nil {
		return err
	}
	return b.Set(catalogKey(coll.DB, coll.Name), v)
}

// CreateCollection creates a collection explicitly. Creating one that exists
// with the same options succeeds, as in MongoDB 7; other options give
// NamespaceExists.
func (e *Engine) CreateCollection(db, name string, opts CollectionOptions) error {
	e.cat.mu.Lock()
	defer e.cat.mu.Unlock()
	if c := e.cat.colls[nsKey(db, name)]; c != nil {
		if c.CurrentOptions().Equal(opts) {
			return nil
		}
		return mongoerr.New(mongoerr.NamespaceExists, "namespace already exists, but with different options")
	}
	_, err := e.createLocked(db, name, opts)
	return err
}

// writable returns the collection for a write, as txn (when not nil) sees
// it, creating it when it is missing and create is set (inside txn, as
// one of txn's own collections), with its mu read-locked; the caller calls
// the returned release. It returns nil (and a no-op release) when the
// collection does not exist and create is false.
func (e *Engine) writable(txn *Txn, db, name string, create bool) (*Collection, func(), error) {
	for {
		c := e.lookup(txn, db, name)
		if c == nil {
			if !create {
				return nil, func() {}, nil
			}
			var err error
			if txn != nil {
				c, err = txn.create(db, name, CollectionOptions{})
			} else {
				e.cat.mu.Lock()
				c = e.cat.colls[nsKey(db, name)]
				if c == nil {
					c, err = e.createLocked(db, name, CollectionOptions{})
				}
				e.cat.mu.Unlock()
			}
			if err != nil {
				return nil, nil, err
			}
		}
		c.mu.RLock()
		if !c.dropped {
			return c, c.mu.RUnlock, nil
		}
		c.mu.RUnlock()
	}
}

// DropCollection removes a collection and its documents in one batch. It
// reports whether the collection existed.
func (e *Engine) DropCollection(db, name string) (bool, error) {
	e.cat.mu.Lock()
	defer e.cat.mu.Unlock()
	c := e.cat.colls[nsKey(db, name)]
	if c == nil {
		return false, nil
	}
	return true, e.dropLocked(c)
}

func (e *Engine) dropLocked(c *Collection) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := e.kv.NewBatch()
	defer b.Close()
	if err := b.Delete(catalogKey(c.DB, c.Name)); err != nil {
		return err
	}
	if err := deleteCollectionData(b, c.ID); err != nil {
		return err
	}
	if err := b.Commit(true); err != nil {
		return err
	}
	c.dropped = true
	delete(e.cat.colls, nsKey(c.DB, c.Name))
	return nil
}

// DropDatabase drops every collection of db.
func (e *Engine) DropDatabase(db string) error {
	e.cat.mu.Lock()
	defer e.cat.mu.Unlock()
	for _, c := range e.collectionsLocked(db) {
		if err := e.dropLocked(c); err != nil {
			return err
		}
	}
	return nil
}

// RenameCollection moves a collection to a new name, possibly in another
// database. Documents are keyed by collection id, so only the catalog entry
// moves. With dropTarget an existing target is dropped in the same batch.
func (e *Engine) RenameCollection(fromDB, from, toDB, to string, dropTarget bool) error {
	if err := ValidateDBName(toDB); err != nil {
		return err
	}
	if err := ValidateCollName(toDB, to); err != nil {
		return err
	}
	e.cat.mu.Lock()
	defer e.cat.mu.Unlock()
	src := e.cat.colls[nsKey(fromDB, from)]
	if src == nil {
		return mongoerr.New(mongoerr.NamespaceNotFound, "Source collection %s.%s does not exist", fromDB, from)
	}
	if fromDB == toDB && from == to {
		return mongoerr.New(mongoerr.IllegalOperation, "Can't rename a collection to itself")
	}
	target := e.cat.colls[nsKey(toDB, to)]
	if target != nil && !dropTarget {
		return mongoerr.New(mongoerr.NamespaceExists, "target namespace exists")
	}
	src.mu.Lock()
	defer src.mu.Unlock()
	b := e.kv.NewBatch()
	defer b.Close()
	if target != nil {
		target.mu.Lock()
		defer target.mu.Unlock()
		if err := deleteCollectionData(b, target.ID); err != nil {
			return err
		}
	}
	if err := b.Delete(catalogKey(fromDB, from)); err != nil {
		return err
	}
	moved := &Collection{DB: toDB, Name: to, ID: src.ID, UUID: src.UUID, Options: src.Options, nextIndexID: src.nextIndexID}
	moved.indexes.Store(src.indexes.Load())
	moved.validation.Store(src.validation.Load())
	moved.capped = src.capped
	if err := putCatalogEntry(b, moved); err != nil {
		return err
	}
	if err := b.Commit(true); err != nil {
		return err
	}
	if target != nil {
		target.dropped = true
	}
	src.dropped = true
	delete(e.cat.colls, nsKey(fromDB, from))
	e.cat.colls[nsKey(toDB, to)] = moved
	return nil
}

// Collections lists db's collections sorted by name.
func (e *Engine) Collections(db string) []*Collection {
	e.cat.mu.RLock()
	defer e.cat.mu.RUnlock()
	return e.collectionsLocked(db)
}

func (e *Engine) collectionsLocked(db string) []*Collection {
	var out []*Collection
	for _, c := range e.cat.colls {
		if c.DB == db {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b *Collection) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Databases lists the names of databases that hold at least one collection,
// sorted.
func (e *Engine) Databases() []string {
	e.cat.mu.RLock()
	defer e.cat.mu.RUnlock()
	seen := map[string]bool{}
	var out []string
	for _, c := range e.cat.colls {
		if !seen[c.DB] {
			seen[c.DB] = true
			out = append(out, c.DB)
		}
	}
	slices.Sort(out)
	return out
}

// deleteCollectionData deletes every document and index entry of the
// collection with id collID.
func deleteCollectionData(b storage.Batch, collID uint32) error {
	lo, hi := docSpan(collID)
	if err := b.DeleteRange(lo, hi); err != nil {
		return err
	}
	lo, hi = collNaturalSpan(collID)
	if err := b.DeleteRange(lo, hi); err != nil {
		return err
	}
	lo, hi = collIndexSpan(collID)
	return b.DeleteRange(lo, hi)
}
