package engine

import (
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/planner"
	"github.com/folio-db/folio/internal/query"
)

// ExplainUpdate describes how the update statement u of db.coll runs, as
// MongoDB explains a write: an UPDATE stage over the plan that finds its
// documents. With execute it runs that plan and applies the update to each
// document it finds, in memory only, reporting nMatched, nWouldModify and
// nWouldUpsert; nothing is written.
func (e *Engine) ExplainUpdate(db, coll string, u UpdateSpec, execute bool) (bson.D, error) {
	f, err := e.writeFilter(u.Txn, db, coll, u.Filter, u.WriteOptions)
	if err != nil {
		return nil, err
	}
	upd, err := compileUpdate(u.Update, u.ArrayFilters, u.Pipeline, coll, u.Let, f.Collator())
	if err != nil {
		return nil, err
	}
	var matched, modified, upsert int64
	return e.explainWrite(db, coll, f, u.Filter, u.Hint, u.WriteOptions, "UPDATE", execute, func(doc bson.Raw, pos int) (bool, error) {
		_, _, changed, err := upd.Apply(doc, pos, false)
		if err != nil {
			return false, err
		}
		matched++
		if changed {
			modified++
		}
		return u.Multi, nil
	}, func() []bson.E {
		if matched == 0 && u.Upsert {
			upsert = 1
		}
		return []bson.E{{Key: "nMatched", Value: explainCount(matched)}, {Key: "nWouldModify", Value: explainCount(modified)}, {Key: "nWouldUpsert", Value: explainCount(upsert)}}
	})
}

// ExplainDelete describes how a delete statement of db.coll (limit 1: its
// first match only) runs, as ExplainUpdate does an update: a DELETE stage,
// and with execute nWouldDelete.
func (e *Engine) ExplainDelete(db, coll string, filter bson.Raw, limit int, hint bson.RawValue, wo WriteOptions, execute bool) (bson.D, error) {
	f, err := e.writeFilter(wo.Txn, db, coll, filter, wo)
	if err != nil {
		return nil, err
	}
	var n int64
	return e.explainWrite(db, coll, f, filter, hint, wo, "DELETE", execute, func(bson.Raw, int) (bool, error) {
		n++
		return limit != 1, nil
	}, func() []bson.E { return []bson.E{{Key: "nWouldDelete", Value: explainCount(n)}} })
}

// explainWrite is the explain of a write of kind stage (UPDATE, DELETE)
// whose filter f (given as filter) finds its documents: the queryPlanner
// section, and with execute the executionStats of running the plan, each
// matching document (with its positional match) passed to visit until
// visit returns false, the write stage then reporting counts.
func (e *Engine) explainWrite(db, coll string, f *query.Filter, filter bson.Raw, hint bson.RawValue, wo WriteOptions, stage string, execute bool,
	visit func(doc bson.Raw, pos int) (bool, error), counts func() []bson.E) (bson.D, error) {
	if filter == nil {
		filter = bsonDoc(bson.D{})
	}
	c := e.lookup(wo.Txn, db, coll)
	q := compiledFind{filter: f, explain: true}
	id := identify(c, q)
	input := bson.D{{Key: "stage", Value: "EOF"}}
	var p *planner.Plan
	if c != nil {
		var err error
		if p, _, err = e.planFind(wo.Ctx, c, q, hint, wo.Txn, 0); err != nil {
			return nil, err
		}
		input = p.Explain(planner.Shape{Filter: filter, SortMemLimit: e.SortMemoryLimit(), Clustered: c.Clustered()})
	}
	winning := bson.D{{Key: "stage", Value: stage}, {Key: "inputStage", Value: input}}
	out := queryPlanner(db+"."+coll, filter, c, id, winning, bson.A{})
	if !execute {
		return out, nil
	}
	stats := &OpStats{}
	start := time.Now()
	if c != nil {
		scan, err := e.openScan(c, p, f, wo.Txn, wo.Ctx, stats)
		if err != nil {
			return nil, err
		}
		defer scan.close()
		for more := true; more; {
			doc, _, err := scan.next()
			if err != nil {
				return nil, err
			}
			if doc == nil {
				break
			}
			_, pos, err := f.MatchErr(doc)
			if err == nil {
				more, err = visit(doc, pos)
			}
			if err != nil {
				return nil, err
			}
		}
	}
	stages := append(append(bson.D{winning[0]}, counts()...), winning[1:]...)
	return append(out, executionStats(0, start, stats, stages)), nil
}
