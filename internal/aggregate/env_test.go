package aggregate

import (
	"maps"
	"slices"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/keyenc"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/timeseries"
	"github.com/folio-db/folio/internal/values"
)

// memEnv is an in-memory Env: collections are lists of documents kept in
// _id order, as the engine returns them. Besides _id, it keeps the unique
// indexes a case declares, as sets of top-level fields (simple collation).
type memEnv struct {
	mu     sync.Mutex
	colls  map[string][]bson.Raw        // by "db.coll"
	unique map[string][]map[string]bool // by "db.coll"
	// views are the stages of views, by "db.coll", which only the parse
	// reads (ResolveView): Find reads no views.
	views map[string][]bson.Raw
	// bases are the collections views read, by "db.view".
	bases map[string]string
}

func newMemEnv() *memEnv {
	return &memEnv{colls: map[string][]bson.Raw{}, unique: map[string][]map[string]bool{}, views: map[string][]bson.Raw{}, bases: map[string]string{}}
}

// declareUnique declares unique indexes of db.coll by their key patterns.
func (m *memEnv) declareUnique(db, coll string, keys []bson.Raw) {
	for _, k := range keys {
		fields := map[string]bool{}
		for _, f := range fieldsOf(k) {
			fields[f.key] = true
		}
		m.unique[db+"."+coll] = append(m.unique[db+"."+coll], fields)
	}
}

// duplicate reports whether d has the values of a declared unique index's
// fields that a document of docs has.
func (m *memEnv) duplicate(ns string, docs []bson.Raw, d bson.Raw) bool {
	for _, fields := range m.unique[ns] {
		for _, o := range docs {
			same := true
			for f := range fields {
				same = same && values.Equal(o.Lookup(f), d.Lookup(f))
			}
			if same {
				return true
			}
		}
	}
	return false
}

func (m *memEnv) HasUniqueKeyIndex(db, coll string, paths []string, c *collation.Collator) bool {
	want := map[string]bool{}
	for _, p := range paths {
		want[p] = true
	}
	if len(want) == 1 && want["_id"] && c == nil {
		return true
	}
	for _, fields := range m.unique[db+"."+coll] {
		if c == nil && maps.Equal(fields, want) {
			return true
		}
	}
	return false
}

// Counted is m: its reads examine no index or key, and are not counted.
func (m *memEnv) Counted(*ScanFigures) Env { return m }

func (m *memEnv) Find(db, coll string, filter bson.Raw, c *collation.Collator) (Source, error) {
	f, err := query.CompileCollated(filter, nil, c)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []bson.Raw
	for _, d := range m.colls[db+"."+coll] {
		if f.Match(d) {
			out = append(out, d)
		}
	}
	return &SliceSource{Docs: out}, nil
}

// FindNear: memEnv keeps no indexes, so a $geoNear finds no geo index,
// as on a collection without one.
func (m *memEnv) FindNear(db, coll string, g *GeoNear, c *collation.Collator) (Source, error) {
	return nil, mongoerr.New(mongoerr.IndexNotFound, "$geoNear requires a 2d or 2dsphere index, but none were found")
}

func idKey(doc bson.Raw) string { return string(keyenc.Encode(doc.Lookup("_id"))) }

func (m *memEnv) Insert(db, coll string, docs []bson.Raw, ordered bool) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ns := db + "." + coll
	cur, ok := m.colls[ns]
	if !ok {
		m.colls[ns] = nil
	}
	failed, ferr := -1, error(nil)
	for j, d := range docs {
		if _, err := d.LookupErr("_id"); err != nil {
			d = buildDoc(append([]field{{"_id", newObjectID()}}, fieldsOf(d)...))
		}
		k := idKey(d)
		i, found := slices.BinarySearchFunc(cur, k, func(e bson.Raw, k string) int {
			switch ek := idKey(e); {
			case ek < k:
				return -1
			case ek > k:
				return 1
			}
			return 0
		})
		if found || m.duplicate(ns, cur, d) {
			if ferr == nil {
				failed, ferr = j, mongoerr.New(mongoerr.DuplicateKey, "E11000 duplicate key error collection: %s", ns)
			}
			if ordered {
				break
			}
			continue
		}
		cur = slices.Insert(cur, i, d)
		m.colls[ns] = cur
	}
	return failed, ferr
}

