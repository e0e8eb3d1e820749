package engine

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/fts"
	"github.com/folio-db/folio/internal/geo"
	"github.com/folio-db/folio/internal/keyenc"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/planner"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/storage"
	"github.com/folio-db/folio/internal/timeseries"
	"github.com/folio-db/folio/internal/values"
)

// indexFromSpec rebuilds an index from its stored listIndexes spec.
func indexFromSpec(id uint32, spec bson.Raw) (*Index, error) {
	return newIndex(id, storedSpec(spec))
}

// storedSpec is the request that builds the index a stored listIndexes
// spec describes.
func storedSpec(spec bson.Raw) IndexSpec {
	s := IndexSpec{ExpireAfter: -1}
	s.Name = spec.Lookup("name").StringValue()
	s.Key = spec.Lookup("key").Document()
	s.Unique, _ = spec.Lookup("unique").BooleanOK()
	s.PrepareUnique, _ = spec.Lookup("prepareUnique").BooleanOK()
	s.Sparse, _ = spec.Lookup("sparse").BooleanOK()
	s.Hidden, _ = spec.Lookup("hidden").BooleanOK()
	s.Background = spec.Lookup("background")
	if p, ok := spec.Lookup("partialFilterExpression").DocumentOK(); ok {
		s.Partial = p
	}
	if v, ok := spec.Lookup("expireAfterSeconds").AsInt64OK(); ok {
		s.ExpireAfter = v
	}
	s.StorageEngine = storageEngineOf(spec)
	if c, ok := spec.Lookup("collation").DocumentOK(); ok {
		s.Collation = c
	}
	if p, ok := spec.Lookup("wildcardProjection").DocumentOK(); ok {
		s.WildcardProjection = p
	}
	if p, ok := spec.Lookup("originalSpec").DocumentOK(); ok {
		s.OriginalSpec = p
	}
	s.Flat = geo.FlatOptions{Min: spec.Lookup("min"), Max: spec.Lookup("max"), Bits: spec.Lookup("bits")}
	if v, ok := spec.Lookup("v").Int32OK(); ok {
		s.Version = v
	}
	s.Text = fts.Options{Weights: spec.Lookup("weights"), DefaultLanguage: spec.Lookup("default_language"),
		LanguageOverride: spec.Lookup("language_override"), Version: spec.Lookup("textIndexVersion")}
	s.Sphere = SphereOptions{Version: spec.Lookup("2dsphereIndexVersion"),
		Coarsest: spec.Lookup("coarsestIndexedLevel"), Finest: spec.Lookup("finestIndexedLevel")}
	return s
}

// sameSignature reports whether an existing index has the signature spec
// asks for: MongoDB (5.0 and later) tells indexes apart by key pattern,
// partial filter, unique and sparse, so two indexes may differ only there.
func sameSignature(ix *Index, spec IndexSpec) bool {
	wp, _ := ix.Spec.Lookup("wildcardProjection").DocumentOK()
	return SameKeyPattern(ix.keyPattern(), spec.Key) && ix.Unique == spec.Unique && ix.Sparse == spec.Sparse &&
		samePartial(ix, spec) && sameCollation(ix, spec) &&
		sameWildcardProjection(wp, spec.WildcardProjection)
}

// sameDefinition reports whether an existing index is the one spec asks
// for: the same signature and the same other options.
func sameDefinition(ix *Index, spec IndexSpec) bool {
	return sameSignature(ix, spec) && ix.ExpireAfter == spec.ExpireAfter && ix.Hidden == spec.Hidden && ix.PrepareUnique == spec.PrepareUnique &&
		bytes.Equal(storageEngineOf(ix.Spec), spec.StorageEngine) && sameTextOptions(ix, spec) && sameKeptOptions(ix, spec)
}

// sameKeptOptions reports whether spec gives the options kept as given
// (IndexSpec.Text, Flat, Sphere) that MongoDB compares, the index versions
// excepted, as ix has them.
func sameKeptOptions(ix *Index, spec IndexSpec) bool {
	kept := []givenOption{{"bits", spec.Flat.Bits}, {"min", spec.Flat.Min}, {"max", spec.Flat.Max},
		{"coarsestIndexedLevel", spec.Sphere.Coarsest}, {"finestIndexedLevel", spec.Sphere.Finest}}
	if ix.text == nil {
		// a text index's own are compared normalized (sameTextOptions)
		kept = append(kept, givenOption{"default_language", spec.Text.DefaultLanguage}, givenOption{"language_override", spec.Text.LanguageOverride})
	}
	for _, o := range kept {
		if !ix.Spec.Lookup(o.name).Equal(reported(o.name, o.v)) {
			return false
		}
	}
	return true
}

// samePartial reports whether spec asks for ix's partial filter: none
// for none, else one equivalent once normalized (query.Filter.Equivalent),
// as MongoDB's compareIndexOptions compares them.
func samePartial(ix *Index, spec IndexSpec) bool {
	if ix.partial == nil || len(spec.Partial) == 0 {
		return ix.partial == nil && len(spec.Partial) == 0
	}
	if bytes.Equal(partialOf(ix), spec.Partial) {
		return true
	}
	f, err := query.CompileCollated(spec.Partial, nil, ix.coll)
	return err == nil && ix.partial.Equivalent(f)
}

func partialOf(ix *Index) []byte {
	if p, ok := ix.Spec.Lookup("partialFilterExpression").DocumentOK(); ok {
		return p
	}
	return nil
}

