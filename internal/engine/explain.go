package engine

import (
	"errors"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/planner"
	"github.com/folio-db/folio/internal/query"
)

// Explain describes how a find runs, in the shape of MongoDB's explain
// output: queryPlanner with the winning plan as a tree of stages (COLLSCAN,
// IDHACK, IXSCAN, OR, FETCH, SORT, SKIP, LIMIT, PROJECTION_DEFAULT; see
// planner.Plan.Explain) and, from verbosity ExecutionStats, executionStats
// from running the find to the end (with AllPlansExecution, each
// candidate's trial too).
func (e *Engine) Explain(db, coll string, o FindOptions, v Verbosity) (bson.D, error) {
	if o.GroupKey != "" {
		return e.explainDistinct(db, coll, o.GroupKey, o, v)
	}
	return e.explain(db, coll, o, v, false)
}

// ExplainCount describes how a count (filter, skip, limit, hint) runs, as
// Explain does a find: a COUNT stage over the plan's stages, over a
// COUNT_SCAN or an IXSCAN alone when the keys decide the filter. Its
// executionStats return no documents; the COUNT stage says how many it
// counted (nCounted).
func (e *Engine) ExplainCount(db, coll string, o FindOptions, v Verbosity) (bson.D, error) {
	return e.explain(db, coll, FindOptions{Filter: o.Filter, Hint: o.Hint, Skip: o.Skip, Limit: o.Limit, Txn: o.Txn, Let: o.Let, Ctx: o.Ctx, Collation: o.Collation}, v, true)
}

func (e *Engine) explain(db, coll string, o FindOptions, v Verbosity, count bool) (bson.D, error) {
	q, err := compileFind(o, e.cat.get(db, coll))
	if err != nil {
		return nil, err
	}
	q.explain = true
	ns := db + "." + coll
	filter := o.Filter
	if filter == nil {
		filter = bson.Raw(bsonDoc(bson.D{}))
	}
	c := e.cat.get(db, coll)
	id := identify(c, q)
	var p *planner.Plan
	var trial *trialResult
	var shape planner.Shape
	var winning bson.D
	// countInput: the plan's keys are counted for a pipeline that reads
	// nothing of the documents (FindOptions.Counted).
	countInput := false
	rejectedPlans := bson.A{}
	if c == nil {
		if o.GeoNear != nil {
			return nil, geoNearMissing(db, coll)
		}
		winning = bson.D{{Key: "stage", Value: "EOF"}}
		if count {
			// A count's plan is always a COUNT stage, here over the EOF
			// of a missing collection (getExecutorCount).
			winning = bson.D{{Key: "stage", Value: "COUNT"}, {Key: "inputStage", Value: winning}}
		}
	} else {
		if p, trial, err = e.planFind(o.Ctx, c, q, o.Hint, o.Txn, o.wanted()); err != nil {
			return nil, err
		}
		countInput = !count && o.Counted && p.CountScan()
		shape = planner.Shape{Filter: filter, Sort: o.Sort, Projection: o.Projection, Skip: o.Skip, Limit: o.Limit, SortMemLimit: e.SortMemoryLimit(), Count: count,
			CountInput: countInput, Clustered: c.Clustered(), ReturnKey: o.ReturnKey, ShowFilter: shownFilter(q, o.Let)}
		winning = p.Explain(shape)
		if trial != nil {
			for _, r := range trial.rejected {
				rejectedPlans = append(rejectedPlans, r.Explain(shape))
			}
		}
	}
	if v < ExecutionStats {
		return queryPlanner(ns, q.filter, c, id, winning, rejectedPlans), nil
	}
	stats := &OpStats{}
	var n int64
	var failed *mongoerr.Error
	start := time.Now()
	stages := winning
	switch {
	case count:
		run := &stageRun{stats: stats}
		if c != nil {
			if _, err = e.count(c, p, q.filter, o, stats, run); err != nil {
				if failed = explainFailure(err); failed == nil {
					return nil, err
				}
			}
		}
		run.millis = time.Since(start).Milliseconds()
		stages = run.countStages(winning, run.matched, o.Skip, o.Limit, c == nil || stagesMeasurable(p, lookupD(winning, "inputStage").(bson.D)))
	case countInput:
		// The stages of a count's run, without its COUNT stage: the
		// count handed the pipeline one document per key it counted.
		run := &stageRun{stats: stats}
		if n, err = e.count(c, p, q.filter, o, stats, run); err != nil {
			if failed = explainFailure(err); failed == nil {
				return nil, err
			}
		}
		run.millis = time.Since(start).Milliseconds()
		counted := bson.D{{Key: "stage", Value: "COUNT"}, {Key: "inputStage", Value: winning}}
		stages = lookupD(run.countStages(counted, run.matched, 0, 0, stagesMeasurable(p, winning)), "inputStage").(bson.D)
	case c != nil:
		var run *stageRun
		if n, run, err = e.runStages(c, q, p, o, stats, nil); err != nil {
			if failed = explainFailure(err); failed == nil {
				return nil, err
			}
		}
		if run != nil && stagesMeasurable(p, winning) {
			run.millis = time.Since(start).Milliseconds()
			stages, _ = run.annotate(winning)
		}
	}
	if failed != nil {
		// A failed run leaves MongoDB's explain without the collection
		// (explainStages), so its queryPlanner has no index filter,
		// queryHash or planCacheKey.
		c, id = nil, cacheIdentity{}
	}
	out := queryPlanner(ns, q.filter, c, id, winning, rejectedPlans)
	return append(out, executionStats(n, start, stats, stages, v, trial, shape, failed)), nil
}

