package driver_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// TestPipelineUpdates checks updates written as aggregation pipelines
// (MongoDB 4.2+): the stages see the document, the _id is kept, stages
// other than $set/$unset/$project/$replaceRoot/$replaceWith/$addFields are
// refused, and changing _id fails with 66.
func TestPipelineUpdates(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	coll := client.Database(testDB).Collection("pipe")
	tests := []struct {
		name     string
		doc      string
		pipeline string
		want     string
		code     int
	}{
		{"computed field", `{"_id": 1, "a": 2, "b": 3}`, `[{"$set": {"s": {"$add": ["$a", "$b"]}}}]`, `{"_id": 1, "a": 2, "b": 3, "s": 5}`, 0},
		{"unset then set", `{"_id": 1, "a": 2, "b": 3}`, `[{"$unset": "b"}, {"$set": {"c": "$a"}}]`, `{"_id": 1, "a": 2, "c": 2}`, 0},
		{"replaceWith keeps _id", `{"_id": 1, "in": {"x": 1}}`, `[{"$replaceWith": "$in"}]`, `{"_id": 1, "x": 1}`, 0},
		{"project", `{"_id": 1, "a": 1, "b": 2}`, `[{"$project": {"b": 1}}]`, `{"_id": 1, "b": 2}`, 0},
		{"conditional", `{"_id": 1, "qty": 5}`, `[{"$set": {"low": {"$lt": ["$qty", 10]}}}]`, `{"_id": 1, "qty": 5, "low": true}`, 0},
		{"$match refused", `{"_id": 1}`, `[{"$match": {}}]`, ``, 72},
		{"_id change refused", `{"_id": 1}`, `[{"$set": {"_id": 2}}]`, ``, 66},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := coll.DeleteMany(ctx, bson.D{}); err != nil {
				t.Fatal(err)
			}
			if _, err := coll.InsertOne(ctx, mustExt(t, tc.doc)); err != nil {
				t.Fatal(err)
			}
			var stages bson.A
			if err := bson.UnmarshalExtJSON([]byte(`{"p": `+tc.pipeline+`}`), false, &struct {
				P *bson.A `bson:"p"`
			}{&stages}); err != nil {
				t.Fatal(err)
			}
			_, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, mongo.Pipeline(toPipeline(stages)))
			if tc.code != 0 {
				if serverCode(err) != tc.code {
					t.Fatalf("got %v, want code %d", err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := coll.FindOne(ctx, bson.D{}).Raw()
			if err != nil {
				t.Fatal(err)
			}
			if want := mustExt(t, tc.want); string(got) != string(want) {
				t.Fatalf("got %s, want %s", got, want)
			}
		})
	}
}

// TestPipelineUpdateConstantFailsWhenEvaluated: MongoDB parses an update's
// pipeline and never optimizes it (PipelineExecutor), so a constant
// subexpression that fails fails the documents it is evaluated on: an
// update or findAndModify matching none succeeds; a parse error fails it
// still.
func TestPipelineUpdateConstantFailsWhenEvaluated(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	coll := client.Database(testDB).Collection("pipe_const")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	failing := mongo.Pipeline{{{Key: "$set", Value: bson.D{{Key: "r", Value: bson.D{{Key: "$abs", Value: "x"}}}}}}}
	res, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 2}}, failing)
	if err != nil || res.MatchedCount != 0 {
		t.Fatalf("no match: %v, %v", res, err)
	}
	if err := coll.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: 2}}, failing).Err(); err != mongo.ErrNoDocuments {
		t.Fatalf("findAndModify matching nothing: %v", err)
	}
	var we mongo.WriteException
	_, err = coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, failing)
	if !errors.As(err, &we) || len(we.WriteErrors) != 1 || we.WriteErrors[0].Code != 28765 || we.WriteErrors[0].Message != "$abs only supports numeric types, not string" {
		t.Fatalf("match: %v", err)
	}
	unknown := mongo.Pipeline{{{Key: "$set", Value: bson.D{{Key: "r", Value: bson.D{{Key: "$bad", Value: 1}}}}}}}
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 2}}, unknown); serverCode(err) != 168 {
		t.Fatalf("parse error: %v", err)
	}
}

