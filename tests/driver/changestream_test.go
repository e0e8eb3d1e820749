package driver_test

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/internal/storage/testkv"
)

// startStreams starts a replica set member for change streams, which
// read the oplog only the Pebble store keeps.
func startStreams(t *testing.T) *mongo.Client {
	t.Helper()
	testkv.SkipOnTiKV(t, "change streams read the oplog, which only the Pebble store keeps")
	return startReplSet(t)
}

// nextEvent reads the stream's next event, failing after a few seconds.
func nextEvent(t *testing.T, cs *mongo.ChangeStream) bson.Raw {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if !cs.Next(ctx) {
		t.Fatalf("no event: %v", cs.Err())
	}
	return append(bson.Raw(nil), cs.Current...)
}

func TestChangeStreamCollectionEvents(t *testing.T) {
	client := startStreams(t)
	ctx := context.Background()
	coll := client.Database(testDB).Collection("cs")
	cs, err := coll.Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetFullDocument(options.UpdateLookup))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(ctx)
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}, {Key: "arr", Value: bson.A{1, 2, 3}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "b", Value: 2}}}, {Key: "$unset", Value: bson.D{{Key: "a", Value: ""}}}, {Key: "$pop", Value: bson.D{{Key: "arr", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.ReplaceOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "c", Value: 3}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := coll.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"insert", "update", "replace", "delete", "drop", "invalidate"} {
		ev := nextEvent(t, cs)
		t.Logf("%s", ev)
		if got := ev.Lookup("operationType").StringValue(); got != want {
			t.Fatalf("event %s, want %s", got, want)
		}
	}
}
