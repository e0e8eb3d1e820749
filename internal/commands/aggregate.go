package commands

import (
	"context"
	"errors"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/aggregate"
	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/cursors"
	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

func init() {
	register(aggregateCmd, aggregateSpec, "aggregate")
	uncounted("aggregate")
	namesCollection("aggregate")
}

// aggregateSpec declares aggregate's fields.
// https://www.mongodb.com/docs/v7.0/reference/command/aggregate/
var aggregateSpec = &argSpec{path: "aggregate", fields: []argField{
	required("pipeline", tPipeline),
	arg("cursor", tAggregateCursor),
	arg("allowDiskUse", tOptionalBool),
	arg("hint", tHint),
	arg("let", tDoc),
	arg("explain", tExplain),
	arg("collation", tDoc),
	arg("bypassDocumentValidation", tBool),
	refuseTrue("fromMongos", tBool, "sharded execution"),
	refuseTrue("needsMerge", tBool, "sharded execution"),
	refuseTrue("$_generateV2ResumeTokens", tBool, "resume tokens in the v2 format"),
	refuseTrue("isMapReduceCommand", tBool, "mapReduce"),
	refuse("exchange", tDoc, "exchange producers of sharded execution"),
	collectionUUIDField,
}, subs: []*argSpec{aggregateCursorSpec}}

// aggregateCursorSpec is aggregate's cursor, which MongoDB parses as a
// struct of its own (SimpleCursorOptions) named "cursor" in its errors.
var aggregateCursorSpec = &argSpec{path: "cursor", fields: cursorSpec("").fields}

// localOnlyStages are the stages that read this node's own state or an
// outside service: MongoDB refuses them, wherever they are in a pipeline,
// under a read concern other than local and in a multi-document
// transaction, before it parses the pipeline (their LiteParsed stages'
// onlyReadConcernLocalSupported and transactionNotSupported).
var localOnlyStages = map[string]bool{
	"$collStats": true, "$currentOp": true, "$indexStats": true, "$listLocalSessions": true,
	"$listSessions": true, "$planCacheStats": true, "$listCatalog": true, "$listSearchIndexes": true,
	"$search": true, "$searchMeta": true, "$vectorSearch": true, "$queryStats": true,
	"$listSampledQueries": true, "$shardedDataDistribution": true,
}

// anyReadConcernStages are the localOnlyStages that take any read concern
// (their LiteParsed stages leave supportsReadConcern as it is) though
// transactions refuse them: migration tools read $collStats under
// majority read concern.
var anyReadConcernStages = map[string]bool{"$collStats": true, "$indexStats": true}

// stagesNotInTransactions are the other stages a multi-document
// transaction may not run, anywhere in its pipeline (MongoDB manual,
// Transactions and Operations).
var stagesNotInTransactions = map[string]bool{"$merge": true, "$out": true, "$unionWith": true}

// firstLocalOnlyStage is the first stage of p, at any depth, that
// localOnlyStages holds, but for those of anyReadConcernStages when
// readConcern; "" for none.
func firstLocalOnlyStage(p bson.RawArray, readConcern bool) string {
	var found string
	_ = eachStage(p, func(name string, _ bson.Raw) error {
		if localOnlyStages[name] && !(readConcern && anyReadConcernStages[name]) {
			found = name
			return errFoundStage
		}
		return nil
	})
	return found
}

// errFoundStage ends a walk of a pipeline's stages (eachStage) that found
// what it looked for.
var errFoundStage = errors.New("found")

// checkTxnPipeline refuses a transaction's pipeline that uses a stage
// transactions do not run.
func checkTxnPipeline(p bson.RawArray) error {
	if name := firstLocalOnlyStage(p, false); name != "" {
		return mongoerr.New(mongoerr.OperationNotSupportedInTransaction,
			"Operation not permitted in transaction :: caused by :: Aggregation stage %s cannot run within a multi-document transaction.", name)
	}
	return eachStage(p, func(name string, _ bson.Raw) error {
		if stagesNotInTransactions[name] {
			return mongoerr.New(mongoerr.OperationNotSupportedInTransaction, "Stage not supported inside of a multi-document transaction: %s", name)
		}
		return nil
	})
}

// aggregateCmd runs {aggregate: <collection> | 1, pipeline, cursor, ...}.
// A leading $match (and a $sort right after it, with a following $limit)
// is handed to the engine's scan so it can use indexes; the rest of the
// pipeline runs in internal/aggregate, under the operation's context (and
// then each getMore's). With explain: true the pipeline is explained (at
// queryPlanner verbosity) rather than run.
func aggregateCmd(s *Service, r *Request) (bson.Raw, error) {
	s.Ops.Query.Add(1)
	b := &binding{r.Ctx, r.op}
	if p, _ := r.args.value("pipeline").ArrayOK(); r.Txn != nil {
		if err := checkTxnPipeline(p); err != nil {
			return nil, err
		}
	}
	a, err := parseAggregate(s, r, &r.args, b)
	if err != nil {
		return nil, err
	}
	if err := s.checkAggregateUUID(r, &r.args, a); err != nil {
		return nil, err
	}
	if err := s.onView(r, a); err != nil {
		return nil, err
	}
	if err := s.resolveInvolved(r, a.stages); err != nil {
		return nil, err
	}
	if err := s.checkViewCollations(r, a); err != nil {
		return nil, err
	}
	if len(a.stages) > 0 && Name(a.stages[0]) == "$changeStream" {
		return s.changeStream(r, a, b)
	}
	if a.opts.Bound, err = s.scriptVars(a.opts.Let, r, b); err != nil {
		return nil, err
	}
	a.opts.Env = engineEnv{e: s.Engine, ops: &s.ops, tsOpen: &s.tsOpen, txn: r.Txn, ctx: b, journal: r.Args.WriteConcern.Journal(), bypass: r.args.bool("bypassDocumentValidation"),
		views:          func(db, coll string) (string, []bson.Raw, bool, error) { return s.resolveView(r, db, coll) },
		timeseries:     s.outTimeseries(r),
		maxDensifyDocs: a.opts.MaxDensifyDocs, maxPushBytes: a.opts.MaxPushBytes, maxAddToSetBytes: a.opts.MaxAddToSetBytes,
		maxTopNBytes: a.opts.MaxTopNBytes, maxWindowBytes: a.opts.WindowMemoryLimit, maxDensifyBytes: a.opts.DensifyMemoryLimit, maxGroupBytes: a.opts.GroupMemoryLimit,
		maxLookupBytes: a.opts.LookupMaxBytes, maxFacetBytes: a.opts.FacetMaxOutputBytes, facetBufferBytes: a.opts.FacetBufferBytes}
	if a.explain {
		if r.Txn != nil {
			return nil, mongoerr.New(mongoerr.OperationNotSupportedInTransaction, "Cannot run 'aggregate' with explain in a multi-document transaction.")
		}
		out, err := explainAggregate(s, r, a, engine.QueryPlanner)
		if err != nil {
			return nil, err
		}
		return explainReply(s, out, r.Cmd), nil
	}
	if !a.haveCursor {
		return nil, mongoerr.New(mongoerr.FailedToParse, "The 'cursor' option is required, except for aggregate with the explain argument")
	}
	src, nsColl, err := s.openAggregate(r, a)
	if err != nil {
		return nil, err
	}
	reply, err := s.serveFirstBatch(r, r.DB, nsColl, src, b, firstBatch{size: a.batchSize, defaultSize: defaultFirstBatch})
	if err != nil {
		// run_aggregate's context for what the pipeline's executor
		// raised while filling the first batch
		return nil, mongoerr.AddContext(err, aggregateExecutorContext)
	}
	return reply, nil
}

// aggregateExecutorContext is what MongoDB's aggregate writes before an
// error its pipeline raised while producing the first batch (as the find
// command writes engine.FindExecutorContext): a stage's failure at run
// time, an interruption; not what parsing the pipeline refused.
const aggregateExecutorContext = "PlanExecutor error during aggregation"

// openAggregate opens the pipeline a and returns its results and the
// collection its cursor names (the view it was run on, if any).
func (s *Service) openAggregate(r *Request, a *aggregateArgs) (cursors.Source, string, error) {
	var err error
	if a.opts.Collator, err = engine.CommandCollator(s.Engine.CollectionIn(r.Txn, r.DB, a.opts.Coll), a.collation); err != nil {
		return nil, "", err
	}
	p, err := aggregate.Parse(a.stages, a.opts)
	if err != nil {
		return nil, "", err
	}
	var src aggregate.Source
	var scan cursors.Restorer
	nsColl := "$cmd.aggregate"
	if a.opts.Coll != "" {
		nsColl = a.opts.Coll
	}
	if a.opts.Coll != "" && !p.Generates() {
		cur, err := s.openPipelineScan(r, a, p)
		if err != nil {
			return nil, "", err
		}
		if len(p.Stages()) == 0 {
			// The whole pipeline is the query: MongoDB runs it as a find.
			src, scan = cur, restorerOf(cur)
		} else {
			cs := &collectionSource{src: cur}
			src, scan = cs, cs
		}
	}
	if a.view != "" {
		nsColl = a.view
	}
	return pipelineSource{p.Run(src), scan}, nsColl, nil
}

// openPipelineScan opens what a pipeline on a collection reads: a random
// cursor for a leading $sample when MongoDB would use one, or the
// engine's find of the stages it takes (see pushdown).
func (s *Service) openPipelineScan(r *Request, a *aggregateArgs, p *aggregate.Pipeline) (engine.Cursor, error) {
	if n, ok := p.LeadingSample(); ok {
		cur, random, err := s.Engine.RandomSample(a.opts.Ctx, r.DB, a.opts.Coll, n, a.txn)
		if err != nil {
			return nil, err
		}
		if random {
			p.DropLeadingSample()
			if err := checkPipelineCollation(a.opts.Collator, p.Stages()); err != nil {
				cur.Close()
				return nil, err
			}
			return cur, nil
		}
	}
	find := a.pushdown(p)
	if err := checkPipelineCollation(a.opts.Collator, p.Stages()); err != nil {
		return nil, err
	}
	if r.DB == engine.OplogDB && a.opts.Coll == engine.OplogColl && a.txn == nil {
		return s.Engine.FindOplog(find, false)
	}
	return s.Engine.Find(r.DB, a.opts.Coll, find)
}

// pipelineSource is a pipeline's output as a cursor's source. As MongoDB's
// pipeline executor, it knows it is exhausted only once it returns its
// end: even a scan the pipeline handed whole to the engine is not
// inspected for a reached limit or a drained sort.
type pipelineSource struct {
	aggregate.Source
	scan cursors.Restorer // nil for a collection-less pipeline
}

// Restore kills the cursor (QueryPlanKilled) when the collection scan the
// pipeline still holds reads a collection since dropped or renamed, or an
// index since dropped, as MongoDB's executor does when a getMore restores
// it.
func (p pipelineSource) Restore() error {
	if p.scan == nil {
		return nil
	}
	return p.scan.Restore()
}

// Park parks the collection scan the pipeline still holds (see
// cursors.Parker).
func (p pipelineSource) Park() bool {
	pk, ok := p.scan.(cursors.Parker)
	return ok && pk.Park()
}

// restorerOf is src's check for a getMore, or nil when it has none.
func restorerOf(src aggregate.Source) cursors.Restorer {
	r, _ := src.(cursors.Restorer)
	return r
}

// docSourceBatchBytes is MongoDB's internalDocumentSourceCursorBatchSizeBytes
// (4 MiB): how much of its collection scan a pipeline reads ahead at once.
const docSourceBatchBytes = 4 << 20

// collectionSource is the collection scan under pipeline stages, read as
// MongoDB's DocumentSourceCursor reads it: in batches that end once they
// pass docSourceBatchBytes. The batch that reaches the end of the scan ends
// the scan itself (MongoDB disposes of its executor then), so a drop after
// that no longer kills the cursor; before, the getMore is checked as a
// find's.
type collectionSource struct {
	src   aggregate.Source
	batch []bson.Raw
	// metas are the batch's metadata ($text scores), when the scan has
	// any; meta is that of the document returned last.
	metas []docsrc.Meta
	meta  docsrc.Meta
	ended bool
}

// Meta is the metadata of the document returned last.
func (c *collectionSource) Meta() docsrc.Meta { return c.meta }

func (c *collectionSource) Next() (bson.Raw, error) {
	if len(c.batch) == 0 && !c.ended {
		if err := c.load(); err != nil {
			return nil, err
		}
	}
	if len(c.batch) == 0 {
		return nil, nil
	}
	doc := c.batch[0]
	c.batch[0] = nil
	c.batch = c.batch[1:]
	if len(c.metas) > 0 {
		c.meta, c.metas = c.metas[0], c.metas[1:]
	}
	return doc, nil
}

// load reads the next batch of the scan (its documents are copies).
func (c *collectionSource) load() error {
	c.batch, c.metas = c.batch[:0], c.metas[:0]
	_, scored := c.src.(docsrc.MetaSource)
	size := 0
	for size <= docSourceBatchBytes {
		doc, err := c.src.Next()
		if err != nil {
			return err
		}
		if doc == nil {
			c.ended = true
			return nil
		}
		c.batch = append(c.batch, doc)
		if scored {
			c.metas = append(c.metas, docsrc.MetaOf(c.src))
		}
		size += len(doc)
	}
	return nil
}

func (c *collectionSource) Close() error { return c.src.Close() }

// Park parks the scan (see cursors.Parker), ended or not: an ended scan
// still holds its iterator until the cursor closes.
func (c *collectionSource) Park() bool {
	p, ok := c.src.(cursors.Parker)
	return ok && p.Park()
}

// Restore checks the scan as a find's cursor is checked, until it ends.
func (c *collectionSource) Restore() error {
	if r := restorerOf(c.src); r != nil && !c.ended {
		return r.Restore()
	}
	return nil
}

// aggregateArgs is a parsed aggregate command.
type aggregateArgs struct {
	stages     []bson.Raw
	batchSize  int64 // noBatchSize when absent
	haveCursor bool
	explain    bool
	hint       bson.RawValue
	txn        *engine.Txn
	opts       aggregate.Options
	collation  bson.Raw
	// view is the view the pipeline was run on (opts.Coll is then the
	// collection under it, and stages begin with the views' pipelines).
	view string
	// currentOp is the leading $currentOp stage as explain shows it
	// (currentOpExplained), nil for none: stages[0] holds the operations
	// it listed.
	currentOp bson.D
}

// parseAggregate reads the aggregate command c of r (on its own, or inside
// explain), run in r's transaction, if any, under the operation context ctx.
func parseAggregate(s *Service, r *Request, c *cmdArgs, ctx context.Context) (*aggregateArgs, error) {
	db, txn := r.DB, r.Txn
	maxDensify, maxPush, maxAddToSet, maxTopN := s.maxDensifyDocs(), s.maxPushBytes(), s.maxAddToSetBytes(), s.maxTopNBytes()
	maxWindow, maxGroup, maxDensifyBytes := s.maxWindowBytes(), s.maxGroupBytes(), s.maxDensifyBytes()
	maxLookup, maxFacet, facetBuffer := s.maxLookupBytes(), s.maxFacetBytes(), s.facetBufferBytes()
	a := &aggregateArgs{batchSize: noBatchSize, txn: txn, opts: aggregate.Options{DB: db, Ctx: ctx, Port: s.port(),
		// Explain runs the pipeline with this Env: its $lookup,
		// $graphLookup and $unionWith read views as the aggregate's do.
		Env: engineEnv{e: s.Engine, ops: &s.ops, tsOpen: &s.tsOpen, txn: txn, ctx: ctx, maxDensifyDocs: maxDensify,
			views:        func(db, coll string) (string, []bson.Raw, bool, error) { return s.resolveView(r, db, coll) },
			maxPushBytes: maxPush, maxAddToSetBytes: maxAddToSet, maxTopNBytes: maxTopN, maxWindowBytes: maxWindow, maxDensifyBytes: maxDensifyBytes, maxGroupBytes: maxGroup,
			maxLookupBytes: maxLookup, maxFacetBytes: maxFacet, facetBufferBytes: facetBuffer},
		SortMemoryLimit: s.Engine.SortMemoryLimit(), MaxDensifyDocs: maxDensify, MaxPushBytes: maxPush, MaxAddToSetBytes: maxAddToSet,
		MaxTopNBytes: maxTopN, WindowMemoryLimit: maxWindow, DensifyMemoryLimit: maxDensifyBytes, GroupMemoryLimit: maxGroup, LookupMaxBytes: maxLookup, FacetMaxOutputBytes: maxFacet,
		FacetBufferBytes: facetBuffer}}
	// the namespace as aggregation_request_helper's parseNs reads it: a
	// number must be 1 (no collection), anything else a collection name
	switch collv := c.first(); {
	case collv.Type == bson.TypeString:
		var err error
		if a.opts.Coll, err = collectionArg(c.raw, r.DB); err != nil {
			return nil, err
		}
	case values.IsNumber(collv.Type):
		if values.Compare(collv, values.Int32Value(1)) != 0 {
			return nil, mongoerr.New(mongoerr.FailedToParse, "Invalid command format: the 'aggregate' field must specify a collection name or 1")
		}
	default:
		return nil, mongoerr.New(mongoerr.TypeMismatch, "collection name has invalid type: %s", values.TypeName(collv.Type))
	}
	// needsMerge, given at all (even false or null), comes from a mongos
	// with fromMongos (aggregation_request_helper's validate)
	if _, err := c.raw.LookupErr("needsMerge"); err == nil {
		if _, err := c.raw.LookupErr("fromMongos"); err != nil {
			return nil, mongoerr.New(mongoerr.FailedToParse, "Cannot specify 'needsMerge' without 'fromMongos'")
		}
	}
	var err error
	if a.stages, err = c.docs("pipeline"); err != nil {
		return nil, err
	}
	if cur := c.doc("cursor"); cur != nil {
		a.haveCursor = true
		if a.batchSize, err = cursorBatchSize(aggregateCursorSpec, cur); err != nil {
			return nil, err
		}
	}
	a.opts.AllowDiskUse, a.hint, a.opts.Let, a.explain = c.boolOr("allowDiskUse", s.allowDiskUseByDefault()), c.value("hint"), c.doc("let"), c.bool("explain")
	a.collation = c.doc("collation")
	if a.explain && c.raw.Lookup("writeConcern").Type != 0 {
		return nil, mongoerr.New(mongoerr.FailedToParse, "Aggregation explain does not support the'writeConcern' option")
	}
	if len(a.stages) > 0 && Name(a.stages[0]) == "$currentOp" {
		stage := a.stages[0]
		if a.stages[0], err = s.currentOpStage(r, a.opts.Coll, stage); err != nil {
			return nil, err
		}
		a.currentOp = currentOpExplained(stage)
	}
	if len(a.stages) > 0 {
		stage, ok, err := s.sessionsStage(r, a.opts.Coll, a.stages[0])
		if err != nil {
			return nil, err
		}
		if ok {
			a.stages[0], a.opts.Coll = stage, ""
		}
	}
	return a, nil
}

// pushdown takes the leading $match and $sort (and the $limit after it)
// out of p for the engine's scan of the collection, whose documents carry
// their index keys and record ids when a stage reads {$meta: "indexKey"}
// and {$meta: "recordId"}, and their sort keys when the pipeline marked
// the sort (Pushdown.SortKeys).
func (a *aggregateArgs) pushdown(p *aggregate.Pipeline) engine.FindOptions {
	pd := p.TakePushdown()
	reads := func(name string) bool {
		return slices.ContainsFunc(a.stages, func(st bson.Raw) bool {
			return slices.Contains(expr.MetaNames(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: st}), name)
		})
	}
	return engine.FindOptions{
		Filter: pd.Filter, Let: pd.Let, Sort: pd.Sort, Limit: pd.Limit, GeoNear: pd.GeoNear, Hint: a.hint, AllowDiskUse: a.opts.AllowDiskUse,
		Txn: a.txn, Ctx: a.opts.Ctx, Collation: a.collation, ExecutorContext: aggregateExecutorContext,
		IndexKeys: reads("indexKey"), RecordIDs: reads("recordId"), SortKeys: pd.SortKeys, TextScores: pd.TextScores,
		GroupKey: pd.GroupKey, Counted: pd.Counted,
	}
}

