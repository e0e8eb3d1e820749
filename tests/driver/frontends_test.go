package driver_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/folio-db/folio/internal/storage/testkv"
)

// startFrontends starts n in-memory Folio servers over one store (several
// frontends of one database) with a short schema lease, and connects a
// client to each.
func startFrontends(t *testing.T, n int) []*mongo.Client {
	t.Helper()
	kvs := testkv.OpenShared(t, n) // closed after the servers: cleanups run last first
	var clients []*mongo.Client
	for i := range n {
		cfg := defaultConfig()
		cfg.Shared, cfg.FrontendID, cfg.SchemaLease = kvs[i], fmt.Sprintf("frontend-%d", i), time.Second
		clients = append(clients, connect(t, startInstance(t, cfg)))
	}
	return clients
}

// TestFrontendsIndexBuildThroughDriver builds an index through one
// frontend while two others insert and update through the driver; then
// validate, run through every frontend, finds the index exactly consistent
// with the documents, and every frontend's plan uses the index.
func TestFrontendsIndexBuildThroughDriver(t *testing.T) {
	clients := startFrontends(t, 3)
	ctx := context.Background()
	colls := make([]*mongo.Collection, len(clients))
	for i, c := range clients {
		colls[i] = c.Database(testDB).Collection("fe")
	}
	var docs []any
	for i := range 2000 {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i % 100}, {Key: "tags", Value: bson.A{i % 7}}})
	}
	if _, err := colls[0].InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var writes atomic.Int64
	for w, coll := range colls[1:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 9))
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				var err error
				if i%2 == 0 {
					_, err = coll.InsertOne(ctx, bson.D{{Key: "_id", Value: fmt.Sprintf("w%d-%d", w, i)}, {Key: "a", Value: rng.IntN(100)}, {Key: "tags", Value: bson.A{rng.IntN(7), rng.IntN(7)}}})
				} else {
					_, err = coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: rng.IntN(2000)}}, bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: rng.IntN(100)}, {Key: "tags", Value: bson.A{rng.IntN(7)}}}}})
				}
				if err != nil {
					t.Error(err)
					return
				}
				writes.Add(1)
			}
		}()
	}
	time.Sleep(50 * time.Millisecond)
	before := writes.Load()
	_, err := colls[0].Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "tags", Value: 1}, {Key: "a", Value: 1}}})
	during := writes.Load() - before
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if during == 0 {
		t.Fatal("no write ran during the build")
	}
	for i, c := range clients {
		var res bson.M
		if err := c.Database(testDB).RunCommand(ctx, bson.D{{Key: "validate", Value: "fe"}, {Key: "full", Value: true}}).Decode(&res); err != nil {
			t.Fatal(err)
		}
		if res["valid"] != true || len(res["errors"].(bson.A)) != 0 {
			t.Errorf("frontend %d: validate %v", i, res)
		}
		var plan bson.M
		cmd := bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "fe"}, {Key: "filter", Value: bson.D{{Key: "tags", Value: 3}, {Key: "a", Value: 5}}}}}}
		if err := c.Database(testDB).RunCommand(ctx, cmd).Decode(&plan); err != nil {
			t.Fatal(err)
		}
		if s := fmt.Sprint(plan["queryPlanner"]); !strings.Contains(s, "IXSCAN") || !strings.Contains(s, "tags_1_a_1") {
			t.Errorf("frontend %d does not plan with the new index: %s", i, s)
		}
	}
}

// TestFrontendsSeeEachOthersCollections creates a collection through one
// frontend and reads and drops it through another.
func TestFrontendsSeeEachOthersCollections(t *testing.T) {
	clients := startFrontends(t, 2)
	ctx := context.Background()
	if _, err := clients[0].Database(testDB).Collection("seen").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	n, err := clients[1].Database(testDB).Collection("seen").CountDocuments(ctx, bson.D{})
	if err != nil || n != 1 {
		t.Fatalf("count through the other frontend: %d, %v", n, err)
	}
	names, err := clients[1].Database(testDB).ListCollectionNames(ctx, bson.D{})
	if err != nil || len(names) != 1 || names[0] != "seen" {
		t.Fatalf("listCollections through the other frontend: %v, %v", names, err)
	}
	if err := clients[1].Database(testDB).Collection("seen").Drop(ctx); err != nil {
		t.Fatal(err)
	}
	// The drop returns once every frontend has loaded it.
	names, err = clients[0].Database(testDB).ListCollectionNames(ctx, bson.D{})
	if err != nil || len(names) != 0 {
		t.Fatalf("listCollections after the drop: %v, %v", names, err)
	}
}
