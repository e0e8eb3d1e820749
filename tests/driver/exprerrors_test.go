package driver_test

import (
	"context"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestExpressionArgumentErrors: expression operators refuse bad arguments
// read from documents with MongoDB 7.0's code and text, as a client sees
// them through an aggregate.
func TestExpressionArgumentErrors(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	coll := client.Database("exprerrors").Collection("c")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "s", Value: "abc"}, {Key: "d", Value: 1.5}, {Key: "nul", Value: nil}}); err != nil {
		t.Fatal(err)
	}
	const prefix = "PlanExecutor error during aggregation :: caused by :: "
	const parsePrefix = "Invalid $project :: caused by :: "
	for _, tc := range []struct {
		name     string
		expr     bson.D
		code     int
		codeName string
		msg      string
	}{
		// $bitNot is a single-number operator: a non-number is 28765, a
		// number that is not an int or long is TypeMismatch.
		{"bitNot string", bson.D{{Key: "$bitNot", Value: "$s"}}, 28765, "Location28765", "$bitNot only supports numeric types, not string"},
		{"bitNot double", bson.D{{Key: "$bitNot", Value: "$d"}}, 14, "TypeMismatch", "$bitNot only supports int and long, not: double."},
		// $firstN and its siblings take only an array input, null included.
		{"firstN null", bson.D{{Key: "$firstN", Value: bson.D{{Key: "input", Value: "$nul"}, {Key: "n", Value: 1}}}}, 5788200, "Location5788200", "Input must be an array"},
		{"maxN missing", bson.D{{Key: "$maxN", Value: bson.D{{Key: "input", Value: "$nope"}, {Key: "n", Value: 1}}}}, 5788200, "Location5788200", "Input must be an array"},
		{"lastN string", bson.D{{Key: "$lastN", Value: bson.D{{Key: "input", Value: "$s"}, {Key: "n", Value: 1}}}}, 5788200, "Location5788200", "Input must be an array"},
		// ExpressionBoundedTrigonometric's 50989 shows the argument as the
		// double a C++ stream prints.
		{"acos out of range", bson.D{{Key: "$acos", Value: "$d"}}, 50989, "Location50989", "cannot apply $acos to 1.5, value must be in [-1,1]"},
		// A specification that is not an object is named with its value.
		{"firstN spec", bson.D{{Key: "$firstN", Value: 5}}, 5787801, "Location5787801", "specification must be an object; found $firstN: 5"},
		{"maxN spec", bson.D{{Key: "$maxN", Value: "x"}}, 5787900, "Location5787900", `specification must be an object; found $maxN: "x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := aggregateResult(coll, bson.A{bson.D{{Key: "$project", Value: bson.D{{Key: "r", Value: tc.expr}}}}})
			p := prefix
			if strings.HasPrefix(tc.msg, "specification") {
				p = parsePrefix
			}
			requireError(t, err, tc.code, tc.codeName, p+tc.msg)
		})
	}
}

// TestRandArgument: $rand takes an empty object or an empty array (both
// are BSON's embedded-object form); anything in either is 3040501, a
// scalar is 10065.
func TestRandArgument(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	coll := client.Database("exprerrors").Collection("rand")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	project := func(arg any) ([]bson.Raw, error) {
		return aggregateResult(coll, bson.A{bson.D{{Key: "$project", Value: bson.D{{Key: "r", Value: bson.D{{Key: "$rand", Value: arg}}}}}}})
	}
	for _, arg := range []any{bson.D{}, bson.A{}} {
		docs, err := project(arg)
		if err != nil {
			t.Fatalf("$rand: %v: %v", arg, err)
		}
		r, ok := docs[0].Lookup("r").DoubleOK()
		if !ok || r < 0 || r >= 1 {
			t.Fatalf("$rand: %v gave %s", arg, docs[0])
		}
	}
	const prefix = "Invalid $project :: caused by :: "
	_, err := project(bson.A{1})
	requireError(t, err, 3040501, "Location3040501", prefix+"$rand does not currently accept arguments")
	_, err = project("x")
	requireError(t, err, 10065, "Location10065", prefix+"invalid parameter: expected an object ($rand)")
}
