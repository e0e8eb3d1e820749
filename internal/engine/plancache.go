package engine

import (
	"container/list"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// The plan cache remembers, per collection and query shape, which access
// path the multi-planner chose, as MongoDB's classic plan cache does
// (manual, "Query Plans"): a new shape's winner enters the cache inactive
// with the works its trial took; a later trial whose winner takes no more
// works makes the entry active (else the entry's works grow); an active
// entry's plan is used without a trial of the others, but is evicted to
// inactive and the query replanned when it needs more than
// cacheEvictionRatio times the entry's works to produce its first results.
// The cache holds the chosen index only: a cached query's bounds are built
// from its own values, and the index is still a candidate for it (the key
// records which indexes the query may use), so the cache never changes
// results. It is emptied when the collection's indexes change (the entries
// were made for another catalog) and by planCacheClear; a dropped or
// renamed collection's cache goes with its Collection.
const (
	cacheEvictionRatio      = 10   // internalQueryCacheEvictionRatio
	cacheWorksGrowth        = 2    // internalQueryCacheWorksGrowthCoefficient
	maxPlanCacheEntries     = 5000 // per collection; least recently used go first
	planCacheEntryOverheadB = 256  // estimatedSizeBytes beyond the shown documents
)

// planCache is one collection's plan cache; the zero value is empty.
type planCache struct {
	mu      sync.Mutex
	indexes *[]*Index // the index list the entries were made for
	entries map[string]*list.Element
	lru     list.List // of *planCacheEntry, most recently used first
	// filters are the index filters by shape (plancache_filters.go);
	// nfilters counts them, so that queries skip the lookup when none.
	filters  map[string]*indexFilter
	nfilters atomic.Int32
}

// planCacheEntry is the cached choice for one plan cache key.
type planCacheEntry struct {
	key       string // the full key (shape and usable indexes)
	cmdShape  string // the command shape (compiledFind.shapes)
	queryHash string
	cacheKey  string
	ix        *Index // the winner's index; nil: the document store
	// path is the path a wildcard winner scans: one wildcard index is a
	// candidate per queried path.
	path    string
	active  bool
	works   int64
	created time.Time
	// Shown by $planCacheStats: the query that made the entry, the
	// winner's plan, the trial's statistics and scores per candidate.
	createdFrom bson.D
	cachedPlan  bson.D
	execStats   bson.A
	scores      bson.A
}

// cachedChoice is what a lookup returns: a copy, read under the lock.
type cachedChoice struct {
	ix     *Index
	path   string
	active bool
	works  int64
	found  bool
}

// sync empties the cache if c's indexes changed since its entries were
// made. Called with mu held.
func (pc *planCache) sync(c *Collection) {
	if cur := c.indexes.Load(); pc.indexes != cur {
		pc.indexes = cur
		pc.entries = nil
		pc.lru.Init()
	}
}

// get returns the choice cached under key.
func (pc *planCache) get(c *Collection, key string) cachedChoice {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	pc.sync(c)
	el := pc.entries[key]
	if el == nil {
		return cachedChoice{}
	}
	pc.lru.MoveToFront(el)
	ent := el.Value.(*planCacheEntry)
	return cachedChoice{ix: ent.ix, path: ent.path, active: ent.active, works: ent.works, found: true}
}

// deactivate turns the entry under key inactive, keeping its works: its
// plan did not produce its results within the eviction budget.
func (pc *planCache) deactivate(c *Collection, key string) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	pc.sync(c)
	if el := pc.entries[key]; el != nil {
		el.Value.(*planCacheEntry).active = false
	}
}

// record applies a trial's outcome (ent: the winner and the works it
// took) to the entry under ent.key, by MongoDB's rules: a new entry is
// inactive; an inactive one becomes active with a winner taking no more
// works, else its works grow; an active one is replaced only by a winner
// taking fewer works.
func (pc *planCache) record(c *Collection, ent *planCacheEntry) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	pc.sync(c)
	el := pc.entries[ent.key]
	if el == nil {
		if pc.entries == nil {
			pc.entries = map[string]*list.Element{}
		}
		pc.entries[ent.key] = pc.lru.PushFront(ent)
		for pc.lru.Len() > maxPlanCacheEntries {
			last := pc.lru.Back()
			delete(pc.entries, last.Value.(*planCacheEntry).key)
			pc.lru.Remove(last)
		}
		return
	}
	pc.lru.MoveToFront(el)
	old := el.Value.(*planCacheEntry)
	switch {
	case !old.active && ent.works <= old.works, old.active && ent.works < old.works:
		ent.active = true
		ent.created = old.created
		el.Value = ent
	case !old.active:
		old.works = max(old.works*cacheWorksGrowth, old.works+1)
	}
}

// clear removes every entry (not the index filters).
func (pc *planCache) clear() {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	pc.entries = nil
	pc.lru.Init()
}

// clearShape removes the entries of one command shape (every key made
// from a query of that shape, whichever indexes it could use).
func (pc *planCache) clearShape(c *Collection, cmdShape string) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	pc.sync(c)
	for key, el := range pc.entries {
		if el.Value.(*planCacheEntry).cmdShape == cmdShape {
			delete(pc.entries, key)
			pc.lru.Remove(el)
		}
	}
}

// stats lists the entries as $planCacheStats shows them (but for the
// host), most recently used first.
func (pc *planCache) stats(c *Collection) []bson.D {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	pc.sync(c)
	var out []bson.D
	for el := pc.lru.Front(); el != nil; el = el.Next() {
		ent := el.Value.(*planCacheEntry)
		doc := bson.D{
			{Key: "version", Value: "1"},
			{Key: "queryHash", Value: ent.queryHash},
			{Key: "planCacheKey", Value: ent.cacheKey},
			{Key: "isActive", Value: ent.active},
			{Key: "works", Value: ent.works},
			{Key: "timeOfCreation", Value: bson.NewDateTimeFromTime(ent.created)},
			{Key: "createdFromQuery", Value: ent.createdFrom},
			{Key: "cachedPlan", Value: ent.cachedPlan},
			{Key: "creationExecStats", Value: ent.execStats},
			{Key: "candidatePlanScores", Value: ent.scores},
			{Key: "indexFilterSet", Value: pc.filters[ent.cmdShape] != nil},
		}
		size := int64(planCacheEntryOverheadB + len(ent.key))
		if raw, err := bson.Marshal(doc); err == nil {
			size += int64(len(raw))
		}
		doc = append(doc, bson.E{Key: "estimatedSizeBytes", Value: size})
		out = append(out, doc)
	}
	return out
}