func storageEngineOf(spec bson.Raw) bson.Raw {
	if p, ok := spec.Lookup("storageEngine").DocumentOK(); ok {
		return p
	}
	return nil
}

// CreateIndexesResult reports createIndexes' effect.
type CreateIndexesResult struct {
	Before, After     int // index counts, as catalogIndexCount counts them
	CreatedCollection bool
}

// BuildProgress receives an index build's progress: documents indexed so
// far, of total, once the build's indexes are in the catalog and then
// after each backfill batch; a request waiting for a build of the same
// index under way gets 0, BuildWaiting between its polls. An error it
// returns (the operation was interrupted) stops the build (its partial
// entries are removed and the catalog is left unchanged) or the wait.
type BuildProgress func(done, total int64) error

// BuildWaiting is the total BuildProgress gets while its request waits
// for a build of the same index under way.
const BuildWaiting = -1

// CreateIndexes builds the requested indexes on db.coll, creating the
// collection if needed, reporting progress (when not nil) as it goes.
// Existing documents are indexed while writers go on, through the states
// of an online build (index_states.go); the indexes become visible with
// the catalog change that ends the build, and CreateIndexes returns once
// every live frontend has loaded it. Requesting an index that exists with
// the same definition is a no-op, and so is one for an index being built
// with the same definition, here or by another frontend, once that build
// ended (MongoDB's createIndexes joins the build under way; the wait calls
// progress with 0, 0 between polls, and its error ends it); MongoDB's conflicts
// fail with IndexOptionsConflict (85) or IndexKeySpecsConflict (86), a
// request for another index being built or dropped with
// IndexBuildAlreadyInProgress (285).
func (e *Engine) CreateIndexes(db, coll string, specs []IndexSpec, progress BuildProgress) (CreateIndexesResult, error) {
	var res CreateIndexesResult
	if err := clientSystemNS(db, coll); err != nil {
		// runCreateIndexesWithCoordinator's userAllowedWriteNS, first
		return res, err
	}
	if err := CheckNewSpecs(specs); err != nil {
		return res, err
	}
	if e.IsOplog(db, coll) {
		return res, mongoerr.New(mongoerr.NotImplemented, "Folio does not support indexes on %s.%s: its oplog is read in stamp order only", db, coll)
	}
	for {
		res.CreatedCollection = e.cat.get(db, coll) == nil
		c, err := e.writable(context.Background(), nil, db, coll, true, nil)
		if err != nil {
			return res, err
		}
		c.mu.RUnlock()
		res, err = e.createIndexesOn(c, specs, res, progress)
		if !errors.Is(err, errRecreate) {
			return res, err
		}
	}
}

// errRecreate is planJoining's error for a collection dropped before the
// request planned its build: CreateIndexes creates it again, as
// MongoDB's createIndexes, which holds the collection's lock from its
// creation on, would have found no drop in between.
var errRecreate = errors.New("collection dropped before the index build was planned")

// createIndexesOn builds specs on c, joining a build of the same indexes
// under way.
func (e *Engine) createIndexesOn(c *Collection, specs []IndexSpec, res CreateIndexesResult, progress BuildProgress) (CreateIndexesResult, error) {
	for {
		build, err := e.planJoining(c, specs, &res, progress)
		if err != nil {
			return res, err
		}
		if len(build) == 0 {
			break
		}
		for _, ix := range build {
			e.log.Info("index build started", "ns", c.DB+"."+c.Name, "index", ix.Name)
		}
		start := time.Now()
		if err := e.buildOnline(c, build, progress); err != nil {
			if mongoerr.Is(err, mongoerr.IndexBuildAlreadyInProgress) {
				// A concurrent request registered an index of the same
				// name first: plan again, which joins a build of the
				// same index by this frontend, finds it done, or fails
				// with MongoDB's conflict.
				time.Sleep(joinPoll)
				continue
			}
			return res, err
		}
		for _, ix := range build {
			e.log.Info("index built", "ns", c.DB+"."+c.Name, "index", ix.Name, "elapsed", time.Since(start).String())
		}
		break
	}
	res.After = catalogIndexCount(c, c.Indexes())
	return res, nil
}

