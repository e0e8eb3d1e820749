package engine

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/collation"
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

	// ns is DB.Name, as the oplog names the collection.
	ns string

	// idUsage counts the operations whose plan read the documents by _id
	// (the _id index's usage).
	idUsage IndexUsage
	// scans counts the queries that read it by a collection scan.
	scans ScanCounts

	mu      sync.RWMutex
	dropped bool // set under mu once the catalog entry is gone
	// gone, made for a capped collection, is closed when dropped is set:
	// the awaitData getMores waiting on its tailable cursors wake and
	// fail at once, as MongoDB's capped insert notifier wakes them.
	gone chan struct{}
	// pending is set while the collection belongs to the open transaction
	// that created it, before that transaction commits.
	pending atomic.Bool

	// indexes are the secondary indexes, replaced whole (copy on write)
	// under mu held exclusively, so readers load them without locking.
	indexes atomic.Pointer[[]*Index]
	// building are the indexes not public yet, or no longer (being built
	// or dropped, index_states.go): writers maintain them as their state
	// says, readers do not see them. Nil when there are none.
	building    atomic.Pointer[[]*Index]
	nextIndexID uint32
	// capped is set for capped collections.
	capped *cappedState
	// metaMu orders the catalog writes that record multikey indexes.
	metaMu sync.Mutex
	// plans is the plan cache (plancache.go).
	plans planCache
	// coll caches the parsed default collation (collation.go).
	coll atomic.Pointer[collatorBox]
	// validation is the document validation collMod may change
	// (docvalidation.go); nil when the collection has none.
	validation atomic.Pointer[validation]
	// preImages is the changeStreamPreAndPostImages option collMod may
	// change: the oplog then keeps the document before each change.
	preImages atomic.Bool
	// mixedSchema is the MixedSchema option collMod may change.
	mixedSchema atomic.Bool
	// ttl is the expireAfterSeconds collMod may change (nil: none).
	ttl atomic.Pointer[int64]
	// timeseries is the timeseries options collMod may change (its
	// granularity and bucketing), nil until changed.
	timeseries atomic.Pointer[bson.Raw]
	// shard, set on a sharded collection, orders its documents by its
	// shard key (shard_layout.go); fixed for the collection's id.
	shard *shardLayout
	// frozen is set, under mu held exclusively, while the collection is
	// being sharded: writers wait until it is not.
	frozen atomic.Bool
	// changed counts the commits that updated or deleted its documents,
	// each counted once it has landed: a scan that reads it before taking
	// its snapshot knows, at a getMore, whether the documents it still
	// reads from that snapshot may have changed since (recheck.go).
	changed atomic.Uint64

	// storedEntry is the stored catalog entry the image last brought the
	// collection to, and loaded the number of the reload that last found
	// it; both belong to reloadLocked, under the catalog's lock. A reload
	// that finds the same entry again leaves the collection as it is.
	storedEntry []byte
	loaded      uint64
}

// newEntry is the entry of collection db.name with storage id id,
// its collection scans counted into e's too.
func (e *Engine) newEntry(db, name string, id uint32) *Collection {
	c := &Collection{DB: db, Name: name, ns: db + "." + name, ID: id}
	c.scans.up = &e.scans
	return c
}

// IDUsage is the usage of the collection's _id index.
func (c *Collection) IDUsage() *IndexUsage {
	if c.shard != nil {
		return c.shard.idIndex.usage
	}
	return &c.idUsage
}

// Indexes returns the collection's secondary indexes.
func (c *Collection) Indexes() []*Index {
	if p := c.indexes.Load(); p != nil {
		return *p
	}
	return nil
}

