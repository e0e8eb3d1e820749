// Package aggregate runs MongoDB aggregation pipelines over a stream of
// documents. Parse compiles the stage documents (every error a malformed
// stage can raise is reported before any document is read); Run chains the
// stages over a source. Stages that read or write other collections reach
// the engine through the Env interface, so the package stays pure and is
// tested with an in-memory Env.
package aggregate

import (
	"context"
	"math"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/sorter"
	"github.com/folio-db/folio/internal/timeseries"
)

// Source is the one document stream (docsrc.Source), named here as the
// input and output of every stage.
type Source = docsrc.Source

// CollStats are the figures $collStats reports.
type CollStats struct {
	// Shard is the shard holding a sharded collection, which a router's
	// $collStats names in each shard's document; "" when not sharded.
	Shard string
	Count int64
	// Storage is the storageStats document of $collStats, sizes divided
	// by the scale asked for: the fields of collStats after ns.
	Storage bson.Raw
	// Indexes are the collection's indexes, the _id index first (a time
	// series collection's buckets have none), then the others in creation
	// order, those being built included.
	Indexes []IndexStat
	// KeyAfterSpec puts $indexStats' key after spec: a time series
	// collection's, converted from its buckets' (MongoDB's
	// $_internalConvertBucketIndexStats).
	KeyAfterSpec bool
}

// IndexStat is an index as $indexStats reports it: its specification,
// how many operations used it since when, and whether it is being built.
type IndexStat struct {
	Spec     bson.Raw
	Ops      int64
	Since    time.Time
	Building bool
}

// Env is the engine as the pipeline sees it.
type Env interface {
	// Find returns the documents of db.coll matching filter (nil: all), in
	// _id order. A missing collection is empty. The filter follows c, the
	// pipeline's collation (nil: simple), not the collection's default:
	// $lookup, $graphLookup, $unionWith and $merge read other collections
	// under the pipeline's collation, as in MongoDB.
	Find(db, coll string, filter bson.Raw, c *collation.Collator) (Source, error)
	// FindNear returns the documents of db.coll a leading $geoNear's
	// search finds, nearest first, each with its distance and location
	// as its metadata, as the collection scan of a pipeline runs it
	// (Pushdown.GeoNear); the errors are a top-level $geoNear's (no geo
	// index, a missing collection).
	FindNear(db, coll string, g *GeoNear, c *collation.Collator) (Source, error)
	// Insert stores docs in db.coll, creating the collection even when docs
	// is empty. Ordered, it stops at the first document that fails (a
	// DuplicateKey among others); unordered, it tries every one. It
	// returns the first failure and the position of its document, -1 for
	// a failure of no one document.
	Insert(db, coll string, docs []bson.Raw, ordered bool) (int, error)
	// Replace replaces the document of db.coll whose _id is id with doc.
	// fromPipeline says doc is an update pipeline's result, whose top-level
	// fields may start with '$', as MongoDB's PipelineExecutor allows; a
	// replacement document's may not.
	Replace(db, coll string, id bson.RawValue, doc bson.Raw, fromPipeline bool) error
	// DropCollection drops db.coll if it exists.
	DropCollection(db, coll string) error
	// CheckOutput refuses db.coll as the target of stage ($out or
	// $merge) when it cannot be written (a view).
	CheckOutput(stage, db, coll string) error
	// Out begins $out's replacement of db.coll by the documents written to
	// the returned Output; ts (nil: none) are the timeseries options $out
	// gave. It fails when the target cannot be replaced: a view, a capped
	// collection, a collection that is not the time series collection ts
	// asks for.
	Out(db, coll string, ts *timeseries.Options) (Output, error)
	// CollectionStats describes db.coll, its sizes divided by scale; a
	// missing collection is NamespaceNotFound.
	CollectionStats(db, coll string, scale int64) (CollStats, error)
	// LatencyStats is db.coll's latencyStats, with the histograms when
	// asked (MongoDB's operation latency histograms).
	LatencyStats(db, coll string, histograms bool) bson.Raw
	// CollectionScans counts the queries that read db.coll by a
	// collection scan: all, and those not tailable; a missing collection
	// is NamespaceNotFound.
	CollectionScans(db, coll string) (total, nonTailable int64, err error)
	// HasUniqueKeyIndex reports whether db.coll has an index proving that
	// the values of paths identify at most one document under the
	// collation c (nil: simple); a missing collection has only _id's.
	HasUniqueKeyIndex(db, coll string, paths []string, c *collation.Collator) bool
	// PlanCacheStats lists the entries of db.coll's plan cache as
	// $planCacheStats shows them, without the host.
	PlanCacheStats(db, coll string) ([]bson.Raw, error)
	// ResolveView follows the chain of views db.coll names down to a
	// collection, base: the stages the views apply, innermost first;
	// isView is false for a collection (or a missing one).
	ResolveView(db, coll string) (base string, stages []bson.Raw, isView bool, err error)
	// Counted is the Env whose reads (Find, FindNear, and those of the
	// views they read) also add their work to fig once each source they
	// return is closed: explain's figures of a $lookup.
	Counted(fig *ScanFigures) Env
}

