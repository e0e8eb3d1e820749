package commands_test

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// planStages lists the stage names of a plan, from the root down its
// inputStage chain.
func planStages(plan bson.Raw) []string {
	var out []string
	for len(plan) > 0 {
		out = append(out, plan.Lookup("stage").StringValue())
		in, ok := plan.Lookup("inputStage").DocumentOK()
		if !ok {
			break
		}
		plan = in
	}
	return out
}

// explainDB is a database whose collection "orders" has 20 documents and
// indexes on sku and qty.
func explainDB(t *testing.T) (*mongo.Database, *mongo.Collection) {
	t.Helper()
	db := aggDB(t)
	orders := db.Collection("orders")
	var docs []any
	for i := range 20 {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "sku", Value: []string{"a", "b", "c", "d"}[i%4]}, {Key: "qty", Value: 20 - i}})
	}
	insert(t, orders, docs...)
	_, err := orders.Indexes().CreateMany(context.Background(), []mongo.IndexModel{
		{Keys: bson.D{{Key: "sku", Value: 1}}}, {Keys: bson.D{{Key: "qty", Value: 1}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return db, orders
}

func runCmd(t *testing.T, db *mongo.Database, cmd bson.D) bson.Raw {
	t.Helper()
	res, err := db.RunCommand(context.Background(), cmd).Raw()
	if err != nil {
		t.Fatalf("%v: %v", cmd, err)
	}
	return res
}

func TestAggregateExplain(t *testing.T) {
	db, _ := explainDB(t)
	match := bson.D{{Key: "$match", Value: bson.D{{Key: "sku", Value: "a"}}}}
	sortQty := bson.D{{Key: "$sort", Value: bson.D{{Key: "qty", Value: 1}}}}
	group := bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$sku"}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}}
	for _, tc := range []struct {
		name      string
		cmd       bson.D
		execute   bool
		plan      []string // the stages of the $cursor's winning plan
		stages    []string // the pipeline stages after $cursor
		nReturned []int64  // per stage, $cursor first, with executionStats
	}{
		{
			name:   "explain option, $match on an index",
			cmd:    bson.D{{Key: "aggregate", Value: "orders"}, {Key: "pipeline", Value: bson.A{match, group}}, {Key: "explain", Value: true}},
			plan:   []string{"FETCH", "IXSCAN"},
			stages: []string{"$group"},
		},
		{
			name: "explain command, $sort on an index",
			cmd: bson.D{{Key: "explain", Value: bson.D{{Key: "aggregate", Value: "orders"}, {Key: "pipeline", Value: bson.A{sortQty, group}}, {Key: "cursor", Value: bson.D{}}}},
				{Key: "verbosity", Value: "queryPlanner"}},
			plan:   []string{"FETCH", "IXSCAN"},
			stages: []string{"$group"},
		},
		{
			name: "executionStats",
			cmd: bson.D{{Key: "explain", Value: bson.D{{Key: "aggregate", Value: "orders"}, {Key: "pipeline", Value: bson.A{match, sortQty, bson.D{{Key: "$limit", Value: 3}}, group}}}},
				{Key: "verbosity", Value: "executionStats"}},
			execute:   true,
			plan:      []string{"SORT", "FETCH", "IXSCAN"}, // the SORT limits itself
			stages:    []string{"$limit", "$group"},
			nReturned: []int64{3, 3, 1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := runCmd(t, db, tc.cmd)
			if v := res.Lookup("explainVersion").StringValue(); v != "1" {
				t.Errorf("explainVersion %q", v)
			}
			if _, err := res.LookupErr("serverInfo"); err != nil {
				t.Errorf("no serverInfo in %s", res)
			}
			stages, _ := res.Lookup("stages").Array().Values()
			if len(stages) != len(tc.stages)+1 {
				t.Fatalf("got stages %s", res.Lookup("stages"))
			}
			cursor := stages[0].Document().Lookup("$cursor").Document()
			if got := planStages(cursor.Lookup("queryPlanner", "winningPlan").Document()); !slices.Equal(got, tc.plan) {
				t.Errorf("winning plan %v, want %v", got, tc.plan)
			}
			if _, err := cursor.LookupErr("executionStats"); (err == nil) != tc.execute {
				t.Errorf("executionStats present: %v, want %v", err == nil, tc.execute)
			}
			for i, st := range stages[1:] {
				if name := st.Document().Index(0).Key(); name != tc.stages[i] {
					t.Errorf("stage %d is %s, want %s", i+1, name, tc.stages[i])
				}
			}
			for i, want := range tc.nReturned {
				if got := stages[i].Document().Lookup("nReturned").AsInt64(); got != want {
					t.Errorf("stage %d returned %d, want %d", i, got, want)
				}
			}
		})
	}
}

// A pipeline entirely pushed into the scan explains as a find; a
// collection-less one lists its stages.
func TestAggregateExplainShapes(t *testing.T) {
	db, _ := explainDB(t)
	res := runCmd(t, db, bson.D{{Key: "aggregate", Value: "orders"}, {Key: "explain", Value: true},
		{Key: "pipeline", Value: bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "qty", Value: bson.D{{Key: "$gt", Value: 15}}}}}}}}})
	if _, err := res.LookupErr("stages"); err == nil {
		t.Errorf("stages in a pushed-down explain: %s", res)
	}
	if got := planStages(res.Lookup("queryPlanner", "winningPlan").Document()); !slices.Equal(got, []string{"FETCH", "IXSCAN"}) {
		t.Errorf("winning plan %v", got)
	}
	res = runCmd(t, db, bson.D{{Key: "aggregate", Value: 1}, {Key: "explain", Value: true},
		{Key: "pipeline", Value: bson.A{bson.D{{Key: "$documents", Value: bson.A{bson.D{{Key: "x", Value: 1}}}}}}}})
	stages, _ := res.Lookup("stages").Array().Values()
	if len(stages) != 1 || stages[0].Document().Index(0).Key() != "$documents" {
		t.Errorf("collection-less explain: %s", res)
	}
}

