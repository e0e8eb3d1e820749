package driver_test

import (
	"context"
	"strconv"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestEmptyTimestamps: MongoDB fills each top-level Timestamp(0, 0) but
// _id's with a new cluster time in inserted and replacement documents,
// and leaves those of update operators, nested ones and any with
// bypassEmptyTsReplacement as they are.
func TestEmptyTimestamps(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	coll := db.Collection("emptyts")
	zero := bson.Timestamp{}
	doc := func(id any) bson.D {
		return bson.D{{Key: "_id", Value: id}, {Key: "a", Value: zero}, {Key: "n", Value: bson.D{{Key: "b", Value: zero}}}, {Key: "c", Value: zero}}
	}
	run := func(cmd bson.D) {
		t.Helper()
		if err := db.RunCommand(ctx, cmd).Err(); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
	}
	if _, err := coll.InsertOne(ctx, doc(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertOne(ctx, doc(zero)); err != nil {
		t.Fatal(err)
	}
	run(bson.D{{Key: "insert", Value: coll.Name()}, {Key: "documents", Value: bson.A{doc(2)}}, {Key: "bypassEmptyTsReplacement", Value: true}})
	for _, id := range []int{3, 4, 5, 6, 7} {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: id}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := coll.ReplaceOne(ctx, bson.D{{Key: "_id", Value: 3}}, doc(3)); err != nil {
		t.Fatal(err)
	}
	run(bson.D{{Key: "update", Value: coll.Name()}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 4}}}, {Key: "u", Value: doc(4)}}}},
		{Key: "bypassEmptyTsReplacement", Value: true}})
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 5}}, bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: zero}}}}); err != nil {
		t.Fatal(err)
	}
	if err := coll.FindOneAndReplace(ctx, bson.D{{Key: "_id", Value: 6}}, doc(6)).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.ReplaceOne(ctx, bson.D{{Key: "_id", Value: 8}}, doc(8), options.Replace().SetUpsert(true)); err != nil {
		t.Fatal(err)
	}
	run(bson.D{{Key: "findAndModify", Value: coll.Name()}, {Key: "query", Value: bson.D{{Key: "_id", Value: 7}}}, {Key: "update", Value: doc(7)},
		{Key: "bypassEmptyTsReplacement", Value: true}})
	filled := map[string]bool{"1": true, "_id": true, "3": true, "6": true, "8": true}
	ts := func(v bson.RawValue) bson.Timestamp {
		t, i, _ := v.TimestampOK()
		return bson.Timestamp{T: t, I: i}
	}
	for _, d := range findAll(t, coll, bson.D{}) {
		id := d.Lookup("_id")
		n, _ := id.AsInt64OK()
		key := strconv.FormatInt(n, 10)
		if id.Type == bson.TypeTimestamp {
			key = "_id"
			if !ts(id).IsZero() {
				t.Errorf("_id filled: %s", d)
			}
		}
		if !ts(d.Lookup("n", "b")).IsZero() {
			t.Errorf("%s: nested timestamp filled: %s", key, d)
		}
		a, c := ts(d.Lookup("a")), ts(d.Lookup("c"))
		if filled[key] != (!a.IsZero() && a.Before(c)) || !filled[key] && !c.IsZero() {
			t.Errorf("%s: filled %v, want %v: %s", key, !a.IsZero(), filled[key], d)
		}
	}
}
