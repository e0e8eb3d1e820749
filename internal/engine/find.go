package engine

import (
	"context"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/aggregate"
	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/planner"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/storage"
)

// DefaultSortMemoryLimit is MongoDB's in-memory sort limit (100 MiB,
// internalQueryMaxBlockingSortMemoryUsageBytes).
const DefaultSortMemoryLimit = 100 * 1024 * 1024

// SortMemoryLimit is the memory one in-memory sort of a find may use
// (internalQueryMaxBlockingSortMemoryUsageBytes).
func (e *Engine) SortMemoryLimit() int64 { return e.sortLimit.Load() }

// SetSortMemoryLimit changes the memory one in-memory sort of a find may
// use; sorts that start afterwards obey it.
func (e *Engine) SetSortMemoryLimit(n int64) { e.sortLimit.Store(n) }

// FindOptions describe a find: all documents matching Filter, ordered by
// Sort, past Skip, at most Limit (0: no limit), shaped by Projection. Hint
// names an index (by name or key pattern) to use.
type FindOptions struct {
	Filter       bson.Raw
	Sort         bson.Raw
	Projection   bson.Raw
	Hint         bson.RawValue
	Skip         int64
	Limit        int64
	AllowDiskUse bool
	// Txn, when set, reads the transaction's view.
	Txn *Txn
	// Let is the command's let variables, for the filter's $expr and the
	// projection's computed fields.
	Let *expr.Let
	// Ctx is the operation's context: the scan stops with its
	// interruption's error (killOp, maxTimeMS, disconnect, shutdown). Nil
	// never ends.
	Ctx context.Context
	// Collation is the command's collation document; nil applies the
	// collection's default.
	Collation bson.Raw
	// GeoNear, when set, is a leading $geoNear stage's search, which
	// replaces Filter (geoNearFilter).
	GeoNear *aggregate.GeoNear
	// Min and Max bound the keys of the hinted index the find reads
	// (planKeyRange); nil or empty leaves that end open.
	Min, Max bson.Raw
	// TextScores reports that a later stage reads the $text scores the
	// scan gives its documents (aggregate.Pushdown.TextScores), as a
	// projection or sort of them does.
	TextScores bool
	// GroupKey, when set, is the key path of a $group by it alone that the
	// documents feed (aggregate.Pushdown.GroupKey): when a distinct scan
	// of an index holding each value whole serves the filter (MongoDB's
	// DISTINCT_SCAN under a $groupByDistinctScan), the find yields one
	// document per value, {key: value} (groupDistinct).
	GroupKey string
	// Counted reports that no one reads the documents' contents
	// (aggregate.Pushdown.Counted): when the plan's keys alone decide the
	// filter (planner.Plan.CountScan), the find counts them as a count
	// does and yields that many empty documents, as MongoDB's planner
	// turns the scan into a COUNT_SCAN under QueryPlannerParams::IS_COUNT.
	Counted bool
	// IndexKeys gives the documents the keys of the index entries they
	// were found through (docsrc.Meta.IndexKey), for a later stage's
	// {$meta: "indexKey"}; a projection reading it asks for them itself.
	IndexKeys bool
	// ReturnKey is find's returnKey: each document becomes its index key,
	// {} without one (query.ReturnKey).
	ReturnKey bool
	// ShowRecordID is find's showRecordId: each document ends with its
	// record id as $recordId (query.ShowRecordID), unless ReturnKey.
	ShowRecordID bool
	// RecordIDs gives the documents their record ids
	// (docsrc.Meta.RecordID), for a later stage's {$meta: "recordId"}; a
	// projection reading it asks for them itself.
	RecordIDs bool
	// SortKeys gives the documents their keys in Sort
	// (docsrc.Meta.SortKey), for a later stage's {$meta: "sortKey"}, as
	// MongoDB's SORT stage adds them when the pipeline it runs for reads
	// them; a projection reading them asks for them itself.
	SortKeys bool
	// ResumeToken is find's $_requestResumeToken, on a forward natural
	// scan: its cursor reports the record its scan reached
	// (resumeCursor). ResumeAfter, when set, is $_resumeAfter's $recordId:
	// the scan starts after that record (startAfter).
	ResumeToken bool
	ResumeAfter bson.RawValue
	// ExecutorContext is written before the errors of the sort Find runs
	// as it opens the cursor, which the command's executor raises in
	// MongoDB: FindExecutorContext when empty, the aggregate's for a
	// pipeline's leading $sort.
	ExecutorContext string
	// explaining is set for an explain's run, whose errors MongoDB
	// reports as its executor raised them, without a command's context.
	explaining bool
}

