package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/internal/playground"
)

// TestPlayground: three frontends over one mock cluster see each other's
// writes, and $inc through all three loses nothing.
func TestPlayground(t *testing.T) {
	pg, err := playground.Start("127.0.0.1", 0, 3, 3, 20, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var colls []*mongo.Collection
	for _, u := range pg.URIs() {
		c, err := mongo.Connect(options.Client().ApplyURI(u))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Disconnect(ctx)
		colls = append(colls, c.Database("pg").Collection("c"))
	}
	if _, err := colls[0].InsertOne(ctx, bson.D{{Key: "_id", Value: "n"}, {Key: "n", Value: 0}}); err != nil {
		t.Fatal(err)
	}
	for i, c := range colls {
		if n, err := c.CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
			t.Fatalf("frontend %d counts %d (%v) after an insert through frontend 0", i, n, err)
		}
	}
	const each = 20
	var wg sync.WaitGroup
	errs := make(chan error, len(colls))
	for _, c := range colls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if _, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: "n"}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var got struct{ N int }
	for i, c := range colls {
		if err := c.FindOne(ctx, bson.D{}).Decode(&got); err != nil || got.N != each*len(colls) {
			t.Fatalf("frontend %d reads n=%d (%v), want %d", i, got.N, err, each*len(colls))
		}
	}
	// Enough documents to split into several regions.
	docs := make([]any, 200)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: fmt.Sprint(i)}}
	}
	if _, err := colls[1].InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if err := pg.Cluster.SplitFull(pg.Splitter, 20); err != nil {
		t.Fatal(err)
	}
	if n := pg.Cluster.Regions(); n < 5 {
		t.Fatalf("%d regions", n)
	}
	if n, err := colls[2].CountDocuments(ctx, bson.D{}); err != nil || n != 201 {
		t.Fatalf("frontend 2 counts %d (%v), want 201", n, err)
	}
}
