package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// nearLimit is the number of places a store-locator query asks for.
const nearLimit = 10

// places is a store locator: cfg.Records GeoJSON points spread uniformly
// over the sphere, with a 2dsphere index on loc and an ascending one on n
// (the place's number). near asks for the nearLimit places closest to a
// random point; the other finds one place by n, the indexed equality
// lookup whose latency a $near's is compared with.
type places struct {
	cfg  *Config
	near bool
	coll *mongo.Collection
}

func newPlaces(near bool) func(*Config) Workload {
	return func(cfg *Config) Workload { return &places{cfg: cfg, near: near} }
}

// randomPoint is a point uniform over the sphere, as [lng, lat].
func randomPoint(r *rand.Rand) bson.A {
	return bson.A{r.Float64()*360 - 180, math.Asin(r.Float64()*2-1) * 180 / math.Pi}
}

func (p *places) Setup(ctx context.Context, t *Target) error {
	p.coll = t.DB.Collection("places")
	if _, err := p.coll.Indexes().CreateMany(ctx, []mongo.IndexModel{{Keys: bson.D{{Key: "loc", Value: "2dsphere"}}}, {Keys: bson.D{{Key: "n", Value: 1}}}}); err != nil {
		return err
	}
	return parallelLoad(ctx, p.cfg.Clients, p.cfg.Records, func(ctx context.Context, r *rand.Rand, from, to int64) error {
		docs := make([]any, 0, to-from)
		for i := from; i < to; i++ {
			docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "n", Value: i},
				{Key: "loc", Value: bson.D{{Key: "type", Value: "Point"}, {Key: "coordinates", Value: randomPoint(r)}}}})
		}
		_, err := p.coll.InsertMany(ctx, docs)
		return err
	})
}

// Worker runs one query per call and checks its answer's size.
func (p *places) Worker(i int) Worker {
	r := rand.New(rand.NewPCG(p.cfg.Seed, uint64(i)+1))
	return func(ctx context.Context) (Result, error) {
		op, filter, want := "equality", bson.D{{Key: "n", Value: r.Int64N(p.cfg.Records)}}, 1
		if p.near {
			center := bson.D{{Key: "type", Value: "Point"}, {Key: "coordinates", Value: randomPoint(r)}}
			op, filter, want = "near", bson.D{{Key: "loc", Value: bson.D{{Key: "$near", Value: bson.D{{Key: "$geometry", Value: center}}}}}}, int(min(nearLimit, p.cfg.Records))
		}
		cur, err := p.coll.Find(ctx, filter, options.Find().SetLimit(nearLimit))
		if err != nil {
			return Result{op, 0}, err
		}
		defer cur.Close(ctx)
		n := 0
		for cur.Next(ctx) {
			n++
		}
		if err := cur.Err(); err != nil {
			return Result{op, n}, err
		}
		if n != want {
			return Result{op, n}, fmt.Errorf("%s: %d documents, want %d", op, n, want)
		}
		return Result{op, n}, nil
	}
}

// Finish has nothing to check beyond each answer's size.
func (p *places) Finish(context.Context) ([]string, error) { return nil, nil }
