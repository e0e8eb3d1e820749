package driver_test

import (
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestViewGraph: a view definition is checked as MongoDB's view graph
// checks it (views_validation.js): what its pipeline reads ($lookup,
// $graphLookup, $facet, $unionWith, nested) must not lead back to it
// (GraphContainsCycle), and the views reading it plus those it reads are
// at most 20 deep (ViewDepthLimitExceeded), at create, collMod and when an
// aggregation resolves the views it reads.
func TestViewGraph(t *testing.T) {
	client, _ := startServer(t)
	ctx := t.Context()
	db := client.Database("viewgraph")
	lookup := func(from string) bson.D {
		return bson.D{{Key: "$lookup", Value: bson.D{{Key: "from", Value: from}, {Key: "as", Value: "as"}, {Key: "localField", Value: "l"}, {Key: "foreignField", Value: "f"}}}}
	}
	graphLookup := func(from string) bson.D {
		return bson.D{{Key: "$graphLookup", Value: bson.D{{Key: "from", Value: from}, {Key: "as", Value: "as"}, {Key: "startWith", Value: "s"}, {Key: "connectFromField", Value: "c"}, {Key: "connectToField", Value: "t"}}}}
	}
	facet := func(from string) bson.D {
		return bson.D{{Key: "$facet", Value: bson.D{{Key: "k", Value: bson.A{lookup(from)}}}}}
	}
	union := func(from string) bson.D { return bson.D{{Key: "$unionWith", Value: from}} }
	view := func(name, on string, stages ...bson.D) bson.D {
		p := bson.A{}
		for _, s := range stages {
			p = append(p, s)
		}
		return bson.D{{Key: "create", Value: name}, {Key: "viewOn", Value: on}, {Key: "pipeline", Value: p}}
	}
	type step struct {
		cmd  bson.D
		code int
	}
	run := func(steps []step) {
		t.Helper()
		if err := db.Drop(ctx); err != nil {
			t.Fatal(err)
		}
		for _, s := range steps {
			if got := serverCode(db.RunCommand(ctx, s.cmd).Err()); got != s.code {
				t.Errorf("%v: code %d, want %d", s.cmd, got, s.code)
			}
		}
	}
	for _, steps := range [][]step{
		{{view("a", "a"), 5}},
		{{view("a", "b"), 0}, {view("b", "a"), 5}},
		{{view("a", "b", lookup("a")), 5}},
		{{view("a", "b"), 0}, {view("b", "c", lookup("a")), 5}},
		{{view("a", "b", graphLookup("a")), 5}, {view("a", "b", graphLookup("b")), 0}, {view("b", "c", graphLookup("a")), 5}},
		{{view("a", "b", facet("a")), 5}, {view("a", "b", facet("b")), 0}, {view("b", "c", facet("a")), 5}},
		{{view("a", "b", union("a")), 5}, {view("a", "b", union("b")), 0}, {view("b", "c", union("a")), 5}},
		{{view("a", "b", bson.D{{Key: "$unionWith", Value: bson.D{{Key: "coll", Value: "c"}, {Key: "pipeline", Value: bson.A{union("a")}}}}}), 5}},
		{{view("a", "b"), 0}, {view("b", "c"), 0}, {bson.D{{Key: "collMod", Value: "b"}, {Key: "viewOn", Value: "c"}, {Key: "pipeline", Value: bson.A{lookup("a")}}}, 5}},
		// the name is taken before the definition is looked at
		{{bson.D{{Key: "create", Value: "c"}}, 0}, {view("w", "c"), 0}, {view("c", "w"), 48}},
	} {
		run(steps)
	}
	// A tree 20 deep, each view reading the next four times: checking a
	// new view walks it once, not 4^20 times.
	var steps []step
	for i := 1; i <= 20; i++ {
		c := fmt.Sprintf("v%d", i+1)
		steps = append(steps, step{view(fmt.Sprintf("v%d", i), c, lookup(c), graphLookup(c), facet(c), union(c)), 0})
	}
	steps = append(steps,
		step{view("v21", "v22"), 165},
		step{view("v0", "v1"), 165},
		step{view("v0", "ok", lookup("v1")), 165},
		step{view("v0", "ok", graphLookup("v1")), 165},
		step{view("v0", "ok", facet("v1")), 165},
		step{view("v0", "ok", union("v1")), 165},
		// resolving v1 goes 20 views deep
		step{bson.D{{Key: "aggregate", Value: "v10"}, {Key: "pipeline", Value: bson.A{union("v1")}}, {Key: "cursor", Value: bson.D{}}}, 165},
		step{bson.D{{Key: "aggregate", Value: "v10"}, {Key: "pipeline", Value: bson.A{lookup("v1")}}, {Key: "cursor", Value: bson.D{}}}, 165},
		step{view("vMid", "v10"), 0},
	)
	start := time.Now()
	run(steps)
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the 20-deep tree took %v", d)
	}
}
