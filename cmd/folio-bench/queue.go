package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// queue is a job queue (the seed application's): jobs are pushed as
// {state: "ready", created}, and workers pop the oldest ready job with a
// findAndModify sorted by created that marks it taken. Every popped _id is
// remembered, to check that no job is delivered twice.
type queue struct {
	cfg     *Config
	popOnly bool
	coll    *mongo.Collection
	t       *Target
	next    counter   // the next job _id
	popped  [][]int64 // the job ids each client popped
	base    time.Time
}

// newQueue returns the constructor of the mixed push/pop queue workload, or
// of the pop-only one (which drains -records preloaded jobs).
func newQueue(popOnly bool) func(*Config) Workload {
	return func(cfg *Config) Workload { return &queue{cfg: cfg, popOnly: popOnly} }
}

// Setup creates the {state: 1, created: 1} index and preloads cfg.Records
// ready jobs.
func (q *queue) Setup(ctx context.Context, t *Target) error {
	q.coll, q.t = t.DB.Collection("jobs"), t
	q.popped = make([][]int64, q.cfg.Clients)
	q.base = time.Now().Add(-time.Hour)
	q.next.set(q.cfg.Records)
	if _, err := q.coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "state", Value: 1}, {Key: "created", Value: 1}}}); err != nil {
		return err
	}
	return parallelLoad(ctx, q.cfg.Clients, q.cfg.Records, func(ctx context.Context, _ *rand.Rand, from, to int64) error {
		docs := make([]any, 0, to-from)
		for i := from; i < to; i++ {
			docs = append(docs, q.job(i, q.base.Add(time.Duration(i)*time.Millisecond)))
		}
		_, err := q.coll.InsertMany(ctx, docs)
		return err
	})
}

// job is a ready job.
func (q *queue) job(id int64, created time.Time) bson.D {
	return bson.D{
		{Key: "_id", Value: id}, {Key: "state", Value: "ready"}, {Key: "created", Value: created},
		{Key: "kind", Value: "email"}, {Key: "payload", Value: bson.D{{Key: "to", Value: fmt.Sprintf("user%d@example.com", id)}, {Key: "template", Value: "welcome"}}},
	}
}

// Worker pushes and pops at random (mixed), or only pops (pop-only).
func (q *queue) Worker(i int) Worker {
	r := rand.New(rand.NewPCG(q.cfg.Seed, uint64(i)+1))
	pop := options.FindOneAndUpdate().
		SetSort(bson.D{{Key: "created", Value: 1}}).
		SetProjection(bson.D{{Key: "_id", Value: 1}})
	filter := bson.D{{Key: "state", Value: "ready"}}
	coll := q.t.Coll(i, "jobs")
	return func(ctx context.Context) (Result, error) {
		if !q.popOnly && r.IntN(2) == 0 {
			_, err := coll.InsertOne(ctx, q.job(q.next.add(), time.Now()))
			return Result{"push", 1}, err
		}
		upd := bson.D{{Key: "$set", Value: bson.D{{Key: "state", Value: "taken"}, {Key: "worker", Value: i}, {Key: "taken", Value: time.Now()}}}}
		var got struct {
			ID int64 `bson:"_id"`
		}
		err := coll.FindOneAndUpdate(ctx, filter, upd, pop).Decode(&got)
		switch {
		case errors.Is(err, mongo.ErrNoDocuments) && q.popOnly:
			return Result{}, errExhausted
		case errors.Is(err, mongo.ErrNoDocuments):
			return Result{"pop-empty", 1}, nil
		case err != nil:
			return Result{"pop", 1}, err
		}
		q.popped[i] = append(q.popped[i], got.ID)
		return Result{"pop", 1}, nil
	}
}

// Finish checks that no job was popped twice and that the server marked
// exactly the popped jobs taken.
func (q *queue) Finish(ctx context.Context) ([]string, error) {
	seen := map[int64]bool{}
	pops, dups := 0, 0
	for _, ids := range q.popped {
		for _, id := range ids {
			pops++
			if seen[id] {
				dups++
			}
			seen[id] = true
		}
	}
	taken, err := q.coll.CountDocuments(ctx, bson.D{{Key: "state", Value: "taken"}})
	if err != nil {
		return nil, err
	}
	notes := []string{fmt.Sprintf("pops %d, distinct jobs popped %d, duplicate deliveries %d, jobs taken on the server %d", pops, len(seen), dups, taken)}
	if dups > 0 || taken != int64(len(seen)) {
		return notes, fmt.Errorf("%d duplicate deliveries, %d jobs taken for %d distinct pops", dups, taken, len(seen))
	}
	return notes, nil
}