// ScanFigures sum the work of a stage's reads of another collection, as
// MongoDB's explain reports a $lookup's from executionStats
// (DocumentSourceLookUp's plan summary): the keys and documents examined,
// the reads that scanned a collection, and the indexes used, each once in
// name order (MongoDB's std::set of them).
type ScanFigures struct {
	KeysExamined, DocsExamined, CollectionScans int64
	IndexesUsed                                 []string
}

// Add adds the work of one read: its counts, a collection scan, the
// indexes it used.
func (f *ScanFigures) Add(keys, docs int64, indexes []string, collectionScan bool) {
	f.KeysExamined += keys
	f.DocsExamined += docs
	if collectionScan {
		f.CollectionScans++
	}
	for _, name := range indexes {
		if i, found := slices.BinarySearch(f.IndexesUsed, name); !found {
			f.IndexesUsed = slices.Insert(f.IndexesUsed, i, name)
		}
	}
}

// explainFigures are the fields explain lists after the $lookup's spec.
func (f *ScanFigures) explainFigures() bson.D {
	indexes := bson.A{}
	for _, name := range f.IndexesUsed {
		indexes = append(indexes, name)
	}
	return bson.D{
		{Key: "totalDocsExamined", Value: f.DocsExamined},
		{Key: "totalKeysExamined", Value: f.KeysExamined},
		{Key: "collectionScans", Value: f.CollectionScans},
		{Key: "indexesUsed", Value: indexes},
	}
}

// Output receives the documents that replace a collection ($out): they
// are written aside and swapped in by Commit, or dropped by Abort.
type Output interface {
	Write(docs []bson.Raw) error
	Commit() error
	Abort()
}

// DefaultMemoryLimit is the memory a blocking stage ($group, $sort, ...)
// may use: MongoDB's 100 MiB.
const DefaultMemoryLimit = 100 * 1024 * 1024

// Options are the context of a pipeline.
type Options struct {
	DB   string
	Coll string // "" for a collection-less aggregate ({aggregate: 1})
	Env  Env
	// Now is $$NOW; the zero time means the time Parse is called.
	Now time.Time
	// AllowDiskUse lets $sort, $group (and $bucket, $sortByCount, $count)
	// and $bucketAuto spill to disk beyond MemoryLimit; without it a
	// blocking stage past the limit fails with
	// QueryExceededMemoryLimitNoDiskUseAllowed.
	AllowDiskUse bool
	// Let is the command's let document: variable names and expressions
	// evaluated once, visible as $$name.
	Let bson.Raw
	// Bound, when set, is the command's variables already bound (a write
	// command's let and constants, shared with its filter); Let is then
	// ignored.
	Bound *expr.Let
	// Unoptimized marks a pipeline MongoDB parses and never optimizes: an
	// update's (PipelineExecutor) and a view's definition, which
	// view_catalog_helpers::validatePipeline only parses. A constant
	// subexpression that fails fails each document it is evaluated on, not
	// the parse; otherwise it fails Parse once every stage has parsed,
	// with "Failed to optimize pipeline" (Pipeline::optimizeContainer).
	Unoptimized bool
	// MemoryLimit overrides DefaultMemoryLimit when positive.
	MemoryLimit int64
	// SortMemoryLimit, when positive, is the budget of a $sort instead
	// (MongoDB's internalQueryMaxBlockingSortMemoryUsageBytes).
	SortMemoryLimit int64
	// WindowMemoryLimit, when positive, is what a $setWindowFields may
	// hold instead (MongoDB's
	// internalDocumentSourceSetWindowFieldsMaxMemoryBytes).
	WindowMemoryLimit int64
	// DensifyMemoryLimit, when positive, is what a $densify's partition
	// table may hold instead (MongoDB's
	// internalDocumentSourceDensifyMaxMemoryBytes).
	DensifyMemoryLimit int64
	// GroupMemoryLimit, when positive, is what a $group (and the stages
	// MongoDB desugars to one: $bucket, $sortByCount, $count) may hold
	// before spilling instead (MongoDB's
	// internalDocumentSourceGroupMaxMemoryBytes).
	GroupMemoryLimit int64
	// LookupMaxBytes, when positive, bounds the matches one $lookup
	// collects for a document instead of DefaultMaxIntermediateDocBytes
	// (MongoDB's internalLookupStageIntermediateDocumentMaxSizeBytes).
	LookupMaxBytes int64
	// FacetMaxOutputBytes, when positive, bounds a $facet's output
	// document instead of DefaultMaxIntermediateDocBytes (MongoDB's
	// internalQueryFacetMaxOutputDocSizeBytes).
	FacetMaxOutputBytes int64
	// FacetBufferBytes, when positive, is the size of the batches of its
	// input a $facet holds instead of DefaultFacetBufferBytes (MongoDB's
	// internalQueryFacetBufferSizeBytes).
	FacetBufferBytes int64
	// MaxDensifyDocs, when positive, is the most documents a $densify may
	// generate instead of DefaultMaxDensifyDocs (MongoDB's
	// internalQueryMaxAllowedDensifyDocs).
	MaxDensifyDocs int64
	// MaxPushBytes and MaxAddToSetBytes, when positive, are the memory one
	// $push or $addToSet may hold instead of DefaultMaxAccumulatorBytes
	// (MongoDB's internalQueryMaxPushBytes and
	// internalQueryMaxAddToSetBytes).
	MaxPushBytes, MaxAddToSetBytes int64
	// MaxTopNBytes, when positive, is the memory one N accumulator ($firstN,
	// $topN, $maxN...) may hold instead of DefaultMaxAccumulatorBytes
	// (MongoDB's internalQueryTopNAccumulatorBytes).
	MaxTopNBytes int64
	// TempDir holds spill files; "" is the system's temporary directory.
	TempDir string
	// Port is the server's, which $collStats, $indexStats and
	// $planCacheStats report after the host name (0: MongoDB's default,
	// 27017).
	Port int
	// Budget bounds the memory the blocking stages of all operations hold
	// at once; nil is the process's (sorter.Global).
	Budget *sorter.Budget
	// Ctx is the operation's context: the pipeline fails with its
	// interruption's error (mongoerr.Interruption) once it ends. Nil never
	// ends.
	Ctx context.Context
	// Collator is the command's collation (nil: simple), which $match,
	// $sort and $group's keys follow; the caller refuses the stages and
	// expressions that would not (see commands' checkPipelineCollation).
	Collator *collation.Collator
}

