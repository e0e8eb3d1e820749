package driver_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestConcurrentWritesNotTorn proves that 16 clients inserting distinct
// documents and 16 clients replacing or updating a shared set of documents
// at once lose no insert and never expose a half-applied write: every write
// sets fields a and b to the same value, and readers never see them differ.
func TestConcurrentWritesNotTorn(t *testing.T) {
	const (
		writers   = 16
		perWriter = 30
		shared    = 8
		readers   = 2
		maxReads  = 500
	)
	in := startInstance(t, defaultConfig())
	setup := connect(t, in)
	sharedColl := setup.Database(testDB).Collection("shared")
	for k := range shared {
		if _, err := sharedColl.InsertOne(t.Context(), bson.D{{Key: "_id", Value: int32(k)}, {Key: "a", Value: int32(-1)}, {Key: "b", Value: int32(-1)}}); err != nil {
			t.Fatal(err)
		}
	}
	inserters := make([]*mongo.Collection, writers)
	updaters := make([]*mongo.Collection, writers)
	for i := range writers {
		inserters[i] = connect(t, in).Database(testDB).Collection("inserted")
		updaters[i] = connect(t, in).Database(testDB).Collection("shared")
	}

	var writing, reading sync.WaitGroup
	for i := range writers {
		writing.Go(func() {
			for j := range perWriter {
				if _, err := inserters[i].InsertOne(t.Context(), bson.D{{Key: "_id", Value: fmt.Sprintf("w%02d-%03d", i, j)}, {Key: "w", Value: int32(i)}}); err != nil {
					t.Errorf("inserter %d: %v", i, err)
					return
				}
			}
		})
		writing.Go(func() {
			for j := range perWriter {
				v := int32(i*1000 + j)
				filter := bson.D{{Key: "_id", Value: int32((i + j) % shared)}}
				var err error
				if j%2 == 0 {
					_, err = updaters[i].ReplaceOne(t.Context(), filter, bson.D{{Key: "a", Value: v}, {Key: "b", Value: v}, {Key: "by", Value: int32(i)}})
				} else {
					_, err = updaters[i].UpdateOne(t.Context(), filter, bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: v}, {Key: "b", Value: v}}}})
				}
				if err != nil {
					t.Errorf("updater %d: %v", i, err)
					return
				}
			}
		})
	}
	done := make(chan struct{})
	for r := range readers {
		reader := connect(t, in).Database(testDB).Collection("shared")
		reading.Go(func() {
			for range maxReads {
				select {
				case <-done:
					return
				default:
				}
				cur, err := reader.Find(t.Context(), bson.D{})
				if err != nil {
					t.Errorf("reader %d: %v", r, err)
					return
				}
				var docs []bson.Raw
				if err := cur.All(t.Context(), &docs); err != nil {
					t.Errorf("reader %d: %v", r, err)
					return
				}
				if len(docs) != shared {
					t.Errorf("reader %d saw %d shared documents, want %d", r, len(docs), shared)
				}
				for _, d := range docs {
					if a, b := d.Lookup("a"), d.Lookup("b"); !a.Equal(b) {
						t.Errorf("reader %d saw a torn write: %v", r, d)
					}
				}
			}
		})
	}
	writing.Wait()
	close(done)
	reading.Wait()

	inserted := findAll(t, setup.Database(testDB).Collection("inserted"), bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if len(inserted) != writers*perWriter {
		t.Fatalf("%d documents inserted, want %d", len(inserted), writers*perWriter)
	}
	for i, d := range inserted {
		if want := fmt.Sprintf("w%02d-%03d", i/perWriter, i%perWriter); d.Lookup("_id").StringValue() != want {
			t.Fatalf("document %d has _id %v, want %q", i, d.Lookup("_id"), want)
		}
	}
	for _, d := range findAll(t, sharedColl, bson.D{}) {
		if a := d.Lookup("a"); !a.Equal(d.Lookup("b")) || a.Int32() < 0 {
			t.Errorf("shared document %v: want a == b, written by an updater", d)
		}
	}
}