// inExecutorContext is err with o.ExecutorContext (FindExecutorContext
// by default) written before its message; an explain's run adds none.
func (o FindOptions) inExecutorContext(err error) error {
	if err == nil || o.explaining {
		return err
	}
	if o.ExecutorContext != "" {
		return mongoerr.AddContext(err, o.ExecutorContext)
	}
	return mongoerr.AddContext(err, FindExecutorContext)
}

// wanted is how many matches the find reads: skip plus limit, or 0 for
// all of them.
func (o FindOptions) wanted() int64 {
	if o.Limit > 0 {
		return o.Skip + o.Limit
	}
	return 0
}

// Cursor is the one document stream (docsrc.Source): the documents of a
// read.
type Cursor = docsrc.Source

// compiledFind is a find whose filter, sort and projection compiled.
type compiledFind struct {
	filter *query.Filter
	sort   *query.Sort
	proj   *query.Projection
	// sortDoc and projDoc are the sort and projection as written, for
	// the query's shape and the planner's covered projections.
	sortDoc, projDoc bson.Raw
	// explain plans without the plan cache.
	explain bool
	// textScore reports that the projection or sort needs $text scores,
	// indexKeys and recordIDs that the documents carry their index keys
	// and record ids.
	textScore, indexKeys, recordIDs bool
	// sortKeys is the sort whose keys the documents carry (nil: none).
	sortKeys *query.Sort
	// min and max are the find's key bounds (FindOptions.Min, Max).
	min, max bson.Raw
	// noIDHack: a skip or showRecordId (planner.Query.NoIDHack).
	noIDHack bool
	// keysOnly: returnKey with no sortKey field, which reads nothing of
	// the documents (planner.Query.KeysOnly).
	keysOnly bool
	// allowDiskUse: an in-memory sort may spill rather than fail past
	// its memory limit (FindOptions.AllowDiskUse).
	allowDiskUse bool
	// skip and limit are the find's; keepTrial asks a trial to keep the
	// winner's source for the find to continue (trialResult.cont).
	skip, limit int64
	keepTrial   bool
	// inheritedCollation: the filter follows the collection's default
	// collation, the command having named none; the plan cache commands'
	// shape of the query leaves it out (compiledFind.shapes).
	inheritedCollation bool
	// strict is set when the operation runs under apiStrict: planFind
	// reads it from its context (apistrict.go).
	strict bool
}