// Explain never writes: $out and $merge at queryPlanner verbosity are only
// described, and at executionStats and allPlansExecution they read their
// input to the end and write nothing, their target not even created, as
// MongoDB's DocumentSourceWriter does under explain since 4.4
// (jstests/aggregation/explain_writing_aggs.js).
func TestAggregateExplainOut(t *testing.T) {
	db, _ := explainDB(t)
	ctx := context.Background()
	for _, stage := range []bson.D{
		{{Key: "$out", Value: "copy"}},
		{{Key: "$merge", Value: bson.D{{Key: "into", Value: "copy"}, {Key: "whenMatched", Value: "fail"}}}},
	} {
		pipeline := bson.A{stage}
		runCmd(t, db, bson.D{{Key: "aggregate", Value: "orders"}, {Key: "pipeline", Value: pipeline}, {Key: "explain", Value: true}})
		for _, verbosity := range []string{"executionStats", "allPlansExecution"} {
			res := runCmd(t, db, bson.D{{Key: "explain", Value: bson.D{{Key: "aggregate", Value: "orders"}, {Key: "pipeline", Value: pipeline}}},
				{Key: "verbosity", Value: verbosity}})
			stages, _ := res.Lookup("stages").Array().Values()
			last := stages[len(stages)-1].Document()
			if last.Index(0).Key() != stage[0].Key || last.Lookup("nReturned").AsInt64() != 0 {
				t.Errorf("%s explain of %s: stages %v", verbosity, stage[0].Key, stages)
			}
			if first := stages[0].Document().Lookup("$cursor", "executionStats", "nReturned"); first.AsInt64() == 0 {
				t.Errorf("%s explain of %s read no input: %v", verbosity, stage[0].Key, stages[0])
			}
		}
		names, err := db.ListCollectionNames(ctx, bson.D{{Key: "name", Value: "copy"}})
		if err != nil || len(names) != 0 {
			t.Errorf("explain of %s wrote its collection: %v %v", stage[0].Key, names, err)
		}
	}
}

