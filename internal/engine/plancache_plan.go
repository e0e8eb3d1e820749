package engine

import (
	"context"
	"fmt"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/planner"
)

// cacheIdentity is a query's shape and plan cache key, with their hashes
// (queryHash and planCacheKey), and its command shape (compiledFind.shapes).
type cacheIdentity struct {
	shape, key          string
	queryHash, cacheKey string
	cmdShape            string
}

// identify computes q's shape and plan cache key on c. A query on a
// missing collection (c nil) has none: MongoDB's explain computes them
// only for an existing collection (generatePlannerInfo).
func identify(c *Collection, q compiledFind) cacheIdentity {
	if c == nil {
		return cacheIdentity{}
	}
	shape, cmdShape := q.shapes()
	key := planKey(c, shape, q.strict, planner.Usable(q.filter), planner.CollationFits(q.filter))
	return cacheIdentity{shape: shape, key: key, queryHash: shapeHash(shape), cacheKey: shapeHash(key), cmdShape: cmdShape}
}

// choosePlan picks among several candidate plans (best static score
// first) through c's plan cache: an active entry's plan is used if it
// produces its first results within cacheEvictionRatio times the entry's
// works; otherwise (no entry, an inactive one, or an evicted one) a trial
// of every candidate picks the winner, and its outcome is recorded (and
// returned; nil when the cached plan ran alone). An explain neither reads
// nor changes the cache, as in MongoDB.
func (e *Engine) choosePlan(ctx context.Context, c *Collection, q compiledFind, cands []*planner.Plan, txn *Txn, limit int64) (*planner.Plan, *trialResult, error) {
	if q.explain {
		res, err := e.trialPlans(ctx, c, q, cands, txn, limit)
		if err != nil {
			return nil, nil, err
		}
		return res.winner, res, nil
	}
	// The choice of the operation's first plan is reported with it.
	st := opStatsIn(ctx)
	if st != nil && st.plan != nil {
		st = nil
	}
	id := identify(c, q)
	reason := ""
	if got := c.plans.get(c, id.key); got.found && got.active {
		if p := candidateOn(cands, got.ix, got.path); p != nil {
			var err error
			if reason, err = e.cachedPlanHolds(ctx, c, q, p, txn, limit, got.works); err != nil {
				return nil, nil, err
			}
			if reason == "" {
				if st != nil {
					st.FromPlanCache = true
				}
				return p, nil, nil
			}
			c.plans.deactivate(c, id.key)
		}
	}
	res, err := e.trialPlans(ctx, c, q, cands, txn, limit)
	if err != nil {
		return nil, nil, err
	}
	if st != nil {
		st.MultiPlanned, st.ReplanReason = true, reason
	}
	if res.winner.Or == nil { // a union is planned again each time
		c.plans.record(c, e.cacheEntry(c, id, q, res, limit))
	}
	return res.winner, res, nil
}

// candidateOn returns the candidate scanning ix (nil: the document
// store), if any.
func candidateOn(cands []*planner.Plan, ix *Index, path string) *planner.Plan {
	for _, p := range cands {
		if p.Or == nil && indexOf(p) == ix && wildcardPath(p) == path {
			return p
		}
	}
	return nil
}

// wildcardPath is the path a plan on a wildcard index scans, "" for any
// other plan.
func wildcardPath(p *planner.Plan) string {
	if p.Index != nil {
		return p.Index.WildcardPath()
	}
	return ""
}

