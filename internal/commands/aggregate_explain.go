package commands

import (
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
// pushdown listed as written (MongoDB lists them as it rewrote them). A
// collection-less pipeline has no $cursor stage. From verbosity
// executionStats (allPlansExecution too) the pipeline runs to
// the end, its output discarded, and each stage, $cursor included, also
// reports nReturned and executionTimeMillisEstimate.
func explainAggregate(s *Service, db string, a *aggregateArgs, v engine.Verbosity) (bson.D, error) {
	var err error
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
	}
	for _, spec := range p.Stages() {
		el := spec.Index(0)
		stages = append(stages, bson.D{{Key: el.Key(), Value: el.Value()}})
	}
	if v >= engine.ExecutionStats {
		var src aggregate.Source
		if coll != "" {
			cur, err := s.Engine.Find(db, coll, find)
			if err != nil {
				return nil, err
			}
			src = cur
		}
		stats, err := p.Explain(src)
		if err != nil {
			return nil, err
		}
		if coll == "" {
			stats = stats[1:] // no $cursor stage
		}
		for i, st := range stats {
			stages[i] = append(stages[i],
				bson.E{Key: "nReturned", Value: st.NReturned},
				bson.E{Key: "executionTimeMillisEstimate", Value: st.Elapsed.Milliseconds()})
		}
	}
	return bson.D{{Key: "explainVersion", Value: "1"}, {Key: "stages", Value: stages}}, nil
}
