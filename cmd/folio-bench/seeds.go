package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// The workloads of Folio's seed applications other than the queue and the
// transfers. Their data set sizes are fixed here, except the comments'.
const (
	commentsPerDiscussion = 1000
	commentPage           = 20
	hosts                 = 100
	hostSamples           = 1000 // the $slice bound: arrays are kept this long
	counterPages          = 1000
	carts                 = 1000
	skus                  = 50
	bulkBatch             = 1000
)

// comments reads pages of threaded discussions: find by discussion_id,
// sorted by full_slug, with skip and limit.
type comments struct {
	cfg  *Config
	coll *mongo.Collection
}

func newComments(cfg *Config) Workload { return &comments{cfg: cfg} }

// discussions is the number of discussions the comments are spread over.
func (c *comments) discussions() int64 { return max(1, c.cfg.Comments/commentsPerDiscussion) }

// Setup creates the {discussion_id: 1, full_slug: 1} index and loads
// cfg.Comments comments. A fifth of them reply to an earlier comment of the
// same discussion, so full slugs nest as in the seed's threads.
func (c *comments) Setup(ctx context.Context, t *Target) error {
	c.coll = t.DB.Collection("comments")
	if _, err := c.coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "discussion_id", Value: 1}, {Key: "full_slug", Value: 1}}}); err != nil {
		return err
	}
	pool := randomPool(rand.New(rand.NewPCG(c.cfg.Seed, 0)), 1<<16)
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	nd := c.discussions()
	return parallelLoad(ctx, c.cfg.Clients, c.cfg.Comments, func(ctx context.Context, r *rand.Rand, from, to int64) error {
		docs := make([]any, 0, to-from)
		slugs := map[int64][]string{} // full slugs of this batch, per discussion
		for i := from; i < to; i++ {
			d := i % nd
			posted := base.Add(time.Duration(i) * time.Second)
			slug := fmt.Sprintf("%04x", r.IntN(1<<16))
			full := posted.Format("2006.01.02.15.04.05") + ":" + slug
			if prev := slugs[d]; len(prev) > 0 && r.IntN(5) == 0 {
				full = prev[r.IntN(len(prev))] + "/" + full
			}
			slugs[d] = append(slugs[d], full)
			docs = append(docs, bson.D{
				{Key: "discussion_id", Value: d}, {Key: "slug", Value: slug}, {Key: "full_slug", Value: full},
				{Key: "posted", Value: posted}, {Key: "author", Value: bson.D{{Key: "id", Value: r.IntN(10000)}, {Key: "name", Value: "user" + strconv.Itoa(r.IntN(10000))}}},
				{Key: "text", Value: poolValue(r, pool) + poolValue(r, pool)},
			})
		}
		_, err := c.coll.InsertMany(ctx, docs)
		return err
	})
}

// Worker reads a random page of a random discussion.
func (c *comments) Worker(i int) Worker {
	r := rand.New(rand.NewPCG(c.cfg.Seed, uint64(i)+1))
	nd := c.discussions()
	perDiscussion := c.cfg.Comments / nd
	return func(ctx context.Context) (Result, error) {
		page := r.Int64N(max(1, perDiscussion/commentPage))
		cur, err := c.coll.Find(ctx, bson.D{{Key: "discussion_id", Value: r.Int64N(nd)}},
			options.Find().SetSort(bson.D{{Key: "full_slug", Value: 1}}).SetSkip(page*commentPage).SetLimit(commentPage))
		if err != nil {
			return Result{"page", 0}, err
		}
		defer cur.Close(ctx)
		n := 0
		for cur.Next(ctx) {
			n++
		}
		return Result{"page", n}, cur.Err()
	}
}

// Finish has nothing to check.
func (c *comments) Finish(context.Context) ([]string, error) { return nil, nil }

// hostMetrics appends samples to per-host arrays kept at the newest
// hostSamples by $push with $each, $sort and $slice.
type hostMetrics struct {
	cfg  *Config
	coll *mongo.Collection
}

func newHosts(cfg *Config) Workload { return &hostMetrics{cfg: cfg} }

// Setup gives every host a full array, the steady state.
func (h *hostMetrics) Setup(ctx context.Context, t *Target) error {
	h.coll = t.DB.Collection("hosts")
	r := rand.New(rand.NewPCG(h.cfg.Seed, 0))
	start := time.Now().Add(-time.Hour)
	docs := make([]any, 0, hosts)
	for i := range hosts {
		samples := make(bson.A, hostSamples)
		for j := range samples {
			samples[j] = h.sample(r, start.Add(time.Duration(j)*time.Second))
		}
		docs = append(docs, bson.D{{Key: "_id", Value: hostName(i)}, {Key: "samples", Value: samples}})
	}
	_, err := h.coll.InsertMany(ctx, docs)
	return err
}

func hostName(i int) string { return "host" + strconv.Itoa(i) + ".example.com" }