// engineEnv gives the pipeline's $lookup, $unionWith, $out, $merge,
// $collStats and $indexStats access to the engine.
type engineEnv struct {
	e *engine.Engine
	// ops has the latency figures of $collStats' latencyStats (nil: none).
	ops *opRegistry
	txn *engine.Txn
	// journal: $out and $merge writes are on disk when the aggregate
	// returns (its write concern asks for the journal).
	journal bool
	// bypass is bypassDocumentValidation for $out and $merge.
	bypass bool
	ctx    context.Context
	// fig, when set, receives the work of each read (Counted).
	fig *aggregate.ScanFigures
	// views resolves a view (Service.resolveView), so that $lookup,
	// $graphLookup and $unionWith read views; nil reads collections only.
	views func(db, coll string) (string, []bson.Raw, bool, error)
	// timeseries reports whether db.coll is a view and the time series
	// collection it is (nil: another view), for $out; nil knows no views.
	timeseries func(db, coll string) (ts *tsColl, isView bool, err error)
	// tsOpen has the time series collections' execution statistics.
	tsOpen *openBuckets
	// maxDensifyDocs is internalQueryMaxAllowedDensifyDocs, for the
	// pipelines of views read.
	maxDensifyDocs int64
	// maxPushBytes and maxAddToSetBytes are internalQueryMaxPushBytes and
	// internalQueryMaxAddToSetBytes, likewise.
	maxPushBytes, maxAddToSetBytes int64
	// maxTopNBytes is internalQueryTopNAccumulatorBytes, likewise.
	maxTopNBytes int64
	// maxWindowBytes is internalDocumentSourceSetWindowFieldsMaxMemoryBytes, likewise.
	maxWindowBytes int64
	// maxDensifyBytes is internalDocumentSourceDensifyMaxMemoryBytes, likewise.
	maxDensifyBytes int64
	// maxGroupBytes is internalDocumentSourceGroupMaxMemoryBytes, likewise.
	maxGroupBytes int64
	// maxLookupBytes and maxFacetBytes are
	// internalLookupStageIntermediateDocumentMaxSizeBytes and
	// internalQueryFacetMaxOutputDocSizeBytes, likewise.
	maxLookupBytes, maxFacetBytes int64
	// facetBufferBytes is internalQueryFacetBufferSizeBytes, likewise.
	facetBufferBytes int64
}