// compileFind compiles a find on c (nil when missing), under the
// command's collation or c's default.
func compileFind(o FindOptions, c *Collection) (compiledFind, error) {
	q := compiledFind{sortDoc: o.Sort, projDoc: o.Projection, min: o.Min, max: o.Max, noIDHack: o.Skip > 0 || o.ShowRecordID, allowDiskUse: o.AllowDiskUse, skip: o.Skip, limit: o.Limit}
	if o.GeoNear != nil {
		f, err := geoNearFilter(c, o.GeoNear)
		if err != nil {
			return q, err
		}
		o.Filter = f
	}
	coll, err := CommandCollator(c, o.Collation)
	if err != nil {
		return q, err
	}
	q.inheritedCollation = coll != nil && !namesCollation(o.Collation)
	if q.filter, err = query.CompileCollated(o.Filter, o.Let, coll); err != nil {
		return q, err
	}
	if err := checkNearNatural(q.filter, o.Sort, o.Hint); err != nil {
		return q, err
	}
	if len(o.Sort) > 0 {
		if err := checkNaturalSort(o.Sort, o.Hint); err != nil {
			return q, err
		}
		if q.sort, err = query.CompileSort(o.Sort); err != nil {
			return q, err
		}
		if coll != nil {
			q.sort = q.sort.Collated(coll)
		}
	}
	if len(o.Projection) > 0 {
		if q.proj, err = query.CompileProjectionLet(o.Projection, o.Let, coll); err != nil {
			return q, err
		}
	}
	if projSortKey := q.proj != nil && q.proj.NeedsMeta("sortKey"); projSortKey || o.SortKeys {
		if projSortKey && len(o.Sort) == 0 {
			return q, mongoerr.New(mongoerr.BadValue, "cannot use sortKey $meta projection without a sort")
		}
		if coll != nil {
			return q, errSortKeyCollation()
		}
		// The keys are read from the whole document: no covered plan.
		q.sortKeys, q.projDoc = q.sort, nil
	}
	if err := checkGeoNearMeta(q); err != nil {
		return q, err
	}
	if o.ReturnKey {
		// Nothing of the projection is answered: no covered plan, but
		// one reading only the keys when no sortKey field needs the
		// documents.
		q.proj, q.projDoc = query.ReturnKey(q.proj), nil
		q.keysOnly = q.sortKeys == nil
	}
	q.textScore = o.TextScores || q.sort != nil && q.sort.NeedsTextScore() || q.proj != nil && q.proj.NeedsTextScore()
	if o.ShowRecordID && !o.ReturnKey {
		// MongoDB adds showRecordId's {$recordId: {$meta: "recordId"}}
		// to the projection, which returnKey replaces. The record id is
		// not in an index's keys: no covered plan.
		q.proj, q.projDoc = query.ShowRecordID(q.proj), nil
	}
	q.indexKeys = o.IndexKeys || q.proj != nil && q.proj.NeedsMeta("indexKey")
	q.recordIDs = o.RecordIDs || o.ResumeToken || q.proj != nil && q.proj.NeedsMeta("recordId")
	return q, nil
}

// checkGeoNearMeta is MongoDB's refusal (CanonicalQuery::isValid has the
// $geoNear metadata unavailable without a $near; DepsTracker's 40218) of
// a projection, then a sort, reading the $geoNear distance or point in a
// find whose filter has no $near or $nearSphere.
func checkGeoNearMeta(q compiledFind) error {
	dist := q.proj != nil && q.proj.NeedsMeta("geoNearDistance")
	point := q.proj != nil && q.proj.NeedsMeta("geoNearPoint")
	sortDist := q.sort != nil && q.sort.NeedsGeoNearDistance()
	if !dist && !point && !sortDist {
		return nil
	}
	if near, _ := q.filter.GeoNear(); near != nil {
		return nil
	}
	what := "$geoNear distance"
	if !dist && point {
		what = "$geoNear point"
	}
	return mongoerr.New(mongoerr.TextScoreUnavailable, "query requires %s metadata, but it is not available", what)
}

// errSortKeyCollation refuses {$meta: "sortKey"} under a collation: MongoDB
// shows ICU's sort key bytes in place of strings, which Folio's collation
// keys are not.
func errSortKeyCollation() error {
	return mongoerr.New(mongoerr.NotImplemented, "Folio does not support {$meta: \"sortKey\"} with a collation yet")
}

// planFind chooses the plan of a find on c (reading txn's view, if any),
// by the plan cache or a trial run when several qualify (see choosePlan),
// and returns it with the trial that chose it over the other candidates
// (nil when none competed).
//
// The operation's first query is recorded (OpStats.noteQuery) once it
// passes the checks of MongoDB's canonical query, which come before
// planning; an IDHACK leaves it without a planCacheKey, as MongoDB takes
// one before it looks at the plan cache.
func (e *Engine) planFind(ctx context.Context, c *Collection, q compiledFind, hint bson.RawValue, txn *Txn, limit int64) (*planner.Plan, *trialResult, error) {
	q.strict = apiStrictIn(ctx)
	ts, err := checkTextQuery(q, hint)
	if err != nil {
		return nil, nil, err
	}
	st := opStatsIn(ctx)
	first := st.noteQuery(c, q, hint)
	p, trial, err := e.planChecked(ctx, c, q, ts, hint, txn, limit)
	if first && p != nil && p.IDHack() && !c.Clustered() {
		st.first.cached = false
	}
	return p, trial, err
}

