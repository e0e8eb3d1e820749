package engine

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/planner"
)

// Verbosity is an explain's verbosity (ExplainOptions::Verbosity): the
// queryPlanner section alone, with the executionStats of running the
// winning plan, or with those of every candidate's trial as well.
type Verbosity int8

const (
	QueryPlanner Verbosity = iota
	ExecutionStats
	AllPlansExecution
)

// plans is the order MongoDB lists a trial's plans in: the winner, then
// the rejected plans as rejectedPlans lists them.
func (res *trialResult) plans() []*planner.Plan {
	return append([]*planner.Plan{res.winner}, res.rejected...)
}

// planStats is the statistics of p, the i-th plan (see plans), over its
// trial, as MongoDB's generateSinglePlanExecutionInfo writes them:
// nReturned, executionTimeMillisEstimate, totalKeysExamined,
// totalDocsExamined, failed for a plan whose trial failed, with
// trialPeriod (an allPlansExecution entry) the plan's score (without the
// EOF bonus) unless it failed, then its stages. Each is what the plan had
// done when the trial's last round ended (trialCand.at).
func (res *trialResult) planStats(i int, p *planner.Plan, stages bson.D, trialPeriod bool) bson.D {
	r := res.runs[i]
	d := bson.D{
		{Key: "nReturned", Value: explainCount(r.results)},
		{Key: "executionTimeMillisEstimate", Value: explainCount(r.elapsed.Milliseconds())},
		{Key: "totalKeysExamined", Value: explainCount(r.keys)},
		{Key: "totalDocsExamined", Value: explainCount(r.docs)},
	}
	if r.failed {
		d = append(d, bson.E{Key: "failed", Value: true})
	} else if trialPeriod {
		d = append(d, bson.E{Key: "score", Value: r.score})
	}
	return append(d, bson.E{Key: "executionStages", Value: stages})
}

// allPlansExecution is executionStats' allPlansExecution
// (generateExecutionInfo): each candidate's trial statistics, the winner's
// first, each plan's stages as shape explains them; empty when one plan
// was considered (trial nil).
func allPlansExecution(trial *trialResult, shape planner.Shape) bson.E {
	all := bson.A{}
	if trial != nil {
		for i, p := range trial.plans() {
			all = append(all, trial.planStats(i, p, p.Explain(shape), true))
		}
	}
	return bson.E{Key: "allPlansExecution", Value: all}
}
