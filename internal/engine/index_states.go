package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/storage"
)

// Online index changes follow F1's schema change protocol (as TiDB does).
// An index moves through states, each entered by one catalog change made
// only once every live frontend loaded the previous one (the schema lease,
// schema_lease.go), so at most two adjacent states are in use at once:
//
//	build: absent → delete-only → write-only → (backfill) → public
//	drop:  public → write-only → delete-only → absent, then its entries are
//	       removed (garbage.go)
//
// delete-only: writers remove the entries of keys a document loses, add
// none; readers do not see the index. write-only: writers maintain the
// index fully (unique keys checked); readers do not see it. public: readers
// use it too. Why each adjacent pair is safe:
//   - absent / delete-only, and delete-only / absent at the end of a drop:
//     the index has no entries a reader could use, and nobody reads it.
//   - delete-only / write-only: a write-only writer adds entries a
//     delete-only writer may leave stale when it changes the document; the
//     index is unread meanwhile and the backfill, which starts only once
//     no delete-only frontend is left, rewrites every document's entries.
//     In a drop no entry is read again, so stale entries are harmless.
//   - write-only / public: every writer maintains the index, so readers of
//     the public image find exactly the documents' entries.
//   - after the last state of a drop, its entries are removed only once
//     every live frontend loaded it: no writer adds one again.
// The backfill indexes each batch of documents in a storage transaction
// that reads the documents: a concurrent writer (write-only, so it
// maintains the index) that changes one of them either commits before the
// batch's snapshot (the batch indexes its new state), or after it, when
// it removes entries the batch adds (the same keys: one of the two
// transactions fails with a write conflict and runs again) or removes
// none, when the keys the batch adds are all keys of the new state. A
// batch also fails unless its snapshot holds the indexes write-only and
// built by its frontend, and rewrites the collection's catalog entry as
// it read it (fenceBackfill): a state change committed after the batch
// began, such as the retirement of a build whose frontend's lease lapsed,
// makes it fail with a write conflict, so that no batch adds entries
// after the index's were removed.

// indexState is an index's schema state; public is 0 so that entries
// stored before states existed read as public.
type indexState uint8

const (
	statePublic indexState = iota
	stateWriteOnly
	stateDeleteOnly
)

func (s indexState) String() string {
	return [...]string{"public", "write-only", "delete-only"}[s]
}

// backfillBatch bounds the documents one backfill transaction indexes; a
// batch that conflicts with writers runs again with half as many, and
// batches grow back while they commit. backfillEntries bounds the index
// entries it writes (a batch ends after the document that reaches it):
// documents of many keys (text, long arrays) make short transactions, and
// the build's progress, reported after each batch, is where an
// interruption stops it.
const (
	backfillBatch   = 256
	backfillEntries = 4096
)

// changeIndexes makes one catalog change of c's stored index list: edit
// sees each index (state, multikey) and says whether it stays; added ones
// are appended; logged, when set, then stages the change's oplog entries
// and may change the entry's collection options too (a collMod of an
// index and of the collection's options is one change).
// It fails with NamespaceNotFound when c was dropped.
func (e *Engine) changeIndexes(c *Collection, edit func(si *storedIndex) (bool, error), add []*Index, garbage []uint32, logged func(tx storage.Txn, cur *Collection, ent *catalogEntry) error) (uint64, error) {
	e.cat.mu.Lock()
	defer e.cat.mu.Unlock()
	return e.catalogChange(func(tx storage.Txn) error {
		cur := e.cat.colls[nsKey(c.DB, c.Name)]
		if cur == nil || cur.ID != c.ID {
			return mongoerr.New(mongoerr.NamespaceNotFound, "collection %s.%s was dropped during the index change", c.DB, c.Name)
		}
		// The entry keeps what collMod made of the options since the
		// collection was loaded (cur.Options is what it was loaded with),
		// and its shard layout.
		ent := cur.entry(cur.CurrentOptions(), nil)
		ent.NextIndexID += int64(len(add))
		for i, ix := range add {
			// Ids and names as of the image this change is made on:
			// another frontend may have changed the indexes since the
			// build was planned.
			ix.ID = cur.nextIndexID + uint32(i)
			if ix.state != statePublic {
				ix.build = cur.nextIndexID
			}
			for _, o := range append(slices.Clone(cur.Indexes()), cur.Building()...) {
				if o.Name == ix.Name {
					return mongoerr.New(mongoerr.IndexBuildAlreadyInProgress, "Index build already in progress (or done) on another frontend: %s on %s.%s", ix.Name, c.DB, c.Name)
				}
			}
		}
		for _, ix := range append(append(append([]*Index(nil), cur.Indexes()...), cur.Building()...), add...) {
			si := ix.stored()
			if edit != nil {
				keep, err := edit(&si)
				if err != nil {
					return err
				}
				if !keep {
					continue
				}
			}
			ent.Indexes = append(ent.Indexes, si)
		}
		for _, id := range garbage {
			if err := markGarbage(tx, c.ID, &id); err != nil {
				return err
			}
		}
		if logged != nil {
			if err := logged(tx, cur, &ent); err != nil {
				return err
			}
		}
		return putEntry(tx, c.DB, c.Name, ent)
	})
}

