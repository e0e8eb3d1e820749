package engine

import (
	"context"
	"sync/atomic"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/planner"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/storage"
)

// OpStats count an operation's work as explain's executionStats, the
// profiler and the slow-operation log report it: the keys and documents
// its scans examined (the plan trials' included, as in MongoDB) and the
// first plan it ran. An operation's scans run on its goroutine, so the
// counts need no synchronization; a cursor's scans go on counting into the
// OpStats of the operation that opened it.
type OpStats struct {
	KeysExamined int64
	DocsExamined int64
	// KeysInserted and KeysDeleted are the index keys added and removed by
	// the operation's committed writes outside a transaction (update,
	// delete, findAndModify, upsert, insert; not yet a transaction's), a
	// new or removed document's _id index key included:
	// MongoDB's _id index holds one, where Folio keeps the document itself
	// by _id. Inserted and
	// Deleted report that a write could add or remove keys (an insert or
	// an update; an update or a delete), as MongoDB's OpDebug shows the
	// counts only then.
	KeysInserted, KeysDeleted int64
	Inserted, Deleted         bool
	// OpTime is the stamp of the latest commit of the operation's writes
	// made under its context (retry, Txn.CommitRecorded): the time of the
	// last oplog entry they wrote, which MongoDB replies with as the
	// write's operationTime. 0 when they logged none.
	OpTime uint64
	// How the first plan was chosen and run, as MongoDB's PlanSummaryStats
	// report it to the profiler: by a trial among candidates
	// (MultiPlanned), from the plan cache (FromPlanCache), by a trial
	// after the cached plan fell short (ReplanReason says why); SortStage
	// reports that its results were sorted in memory (a blocking sort).
	MultiPlanned, FromPlanCache, SortStage bool
	ReplanReason                           string

	plan      *planner.Plan
	clustered bool
	count     bool
	// first is the operation's first query, as MongoDB's OpDebug records
	// it (get_executor.cpp, PrepareExecutionHelper::prepare; the first
	// only, an outer pipeline's over its inner queries').
	first firstQuery
	// live, when set, is shown the first plan as the operation starts
	// it (Publish).
	live *LivePlan
}

// LivePlan shows an operation's first plan to other goroutines while the
// operation runs, as MongoDB's CurOp holds the planSummary currentOp
// reports of a running operation. It is set once; a reader sees the plan
// or nothing.
type LivePlan struct {
	plan atomic.Pointer[planner.Plan]
	// flags are the plan's clustered (1) and count (2) bits, stored
	// before plan.
	flags atomic.Uint32
}

// Summary is the planSummary of the plan l holds, empty before one.
func (l *LivePlan) Summary() string {
	p := l.plan.Load()
	if p == nil {
		return ""
	}
	f := l.flags.Load()
	return p.Summary(f&1 != 0, f&2 != 0)
}

// set records p unless l holds a plan already.
func (l *LivePlan) set(p *planner.Plan, clustered, count bool) {
	if l == nil || p == nil || l.plan.Load() != nil {
		return
	}
	var f uint32
	if clustered {
		f |= 1
	}
	if count {
		f |= 2
	}
	l.flags.Store(f)
	l.plan.Store(p)
}

// Publish makes l show the first plan of s: the one s ran already, or
// the next it runs. The stats of a statement that replace s for a while
// (the profiler's) report theirs when added back (Add).
func (s *OpStats) Publish(l *LivePlan) {
	s.live = l
	l.set(s.plan, s.clustered, s.count)
}

// PublishTo shows s's first plan in l, when it has one: a getMore's
// operation shows its cursor's.
func (s *OpStats) PublishTo(l *LivePlan) {
	l.set(s.plan, s.clustered, s.count)
}

type opStatsKey struct{}

// WithOpStats returns ctx carrying st: the scans of an operation run
// under the result count their work into st; with st nil they count it
// nowhere (an operation's reads of the catalog, such as a view's
// definition).
func WithOpStats(ctx context.Context, st *OpStats) context.Context {
	return context.WithValue(ctx, opStatsKey{}, st)
}