// stage is one parsed pipeline stage.
type stage interface {
	// run transforms in into the stage's output.
	run(in Source, rt *runtime) Source
}

// Pipeline is a parsed aggregation pipeline.
type Pipeline struct {
	stages []stage
	specs  []bson.Raw // the document of each stage, as written
	rt     *runtime
	let    *expr.Let // the variables its expressions compile and run with
}

// runtime is what stages need while running: the options and the values
// of variables for expressions.
type runtime struct {
	opts *Options
	ectx *expr.Context
}

// withVars returns a runtime whose expressions also see vars.
func (rt *runtime) withVars(vars map[string]bson.RawValue) *runtime {
	merged := make(map[string]bson.RawValue, len(rt.ectx.Vars)+len(vars))
	for k, v := range rt.ectx.Vars {
		merged[k] = v
	}
	for k, v := range vars {
		merged[k] = v
	}
	return &runtime{opts: rt.opts, ectx: &expr.Context{Clock: rt.ectx.Clock, Vars: merged, JS: rt.ectx.JS, Meta: &docsrc.Meta{}}}
}

// orDefault is a limit of the options, or def when it is not set (zero
// or less).
func orDefault(v, def int64) int64 {
	if v > 0 {
		return v
	}
	return def
}

// memoryLimit is the budget of one blocking stage.
func (rt *runtime) memoryLimit() int64 { return orDefault(rt.opts.MemoryLimit, DefaultMemoryLimit) }

// maxDensifyDocs is the most documents one $densify may generate.
func (rt *runtime) maxDensifyDocs() int64 {
	return orDefault(rt.opts.MaxDensifyDocs, DefaultMaxDensifyDocs)
}

// maxPushBytes is the memory one $push may hold.
func (rt *runtime) maxPushBytes() int64 {
	return orDefault(rt.opts.MaxPushBytes, DefaultMaxAccumulatorBytes)
}

// maxAddToSetBytes is the memory one $addToSet may hold.
func (rt *runtime) maxAddToSetBytes() int64 {
	return orDefault(rt.opts.MaxAddToSetBytes, DefaultMaxAccumulatorBytes)
}

// nAccMem is the memory budget of a new N accumulator op.
func (rt *runtime) nAccMem(op string) nAccMem {
	return nAccMem{op: op, limit: orDefault(rt.opts.MaxTopNBytes, DefaultMaxAccumulatorBytes)}
}

// sortMemoryLimit is the budget of one $sort.
func (rt *runtime) sortMemoryLimit() int64 {
	return orDefault(rt.opts.SortMemoryLimit, rt.memoryLimit())
}

// groupMemoryLimit is what one $group may hold before it spills.
func (rt *runtime) groupMemoryLimit() int64 {
	return orDefault(rt.opts.GroupMemoryLimit, rt.memoryLimit())
}

