package engine

import (
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/planner"
	"github.com/folio-db/folio/internal/query"
)

// ExplainUpdate describes how the update statement u of db.coll runs, as
// MongoDB explains a write: an UPDATE stage over the plan that finds its
// documents. From verbosity ExecutionStats it runs that plan and applies
// the update to each document it finds, in memory only, reporting
// nMatched, nWouldModify and nWouldUpsert; nothing is written.
func (e *Engine) ExplainUpdate(db, coll string, u UpdateSpec, v Verbosity) (bson.D, error) {
	f, err := e.writeFilter(u.Txn, db, coll, u.Filter, u.WriteOptions, u.Upsert)
	if err != nil {
		return nil, err
	}
	upd, err := compileUpdate(u.Update, u.ArrayFilters, u.Pipeline, coll, u.Let, f.Collator(), u.Clock)
	if err != nil {
		return nil, err
	}
	visit, counts := explainUpdateCounts(upd, u.Multi, u.Upsert)
	return e.explainWrite(db, coll, writeQuery(f, u.WriteOptions), u.Filter, u.Hint, u.WriteOptions, "UPDATE", v, visit, counts, nil)
}

// explainUpdateCounts applies upd to the documents an explained update
// finds (all with multi, else the first) and reports nMatched,
// nWouldModify and nWouldUpsert.
func explainUpdateCounts(upd updater, multi, upsert bool) (func(bson.Raw, int) (bool, error), func() []bson.E) {
	var matched, modified int64
	return func(doc bson.Raw, pos int) (bool, error) {
			_, _, changed, err := upd.Apply(doc, pos, false)
			if err != nil {
				return false, err
			}
			matched++
			if changed {
				modified++
			}
			return multi, nil
		}, func() []bson.E {
			var upserted int64
			if matched == 0 && upsert {
				upserted = 1
			}
			return []bson.E{{Key: "nMatched", Value: explainCount(matched)}, {Key: "nWouldModify", Value: explainCount(modified)}, {Key: "nWouldUpsert", Value: explainCount(upserted)}}
		}
}

// ExplainDelete describes how a delete statement of db.coll (limit 1: its
// first match only) runs, as ExplainUpdate does an update: a DELETE stage,
// and from verbosity ExecutionStats nWouldDelete.
func (e *Engine) ExplainDelete(db, coll string, filter bson.Raw, limit int, hint bson.RawValue, wo WriteOptions, v Verbosity) (bson.D, error) {
	f, err := e.writeFilter(wo.Txn, db, coll, filter, wo, false)
	if err != nil {
		return nil, err
	}
	visit, counts := explainDeleteCounts(limit != 1)
	return e.explainWrite(db, coll, writeQuery(f, wo), filter, hint, wo, "DELETE", v, visit, counts, nil)
}

// explainDeleteCounts counts the documents an explained delete finds (all
// with multi, else the first) as nWouldDelete.
func explainDeleteCounts(multi bool) (func(bson.Raw, int) (bool, error), func() []bson.E) {
	var n int64
	return func(bson.Raw, int) (bool, error) {
		n++
		return multi, nil
	}, func() []bson.E { return []bson.E{{Key: "nWouldDelete", Value: explainCount(n)}} }
}

// ExplainFindAndModify describes how findAndModify s of db.coll runs: an
// UPDATE or DELETE stage over the plan that finds its document, which
// under a sort is a top-1 sort (MongoDB limits a single write's query to
// one document when it sorts). From verbosity ExecutionStats it applies the write to that
// document in memory and reports the stage's counts; nothing is written.
func (e *Engine) ExplainFindAndModify(db, coll string, s FindAndModifySpec, v Verbosity) (bson.D, error) {
	f, err := e.writeFilter(s.Txn, db, coll, s.Filter, s.WriteOptions, s.Upsert)
	if err != nil {
		return nil, err
	}
	q := writeQuery(f, s.WriteOptions)
	q.sortDoc = s.Sort
	if len(s.Sort) > 0 {
		if q.sort, err = query.CompileSort(s.Sort); err != nil {
			return nil, err
		}
		if f.Collator() != nil {
			q.sort = q.sort.Collated(f.Collator())
		}
	}
	if _, err := s.projection(f); err != nil {
		return nil, err
	}
	ret := &famReturn{upsertNew: s.Upsert && s.New, fields: s.Fields}
	if s.Remove {
		visit, counts := explainDeleteCounts(false)
		return e.explainWrite(db, coll, q, s.Filter, s.Hint, s.WriteOptions, "DELETE", v, visit, counts, ret)
	}
	upd, err := compileUpdate(s.Update, s.ArrayFilters, s.Pipeline, coll, s.Let, f.Collator(), s.Clock)
	if err != nil {
		return nil, err
	}
	visit, counts := explainUpdateCounts(upd, false, s.Upsert)
	return e.explainWrite(db, coll, q, s.Filter, s.Hint, s.WriteOptions, "UPDATE", v, visit, counts, ret)
}