// CheckNewSpecs refuses the specs MongoDB refuses before it creates the
// collection they are for, which then stays missing: each must build an
// index, not both sparse and partial, with a partial filter MongoDB
// indexes by. The filter is checked
// on creation only, so that an index stored before the check still loads.
func CheckNewSpecs(specs []IndexSpec) error {
	for _, spec := range specs {
		if spec.Sparse && len(spec.Partial) > 0 {
			return mongoerr.New(mongoerr.CannotCreateIndex, "cannot mix \"partialFilterExpression\" and \"sparse\" options")
		}
		if err := checkNewKeyPattern(spec.Key); err != nil {
			return err
		}
		if err := checkNewCompoundWildcard(spec); err != nil {
			return err
		}
		ix, err := newIndex(0, spec)
		if err == nil && ix.partial != nil {
			err = ix.partial.CheckPartial()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// checkNewKeyPattern applies the rules of MongoDB's validateKeyPattern that
// an index stored before Folio checked them would break on load: no NaN
// value, and key paths as checkKeyPath takes them.
func checkNewKeyPattern(key bson.Raw) error {
	elems, _ := key.Elements()
	for _, el := range elems {
		v := el.Value()
		if f, ok := values.Float64(v); ok && math.IsNaN(f) {
			return mongoerr.New(mongoerr.CannotCreateIndex, "Values in the index key pattern can't be NaN.")
		}
		// a final "$**" is a wildcard's, or a text index's whole key
		s, isString := v.StringValueOK()
		if err := checkKeyPath(el.Key(), values.IsNumber(v.Type) || isString && s == "text" && el.Key() == "$**"); err != nil {
			return err
		}
	}
	return nil
}

// checkKeyPath is validateKeyPattern's rule for the path of one key: not
// empty, no empty part, and no part starting with '$' but a DBRef field
// ($ref, $id, $db) after the first part, or, in a wildcard or text key
// (wild), a final "$**".
func checkKeyPath(path string, wild bool) error {
	if path == "" {
		return mongoerr.New(mongoerr.CannotCreateIndex, "Index keys cannot be an empty field.")
	}
	parts := strings.Split(path, ".")
	for i, part := range parts {
		if part == "" {
			return mongoerr.New(mongoerr.CannotCreateIndex, "Index keys cannot contain an empty field.")
		}
		dbRef := i > 0 && (part == "$ref" || part == "$id" || part == "$db")
		wildcard := wild && i == len(parts)-1 && part == "$**"
		if part[0] == '$' && !dbRef && !wildcard {
			return mongoerr.New(mongoerr.CannotCreateIndex, "Index key contains an illegal field name: field name starts with '$'.")
		}
	}
	return nil
}

// catalogIndexCount is how many indexes MongoDB's catalog counts for c
// with the secondary indexes ixs (numIndexesBefore, numIndexesAfter,
// nIndexesWas): with the _id index, but for a clustered collection (and a
// time series collection's buckets, which MongoDB clusters), whose
// clustered index is not in its catalog.
func catalogIndexCount(c *Collection, ixs []*Index) int {
	if c.Options.Clustered() {
		return len(ixs)
	}
	return len(ixs) + 1
}

// IndexCount is catalogIndexCount of c's public indexes: drop's
// nIndexesWas.
func (c *Collection) IndexCount() int { return catalogIndexCount(c, c.Indexes()) }

// planJoining plans the build of specs on c, first waiting for the end of
// a build of the same indexes under way, by this frontend or another
// (buildingSame), as long as progress returns no error. The wait fails as
// that build does if c is dropped meanwhile; errRecreate tells the caller
// c was dropped before any wait.
func (e *Engine) planJoining(c *Collection, specs []IndexSpec, res *CreateIndexesResult, progress BuildProgress) ([]*Index, error) {
	for waited := false; ; waited = true {
		e.cat.mu.Lock()
		if c.dropped {
			e.cat.mu.Unlock()
			if !waited {
				return nil, errRecreate
			}
			return nil, mongoerr.New(mongoerr.IndexBuildAborted, "Index build aborted: the build of the same indexes on %s.%s this request waited for: %s", c.DB, c.Name, abortedByDrop)
		}
		existing := c.Indexes()
		res.Before = catalogIndexCount(c, existing)
		build, err := planIndexBuild(c, existing, specs)
		joining := err != nil && buildingSame(c, specs)
		e.cat.mu.Unlock()
		if !joining {
			return build, err
		}
		if progress != nil {
			if err := progress(0, BuildWaiting); err != nil {
				return nil, err
			}
		}
		time.Sleep(joinPoll)
	}
}

// planIndexBuild returns the indexes of specs that c (whose indexes are
// existing) does not have yet, with their ids, or MongoDB's conflict
// error; a spec identical to an earlier one of specs is IndexAlreadyExists.
func planIndexBuild(c *Collection, existing []*Index, specs []IndexSpec) ([]*Index, error) {
	var build []*Index
	for _, spec := range specs {
		if err := resolveSpec(c, &spec); err != nil {
			return nil, err
		}
		if err := checkIDIndexCollation(c, spec); err != nil {
			return nil, err
		}
		if c.capped != nil && spec.ExpireAfter >= 0 {
			// MongoDB 7.0's prepareSpecForCreate, before any conflict
			// check: a capped collection keeps its own order of removal.
			return nil, mongoerr.New(mongoerr.CannotCreateIndex, "Cannot create TTL index on a capped collection")
		}
		dup, err := checkIndexConflict(existing, spec)
		if err != nil {
			return nil, err
		}
		if !dup {
			// an index the same request asks for already: MongoDB finds it
			// in progress, and refuses even an identical one
			again, err := checkIndexConflict(build, spec)
			if err != nil {
				return nil, err
			}
			if again {
				return nil, mongoerr.New(mongoerr.IndexAlreadyExists, "Identical index already exists: %s", spec.Name)
			}
		}
		for _, ix := range c.Building() {
			if ix.Name == spec.Name || sameSignature(ix, spec) {
				return nil, mongoerr.New(mongoerr.IndexBuildAlreadyInProgress, "Index build already in progress (or its drop): %s on %s.%s", ix.Name, c.DB, c.Name)
			}
		}
		if dup {
			continue
		}
		if catalogIndexCount(c, existing)+len(c.Building())+len(build) >= MaxIndexes {
			return nil, tooManyIndexes(c, spec.Key)
		}
		if err := oneTextIndex(append(append(existing, c.Building()...), build...), spec); err != nil {
			return nil, err
		}
		ix, err := newIndex(c.nextIndexID+uint32(len(build)), spec)
		if err != nil {
			return nil, err
		}
		build = append(build, ix)
	}
	return build, nil
}

// MaxIndexes is MongoDB's limit (kMaxNumIndexesAllowed) on the entries of
// one collection's index catalog: the _id index counts, but a clustered
// collection's clustered index is no entry, so it may have MaxIndexes
// secondary indexes.
const MaxIndexes = 64

// tooManyIndexes is MongoDB's error for an index beyond MaxIndexes.
func tooManyIndexes(c *Collection, key bson.Raw) error {
	return mongoerr.New(mongoerr.CannotCreateIndex, "add index fails, too many indexes for %s.%s key:%s", c.DB, c.Name, values.ShellDoc(key))
}

// checkIndexConflict reports whether spec is already present, or the
// conflict MongoDB reports for it.
func checkIndexConflict(existing []*Index, spec IndexSpec) (bool, error) {
	isIDKey := SameKeyPattern(spec.Key, idKeyPattern)
	switch {
	case isIDKey && spec.Name == idIndexName:
		return true, nil
	case isIDKey:
		return false, mongoerr.New(mongoerr.IndexOptionsConflict, "Index already exists with a different name: %s", idIndexName)
	case spec.Name == idIndexName:
		return false, mongoerr.New(mongoerr.IndexKeySpecsConflict,
			"An existing index has the same name as the requested index. Requested index: %s, existing index: %s", bson.Raw(spec.Key), idKeyPattern)
	}
	for _, ix := range existing {
		switch {
		case ix.Name == spec.Name && sameDefinition(ix, spec):
			return true, nil
		case ix.Name == spec.Name && sameSignature(ix, spec):
			return false, mongoerr.New(mongoerr.IndexOptionsConflict,
				"An equivalent index already exists with the same name but different options. Requested index: %s, existing index: %s",
				requestedSpec(spec), ix.Spec)
		case ix.Name == spec.Name:
			return false, mongoerr.New(mongoerr.IndexKeySpecsConflict,
				"An existing index has the same name as the requested index. When index names are not specified, they are auto generated and can cause conflicts. Please refer to our documentation. Requested index: %s, existing index: %s",
				requestedSpec(spec), ix.Spec)
		case sameDefinition(ix, spec):
			return false, mongoerr.New(mongoerr.IndexOptionsConflict, "Index already exists with a different name: %s", ix.Name)
		case sameSignature(ix, spec):
			// two text indexes on their text fields alone, for one
			return false, mongoerr.New(mongoerr.IndexOptionsConflict,
				"An equivalent index already exists with a different name and options. Requested index: %s, existing index: %s",
				requestedSpec(spec), ix.Spec)
		}
	}
	return false, nil
}

// requestedSpec is spec as listIndexes would report it, for messages:
// with its resolved collation, as MongoDB quotes the request after
// addCollationDefaultsToIndexSpecsForCreate.
func requestedSpec(spec IndexSpec) bson.Raw {
	ix := &Index{Name: spec.Name, Unique: spec.Unique, Sparse: spec.Sparse, Hidden: spec.Hidden, ExpireAfter: spec.ExpireAfter}
	if spec.Collation != nil {
		// resolved: it parsed before the conflict checks
		ix.coll, _ = collation.Parse(spec.Collation)
	}
	return indexSpecDoc(ix, spec)
}

// checkIDIndexCollation refuses a request for the _id index (resolved:
// its collation the one it names, else c's default) whose collation is
// not c's default, before any conflict check, as MongoDB's
// Collection::addCollationDefaultsToIndexSpecsForCreate does when
// createIndexes resolves its specs: even when the _id index exists.
func checkIDIndexCollation(c *Collection, spec IndexSpec) error {
	if !SameKeyPattern(spec.Key, idKeyPattern) {
		return nil
	}
	simple := bson.Raw(bsonDoc(bson.D{{Key: "locale", Value: "simple"}}))
	want := simple
	if d := c.DefaultCollator(); d != nil {
		want = d.Document()
	}
	got := simple
	if spec.Collation != nil {
		got = spec.Collation
	}
	if bytes.Equal(got, want) {
		return nil
	}
	return mongoerr.New(mongoerr.BadValue, "The _id index must have the same collation as the collection. Index collation: %s, collection collation: %s", got, want)
}

// idKeyPattern is {_id: 1}.
var idKeyPattern = planner.IDKeyPattern

func bsonDoc(d bson.D) []byte {
	b, _ := bson.Marshal(d)
	return b
}

// indexBuildBatch is how many documents an index build indexes between
// two lines of its progress in the log.
const indexBuildBatch = 4096

// indexEntryKey is the storage key of one entry of ix: the index prefix and
// encoded key, then (indexes keyed with the record id, see idKeyed) the
// record id.
func indexEntryKey(collID uint32, ix *Index, key, encID []byte) []byte {
	k := append(indexPrefix(collID, ix.ID), key...)
	if ix.idKeyed {
		k = append(k, encID...)
	}
	return k
}

// DropIndexes drops the named indexes of db.coll ("*" first: every secondary
// index) and returns how many indexes (with _id, and those being built)
// there were. As MongoDB, it aborts the builds under way of the indexes it
// names, whose createIndexes then fails with IndexBuildAborted: a build is
// aborted whole, so every index of it must be named
// (BackgroundOperationInProgressForNamespace otherwise), and "*" aborts
// every build on the collection.
func (e *Engine) DropIndexes(db, coll string, names []string, byKey bson.Raw) (int, error) {
	e.cat.mu.Lock()
	locked := true
	unlock := func() {
		if locked {
			locked = false
			e.cat.mu.Unlock()
		}
	}
	defer unlock()
	c := e.cat.colls[nsKey(db, coll)]
	if c == nil {
		return 0, mongoerr.New(mongoerr.NamespaceNotFound, "ns not found %s.%s", db, coll)
	}
	existing, building := c.Indexes(), c.underConstruction()
	was := catalogIndexCount(c, existing) + len(building)
	var drop, abort []*Index
	switch {
	case byKey != nil:
		// a clustered collection has no _id index (its clustered index is
		// no entry of the catalog)
		if SameKeyPattern(byKey, idKeyPattern) && !c.Clustered() {
			return was, mongoerr.New(mongoerr.InvalidOptions, "cannot drop _id index")
		}
		var found []*Index
		for _, ix := range append(slices.Clone(existing), building...) {
			if SameKeyPattern(ix.keyPattern(), byKey) {
				found = append(found, ix)
			}
		}
		switch len(found) {
		case 0:
			return was, mongoerr.New(mongoerr.IndexNotFound, "can't find index with key: %s", byKey)
		case 1:
			drop = found
		default:
			return was, mongoerr.New(mongoerr.AmbiguousIndexKeyPattern,
				"%d indexes found for key: %s, identify by name instead. Conflicting indexes: %s, %s", len(found), byKey, found[0].Spec, found[1].Spec)
		}
	case DropsAllIndexes(names):
		drop, abort = existing, building
	default:
		for i, n := range names {
			if n == idIndexName && !c.Clustered() {
				return was, mongoerr.New(mongoerr.InvalidOptions, "cannot drop _id index")
			}
			if slices.Contains(names[:i], n) {
				// MongoDB drops the named indexes one after the other in one
				// unit of work: a name given twice is gone the second time,
				// and the whole drop rolls back
				return was, mongoerr.New(mongoerr.IndexNotFound, "index not found with name [%s]", n)
			}
			i := slices.IndexFunc(building, func(ix *Index) bool { return ix.Name == n })
			switch ix := c.FindIndex(n); {
			case ix != nil:
				drop = append(drop, ix)
			case i >= 0:
				drop = append(drop, building[i])
			default:
				return was, mongoerr.New(mongoerr.IndexNotFound, "index not found with name [%s]", n)
			}
		}
	}
	if abort == nil {
		drop, abort = splitBuilding(drop)
		for _, ix := range building {
			if slices.ContainsFunc(abort, func(a *Index) bool { return a.build == ix.build }) && !slices.Contains(abort, ix) {
				return was, mongoerr.New(mongoerr.BackgroundOperationInProgressForNamespace,
					"cannot perform operation: an index build is currently running for collection %s.%s that also builds %s: name every index of the build to abort it", db, coll, ix.Name)
			}
		}
	}
	unlock()
	for len(abort) > 0 {
		i := 0
		for i < len(abort) && abort[i].build == abort[0].build {
			i++
		}
		if err := e.abortBuild(c, indexIDs(abort[:i])); err != nil {
			return was, err
		}
		abort = abort[i:]
	}
	if len(drop) == 0 {
		return was, nil
	}
	return was, e.retireIndexes(c, indexIDs(drop), statePublic, nil)
}

// DropsAllIndexes reports whether a dropIndexes of names drops every
// secondary index: MongoDB's dropReadyIndexes (and its abort of builds)
// looks at the first name only, so "*" or a list starting with "*" does.
func DropsAllIndexes(names []string) bool { return len(names) > 0 && names[0] == "*" }

// Listed are the indexes listIndexes shows, as MongoDB's: the public ones
// and those being built (not those being dropped), in the order they were
// created.
func (c *Collection) Listed() []*Index {
	out := append(slices.Clone(c.Indexes()), c.underConstruction()...)
	slices.SortFunc(out, func(a, b *Index) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// underConstruction are the indexes of c being built (not those being
// dropped), ordered by build.
func (c *Collection) underConstruction() []*Index {
	var out []*Index
	for _, ix := range c.Building() {
		if ix.build != 0 {
			out = append(out, ix)
		}
	}
	sortByBuild(out)
	return out
}

// sortByBuild orders indexes being built by build, keeping their order
// within one.
func sortByBuild(ixs []*Index) {
	slices.SortStableFunc(ixs, func(a, b *Index) int { return cmp.Compare(a.build, b.build) })
}

// splitBuilding splits ixs into the public indexes and those being built,
// the latter ordered by build.
func splitBuilding(ixs []*Index) (public, building []*Index) {
	for _, ix := range ixs {
		if ix.build != 0 {
			building = append(building, ix)
		} else {
			public = append(public, ix)
		}
	}
	sortByBuild(building)
	return public, building
}

// indexIDs are the ids of ixs, in order, each once (a name given twice).
func indexIDs(ixs []*Index) []uint32 {
	ids := make([]uint32, len(ixs))
	for i, ix := range ixs {
		ids[i] = ix.ID
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// abortBuild retires the indexes ids of one build under way on c from the
// state they are in. A build that moves on meanwhile is retired from its
// next state; one that ended first is dropped as a public index (as
// MongoDB drops the ready indexes a build it aborted left); one that
// another operation retired is left to it.
func (e *Engine) abortBuild(c *Collection, ids []uint32) error {
	for tries := 0; ; tries++ {
		cur := e.cat.get(c.DB, c.Name)
		if cur == nil || cur.ID != c.ID {
			return mongoerr.New(mongoerr.NamespaceNotFound, "collection %s.%s was dropped during the index change", c.DB, c.Name)
		}
		state, ok := statePublic, false
		for _, ix := range cur.Building() {
			if slices.Contains(ids, ix.ID) {
				state, ok = ix.state, true
			}
		}
		if !ok {
			var public []uint32
			for _, ix := range cur.Indexes() {
				if slices.Contains(ids, ix.ID) {
					public = append(public, ix.ID)
				}
			}
			if len(public) == 0 {
				return nil
			}
			ids = public
		}
		err := e.retireIndexes(cur, ids, state, abortedByDropIndexesCommand)
		if !errors.Is(err, errStateChanged) || tries == 3 {
			return err
		}
	}
}

// IndexChange is what collMod may change of an index: whether it is
// hidden, its TTL, whether it refuses new duplicates (prepareUnique), and
// whether it is unique. A nil field is left as it is.
type IndexChange struct {
	Hidden        *bool
	ExpireAfter   *int64
	PrepareUnique *bool
	// Unique converts the index to unique: it must refuse new duplicates
	// already and hold none. DryRun only checks that it holds none.
	Unique, DryRun bool
	// ForceNonUnique, true, makes a unique index non-unique (false is
	// BadValue); a non-unique index is left as it is.
	ForceNonUnique *bool
	// Combined reports that the collMod makes other modifications: a
	// change of prepareUnique must be made alone.
	Combined bool
	// Options, when set, is the change of the collection's options the
	// same collMod makes: applied in the same catalog change, and logged
	// in the same collMod entry after the index, as MongoDB's collMod is
	// one oplog entry whatever it changes (_collModInternal calls
	// OpObserver::onCollMod once).
	Options *ValidationChange
	// Ctx is the operation's context, which the scan for duplicates
	// checks.
	Ctx context.Context
}

// ModifyIndex applies change to the index of db.coll named name (or with
// key pattern key) and returns the index as it was and as it is now. As
// MongoDB, a change to what the index already is (hiding a hidden index,
// prepareUnique on a unique one) is a no-op; a conversion to unique of an
// index holding duplicates fails with CannotConvertIndexToUnique, listing
// the _ids of each group of documents that share a key (violations).
func (e *Engine) ModifyIndex(db, coll, name string, key bson.Raw, change IndexChange) (before, after *Index, err error) {
	e.cat.mu.Lock()
	c := e.cat.colls[nsKey(db, coll)]
	e.cat.mu.Unlock()
	if c == nil {
		return nil, nil, mongoerr.New(mongoerr.NamespaceNotFound, "ns does not exist: %s.%s", db, coll)
	}
	ixs := slices.Clone(c.Indexes())
	matches := func(ix *Index) bool {
		return name != "" && ix.Name == name || key != nil && SameKeyPattern(ix.keyPattern(), key)
	}
	at := slices.IndexFunc(ixs, matches)
	if at >= 0 && key != nil {
		if other := slices.IndexFunc(ixs[at+1:], matches); other >= 0 {
			return nil, nil, mongoerr.New(mongoerr.AmbiguousIndexKeyPattern,
				"index keyPattern %s matches %d indexes, must use index name. Conflicting indexes: %s, %s",
				key, 1+countFunc(ixs[at+1:], matches), ixs[at].Spec, ixs[at+1+other].Spec)
		}
	}
	if at < 0 && !c.Options.Clustered() && (name == idIndexName || key != nil && SameKeyPattern(key, idKeyPattern)) {
		before, after, err := modifyIDIndex(coll, change)
		if err == nil && change.Options != nil && !change.DryRun {
			// the _id index already is what change asks: the collMod
			// changes the options alone
			err = e.ModifyValidation(db, coll, *change.Options)
		}
		return before, after, err
	}
	if at < 0 {
		// named by its name, or by its key pattern
		if key != nil {
			return nil, nil, mongoerr.New(mongoerr.IndexNotFound, "cannot find index %s for ns %s.%s", key, db, coll)
		}
		return nil, nil, mongoerr.New(mongoerr.IndexNotFound, "cannot find index %s for ns %s.%s", name, db, coll)
	}
	before = ixs[at]
	if change.ExpireAfter != nil && before.ExpireAfter < 0 && !before.ttlKey() {
		return nil, nil, mongoerr.New(mongoerr.InvalidOptions, "TTL indexes are single-field indexes, compound indexes do not support TTL")
	}
	if change.Unique && !before.Unique && !before.PrepareUnique {
		return nil, nil, mongoerr.New(mongoerr.InvalidOptions, "Cannot make index unique with 'prepareUnique=false'. Run collMod to set it first.")
	}
	if change.Hidden != nil {
		if err := HidingRefused(coll); err != nil {
			return nil, nil, err
		}
	}
	if p := change.PrepareUnique; p != nil && *p != before.PrepareUnique && !before.Unique && change.Combined {
		return nil, nil, mongoerr.New(mongoerr.InvalidOptions, "prepareUnique cannot be combined with any other modification.")
	}
	if f := change.ForceNonUnique; f != nil {
		if !*f {
			return nil, nil, mongoerr.New(mongoerr.BadValue, "'forceNonUnique: false' is not supported")
		}
		if before.Unique && !before.idKeyed {
			// Its entries would each need the record id in their key.
			return nil, nil, mongoerr.New(mongoerr.NotImplemented, "Folio does not support the option 'forceNonUnique' of collMod.index on an index created unique (its entries are keyed by their values alone); only on one collMod made unique")
		}
	}
	if change.Unique && !before.Unique {
		if err := e.checkNoDuplicates(change.Ctx, c, before); err != nil {
			return nil, nil, err
		}
	}
	if change.DryRun {
		return before, before, nil
	}
	spec := storedSpec(before.Spec)
	if change.Hidden != nil {
		spec.Hidden = *change.Hidden
	}
	if change.ExpireAfter != nil {
		spec.ExpireAfter = *change.ExpireAfter
	}
	if change.PrepareUnique != nil && !before.Unique {
		spec.PrepareUnique = *change.PrepareUnique
	}
	if change.Unique && !before.Unique {
		// MongoDB clears prepareUnique once the index is unique.
		spec.Unique, spec.PrepareUnique = true, false
	}
	if change.ForceNonUnique != nil {
		// keyed with the record id already (checked above)
		spec.Unique = false
	}
	if after, err = newIndex(before.ID, spec); err != nil {
		if me := mongoerr.As(err); change.ExpireAfter != nil && me.Code == mongoerr.CannotCreateIndex {
			// an index kind that takes no TTL (text, wildcard)
			return nil, nil, mongoerr.New(mongoerr.InvalidOptions, "%s", me.Msg)
		}
		return nil, nil, err
	}
	after.idKeyed, after.crossKeys = before.idKeyed, before.crossKeys
	mod, old := indexCollModEntry(before, change)
	// hidden and the TTL concern readers and the TTL monitor only, and
	// writers check prepareUnique and unique on the catalog version they
	// write at: one catalog change, no states. A conversion to unique
	// needs none either: with prepareUnique on every frontend, no write
	// adds a duplicate after the check. A change to what the index
	// already is changes nothing but is logged, as MongoDB logs every
	// collMod.
	if _, err := e.changeIndexes(c, func(si *storedIndex) (bool, error) {
		if uint32(si.ID) == before.ID {
			if si.State != statePublic || !bytes.Equal(si.Spec, before.Spec) {
				return false, mongoerr.New(mongoerr.IndexNotFound, "index %s of %s.%s changed meanwhile", before.Name, db, coll)
			}
			si.Spec, si.IDKeyed = after.Spec, after.Unique && after.idKeyed
		}
		return true, nil
	}, nil, nil, func(tx storage.Txn, cur *Collection, ent *catalogEntry) error {
		o := bson.D{{Key: "collMod", Value: cur.Name}, {Key: "index", Value: mod}}
		before := cur.CurrentOptions()
		if change.Options != nil {
			opts, fields, err := cur.modifiedOptions(before, *change.Options)
			if err != nil {
				return err
			}
			ent.Options, o = opts, append(o, fields...)
		}
		return e.logCommand(tx, cur.DB, cur, o, collModO2(cur, before, old))
	}); err != nil {
		return nil, nil, err
	}
	if bytes.Equal(after.Spec, before.Spec) {
		return before, before, nil
	}
	return before, after, nil
}

// indexCollModEntry is the index document of the collMod entry of
// change to ix, as MongoDB's makeCollModCmdObj writes it (the index by
// its name, then the options changed: expireAfterSeconds as a long,
// hidden, unique, prepareUnique, forceNonUnique), and the entry's
// indexOptions_old, what
// ix was in the options change names (OpObserverImpl::onCollMod: a TTL
// only when the index had one).
func indexCollModEntry(ix *Index, change IndexChange) (mod, old bson.D) {
	mod, old = bson.D{{Key: "name", Value: ix.Name}}, bson.D{}
	if change.ExpireAfter != nil {
		mod = append(mod, bson.E{Key: "expireAfterSeconds", Value: *change.ExpireAfter})
		if ix.ExpireAfter >= 0 {
			old = append(old, bson.E{Key: "expireAfterSeconds", Value: ix.ExpireAfter})
		}
	}
	if change.Hidden != nil {
		mod = append(mod, bson.E{Key: "hidden", Value: *change.Hidden})
		old = append(old, bson.E{Key: "hidden", Value: ix.Hidden})
	}
	if change.Unique {
		mod = append(mod, bson.E{Key: "unique", Value: true})
	}
	if change.PrepareUnique != nil {
		mod = append(mod, bson.E{Key: "prepareUnique", Value: *change.PrepareUnique})
		old = append(old, bson.E{Key: "prepareUnique", Value: ix.PrepareUnique})
	}
	if change.ForceNonUnique != nil {
		// an entry without it would apply as a no-op (mongorestore
		// --oplogReplay, applyOps)
		mod = append(mod, bson.E{Key: "forceNonUnique", Value: *change.ForceNonUnique})
	}
	return mod, old
}

// modifyIDIndex is collMod's change to the _id index of coll, which it
// finds by name or key pattern as any other: it takes no TTL
// (InvalidOptions) and may not be hidden (BadValue); as it is unique,
// unique and prepareUnique change nothing; forceNonUnique is refused.
func modifyIDIndex(coll string, change IndexChange) (before, after *Index, err error) {
	if change.ExpireAfter != nil {
		return nil, nil, mongoerr.New(mongoerr.InvalidOptions, "the _id field does not support TTL indexes")
	}
	if change.Hidden != nil {
		if err := HidingRefused(coll); err != nil {
			return nil, nil, err
		}
		return nil, nil, mongoerr.New(mongoerr.BadValue, "can't hide _id index")
	}
	if f := change.ForceNonUnique; f != nil {
		if !*f {
			return nil, nil, mongoerr.New(mongoerr.BadValue, "'forceNonUnique: false' is not supported")
		}
		return nil, nil, mongoerr.New(mongoerr.NotImplemented, "Folio does not support the option 'forceNonUnique' of collMod.index on the _id index")
	}
	ix, err := newIndex(0, IndexSpec{Key: idKeyPattern, Name: idIndexName, Unique: true, ExpireAfter: -1})
	return ix, ix, err
}

// HidingRefused is MongoDB's refusal (BadValue) to hide or unhide an
// index of a system collection other than a time series' buckets, by
// createIndexes (given hidden at all) or collMod.
func HidingRefused(coll string) error {
	if strings.HasPrefix(coll, "system.") && !strings.HasPrefix(coll, timeseries.BucketsPrefix) {
		return mongoerr.New(mongoerr.BadValue, "Can't hide index on system collection")
	}
	return nil
}

// maxViolationBytes bounds the _ids a CannotConvertIndexToUnique error
// lists, as MongoDB bounds them (half the largest document, 16 MB).
const maxViolationBytes = 8 << 20

// checkNoDuplicates fails with CannotConvertIndexToUnique when two
// documents of c hold one key of ix (an index keyed with the record id):
// it reads the entries in order, and lists each run of entries of one key
// by the _ids of their documents, up to maxViolationBytes of _ids.
func (e *Engine) checkNoDuplicates(ctx context.Context, c *Collection, ix *Index) error {
	prefix := indexPrefix(c.ID, ix.ID)
	it, err := e.kv.NewIter(prefix, keyenc.PrefixEnd(prefix))
	if err != nil {
		return err
	}
	var runs [][][]byte // the record ids of each run of two or more
	var run [][]byte
	var prevKey []byte
	end := func() {
		if len(run) > 1 {
			runs = append(runs, run)
		}
		run = nil
	}
	for ok := it.First(); ok; ok = it.Next() {
		if err := mongoerr.Interruption(ctx); err != nil {
			return firstErr(err, it.Close())
		}
		k, encID := it.Key(), entryID(it.Value())
		if key := k[len(prefix) : len(k)-len(encID)]; !bytes.Equal(key, prevKey) {
			end()
			prevKey = append(prevKey[:0], key...)
		}
		run = append(run, slices.Clone(encID))
	}
	if err := firstErr(it.Error(), it.Close()); err != nil {
		return err
	}
	end()
	if len(runs) == 0 {
		return nil
	}
	msg := "Cannot convert the index to unique. Please resolve conflicting documents before running collMod again."
	violations, size := bson.A{}, 0
	var buf []byte
	for _, r := range runs {
		ids := bson.A{}
		for _, encID := range r {
			doc, found, err := getDoc(e.kv, docKeyFromEncodedID(c.ID, encID), &buf)
			if err != nil {
				return err
			}
			if !found {
				continue
			}
			id := doc.Lookup("_id")
			id.Value = slices.Clone(id.Value)
			if size += len(id.Value); size > maxViolationBytes {
				// at least one _id, as MongoDB
				if len(violations) == 0 && len(ids) == 0 {
					ids = append(ids, id)
				}
				if len(ids) > 0 {
					violations = append(violations, bson.D{{Key: "ids", Value: ids}})
				}
				msg = "Cannot convert the index to unique. Too many conflicting documents were detected. Please resolve them and rerun collMod."
				return cannotConvert(msg, violations)
			}
			ids = append(ids, id)
		}
		violations = append(violations, bson.D{{Key: "ids", Value: ids}})
	}
	return cannotConvert(msg, violations)
}

// cannotConvert is CannotConvertIndexToUnique with its violations, which
// the reply carries beside the message.
func cannotConvert(msg string, violations bson.A) error {
	me := mongoerr.New(mongoerr.CannotConvertIndexToUnique, "%s", msg)
	me.Extra = bson.D{{Key: "violations", Value: violations}}
	return me
}

// countFunc counts the indexes f selects.
func countFunc(ixs []*Index, f func(*Index) bool) int {
	n := 0
	for _, ix := range ixs {
		if f(ix) {
			n++
		}
	}
	return n
}

// joinPoll is how often a createIndexes waiting for the same build under
// way looks whether it ended.
const joinPoll = 2 * time.Millisecond

// resolveSpec gives spec the name, collation and text options the index
// it asks for is stored with, so that requests for one index compare equal
// however they spell it.
func resolveSpec(c *Collection, spec *IndexSpec) error {
	if spec.Name == "" {
		spec.Name = DefaultIndexName(spec.Key)
	}
	if err := resolveIndexCollation(c, spec); err != nil {
		return err
	}
	return fixTextSpec(spec)
}

// buildingSame reports whether an index of specs with the same name and
// definition is being built (or dropped), by this frontend or another,
// which the request then waits for: the catalog image shows its end, or
// the retirement of a build its frontend abandoned.
func buildingSame(c *Collection, specs []IndexSpec) bool {
	for _, spec := range specs {
		if resolveSpec(c, &spec) != nil {
			continue
		}
		for _, ix := range c.Building() {
			if ix.Name == spec.Name && sameSignature(ix, spec) {
				return true
			}
		}
	}
	return false
}
