package commands

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/aggregate"
	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/engine"
)

// examiningEnv is the aggregate's engine Env that also explains, with
// executionStats, every read it makes, summing the keys and documents the
// engine examined for them.
type examiningEnv struct {
	engineEnv
	t           testing.TB
	reads       int
	keys, docs  int64
	ixscanReads int
}

func (e *examiningEnv) Find(db, coll string, filter bson.Raw, c *collation.Collator) (aggregate.Source, error) {
	ex, err := e.e.Explain(db, coll, engine.FindOptions{Filter: filter}, engine.ExecutionStats)
	if err != nil {
		e.t.Fatal(err)
	}
	raw, _ := bson.Marshal(ex)
	stats := bson.Raw(raw).Lookup("executionStats")
	e.keys += stats.Document().Lookup("totalKeysExamined").AsInt64()
	e.docs += stats.Document().Lookup("totalDocsExamined").AsInt64()
	stage := bson.Raw(raw).Lookup("queryPlanner", "winningPlan").String()
	if strings.Contains(stage, "IXSCAN") {
		e.ixscanReads++
	}
	e.reads++
	return e.engineEnv.Find(db, coll, filter, c)
}

// TestGraphLookupVisitsReachable: over a 100k-node tree (node i's parent is
// (i-1)/2) with an index on the connect field, a $graphLookup of one
// node's descendants reads through the index level by level, examining
// keys and documents in proportion to the nodes it reaches, not to the
// collection.
func TestGraphLookupVisitsReachable(t *testing.T) {
	s := newTestService(t)
	const nodes = 100_000
	var docs bson.A
	for i := range nodes {
		d := bson.D{{Key: "_id", Value: int32(i)}}
		if i > 0 {
			d = append(d, bson.E{Key: "parent", Value: int32((i - 1) / 2)})
		}
		docs = append(docs, d)
		if len(docs) == 5000 || i == nodes-1 {
			if reply := bson.Raw(s.Run(&Request{DB: "g", Cmd: marshal(bson.D{{Key: "insert", Value: "tree"}, {Key: "documents", Value: docs}})})); reply.Lookup("ok").Double() != 1 {
				t.Fatal(reply)
			}
			docs = nil
		}
	}
	if reply := bson.Raw(s.Run(&Request{DB: "g", Cmd: marshal(bson.D{{Key: "createIndexes", Value: "tree"},
		{Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "parent", Value: 1}}}, {Key: "name", Value: "parent_1"}}}}})})); reply.Lookup("ok").Double() != 1 {
		t.Fatal(reply)
	}
	// The descendants of node 100 in a binary heap of nodes.
	const root = 100
	reachable := 0
	for level := []int{root}; len(level) > 0; {
		var next []int
		for _, n := range level {
			for _, c := range []int{2*n + 1, 2*n + 2} {
				if c < nodes {
					next = append(next, c)
				}
			}
		}
		reachable += len(next)
		level = next
	}
	env := &examiningEnv{engineEnv: engineEnv{e: s.Engine}, t: t}
	stage, _ := bson.Marshal(bson.D{{Key: "$graphLookup", Value: bson.D{
		{Key: "from", Value: "tree"}, {Key: "startWith", Value: "$_id"}, {Key: "connectFromField", Value: "_id"},
		{Key: "connectToField", Value: "parent"}, {Key: "as", Value: "desc"}}}})
	p, err := aggregate.Parse([]bson.Raw{stage}, aggregate.Options{DB: "g", Coll: "tree", Env: env})
	if err != nil {
		t.Fatal(err)
	}
	in, _ := bson.Marshal(bson.D{{Key: "_id", Value: int32(root)}})
	out := p.Run(&aggregate.SliceSource{Docs: []bson.Raw{in}})
	doc, err := out.Next()
	if err != nil || doc == nil {
		t.Fatal(doc, err)
	}
	if vals, _ := doc.Lookup("desc").Array().Values(); len(vals) != reachable {
		t.Fatalf("reached %d nodes, want %d", len(vals), reachable)
	}
	t.Logf("reachable %d of %d nodes: %d reads (%d by IXSCAN), %d keys and %d documents examined",
		reachable, nodes, env.reads, env.ixscanReads, env.keys, env.docs)
	if env.ixscanReads != env.reads {
		t.Fatalf("%d of %d reads used the index on parent", env.ixscanReads, env.reads)
	}
	// Each reached node is one key and one document; the last level's
	// leaves are looked up once more and find nothing.
	if limit := int64(2*reachable + 2*env.reads); env.keys > limit || env.docs > limit {
		t.Fatalf("examined %d keys and %d documents for %d reachable nodes", env.keys, env.docs, reachable)
	}
}