// famReturn is what findAndModify's write stage returns besides the
// document it writes: with upsertNew (upsert and new) the document an
// upsert inserts, which UpsertStage::doWork returns in the work that
// made it; fields, when set, projects it, a PROJECTION_DEFAULT over the
// write stage (getExecutorUpdate, getExecutorDelete).
type famReturn struct {
	upsertNew bool
	fields    bson.Raw
}

// explainWrite is the explain of a write of kind stage (UPDATE, DELETE)
// whose query q (filter as given) finds its documents: the queryPlanner
// section (the rejected candidates without the write stage, which is over
// the multi-planner in MongoDB), and from verbosity ExecutionStats the
// executionStats of running the plan, each
// matching document (with its positional match) passed to visit until
// visit returns false, the write stage then reporting counts and, with
// ret (findAndModify's), returning each document it visited, or the one
// an upsert inserts (nReturned). A sorted write takes the first document
// in order. On a missing collection the plan is an EOF stage alone. A run
// that fails is reported as Explain reports a find's (explainFailure).
func (e *Engine) explainWrite(db, coll string, q compiledFind, filter bson.Raw, hint bson.RawValue, wo WriteOptions, stage string, v Verbosity,
	visit func(doc bson.Raw, pos int) (bool, error), counts func() []bson.E, ret *famReturn) (bson.D, error) {
	if filter == nil {
		filter = bsonDoc(bson.D{})
	}
	q.explain = true
	o := FindOptions{Sort: q.sortDoc, Txn: wo.Txn, Ctx: wo.Ctx}
	if q.sort != nil {
		o.Limit = 1
	}
	c := e.lookup(wo.Txn, db, coll)
	id := identify(c, q)
	input := bson.D{{Key: "stage", Value: "EOF"}}
	var p *planner.Plan
	var trial *trialResult
	var shape planner.Shape
	rejected := bson.A{}
	if c != nil {
		var err error
		if p, trial, err = e.planFind(wo.Ctx, c, q, hint, wo.Txn, o.wanted()); err != nil {
			return nil, err
		}
		shape = planner.Shape{Filter: filter, Sort: o.Sort, Limit: o.Limit, SortMemLimit: e.SortMemoryLimit(), Clustered: c.Clustered(), ShowFilter: shownFilter(q, wo.Let)}
		input = p.Explain(shape)
		if trial != nil {
			for _, r := range trial.rejected {
				rejected = append(rejected, r.Explain(shape))
			}
		}
	}
	// A missing collection is an empty one: the plan is an EOF stage
	// alone, with no write stage (getExecutorDelete, getExecutorUpdate).
	winning := input
	if c != nil {
		winning = bson.D{{Key: "stage", Value: stage}, {Key: "inputStage", Value: input}}
		if ret != nil && len(ret.fields) > 0 {
			winning = bson.D{{Key: "stage", Value: "PROJECTION_DEFAULT"}, {Key: "transformBy", Value: ret.fields}, {Key: "inputStage", Value: winning}}
		}
	}
	if v < ExecutionStats {
		return queryPlanner(db+"."+coll, q.filter, c, id, winning, rejected), nil
	}
	var failed *mongoerr.Error
	stats := &OpStats{}
	start := time.Now()
	var returned int64
	stages := winning
	if c != nil {
		// An IDHACK is at its end after its lookup: the write stage asks
		// it no more (UpdateStage::isEOF).
		idHack := lookupD(input, "stage") == "IDHACK"
		_, run, err := e.runStages(c, q, p, o, stats, func(doc bson.Raw) (bool, error) {
			_, pos, err := q.filter.MatchErr(doc)
			if err != nil {
				return false, err
			}
			more, err := visit(doc, pos)
			if ret != nil && err == nil {
				returned++
			}
			return more && !idHack, err
		})
		if err != nil {
			if failed = explainFailure(err); failed == nil {
				return nil, err
			}
		}
		// An upsert inserts when nothing matched.
		upserted := failed == nil && ret != nil && ret.upsertNew && returned == 0
		if upserted {
			returned = 1
		}
		if run != nil {
			run.millis = time.Since(start).Milliseconds()
			stages = run.writeStages(winning, counts(), returned, upserted, stagesMeasurable(p, input))
		}
	}
	if failed != nil {
		// as explain reports a find's failed run
		c, id = nil, cacheIdentity{}
	}
	out := queryPlanner(db+"."+coll, q.filter, c, id, winning, rejected)
	return append(out, executionStats(returned, start, stats, stages, v, trial, shape, failed)), nil
}