// Counted is env adding the work of each of its reads to fig.
func (env engineEnv) Counted(fig *aggregate.ScanFigures) aggregate.Env {
	env.fig = fig
	return env
}

// counted runs open, one read of env's, under an OpStats of its own when
// env counts its reads (Counted): once the source is closed, the read's
// keys and documents examined and its first plan's reads go to env.fig.
func (env engineEnv) counted(open func(engineEnv) (aggregate.Source, error)) (aggregate.Source, error) {
	if env.fig == nil {
		return open(env)
	}
	st := &engine.OpStats{}
	inner := env
	inner.fig, inner.ctx = nil, engine.WithOpStats(env.ctx, st)
	src, err := open(inner)
	if err != nil {
		return nil, err
	}
	return &countedSource{Source: src, st: st, fig: env.fig}, nil
}

// countedSource is a read whose work is added to fig when it is closed.
type countedSource struct {
	aggregate.Source
	st  *engine.OpStats
	fig *aggregate.ScanFigures
}

func (s *countedSource) Close() error {
	err := s.Source.Close()
	if s.st != nil {
		indexes, scan := s.st.FirstPlanReads()
		s.fig.Add(s.st.KeysExamined, s.st.DocsExamined, indexes, scan)
		s.st = nil
	}
	return err
}

