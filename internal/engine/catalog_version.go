package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/storage"
)

// The catalog in the store is the truth; each engine (a frontend: several
// may share one store) holds an image of it, tagged with the catalog
// version it was read at. Every catalog change is one storage transaction
// that also increments the version key, so changes made by different
// frontends conflict (first committer wins) and apply in one order, and an
// engine that sees a version above its own reloads. An engine changes its
// image only by reloading it from the store (reloadLocked), after its own
// changes as after others'.

// keyCatalogVersion holds the catalog version (uint64, big-endian).
var keyCatalogVersion = []byte{spaceMeta, 'c', 'a', 't', 'v', 'e', 'r'}

// readVersion reads the catalog version (0 before the first change).
func readVersion(r storage.Reader) (uint64, error) {
	v, ok, err := r.Get(keyCatalogVersion)
	if err != nil || !ok {
		return 0, err
	}
	if len(v) != 8 {
		return 0, errors.New("engine: malformed catalog version")
	}
	return binary.BigEndian.Uint64(v), nil
}

// setVersion writes version v in tx.
func setVersion(tx storage.Txn, v uint64) error {
	return tx.Set(keyCatalogVersion, binary.BigEndian.AppendUint64(nil, v))
}

// CatalogVersion is the catalog version the engine's image was read at.
func (e *Engine) CatalogVersion() uint64 { return e.cat.version.Load() }

// catalogChange runs change in a storage transaction whose catalog is the
// engine's image (reloading it first when the store's is newer), bumps
// the catalog version in it and commits durably, then reloads the image;
// it returns the version committed. On a write conflict (another change,
// from this frontend or another, committed meanwhile) it reloads and runs
// change again, so change must only stage writes in tx, deciding from the
// image and tx. The caller holds e.cat.mu. A change returning errNoChange
// commits nothing.
func (e *Engine) catalogChange(change func(tx storage.Txn) error) (uint64, error) {
	for n := 0; ; n++ {
		tx, err := e.kv.Begin()
		if err != nil {
			return 0, err
		}
		v, err := readVersion(tx)
		if err == nil && v != e.cat.version.Load() {
			err = e.reloadLocked(tx)
		}
		if err == nil {
			err = change(tx)
		}
		if err == nil {
			err = setVersion(tx, v+1)
		}
		if err == nil {
			e.dirty.Store(true)
			err = tx.Commit()
		}
		tx.Rollback()
		if errors.Is(err, errNoChange) {
			return v, nil
		}
		if errors.Is(err, errStaleImage) {
			if err := e.reloadLatestLocked(); err != nil {
				return 0, err
			}
			continue
		}
		if errors.Is(err, storage.ErrWriteConflict) {
			backoff(n)
			continue
		}
		if err != nil {
			return 0, err
		}
		if err := e.kv.Sync(); err != nil {
			return 0, err
		}
		return v + 1, e.reloadLatestLocked()
	}
}

// errNoChange ends a catalog change that found nothing to do.
var errNoChange = errors.New("no catalog change")

// errStaleImage makes a catalog change reload the image and run again: the
// store holds an entry the image lacks (see installCreated).
var errStaleImage = errors.New("catalog image older than the store")

// checkAbsent fails with errStaleImage when tx holds a catalog entry for
// db.name, which the image lacks: a transaction that created the
// collection committed its entry before the version that announces it.
func (e *Engine) checkAbsent(tx storage.Txn, db, name string) error {
	_, ok, err := tx.Get(catalogKey(db, name))
	if err == nil && ok {
		err = errStaleImage
	}
	return err
}

// reloadLatestLocked reloads the image from the latest committed state;
// the caller holds e.cat.mu.
func (e *Engine) reloadLatestLocked() error {
	snap := e.kv.NewSnapshot()
	defer snap.Close()
	return e.reloadLocked(snap)
}

// reloadCatalog reloads the image when the store's catalog version is
// newer than the image's.
func (e *Engine) reloadCatalog() error {
	v, err := readVersion(e.kv)
	if err != nil || v == e.cat.version.Load() {
		return err
	}
	e.cat.mu.Lock()
	defer e.cat.mu.Unlock()
	return e.reloadLatestLocked()
}

