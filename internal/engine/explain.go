package engine

import (
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Explain describes how a find runs, in the shape of MongoDB's explain
// output: queryPlanner with the winning plan as a tree of stages (COLLSCAN,
// IDHACK, IXSCAN, FETCH, SORT, SKIP, LIMIT, PROJECTION_DEFAULT) and, when
// execute is set, executionStats from running the find to the end.
func (e *Engine) Explain(db, coll string, o FindOptions, execute bool) (bson.D, error) {
	q, err := compileFind(o)
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
	var p *plan
	var winning bson.D
	rejectedPlans := bson.A{}
	if c == nil {
		winning = bson.D{{Key: "stage", Value: "EOF"}}
	} else {
		var rejected []*plan
		if p, rejected, err = e.planFind(o.Ctx, c, q, o.Hint, o.Txn, o.wanted()); err != nil {
			return nil, err
		}
		winning = planStages(p, filter, q, o, e.SortMemoryLimit())
		for _, r := range rejected {
			rejectedPlans = append(rejectedPlans, planStages(r, filter, q, o, e.SortMemoryLimit()))
		}
	}
	out := bson.D{
		{Key: "explainVersion", Value: "1"},
		{Key: "queryPlanner", Value: bson.D{
			{Key: "namespace", Value: ns},
			{Key: "indexFilterSet", Value: c != nil && c.plans.filterFor(id.shape) != nil},
			{Key: "parsedQuery", Value: filter},
			{Key: "queryHash", Value: id.queryHash},
			{Key: "planCacheKey", Value: id.cacheKey},
			{Key: "winningPlan", Value: winning},
			{Key: "rejectedPlans", Value: rejectedPlans},
		}},
	}
	if !execute {
		return out, nil
	}
	stats := &scanStats{}
	var n int64
	start := time.Now()
	if c != nil {
		cur, err := e.execute(c, q, p, o, stats)
		if err != nil {
			return nil, err
		}
		defer cur.Close()
		for {
			doc, err := cur.Next()
			if err != nil {
				return nil, err
			}
			if doc == nil {
				break
			}
			n++
		}
	}
	return append(out, bson.E{Key: "executionStats", Value: bson.D{
		{Key: "executionSuccess", Value: true},
		{Key: "nReturned", Value: n},
		{Key: "executionTimeMillis", Value: time.Since(start).Milliseconds()},
		{Key: "totalKeysExamined", Value: stats.keysExamined},
		{Key: "totalDocsExamined", Value: stats.docsExamined},
		{Key: "executionStages", Value: winning},
	}}), nil
}

// planStages builds the explain tree of p, innermost stage first.
func planStages(p *plan, filter bson.Raw, q compiledFind, o FindOptions, memLimit int64) bson.D {
	var stage bson.D
	direction := "forward"
	if p.reverse {
		direction = "backward"
	}
	switch {
	case p.ix == nil && p.intervals == nil:
		stage = bson.D{{Key: "stage", Value: "COLLSCAN"}, {Key: "filter", Value: filter}, {Key: "direction", Value: direction}}
	case p.ix == nil && p.pointFields == 1:
		stage = bson.D{{Key: "stage", Value: "IDHACK"}}
	default:
		keyPattern := idKeyPattern
		name, unique, sparse, partial := idIndexName, true, false, false
		if p.ix != nil {
			keyPattern, name, unique, sparse, partial = p.ix.keyPattern(), p.ix.Name, p.ix.Unique, p.ix.Sparse, p.ix.partial != nil
		}
		scan := bson.D{
			{Key: "stage", Value: "IXSCAN"},
			{Key: "keyPattern", Value: keyPattern},
			{Key: "indexName", Value: name},
			{Key: "isMultiKey", Value: p.ix != nil && p.ix.Multikey()},
			{Key: "isUnique", Value: unique},
			{Key: "isSparse", Value: sparse},
			{Key: "isPartial", Value: partial},
			{Key: "indexVersion", Value: int32(2)},
			{Key: "direction", Value: direction},
			{Key: "indexBounds", Value: explainBounds(p)},
		}
		stage = bson.D{{Key: "stage", Value: "FETCH"}, {Key: "filter", Value: filter}, {Key: "inputStage", Value: scan}}
	}
	if q.sort != nil && !p.sorted {
		sortStage := bson.D{{Key: "stage", Value: "SORT"}, {Key: "sortPattern", Value: o.Sort}, {Key: "memLimit", Value: memLimit}}
		if o.Limit > 0 {
			sortStage = append(sortStage, bson.E{Key: "limitAmount", Value: o.Limit + o.Skip})
		}
		sortStage = append(sortStage, bson.E{Key: "type", Value: "simple"}, bson.E{Key: "inputStage", Value: stage})
		stage = sortStage
	}
	if o.Skip > 0 {
		stage = bson.D{{Key: "stage", Value: "SKIP"}, {Key: "skipAmount", Value: o.Skip}, {Key: "inputStage", Value: stage}}
	}
	if o.Limit > 0 {
		stage = bson.D{{Key: "stage", Value: "LIMIT"}, {Key: "limitAmount", Value: o.Limit}, {Key: "inputStage", Value: stage}}
	}
	if q.proj != nil {
		stage = bson.D{{Key: "stage", Value: "PROJECTION_DEFAULT"}, {Key: "transformBy", Value: o.Projection}, {Key: "inputStage", Value: stage}}
	}
	return stage
}

// explainBounds lists every field's bounds; fields the filter leaves open
// span [MinKey, MaxKey].
func explainBounds(p *plan) bson.D {
	out := bson.D{}
	for _, f := range p.fields {
		var shown any = bson.A{"[MinKey, MaxKey]"}
		for _, b := range p.bounds {
			if b.Key == f.Path {
				shown = b.Value
			}
		}
		out = append(out, bson.E{Key: f.Path, Value: shown})
	}
	return out
}
