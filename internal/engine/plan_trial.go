package engine

import (
	"context"
	"time"

	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/planner"
	"github.com/folio-db/folio/internal/sorter"
)

// Trial runs choose among the candidate plans of a query the way MongoDB's
// multi-planner does: each plan works for a trial period, which ends when
// one of them has produced trialResults results (or the query's limit) or
// reached its end, or after trialWorks works; the plan most productive
// over the period (results per work) wins. A plan whose sort runs in
// memory produces nothing before its input ends; one that yields the sort
// gets a small bonus, and ties go to the better static score. A plan that
// fails during its trial (its in-memory sort past the memory limit, without
// allowDiskUse) loses to any that does not, as MongoDB's multi-planner
// drops a failed candidate while another remains.
const (
	trialResults = 101   // internalQueryPlanEvaluationMaxResults
	trialWorks   = 10000 // internalQueryPlanEvaluationWorks
)

// trialRun is what one candidate did during its trial: the works after
// which each result came, and whether (and after how many works) it ended.
type trialRun struct {
	resultAt   []int64
	ended      bool
	failed     bool // its in-memory sort failed
	works      int64
	keys, docs int64 // keys and documents examined
	// elapsed is the trial's duration, measured for an explain only
	// (allPlansExecution's executionTimeMillisEstimate).
	elapsed time.Duration
}

// trialResult is a trial's outcome: the winner, the others, and each
// plan's run and score (the winner's first, then the others').
type trialResult struct {
	winner   *planner.Plan
	rejected []*planner.Plan
	runs     []trialRun
	scores   []float64
	// budget is the works the trial ended after; sorted that the query
	// sorts (a plan not yielding the sort sorts in memory).
	budget int64
	sorted bool
}

// trialPlans runs the trial of cands (best static score first) on c and
// returns the winner and the others.
func (e *Engine) trialPlans(ctx context.Context, c *Collection, q compiledFind, cands []*planner.Plan, txn *Txn, limit int64) (*trialResult, error) {
	want := int64(trialResults)
	if limit > 0 && limit < want {
		want = limit
	}
	budget := int64(trialWorks)
	runs := make([]trialRun, len(cands))
	for i, p := range cands {
		// A plan whose sort runs in memory returns nothing before its
		// input ends.
		pw := want
		if q.sort != nil && !p.Sorted {
			pw = budget + 1
		}
		r, err := e.trialRun(ctx, c, q, p, txn, pw, budget, limit)
		if err != nil {
			return nil, err
		}
		runs[i] = r
		if !r.failed && (r.ended || int64(len(r.resultAt)) >= pw) {
			budget = min(budget, r.works)
		}
	}
	best, bestScore := 0, -1.0
	scores := make([]float64, len(cands))
	for i, p := range cands {
		scores[i] = trialScore(runs[i], budget, q.sort != nil && !p.Sorted, p.Sorted)
		if runs[i].failed {
			scores[i] = -0.5 // it wins only when every plan failed
		}
		if scores[i] > bestScore {
			best, bestScore = i, scores[i]
		}
	}
	res := &trialResult{winner: cands[best], budget: budget, sorted: q.sort != nil}
	res.rejected = append(append(res.rejected, cands[:best]...), cands[best+1:]...)
	res.runs = append(append([]trialRun{runs[best]}, runs[:best]...), runs[best+1:]...)
	res.scores = append(append([]float64{scores[best]}, scores[:best]...), scores[best+1:]...)
	return res, nil
}

// trialRun works p until it has want results, ends, or has done budget
// works (keys or documents examined); it stops with the interruption's
// error once ctx ends, as the scan-and-match loop does. A plan whose sort
// runs in memory without allowDiskUse feeds its results to a sorter as
// sortAll would (keeping the first limit, when not 0), and fails once that
// sort would.
func (e *Engine) trialRun(ctx context.Context, c *Collection, q compiledFind, p *planner.Plan, txn *Txn, want, budget, limit int64) (trialRun, error) {
	var r trialRun
	var start time.Time
	if q.explain {
		start = time.Now()
	}
	var sort *sorter.Sorter
	var keys *sorter.SortKey
	if q.sort != nil && !p.Sorted && !q.allowDiskUse {
		sort = sorter.New(sorter.Options{Limit: limit, MaxMemory: e.SortMemoryLimit()})
		defer sort.Close()
		keys = sorter.NewSortKey(q.sort)
	}
	stats := &OpStats{}
	src, err := e.openSource(ctx, c, p, txn, stats)
	if err != nil {
		return r, err
	}
	defer src.Close()
	defer func() {
		opStatsOf(ctx).Add(OpStats{KeysExamined: stats.KeysExamined, DocsExamined: stats.DocsExamined})
	}()
	// A covered source yields only matches, projected.
	ps, isPlan := src.(*planSource)
	covered := isPlan && ps.p.Covered() != nil
	for int64(len(r.resultAt)) < want {
		if err := mongoerr.Interruption(ctx); err != nil {
			return r, err
		}
		doc, err := src.Next()
		if err != nil {
			return r, err
		}
		r.keys, r.docs = stats.KeysExamined, stats.DocsExamined
		r.works = max(r.keys, r.docs)
		if doc == nil {
			r.ended = true
			break
		}
		if r.works > budget {
			break
		}
		if ok, _, _ := q.filter.MatchErr(doc); ok || covered {
			r.resultAt = append(r.resultAt, r.works)
			if sort != nil {
				key, err := keys.OfMeta(doc, docsrc.MetaOf(src))
				if err == nil {
					err = sort.Add(sorter.Entry{Key: key, Doc: doc})
				}
				if err != nil {
					r.failed = true
					break
				}
			}
		}
	}
	if q.explain {
		r.elapsed = time.Since(start)
	}
	return r, nil
}

// trialScore is a run's productivity over the trial's first budget works,
// plus the bonus for a provided sort. A blocking (in-memory) sort yields
// its results only if its input ended within the period.
func trialScore(r trialRun, budget int64, blocking, sorted bool) float64 {
	results := trialReturned(r, budget, blocking)
	works := max(budget, 1)
	if r.ended && r.works < works {
		works = max(r.works, 1)
	}
	s := float64(results) / float64(works)
	if sorted {
		s += min(1/(10*float64(works)), 1e-4)
	}
	return s
}

// trialReturned is how many results a run returned within the trial's
// first budget works; a blocking sort returns none unless its input ended
// within them.
func trialReturned(r trialRun, budget int64, blocking bool) int64 {
	var results int64
	for _, w := range r.resultAt {
		if w <= budget {
			results++
		}
	}
	if blocking && !(r.ended && r.works <= budget) {
		results = 0
	}
	return results
}