// Explain shows $out and $merge resolved, as MongoDB 7.0 serializes them
// (DocumentSourceOut::serialize, DocumentSourceMerge::serialize;
// explain_writing_aggs.js reads $out.coll, $out.db, $merge.on,
// $merge.whenMatched and $merge.whenNotMatched): $out as {coll, db,
// timeseries?}; $merge as {into: {db, coll}, on, let?, whenMatched,
// whenNotMatched}, on a path or the sorted paths, let with new: "$$ROOT"
// where the pipeline sees $$new without let naming it.
func TestAggregateExplainWriterSpecs(t *testing.T) {
	db, _ := explainDB(t)
	_, err := db.Collection("u").Indexes().CreateOne(context.Background(), mongo.IndexModel{Keys: bson.D{{Key: "b", Value: 1}, {Key: "a", Value: 1}}, Options: options.Index().SetUnique(true)})
	if err != nil {
		t.Fatal(err)
	}
	set := bson.A{bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}}
	into := func(coll string) bson.D { return bson.D{{Key: "db", Value: db.Name()}, {Key: "coll", Value: coll}} }
	for _, tc := range []struct {
		stage, want bson.D
	}{
		{bson.D{{Key: "$out", Value: "copy"}}, bson.D{{Key: "$out", Value: bson.D{{Key: "coll", Value: "copy"}, {Key: "db", Value: db.Name()}}}}},
		{
			bson.D{{Key: "$out", Value: bson.D{{Key: "db", Value: "other"}, {Key: "coll", Value: "ts"}, {Key: "timeseries", Value: bson.D{{Key: "timeField", Value: "t"}}}}}},
			bson.D{{Key: "$out", Value: bson.D{{Key: "coll", Value: "ts"}, {Key: "db", Value: "other"}, {Key: "timeseries", Value: bson.D{{Key: "timeField", Value: "t"}}}}}},
		},
		{
			bson.D{{Key: "$merge", Value: "copy"}},
			bson.D{{Key: "$merge", Value: bson.D{{Key: "into", Value: into("copy")}, {Key: "on", Value: "_id"}, {Key: "whenMatched", Value: "merge"}, {Key: "whenNotMatched", Value: "insert"}}}},
		},
		{
			bson.D{{Key: "$merge", Value: bson.D{{Key: "whenNotMatched", Value: "discard"}, {Key: "on", Value: bson.A{"b", "a"}}, {Key: "into", Value: "u"}, {Key: "whenMatched", Value: "replace"}}}},
			bson.D{{Key: "$merge", Value: bson.D{{Key: "into", Value: into("u")}, {Key: "on", Value: bson.A{"a", "b"}}, {Key: "whenMatched", Value: "replace"}, {Key: "whenNotMatched", Value: "discard"}}}},
		},
		{
			bson.D{{Key: "$merge", Value: bson.D{{Key: "into", Value: "copy"}, {Key: "whenMatched", Value: set}}}},
			bson.D{{Key: "$merge", Value: bson.D{{Key: "into", Value: into("copy")}, {Key: "on", Value: "_id"}, {Key: "let", Value: bson.D{{Key: "new", Value: "$$ROOT"}}}, {Key: "whenMatched", Value: set}, {Key: "whenNotMatched", Value: "insert"}}}},
		},
		{
			bson.D{{Key: "$merge", Value: bson.D{{Key: "into", Value: "copy"}, {Key: "let", Value: bson.D{{Key: "y", Value: "$qty"}}}, {Key: "whenMatched", Value: set}}}},
			bson.D{{Key: "$merge", Value: bson.D{{Key: "into", Value: into("copy")}, {Key: "on", Value: "_id"}, {Key: "let", Value: bson.D{{Key: "y", Value: "$qty"}, {Key: "new", Value: "$$ROOT"}}}, {Key: "whenMatched", Value: set}, {Key: "whenNotMatched", Value: "insert"}}}},
		},
		{
			bson.D{{Key: "$merge", Value: bson.D{{Key: "into", Value: "copy"}, {Key: "let", Value: bson.D{{Key: "y", Value: "$qty"}}}, {Key: "whenMatched", Value: set}, {Key: "whenNotMatched", Value: "discard"}}}},
			bson.D{{Key: "$merge", Value: bson.D{{Key: "into", Value: into("copy")}, {Key: "on", Value: "_id"}, {Key: "let", Value: bson.D{{Key: "y", Value: "$qty"}}}, {Key: "whenMatched", Value: set}, {Key: "whenNotMatched", Value: "discard"}}}},
		},
	} {
		res := runCmd(t, db, bson.D{{Key: "aggregate", Value: "orders"}, {Key: "pipeline", Value: bson.A{tc.stage}}, {Key: "explain", Value: true}})
		stages, _ := res.Lookup("stages").Array().Values()
		want, _ := bson.Marshal(tc.want)
		if got := stages[len(stages)-1].Document(); !bytes.Equal(got, want) {
			t.Errorf("explain of %v:\n got %s\nwant %s", tc.stage, got, bson.Raw(want))
		}
	}
}