// planChecked is planFind past the checks of the query, ts its $text.
func (e *Engine) planChecked(ctx context.Context, c *Collection, q compiledFind, ts *query.TextSearch, hint bson.RawValue, txn *Txn, limit int64) (*planner.Plan, *trialResult, error) {
	h, err := resolveHint(c, hint, q.strict)
	if err != nil {
		return nil, nil, err
	}
	if q.keyRange() {
		p, err := planKeyRange(c, q, h)
		return p, nil, err
	}
	switch {
	case ts != nil:
		p, err := planText(c, q, ts)
		return p, nil, err
	case q.textScore:
		return nil, nil, mongoerr.New(mongoerr.TextScoreUnavailable, "query requires text score metadata, but it is not available")
	case h.ix != nil && h.ix.text != nil:
		return nil, nil, noQuerySolutions()
	}
	if h.natural == 0 {
		if p, err := planGeo(c, q, h); p != nil || err != nil {
			return p, nil, err
		}
	}
	natural := h.natural
	if q.sort != nil && q.sort.Natural() != 0 {
		natural = q.sort.Natural()
	}
	if natural != 0 {
		sorted := q.sort != nil && q.sort.Natural() != 0
		if c.Clustered() && c.shard == nil {
			// A clustered collection's natural order is its _id order:
			// MongoDB's collection scan bounds itself by the filter's
			// _id range (buildCollscanSoln), a CLUSTERED_IXSCAN in the
			// direction asked.
			p := planner.Candidates(planCatalog{c, q.strict}, planner.Query{Filter: q.filter, IDCollation: c.DefaultCollator(), Clustered: true, HintID: true})[0]
			p.Reverse, p.Sorted = natural < 0, sorted
			return p, nil, nil
		}
		p := planner.NaturalScan(natural, sorted)
		if c.capped != nil {
			p.UseNatural()
		}
		return p, nil, nil
	}
	pq := planner.Query{Filter: q.filter, Sort: q.sort, Projection: q.proj, ProjectionSpec: q.projDoc, IDCollation: c.DefaultCollator(), Clustered: c.Clustered(), NoIDHack: q.noIDHack, KeysOnly: q.keysOnly}
	cands, filtered := filteredCandidates(c, q, pq)
	if !filtered {
		pq.HintID = h.idOrder
		if h.ix != nil {
			hinted := h.ix.planned()
			if hinted.Wildcard != nil && !planner.WildcardHintFits(&hinted, q.filter) {
				return nil, nil, noQuerySolutions()
			}
			pq.Hint = &hinted
		}
		cands = planner.Candidates(planCatalog{c, q.strict}, pq)
	}
	p := cands[0]
	var trial *trialResult
	if len(cands) > 1 {
		if p, trial, err = e.choosePlan(ctx, c, q, cands, txn, limit); err != nil {
			return nil, nil, err
		}
	}
	if !p.Sorted && !h.idOrder && c.capped != nil {
		if p.Index == nil && p.Intervals == nil && p.Or == nil {
			trial.release() // its scan was in _id order, the find's is natural
		}
		p.UseNatural()
	}
	return p, trial, nil
}

// checkTextQuery returns the $text of q's filter, if any, after MongoDB's
// CanonicalQuery::isValid rules for it, checked before the hint is
// resolved: one $text, not under $nor (query.Filter.Text), and not with
// $near, a $natural sort or any hint (BadValue).
func checkTextQuery(q compiledFind, hint bson.RawValue) (*query.TextSearch, error) {
	ts, err := q.filter.Text()
	if err != nil || ts == nil {
		return nil, err
	}
	if near, _ := q.filter.GeoNear(); near != nil {
		return nil, mongoerr.New(mongoerr.BadValue, "text and geoNear not allowed in same query")
	}
	if q.sort != nil && q.sort.Natural() != 0 {
		return nil, mongoerr.New(mongoerr.BadValue, "text expression not allowed with $natural sort order")
	}
	if hinted(hint) {
		return nil, mongoerr.New(mongoerr.BadValue, "text and hint not allowed in same query")
	}
	return ts, nil
}

// noQuerySolutions is MongoDB's error for a query no plan can answer (a
// hint that cannot serve it).
func noQuerySolutions() error {
	return mongoerr.New(mongoerr.NoQueryExecutionPlans, "error processing query: planner returned error :: caused by :: No query solutions")
}