// reloadLocked makes the image the catalog r holds; the caller holds
// e.cat.mu. Collections and indexes that did not change keep their
// objects (their locks, plan caches, seek hints and capped totals). A
// collection whose indexes changed, or that is gone, changes under its
// lock held exclusively, so once reloadLocked returns no write of this
// engine that began with the previous image is still running: the
// version the image is tagged with is then a promise about every write in
// flight, which the schema lease (schema_lease.go) publishes.
func (e *Engine) reloadLocked(r storage.Reader) error {
	v, err := readVersion(r)
	if err != nil {
		return err
	}
	if e.cat.colls != nil && v < e.cat.version.Load() {
		return nil // r is older than the image (a heartbeat overtaken by a change)
	}
	lo, hi := catalogSpan()
	it, err := r.NewIter(lo, hi)
	if err != nil {
		return err
	}
	defer it.Close()
	if e.cat.colls == nil {
		e.cat.colls, e.cat.opened = map[string]*Collection{}, map[string]bool{}
	}
	e.cat.reloads++
	pass := e.cat.reloads
	// byID are the image's collections by id as they were before this
	// reload, made when a capped one needs them: those still in colls and
	// those replaced so far.
	var byID map[uint32]*Collection
	var replaced []*Collection
	for it.First(); it.Valid(); it.Next() {
		key, stored := it.Key()[1:], it.Value()
		cur := e.cat.colls[string(key)]
		if cur != nil && bytes.Equal(cur.storedEntry, stored) {
			// Unchanged since the last reload: with thousands of
			// collections, decoding every entry again was most of the
			// cost of each create and drop.
			cur.loaded = pass
			continue
		}
		var ent catalogEntry
		if err := bson.Unmarshal(stored, &ent); err != nil {
			return err
		}
		if cur != nil && cur.ID == uint32(ent.ID) && bytes.Equal(cur.UUID[:], ent.UUID) {
			if err := syncCollection(cur, ent); err != nil {
				return err
			}
			cur.storedEntry, cur.loaded = bytes.Clone(stored), pass
			continue
		}
		db, name, _ := strings.Cut(string(key), "\x00")
		coll := e.newEntry(db, name, uint32(ent.ID))
		coll.idUsage.Since = time.Now()
		copy(coll.UUID[:], ent.UUID)
		if ent.Shard != nil {
			if coll.shard, err = newShardLayout(ent.Shard.Key, uint32(ent.Shard.IDIndex), ent.Options.Collation); err != nil {
				return err
			}
		}
		if err := syncCollection(coll, ent); err != nil {
			return err
		}
		if err := coll.ValidatorError(); err != nil {
			e.log.Warn("Collection has malformed validator", "namespace", db+"."+name, "validatorStatus", err.Error())
		}
		if coll.Options.Capped {
			coll.gone = make(chan struct{})
			if byID == nil {
				byID = map[uint32]*Collection{}
				for _, c := range e.cat.colls {
					byID[c.ID] = c
				}
				for _, c := range replaced {
					byID[c.ID] = c
				}
			}
			if prev := byID[coll.ID]; prev != nil && prev.capped != nil {
				coll.capped = prev.capped // renamed: the same documents
				coll.capped.setLimits(coll.Options)
			} else if coll.capped, err = loadCapped(r, coll); err != nil {
				return err
			}
		}
		if cur != nil {
			markDropped(cur)
			e.notifyDropped(cur)
			replaced = append(replaced, cur)
		}
		coll.storedEntry, coll.loaded = bytes.Clone(stored), pass
		e.cat.colls[string(key)] = coll
		e.cat.opened[db] = true
	}
	if err := it.Error(); err != nil {
		return err
	}
	for key, c := range e.cat.colls {
		if c.loaded != pass {
			markDropped(c)
			e.notifyDropped(c)
			delete(e.cat.colls, key)
		}
	}
	e.cat.version.Store(v)
	return nil
}

// OnDropped sets fn to be called with each collection that leaves the
// catalog: dropped, renamed away, or replaced by another of its name,
// here or through another frontend. fn runs under the catalog's lock and
// must not call the engine.
func (e *Engine) OnDropped(fn func(db, coll string)) { e.dropped.Store(&fn) }

func (e *Engine) notifyDropped(c *Collection) {
	if fn := e.dropped.Load(); fn != nil {
		(*fn)(c.DB, c.Name)
	}
}

// markDropped tells the writers of c, once those in flight are done, and
// the tailable cursors waiting on it, that it no longer exists.
func markDropped(c *Collection) {
	c.mu.Lock()
	if !c.dropped && c.gone != nil {
		close(c.gone)
	}
	c.dropped = true
	c.mu.Unlock()
}