// Meta is the metadata of the document read last.
func (s *countedSource) Meta() docsrc.Meta { return docsrc.MetaOf(s.Source) }

// Find reads the documents of db.coll matching filter; a view's are its
// pipeline's output.
func (env engineEnv) Find(db, coll string, filter bson.Raw, c *collation.Collator) (aggregate.Source, error) {
	return env.counted(func(env engineEnv) (aggregate.Source, error) { return env.find(db, coll, filter, c) })
}

func (env engineEnv) find(db, coll string, filter bson.Raw, c *collation.Collator) (aggregate.Source, error) {
	if env.views != nil {
		base, stages, isView, err := env.views(db, coll)
		if err != nil {
			return nil, err
		}
		if isView {
			return env.findView(db, base, stages, filter, c)
		}
	}
	return env.e.Find(db, coll, engine.FindOptions{Filter: filter, Txn: env.txn, Ctx: env.ctx, Collation: collationDoc(c)})
}

// FindNear runs a sub-pipeline's leading $geoNear search on db.coll. On a
// view the view's stages come first, so the $geoNear is no longer first
// (an empty view reads its collection).
func (env engineEnv) FindNear(db, coll string, g *aggregate.GeoNear, c *collation.Collator) (aggregate.Source, error) {
	return env.counted(func(env engineEnv) (aggregate.Source, error) { return env.findNear(db, coll, g, c) })
}