// opStatsOf is the OpStats ctx carries, or a fresh one (also when ctx
// carries nil: work not to be counted).
func opStatsOf(ctx context.Context) *OpStats {
	if st := opStatsIn(ctx); st != nil {
		return st
	}
	return &OpStats{}
}

// noteCommit records in ctx's OpStats the time of the last oplog entry
// tx, just committed, wrote.
func noteCommit(ctx context.Context, tx storage.Txn) {
	st, ok := tx.(storage.StampedTxn)
	if !ok {
		return
	}
	if stamp := st.CommitStamp(); stamp != 0 {
		if s := opStatsIn(ctx); s != nil {
			s.OpTime = max(s.OpTime, stamp)
		}
	}
}

// opStatsIn is the OpStats ctx carries, nil when none.
func opStatsIn(ctx context.Context) *OpStats {
	if ctx == nil {
		return nil
	}
	st, _ := ctx.Value(opStatsKey{}).(*OpStats)
	return st
}

// idKeyRead counts the _id index key MongoDB examines to find a document
// by its _id (IDHACK, or an IXSCAN of the _id index: one key when the
// document is there), which Folio, keeping documents by _id, reads with
// the document itself; a clustered collection has no such key.
func (s *OpStats) idKeyRead(clustered bool) {
	if !clustered {
		s.KeysExamined++
	}
}

// wrote counts a committed change of one document from old to next (nil
// for absent) that added and removed the index entries of ch.
func (s *OpStats) wrote(old, next bson.Raw, ch indexChanges) {
	if s == nil {
		return
	}
	s.KeysInserted += int64(len(ch.puts))
	s.KeysDeleted += int64(len(ch.dels))
	switch {
	case old == nil:
		s.KeysInserted++
		s.Inserted = true
	case next == nil:
		s.KeysDeleted++
		s.Deleted = true
	default:
		s.Inserted, s.Deleted = true, true
	}
}

// ran records that the operation runs p on c (a count when count is set):
// the first plan is the one reported, and each counts as a use of the
// indexes it reads ($indexStats).
func (s *OpStats) ran(c *Collection, p *planner.Plan, count bool) {
	if s.plan == nil {
		s.plan, s.clustered, s.count = p, c.Clustered(), count
		s.live.set(p, s.clustered, count)
	}
	if p.Or == nil {
		c.used(p)
	}
	for _, sp := range p.Or {
		c.used(sp)
	}
}

// used counts a use of the index scan p reads: one of c's, or its _id
// index (a scan of the documents by _id ranges); a collection scan reads
// none, and is counted as one.
func (c *Collection) used(p *planner.Plan) {
	switch {
	case p.Index != nil:
		indexOf(p).usage.ops.Add(1)
	case p.Intervals != nil:
		c.idUsage.ops.Add(1)
	default:
		c.scans.add(false)
	}
}

// PlanSummary is MongoDB's planSummary of the operation's first plan
// (COLLSCAN, IXSCAN { a: 1 }, ...); empty when it ran none.
func (s *OpStats) PlanSummary() string {
	if s.plan == nil {
		return ""
	}
	return s.plan.Summary(s.clustered, s.count)
}

// FirstPlanReads is what the operation's first plan reads, as MongoDB's
// plan summary reports it: the names of the indexes it uses, and whether
// it scans the collection; neither when it ran none (a missing
// collection).
func (s *OpStats) FirstPlanReads() (indexes []string, collectionScan bool) {
	if s.plan == nil {
		return nil, false
	}
	return s.plan.IndexesUsed(s.clustered), s.plan.CollectionScan(s.clustered)
}