// syncCollection brings c's options and indexes to the stored entry ent,
// keeping the objects of unchanged indexes. Changed index lists are
// stored under c.mu held exclusively.
func syncCollection(c *Collection, ent catalogEntry) error {
	var public, building []*Index
	old := append(slices.Clone(c.Indexes()), c.Building()...)
	for _, si := range ent.Indexes {
		ix, err := syncIndex(old, si)
		if err != nil {
			return err
		}
		if ix.state == statePublic {
			public = append(public, ix)
		} else {
			building = append(building, ix)
		}
	}
	// The validation, the pre-image setting, the TTL and the timeseries
	// options are the options collMod changes: they have their own
	// atomics, and c.Options keep the others.
	if err := c.syncValidation(ent.Options); err != nil {
		return err
	}
	base := ent.Options
	base.Validator, base.ValidationLevel, base.ValidationAction = c.Options.Validator, c.Options.ValidationLevel, c.Options.ValidationAction
	base.PreAndPostImages, base.ExpireAfterSeconds = c.Options.PreAndPostImages, c.Options.ExpireAfterSeconds
	base.Timeseries = c.Options.Timeseries
	if c.indexes.Load() == nil {
		base = ent.Options // a new object
	}
	pubChanged := !slices.Equal(public, c.Indexes())
	buildChanged := !slices.Equal(building, c.Building())
	if !pubChanged && !buildChanged && c.indexes.Load() != nil && c.Options.Equal(base) && c.nextIndexID == uint32(ent.NextIndexID) &&
		c.frozen.Load() == ent.Frozen {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.frozen.Store(ent.Frozen)
	if !c.Options.Equal(base) {
		c.Options = base // only a new object's: no change alters these options
	}
	c.nextIndexID = uint32(ent.NextIndexID)
	if pubChanged || c.indexes.Load() == nil {
		c.indexes.Store(&public)
	}
	if buildChanged {
		if len(building) == 0 {
			c.building.Store(nil)
		} else {
			c.building.Store(&building)
		}
	}
	return nil
}

// syncIndex returns the index si describes: the one of old with the same
// id, spec and state (its multikey flag raised when si's is), else a new
// one that keeps the hints, multikey flag and usage of the index of old
// with its id (collMod changed it, or its build advanced).
func syncIndex(old []*Index, si storedIndex) (*Index, error) {
	var prev *Index
	for _, ix := range old {
		if ix.ID == uint32(si.ID) {
			prev = ix
		}
	}
	if prev != nil && bytes.Equal(prev.Spec, si.Spec) && prev.state == si.State && prev.builder == si.Builder && int64(prev.build) == si.Build && prev.buildUUID == si.buildUUID() {
		if si.Multikey {
			prev.multikey.Store(true)
		}
		prev.raiseArrays(si.FieldArrays)
		if !si.LeafCells {
			prev.coarseCells.Store(true)
		}
		if prev.wild != nil {
			prev.wild.addMultikey(si.MultikeyPaths)
		}
		return prev, nil
	}
	ix, err := indexFromSpec(uint32(si.ID), si.Spec)
	if err != nil {
		return nil, err
	}
	ix.state, ix.builder, ix.build = si.State, si.Builder, uint32(si.Build)
	ix.buildUUID = si.buildUUID()
	ix.idKeyed = ix.idKeyed || si.IDKeyed
	ix.crossKeys = !si.ElementKeys
	loadArrays(ix, si)
	ix.multikey.Store(si.Multikey)
	ix.coarseCells.Store(!si.LeafCells)
	if ix.wild != nil {
		ix.wild.addMultikey(si.MultikeyPaths)
	}
	if prev != nil {
		ix.hints = prev.hints
		// Hiding or unhiding an index resets its $indexStats, as
		// MongoDB's collMod does.
		if ix.Hidden == prev.Hidden {
			ix.usage = prev.usage
		}
		if prev.Multikey() {
			ix.multikey.Store(true)
		}
		ix.raiseArrays(prev.fieldArrays())
		if prev.coarseCells.Load() {
			ix.coarseCells.Store(true)
		}
		if ix.wild != nil && prev.wild != nil {
			ix.wild.addMultikey(prev.wild.multikeyPaths())
		}
	}
	return ix, nil
}
