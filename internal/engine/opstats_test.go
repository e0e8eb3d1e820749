package engine

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestOpStatsQueryHashes: an operation's OpStats give the queryHash and
// planCacheKey of its first query as MongoDB's OpDebug records them
// (get_executor.cpp, PrepareExecutionHelper::prepare): the values explain
// shows; a queryHash for any query on an existing collection, a
// planCacheKey only when PlanCache::shouldCacheQuery holds (not an
// unsorted query on every document, nor a hinted one, nor min and max)
// and no IDHACK serves it (a clustered collection has no _id index, so
// none); neither for a missing collection, a count of every document (the
// record store's count, getExecutorCount) or a write by _id served by the
// IDHACK fast path without a canonical query (getExecutorUpdate,
// getExecutorDelete), unless a hint, returned fields or the positional $
// make MongoDB canonicalize it. A tailable query has no planCacheKey. The
// first query of the operation is the one shown.
func TestOpStatsQueryHashes(t *testing.T) {
	e := planCacheFixture(t)
	if err := e.CreateCollection("test", "cl", CollectionOptions{ClusteredIndex: ext(t, `{"v": 2, "key": {"_id": 1}, "name": "_id_", "unique": true}`)}); err != nil {
		t.Fatal(err)
	}
	if err := e.CreateCollection("test", "capped", CollectionOptions{Capped: true, Size: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	hint := func(name string) bson.RawValue {
		return bson.RawValue{Type: bson.TypeString, Value: bsoncoreString(name)}
	}
	filter := func(j string) bson.Raw { return ext(t, j) }
	set := ext(t, `{"$set": {"x": 1}}`)
	for _, tc := range []struct {
		name        string
		run         func(ctx context.Context) error
		hash, key   bool
		explain     *FindOptions // a find whose explain shows the same values
		explainColl string
	}{
		{name: "find", run: func(ctx context.Context) error {
			return runToEnd(e.Find("test", "pc", FindOptions{Filter: filter(`{"a": 1, "b": 1}`), Ctx: ctx}))
		},
			hash: true, key: true, explain: &FindOptions{Filter: filter(`{"a": 7, "b": 8}`)}},
		{name: "find sorted", run: func(ctx context.Context) error {
			return runToEnd(e.Find("test", "pc", FindOptions{Filter: filter(`{"a": {"$gt": 1}}`), Sort: filter(`{"b": -1}`), Projection: filter(`{"a": 1}`), Ctx: ctx}))
		}, hash: true, key: true, explain: &FindOptions{Filter: filter(`{"a": {"$gt": 5}}`), Sort: filter(`{"b": -1}`), Projection: filter(`{"a": 1}`)}},
		{name: "find by _id", run: func(ctx context.Context) error {
			return runToEnd(e.Find("test", "pc", FindOptions{Filter: filter(`{"_id": 3}`), Ctx: ctx}))
		},
			hash: true, explain: &FindOptions{Filter: filter(`{"_id": 4}`)}},
		{name: "find by _id, skipped", run: func(ctx context.Context) error {
			return runToEnd(e.Find("test", "pc", FindOptions{Filter: filter(`{"_id": 3}`), Skip: 1, Ctx: ctx}))
		}, hash: true, key: true},
		{name: "find by _id, clustered", run: func(ctx context.Context) error {
			return runToEnd(e.Find("test", "cl", FindOptions{Filter: filter(`{"_id": 3}`), Ctx: ctx}))
		},
			hash: true, key: true, explain: &FindOptions{Filter: filter(`{"_id": 4}`)}, explainColl: "cl"},
		{name: "find all", run: func(ctx context.Context) error { return runToEnd(e.Find("test", "pc", FindOptions{Ctx: ctx})) }, hash: true},
		{name: "find all sorted", run: func(ctx context.Context) error {
			return runToEnd(e.Find("test", "pc", FindOptions{Sort: filter(`{"a": 1}`), Ctx: ctx}))
		},
			hash: true, key: true},
		{name: "find hinted", run: func(ctx context.Context) error {
			return runToEnd(e.Find("test", "pc", FindOptions{Filter: filter(`{"a": 1}`), Hint: hint("a_1"), Ctx: ctx}))
		}, hash: true},
		{name: "find, bad hint", run: func(ctx context.Context) error {
			return runToEnd(e.Find("test", "pc", FindOptions{Filter: filter(`{"a": 1}`), Hint: hint("nope"), Ctx: ctx}))
		}, hash: true},
		{name: "find, missing collection", run: func(ctx context.Context) error {
			return runToEnd(e.Find("test", "none", FindOptions{Filter: filter(`{"a": 1}`), Ctx: ctx}))
		}},
		{name: "tailable", run: func(ctx context.Context) error {
			_, err := e.Tail("test", "capped", FindOptions{Filter: filter(`{"a": 1}`), Ctx: ctx})
			return err
		}, hash: true, explain: &FindOptions{Filter: filter(`{"a": 2}`)}, explainColl: "capped"},
		{name: "tailable, not capped", run: func(ctx context.Context) error {
			e.Tail("test", "pc", FindOptions{Filter: filter(`{"a": 1}`), Ctx: ctx})
			return nil // refused before MongoDB takes the query's hash
		}},
		{name: "count all", run: func(ctx context.Context) error { _, err := e.Count("test", "pc", FindOptions{Ctx: ctx}); return err }},
		{name: "count all hinted", run: func(ctx context.Context) error {
			_, err := e.Count("test", "pc", FindOptions{Hint: hint("a_1"), Ctx: ctx})
			return err
		},
			hash: true},
		{name: "count", run: func(ctx context.Context) error {
			_, err := e.Count("test", "pc", FindOptions{Filter: filter(`{"a": 2}`), Ctx: ctx})
			return err
		},
			hash: true, key: true},
		{name: "update by _id", run: func(ctx context.Context) error {
			_, err := e.Update("test", "pc", UpdateSpec{Filter: filter(`{"_id": 1}`), Update: set, WriteOptions: WriteOptions{Ctx: ctx}})
			return err
		}},
		{name: "update by _id, hinted", run: func(ctx context.Context) error {
			_, err := e.Update("test", "pc", UpdateSpec{Filter: filter(`{"_id": 1}`), Update: set, Hint: hint("_id_"), WriteOptions: WriteOptions{Ctx: ctx}})
			return err
		}, hash: true},
		{name: "update by _id, positional", run: func(ctx context.Context) error {
			e.Update("test", "pc", UpdateSpec{Filter: filter(`{"_id": 1}`), Update: ext(t, `{"$set": {"x.$": 1}}`), WriteOptions: WriteOptions{Ctx: ctx}})
			return nil // the positional $ finds no array matched
		}, hash: true},
		{name: "update by _id, clustered", run: func(ctx context.Context) error {
			_, err := e.Update("test", "cl", UpdateSpec{Filter: filter(`{"_id": 1}`), Update: set, WriteOptions: WriteOptions{Ctx: ctx}})
			return err
		}, hash: true, key: true},
		{name: "update", run: func(ctx context.Context) error {
			_, err := e.Update("test", "pc", UpdateSpec{Filter: filter(`{"a": 2, "b": 2}`), Update: set, WriteOptions: WriteOptions{Ctx: ctx}})
			return err
		}, hash: true, key: true, explain: &FindOptions{Filter: filter(`{"a": 3, "b": 3}`)}},
		{name: "delete by _id", run: func(ctx context.Context) error {
			_, err := e.Delete("test", "pc", filter(`{"_id": 999}`), 1, bson.RawValue{}, WriteOptions{Ctx: ctx})
			return err
		}},
		{name: "findAndModify by _id", run: func(ctx context.Context) error {
			_, err := e.FindAndModify("test", "pc", FindAndModifySpec{Filter: filter(`{"_id": 2}`), Update: set, WriteOptions: WriteOptions{Ctx: ctx}})
			return err
		}},
		{name: "findAndModify by _id, fields", run: func(ctx context.Context) error {
			_, err := e.FindAndModify("test", "pc", FindAndModifySpec{Filter: filter(`{"_id": 2}`), Update: set, Fields: filter(`{"x": 1}`), WriteOptions: WriteOptions{Ctx: ctx}})
			return err
		}, hash: true},
		{name: "first query", run: func(ctx context.Context) error {
			if err := runToEnd(e.Find("test", "pc", FindOptions{Filter: filter(`{"a": 1, "b": 1}`), Ctx: ctx})); err != nil {
				return err
			}
			return runToEnd(e.Find("test", "pc", FindOptions{Filter: filter(`{"_id": 1}`), Ctx: ctx}))
		}, hash: true, key: true, explain: &FindOptions{Filter: filter(`{"a": 7, "b": 8}`)}},
	} {
		st := &OpStats{}
		if err := tc.run(WithOpStats(context.Background(), st)); err != nil && tc.name != "find, bad hint" {
			t.Fatalf("%s: %v", tc.name, err)
		}
		qh, key := st.QueryHashes()
		if (qh != "") != tc.hash || (key != "") != tc.key {
			t.Errorf("%s: queryHash %q, planCacheKey %q; want shown %v, %v", tc.name, qh, key, tc.hash, tc.key)
			continue
		}
		if tc.explain == nil {
			continue
		}
		coll := tc.explainColl
		if coll == "" {
			coll = "pc"
		}
		out, err := e.Explain("test", coll, *tc.explain, QueryPlanner)
		if err != nil {
			t.Fatal(err)
		}
		qp := lookupD(out, "queryPlanner").(bson.D)
		if lookupD(qp, "queryHash") != qh || tc.key && lookupD(qp, "planCacheKey") != key {
			t.Errorf("%s: queryHash %q, planCacheKey %q; explain shows %v, %v", tc.name, qh, key, lookupD(qp, "queryHash"), lookupD(qp, "planCacheKey"))
		}
	}
}

// TestExplainMissingCollectionHashes: an explain on a missing collection
// shows no queryHash or planCacheKey, as MongoDB's generatePlannerInfo
// computes them only for an existing collection.
func TestExplainMissingCollectionHashes(t *testing.T) {
	e := newTestEngine(t)
	o := FindOptions{Filter: ext(t, `{"a": 1}`)}
	for _, v := range []Verbosity{QueryPlanner, ExecutionStats} {
		find, err := e.Explain("test", "none", o, v)
		if err != nil {
			t.Fatal(err)
		}
		count, err := e.ExplainCount("test", "none", o, v)
		if err != nil {
			t.Fatal(err)
		}
		del, err := e.ExplainDelete("test", "none", o.Filter, 0, bson.RawValue{}, WriteOptions{}, v)
		if err != nil {
			t.Fatal(err)
		}
		for _, out := range []bson.D{find, count, del} {
			qp := lookupD(out, "queryPlanner").(bson.D)
			if lookupD(qp, "queryHash") != nil || lookupD(qp, "planCacheKey") != nil {
				t.Errorf("explain at %v on a missing collection: %v", v, qp)
			}
		}
	}
}

// runToEnd reads a cursor Find opened to its end.
func runToEnd(cur Cursor, err error) error {
	if err != nil {
		return err
	}
	defer cur.Close()
	for {
		d, err := cur.Next()
		if d == nil || err != nil {
			return err
		}
	}
}