// cachedPlanHolds runs the cached plan p as MongoDB's cached plan stage
// does: it holds if it returns the trial's results (or reaches its end)
// within cacheEvictionRatio times the entry's works, and does not fail.
// When it does not hold, the reason is why, in the words of MongoDB's
// CachedPlanStage::pickBestPlan (the profiler's replanReason); "" when it
// holds.
func (e *Engine) cachedPlanHolds(ctx context.Context, c *Collection, q compiledFind, p *planner.Plan, txn *Txn, limit, works int64) (reason string, err error) {
	budget := max(cacheEvictionRatio*works, 1)
	spec := specOf(q, limit)
	spec.keep = false
	want := e.TrialMaxResults()
	if spec.limit > 0 {
		want = min(want, spec.limit)
	}
	tc, err := e.openTrial(ctx, c, q, []*planner.Plan{p}, txn, spec)
	defer closeTrial(ctx, tc)
	if err != nil {
		return "", err
	}
	if _, err := e.runTrial(ctx, q, tc, spec, want, budget); err != nil {
		return "", err
	}
	cd := tc[0]
	switch {
	case cd.failAt != 0:
		// a failing cached plan is replanned
		fe := mongoerr.As(cd.failErr)
		return fmt.Sprintf("cached plan returned: %s: %s", fe.Code.Name(), fe.Msg), nil
	case cd.stopAt == 0 || cd.stopAt > budget:
		return fmt.Sprintf("cached plan was less efficient than expected: expected trial execution to take %d works but it took at least %d works", works, budget), nil
	}
	return "", nil
}

// cacheEntry builds the entry recording a trial's outcome for the query
// identified by id. The entry outlives the request: it holds copies of the
// query's documents, not slices of the request's message.
func (e *Engine) cacheEntry(c *Collection, id cacheIdentity, q compiledFind, res *trialResult, limit int64) *planCacheEntry {
	filter, sortDoc, projDoc := slices.Clone(q.filter.Doc()), slices.Clone(q.sortDoc), slices.Clone(q.projDoc)
	shape := planner.Shape{Filter: filter, Sort: sortDoc, Projection: projDoc, Limit: limit, SortMemLimit: e.SortMemoryLimit(), Clustered: c.Clustered(),
		ShowFilter: shownFilter(q, nil)}
	from := bson.D{{Key: "query", Value: filter}}
	from = append(from, bson.E{Key: "sort", Value: docOrEmpty(sortDoc)}, bson.E{Key: "projection", Value: docOrEmpty(projDoc)})
	if coll := q.filter.Collator(); coll != nil {
		// A query under a collation other than simple records it too
		// (PlanCacheEntry's CreatedFromQuery).
		from = append(from, bson.E{Key: "collation", Value: coll.Document()})
	}
	ent := &planCacheEntry{
		key: id.key, cmdShape: id.cmdShape, queryHash: id.queryHash, cacheKey: id.cacheKey,
		ix: indexOf(res.winner), path: wildcardPath(res.winner), works: res.runs[0].works, created: time.Now(),
		createdFrom: from,
		cachedPlan:  res.winner.Explain(shape),
	}
	for i, p := range res.plans() {
		ent.execStats = append(ent.execStats, res.planStats(i, p, p.Explain(shape), false))
		ent.scores = append(ent.scores, res.runs[i].score)
	}
	return ent
}

func docOrEmpty(d bson.Raw) bson.Raw {
	if len(d) == 0 {
		return bson.Raw(bsonDoc(bson.D{}))
	}
	return d
}

// PlanCacheStats lists the entries of db.coll's plan cache as the
// $planCacheStats stage shows them (but for the host); a missing
// collection fails, as in MongoDB.
func (e *Engine) PlanCacheStats(db, coll string) ([]bson.D, error) {
	c := e.cat.get(db, coll)
	if c == nil {
		return nil, mongoerr.New(mongoerr.PlanCacheStatsNoCollection, "collection '%s.%s' does not exist", db, coll)
	}
	return c.plans.stats(c), nil
}

// PlanCacheClear empties db.coll's plan cache or the entries of a query
// shape (nil: all), named as the plan cache commands name shapes
// (compiledFind.shapes). Clearing a missing collection succeeds, as in MongoDB.
func (e *Engine) PlanCacheClear(db, coll string, qs *QueryShape) error {
	c := e.cat.get(db, coll)
	if qs == nil {
		if c != nil {
			c.plans.clear()
		}
		return nil
	}
	q, err := qs.compile(c)
	if err != nil || c == nil {
		return err
	}
	c.plans.clearShape(c, q.commandShape())
	return nil
}