// explainFailure is err as an explain with execution reports it: a
// MongoDB error raised while the plan runs (a $divide by zero, a sort
// over its memory limit) makes executionSuccess false with the error's
// message and code, and the explain succeeds (explainStages catches it).
// An interruption, or an error of Folio itself, still fails the command
// (nil).
func explainFailure(err error) *mongoerr.Error {
	me, ok := errors.AsType[*mongoerr.Error](err)
	if !ok || mongoerr.IsInterruption(err) {
		return nil
	}
	return me
}

// ExplainDistinct describes how a distinct on key runs: as a DISTINCT_SCAN
// (under PROJECTION_COVERED, PROJECTION_DEFAULT for a dotted key) when an
// index qualifies (see distinctScan),
// else as the find it runs. From verbosity ExecutionStats, nReturned
// counts the distinct values (a DISTINCT_SCAN is the one plan considered).
func (e *Engine) ExplainDistinct(db, coll, key string, o FindOptions, v Verbosity) (bson.D, error) {
	o = FindOptions{Filter: o.Filter, Hint: o.Hint, Txn: o.Txn, Let: o.Let, Ctx: o.Ctx, Collation: o.Collation}
	return e.explainDistinct(db, coll, key, o, v)
}

// explainDistinct is ExplainDistinct, and, for a find feeding a $group by
// o.GroupKey, the explain of its distinct scan (groupDistinct), whose
// nReturned counts the documents it yields, or of the find it runs.
func (e *Engine) explainDistinct(db, coll, key string, o FindOptions, v Verbosity) (bson.D, error) {
	var p *planner.Plan
	c := e.cat.get(db, coll)
	if c != nil {
		var err error
		if p, err = e.distinctPlan(c, key, o); err != nil {
			return nil, err
		}
	}
	if p == nil {
		o.GroupKey = ""
		return e.explain(db, coll, o, v, false)
	}
	filter := o.Filter
	if filter == nil {
		filter = bson.Raw(bsonDoc(bson.D{}))
	}
	q, err := compileFind(o, c)
	if err != nil {
		return nil, err
	}
	winning := p.Explain(planner.Shape{Filter: filter, Clustered: c.Clustered(), ShowFilter: shownFilter(q, o.Let)})
	out := queryPlanner(db+"."+coll, q.filter, c, identify(c, q), winning, bson.A{})
	if v < ExecutionStats {
		return out, nil
	}
	stats := &OpStats{}
	start := time.Now()
	run := &stageRun{stats: stats}
	var n int
	if o.GroupKey != "" {
		docs, ok, err := e.groupDistinct(db, coll, o, stats, run)
		if err != nil {
			return nil, err
		}
		if !ok {
			o.GroupKey = ""
			return e.explain(db, coll, o, v, false)
		}
		n = len(docs)
	} else {
		vals, _, err := e.distinctScan(db, coll, key, o, stats, run)
		if err != nil {
			return nil, err
		}
		n = len(vals)
	}
	stages := winning
	if run.src != nil && stagesMeasurable(p, winning) {
		run.millis = time.Since(start).Milliseconds()
		stages, _ = run.annotate(winning)
	}
	return append(out, executionStats(int64(n), start, stats, stages, v, nil, planner.Shape{}, nil)), nil
}

