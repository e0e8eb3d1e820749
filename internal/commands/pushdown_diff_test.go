package commands

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/querygen"
)

// TestPushdownDifferential checks, on random data sets under random
// indexes, that an aggregate whose leading $match and $sort the engine
// runs (through the planner, on an index when one fits) returns what the
// same pipeline returns when a leading {$skip: 0} keeps them in the
// pipeline: the same documents, in the same order when the sort is total.
func TestPushdownDifferential(t *testing.T) {
	svc := newTestService(t)
	base := uint64(time.Now().UnixNano())
	sets := 40
	if testing.Short() {
		sets = 3
	}
	for i := 0; i < sets && !t.Failed(); i++ {
		checkPushdown(t, svc, base+uint64(i), 60)
	}
}

// FuzzPushdown runs the check of TestPushdownDifferential on the data sets
// of fuzzed seeds.
func FuzzPushdown(f *testing.F) {
	f.Add(uint64(1))
	svc := newTestService(f)
	f.Fuzz(func(t *testing.T, seed uint64) {
		checkPushdown(t, svc, seed, 20)
	})
}

var pushdownSets int

func checkPushdown(t *testing.T, svc *Service, seed uint64, n int) {
	t.Helper()
	g := querygen.New(seed)
	pushdownSets++
	coll := fmt.Sprintf("p%d", pushdownSets)
	if err := svc.Engine.CreateCollection("diff", coll, engine.CollectionOptions{}); err != nil {
		t.Fatal(err)
	}
	var indexes []string
	for _, spec := range g.Indexes() {
		indexes = append(indexes, fmt.Sprint(spec))
		is := engine.IndexSpec{Key: mustMarshal(t, spec.Key), Unique: spec.Unique, Sparse: spec.Sparse, ExpireAfter: -1}
		if spec.Partial != nil {
			is.Partial = mustMarshal(t, spec.Partial)
		}
		if _, err := svc.Engine.CreateIndexes("diff", coll, []engine.IndexSpec{is}, nil); err != nil {
			t.Fatal(err)
		}
	}
	docs := 20 + g.Intn(60)
	for i := 0; i < docs; i++ {
		svc.Engine.Insert("diff", coll, []bson.Raw{mustMarshal(t, g.Doc(int32(i)))}, true, engine.WriteOptions{})
	}
	for i := 0; i < n; i++ {
		filter, sort := g.Query(), g.Sort()
		total := len(sort) > 0 && g.Intn(2) == 0
		var stages bson.A
		stages = append(stages, bson.D{{Key: "$match", Value: filter}})
		if len(sort) > 0 {
			if total {
				sort = append(sort, bson.E{Key: "_id", Value: int32(1)})
			}
			stages = append(stages, bson.D{{Key: "$sort", Value: sort}})
			if total && g.Intn(2) == 0 {
				stages = append(stages, bson.D{{Key: "$limit", Value: int64(1 + g.Intn(5))}})
			}
		}
		if p := g.Projection(); p != nil {
			stages = append(stages, bson.D{{Key: "$project", Value: p}})
		}
		pushed := runPipeline(t, svc, coll, stages)
		kept := runPipeline(t, svc, coll, append(bson.A{bson.D{{Key: "$skip", Value: int32(0)}}}, stages...))
		if msg := diffBatches(pushed, kept, total); msg != "" {
			t.Fatalf("data set seed %d: %s\npipeline %s\nindexes %v", seed, msg, extJSON(t, stages), indexes)
		}
	}
}

func mustMarshal(t *testing.T, v any) bson.Raw {
	t.Helper()
	b, err := bson.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func extJSON(t *testing.T, stages bson.A) string {
	b, err := bson.MarshalExtJSON(bson.D{{Key: "p", Value: stages}}, true, false)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// pipelineResult is an aggregate's documents, or its error reply.
type pipelineResult struct {
	docs []bson.Raw
	err  bson.Raw
}

func runPipeline(t *testing.T, svc *Service, coll string, stages bson.A) pipelineResult {
	t.Helper()
	cmd := mustMarshal(t, bson.D{{Key: "aggregate", Value: coll}, {Key: "pipeline", Value: stages}, {Key: "cursor", Value: bson.D{{Key: "batchSize", Value: int32(100000)}}}})
	reply := svc.Run(&Request{DB: "diff", Cmd: cmd, Conn: &Conn{}})
	if ok, _ := reply.Lookup("ok").DoubleOK(); ok != 1 {
		return pipelineResult{err: reply}
	}
	var r pipelineResult
	vals, err := reply.Lookup("cursor", "firstBatch").Array().Values()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vals {
		r.docs = append(r.docs, v.Document())
	}
	return r
}

// diffBatches describes how two results differ, or returns "": as
// sequences when the sort is total, else as multisets.
func diffBatches(a, b pipelineResult, total bool) string {
	if a.err != nil || b.err != nil {
		if a.err == nil || b.err == nil || a.err.Lookup("code").Int32() != b.err.Lookup("code").Int32() {
			return fmt.Sprintf("pushed down: %v\nkept: %v", a.err, b.err)
		}
		return ""
	}
	x, y := slices.Clone(a.docs), slices.Clone(b.docs)
	if !total {
		cmp := func(p, q bson.Raw) int { return bytes.Compare(p, q) }
		slices.SortFunc(x, cmp)
		slices.SortFunc(y, cmp)
	}
	if !slices.EqualFunc(x, y, func(p, q bson.Raw) bool { return bytes.Equal(p, q) }) {
		return fmt.Sprintf("pushed down: %v\nkept: %v", x, y)
	}
	return ""
}