func (m *memEnv) Replace(db, coll string, id bson.RawValue, doc bson.Raw, _ bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	ns := db + "." + coll
	k := string(keyenc.Encode(id))
	for i, d := range m.colls[ns] {
		if idKey(d) == k {
			if _, err := doc.LookupErr("_id"); err != nil {
				doc = buildDoc(append([]field{{"_id", id}}, fieldsOf(doc)...))
			}
			m.colls[ns][i] = doc
		}
	}
	return nil
}

func (m *memEnv) DropCollection(db, coll string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.colls, db+"."+coll)
	return nil
}

// CheckOutput takes every target: the in-memory environment has no views.
func (m *memEnv) CheckOutput(string, string, string) error { return nil }

// Out writes aside into db.tmp.agg_out, created empty with the target's
// unique indexes (the in-memory collections have no other options or
// indexes), renamed over the target by Commit. It has no time series
// collections.
func (m *memEnv) Out(db, coll string, ts *timeseries.Options) (Output, error) {
	if ts != nil {
		return nil, mongoerr.New(mongoerr.NotImplemented, "the in-memory Env has no time series collections")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	tmp := db + ".tmp.agg_out"
	m.colls[tmp] = nil
	m.unique[tmp] = slices.Clone(m.unique[db+"."+coll])
	return &memOutput{m: m, db: db, tmp: "tmp.agg_out", target: coll}, nil
}

// memOutput is memEnv's Output.
type memOutput struct {
	m               *memEnv
	db, tmp, target string
}

func (o *memOutput) Write(docs []bson.Raw) error {
	_, err := o.m.Insert(o.db, o.tmp, docs, true)
	return err
}

func (o *memOutput) Commit() error {
	o.m.mu.Lock()
	defer o.m.mu.Unlock()
	o.m.colls[o.db+"."+o.target] = o.m.colls[o.db+"."+o.tmp]
	o.m.unique[o.db+"."+o.target] = o.m.unique[o.db+"."+o.tmp]
	delete(o.m.colls, o.db+"."+o.tmp)
	return nil
}

func (o *memOutput) Abort() { _ = o.m.DropCollection(o.db, o.tmp) }

func (m *memEnv) CollectionStats(db, coll string, scale int64) (CollStats, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	docs, ok := m.colls[db+"."+coll]
	if !ok {
		return CollStats{}, mongoerr.New(mongoerr.NamespaceNotFound, "Collection [%s.%s] not found.", db, coll)
	}
	st := CollStats{Count: int64(len(docs))}
	var size int64
	for _, d := range docs {
		size += int64(len(d))
	}
	st.Storage, _ = bson.Marshal(bson.D{{Key: "size", Value: size / scale}, {Key: "count", Value: st.Count}})
	idSpec, _ := bson.Marshal(bson.D{{Key: "v", Value: int32(2)}, {Key: "key", Value: bson.D{{Key: "_id", Value: int32(1)}}}, {Key: "name", Value: "_id_"}})
	st.Indexes = []IndexStat{{Spec: idSpec}}
	return st, nil
}

func (m *memEnv) ResolveView(db, coll string) (string, []bson.Raw, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	stages, ok := m.views[db+"."+coll]
	if !ok {
		return coll, nil, false, nil
	}
	return m.bases[db+"."+coll], stages, true, nil
}

// PlanCacheStats: the in-memory Env plans nothing, so its caches are empty.
// CollectionScans: the in-memory Env counts no scans.
func (m *memEnv) CollectionScans(db, coll string) (int64, int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.colls[db+"."+coll]; !ok {
		return 0, 0, mongoerr.New(mongoerr.NamespaceNotFound, "Collection [%s.%s] not found.", db, coll)
	}
	return 0, 0, nil
}

// LatencyStats: an in-memory environment times nothing.
func (m *memEnv) LatencyStats(db, coll string, histograms bool) bson.Raw {
	return bson.Raw{5, 0, 0, 0, 0}
}

func (m *memEnv) PlanCacheStats(db, coll string) ([]bson.Raw, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.colls[db+"."+coll]; !ok {
		return nil, mongoerr.New(mongoerr.PlanCacheStatsNoCollection, "collection '%s.%s' does not exist", db, coll)
	}
	return nil, nil
}