// lookupMaxBytes bounds the matches one $lookup collects for a document.
func (rt *runtime) lookupMaxBytes() int64 {
	return orDefault(rt.opts.LookupMaxBytes, DefaultMaxIntermediateDocBytes)
}

// facetMaxOutputBytes bounds a $facet's output document.
func (rt *runtime) facetMaxOutputBytes() int64 {
	return orDefault(rt.opts.FacetMaxOutputBytes, DefaultMaxIntermediateDocBytes)
}

// facetBufferBytes is the size of the batches of its input a $facet
// holds (facetTee).
func (rt *runtime) facetBufferBytes() int64 {
	return orDefault(rt.opts.FacetBufferBytes, DefaultFacetBufferBytes)
}

// windowMemoryLimit is what one $setWindowFields may hold: its partition
// in memory and its outputs.
func (rt *runtime) windowMemoryLimit() int64 {
	return orDefault(rt.opts.WindowMemoryLimit, rt.memoryLimit())
}

// densifyMemoryLimit is what one $densify's partition table may hold.
func (rt *runtime) densifyMemoryLimit() int64 {
	return orDefault(rt.opts.DensifyMemoryLimit, DefaultMemoryLimit)
}

// overMemory is the error of a blocking stage past its budget.
func (rt *runtime) overMemory(what string) error {
	return mongoerr.New(mongoerr.QueryExceededMemoryLimitNoDiskUseAllowed,
		"Exceeded memory limit for %s, but didn't allow external sort. Pass allowDiskUse:true to opt in.", what)
}

// find reads a collection through the Env, under the operation's context.
func (rt *runtime) find(coll string, filter bson.Raw) (Source, error) {
	if rt.opts.Env == nil {
		return nil, mongoerr.New(mongoerr.InternalError, "no storage for the aggregation")
	}
	src, err := rt.opts.Env.Find(rt.opts.DB, coll, filter, rt.opts.Collator)
	if err != nil {
		return nil, err
	}
	return rt.guard(src), nil
}

// findNear runs a sub-pipeline's leading $geoNear search on coll.
func (rt *runtime) findNear(coll string, g *GeoNear) (Source, error) {
	if rt.opts.Env == nil {
		return nil, mongoerr.New(mongoerr.InternalError, "no storage for the aggregation")
	}
	src, err := rt.opts.Env.FindNear(rt.opts.DB, coll, g, rt.opts.Collator)
	if err != nil {
		return nil, err
	}
	return rt.guard(src), nil
}

// guard stops reads from src once the operation's context ends. Every
// stage reads its input through one, so no stage loops long past a kill,
// maxTimeMS, a disconnect or shutdown, whatever it does per document; and
// each document read makes its metadata the one {$meta: ...} evaluates to
// until the next read.
func (rt *runtime) guard(src Source) Source {
	return &interruptSource{in: src, ctx: rt.opts.Ctx, meta: rt.ectx.Meta}
}

// interruptSource fails with the operation's interruption before each
// document (an atomic load), and sets meta to each document's metadata.
type interruptSource struct {
	in   Source
	ctx  context.Context
	meta *docsrc.Meta
}

func (s *interruptSource) Next() (bson.Raw, error) {
	if err := mongoerr.Interruption(s.ctx); err != nil {
		return nil, err
	}
	doc, err := s.in.Next()
	if doc != nil {
		*s.meta = docsrc.MetaOf(s.in)
	}
	return doc, err
}

// Meta is the metadata of the document read last.
func (s *interruptSource) Meta() docsrc.Meta { return docsrc.MetaOf(s.in) }

func (s *interruptSource) Close() error { return s.in.Close() }

// deferOptimizeError keeps err, when it is an error of optimizing an
// expression (expr.OptimizeError), in *first unless one is there, and
// returns nil so that parsing goes on: MongoDB optimizes once everything
// has parsed, so an error of parsing met later comes first. Any other err
// is returned.
func deferOptimizeError(first *error, err error) error {
	if !expr.IsOptimizeError(err) {
		return err
	}
	if *first == nil {
		*first = err
	}
	return nil
}

// optimizeFailed gives err, an error of optimizing a pipeline's
// expressions (expr.OptimizeError), the context MongoDB's
// Pipeline::optimizeContainer adds to what fails there.
func optimizeFailed(err error) error {
	return mongoerr.AddContext(err, "Failed to optimize pipeline")
}

