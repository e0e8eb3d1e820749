package driver_test

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/internal/instance"
)

// TestShutdownAnswersInFlightOperations closes the server while a getMore
// is waiting on an awaitData cursor: the operation still gets its reply
// before its connection is closed, as MongoDB lets running operations
// finish on shutdown.
func TestShutdownAnswersInFlightOperations(t *testing.T) {
	in, err := instance.Start(defaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	client := dial(t, in, options.Client().SetServerSelectionTimeout(time.Second))
	ctx := context.Background()
	db := client.Database(testDB)
	if err := db.CreateCollection(ctx, "inflight", options.CreateCollection().SetCapped(true).SetSizeInBytes(1<<20)); err != nil {
		t.Fatal(err)
	}
	coll := db.Collection("inflight")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	cur, err := coll.Find(ctx, bson.D{}, options.Find().SetCursorType(options.TailableAwait).SetMaxAwaitTime(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if !cur.TryNext(ctx) {
		t.Fatalf("first batch: %v", cur.Err())
	}
	done := make(chan error, 1)
	go func() {
		cur.TryNext(ctx) // a getMore that waits up to a second
		done <- cur.Err()
	}()
	time.Sleep(300 * time.Millisecond)
	closed := make(chan error, 1)
	go func() { closed <- in.Close(ctx) }()
	if err := <-done; err != nil {
		t.Errorf("the getMore running at shutdown: %v, want its reply", err)
	}
	if err := <-closed; err != nil {
		t.Errorf("close: %v", err)
	}
	_ = client.Disconnect(ctx)
}
