package driver_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// keyRangeSets are the documents the cases of testdata/keyrange.jsonl read.
var keyRangeSets = map[string][]bson.D{
	"grid": func() (docs []bson.D) {
		for a := 1; a <= 3; a++ {
			for b := 1; b <= 3; b++ {
				docs = append(docs, bson.D{{Key: "_id", Value: 3*(a-1) + b - 1}, {Key: "a", Value: a}, {Key: "b", Value: b}})
			}
		}
		return docs
	}(),
	"abc": func() (docs []bson.D) {
		for i, k := range [][3]any{{1, "b", 1}, {1, "b", 2}, {1, "a", 1}, {1, "a", 2}, {2, "b", 1}, {2, "b", 2}, {2, "a", 1}, {2, "a", 2}} {
			docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "a", Value: k[0]}, {Key: "b", Value: k[1]}, {Key: "c", Value: k[2]}})
		}
		return docs
	}(),
	"multi":     {{{Key: "_id", Value: 0}, {Key: "m", Value: bson.A{1, 5}}}, {{Key: "_id", Value: 1}, {Key: "m", Value: 3}}},
	"multisort": {{{Key: "_id", Value: 0}, {Key: "m", Value: bson.A{1, 5}}}, {{Key: "_id", Value: 1}, {Key: "m", Value: 4.5}}, {{Key: "_id", Value: 2}, {Key: "m", Value: 2}}},
	"letters":   {{{Key: "_id", Value: 0}, {Key: "s", Value: "a"}}, {{Key: "_id", Value: 1}, {Key: "s", Value: "B"}}, {{Key: "_id", Value: 2}, {Key: "s", Value: "c"}}},
}