// Parse parses the stage documents of a pipeline.
func Parse(stages []bson.Raw, opts Options) (*Pipeline, error) {
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	o := &opts
	let := opts.Bound
	if let == nil {
		var err error
		if let, err = expr.Bind(opts.Let, expr.Clock{Now: opts.Now}); err != nil {
			return nil, err
		}
	}
	ectx := let.Ctx
	scope := let.Scope
	if opts.Collator != nil {
		scope = scope.Collated(opts.Collator)
	}
	if opts.Unoptimized {
		scope = scope.Unoptimized()
	}
	p := &parser{opts: o, scope: scope, where: topLevel, noColl: opts.Coll == "", coll: opts.Coll, ctx: ectx}
	if p.noColl && len(stages) == 0 {
		return nil, mongoerr.New(mongoerr.InvalidNamespace, "{aggregate: 1} is not valid for an empty pipeline.")
	}
	stages, err := p.timeseriesGeoNear(stages)
	if err != nil {
		return nil, err
	}
	ss, err := p.pipeline(stages)
	if err != nil && expr.IsOptimizeError(err) {
		return nil, optimizeFailed(err)
	}
	if err != nil {
		return nil, err
	}
	if ss, stages, err = p.moveMatches(ss, stages); err != nil {
		return nil, err
	}
	if ectx.Meta == nil {
		ectx.Meta = &docsrc.Meta{}
	}
	rt := &runtime{opts: o, ectx: ectx}
	return &Pipeline{stages: ss, specs: stages, rt: rt, let: let}, nil
}

// Run streams src through the pipeline; a nil src is empty (a
// collection-less pipeline).
func (p *Pipeline) Run(src Source) Source {
	if src == nil {
		src = &SliceSource{}
	}
	return runStages(p.stages, src, p.rt)
}

// runStages chains stages over src, each reading its input through a
// guard.
func runStages(stages []stage, src Source, rt *runtime) Source {
	for _, s := range stages {
		src = s.run(rt.guard(src), rt)
	}
	return scriptFailures{rt.guard(src)}
}

// Pushdown is the part of a pipeline a collection scan can do itself.
type Pushdown struct {
	Filter bson.Raw // the leading $match
	// Let is the pipeline's variables, which the Filter's $expr reads.
	Let  *expr.Let
	Sort bson.Raw // a $sort at the start (after the $match)
	// Limit bounds the documents the scan yields (0: none): the $limit
	// after that $sort, or, with no $sort, a $limit (n) or a $skip (k) and
	// its $limit (n) right after the $match, as MongoDB's optimizer moves a
	// $limit before a $skip (n+k) and pushes it into the query. Those
	// stages stay in the pipeline.
	Limit int64
	// GeoNear is a leading $geoNear's search, whose stage stays to set
	// its fields from the distances the scan measures.
	GeoNear *GeoNear
	// SortKeys: the documents carry their keys in Sort for a later
	// stage's {$meta: "sortKey"} (markSortKeys).
	SortKeys bool
	// TextScores: the Filter is a $text search whose scores a later
	// stage reads (readsTextScore), so the scan must score its documents
	// (MongoDB's TEXT_OR in place of an OR of the term scans).
	TextScores bool
	// Text: the Filter is a $text search, whatever reads its scores.
	Text bool
	// GroupKey is the path of a $group by one field and nothing else
	// ({$group: {_id: "$path"}}) right after the $match: the scan may
	// feed it one document per value of the path (MongoDB's
	// groupIsEligibleForDistinctScan, with no accumulator). The $group
	// stays in the pipeline.
	GroupKey string
	// Counted reports that the stage right after the $match reads nothing
	// of its input documents (readsNoField): the scan may hand it one
	// empty document per match, counting index keys without fetching
	// (MongoDB's QueryPlannerParams::IS_COUNT, which PipelineD sets when
	// the pipeline's dependencies have no requirements).
	Counted bool
}

// TakePushdown removes a leading $match (but the $expr beside a $text
// search) and a $sort after it from the pipeline and returns them for the scan.
// The $limit bounding the scan stays in the pipeline and is also reported
// (Pushdown.Limit).
func (p *Pipeline) TakePushdown() Pushdown {
	pd := Pushdown{Let: p.let}
	if len(p.stages) > 0 {
		if isTextMatch(p.stages[0]) {
			pd.Text, pd.TextScores = true, readsTextScore(p.specs[1:])
		}
		if g := leadingGeoNear(p.stages); g != nil {
			pd.GeoNear = &g.search
			return pd
		}
		if m, ok := p.stages[0].(*matchStage); ok && m.written != nil && (!pd.Text || len(m.exprs) == 0 && !m.filter.UsesExpr()) {
			// An $expr goes with it, as MongoDB's query layer takes
			// the whole $match: the scan compiles it under the
			// pipeline's let (FindOptions.Let) and may read an index
			// for it (expr.Expr.Rewrite).
			pd.Filter = m.written
			p.stages, p.specs = p.stages[1:], p.specs[1:]
		} else if filter, rest := leadingText(p.stages); filter != nil {
			// The $expr conditions of a $text match stay a stage, which
			// explain lists as the $match written.
			pd.Filter, p.stages = filter, rest
		}
	}
	if len(p.stages) > 0 {
		if _, ok := p.stages[0].(*groupStage); ok && !pd.Text {
			pd.GroupKey = groupByPath(p.specs[0])
			pd.Counted = readsNoField(p.stages[0])
		}
		if s, ok := p.stages[0].(*sortStage); ok {
			pd.Sort, pd.Limit, pd.SortKeys = s.spec, s.limit, s.keys
			p.stages, p.specs = p.stages[1:], p.specs[1:]
			return pd
		}
		pd.Limit = leadingLimit(p.stages, p.specs)
	}
	return pd
}