// Building returns the indexes of c that are not public.
func (c *Collection) Building() []*Index {
	if p := c.building.Load(); p != nil {
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

// HasUniqueKeyIndex reports whether the values of paths identify at most
// one document of c under the collation coll (nil: simple), as $merge's
// on fields must (MongoDB's supportsUniqueKey): some ready index is unique
// (the _id index is), not partial, has only ascending or descending keys
// naming exactly the set of paths, and has the collation coll. A missing
// collection (c nil) has only an _id index, whatever the collation.
func (c *Collection) HasUniqueKeyIndex(paths []string, coll *collation.Collator) bool {
	want := map[string]bool{}
	for _, p := range paths {
		want[p] = true
	}
	if len(want) == 1 && want["_id"] && (c == nil || collation.Equal(c.DefaultCollator(), coll)) {
		return true
	}
	if c == nil {
		return false
	}
	for _, ix := range c.Indexes() {
		if !ix.Unique || ix.partial != nil || !collation.Equal(ix.coll, coll) {
			continue
		}
		keys, _ := ix.keyPattern().Elements()
		exact := len(keys) == len(want)
		for i := 0; exact && i < len(keys); i++ {
			exact = want[keys[i].Key()] && keys[i].Value().IsNumber()
		}
		if exact {
			return true
		}
	}
	return false
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
	// Collation is the default collation (normalized, nil: simple) of
	// the collection's commands and indexes.
	Collation bson.Raw `bson:"collation,omitempty"`
	// ClusteredIndex is create's clusteredIndex, normalized ({v, key:
	// {_id: 1}, name, unique: true}); nil for a collection created
	// without it. Every collection's documents are stored in _id order:
	// the option changes only how the collection describes itself.
	ClusteredIndex bson.Raw `bson:"clusteredIndex,omitempty"`
	// ExpireAfterSeconds, set on a clustered collection, expires the
	// documents whose _id is a date older than it (ExpireTTL).
	ExpireAfterSeconds *int64 `bson:"expireAfterSeconds,omitempty"`
	// Timeseries, set on the collection of a time series collection's
	// buckets (system.buckets.<name>), is its timeseries options as
	// listCollections shows them.
	Timeseries bson.Raw `bson:"timeseries,omitempty"`
	// IDIndexV1 is set for a collection created with idIndex {v: 1} (a dump
	// of an old server restored with its index versions): its _id index
	// is reported as version 1 and, as in MongoDB, takes no _id holding a
	// Decimal128.
	IDIndexV1 bool `bson:"idIndexV1,omitempty"`
	// PreAndPostImages is changeStreamPreAndPostImages.enabled: the oplog
	// keeps the document before each update, replace and delete, for
	// change streams' fullDocumentBeforeChange and post-images.
	PreAndPostImages bool `bson:"changeStreamPreAndPostImages,omitempty"`
	// MixedSchema, on a time series collection's buckets, is collMod's
	// timeseriesBucketsMayHaveMixedSchemaData: its buckets may hold
	// measurements of several schemas, so writes of such buckets are
	// taken and reads do not bound measurement fields by the buckets'
	// control.min and control.max. Kept in the catalog only, as MongoDB
	// keeps it (listCollections does not show it).
	MixedSchema bool `bson:"timeseriesBucketsMayHaveMixedSchemaData,omitempty"`
}

// createEntry is the o of c's create entry, as MongoDB logs it: its
// options, then its _id index unless that is of version 1
// (makeCreateCollCmdObj logs only versions 2 and up).
func createEntry(c *Collection) bson.D {
	o := append(bson.D{{Key: "create", Value: c.Name}}, c.Options.Doc()...)
	if id := c.Options.IDIndex(); id != nil && !c.Options.IDIndexV1 {
		o = append(o, bson.E{Key: "idIndex", Value: id})
	}
	return o
}

// CurrentOptions are c's options with the validation collMod last set.
func (c *Collection) CurrentOptions() CollectionOptions {
	o := c.Options
	if v := c.validation.Load(); v != nil {
		o.Validator, o.ValidationLevel, o.ValidationAction = v.spec, v.level, v.action
	}
	o.PreAndPostImages = c.preImages.Load()
	o.MixedSchema = c.mixedSchema.Load()
	o.ExpireAfterSeconds = c.ttl.Load()
	if ts := c.timeseries.Load(); ts != nil {
		o.Timeseries = *ts
	}
	if c.capped != nil {
		o.Size, o.Max = c.capped.size.Load(), c.capped.max.Load()
	}
	return o
}

// optionsWithUUID is o as MongoDB's CollectionOptions::toBSON shows c's
// options (a NamespaceExists message, a collMod entry's o2): its uuid
// first.
func (c *Collection) optionsWithUUID(o CollectionOptions) bson.D {
	return append(bson.D{{Key: "uuid", Value: bson.Binary{Subtype: bson.TypeBinaryUUID, Data: c.UUID[:]}}}, o.Doc()...)
}

// Clustered reports whether c's documents are a clustered index on _id, as
// MongoDB calls them (CollectionOptions.Clustered). A scan of its _id is
// then a CLUSTERED_IXSCAN.
func (c *Collection) Clustered() bool { return c.Options.Clustered() }

// Clustered reports options of a collection MongoDB clusters by _id: one
// created with clusteredIndex, or a time series collection's buckets,
// which MongoDB clusters itself ({clusteredIndex: true}). Such a
// collection has no _id index: its clustered index holds its documents.
func (o CollectionOptions) Clustered() bool {
	return len(o.ClusteredIndex) > 0 || len(o.Timeseries) > 0
}

// ClusteredName is the name of the clustered index of a clustered
// collection (Clustered): the one create's clusteredIndex gave, by
// default _id_, as for a time series collection's buckets. A hint names
// it by this name, and no other.
func (o CollectionOptions) ClusteredName() string {
	if n, ok := o.ClusteredIndex.Lookup("name").StringValueOK(); ok {
		return n
	}
	return idIndexName
}

// Equal reports whether two option sets are the same.
func (o CollectionOptions) Equal(p CollectionOptions) bool {
	return o.Capped == p.Capped && o.Size == p.Size && o.Max == p.Max &&
		(o.AutoIndexID == nil) == (p.AutoIndexID == nil) && (o.AutoIndexID == nil || *o.AutoIndexID == *p.AutoIndexID) &&
		o.Temp == p.Temp && bytes.Equal(o.StorageEngine, p.StorageEngine) &&
		bytes.Equal(o.IndexStorageEngine, p.IndexStorageEngine) &&
		bytes.Equal(o.Validator, p.Validator) &&
		o.ValidationLevel == p.ValidationLevel && o.ValidationAction == p.ValidationAction &&
		bytes.Equal(o.Collation, p.Collation) && bytes.Equal(o.ClusteredIndex, p.ClusteredIndex) && bytes.Equal(o.Timeseries, p.Timeseries) &&
		o.PreAndPostImages == p.PreAndPostImages && o.IDIndexV1 == p.IDIndexV1 &&
		(o.ExpireAfterSeconds == nil) == (p.ExpireAfterSeconds == nil) && (o.ExpireAfterSeconds == nil || *o.ExpireAfterSeconds == *p.ExpireAfterSeconds)
}

// Doc is the options document listCollections reports, in MongoDB's order
// (CollectionOptions::appendBSON); numbers are int32 when they fit, as
// MongoDB's appendNumber makes them. A time series collection's buckets
// show clusteredIndex: true, the boolean form MongoDB keeps for the
// collections it clusters itself.
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
	if o.PreAndPostImages {
		d = append(d, bson.E{Key: "changeStreamPreAndPostImages", Value: bson.D{{Key: "enabled", Value: true}}})
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
	if len(o.Collation) > 0 {
		d = append(d, bson.E{Key: "collation", Value: o.Collation})
	}
	switch {
	case len(o.ClusteredIndex) > 0:
		d = append(d, bson.E{Key: "clusteredIndex", Value: o.ClusteredIndex})
	case len(o.Timeseries) > 0:
		d = append(d, bson.E{Key: "clusteredIndex", Value: true})
	}
	if o.ExpireAfterSeconds != nil {
		d = append(d, bson.E{Key: "expireAfterSeconds", Value: *o.ExpireAfterSeconds})
	}
	if len(o.Timeseries) > 0 {
		d = append(d, bson.E{Key: "timeseries", Value: o.Timeseries})
	}
	return d
}

// IDIndex is the _id index of a collection with these options as MongoDB
// describes it (listIndexes, create's idIndex): with the default
// collation, which orders _id values; nil for a clustered collection.
func (o CollectionOptions) IDIndex() bson.D {
	if o.Clustered() {
		return nil
	}
	v := int32(2)
	if o.IDIndexV1 {
		v = 1
	}
	d := bson.D{{Key: "v", Value: v}, {Key: "key", Value: bson.D{{Key: "_id", Value: int32(1)}}}, {Key: "name", Value: "_id_"}}
	if len(o.Collation) > 0 {
		d = append(d, bson.E{Key: "collation", Value: o.Collation})
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
	// Shard is a sharded collection's layout (shard_layout.go).
	Shard *storedShard `bson:"shard,omitempty"`
	// Frozen is set while the collection is being sharded: nothing
	// writes it.
	Frozen bool `bson:"frozen,omitempty"`
}

// storedIndex is an index in the catalog: its id and its listIndexes spec.
type storedIndex struct {
	ID       int64    `bson:"id"`
	Spec     bson.Raw `bson:"spec"`
	Multikey bool     `bson:"multikey,omitempty"`
	// State is the index's schema state; public (0) when absent.
	State indexState `bson:"state,omitempty"`
	// Builder is the frontend moving a non-public index through its
	// states (index_states.go).
	Builder string `bson:"builder,omitempty"`
	// Build is the Index's build: set while it is being built.
	Build int64 `bson:"build,omitempty"`
	// BuildUUID is the indexBuildUUID of the two-phase build the index
	// belongs to, from its startIndexBuild until it turns public or is
	// removed: whoever retires it logs that build's abortIndexBuild.
	BuildUUID []byte `bson:"buildUUID,omitempty"`
	// MultikeyPaths are a wildcard index's multikey paths.
	MultikeyPaths []string `bson:"multikeyPaths,omitempty"`
	// LeafCells: every key of the 2dsphere index is a leaf cell (the
	// Index's coarseCells is false). Absent in entries from before it,
	// which therefore count as holding coarser cells.
	LeafCells bool `bson:"leafCells,omitempty"`
	// IDKeyed: the unique index keys its entries with the record id, as
	// it was created non-unique (collMod converted it).
	IDKeyed bool `bson:"idKeyed,omitempty"`
	// ElementKeys: the fields running through one array are keyed by
	// element (index_pairs.go). Absent in entries from before it, whose
	// keys hold every combination (Index.crossKeys).
	ElementKeys bool `bson:"elementKeys,omitempty"`
	// FieldArrays are, by field, the components of its path at which a
	// document held an array (index_arrays.go), once there is one; a
	// multikey entry without them is of an index that does not track
	// them.
	FieldArrays []uint64 `bson:"fieldArrays,omitempty"`
}

// buildUUID is si's BuildUUID as an Index holds it.
func (si *storedIndex) buildUUID() (u [16]byte) {
	copy(u[:], si.BuildUUID)
	return u
}

// stored is the catalog entry of ix, as of its flags now.
func (ix *Index) stored() storedIndex {
	si := storedIndex{ID: int64(ix.ID), Spec: ix.Spec, Multikey: ix.Multikey(), State: ix.state, Builder: ix.builder, Build: int64(ix.build), IDKeyed: ix.Unique && ix.idKeyed, ElementKeys: !ix.crossKeys}
	if ix.buildUUID != ([16]byte{}) {
		si.BuildUUID = ix.buildUUID[:]
	}
	if ix.wild != nil {
		si.MultikeyPaths = ix.wild.multikeyPaths()
	}
	if ix.sphereField() >= 0 {
		si.LeafCells = !ix.coarseCells.Load()
	}
	if arrays := ix.fieldArrays(); slices.ContainsFunc(arrays, func(a uint64) bool { return a != 0 }) {
		si.FieldArrays = arrays
	}
	return si
}

// catalog is the engine's image of the stored catalog (see
// catalog_version.go): mu orders its changes, which are made only by
// reloading it from the store; version is the catalog version it was read
// at.
type catalog struct {
	mu      sync.RWMutex
	colls   map[string]*Collection // by nsKey
	version atomic.Uint64
	// reloads numbers the reloads (see Collection.loaded).
	reloads uint64
	// opened are the databases that held a collection since the engine
	// started or their last dropDatabase: as MongoDB's open Database
	// objects, which outlive their last collection's drop, their
	// dropDatabase is logged even when no collection is left.
	opened map[string]bool
}

func nsKey(db, coll string) string { return db + "\x00" + coll }

func (c *catalog) get(db, name string) *Collection {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.colls[nsKey(db, name)]
}

// Collection returns the named collection, or nil when it does not exist.
// Collections created by open transactions are not in it.
// A name the image lacks makes the engine reload it first when the
// store's catalog is newer: another frontend may have just created it.
func (e *Engine) Collection(db, name string) *Collection { return e.lookup(nil, db, name) }

// CollectionIn returns the named collection as txn sees it: one txn
// created, else the catalog's. A nil txn sees the catalog.
func (e *Engine) CollectionIn(txn *Txn, db, name string) *Collection { return e.lookup(txn, db, name) }

func (e *Engine) lookup(txn *Txn, db, name string) *Collection {
	if txn != nil {
		if c := txn.created[nsKey(db, name)]; c != nil {
			return c
		}
	}
	if c := e.cat.get(db, name); c != nil || txn != nil {
		// A transaction does not reload: a reload may wait for a writer
		// that waits for this transaction. Its commit finds a collection
		// another frontend created meanwhile (stageCreated).
		return c
	}
	if err := e.reloadCatalog(); err != nil {
		e.log.Error("reloading the catalog", "err", err)
	}
	return e.cat.get(db, name)
}

// newCollection makes the catalog entry of a new collection with a fresh
// id, for the caller to store or discard. Its name is one a client may
// create (ValidateNamespace) unless own: the server's own namespace
// (PutOwn), which clients may not create.
func (e *Engine) newCollection(db, name string, opts CollectionOptions, uuid *[16]byte, own bool) (*Collection, error) {
	if !own {
		if err := ValidateNamespace(db, name); err != nil {
			return nil, err
		}
	}
	if e.IsOplog(db, name) {
		// the engine's own, outside the catalog: nothing may shadow it
		return nil, mongoerr.New(mongoerr.NamespaceExists, "Collection already exists. NS: %s.%s", db, name)
	}
	id, err := e.allocCollID()
	if err != nil {
		return nil, err
	}
	coll := e.newEntry(db, name, id)
	coll.Options, coll.nextIndexID, coll.idUsage.Since = opts, 1, time.Now()
	if err := coll.initValidation(); err != nil {
		return nil, err
	}
	if opts.Capped {
		coll.capped, coll.gone = newCappedState(opts), make(chan struct{})
	}
	if uuid != nil {
		coll.UUID = *uuid
	} else if err := newUUID(&coll.UUID); err != nil {
		return nil, err
	}
	// After the namespace's and the validator's own checks, as MongoDB's
	// userCreateNS checks both before CollectionImpl::init checks this.
	if err := CheckValidatorNamespace(db, name, coll.UUID, opts.Validator); err != nil {
		return nil, err
	}
	if err := CheckPreAndPostImagesNamespace(db, opts.PreAndPostImages); err != nil {
		return nil, err
	}
	return coll, nil
}

// newUUID draws a random (version 4) UUID into u, as MongoDB's UUID::gen
// does for collections, index builds and the oplog.
func newUUID(u *[16]byte) error {
	if _, err := rand.Read(u[:]); err != nil {
		return err
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return nil
}

// NewUUIDString is a random (version 4) UUID as MongoDB's UUID::toString
// writes one, for names MongoDB makes of a UUID ($out's temporary
// collection).
func NewUUIDString() (string, error) {
	var u [16]byte
	if err := newUUID(&u); err != nil {
		return "", err
	}
	return uuidString(u), nil
}

// allocCollID takes the next collection id from the stored counter, in a
// storage transaction of its own: ids are unique among the engines over
// one store and never reused, also when the collection is never committed
// (a create that failed, a transaction that aborted).
func (e *Engine) allocCollID() (uint32, error) {
	var id uint32
	err := e.retry(context.Background(), func(tx storage.Txn) error {
		id = 1
		v, ok, err := tx.Get(keyNextCollID)
		if err != nil {
			return err
		}
		if ok {
			id = binary.BigEndian.Uint32(v)
		}
		if err := tx.Set(keyNextCollID, binary.BigEndian.AppendUint32(nil, id+1)); err != nil {
			return err
		}
		return e.commit(tx)
	})
	return id, err
}

// createLocked adds a collection, or returns the one of that name another
// frontend created meanwhile; the caller holds e.cat.mu. own is
// newCollection's.
func (e *Engine) createLocked(db, name string, opts CollectionOptions, uuid *[16]byte, own bool) (*Collection, error) {
	if err := e.checkDBCase(db); err != nil {
		return nil, err
	}
	coll, err := e.newCollection(db, name, opts, uuid, own)
	if err != nil {
		return nil, err
	}
	if _, err := e.catalogChange(func(tx storage.Txn) error {
		if e.cat.colls[nsKey(db, name)] != nil {
			return errNoChange
		}
		if err := e.checkAbsent(tx, db, name); err != nil {
			return err
		}
		if err := e.logCommand(tx, db, coll, createEntry(coll), nil); err != nil {
			return err
		}
		return putCatalogEntry(tx, coll)
	}); err != nil {
		return nil, err
	}
	return e.cat.colls[nsKey(db, name)], nil
}

// checkDBCase refuses to add a collection to db when a database whose name
// differs from db only in case exists (DatabaseDifferCase): MongoDB keeps
// such names apart on case-insensitive file systems. The caller holds
// e.cat.mu.
func (e *Engine) checkDBCase(db string) error {
	for _, c := range e.cat.colls {
		if c.DB == db {
			return nil
		}
	}
	for _, c := range e.cat.colls {
		if strings.EqualFold(c.DB, db) {
			return mongoerr.New(mongoerr.DatabaseDifferCase, "db already exists with different case already have: [%s] trying to create [%s]", c.DB, db)
		}
	}
	return nil
}

// kvWriter is where catalog writes are staged: a storage transaction or
// batch.
type kvWriter interface {
	Set(key, value []byte) error
	Delete(key []byte) error
}

func putCatalogEntry(w kvWriter, coll *Collection) error {
	return putCatalogEntryWith(w, coll, append(slices.Clone(coll.Indexes()), coll.Building()...))
}

// putCatalogEntryWith stores coll's entry with the given index list.
func putCatalogEntryWith(w kvWriter, coll *Collection, ixs []*Index) error {
	return putCatalogEntryOptions(w, coll, coll.CurrentOptions(), ixs)
}

// putCatalogEntryOptions stores coll's entry with the given options and
// index list.
func putCatalogEntryOptions(w kvWriter, coll *Collection, opts CollectionOptions, ixs []*Index) error {
	return putEntry(w, coll.DB, coll.Name, coll.entry(opts, ixs))
}

// entry is coll's catalog entry with the given options and index list.
func (coll *Collection) entry(opts CollectionOptions, ixs []*Index) catalogEntry {
	entry := catalogEntry{ID: int64(coll.ID), UUID: coll.UUID[:], Options: opts, NextIndexID: int64(coll.nextIndexID),
		Shard: coll.shard.stored(), Frozen: coll.frozen.Load()}
	for _, ix := range ixs {
		entry.Indexes = append(entry.Indexes, ix.stored())
	}
	return entry
}

// CreateCollection creates a collection explicitly. Creating one that exists
// with the same options succeeds, as in MongoDB 7; other options give
// NamespaceExists. A name no client may create is refused first, existing
// or not (the server's own local.system.advise), as MongoDB's
// createCollection checks userAllowedCreateNS before anything else.
func (e *Engine) CreateCollection(db, name string, opts CollectionOptions) error {
	if err := ValidateNamespace(db, name); err != nil {
		return err
	}
	e.cat.mu.Lock()
	defer e.cat.mu.Unlock()
	c := e.cat.colls[nsKey(db, name)]
	if c == nil {
		var err error
		if c, err = e.createLocked(db, name, opts, nil, false); err != nil {
			return err
		}
	}
	current := c.CurrentOptions()
	if current.Equal(opts) {
		return nil
	}
	raw, err := bson.Marshal(c.optionsWithUUID(current))
	if err != nil {
		return err
	}
	return mongoerr.New(mongoerr.NamespaceExists, "namespace %s.%s already exists, but with different options: %s", db, name, bson.Raw(raw))
}

// CreateCollectionWithUUID creates db.name with the given UUID, as
// applyOps applies a create entry with a ui (mongorestore --preserveUUID
// and --oplogReplay send them). A collection that has that UUID under
// that name is left as it is, as MongoDB applies the entry again. MongoDB
// moves aside a collection of that name with another UUID, and renames
// one of another name with that UUID; Folio refuses both.
func (e *Engine) CreateCollectionWithUUID(db, name string, opts CollectionOptions, uuid [16]byte) error {
	e.cat.mu.Lock()
	defer e.cat.mu.Unlock()
	if c := e.cat.colls[nsKey(db, name)]; c != nil {
		if c.UUID == uuid {
			return nil
		}
		return mongoerr.New(mongoerr.NotImplemented, "Folio does not move aside %s.%s (UUID %s) to create a collection with UUID %s (applyOps create with ui)", db, name, uuidString(c.UUID), uuidString(uuid))
	}
	if c := e.cat.byUUIDLocked(uuid); c != nil {
		return mongoerr.New(mongoerr.NotImplemented, "Folio does not rename %s.%s, which has UUID %s, to %s.%s (applyOps create with ui)", c.DB, c.Name, uuidString(uuid), db, name)
	}
	_, err := e.createLocked(db, name, opts, &uuid, false)
	return err
}

// CreateCollectionLike creates db.name with the options and indexes of
// db.like, or with none when like does not exist: the collection $out
// writes before it replaces like, so that its documents are validated as
// like's and like keeps its options and indexes.
func (e *Engine) CreateCollectionLike(db, name, like string) error {
	c := e.Collection(db, like)
	if c == nil {
		return e.CreateCollection(db, name, CollectionOptions{})
	}
	if err := e.CreateCollection(db, name, c.CurrentOptions()); err != nil {
		return err
	}
	var specs []IndexSpec
	for _, ix := range c.Indexes() {
		specs = append(specs, storedSpec(ix.Spec))
	}
	if len(specs) == 0 {
		return nil
	}
	_, err := e.CreateIndexes(db, name, specs, nil)
	return err
}

// writable returns the collection for a write, as txn (when not nil) sees
// it, creating it when it is missing and create is set (inside txn, as
// one of txn's own collections), with its mu read-locked for the caller to
// unlock. It returns nil when the collection does not exist and create is
// false. Another frontend creating the collection meanwhile makes this
// creation use theirs. A write outside a transaction waits while the
// collection is being sharded, until ctx (nil: never) ends; one starting
// while this frontend's schema lease has lapsed waits for its renewal
// first (awaitLease). A transaction's write to a capped collection fails
// with refuse's error (cappedInTxn) before any document is looked up; a
// nil refuse leaves the check to the caller (insert, whose refusal is a
// write error).
func (e *Engine) writable(ctx context.Context, txn *Txn, db, name string, create bool, refuse func(*Collection) error) (*Collection, error) {
	if err := e.awaitLease(ctx); err != nil {
		return nil, err
	}
	for {
		c := e.lookup(txn, db, name)
		if txn != nil {
			var err error
			if c, err = txn.resolve(c, db, name); err != nil {
				return nil, err
			}
		}
		if c == nil {
			if !create {
				return nil, nil
			}
			var err error
			if txn != nil {
				c, err = txn.create(db, name, CollectionOptions{})
			} else {
				e.cat.mu.Lock()
				c = e.cat.colls[nsKey(db, name)]
				if c == nil {
					c, err = e.createLocked(db, name, CollectionOptions{}, nil, false)
				}
				e.cat.mu.Unlock()
			}
			if err != nil {
				return nil, err
			}
		}
		c.mu.RLock()
		if c.frozen.Load() {
			c.mu.RUnlock()
			if txn != nil {
				return nil, writeConflict()
			}
			if err := e.awaitThaw(ctx, db, name); err != nil {
				return nil, err
			}
			continue
		}
		if !c.dropped {
			if txn != nil && c.capped != nil && refuse != nil {
				c.mu.RUnlock()
				return nil, refuse(c)
			}
			return c, nil
		}
		c.mu.RUnlock()
	}
}

// DropCollection removes a collection, then its documents (see dropData).
// It reports whether the collection existed.
func (e *Engine) DropCollection(db, name string) (bool, error) {
	if e.IsOplog(db, name) {
		return false, mongoerr.New(mongoerr.IllegalOperation, "can't drop live oplog while replicating")
	}
	e.cat.mu.Lock()
	c := e.cat.colls[nsKey(db, name)]
	if c == nil {
		e.cat.mu.Unlock()
		return false, nil
	}
	v, err := e.dropLocked([]*Collection{c}, "")
	e.cat.mu.Unlock()
	if err != nil {
		return true, err
	}
	return true, e.dropData(v)
}

// dropLocked removes the catalog entries of colls (those still there) in
// one catalog change that also records their data for removal, and returns
// its version; the caller holds e.cat.mu and then calls dropData. Each
// drop is logged, and with dbDropped the database's drop after them.
// First, as MongoDB's drop and dropDatabase abort the index builds under
// way on what they drop, each two-phase build's abortIndexBuild is logged,
// with the reason they give.
func (e *Engine) dropLocked(colls []*Collection, dbDropped string) (uint64, error) {
	return e.catalogChange(func(tx storage.Txn) error {
		var live []*Collection // colls as the catalog holds them now
		for _, c := range colls {
			if cur := e.cat.colls[nsKey(c.DB, c.Name)]; cur != nil && cur.ID == c.ID {
				live = append(live, cur)
			}
		}
		for _, c := range live {
			if len(c.Building()) == 0 {
				continue
			}
			cause := mongoerr.New(mongoerr.IndexBuildAborted, "dropDatabase command")
			if dbDropped == "" {
				cause = mongoerr.New(mongoerr.IndexBuildAborted, "Collection %s.%s(%s) is being dropped", c.DB, c.Name, uuidString(c.UUID))
			}
			if err := e.logBuildAborts(tx, c, c.Building(), cause); err != nil {
				return err
			}
		}
		for _, c := range live {
			if err := tx.Delete(catalogKey(c.DB, c.Name)); err != nil {
				return err
			}
			if err := markGarbage(tx, c.ID, nil); err != nil {
				return err
			}
			if err := e.logCommand(tx, c.DB, c, bson.D{{Key: "drop", Value: c.Name}}, nil); err != nil {
				return err
			}
		}
		if len(live) == 0 && (dbDropped == "" || !e.cat.opened[dbDropped]) {
			return errNoChange
		}
		if dbDropped != "" {
			return e.logCommand(tx, dbDropped, nil, bson.D{{Key: "dropDatabase", Value: int32(1)}}, nil)
		}
		return nil
	})
}

// DropDatabase drops every collection of db.
func (e *Engine) DropDatabase(db string) error {
	e.cat.mu.Lock()
	v, err := e.dropLocked(e.collectionsLocked(db), db)
	if err == nil {
		delete(e.cat.opened, db)
	}
	e.cat.mu.Unlock()
	if err != nil {
		return err
	}
	return e.dropData(v)
}

// ValidateRename checks a rename's names before any collection is looked
// at, as MongoDB 7.0's renameCollection and
// validateNamespacesForRenameCollection do: not a rename to itself, the
// oplog neither renamed nor renamed to, then each name one a client may
// write (userAllowedWriteNS: system.profile and system.views refused
// beside what userAllowedCreateNS refuses), its problem reported as
// IllegalOperation "error with source namespace" or "error with target
// namespace", and the server configuration collection never renamed.
func ValidateRename(fromDB, from, toDB, to string) error {
	oplogName := func(db, coll string) bool { return db == OplogDB && strings.HasPrefix(coll, "oplog.") }
	switch {
	case fromDB == toDB && from == to:
		return mongoerr.New(mongoerr.IllegalOperation, "Can't rename a collection to itself")
	case oplogName(fromDB, from):
		return mongoerr.New(mongoerr.IllegalOperation, "can't rename live oplog while replicating")
	case oplogName(toDB, to):
		return mongoerr.New(mongoerr.IllegalOperation, "can't rename to live oplog while replicating")
	}
	for _, ns := range []struct{ which, db, coll string }{{"source", fromDB, from}, {"target", toDB, to}} {
		if err := validateWritable(ns.db, ns.coll); err != nil {
			return mongoerr.New(mongoerr.IllegalOperation, "error with %s namespace: %s", ns.which, mongoerr.As(err).Msg)
		}
	}
	if fromDB == "admin" && from == "system.version" {
		return mongoerr.New(mongoerr.IllegalOperation, "renaming the server configuration collection (admin.system.version) is not allowed")
	}
	return nil
}

// validateWritable is MongoDB's userAllowedWriteNS: a collection a client
// may write, which system.profile and system.views are not (their
// writers are the profiler and the view commands).
func validateWritable(db, coll string) error {
	if coll == ProfileCollection || coll == ViewsCollection {
		return mongoerr.New(mongoerr.InvalidNamespace, "cannot write to %s.%s", printable(db), printable(coll))
	}
	return ValidateNamespace(db, coll)
}

// RenameCollection moves a collection to a new name, possibly in another
// database. Documents are keyed by collection id, so only the catalog entry
// moves. With dropTarget an existing target is dropped in the same catalog
// change, its data removed after it (dropData).
func (e *Engine) RenameCollection(fromDB, from, toDB, to string, dropTarget bool) error {
	if err := ValidateRename(fromDB, from, toDB, to); err != nil {
		return err
	}
	e.cat.mu.Lock()
	v, err := e.catalogChange(func(tx storage.Txn) error {
		src := e.cat.colls[nsKey(fromDB, from)]
		if src == nil {
			return mongoerr.New(mongoerr.NamespaceNotFound, "Source collection %s.%s does not exist", fromDB, from)
		}
		// MongoDB's isReplicatedChanged (renameBetweenDBs, once the
		// source is found): a collection moves neither into nor out of
		// the local database, whose changes the oplog does not log.
		if IsReplicated(fromDB, from) != IsReplicated(toDB, to) {
			return mongoerr.New(mongoerr.IllegalOperation, "Cannot rename collections between a replicated and an unreplicated database")
		}
		target := e.cat.colls[nsKey(toDB, to)]
		if target != nil && !dropTarget {
			return mongoerr.New(mongoerr.NamespaceExists, "target namespace exists")
		}
		if target == nil {
			if err := e.checkDBCase(toDB); err != nil {
				return err
			}
			if err := e.checkAbsent(tx, toDB, to); err != nil {
				return err
			}
		}
		if target != nil {
			if err := markGarbage(tx, target.ID, nil); err != nil {
				return err
			}
		}
		rename := bson.D{{Key: "renameCollection", Value: fromDB + "." + from}, {Key: "to", Value: toDB + "." + to}, {Key: "stayTemp", Value: false}}
		if target != nil {
			rename = append(rename, bson.E{Key: "dropTarget", Value: bson.Binary{Subtype: bson.TypeBinaryUUID, Data: target.UUID[:]}})
		}
		if err := e.logCommand(tx, fromDB, src, rename, nil); err != nil {
			return err
		}
		if err := tx.Delete(catalogKey(fromDB, from)); err != nil {
			return err
		}
		if src.frozen.Load() {
			return mongoerr.New(mongoerr.ConflictingOperationInProgress, "%s.%s is being sharded", fromDB, from)
		}
		moved := e.newEntry(toDB, to, src.ID)
		moved.UUID, moved.Options, moved.nextIndexID, moved.shard = src.UUID, src.Options, src.nextIndexID, src.shard
		moved.indexes.Store(src.indexes.Load())
		moved.building.Store(src.building.Load())
		moved.validation.Store(src.validation.Load())
		moved.preImages.Store(src.preImages.Load())
		moved.mixedSchema.Store(src.mixedSchema.Load())
		moved.ttl.Store(src.ttl.Load())
		moved.timeseries.Store(src.timeseries.Load())
		return putCatalogEntry(tx, moved)
	})
	e.cat.mu.Unlock()
	if err != nil {
		return err
	}
	return e.dropData(v)
}

// Collections lists db's collections sorted by name.
func (e *Engine) Collections(db string) []*Collection {
	if err := e.reloadCatalog(); err != nil {
		e.log.Error("reloading the catalog", "err", err)
	}
	e.cat.mu.RLock()
	defer e.cat.mu.RUnlock()
	return e.collectionsLocked(db)
}

// CollectionsNamed is Collections(db) narrowed to the collection named
// name: it or nothing, found without listing the others.
func (e *Engine) CollectionsNamed(db, name string) []*Collection {
	if err := e.reloadCatalog(); err != nil {
		e.log.Error("reloading the catalog", "err", err)
	}
	if c := e.cat.get(db, name); c != nil {
		return []*Collection{c}
	}
	return nil
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
	if err := e.reloadCatalog(); err != nil {
		e.log.Error("reloading the catalog", "err", err)
	}
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