// queryPlanner is the queryPlanner section of an explain: parsedQuery is
// the filter as MongoDB serializes its normalized tree; a query under a
// collation other than simple (the command's or the collection's default)
// shows it after parsedQuery (generatePlannerInfo); queryHash and
// planCacheKey are left out for an identity without them.
func queryPlanner(ns string, filter *query.Filter, c *Collection, id cacheIdentity, winning bson.D, rejected bson.A) bson.D {
	planner := bson.D{
		{Key: "namespace", Value: ns},
		{Key: "indexFilterSet", Value: c != nil && c.plans.filterFor(id.cmdShape) != nil},
		{Key: "parsedQuery", Value: filter.Normalized()},
	}
	if coll := filter.Collator(); coll != nil {
		planner = append(planner, bson.E{Key: "collation", Value: coll.Document()})
	}
	if id.queryHash != "" {
		planner = append(planner, bson.E{Key: "queryHash", Value: id.queryHash}, bson.E{Key: "planCacheKey", Value: id.cacheKey})
	}
	planner = append(planner,
		bson.E{Key: "winningPlan", Value: winning},
		bson.E{Key: "rejectedPlans", Value: rejected})
	return bson.D{
		{Key: "explainVersion", Value: "1"},
		{Key: "queryPlanner", Value: planner},
	}
}

// shownFilter is how q's explain shows the part of its filter a stage
// applies: parsed as q's was, under the find's let variables and
// collation, and serialized as MongoDB serializes its normalized tree.
// Without the let variables (a plan cache entry's plan, made for every
// query of its shape), a part reading them is shown as written.
func shownFilter(q compiledFind, let *expr.Let) func(bson.Raw) any {
	coll := q.filter.Collator()
	return func(part bson.Raw) any { return query.Shown(part, let, coll) }
}

// executionStats is the executionStats section of an explain; at
// verbosity AllPlansExecution it ends with the trial's allPlansExecution
// (its plans explained by shape). A run that failed reports its error
// (errorMessage, errorCode) after executionSuccess.
func executionStats(n int64, start time.Time, stats *OpStats, stages bson.D, v Verbosity, trial *trialResult, shape planner.Shape, failed *mongoerr.Error) bson.E {
	d := bson.D{{Key: "executionSuccess", Value: failed == nil}}
	if failed != nil {
		d = append(d, bson.E{Key: "errorMessage", Value: failed.Msg}, bson.E{Key: "errorCode", Value: int32(failed.Code)})
	}
	d = append(d,
		bson.E{Key: "nReturned", Value: explainCount(n)},
		bson.E{Key: "executionTimeMillis", Value: explainCount(time.Since(start).Milliseconds())},
		bson.E{Key: "totalKeysExamined", Value: explainCount(stats.KeysExamined)},
		bson.E{Key: "totalDocsExamined", Value: explainCount(stats.DocsExamined)},
		bson.E{Key: "executionStages", Value: stages},
	)
	if v >= AllPlansExecution {
		d = append(d, allPlansExecution(trial, shape))
	}
	return bson.E{Key: "executionStats", Value: d}
}

// explainCount is a count as MongoDB's explain appends it
// (planner.ExplainNumber).
func explainCount(n int64) any { return planner.ExplainNumber(n) }
