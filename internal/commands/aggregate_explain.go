package commands

import (
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/aggregate"
	"github.com/folio-db/folio/internal/engine"
)

// explainAggregate explains an aggregate as MongoDB 7.0 does. The leading
// $match and $sort pushed into the collection scan are explained by the
// engine, like a find; when they are the whole pipeline, that find-style
// explain ({explainVersion, queryPlanner, executionStats?}) is the answer.
// Otherwise it is {explainVersion: "1", stages: [{$cursor: {queryPlanner,
// executionStats?}}, {<stage>: <spec>}, ...]}, the stages after the
// pushdown listed as written (MongoDB lists them as it rewrote them), but
// $out, $merge, $limit, $skip, $sample and $unwind resolved as MongoDB
// serializes them (aggregate.Pipeline.ExplainStages). A
// collection-less pipeline has no $cursor stage. From verbosity
// executionStats (allPlansExecution too) the pipeline runs to
// the end, its output discarded, and each stage, $cursor included, also
// reports nReturned and executionTimeMillisEstimate, after the figures of
// its own run a $group reports (aggregate.StageStats.Own). A $unionWith's
// sub-pipeline is explained too (explainUnionWith). The pipeline reads
// the variables the aggregate would ($$NOW, $$CLUSTER_TIME, $$USER_ROLES,
// let) and runs its scripts ($function, $accumulator) as the aggregate
// does: an explain that executes it fails only where the aggregate would.
func explainAggregate(s *Service, r *Request, a *aggregateArgs, v engine.Verbosity) (bson.D, error) {
	db := r.DB
	var err error
	if a.opts.Bound == nil {
		if a.opts.Bound, err = s.scriptVars(a.opts.Let, r, r.Ctx); err != nil {
			return nil, err
		}
	}
	if a.opts.Collator, err = engine.CommandCollator(s.Engine.Collection(db, a.opts.Coll), a.collation); err != nil {
		return nil, err
	}
	p, err := aggregate.Parse(a.stages, a.opts)
	if err != nil {
		return nil, err
	}
	var stages []bson.D
	var find engine.FindOptions
	coll := a.opts.Coll
	distinct := false // the scan feeds the $group one document per value
	if coll != "" {
		find = a.pushdown(p)
		if err := checkPipelineCollation(a.opts.Collator, p.Stages()); err != nil {
			return nil, err
		}
		plan, err := s.Engine.Explain(db, coll, find, v)
		if err != nil || len(p.Stages()) == 0 {
			return plan, err
		}
		var cursor bson.D
		for _, e := range plan {
			if e.Key != "explainVersion" {
				cursor = append(cursor, e)
			}
		}
		stages = append(stages, bson.D{{Key: "$cursor", Value: cursor}})
		distinct = find.GroupKey != "" && distinctScanned(cursor)
	}
	first := len(stages) // the index in stages of p.Stages()[0]
	stages = append(stages, p.ExplainStages()...)
	if distinct {
		// MongoDB replaces the $group its DISTINCT_SCAN feeds with a
		// $groupByDistinctScan building each group from its first
		// document (pipeline_d.cpp).
		newRoot := bson.D{{Key: "_id", Value: "$" + find.GroupKey}}
		stages[first][0] = bson.E{Key: "$groupByDistinctScan", Value: bson.D{{Key: "newRoot", Value: newRoot}}}
	}
	if a.currentOp != nil && len(stages) > first {
		// the $currentOp stage, not the operations it listed
		stages[first][0] = bson.E{Key: "$currentOp", Value: a.currentOp}
	}
	var stats []aggregate.StageStats
	if v >= engine.ExecutionStats {
		var src aggregate.Source
		if coll != "" {
			cur, err := s.Engine.Find(db, coll, find)
			if err != nil {
				return nil, err
			}
			src = cur
		}
		if stats, err = p.Explain(src); err != nil {
			return nil, err
		}
		if coll == "" {
			stats = stats[1:] // no $cursor stage
		}
		for i, st := range stats {
			if stages[i] == nil {
				continue // a stage absorbed by the one before it
			}
			if !(distinct && i == first) {
				// a stage's own figures (a $group's memory and spills);
				// the $groupByDistinctScan a $group became has none
				stages[i] = append(stages[i], st.Own...)
			}
			stages[i] = append(stages[i],
				bson.E{Key: "nReturned", Value: st.NReturned},
				bson.E{Key: "executionTimeMillisEstimate", Value: st.Elapsed.Milliseconds()})
		}
	}
	for i, spec := range p.Stages() {
		if el := spec.Index(0); el.Key() == "$unionWith" {
			// stats holds the $cursor stage first, even without one
			ran := len(stats) > 0 && stats[i+1].SubPipelineRan
			union, err := explainUnionWith(s, r, a, el.Value(), v, ran)
			if err != nil {
				return nil, err
			}
			stages[first+i][0].Value = union
		}
	}
	// a stage another absorbed ($lookup's $unwind) is shown inside it
	stages = slices.DeleteFunc(stages, func(d bson.D) bool { return d == nil })
	return bson.D{{Key: "explainVersion", Value: "1"}, {Key: "stages", Value: stages}}, nil
}

