package engine

import (
	"math"
	"sync/atomic"
)

// MongoDB's defaults of the trial's bounds (query_knobs.idl):
// internalQueryPlanEvaluationWorks, internalQueryPlanEvaluationCollFraction
// and internalQueryPlanEvaluationMaxResults.
const (
	DefaultTrialWorks        = 10000
	DefaultTrialCollFraction = 0.3
	DefaultTrialMaxResults   = 101
)

// trialBounds are the multi-planner's trial bounds, settable at runtime:
// every candidate works at most max(works, collFraction × the collection's
// documents) times, and the trial ends once one has returned maxResults
// results (or the query's limit, when smaller).
type trialBounds struct {
	works, maxResults atomic.Int64
	collFraction      atomic.Uint64 // math.Float64bits
}

func (b *trialBounds) init() {
	b.works.Store(DefaultTrialWorks)
	b.maxResults.Store(DefaultTrialMaxResults)
	b.collFraction.Store(math.Float64bits(DefaultTrialCollFraction))
}

// TrialWorks is internalQueryPlanEvaluationWorks.
func (e *Engine) TrialWorks() int64 { return e.trial.works.Load() }

// SetTrialWorks sets internalQueryPlanEvaluationWorks (at least 1).
func (e *Engine) SetTrialWorks(n int64) { e.trial.works.Store(max(n, 1)) }

// TrialCollFraction is internalQueryPlanEvaluationCollFraction.
func (e *Engine) TrialCollFraction() float64 {
	return math.Float64frombits(e.trial.collFraction.Load())
}

// SetTrialCollFraction sets internalQueryPlanEvaluationCollFraction
// (within [0, 1]).
func (e *Engine) SetTrialCollFraction(f float64) {
	e.trial.collFraction.Store(math.Float64bits(min(max(f, 0), 1)))
}

// TrialMaxResults is internalQueryPlanEvaluationMaxResults.
func (e *Engine) TrialMaxResults() int64 { return e.trial.maxResults.Load() }

// SetTrialMaxResults sets internalQueryPlanEvaluationMaxResults (at least
// 0).
func (e *Engine) SetTrialMaxResults(n int64) { e.trial.maxResults.Store(max(n, 0)) }