// Add adds o's counts to s, and o's plan and first query when s has none.
func (s *OpStats) Add(o OpStats) {
	s.KeysExamined += o.KeysExamined
	s.DocsExamined += o.DocsExamined
	s.KeysInserted += o.KeysInserted
	s.KeysDeleted += o.KeysDeleted
	s.Inserted, s.Deleted = s.Inserted || o.Inserted, s.Deleted || o.Deleted
	s.OpTime = max(s.OpTime, o.OpTime)
	if !s.first.noted {
		s.first = o.first
	}
	if s.plan == nil {
		s.plan, s.clustered, s.count = o.plan, o.clustered, o.count
		s.MultiPlanned, s.FromPlanCache, s.SortStage, s.ReplanReason = o.MultiPlanned, o.FromPlanCache, o.SortStage, o.ReplanReason
		s.live.set(s.plan, s.clustered, s.count)
	}
}

// Since is the work done since before, a copy of s taken earlier.
func (s *OpStats) Since(before OpStats) OpStats {
	d := *s
	d.KeysExamined -= before.KeysExamined
	d.DocsExamined -= before.DocsExamined
	d.KeysInserted -= before.KeysInserted
	d.KeysDeleted -= before.KeysDeleted
	return d
}

// firstQuery is the query whose queryHash, on an existing collection, and
// planCacheKey (cached), when the plan cache takes the query
// (PlanCache::shouldCacheQuery) and no IDHACK serves it, an operation's
// record shows. Its parts are kept, not its hashes, which are computed
// only for a record that shows them (OpStats.QueryHashes). noted is set
// once the first query is known: one planned, or one MongoDB serves
// without a canonical query (coll nil: no hashes).
type firstQuery struct {
	noted, strict, cached bool
	coll                  *Collection
	filter                *query.Filter
	sort, proj            bson.Raw
}

// noteQuery records q, planned on c with hint, as s's first query unless
// s has one (or is nil, or q is an explain's: Folio's explain reports its
// plan in its output, not in its operation's record); it reports whether
// it did.
func (s *OpStats) noteQuery(c *Collection, q compiledFind, hint bson.RawValue) bool {
	if s == nil || s.first.noted || q.explain {
		return false
	}
	s.first = firstQuery{noted: true, strict: q.strict, cached: cacheable(q, hint), coll: c, filter: q.filter, sort: q.sortDoc, proj: q.projDoc}
	return true
}

// noteUnplanned records that the operation's first query is one MongoDB
// serves without preparing a canonical query (an IDHACK write by _id, a
// count read from the record store's count), which has no hashes.
func (s *OpStats) noteUnplanned() {
	if s != nil && !s.first.noted {
		s.first.noted = true
	}
}

// cacheable is MongoDB's PlanCache::shouldCacheQuery for q and hint: not
// an unsorted query on every document, nor one with a hint, min or max.
// (An explain's, or a tailable cursor's, is not cached either: noteQuery
// records no explain, Tail clears the flag.)
func cacheable(q compiledFind, hint bson.RawValue) bool {
	return !(matchesAll(q.filter) && len(q.sortDoc) <= 5) && !hinted(hint) && len(q.min) <= 5 && len(q.max) <= 5
}

// matchesAll reports whether f has no condition (an empty $and).
func matchesAll(f *query.Filter) bool {
	r := f.Root()
	return r.Kind == query.KindAnd && len(r.Children) == 0
}

// hinted reports whether a command's hint names an index or a document
// that is not empty, as MongoDB's planner reads one.
func hinted(hint bson.RawValue) bool {
	return hint.Type == bson.TypeString || hint.Type == bson.TypeEmbeddedDocument && len(hint.Value) > 5
}

// QueryHashes are the queryHash and planCacheKey of the operation's first
// query as the profiler and the slow-operation log show them, the values
// its explain shows (identify); "" for each it has none of.
func (s *OpStats) QueryHashes() (queryHash, planCacheKey string) {
	fq := &s.first
	if fq.coll == nil {
		return "", ""
	}
	id := identify(fq.coll, compiledFind{filter: fq.filter, sortDoc: fq.sort, projDoc: fq.proj, strict: fq.strict})
	if !fq.cached {
		return id.queryHash, ""
	}
	return id.queryHash, id.cacheKey
}