// Explain shows $limit, $skip, $sample and $unwind as MongoDB 7.0
// serializes them (DocumentSourceLimit, DocumentSourceSkip,
// DocumentSourceSample and DocumentSourceUnwind::serialize;
// jstests/aggregation/bugs/skip_limit_overflow.js reads $limit, $skip and
// $sample.size as longs): the counts as longs whatever number was written,
// $unwind as {path, preserveNullAndEmptyArrays if true, includeArrayIndex
// if given}.
func TestAggregateExplainCountSpecs(t *testing.T) {
	db, _ := explainDB(t)
	group := bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$sku"}}}}
	for _, tc := range []struct {
		stage, want bson.D
	}{
		{bson.D{{Key: "$limit", Value: int32(5)}}, bson.D{{Key: "$limit", Value: int64(5)}}},
		{bson.D{{Key: "$limit", Value: 5.0}}, bson.D{{Key: "$limit", Value: int64(5)}}},
		{bson.D{{Key: "$skip", Value: int32(2)}}, bson.D{{Key: "$skip", Value: int64(2)}}},
		{bson.D{{Key: "$sample", Value: bson.D{{Key: "size", Value: int32(3)}}}}, bson.D{{Key: "$sample", Value: bson.D{{Key: "size", Value: int64(3)}}}}},
		{bson.D{{Key: "$sample", Value: bson.D{{Key: "size", Value: 2.5}}}}, bson.D{{Key: "$sample", Value: bson.D{{Key: "size", Value: int64(2)}}}}},
		{bson.D{{Key: "$unwind", Value: "$_id"}}, bson.D{{Key: "$unwind", Value: bson.D{{Key: "path", Value: "$_id"}}}}},
		{
			bson.D{{Key: "$unwind", Value: bson.D{{Key: "includeArrayIndex", Value: "i.j"}, {Key: "preserveNullAndEmptyArrays", Value: false}, {Key: "path", Value: "$_id.a"}}}},
			bson.D{{Key: "$unwind", Value: bson.D{{Key: "path", Value: "$_id.a"}, {Key: "includeArrayIndex", Value: "i.j"}}}},
		},
		{
			bson.D{{Key: "$unwind", Value: bson.D{{Key: "path", Value: "$_id"}, {Key: "preserveNullAndEmptyArrays", Value: true}}}},
			bson.D{{Key: "$unwind", Value: bson.D{{Key: "path", Value: "$_id"}, {Key: "preserveNullAndEmptyArrays", Value: true}}}},
		},
	} {
		res := runCmd(t, db, bson.D{{Key: "aggregate", Value: "orders"}, {Key: "pipeline", Value: bson.A{group, tc.stage}}, {Key: "explain", Value: true}})
		stages, _ := res.Lookup("stages").Array().Values()
		want, _ := bson.Marshal(tc.want)
		if got := stages[len(stages)-1].Document(); !bytes.Equal(got, want) {
			t.Errorf("explain of %v:\n got %s\nwant %s", tc.stage, got, bson.Raw(want))
		}
	}
}