// errStateChanged marks the failure of an index change that found one of
// its indexes gone or in another state than it expected: another frontend
// moved it meanwhile (a concurrent drop, or the retirement of a build
// whose builder's lease had lapsed).
var errStateChanged = errors.New("index changed state")

// moveIndexes moves the indexes ids of c from state from to state to, in
// one catalog change, then waits until every live frontend loaded it. A
// build that turns public is logged as createIndexes, one entry an index,
// unless b (a build's, else nil) found documents when the build's indexes
// turned write-only: then that change logged its startIndexBuild and kept
// the build's uuid on them, and this one logs its commitIndexBuild (see
// indexBuild). A drop that leaves
// public is logged as dropIndexes, one entry an index. It returns the
// state the indexes are stored in: to once the change committed, even if
// the wait then fails.
func (e *Engine) moveIndexes(c *Collection, ids []uint32, from, to indexState, b *indexBuild) (indexState, error) {
	var moved []bson.Raw
	var seen []uint32
	var committed [16]byte // the two-phase build turning public
	v, err := e.changeIndexes(c, func(si *storedIndex) (bool, error) {
		for _, id := range ids {
			if uint32(si.ID) == id {
				if si.State != from {
					return false, stateChanged(c, id)
				}
				si.State, si.Builder = to, e.frontendID
				if to == statePublic {
					committed = si.buildUUID()
					si.Builder, si.BuildUUID = "", nil
				}
				if to != stateWriteOnly || from == statePublic {
					si.Build = 0 // public, or being dropped
				}
				moved, seen = append(moved, si.Spec), append(seen, id)
			}
		}
		return true, nil
	}, nil, nil, func(tx storage.Txn, cur *Collection, ent *catalogEntry) error {
		defer func() { moved, seen, committed = moved[:0], seen[:0], [16]byte{} }()
		if id, gone := unseen(ids, seen); gone {
			return stateChanged(c, id)
		}
		switch {
		case b != nil && to == stateWriteOnly:
			if empty, err := collectionEmpty(tx, cur); err != nil || empty {
				return err
			}
			for i := range ent.Indexes {
				if slices.Contains(ids, uint32(ent.Indexes[i].ID)) {
					ent.Indexes[i].BuildUUID = b.uuid[:]
				}
			}
			return e.logIndexBuild(tx, cur, "startIndexBuild", b.uuid, moved, nil)
		case b != nil && to == statePublic && committed != [16]byte{}:
			return e.logIndexBuild(tx, cur, "commitIndexBuild", committed, moved, nil)
		}
		for _, spec := range moved {
			var err error
			switch {
			case to == statePublic:
				err = e.logIndex(tx, cur, "createIndexes", spec)
			case from == statePublic:
				err = e.logIndex(tx, cur, "dropIndexes", spec)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return from, err
	}
	return to, e.awaitVersion(v)
}

// unseen is an id of ids that seen lacks: an index a change expected and
// did not find.
func unseen(ids, seen []uint32) (uint32, bool) {
	for _, id := range ids {
		if !slices.Contains(seen, id) {
			return id, true
		}
	}
	return 0, false
}

// stateChanged is errStateChanged for index id of c, as IndexNotFound.
func stateChanged(c *Collection, id uint32) error {
	return fmt.Errorf("%w: %w", errStateChanged, mongoerr.New(mongoerr.IndexNotFound, "index %d of %s.%s changed state during the index change", id, c.DB, c.Name))
}

// buildAborted is the error of a build another operation retired, as
// MongoDB's createIndexes fails when dropIndexes, or a drop of the
// collection or its database, aborts its build; why says which.
func buildAborted(c *Collection, build []*Index, why string) error {
	names := make([]string, len(build))
	for i, ix := range build {
		names[i] = ix.Name
	}
	return mongoerr.New(mongoerr.IndexBuildAborted, "Index build aborted: %s on %s.%s: %s", strings.Join(names, ", "), c.DB, c.Name, why)
}

// Why buildAborted aborted a build.
const (
	abortedByDropIndexes = "dropIndexes aborted it, or another frontend retired it while this one's schema lease had lapsed"
	abortedByDrop        = "the collection was dropped"
)

// abortedByDropIndexesCommand is the cause of the abortIndexBuild of a
// build dropIndexes aborts: the reason MongoDB's dropIndexes gives
// IndexBuildsCoordinator::abortIndexBuildByIndexNames.
var abortedByDropIndexesCommand = mongoerr.New(mongoerr.IndexBuildAborted, "dropIndexes command")

// retireIndexes drops the indexes ids of c, now in state from, through
// the remaining states of a drop, and removes their entries. Indexes of a
// two-phase build (see indexBuild) end it: the change that removes them
// logs the build's abortIndexBuild with cause, why it was retired (its own
// failure, or the operation that aborted it).
func (e *Engine) retireIndexes(c *Collection, ids []uint32, from indexState, cause error) error {
	steps := []indexState{statePublic, stateWriteOnly, stateDeleteOnly}
	for i := 0; i+1 < len(steps); i++ {
		if steps[i] != from {
			continue
		}
		var err error
		if from, err = e.moveIndexes(c, ids, from, steps[i+1], nil); err != nil {
			return err
		}
	}
	var seen []uint32
	v, err := e.changeIndexes(c, func(si *storedIndex) (bool, error) {
		for _, id := range ids {
			if uint32(si.ID) == id {
				seen = append(seen, id)
				return false, nil
			}
		}
		return true, nil
	}, nil, ids, func(tx storage.Txn, cur *Collection, _ *catalogEntry) error {
		defer func() { seen = seen[:0] }()
		if id, gone := unseen(ids, seen); gone {
			return stateChanged(c, id)
		}
		var retired []*Index
		for _, ix := range cur.Building() {
			if slices.Contains(ids, ix.ID) {
				retired = append(retired, ix)
			}
		}
		return e.logBuildAborts(tx, cur, retired, cause)
	})
	if err != nil {
		return err
	}
	return e.dropData(v)
}

// buildOnline builds the indexes build (new, with their ids) of c through
// the states of a build, backfilling their entries without blocking
// writers. A failed or interrupted build is retired, leaving no entries.
func (e *Engine) buildOnline(c *Collection, build []*Index, progress BuildProgress) error {
	for _, ix := range build {
		ix.state, ix.builder = stateDeleteOnly, e.frontendID
	}
	v, err := e.changeIndexes(c, nil, build, nil, nil)
	if err != nil {
		return err
	}
	ids := make([]uint32, len(build))
	for i, ix := range build {
		ids[i] = ix.ID
	}
	state := stateDeleteOnly
	var b indexBuild
	if err := newUUID(&b.uuid); err != nil {
		return errors.Join(err, e.retireIndexes(c, ids, state, err))
	}
	err = e.awaitVersion(v)
	if err == nil {
		state, err = e.moveIndexes(c, ids, state, stateWriteOnly, &b)
	}
	if err == nil {
		err = e.backfill(c, ids, progress)
	}
	if err == nil {
		state, err = e.moveIndexes(c, ids, state, statePublic, &b)
	}
	switch {
	case err == nil || state == statePublic:
		// Built; at worst the wait for the other frontends to load it
		// failed.
		return err
	case errors.Is(err, errDropped), mongoerr.Is(err, mongoerr.NamespaceNotFound):
		return buildAborted(c, build, abortedByDrop)
	case errors.Is(err, errStateChanged):
		// Another operation retired the build: dropIndexes aborted it,
		// or the jobs-lease holder found its lease lapsed.
		return buildAborted(c, build, abortedByDropIndexes)
	}
	retire := e.retireIndexes(c, ids, state, err)
	if errors.Is(retire, errStateChanged) {
		// This frontend's lease lapsed and another one retires the
		// build as abandoned (retireAbandoned).
		retire = nil
	}
	return errors.Join(err, retire)
}

// indexBuild is a build's identity in the oplog. As MongoDB's
// IndexBuildsCoordinator::_filterSpecsAndRegisterBuild decides, a build
// on a collection that holds no document is logged as one createIndexes
// entry an index when its indexes turn public; one on a collection that
// holds documents is two-phase: a startIndexBuild entry when it starts
// (here: when its indexes turn write-only, where the collection is
// looked at) and a commitIndexBuild entry when it ends, each
// {<kind>: coll, indexBuildUUID, indexes: [spec, ...]} naming all its
// indexes (OpObserverImpl::onStartIndexBuild, onCommitIndexBuild), of
// which a change stream makes one createIndexes event. The catalog keeps
// the uuid on the build's indexes (storedIndex.BuildUUID), so that
// whichever operation retires them instead, the build's own failure,
// dropIndexes, a drop or the retirement of an abandoned build, logs its
// abortIndexBuild (onAbortIndexBuild).
type indexBuild struct {
	uuid [16]byte
}

// errDropped stops a backfill whose collection was dropped.
var errDropped = mongoerr.New(mongoerr.NamespaceNotFound, "collection dropped during the index build")

// backfill writes the entries of the write-only indexes ids of c for every
// document, a batch of documents per storage transaction (see the proof
// above), holding c's lock shared like any writer so that no batch runs
// once this frontend has seen c dropped. A batch waits while this
// frontend's lease has lapsed (awaitLease), and one the lapse failed runs
// again; fenceBackfill fails it if another frontend retired the build
// meanwhile.
func (e *Engine) backfill(c *Collection, ids []uint32, progress BuildProgress) error {
	stats, err := e.Stats(c)
	if err != nil {
		return err
	}
	start := time.Now()
	lo, hi := docSpan(c.ID)
	from := lo
	var done int64
	report := func() error {
		if progress == nil {
			return nil
		}
		return progress(done, stats.Count)
	}
	if err := report(); err != nil {
		return err
	}
	limit := int64(backfillBatch)
	for from != nil {
		if err := e.awaitLease(context.Background()); err != nil {
			return err
		}
		var next []byte
		var n int64
		tries := 0
		c.mu.RLock()
		if c.dropped {
			c.mu.RUnlock()
			return errDropped
		}
		ixs := buildingIndexes(c, ids)
		err := e.retry(context.Background(), func(tx storage.Txn) error {
			if tries++; tries > 1 {
				limit = max(limit/2, 1)
			}
			next, n = nil, 0
			it, err := tx.NewIter(from, hi)
			if err != nil {
				return err
			}
			var buf []byte
			entries := 0
			for it.First(); it.Valid() && n < limit && entries < backfillEntries; it.Next() {
				doc, err := docOf(it.Value(), &buf)
				var k int
				if err == nil {
					k, err = e.indexDoc(tx, c, ixs, it.Key(), doc)
				}
				if err != nil {
					it.Close()
					return err
				}
				n, entries = n+1, entries+k
			}
			if it.Valid() {
				next = append([]byte(nil), it.Key()...)
			}
			if err := errors.Join(it.Error(), it.Close()); err != nil {
				return err
			}
			if err := e.checkLease(); err != nil {
				return err
			}
			if err := e.fenceBackfill(tx, c, ids); err != nil {
				return err
			}
			if e.beforeBackfillCommit != nil {
				e.beforeBackfillCommit()
			}
			return tx.Commit()
		})
		c.mu.RUnlock()
		if mongoerr.Is(err, mongoerr.NotWritablePrimary) {
			continue // the lease lapsed during the batch: run it again once renewed
		}
		if err != nil {
			return err
		}
		e.dirty.Store(true)
		if tries == 1 {
			limit = min(limit*2, backfillBatch)
		}
		done += n
		from = next
		if err := report(); err != nil {
			return err
		}
		if done/indexBuildBatch > (done-n)/indexBuildBatch {
			e.log.Info("index build progress", "ns", c.ns, "documents", done, "of", stats.Count, "elapsed", time.Since(start).String())
		}
	}
	return nil
}

// fenceBackfill stages in tx, a backfill batch of c's indexes ids, what
// keeps it from committing entries once the build moved on (its lease
// lapsed, another frontend retired it and removed its entries): it fails
// unless tx's snapshot holds them write-only and built here, and it
// rewrites c's catalog entry as read, which every change of c's indexes
// writes too, so that one committed after tx began fails tx with a write
// conflict.
func (e *Engine) fenceBackfill(tx storage.Txn, c *Collection, ids []uint32) error {
	raw, ent, ok, err := storedEntryOf(tx, c)
	if err != nil {
		return err
	}
	if !ok {
		return errDropped
	}
	for _, id := range ids {
		i := slices.IndexFunc(ent.Indexes, func(si storedIndex) bool { return si.ID == int64(id) })
		if i < 0 || ent.Indexes[i].State != stateWriteOnly || ent.Indexes[i].Builder != e.frontendID {
			return stateChanged(c, id)
		}
	}
	return tx.Set(catalogKey(c.DB, c.Name), raw)
}

// buildingIndexes are the indexes ids of c as c's image holds them now.
func buildingIndexes(c *Collection, ids []uint32) []*Index {
	var out []*Index
	for _, ix := range c.Building() {
		for _, id := range ids {
			if ix.ID == id {
				out = append(out, ix)
			}
		}
	}
	return out
}

// indexDoc stages in tx the entries of ixs for the document at key and
// returns how many: a unique key another document holds fails with
// DuplicateKey.
func (e *Engine) indexDoc(tx storage.Txn, c *Collection, ixs []*Index, key, doc []byte) (int, error) {
	encID := idFromDocKey(key)
	n := 0
	for _, ix := range ixs {
		if err := c.checkBucketKeys(ix, doc); err != nil {
			return 0, err
		}
		keys, arrays, multikey, err := ix.keysWithArrays(doc)
		if err != nil {
			return 0, err
		}
		ix.raiseArrays(arrays) // before the flag (indexChanges)
		if multikey {
			ix.multikey.Store(true)
		}
		ix.raiseCoarseCells(keys)
		for _, k := range keys {
			entry := indexEntryKey(c.ID, ix, k.enc, encID)
			if ix.Unique {
				holder, ok, err := tx.Get(entry)
				if err != nil {
					return 0, err
				}
				if ok && heldByOther(holder, encID, nil) {
					return 0, duplicateKeyError(c, ix, k)
				}
			}
			if err := tx.Set(entry, entryValue(encID, k)); err != nil {
				return 0, err
			}
		}
		n += len(keys)
	}
	return n, nil
}

// putEntry stores a catalog entry.
func putEntry(w kvWriter, db, name string, ent catalogEntry) error {
	v, err := bson.Marshal(ent)
	if err != nil {
		return err
	}
	return w.Set(catalogKey(db, name), v)
}

// indexRef names an index of a collection incarnation.
type indexRef struct {
	coll [16]byte // the collection's UUID
	id   uint32
}

// ownUnfinished is the indexes of the catalog loaded in a build's or
// drop's states by this frontend's id: at Open, those a process before
// this one left (Engine.leftBehind).
func (e *Engine) ownUnfinished() map[indexRef]bool {
	e.cat.mu.RLock()
	defer e.cat.mu.RUnlock()
	var left map[indexRef]bool
	for _, c := range e.cat.colls {
		for _, ix := range c.Building() {
			if ix.builder == e.frontendID {
				if left == nil {
					left = map[indexRef]bool{}
				}
				left[indexRef{c.UUID, ix.ID}] = true
			}
		}
	}
	return left
}

// retireAbandoned retires the indexes left in a build's or drop's states
// by a frontend whose lease expired (it stopped midway), or by this
// frontend's previous process (leftBehind): the jobs-lease holder runs
// it. Their entries are removed as a drop's.
func (e *Engine) retireAbandoned() error {
	live, err := e.liveFrontends()
	if err != nil {
		return err
	}
	e.cat.mu.RLock()
	colls := make([]*Collection, 0, len(e.cat.colls))
	for _, c := range e.cat.colls {
		if len(c.Building()) > 0 {
			colls = append(colls, c)
		}
	}
	e.cat.mu.RUnlock()
	var errs []error
	for _, c := range colls {
		var retired []uint32
		for _, ix := range c.Building() {
			if live[ix.builder] && !e.leftBehind[indexRef{c.UUID, ix.ID}] || slices.Contains(retired, ix.ID) {
				continue
			}
			// A two-phase build's indexes go together, so that its
			// abortIndexBuild names them all.
			ids := []uint32{ix.ID}
			for _, o := range c.Building() {
				if o != ix && ix.buildUUID != ([16]byte{}) && o.buildUUID == ix.buildUUID && o.state == ix.state {
					ids = append(ids, o.ID)
				}
			}
			retired = append(retired, ids...)
			e.log.Warn("retiring an index its builder abandoned", "ns", c.ns, "index", ix.Name, "state", ix.state.String(), "builder", ix.builder)
			cause := mongoerr.New(mongoerr.IndexBuildAborted, "index build abandoned: frontend %s stopped renewing its lease", ix.builder)
			if live[ix.builder] {
				cause = mongoerr.New(mongoerr.IndexBuildAborted, "index build abandoned: the server stopped before it finished")
			}
			if err := e.retireIndexes(c, ids, ix.state, cause); !errors.Is(err, errStateChanged) {
				// errStateChanged: its builder, back, or another
				// frontend retires it.
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