func (env engineEnv) findNear(db, coll string, g *aggregate.GeoNear, c *collation.Collator) (aggregate.Source, error) {
	if env.views != nil {
		base, stages, isView, err := env.views(db, coll)
		if err != nil {
			return nil, err
		}
		if isView && len(stages) > 0 {
			return nil, mongoerr.New(mongoerr.StageMustBeFirst, "$geoNear is only valid as the first stage in a pipeline")
		}
		if isView {
			coll = base
		}
	}
	return env.e.Find(db, coll, engine.FindOptions{GeoNear: g, Txn: env.txn, Ctx: env.ctx, Collation: collationDoc(c)})
}

// ResolveView follows db.coll's chain of views (Service.resolveView).
func (env engineEnv) ResolveView(db, coll string) (string, []bson.Raw, bool, error) {
	if env.views == nil {
		return coll, nil, false, nil
	}
	return env.views(db, coll)
}

// findView runs a view's stages (then a $match of filter) on base.
func (env engineEnv) findView(db, base string, stages []bson.Raw, filter bson.Raw, c *collation.Collator) (aggregate.Source, error) {
	if len(filter) > 5 {
		stages = append(stages, marshal(bson.D{{Key: "$match", Value: filter}}))
	}
	p, err := aggregate.Parse(stages, aggregate.Options{DB: db, Coll: base, Ctx: env.ctx, Env: env, Collator: c, SortMemoryLimit: env.e.SortMemoryLimit(),
		MaxDensifyDocs: env.maxDensifyDocs, MaxPushBytes: env.maxPushBytes, MaxAddToSetBytes: env.maxAddToSetBytes, MaxTopNBytes: env.maxTopNBytes,
		WindowMemoryLimit: env.maxWindowBytes, DensifyMemoryLimit: env.maxDensifyBytes, GroupMemoryLimit: env.maxGroupBytes, LookupMaxBytes: env.maxLookupBytes, FacetMaxOutputBytes: env.maxFacetBytes,
		FacetBufferBytes: env.facetBufferBytes})
	if err != nil {
		return nil, err
	}
	// The scan runs what it can of the view's stages, as an aggregate on
	// the view does: a leading $geoNear's search (which its stage needs),
	// a leading $text search, $match and $sort. A $text search scores its
	// documents: the stages reading the view may read the scores.
	pd := p.TakePushdown()
	cur, err := env.e.Find(db, base, engine.FindOptions{Filter: pd.Filter, Let: pd.Let, Sort: pd.Sort, Limit: pd.Limit, GeoNear: pd.GeoNear,
		SortKeys: pd.SortKeys, TextScores: pd.Text, Txn: env.txn, Ctx: env.ctx, Collation: collationDoc(c)})
	if err != nil {
		return nil, err
	}
	return p.Run(&collectionSource{src: cur}), nil
}