// groupByPath is the path of a $group spec {$group: {_id: "$path"}}
// grouping by one field path and computing nothing else; "" otherwise.
func groupByPath(spec bson.Raw) string {
	group, ok := spec.Index(0).Value().DocumentOK()
	if !ok {
		return ""
	}
	elems, err := group.Elements()
	if err != nil || len(elems) != 1 || elems[0].Key() != "_id" {
		return ""
	}
	id, ok := elems[0].Value().StringValueOK()
	if !ok || len(id) < 2 || id[0] != '$' || id[1] == '$' {
		return ""
	}
	return id[1:]
}

// readsNoField reports whether s reads no field of the documents it is
// given: $count, or a $group whose _id and accumulator operands are
// constants (no sortBy, JavaScript or quantile among them). Such a stage
// adds no dependency and ends the analysis (MongoDB's
// DocumentSourceGroup::getDependencies), so the pipeline needs nothing
// of the documents (DepsTracker::hasNoRequirements).
func readsNoField(s stage) bool {
	g, ok := s.(*groupStage)
	if !ok || !g.noID && (g.id == nil || !g.id.IsConstant()) {
		return false
	}
	constant := func(e *expr.Expr) bool { return e == nil || e.IsConstant() }
	for _, a := range g.accs {
		if !constant(a.arg) || !constant(a.n) || a.sort != nil || a.js != nil || a.red != nil || a.q != nil {
			return false
		}
	}
	return true
}

// readsTextScore reports whether the stages after a leading $text match
// read {$meta: "textScore"} before one rebuilds its documents: as MongoDB's
// Pipeline::getDependencies, which stops at the first stage whose
// dependencies are exhaustive ($group and the stages made of one, $facet),
// that stage's own reads included; a $lookup's or $unionWith's
// sub-pipeline reads the scores of its own $text search.
func readsTextScore(specs []bson.Raw) bool {
	for _, spec := range specs {
		el, err := spec.IndexErr(0)
		if err != nil {
			return false
		}
		name := el.Key()
		if name != "$lookup" && name != "$unionWith" && slices.Contains(expr.MetaNames(el.Value()), "textScore") {
			return true
		}
		switch name {
		case "$group", "$bucket", "$bucketAuto", "$count", "$sortByCount", "$facet":
			return false
		}
	}
	return false
}

// leadingLimit is how many documents stages need at most from their
// input when a $limit n comes before any stage that may drop or add
// documents: n plus the $skip counts before it (0 for no bound, or one
// past an int64). The stages passing each document on as one (oneToOne)
// do not change the count: MongoDB's optimizer moves the $limit ahead of
// them into the collection's read.
func leadingLimit(stages []stage, specs []bson.Raw) int64 {
	var skip int64
	for i, st := range stages {
		switch st := st.(type) {
		case *skipStage:
			if skip > math.MaxInt64-st.n {
				return 0
			}
			skip += st.n
			continue
		case *limitStage:
			if st.n > math.MaxInt64-skip {
				return 0
			}
			return skip + st.n
		}
		if !oneToOne(st, specs[i]) {
			return 0
		}
	}
	return 0
}

// isTextMatch reports whether s is a $match with a $text clause.
func isTextMatch(s stage) bool {
	m, ok := s.(*matchStage)
	if !ok {
		return false
	}
	ts, _ := m.filter.Text()
	return ts != nil
}

// leadingText splits a pipeline's leading $match on $text off its stages:
// its filter is the query of the collection's read, which matches it
// through the text index and gives each document its score; its top-level
// $expr conditions, which the query leaves to aggregation, remain as the
// first stage.
func leadingText(stages []stage) (bson.Raw, []stage) {
	if len(stages) == 0 || !isTextMatch(stages[0]) {
		return nil, stages
	}
	m := stages[0].(*matchStage)
	if m.filter.UsesExpr() {
		return nil, stages
	}
	if len(m.exprs) == 0 {
		return m.spec, stages[1:]
	}
	all, err := query.Compile(emptyDoc)
	if err != nil {
		return nil, stages
	}
	rest := &matchStage{spec: emptyDoc, filter: all, exprs: m.exprs, scope: m.scope}
	return m.spec, append([]stage{rest}, stages[1:]...)
}

