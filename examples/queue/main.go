// Command queue shows a FIFO work queue: items carry a state and a creation
// time, a compound index on both finds the oldest unprocessed item, and
// findAndModify claims it atomically — on a standard collection (where
// processed items can also be removed as they are claimed) and on a capped
// collection (which drops the oldest items when full).
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/examples/internal/cookbook"
)

func main() { cookbook.Main("queue", run) }

// States of a queue item.
const (
	unprocessed int32 = 0
	processed   int32 = 1
)

// item is one queued message.
type item struct {
	State   int32     `bson:"state"`
	Created time.Time `bson:"created"`
	Message string    `bson:"message"`
}

// next is the findAndModify that claims the oldest unprocessed item.
var (
	nextFilter = bson.M{"state": unprocessed}
	nextSort   = bson.D{{Key: "created", Value: 1}}
)

func run(ctx context.Context, k *cookbook.Kitchen) {
	standard(ctx, k)
	concurrentWorkers(ctx, k)
	capped(ctx, k)
}

// fill creates the {state, created} index and enqueues messages, the first
// being the oldest.
func fill(ctx context.Context, k *cookbook.Kitchen, q *mongo.Collection, messages ...string) {
	_, err := q.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "state", Value: 1}, {Key: "created", Value: 1}}})
	k.OK(err, "createIndex {state: 1, created: 1}")
	start := time.Date(2011, 2, 24, 16, 29, 36, 0, time.UTC)
	// Insert newest first so that _id order is not FIFO order: the sort
	// on created is what makes the queue FIFO.
	for i := len(messages) - 1; i >= 0; i-- {
		_, err := q.InsertOne(ctx, item{State: unprocessed, Created: start.Add(time.Duration(i) * time.Second), Message: messages[i]})
		k.OK(err, "enqueue "+messages[i])
	}
}

// drain claims items one by one until none is left and returns their
// messages in claim order. findAndModify returns each item as it was before
// the update, so a claimed item not in the unprocessed state is a failure.
func drain(ctx context.Context, k *cookbook.Kitchen, q *mongo.Collection) []string {
	var got []string
	for {
		var it item
		err := q.FindOneAndUpdate(ctx, nextFilter, bson.M{"$set": bson.M{"state": processed}},
			options.FindOneAndUpdate().SetSort(nextSort)).Decode(&it)
		if errors.Is(err, mongo.ErrNoDocuments) || !k.OK(err, "findAndModify claim") {
			return got
		}
		if it.State != unprocessed {
			k.Check(false, "claimed %q is returned before the update (state %d)", it.Message, it.State)
		}
		got = append(got, it.Message)
	}
}

func standard(ctx context.Context, k *cookbook.Kitchen) {
	q := k.DB.Collection("queue")
	k.Step("standard collection: claim the oldest unprocessed item with findAndModify")
	fill(ctx, k, q, "hello world", "second", "third")
	k.UsesIndex(ctx, q, nextFilter, nextSort, "state_1_created_1")
	got := drain(ctx, k, q)
	k.Check(fmt.Sprint(got) == "[hello world second third]", "items come out oldest first (got %v)", got)
	n, err := q.CountDocuments(ctx, bson.M{"state": processed})
	if k.OK(err, "count processed") {
		k.Check(n == 3, "all 3 items are marked processed (got %d)", n)
	}

	k.Step("standard collection: claim and remove in one step with {remove: true}")
	fill(ctx, k, q, "fourth", "fifth")
	var it item
	err = q.FindOneAndDelete(ctx, nextFilter, options.FindOneAndDelete().SetSort(nextSort)).Decode(&it)
	if k.OK(err, "findAndModify remove") {
		k.Check(it.Message == "fourth", "the oldest item is removed and returned (got %q)", it.Message)
	}
	n, err = q.CountDocuments(ctx, bson.M{"message": "fourth"})
	if k.OK(err, "count removed") {
		k.Check(n == 0, "the removed item is gone (got %d)", n)
	}
}

// concurrentWorkers shows that competing findAndModify calls never claim
// the same item.
func concurrentWorkers(ctx context.Context, k *cookbook.Kitchen) {
	q := k.DB.Collection("busy_queue")
	k.Step("four workers drain 40 items concurrently: each item is claimed exactly once")
	var messages []string
	for i := range 40 {
		messages = append(messages, fmt.Sprintf("job %02d", i))
	}
	fill(ctx, k, q, messages...)
	var (
		mu      sync.Mutex
		claimed = map[string]int{}
		wg      sync.WaitGroup
	)
	for range 4 {
		wg.Go(func() {
			for _, m := range drain(ctx, k, q) {
				mu.Lock()
				claimed[m]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	twice := 0
	for _, n := range claimed {
		if n > 1 {
			twice++
		}
	}
	k.Check(len(claimed) == 40 && twice == 0, "40 distinct items claimed, none twice (got %d distinct, %d twice)", len(claimed), twice)
}

// capped runs the same queue on a capped collection.
func capped(ctx context.Context, k *cookbook.Kitchen) {
	k.Step("capped collection: same schema, index and findAndModify")
	err := k.DB.CreateCollection(ctx, "capped_queue", options.CreateCollection().SetCapped(true).SetSizeInBytes(1<<20))
	k.OK(err, "create capped collection")
	q := k.DB.Collection("capped_queue")
	fill(ctx, k, q, "alpha", "beta", "gamma")
	k.UsesIndex(ctx, q, nextFilter, nextSort, "state_1_created_1")
	got := drain(ctx, k, q)
	k.Check(fmt.Sprint(got) == "[alpha beta gamma]", "items come out oldest first (got %v)", got)

	k.Step("capped collection: when full, the oldest items are dropped, processed or not")
	err = k.DB.CreateCollection(ctx, "small_queue", options.CreateCollection().SetCapped(true).SetSizeInBytes(4096).SetMaxDocuments(3))
	k.OK(err, "create capped collection with max 3")
	small := k.DB.Collection("small_queue")
	fill(ctx, k, small, "m1", "m2", "m3", "m4", "m5")
	var left []item
	cur, err := small.Find(ctx, bson.M{}, options.Find().SetSort(nextSort))
	if k.OK(err, "find small queue") && k.OK(cur.All(ctx, &left), "read small queue") {
		var names []string
		for _, it := range left {
			names = append(names, it.Message)
		}
		// fill inserts m5 first and m1 last: the three last inserted stay.
		k.Check(fmt.Sprint(names) == "[m1 m2 m3]", "only the 3 most recently inserted items remain, unprocessed m4 and m5 are lost (got %v)", names)
	}
}