// A $unionWith's explain shows its sub-pipeline explained as an aggregate
// of its collection is, a $cursor stage first, and its spec as {coll,
// pipeline} even when given as a name; from executionStats a sub-pipeline
// the run never reached shows as written
// (jstests/aggregation/sources/unionWith/unionWith_explain.js).
func TestAggregateExplainUnionWith(t *testing.T) {
	db, _ := explainDB(t)
	insert(t, db.Collection("base"), bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 2}})
	explain := func(coll string, pipeline bson.A, verbosity string) bson.Raw {
		t.Helper()
		return runCmd(t, db, bson.D{{Key: "explain", Value: bson.D{{Key: "aggregate", Value: coll}, {Key: "pipeline", Value: pipeline}, {Key: "cursor", Value: bson.D{}}}},
			{Key: "verbosity", Value: verbosity}})
	}
	union := func(res bson.Raw) bson.Raw {
		t.Helper()
		stages, _ := res.Lookup("stages").Array().Values()
		for _, st := range stages {
			if u, ok := st.Document().Lookup("$unionWith").DocumentOK(); ok {
				return u
			}
		}
		t.Fatalf("no $unionWith stage: %s", res)
		return nil
	}
	group := bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$sku"}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}}
	match := bson.D{{Key: "$match", Value: bson.D{{Key: "qty", Value: bson.D{{Key: "$gt", Value: 15}}}}}}

	// queryPlanner: the sub-pipeline's stages are those of its own explain
	u := union(explain("base", bson.A{bson.D{{Key: "$unionWith", Value: bson.D{{Key: "coll", Value: "orders"}, {Key: "pipeline", Value: bson.A{group}}}}}}, "queryPlanner"))
	if got, want := u.Lookup("pipeline"), explain("orders", bson.A{group}, "queryPlanner").Lookup("stages"); !got.Equal(want) {
		t.Errorf("sub-pipeline explain\n got %s\nwant %s", got, want)
	}
	// a sub-pipeline pushed into the scan: its $cursor holds the find's
	// queryPlanner; a name is shown as {coll, pipeline}
	u = union(explain("base", bson.A{bson.D{{Key: "$unionWith", Value: bson.D{{Key: "coll", Value: "orders"}, {Key: "pipeline", Value: bson.A{match}}}}}}, "queryPlanner"))
	subs, _ := u.Lookup("pipeline").Array().Values()
	if want := explain("orders", bson.A{match}, "queryPlanner").Lookup("queryPlanner"); len(subs) != 1 || !subs[0].Document().Lookup("$cursor", "queryPlanner").Equal(want) {
		t.Errorf("pushed-down sub-pipeline explain %s, want one $cursor with %s", u, want)
	}
	u = union(explain("base", bson.A{bson.D{{Key: "$unionWith", Value: "orders"}}}, "queryPlanner"))
	if u.Lookup("coll").StringValue() != "orders" || u.Lookup("pipeline", "0", "$cursor", "queryPlanner", "namespace").StringValue() != db.Name()+".orders" {
		t.Errorf("$unionWith by name explained as %s", u)
	}

	// executionStats: the union's output, the sub-pipeline's $cursor
	res := explain("base", bson.A{bson.D{{Key: "$unionWith", Value: "orders"}}}, "executionStats")
	stages, _ := res.Lookup("stages").Array().Values()
	if n := stages[1].Document().Lookup("nReturned").AsInt64(); n != 22 {
		t.Errorf("$unionWith nReturned %d, want 22", n)
	}
	if n := union(res).Lookup("pipeline", "0", "$cursor", "executionStats", "nReturned").AsInt64(); n != 20 {
		t.Errorf("sub-pipeline $cursor nReturned %d, want 20: %s", n, union(res))
	}
	// a $limit met before the sub-pipeline: shown as written
	u = union(explain("base", bson.A{bson.D{{Key: "$unionWith", Value: "orders"}}, bson.D{{Key: "$limit", Value: 1}}}, "executionStats"))
	want, err := bson.Marshal(bson.D{{Key: "coll", Value: "orders"}, {Key: "pipeline", Value: bson.A{}}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(u, want) {
		t.Errorf("unread sub-pipeline explained as %s, want %s", u, bson.Raw(want))
	}
}