// simpleCollationDoc names the simple collation explicitly, so that a read
// does not take its collection's default.
var simpleCollationDoc = marshal(bson.D{{Key: "locale", Value: "simple"}})

// collationDoc is c as a command's collation document (simple for nil).
func collationDoc(c *collation.Collator) bson.Raw {
	if c == nil {
		return simpleCollationDoc
	}
	return c.Document()
}

// writeOptions are the options of the pipeline's writes ($out, $merge):
// the command's write concern, whose wait for durability they leave to
// the command reading the pipeline now (deferDurable), once per command
// rather than once per document.
func (env engineEnv) writeOptions() engine.WriteOptions {
	wo := engine.WriteOptions{Txn: env.txn, Journal: env.journal, Ctx: env.ctx, BypassValidation: env.bypass}
	if b, ok := env.ctx.(*binding); ok {
		deferDurable(b.op, &wo)
	}
	return wo
}

func (env engineEnv) Insert(db, coll string, docs []bson.Raw, ordered bool) (int, error) {
	if len(docs) == 0 {
		if env.e.Collection(db, coll) != nil {
			return -1, nil
		}
		err := env.e.CreateCollection(db, coll, engine.CollectionOptions{})
		if err != nil && mongoerr.As(err).Code == mongoerr.NamespaceExists {
			return -1, nil
		}
		return -1, err
	}
	_, werrs, err := env.e.Insert(db, coll, docs, ordered, env.writeOptions())
	if err != nil {
		return -1, err
	}
	if len(werrs) > 0 {
		return werrs[0].Index, werrs[0].Err
	}
	return -1, nil
}