// TestFindKeyRange runs find's min and max cases (testdata/keyrange.jsonl):
// the documents returned, in order, or the error code (and, when the row
// gives one, its message).
func TestFindKeyRange(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database(testDB)
	ctx := context.Background()
	for name, text := range corpusLines(t, "testdata/keyrange.jsonl") {
		t.Run(name, func(t *testing.T) {
			var tc struct {
				Set            string     `bson:"set"`
				Indexes        []bson.Raw `bson:"indexes"`
				IndexCollation bson.Raw   `bson:"indexCollation"`
				Find           bson.Raw   `bson:"find"`
				IDs            []int      `bson:"ids"`
				Code           int        `bson:"code"`
				ErrMsg         string     `bson:"errmsg"`
			}
			if err := bson.UnmarshalExtJSON([]byte(text), false, &tc); err != nil {
				t.Fatal(err)
			}
			coll := db.Collection("keyrange")
			if err := coll.Drop(ctx); err != nil {
				t.Fatal(err)
			}
			docs, ok := keyRangeSets[tc.Set]
			if !ok {
				t.Fatalf("no set %q", tc.Set)
			}
			if _, err := coll.InsertMany(ctx, docs); err != nil {
				t.Fatal(err)
			}
			// createIndexes itself: the driver refuses key pattern values
			// such as 0.5.
			for _, key := range tc.Indexes {
				name := ""
				elems, _ := key.Elements()
				for i, el := range elems {
					if i > 0 {
						name += "_"
					}
					v := el.Value()
					switch v.Type {
					case bson.TypeString:
						name += el.Key() + "_" + v.StringValue()
					case bson.TypeDouble:
						name += el.Key() + "_" + strconv.FormatFloat(v.Double(), 'g', -1, 64)
					default:
						name += el.Key() + "_" + strconv.FormatInt(v.AsInt64(), 10)
					}
				}
				spec := bson.D{{Key: "key", Value: key}, {Key: "name", Value: name}}
				if tc.IndexCollation != nil {
					spec = append(spec, bson.E{Key: "collation", Value: tc.IndexCollation})
				}
				if err := db.RunCommand(ctx, bson.D{{Key: "createIndexes", Value: coll.Name()}, {Key: "indexes", Value: bson.A{spec}}}).Err(); err != nil {
					t.Fatal(err)
				}
			}
			cmd := append(bson.D{{Key: "find", Value: coll.Name()}}, rawFields(t, tc.Find)...)
			var reply struct {
				Cursor struct {
					FirstBatch []bson.Raw `bson:"firstBatch"`
				} `bson:"cursor"`
			}
			err := db.RunCommand(ctx, cmd).Decode(&reply)
			if tc.Code != 0 {
				requireCode(t, err, tc.Code, "")
				var ce mongo.CommandError
				if tc.ErrMsg != "" && (!errors.As(err, &ce) || ce.Message != tc.ErrMsg) {
					t.Fatalf("message %q, want %q", ce.Message, tc.ErrMsg)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", tc.Find, err)
			}
			want := make([]string, len(tc.IDs))
			for i, id := range tc.IDs {
				want[i] = fmt.Sprint(id)
			}
			if got := ids(reply.Cursor.FirstBatch); !slices.Equal(got, want) {
				t.Fatalf("%s: got _ids %v, want %v", tc.Find, got, want)
			}
		})
	}
}

// rawFields are a document's fields, for appending to a command.
func rawFields(t *testing.T, doc bson.Raw) bson.D {
	t.Helper()
	var d bson.D
	if err := bson.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestFindKeyRangeExplainAndView: explain shows a min/max scan as MongoDB
// shows a simple range, an IXSCAN without field bounds; a find on a view
// refuses min and max as its aggregation would.
func TestFindKeyRangeExplainAndView(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database(testDB)
	ctx := context.Background()
	coll := db.Collection("keyrange_explain")
	if _, err := coll.InsertMany(ctx, keyRangeSets["grid"]); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	var out bson.Raw
	err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: coll.Name()},
		{Key: "hint", Value: "a_1"}, {Key: "min", Value: bson.D{{Key: "a", Value: 2}}}}}, {Key: "verbosity", Value: "executionStats"}}).Decode(&out)
	if err != nil {
		t.Fatal(err)
	}
	plan := out.Lookup("queryPlanner", "winningPlan")
	ixscan := plan.Document().Lookup("inputStage")
	if stage := ixscan.Document().Lookup("stage").StringValue(); stage != "IXSCAN" {
		t.Fatalf("winning plan %s: want FETCH over IXSCAN", plan)
	}
	if bounds := ixscan.Document().Lookup("indexBounds").Document(); len(bounds) != 5 {
		t.Fatalf("indexBounds %s, want {} as MongoDB shows a simple range", bounds)
	}
	if n := out.Lookup("executionStats", "nReturned").AsInt64(); n != 6 {
		t.Fatalf("nReturned %d, want 6", n)
	}
	// An index filter of the query's shape drops the hint, as in MongoDB:
	// min then has no hint.
	minA := bson.D{{Key: "find", Value: coll.Name()}, {Key: "filter", Value: bson.D{{Key: "b", Value: 1}}}, {Key: "hint", Value: "a_1"}, {Key: "min", Value: bson.D{{Key: "a", Value: 2}}}}
	if err := db.RunCommand(ctx, minA).Err(); err != nil {
		t.Fatal(err)
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "planCacheSetFilter", Value: coll.Name()}, {Key: "query", Value: bson.D{{Key: "b", Value: 1}}}, {Key: "indexes", Value: bson.A{"a_1"}}}).Err(); err != nil {
		t.Fatal(err)
	}
	requireCode(t, db.RunCommand(ctx, minA).Err(), 51173, "Location51173")
	if err := db.CreateView(ctx, "keyrange_view", coll.Name(), mongo.Pipeline{}); err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"min", "max"} {
		err := db.RunCommand(ctx, bson.D{{Key: "find", Value: "keyrange_view"}, {Key: "hint", Value: "a_1"},
			{Key: field, Value: bson.D{{Key: "a", Value: 2}}}}).Err()
		requireCode(t, err, 168, "InvalidPipelineOperator")
	}
	err = db.RunCommand(ctx, bson.D{{Key: "find", Value: "keyrange_view"}, {Key: "readOnce", Value: true}}).Err()
	requireCode(t, err, 168, "InvalidPipelineOperator")
	// The oplog has no index to bound.
	local := db.Client().Database("local")
	for _, tc := range []struct {
		hint any
		code int
	}{{nil, 51173}, {bson.D{{Key: "$natural", Value: 1}}, 291}} {
		find := bson.D{{Key: "find", Value: "oplog.rs"}, {Key: "min", Value: bson.D{{Key: "ts", Value: 1}}}}
		if tc.hint != nil {
			find = append(find, bson.E{Key: "hint", Value: tc.hint})
		}
		requireCode(t, local.RunCommand(ctx, find).Err(), tc.code, "")
	}
}
