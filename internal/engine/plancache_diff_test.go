package engine

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/querygen"
)

// checkCached runs queries of q's shape with other values, each twice
// (the second run finds the entry the first made, active once a trial
// confirms it), and checks every run against a collection scan: a plan
// cached for one query of a shape must return for another what a scan
// returns.
func checkCached(t *testing.T, e *Engine, g *querygen.Gen, coll string, q diffQuery, seed uint64) {
	t.Helper()
	c := e.Collection("test", coll)
	for range 3 {
		v := q
		v.filter = revalue(g, q.filter)
		want := v.run(e, coll, `{"$natural": 1}`)
		for run := range 3 {
			if msg := v.compare(v.run(e, coll, ""), want); msg != "" {
				t.Fatalf("data set seed %d (-diffseed=%d), run %d through the plan cache: %s\nquery %s (shape of %s)\nindexes %s\ncache %v",
					seed, seed, run, msg, v, extJSON(q.filter), indexList(c), planCacheStats(t, e, "test", coll))
			}
		}
	}
	for _, ent := range planCacheStats(t, e, "test", coll) {
		if active, _ := ent[3].Value.(bool); active {
			cachedActive.Add(1)
			break
		}
	}
}

// revalue returns filter with other operands of the same operators: the
// query shape stays (but for $in lengths of one and regex flags, which
// the generator's values and regexes keep), the values change.
func revalue(g *querygen.Gen, filter bson.D) bson.D {
	out := make(bson.D, 0, len(filter))
	for _, el := range filter {
		switch el.Key {
		case "$and", "$or", "$nor":
			arr := bson.A{}
			for _, sub := range el.Value.(bson.A) {
				arr = append(arr, revalue(g, sub.(bson.D)))
			}
			out = append(out, bson.E{Key: el.Key, Value: arr})
			continue
		}
		ops, isOps := el.Value.(bson.D)
		if !isOps || len(ops) == 0 || ops[0].Key[0] != '$' {
			if isOps {
				out = append(out, el) // an equality with a document
			} else {
				out = append(out, bson.E{Key: el.Key, Value: g.Scalar()})
			}
			continue
		}
		out = append(out, bson.E{Key: el.Key, Value: revalueOps(g, ops)})
	}
	return out
}

// revalueOps gives an operator document other operands.
func revalueOps(g *querygen.Gen, ops bson.D) bson.D {
	out := make(bson.D, 0, len(ops))
	for _, op := range ops {
		v := op.Value
		switch op.Key {
		case "$eq", "$ne", "$gt", "$gte", "$lt", "$lte":
			v = g.Scalar()
		case "$in", "$nin", "$all":
			arr := bson.A{}
			for range op.Value.(bson.A) {
				arr = append(arr, g.Value(1))
			}
			v = arr
		case "$not":
			v = revalueOps(g, op.Value.(bson.D))
		case "$elemMatch":
			v = revalue(g, op.Value.(bson.D))
		}
		out = append(out, bson.E{Key: op.Key, Value: v})
	}
	return out
}