// LeadingSample is the size of a $sample the pipeline starts with; ok is
// false when it starts otherwise.
func (p *Pipeline) LeadingSample() (n int64, ok bool) {
	if len(p.stages) > 0 {
		if s, ok := p.stages[0].(*sampleStage); ok {
			return s.size, true
		}
	}
	return 0, false
}

// Generates reports whether the pipeline's first stage makes its own
// documents ($collStats, $indexStats, $planCacheStats, $documents) rather
// than reading the collection's, which is then not scanned at all.
func (p *Pipeline) Generates() bool {
	if len(p.stages) == 0 {
		return false
	}
	switch p.stages[0].(type) {
	case *collStatsStage, indexStatsStage, planCacheStatsStage, *documentsStage:
		return true
	}
	return false
}

// DropLeadingSample removes the leading $sample: the collection's source
// samples (a random cursor).
func (p *Pipeline) DropLeadingSample() {
	p.stages, p.specs = p.stages[1:], p.specs[1:]
}

// Stages are the documents of the stages left to run (after
// TakePushdown), as written.
func (p *Pipeline) Stages() []bson.Raw { return p.specs }

// explainer is a stage that explain shows resolved, as MongoDB serializes
// it, rather than as written: explainSpec is the value of its field.
type explainer interface {
	explainSpec() any
}

// ExplainStages are the stages of Stages as explain lists them, after the
// $cursor stage: {name: spec}, as written but for the stages explain shows
// resolved ($out, $merge, $limit, $skip, $sample, $unwind) and $match,
// whose filter is shown as MongoDB serializes its normalized tree
// (query.Filter.Normalized).
func (p *Pipeline) ExplainStages() []bson.D {
	out := make([]bson.D, len(p.specs))
	for i, spec := range p.specs {
		el := spec.Index(0)
		if e, ok := p.stages[i].(explainer); ok {
			out[i] = bson.D{{Key: el.Key(), Value: e.explainSpec()}}
		} else if m, ok := p.stages[i].(*matchStage); ok {
			out[i] = bson.D{{Key: el.Key(), Value: m.shown(el.Value().Document())}}
		} else if l, ok := p.stages[i].(*lookupStage); ok {
			out[i] = bson.D{{Key: el.Key(), Value: l.shown(el.Value().Document())}}
		} else if _, ok := p.stages[i].(absorbedStage); ok {
			out[i] = nil // shown inside the stage that absorbed it
		} else {
			out[i] = bson.D{{Key: el.Key(), Value: el.Value()}}
		}
	}
	return out
}

// StageStats are what explain reports of one stage at executionStats
// verbosity: the documents it returned and the time spent producing them,
// its inputs' time included (MongoDB's executionTimeMillisEstimate).
type StageStats struct {
	NReturned int64
	Elapsed   time.Duration
	// SubPipelineRan is set for a $unionWith whose sub-pipeline the run
	// reached (read once its input was exhausted).
	SubPipelineRan bool
	// Own are the stage's own figures, which MongoDB's explain lists
	// after its specification and before nReturned (a $group's memory and
	// spills); nil for a stage without any.
	Own bson.D
}

// stageFigures is a stage's source that reports figures of its own run
// to explain (StageStats.Own).
type stageFigures interface {
	explainFigures() bson.D
}

// Explain runs the pipeline over src to the end for explain at
// executionStats verbosity, discarding the output, and returns the figures
// of src (first) and of each stage. Explain never writes: as MongoDB's
// DocumentSourceWriter does under explain (since 4.4), $out and $merge
// read their input to the end and neither check nor touch their target.
func (p *Pipeline) Explain(src Source) ([]StageStats, error) {
	if src == nil {
		src = &SliceSource{}
	}
	stats := make([]StageStats, len(p.stages)+1)
	out := Source(&statsSource{in: src, stats: &stats[0]})
	unions := make([]*unionSource, len(p.stages)) // a $unionWith's output
	figures := make([]stageFigures, len(p.stages))
	for i, s := range p.stages {
		var run Source
		switch s := s.(type) {
		case *lookupStage:
			run = s.runCounted(p.rt.guard(out), p.rt)
		case *outStage, *mergeStage:
			in := p.rt.guard(out)
			run = &lazySource{in: in, compute: func() ([]bson.Raw, error) {
				for {
					if doc, err := in.Next(); doc == nil || err != nil {
						return nil, err
					}
				}
			}}
		default:
			run = s.run(p.rt.guard(out), p.rt)
		}
		unions[i], _ = run.(*unionSource)
		figures[i], _ = run.(stageFigures)
		out = &statsSource{in: run, stats: &stats[i+1]}
	}
	defer out.Close()
	for {
		doc, err := out.Next()
		if err != nil {
			return nil, err
		}
		if doc == nil {
			for i, u := range unions {
				stats[i+1].SubPipelineRan = u != nil && u.second != nil
				if figures[i] != nil {
					stats[i+1].Own = figures[i].explainFigures()
				}
			}
			return stats, nil
		}
	}
}

