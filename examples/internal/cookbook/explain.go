package cookbook

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// UsesIndex explains find(filter).sort(sort) on coll with verbosity
// queryPlanner and checks that the winning plan is an IXSCAN of index. It
// prints the index bounds, which docs/patterns.md records. sort may be nil.
func (k *Kitchen) UsesIndex(ctx context.Context, coll *mongo.Collection, filter, sort any, index string) {
	find := bson.D{{Key: "find", Value: coll.Name()}, {Key: "filter", Value: filter}}
	if sort != nil {
		find = append(find, bson.E{Key: "sort", Value: sort})
	}
	var reply struct {
		QueryPlanner struct {
			WinningPlan bson.Raw `bson:"winningPlan"`
		} `bson:"queryPlanner"`
	}
	cmd := bson.D{{Key: "explain", Value: find}, {Key: "verbosity", Value: "queryPlanner"}}
	err := coll.Database().RunCommand(ctx, cmd).Decode(&reply)
	if !k.OK(err, "explain "+coll.Name()) {
		return
	}
	plan := reply.QueryPlanner.WinningPlan
	scan, _ := findStage(plan, "IXSCAN")
	name, _ := scan.Lookup("indexName").StringValueOK()
	query := fmt.Sprintf("find(%v)", filter)
	if sort != nil {
		query += fmt.Sprintf(".sort(%v)", sort)
	}
	if !k.Check(name == index, "explain %s.%s: IXSCAN of %s (got %q)", coll.Name(), query, index, name) {
		k.Say("winning plan: %s", plan)
		return
	}
	k.Say("bounds %s", scan.Lookup("indexBounds"))
}

// findStage returns the first plan node, depth first, whose stage is stage.
func findStage(plan bson.Raw, stage string) (bson.Raw, bool) {
	if s, _ := plan.Lookup("stage").StringValueOK(); s == stage {
		return plan, true
	}
	if in, ok := plan.Lookup("inputStage").DocumentOK(); ok {
		if found, ok := findStage(in, stage); ok {
			return found, true
		}
	}
	inputs, ok := plan.Lookup("inputStages").ArrayOK()
	if !ok {
		return nil, false
	}
	values, _ := inputs.Values()
	for _, v := range values {
		if in, ok := v.DocumentOK(); ok {
			if found, ok := findStage(in, stage); ok {
				return found, true
			}
		}
	}
	return nil, false
}
