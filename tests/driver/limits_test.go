package driver_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// TestIndexLimit checks MongoDB's limit of 64 indexes per collection, the
// _id index included: the 65th fails with CannotCreateIndex (67) and
// MongoDB's message, and a createIndexes that would pass the limit builds
// none of its indexes.
// https://www.mongodb.com/docs/manual/reference/limits/#mongodb-limit-Number-of-Indexes-per-Collection
func TestIndexLimit(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	coll := db.Collection("many")

	// Two at once that would make 65: refused, and neither is built.
	var specs bson.A
	for i := range 63 {
		specs = append(specs, bson.D{{Key: "key", Value: bson.D{{Key: fmt.Sprintf("f%d", i), Value: 1}}}, {Key: "name", Value: fmt.Sprintf("f%d_1", i)}})
	}
	over := append(append(bson.A{}, specs...), bson.D{{Key: "key", Value: bson.D{{Key: "g", Value: -1.0}}}, {Key: "name", Value: "g"}})
	err := db.RunCommand(ctx, bson.D{{Key: "createIndexes", Value: "many"}, {Key: "indexes", Value: over}}).Err()
	requireCode(t, err, 67, "CannotCreateIndex")
	if want := "add index fails, too many indexes for test.many key:{ g: -1.0 }"; errMsg(err) != want {
		t.Fatalf("message %q, want %q", errMsg(err), want)
	}
	if n := countIndexes(t, coll); n != 1 {
		t.Fatalf("%d indexes after the refused createIndexes, want 1", n)
	}

	if err := db.RunCommand(ctx, bson.D{{Key: "createIndexes", Value: "many"}, {Key: "indexes", Value: specs}}).Err(); err != nil {
		t.Fatalf("63 indexes: %v", err)
	}
	if n := countIndexes(t, coll); n != 64 {
		t.Fatalf("%d indexes, want 64", n)
	}
	_, err = coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "x", Value: 1}, {Key: "y", Value: "hashed"}}})
	requireCode(t, err, 67, "CannotCreateIndex")
	if want := `add index fails, too many indexes for test.many key:{ x: 1, y: "hashed" }`; errMsg(err) != want {
		t.Fatalf("message %q, want %q", errMsg(err), want)
	}
	// An index that exists is still a no-op at the limit.
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "f0", Value: 1}}}); err != nil {
		t.Fatalf("existing index at the limit: %v", err)
	}
	// Dropping one makes room again.
	if err := coll.Indexes().DropOne(ctx, "f5_1"); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "z", Value: 1}}}); err != nil {
		t.Fatalf("index after a drop: %v", err)
	}
}

func countIndexes(t *testing.T, coll *mongo.Collection) int {
	t.Helper()
	specs, err := coll.Indexes().ListSpecifications(context.Background())
	if err != nil {
		var ce mongo.CommandError
		if errors.As(err, &ce) && ce.Code == 26 {
			return 0
		}
		t.Fatal(err)
	}
	return len(specs)
}

func errMsg(err error) string {
	var ce mongo.CommandError
	if errors.As(err, &ce) {
		return ce.Message
	}
	return err.Error()
}

// TestInvalidUTF8Names checks that database and collection names that are
// not valid UTF-8 are refused with InvalidNamespace (73).
func TestInvalidUTF8Names(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	cases := []struct{ db, coll string }{
		{"bad\xffdb", "c"},
		{testDB, "bad\xc3"},
		{testDB, "a\xed\xa0\x80b"}, // an encoded surrogate
	}
	for _, c := range cases {
		_, err := client.Database(c.db).Collection(c.coll).InsertOne(ctx, bson.D{{Key: "x", Value: 1}})
		requireCode(t, err, 73, "InvalidNamespace")
		err = client.Database(c.db).CreateCollection(ctx, c.coll)
		requireCode(t, err, 73, "InvalidNamespace")
	}
	names, err := client.ListDatabaseNames(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if n == "bad\xffdb" {
			t.Fatalf("database with an invalid name was created: %q", names)
		}
	}
}