// Find runs a query. Filter, sort and projection errors are reported before
// any document is read. The cursor reads a snapshot taken when Find runs.
func (e *Engine) Find(db, coll string, o FindOptions) (Cursor, error) {
	c := e.lookup(o.Txn, db, coll)
	q, err := compileFind(o, c)
	if err != nil {
		return nil, err
	}
	if c == nil {
		if o.GeoNear != nil {
			return nil, geoNearMissing(db, coll)
		}
		// MongoDB plans a missing collection's read as EOF without
		// looking at its hint.
		return emptyCursor{}, nil
	}
	if o.GroupKey != "" {
		docs, ok, err := e.groupDistinct(db, coll, o, opStatsOf(o.Ctx), nil)
		if err != nil {
			return nil, err
		}
		if ok {
			return &aggregate.SliceSource{Docs: docs}, nil
		}
	}
	// read before the trial or execute takes the scan's snapshot
	// (recheck.go)
	rc := newRecheck(e, c, false)
	q.keepTrial = !o.ResumeToken && !o.Counted
	p, trial, err := e.planFind(o.Ctx, c, q, o.Hint, o.Txn, o.wanted())
	if err != nil {
		return nil, err
	}
	if o.Counted && p.CountScan() {
		trial.release()
		st := opStatsOf(o.Ctx)
		st.ran(c, p, true)
		n, err := e.count(c, p, q.filter, o, st, nil)
		if err != nil {
			return nil, err
		}
		return &emptyDocs{n: n}, nil
	}
	if err := e.startAfter(c, p, o); err != nil {
		trial.release()
		return nil, err
	}
	st := opStatsOf(o.Ctx)
	st.ran(c, p, false)
	rc.able = o.Txn == nil && readViewOf(o.Ctx) == nil && p.Covered() == nil
	cur, err := e.execute(c, q, p, o, st, trial)
	if err != nil {
		return nil, err
	}
	sc := &scanCursor{Cursor: cur, e: e, c: c, ixs: indexesOf(p)}
	if m, ok := cur.(*matchCursor); ok {
		m.scan.recheck = rc
		sc.scan = m.scan
	}
	if o.ResumeToken {
		from, _ := recordIDOf(o.ResumeAfter)
		return &resumeCursor{scanCursor: sc, from: from}, nil
	}
	return sc, nil
}

// execute opens the plan's scan and the stages above it, or, when trial
// kept the winner's source (trialResult.cont), continues it: the results
// of its trial first, as matches (the filter is not evaluated again), then
// what it reads next; the skip its trial consumed is not skipped again.
func (e *Engine) execute(c *Collection, q compiledFind, p *planner.Plan, o FindOptions, stats *OpStats, trial *trialResult) (Cursor, error) {
	m, ordered, err := e.open(c, q, p, o, stats, trial)
	switch {
	case err != nil:
		return nil, err
	case ordered:
		return m, nil
	}
	if stats.plan == p {
		stats.SortStage = true
	}
	return sortAll(m, q.sort, o, e.SortMemoryLimit(), e.opts.TempDir)
}

// open wires execute's stages below the sort: the scan-and-match loop,
// skip, limit and projection; ordered reports that no blocking sort is
// needed (none asked, or the plan's order is the sort's).
func (e *Engine) open(c *Collection, q compiledFind, p *planner.Plan, o FindOptions, stats *OpStats, trial *trialResult) (m *matchCursor, ordered bool, err error) {
	var scan *matchScan
	if trial != nil && trial.cont != nil {
		scan = &matchScan{src: trial.cont, filter: q.filter, ctx: o.Ctx, pre: trial.pre}
		trial.cont = nil
		o.Skip -= trial.skipped
	} else {
		if scan, err = e.openScan(c, p, q.filter, o.Txn, o.Ctx, stats); err != nil {
			return nil, false, err
		}
	}
	if k, ok := scan.src.(keyed); ok && q.indexKeys {
		k.giveIndexKeys(!c.Clustered())
	}
	if r, ok := scan.src.(recorded); ok && q.recordIDs {
		r.giveRecordIDs()
	}
	m = &matchCursor{scan: scan, skip: o.Skip, limit: o.Limit, proj: q.proj, sortKeys: q.sortKeys}
	if scan.covered() {
		// The source answers with projected documents the keys decided
		// (or empty ones, whose keys returnKey's projection gives).
		scan.filter = nil
		if !q.keysOnly {
			m.proj = nil
		}
	}
	if p.IDRangeDecides() && (q.proj == nil || !q.proj.Positional()) {
		// Every document in the _id ranges matches; a positional
		// projection still needs the match's position.
		scan.filter = nil
	}
	src, ok := scan.src.(*planSource)
	return m, q.sort == nil || ok && src.p.Sorted, nil
}

