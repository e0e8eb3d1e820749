package driver_test

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestClusterTimeVariable: on a replica set member $$CLUSTER_TIME is the
// cluster time when the operation started, the same timestamp for every
// document and stage, in aggregations, let, find's $expr and pipeline
// updates; a standalone has no cluster clock (51144 when evaluated).
func TestClusterTimeVariable(t *testing.T) {
	ctx := context.Background()
	cfg := defaultConfig()
	cfg.ReplSetName = "folio"
	client := dial(t, startInstance(t, cfg))
	coll := client.Database(testDB).Collection("ctvar")
	res := client.Database(testDB).RunCommand(ctx, bson.D{{Key: "insert", Value: "ctvar"},
		{Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 2}}, bson.D{{Key: "_id", Value: 3}}}}})
	var ins bson.Raw
	if err := res.Decode(&ins); err != nil {
		t.Fatal(err)
	}
	insT, insI := ins.Lookup("operationTime").Timestamp()
	inserted := bson.Timestamp{T: insT, I: insI}

	cur, err := coll.Aggregate(ctx, mongo.Pipeline{
		{{Key: "$addFields", Value: bson.D{{Key: "t1", Value: "$$CLUSTER_TIME"}}}},
		{{Key: "$sort", Value: bson.D{{Key: "_id", Value: -1}}}},
		{{Key: "$addFields", Value: bson.D{{Key: "t2", Value: "$$CLUSTER_TIME"}, {Key: "l", Value: "$$c"}}}},
	}, options.Aggregate().SetLet(bson.D{{Key: "c", Value: "$$CLUSTER_TIME"}}))
	if err != nil {
		t.Fatal(err)
	}
	var docs []bson.Raw
	if err := cur.All(ctx, &docs); err != nil {
		t.Fatal(err)
	}
	if len(docs) != 3 {
		t.Fatalf("got %d documents", len(docs))
	}
	first := docs[0].Lookup("t1")
	if first.Type != bson.TypeTimestamp {
		t.Fatalf("$$CLUSTER_TIME is %s, want a timestamp", first.Type)
	}
	ft, fi := first.Timestamp()
	if (bson.Timestamp{T: ft, I: fi}).Compare(inserted) < 0 {
		t.Fatalf("$$CLUSTER_TIME %v is before the insert's operationTime %v", first, inserted)
	}
	for _, d := range docs {
		for _, f := range []string{"t1", "t2", "l"} {
			if !d.Lookup(f).Equal(first) {
				t.Fatalf("%s is %v in %v, want %v everywhere", f, d.Lookup(f), d, first)
			}
		}
	}

	n, err := coll.CountDocuments(ctx, bson.D{{Key: "$expr", Value: bson.D{{Key: "$gt", Value: bson.A{"$$CLUSTER_TIME", bson.Timestamp{}}}}}})
	if err != nil || n != 3 {
		t.Fatalf("find with $expr on $$CLUSTER_TIME: %d, %v", n, err)
	}
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, mongo.Pipeline{{{Key: "$set", Value: bson.D{{Key: "at", Value: "$$CLUSTER_TIME"}}}}}); err != nil {
		t.Fatal(err)
	}
	var doc bson.Raw
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: 1}}).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if at := doc.Lookup("at"); at.Type != bson.TypeTimestamp || at.Equal(bson.RawValue{Type: bson.TypeTimestamp, Value: make([]byte, 8)}) {
		t.Fatalf("a pipeline update stored %v", at)
	}

	// Two statements of one command read one clock.
	both := bson.A{}
	for _, id := range []int{2, 3} {
		both = append(both, bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: id}}},
			{Key: "u", Value: bson.A{bson.D{{Key: "$set", Value: bson.D{{Key: "ct", Value: "$$CLUSTER_TIME"}, {Key: "now", Value: "$$NOW"}}}}}}})
	}
	if err := client.Database(testDB).RunCommand(ctx, bson.D{{Key: "update", Value: "ctvar"}, {Key: "updates", Value: both}}).Err(); err != nil {
		t.Fatal(err)
	}
	var two, three bson.Raw
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: 2}}).Decode(&two); err != nil {
		t.Fatal(err)
	}
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: 3}}).Decode(&three); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"ct", "now"} {
		if !two.Lookup(f).Equal(three.Lookup(f)) || two.Lookup(f).Type == 0 {
			t.Fatalf("the statements of one update read %s as %v and %v", f, two.Lookup(f), three.Lookup(f))
		}
	}

	standalone := dial(t, startInstance(t, defaultConfig()))
	_, err = standalone.Database(testDB).Aggregate(ctx, mongo.Pipeline{
		{{Key: "$documents", Value: bson.A{bson.D{}}}},
		{{Key: "$project", Value: bson.D{{Key: "t", Value: "$$CLUSTER_TIME"}}}},
	})
	requireCode(t, err, 51144, "Location51144")
}