// explainUnionWith is how an explain shows a $unionWith whose spec is
// spec (a collection name or {coll, pipeline}), in an aggregate a: as
// DocumentSourceUnionWith::serialize does, {coll, pipeline} with the
// sub-pipeline explained at the explain's verbosity as the stages of an
// aggregate of coll, a $cursor stage first (a view's pipeline resolved);
// from executionStats, a sub-pipeline the run did not reach (ran unset:
// a $limit took enough of the input first) as written. Folio runs the
// sub-pipeline by itself for its executionStats, which are then those of
// its whole run where MongoDB reports what the outer run read of it
// (unionWith_explain.js notes that its $cursor counts the whole
// collection anyway).
func explainUnionWith(s *Service, r *Request, a *aggregateArgs, spec bson.RawValue, v engine.Verbosity, ran bool) (bson.D, error) {
	sub := *a
	sub.opts.Coll, sub.stages, sub.view, sub.hint = "", nil, "", bson.RawValue{}
	if coll, ok := spec.StringValueOK(); ok {
		sub.opts.Coll = coll
	} else {
		sub.opts.Coll, _ = spec.Document().Lookup("coll").StringValueOK()
		if pl, ok := spec.Document().Lookup("pipeline").ArrayOK(); ok {
			vals, _ := pl.Values()
			for _, st := range vals {
				sub.stages = append(sub.stages, st.Document())
			}
		}
	}
	out := bson.D{{Key: "coll", Value: sub.opts.Coll}}
	if sub.opts.Coll == "" {
		out = out[:0] // a pipeline of $documents names no collection
	}
	if v >= engine.ExecutionStats && !ran {
		return append(out, bson.E{Key: "pipeline", Value: stagesArray(sub.stages)}), nil
	}
	if err := s.onView(r, &sub); err != nil {
		return nil, err
	}
	ex, err := explainAggregate(s, r, &sub, v)
	if err != nil {
		return nil, err
	}
	var stages any
	var cursor bson.D
	for _, e := range ex {
		switch e.Key {
		case "stages":
			stages = e.Value
		case "explainVersion":
		default:
			cursor = append(cursor, e)
		}
	}
	if stages == nil {
		// the whole sub-pipeline went into the scan: its explain is a
		// find's, which a sub-pipeline shows as its $cursor stage
		c := bson.D{{Key: "$cursor", Value: cursor}}
		if es, ok := fieldOf(cursor, "executionStats").(bson.D); ok {
			n, ms := fieldOf(es, "nReturned"), fieldOf(es, "executionTimeMillis")
			c = append(c, bson.E{Key: "nReturned", Value: n}, bson.E{Key: "executionTimeMillisEstimate", Value: ms})
		}
		stages = []bson.D{c}
	}
	return append(out, bson.E{Key: "pipeline", Value: stages}), nil
}

// distinctScanned reports whether the queryPlanner of an explained scan
// (cursor) won with a DISTINCT_SCAN, under its projection.
func distinctScanned(cursor bson.D) bool {
	qp, _ := fieldOf(cursor, "queryPlanner").(bson.D)
	win, _ := fieldOf(qp, "winningPlan").(bson.D)
	in, _ := fieldOf(win, "inputStage").(bson.D)
	return fieldOf(in, "stage") == "DISTINCT_SCAN"
}

// fieldOf is the value of d's field key, nil when d has none.
func fieldOf(d bson.D, key string) any {
	for _, e := range d {
		if e.Key == key {
			return e.Value
		}
	}
	return nil
}