func (h *hostMetrics) sample(r *rand.Rand, at time.Time) bson.D {
	return bson.D{{Key: "t", Value: at}, {Key: "cpu", Value: r.Float64() * 100}, {Key: "mem", Value: r.Int64N(1 << 34)}}
}

// Worker pushes one to five new samples to a random host.
func (h *hostMetrics) Worker(i int) Worker {
	r := rand.New(rand.NewPCG(h.cfg.Seed, uint64(i)+1))
	upsert := options.UpdateOne().SetUpsert(true)
	return func(ctx context.Context) (Result, error) {
		each := make(bson.A, 1+r.IntN(5))
		for j := range each {
			each[j] = h.sample(r, time.Now())
		}
		_, err := h.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: hostName(r.IntN(hosts))}},
			bson.D{{Key: "$push", Value: bson.D{{Key: "samples", Value: bson.D{
				{Key: "$each", Value: each}, {Key: "$sort", Value: bson.D{{Key: "t", Value: 1}}}, {Key: "$slice", Value: -hostSamples},
			}}}}}, upsert)
		return Result{"push", len(each)}, err
	}
}

// Finish checks that the arrays stayed bounded.
func (h *hostMetrics) Finish(ctx context.Context) ([]string, error) {
	var doc struct {
		Samples []bson.Raw `bson:"samples"`
	}
	if err := h.coll.FindOne(ctx, bson.D{{Key: "_id", Value: hostName(0)}}).Decode(&doc); err != nil {
		return nil, err
	}
	if len(doc.Samples) != hostSamples {
		return nil, fmt.Errorf("%s has %d samples, want %d", hostName(0), len(doc.Samples), hostSamples)
	}
	return nil, nil
}

// counters counts page views per day and hour: one document per page and
// month, upserted by _id with $inc of dotted 'daily.<day>' and
// 'hourly.<h>' fields.
type counters struct {
	cfg  *Config
	coll *mongo.Collection
	incs []int64 // increments each client made
}

func newCounters(cfg *Config) Workload { return &counters{cfg: cfg} }

// Setup starts from an empty collection: the upserts create the documents.
func (c *counters) Setup(_ context.Context, t *Target) error {
	c.coll = t.DB.Collection("counters")
	c.incs = make([]int64, c.cfg.Clients)
	return nil
}

// Worker counts a view of a page chosen with zipfian popularity.
func (c *counters) Worker(i int) Worker {
	r := rand.New(rand.NewPCG(c.cfg.Seed, uint64(i)+1))
	pages := newScrambled()
	upsert := options.UpdateOne().SetUpsert(true)
	return func(ctx context.Context) (Result, error) {
		day, hour := 1+r.IntN(28), r.IntN(24)
		id := "page" + strconv.FormatInt(pages.next(r, counterPages), 10) + "/2024-06"
		_, err := c.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$inc", Value: bson.D{
			{Key: "total", Value: 1}, {Key: "daily." + strconv.Itoa(day), Value: 1}, {Key: "hourly." + strconv.Itoa(hour), Value: 1},
		}}}, upsert)
		if err == nil {
			c.incs[i]++
		}
		return Result{"inc", 1}, err
	}
}

// Finish checks that the totals add up to the acknowledged increments.
func (c *counters) Finish(ctx context.Context) ([]string, error) {
	var want int64
	for _, n := range c.incs {
		want += n
	}
	got, docs, err := sumField(ctx, c.coll, "total")
	if err != nil {
		return nil, err
	}
	notes := []string{fmt.Sprintf("increments acknowledged %d, counted on the server %d, in %d documents", want, got, docs)}
	if got != want {
		return notes, fmt.Errorf("server counted %d increments, %d were acknowledged", got, want)
	}
	return notes, nil
}

// sumField adds up an integer field over a collection, client-side (the
// aggregation stages are not all there yet), and counts the documents.
func sumField(ctx context.Context, coll *mongo.Collection, field string) (sum, docs int64, err error) {
	cur, err := coll.Find(ctx, bson.D{}, options.Find().SetProjection(bson.D{{Key: field, Value: 1}}))
	if err != nil {
		return 0, 0, err
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		v, ok := cur.Current.Lookup(field).AsInt64OK()
		if !ok {
			return 0, 0, fmt.Errorf("%s is not an integer in %s", field, cur.Current)
		}
		sum += v
		docs++
	}
	return sum, docs, cur.Err()
}

// cart adds items to shopping carts: a positional $inc of the item's
// quantity, or, when the cart lacks the item, a $push guarded by $ne that
// upserts the cart.
type cart struct {
	cfg  *Config
	coll *mongo.Collection
	adds []int64 // items each client added
}

func newCart(cfg *Config) Workload { return &cart{cfg: cfg} }

// Setup starts from an empty collection: the upserts create the carts.
func (c *cart) Setup(_ context.Context, t *Target) error {
	c.coll = t.DB.Collection("carts")
	c.adds = make([]int64, c.cfg.Clients)
	return nil
}