// Replace writes doc as a replacement update, or, fromPipeline, as the
// update pipeline [{$replaceWith: {$literal: doc}}], which stores it as
// MongoDB's PipelineExecutor stores a pipeline's result.
func (env engineEnv) Replace(db, coll string, id bson.RawValue, doc bson.Raw, fromPipeline bool) error {
	filter := marshal(bson.D{{Key: "_id", Value: id}})
	spec := engine.UpdateSpec{Filter: filter, Update: doc, WriteOptions: env.writeOptions()}
	if fromPipeline {
		spec.Update = marshal(bson.D{{Key: "0", Value: bson.D{{Key: "$replaceWith", Value: bson.D{{Key: "$literal", Value: doc}}}}}})
		spec.Pipeline = true
	}
	_, err := env.e.Update(db, coll, spec)
	return err
}

func (env engineEnv) DropCollection(db, coll string) error {
	_, err := env.e.DropCollection(db, coll)
	return err
}

func (env engineEnv) CheckOutput(stage, db, coll string) error {
	if env.views == nil {
		return nil
	}
	_, _, isView, err := env.views(db, coll)
	if err == nil && isView {
		err = viewError(db, coll)
	}
	return err
}

func (env engineEnv) HasUniqueKeyIndex(db, coll string, paths []string, c *collation.Collator) bool {
	return env.e.CollectionIn(env.txn, db, coll).HasUniqueKeyIndex(paths, c)
}

