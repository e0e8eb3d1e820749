package driver_test

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestCurrentDateTimestamps: every timestamp $currentDate sets is a new
// cluster time (MongoDB ticks its clock for each field of each document,
// current_date_node.cpp), so they are unique and increase: within a
// document, across the documents of a multi-update and across updates.
func TestCurrentDateTimestamps(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	coll := client.Database(testDB).Collection("currentdate_ts")
	if _, err := coll.InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 2}}}); err != nil {
		t.Fatal(err)
	}
	ts := bson.D{{Key: "$type", Value: "timestamp"}}
	if _, err := coll.UpdateMany(ctx, bson.D{}, bson.D{{Key: "$currentDate", Value: bson.D{{Key: "u", Value: ts}, {Key: "t", Value: ts}}}}); err != nil {
		t.Fatal(err)
	}
	var after bson.Raw
	err := coll.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$currentDate", Value: bson.D{{Key: "v", Value: ts}}}},
		options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&after)
	if err != nil {
		t.Fatal(err)
	}
	stamp := func(doc bson.Raw, f string) bson.Timestamp {
		t.Helper()
		s, i, ok := doc.Lookup(f).TimestampOK()
		if !ok {
			t.Fatalf("%s of %v is not a timestamp", f, doc)
		}
		return bson.Timestamp{T: s, I: i}
	}
	var doc2 bson.Raw
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: 2}}).Decode(&doc2); err != nil {
		t.Fatal(err)
	}
	seen := map[bson.Timestamp]string{}
	var last bson.Timestamp
	for _, d := range []bson.Raw{after, doc2} {
		for _, f := range []string{"t", "u"} {
			v := stamp(d, f)
			if prev, ok := seen[v]; ok {
				t.Errorf("%s of %v repeats %s: %v", f, d, prev, v)
			}
			seen[v] = f
			if v.After(last) {
				last = v
			}
		}
		if !stamp(d, "u").After(stamp(d, "t")) {
			t.Errorf("%v: u is not after t", d)
		}
	}
	if v := stamp(after, "v"); !v.After(last) {
		t.Errorf("the later update's %v is not after %v", v, last)
	}
}