// TestConcurrentIncrements proves $inc is atomic: 50 clients each
// incrementing one counter 200 times leave it at exactly 10000.
func TestConcurrentIncrements(t *testing.T) {
	const goroutines, perGoroutine = 50, 200
	client, _ := startServer(t)
	coll := client.Database(testDB).Collection("counter")
	if _, err := coll.InsertOne(t.Context(), bson.D{{Key: "_id", Value: "c"}, {Key: "n", Value: int32(0)}}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for range perGoroutine {
				res, err := coll.UpdateOne(t.Context(), bson.D{{Key: "_id", Value: "c"}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: int32(1)}}}})
				if err != nil || res.ModifiedCount != 1 {
					t.Errorf("goroutine %d: $inc modified %v, %v; want 1", g, res, err)
					return
				}
			}
		})
	}
	wg.Wait()
	got, err := coll.FindOne(t.Context(), bson.D{{Key: "_id", Value: "c"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := got.Lookup("n").Int32OK(); !ok || n != goroutines*perGoroutine {
		t.Fatalf("counter = %v, want %d", got.Lookup("n"), goroutines*perGoroutine)
	}
}

// TestConcurrentQueuePop proves findOneAndUpdate claims atomically: 8
// workers popping a 10000-item queue with {state: "ready"} → "taken" each get
// distinct items, every item is delivered exactly once, and the stored
// claimant is the worker that got it. The queue has the index a queue needs,
// {state: 1, _id: 1}, so pops do not scan the items already taken.
func TestConcurrentQueuePop(t *testing.T) {
	const items, workers = 10000, 8
	client, _ := startServer(t)
	coll := client.Database(testDB).Collection("queue")
	if _, err := coll.Indexes().CreateOne(t.Context(), mongo.IndexModel{Keys: bson.D{{Key: "state", Value: 1}, {Key: "_id", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	docs := make([]any, items)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: int32(i)}, {Key: "state", Value: "ready"}}
	}
	if _, err := coll.InsertMany(t.Context(), docs); err != nil {
		t.Fatal(err)
	}
	claimed := make([][]int32, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			opts := options.FindOneAndUpdate().SetSort(bson.D{{Key: "_id", Value: 1}}).SetReturnDocument(options.After)
			update := bson.D{{Key: "$set", Value: bson.D{{Key: "state", Value: "taken"}, {Key: "by", Value: int32(w)}}}}
			for range items + 1 {
				got, err := coll.FindOneAndUpdate(t.Context(), bson.D{{Key: "state", Value: "ready"}}, update, opts).Raw()
				if errors.Is(err, mongo.ErrNoDocuments) {
					return
				}
				if err != nil {
					t.Errorf("worker %d: %v", w, err)
					return
				}
				if by := got.Lookup("by").Int32(); by != int32(w) {
					t.Errorf("worker %d got %v claimed by %d", w, got, by)
				}
				claimed[w] = append(claimed[w], got.Lookup("_id").Int32())
			}
			t.Errorf("worker %d popped more items than the queue holds", w)
		})
	}
	wg.Wait()

	var all []int32
	for w, got := range claimed {
		if !slices.IsSorted(got) {
			t.Errorf("worker %d popped out of _id order", w)
		}
		all = append(all, got...)
	}
	slices.Sort(all)
	if len(all) != items {
		t.Fatalf("%d items delivered, want %d", len(all), items)
	}
	for i, id := range all {
		if id != int32(i) {
			t.Fatalf("item %d delivered twice or item %d never", id, i)
		}
	}
	for _, d := range findAll(t, coll, bson.D{}) {
		id := d.Lookup("_id").Int32()
		by := d.Lookup("by").Int32()
		if d.Lookup("state").StringValue() != "taken" || !slices.Contains(claimed[by], id) {
			t.Fatalf("stored %v does not match the worker that popped it", d)
		}
	}
}