func (env engineEnv) PlanCacheStats(db, coll string) ([]bson.Raw, error) {
	entries, err := env.e.PlanCacheStats(db, coll)
	if err != nil {
		return nil, err
	}
	out := make([]bson.Raw, len(entries))
	for i, ent := range entries {
		out[i] = marshal(ent)
	}
	return out, nil
}

// LatencyStats is db.coll's latencyStats since the server started.
func (env engineEnv) LatencyStats(db, coll string, histograms bool) bson.Raw {
	return marshal(env.ops.latencyDoc(db+"."+coll, histograms))
}

func (env engineEnv) CollectionScans(db, coll string) (int64, int64, error) {
	scans := env.e.OplogScans()
	if !env.e.IsOplog(db, coll) {
		c, _, err := env.statsCollection(db, coll)
		if err != nil {
			return 0, 0, err
		}
		scans = c.Scans()
	}
	return scans.Total(), scans.NonTailable(), nil
}

// statsCollection is the collection a $collStats section describes: a
// time series collection's buckets (ts then set); another view has none
// (CommandNotSupportedOnView), and a missing collection is
// NamespaceNotFound (the stage says which section it was retrieving).
func (env engineEnv) statsCollection(db, coll string) (*engine.Collection, *tsColl, error) {
	var ts *tsColl
	if env.timeseries != nil {
		var isView bool
		var err error
		if ts, isView, err = env.timeseries(db, coll); err != nil || isView && ts == nil {
			if err == nil {
				err = viewError(db, coll)
			}
			return nil, nil, err
		}
	}
	name := coll
	if ts != nil {
		name = ts.buckets
	}
	c := env.e.Collection(db, name)
	if c == nil {
		return nil, nil, mongoerr.New(mongoerr.NamespaceNotFound, "Collection [%s.%s] not found.", db, coll)
	}
	return c, ts, nil
}

func (env engineEnv) CollectionStats(db, coll string, scale int64) (aggregate.CollStats, error) {
	if env.e.IsOplog(db, coll) {
		st, err := env.e.OplogStats()
		if err != nil {
			return aggregate.CollStats{}, err
		}
		return aggregate.CollStats{Count: st.Count, Storage: marshal(storageStats(oplogOptions(env.e), st, scale, nil))}, nil
	}
	c, ts, err := env.statsCollection(db, coll)
	if err != nil {
		return aggregate.CollStats{}, err
	}
	st, err := env.e.Stats(c)
	if err != nil {
		return aggregate.CollStats{}, err
	}
	out := aggregate.CollStats{Count: st.Count, Storage: marshal(storageStats(c.Options, st, scale, bucketStatsOf(env.tsOpen, c)))}
	if id := idIndexSpec(c); id != nil {
		out.Indexes = []aggregate.IndexStat{{Spec: marshal(id), Ops: c.IDUsage().Ops(), Since: c.IDUsage().Since}}
	}
	for _, ix := range c.Listed() {
		spec := ix.Spec
		if ts != nil {
			var ok bool
			if spec, ok = ts.userIndex(spec); !ok {
				continue
			}
		}
		out.Indexes = append(out.Indexes, aggregate.IndexStat{Spec: spec, Ops: ix.Usage().Ops(), Since: ix.Usage().Since, Building: ix.UnderConstruction()})
	}
	out.KeyAfterSpec = ts != nil
	if n, err := shardedChunks(env.e, c); err != nil {
		return out, err
	} else if n > 0 {
		out.Shard = shardName
	}
	return out, nil
}