// Worker adds one unit of a random SKU to a random cart.
func (c *cart) Worker(i int) Worker {
	r := rand.New(rand.NewPCG(c.cfg.Seed, uint64(i)+1))
	upsert := options.UpdateOne().SetUpsert(true)
	return func(ctx context.Context) (Result, error) {
		id := "cart" + strconv.Itoa(r.IntN(carts))
		sku := "sku" + strconv.Itoa(r.IntN(skus))
		for {
			res, err := c.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "items.sku", Value: sku}},
				bson.D{{Key: "$inc", Value: bson.D{{Key: "items.$.qty", Value: 1}}}})
			if err != nil || res.MatchedCount == 1 {
				if err == nil {
					c.adds[i]++
				}
				return Result{"add", 1}, err
			}
			_, err = c.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "items.sku", Value: bson.D{{Key: "$ne", Value: sku}}}},
				bson.D{{Key: "$push", Value: bson.D{{Key: "items", Value: bson.D{{Key: "sku", Value: sku}, {Key: "qty", Value: 1}}}}}}, upsert)
			if mongo.IsDuplicateKeyError(err) {
				continue // another client added the item meanwhile: increment it
			}
			if err == nil {
				c.adds[i]++
			}
			return Result{"add", 1}, err
		}
	}
}

// Finish checks that the quantities add up to the acknowledged adds and
// that no cart holds an item twice.
func (c *cart) Finish(ctx context.Context) ([]string, error) {
	var want, got int64
	for _, n := range c.adds {
		want += n
	}
	cur, err := c.coll.Find(ctx, bson.D{})
	if err != nil {
		return nil, err
	}
	defer cur.Close(ctx)
	var errs []error
	docs := 0
	for cur.Next(ctx) {
		var doc struct {
			ID    string `bson:"_id"`
			Items []struct {
				SKU string `bson:"sku"`
				Qty int64  `bson:"qty"`
			} `bson:"items"`
		}
		if err := cur.Decode(&doc); err != nil {
			return nil, err
		}
		docs++
		seen := map[string]bool{}
		for _, it := range doc.Items {
			if seen[it.SKU] {
				errs = append(errs, fmt.Errorf("%s holds %s twice", doc.ID, it.SKU))
			}
			seen[it.SKU] = true
			got += it.Qty
		}
	}
	if err := cur.Err(); err != nil {
		return nil, err
	}
	notes := []string{fmt.Sprintf("adds acknowledged %d, quantity on the server %d, in %d carts", want, got, docs)}
	if got != want {
		errs = append(errs, fmt.Errorf("carts hold %d units, %d adds were acknowledged", got, want))
	}
	return notes, errors.Join(errs...)
}

// bulk inserts batches of bulkBatch 1 KB documents (YCSB-shaped records
// with ObjectId keys) with insertMany.
type bulk struct {
	cfg  *Config
	coll *mongo.Collection
	pool []byte
}

func newBulk(cfg *Config) Workload { return &bulk{cfg: cfg} }

func (b *bulk) Setup(_ context.Context, t *Target) error {
	b.coll = t.DB.Collection("bulk")
	b.pool = randomPool(rand.New(rand.NewPCG(b.cfg.Seed, 0)), 1<<16)
	return nil
}

// Worker inserts one batch per operation. The documents are encoded
// directly as BSON, without _id, which the driver then adds as an ObjectId
// (as an application's inserts usually do): a bson.D would cost the client
// a reflective encoding, and a given _id a reflective decoding (the driver's
// ensureID), per document, as much CPU as the server spends storing it.
func (b *bulk) Worker(i int) Worker {
	r := rand.New(rand.NewPCG(b.cfg.Seed, uint64(i)+1))
	return func(ctx context.Context) (Result, error) {
		docs := make([]any, bulkBatch)
		buf := make([]byte, 0, bulkBatch*(ycsbFields*(ycsbFieldLen+16)+5))
		for j := range docs {
			start := len(buf)
			var doc int32
			doc, buf = bsoncore.AppendDocumentStart(buf)
			for f := range ycsbFields {
				off := r.IntN(len(b.pool) - ycsbFieldLen)
				buf = appendStringBytes(buf, fieldName(f), b.pool[off:off+ycsbFieldLen])
			}
			buf, _ = bsoncore.AppendDocumentEnd(buf, doc)
			docs[j] = bson.Raw(buf[start:])
		}
		res, err := b.coll.InsertMany(ctx, docs)
		n := 0
		if res != nil {
			n = len(res.InsertedIDs)
		}
		return Result{"insertMany", n}, err
	}
}

// appendStringBytes appends a string element whose value is v's bytes
// (bsoncore's appenders take a string, which would copy v).
func appendStringBytes(dst []byte, key string, v []byte) []byte {
	dst = bsoncore.AppendHeader(dst, bsoncore.TypeString, key)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(v)+1))
	return append(append(dst, v...), 0)
}

// Finish has nothing to check.
func (b *bulk) Finish(context.Context) ([]string, error) { return nil, nil }