func mustExt(t *testing.T, s string) bson.Raw {
	t.Helper()
	var d bson.Raw
	if err := bson.UnmarshalExtJSON([]byte(s), false, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

func toPipeline(stages bson.A) []bson.D {
	out := make([]bson.D, len(stages))
	for i, s := range stages {
		out[i] = s.(bson.D)
	}
	return out
}

// TestPipelineUpdateApplyOplogUpdate: an update pipeline's
// $_internalApplyOplogUpdate applies a change stream's
// rawUpdateDescription to a copy of the document
// (jstests/change_streams/show_raw_update_description.js).
func TestPipelineUpdateApplyOplogUpdate(t *testing.T) {
	client := connect(t, startInstance(t, defaultConfig()))
	ctx := context.Background()
	coll := client.Database(testDB).Collection("applyoplogupdate")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 8}, {Key: "a", Value: 2}, {Key: "b", Value: bson.D{{Key: "c", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	raw := extJSON(t, []byte(`{"$v": 2, "diff": {"d": {"a": false}, "sb": {"i": {"d": 2}}}}`))
	pipe := bson.A{bson.D{{Key: "$_internalApplyOplogUpdate", Value: bson.D{{Key: "oplogUpdate", Value: raw}}}}}
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 8}}, pipe); err != nil {
		t.Fatal(err)
	}
	got, err := coll.FindOne(ctx, bson.D{}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if want := extJSON(t, []byte(`{"_id": 8, "b": {"c": 1, "d": 2}}`)); !bytes.Equal(got, want) {
		t.Errorf("got %s, want %s", got, want)
	}
}

// TestMergePipelineDollarFields: $merge's whenMatched pipeline is an update
// pipeline, whose result may have top-level fields starting with '$', as
// an update command's pipeline may (field_name_validation.js; MongoDB's
// PipelineExecutor); whenMatched merge ($set of the fields) and replace (a
// replacement) still refuse them with DollarPrefixedFieldName.
func TestMergePipelineDollarFields(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	src, target := db.Collection("mergedollar_src"), db.Collection("mergedollar_target")
	if _, err := src.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "$a", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name        string
		whenMatched any
		want        string
		code        int
	}{
		{"pipeline", bson.A{bson.D{{Key: "$replaceWith", Value: bson.D{{Key: "$literal", Value: bson.D{{Key: "_id", Value: 1}, {Key: "$q", Value: 1}}}}}}}, `{"_id": 1, "$q": 1}`, 0},
		{"pipeline, $$new", bson.A{bson.D{{Key: "$replaceWith", Value: "$$new"}}}, `{"_id": 1, "$a": 1}`, 0},
		{"merge", "merge", ``, 52},
		{"replace", "replace", ``, 52},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := target.DeleteMany(ctx, bson.D{}); err != nil {
				t.Fatal(err)
			}
			if _, err := target.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "b", Value: 2}}); err != nil {
				t.Fatal(err)
			}
			merge := bson.D{{Key: "$merge", Value: bson.D{{Key: "into", Value: target.Name()}, {Key: "whenMatched", Value: tc.whenMatched}}}}
			cur, err := src.Aggregate(ctx, mongo.Pipeline{merge})
			if err == nil {
				err = cur.Close(ctx)
			}
			if tc.code != 0 {
				if serverCode(err) != tc.code {
					t.Fatalf("got %v, want error %d", err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := target.FindOne(ctx, bson.D{}).Raw()
			if err != nil {
				t.Fatal(err)
			}
			if want := mustExt(t, tc.want); !bytes.Equal(got, want) {
				t.Fatalf("stored %s, want %s", got, want)
			}
		})
	}
}