// openScan opens the scan-and-match loop of a plan with filter f, under
// the operation context ctx.
func (e *Engine) openScan(c *Collection, p *planner.Plan, f *query.Filter, txn *Txn, ctx context.Context, stats *OpStats) (*matchScan, error) {
	src, err := e.openSource(ctx, c, p, txn, stats)
	if err != nil {
		return nil, err
	}
	if u, ok := src.(*unionSource); ok && u.text != nil {
		u.text.branch = textBranch(f)
	}
	return &matchScan{src: src, filter: f, ctx: ctx}, nil
}

// openSource opens the scan of a plan on a new snapshot, or on the view of
// txn: a planSource, or for a union the planSources of its scans, sharing
// the snapshot and the set of documents seen. The scans' plans are
// rebuilt if their index turned multikey since (see planner.Plan.Rebuilt).
// Forward index scans outside transactions use the index's seek hints,
// unless other engines may write the store.
// Keys the scan passes over without yielding a document are examined
// under ctx.
func (e *Engine) openSource(ctx context.Context, c *Collection, p *planner.Plan, txn *Txn, stats *OpStats) (docSource, error) {
	scans := []*planner.Plan{p}
	if p.Or != nil {
		scans = p.Or
	}
	// The hints' epoch and clock are read before the snapshot is taken
	// (see hints.go).
	type hinted struct {
		hints      *seekHints
		epoch, now uint64
	}
	view := readViewOf(ctx)
	hs := make([]hinted, len(scans))
	for i, sp := range scans {
		if ix := indexOf(sp); ix != nil && sp.Text == nil && sp.Geo == nil && !sp.Reverse && txn == nil && view == nil && e.opts.FrontendID == "" {
			hs[i] = hinted{ix.hints, ix.hints.readEpoch(), hintClock.Load()}
		}
	}
	var r storage.Reader
	var closer func() error
	switch {
	case txn != nil:
		r = txn.tx
	case view != nil:
		unpin := e.PinView(view)
		r, closer = view.snap, func() error { unpin(); return nil }
	case p.Or == nil && !p.Fetches():
		// A scan of the document store reads through its one iterator
		// alone, which sees the state of its creation, and a single _id is
		// read at once (see newPlanSource): no snapshot to take and release.
		r = e.kv
	default:
		snap := e.kv.NewSnapshot()
		r, closer = snap, snap.Close
	}
	switch {
	case p.Text != nil:
		return newTextSource(ctx, r, c, p, stats, closer), nil
	case p.Geo != nil && p.Geo.Near:
		return newGeoNearSource(ctx, r, c, p, stats, closer), nil
	}
	var text *textSource
	if scans[0].Text != nil {
		// a union's $text branch, which it reads first (planner.union)
		text, scans, hs = newTextSource(ctx, r, c, scans[0], stats, nil), scans[1:], hs[1:]
	}
	srcs := make([]*planSource, 0, len(scans))
	fail := func(err error) (docSource, error) {
		for _, s := range srcs {
			s.Close()
		}
		if closer != nil {
			closer()
		}
		return nil, err
	}
	for i, sp := range scans {
		src, err := newPlanSource(ctx, r, c.ID, rebuilt(sp), stats, nil)
		if err != nil {
			return fail(err)
		}
		src.clustered = c.Clustered()
		if hs[i].hints != nil {
			src.hints, src.hintEpoch, src.hintNow = hs[i].hints, hs[i].epoch, hs[i].now
		}
		src.parkable = txn == nil
		srcs = append(srcs, src)
	}
	if p.Or == nil {
		srcs[0].closer = closer
		return srcs[0], nil
	}
	seen := map[string]struct{}{}
	for _, s := range srcs {
		s.seen = seen
	}
	if text != nil {
		text.seen = seen
	}
	return &unionSource{srcs: srcs, text: text, closer: closer}, nil
}