// statsSource counts the documents of a stage and the time they took.
type statsSource struct {
	in    Source
	stats *StageStats
}

func (s *statsSource) Next() (bson.Raw, error) {
	start := time.Now()
	doc, err := s.in.Next()
	s.stats.Elapsed += time.Since(start)
	if doc != nil {
		s.stats.NReturned++
	}
	return doc, err
}

func (s *statsSource) Close() error { return s.in.Close() }

// Meta is the metadata of the document read last.
func (s *statsSource) Meta() docsrc.Meta { return docsrc.MetaOf(s.in) }

// SliceSource yields documents gathered in advance. Metas, when set, are
// the metadata of each of Docs.
type SliceSource struct {
	Docs  []bson.Raw
	Metas []docsrc.Meta
	meta  docsrc.Meta
}

func (s *SliceSource) Next() (bson.Raw, error) {
	if len(s.Docs) == 0 {
		return nil, nil
	}
	d := s.Docs[0]
	s.Docs = s.Docs[1:]
	if len(s.Metas) > 0 {
		s.meta, s.Metas = s.Metas[0], s.Metas[1:]
	}
	return d, nil
}

// Meta is the metadata of the document returned last.
func (s *SliceSource) Meta() docsrc.Meta { return s.meta }

// Exhausted reports that every document was returned.
func (s *SliceSource) Exhausted() bool { return len(s.Docs) == 0 }

func (s *SliceSource) Close() error { s.Docs, s.Metas = nil, nil; return nil }

// lazySource computes a blocking stage's output on first read. A compute
// whose documents keep their input's metadata ($sample) sets out.Metas.
type lazySource struct {
	in      Source
	compute func() ([]bson.Raw, error)
	out     SliceSource
	done    bool
}

func (l *lazySource) Next() (bson.Raw, error) {
	if !l.done {
		l.done = true
		out, err := l.compute()
		if err != nil {
			return nil, err
		}
		l.out.Docs = out
	}
	return l.out.Next()
}

func (l *lazySource) Close() error { l.out.Close(); return l.in.Close() }

// Meta is the metadata of the document returned last: none unless the
// compute kept it.
func (l *lazySource) Meta() docsrc.Meta { return l.out.Meta() }

// funcSource maps each input document to zero or more output documents.
type funcSource struct {
	in      Source
	apply   func(doc bson.Raw) ([]bson.Raw, error)
	pending []bson.Raw
	// meta is the metadata of the input the pending documents came from,
	// which they keep.
	meta docsrc.Meta
}

// Meta is the metadata of the document returned last.
func (f *funcSource) Meta() docsrc.Meta { return f.meta }

func (f *funcSource) Next() (bson.Raw, error) {
	for len(f.pending) == 0 {
		doc, err := f.in.Next()
		if doc == nil || err != nil {
			return nil, err
		}
		f.meta = docsrc.MetaOf(f.in)
		if f.pending, err = f.apply(doc); err != nil {
			return nil, err
		}
	}
	d := f.pending[0]
	f.pending = f.pending[1:]
	return d, nil
}

func (f *funcSource) Close() error { return f.in.Close() }

// heldDocSize is the memory of a document a stage keeps in a slice: its
// bytes, its slice header with append's slack, the rounding of its
// allocation.
func heldDocSize(doc bson.Raw) int64 { return int64(len(doc)) + 32 }

// holdAccount is the memory of a stage that keeps documents but cannot
// spill them ($facet, $sample): the stage's limit binds without
// allowDiskUse (with it MongoDB would spill), the process-wide budget
// always. Release it once the documents are dropped.
func (rt *runtime) holdAccount() *sorter.Account {
	limit := rt.memoryLimit()
	if rt.opts.AllowDiskUse {
		limit = math.MaxInt64
	}
	return sorter.NewAccount(limit, rt.opts.Budget)
}

// refused is the error of a stage holdAccount refused.
func (rt *runtime) refused(what string) error {
	if rt.opts.AllowDiskUse {
		return budgetExceeded(what)
	}
	return rt.overMemory(what)
}

// budgetExceeded is the error of a stage whose memory the process-wide
// budget refused, with no limit of its own binding.
func budgetExceeded(what string) error {
	return mongoerr.New(mongoerr.QueryExceededMemoryLimitNoDiskUseAllowed,
		"Exceeded the memory budget of blocking stages for %s, which cannot spill to disk", what)
}
