package engine

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestExplainRunFailure: an explain whose run fails after planning (a
// $divide by zero in the second document, a sort over its memory limit)
// succeeds, its executionStats saying executionSuccess false with the
// error's errorMessage and errorCode before the statistics of what ran,
// and its queryPlanner without queryHash and planCacheKey, as MongoDB's
// explainStages reports a run's failure (jstests/core/query/expr/expr.js).
// At queryPlanner verbosity nothing runs and the hashes stay.
func TestExplainRunFailure(t *testing.T) {
	e := newTestEngine(t)
	for i, a := range []int32{1, 0, 2} {
		if _, _, err := e.Insert("test", "xf", []bson.Raw{bsonDoc(bson.D{{Key: "_id", Value: int32(i)}, {Key: "a", Value: a}, {Key: "s", Value: "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}})}, true, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	divide := ext(t, `{"$expr": {"$divide": [1, "$a"]}}`)
	for _, c := range []struct {
		name      string
		count     bool
		o         FindOptions
		sortLimit int64
		code      int32
		msg       string
		returned  int64
	}{
		{name: "find", o: FindOptions{Filter: divide}, code: 2, msg: "can't $divide by zero", returned: 1},
		{name: "count", count: true, o: FindOptions{Filter: divide}, code: 2, msg: "can't $divide by zero"},
		{name: "sort", o: FindOptions{Filter: ext(t, `{}`), Sort: ext(t, `{"s": 1, "a": 1}`)}, sortLimit: 100, code: 292,
			msg: "Sort exceeded memory limit of 100 bytes, but did not opt in to external sorting."},
	} {
		if c.sortLimit > 0 {
			e.SetSortMemoryLimit(c.sortLimit)
		}
		explain := func(v Verbosity) bson.D {
			var out bson.D
			var err error
			if c.count {
				out, err = e.ExplainCount("test", "xf", c.o, v)
			} else {
				out, err = e.Explain("test", "xf", c.o, v)
			}
			if err != nil {
				t.Fatalf("%s at %v: %v", c.name, v, err)
			}
			return out
		}
		planned := lookupD(explain(QueryPlanner), "queryPlanner").(bson.D)
		if lookupD(planned, "queryHash") == nil || lookupD(planned, "planCacheKey") == nil {
			t.Errorf("%s: queryPlanner verbosity lost its hashes: %v", c.name, planned)
		}
		out := explain(ExecutionStats)
		e.SetSortMemoryLimit(DefaultSortMemoryLimit)
		qp := lookupD(out, "queryPlanner").(bson.D)
		if lookupD(qp, "queryHash") != nil || lookupD(qp, "planCacheKey") != nil || lookupD(qp, "indexFilterSet") != false {
			t.Errorf("%s: a failed run's queryPlanner %v, want no queryHash or planCacheKey", c.name, qp)
		}
		st := lookupD(out, "executionStats").(bson.D)
		if len(st) < 4 || st[0].Key != "executionSuccess" || st[0].Value != false || st[1].Key != "errorMessage" || st[2].Key != "errorCode" || st[3].Key != "nReturned" {
			t.Fatalf("%s: executionStats %v, want executionSuccess false, errorMessage, errorCode, nReturned first", c.name, st)
		}
		if st[1].Value != c.msg || st[2].Value != c.code {
			t.Errorf("%s: error %v %v, want %d %q", c.name, st[2].Value, st[1].Value, c.code, c.msg)
		}
		if n := num(st[3].Value); n != c.returned {
			t.Errorf("%s: nReturned %d, want %d", c.name, n, c.returned)
		}
	}
}