// textBranch is the filter of the $or branch holding f's $text clause, if
// any (query.Filter.TextOr).
func textBranch(f *query.Filter) *query.Filter {
	if _, br := f.TextOr(); br != nil {
		return f.Clause(br)
	}
	return nil
}

// rebuilt is p rebuilt if its index turned multikey since it was planned:
// for a wildcard index, on the path the plan scans.
func rebuilt(p *planner.Plan) *planner.Plan {
	ix := indexOf(p)
	switch {
	case ix == nil:
		return p
	case ix.wild != nil && p.Index.WildcardPath() != "":
		return p.Rebuilt(ix.wild.multikeyAt(p.Index.WildcardPath()), nil)
	case ix.wild != nil:
		return p // read across every path: planned multikey
	}
	return p.Rebuilt(ix.Multikey(), ix.fieldArrays())
}

type emptyCursor struct{}

// emptyDocs yields n empty documents: the matches of a read whose
// documents no one looks into (FindOptions.Counted).
type emptyDocs struct{ n int64 }

func (s *emptyDocs) Next() (bson.Raw, error) {
	if s.n <= 0 {
		return nil, nil
	}
	s.n--
	return emptyDocument, nil
}

func (s *emptyDocs) Close() error { return nil }

// emptyDocument is the document {}.
var emptyDocument = bson.Raw{5, 0, 0, 0, 0}

func (emptyCursor) Next() (bson.Raw, error) { return nil, nil }
func (emptyCursor) Close() error            { return nil }

// matchCursor serves a find's matches past skip, up to limit, projected.
type matchCursor struct {
	scan   *matchScan
	skip   int64
	limit  int64 // 0: none
	proj   *query.Projection
	served int64
	// raw makes Next return matching documents unprojected, with their
	// positional match index in lastPos, and ignores skip and limit (the
	// sorter applies them after ordering).
	raw     bool
	lastPos int
	// meta is the metadata of the document served last.
	meta docsrc.Meta
	// sortKeys, when set, is the sort whose key each document carries in
	// its metadata, as MongoDB's SORT (or SORT_KEY_GENERATOR, when an
	// index gives the order) stage sets it.
	sortKeys *query.Sort
}

// Meta is the metadata (text score) of the document served last.
func (m *matchCursor) Meta() docsrc.Meta { return m.meta }

func (m *matchCursor) Next() (bson.Raw, error) {
	doc, own, err := m.next()
	if own || doc == nil {
		return doc, err
	}
	return slices.Clone(doc), err
}

// Lend returns the next document valid until the next call (see
// docsrc.Lender).
func (m *matchCursor) Lend() (bson.Raw, error) {
	doc, _, err := m.next()
	return doc, err
}

// next returns the next document to serve; own reports that it was built
// for the caller (projected), else it is the scan's, valid until the next
// call.
func (m *matchCursor) next() (doc bson.Raw, own bool, err error) {
	for {
		if !m.raw && m.limit > 0 && m.served >= m.limit {
			return nil, false, nil
		}
		doc, pos, err := m.scan.next()
		if doc == nil || err != nil {
			return nil, false, err
		}
		m.meta = docsrc.MetaOf(m.scan.src)
		if m.sortKeys != nil {
			if m.meta.SortKey, err = m.sortKeys.SortKeyArray(doc, m.meta); err != nil {
				return nil, false, err
			}
		}
		if m.raw {
			m.lastPos = pos
			return doc, false, nil
		}
		if m.skip > 0 {
			m.skip--
			continue
		}
		m.served++
		if m.proj != nil {
			out, err := m.proj.ApplyMeta(doc, pos, m.meta)
			// An empty projection returns the scan's document itself.
			return out, len(out) == 0 || &out[0] != &doc[0], err
		}
		return doc, false, nil
	}
}

func (m *matchCursor) Close() error { return m.scan.close() }
