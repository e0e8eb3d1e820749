package main

import (
	"context"
	"math/rand/v2"
	"strconv"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// YCSB record shape (CoreWorkload defaults): 10 fields of 100 bytes.
const (
	ycsbFields    = 10
	ycsbFieldLen  = 100
	ycsbMaxScan   = 100 // scan lengths are uniform in [1, ycsbMaxScan]
	loadBatchSize = 1000
)

// ycsbMix is a core workload's operation proportions, in percent.
type ycsbMix struct {
	read, update, scan, insert, rmw int
	latest                          bool // "latest" request distribution, else zipfian
}

// The core workloads A–F as YCSB's workloads/workload[a-f] define them.
var (
	ycsbA = ycsbMix{read: 50, update: 50}
	ycsbB = ycsbMix{read: 95, update: 5}
	ycsbC = ycsbMix{read: 100}
	ycsbD = ycsbMix{read: 95, insert: 5, latest: true}
	ycsbE = ycsbMix{scan: 95, insert: 5}
	ycsbF = ycsbMix{read: 50, rmw: 50}
)

// ycsb is one YCSB core workload over the usertable collection.
type ycsb struct {
	cfg   *Config
	mix   ycsbMix
	coll  *mongo.Collection
	t     *Target
	pool  []byte // random printable bytes that field values are cut from
	zetan float64
	next  counter // the next record number to insert
	acked acked   // the newest record number every record up to is acknowledged
}

// ycsbWorkload returns the constructor of a workload with the given mix.
func ycsbWorkload(mix ycsbMix) func(*Config) Workload {
	return func(cfg *Config) Workload { return &ycsb{cfg: cfg, mix: mix} }
}

// Setup loads cfg.Records records with insertMany, all clients in parallel.
func (y *ycsb) Setup(ctx context.Context, t *Target) error {
	y.coll, y.t = t.DB.Collection("usertable"), t
	y.pool = randomPool(rand.New(rand.NewPCG(y.cfg.Seed, 0)), 1<<16)
	n := y.cfg.Records
	y.next.set(n)
	y.acked.set(n - 1)
	if y.mix.latest {
		y.zetan = zeta(0, n, zipfianConstant, 0)
	}
	return parallelLoad(ctx, y.cfg.Clients, n, func(ctx context.Context, r *rand.Rand, from, to int64) error {
		docs := make([]any, 0, to-from)
		for i := from; i < to; i++ {
			docs = append(docs, y.record(r, i))
		}
		_, err := y.coll.InsertMany(ctx, docs)
		return err
	})
}

// record builds record n.
func (y *ycsb) record(r *rand.Rand, n int64) bson.D {
	d := make(bson.D, 0, ycsbFields+1)
	d = append(d, bson.E{Key: "_id", Value: ycsbKey(n)})
	for f := range ycsbFields {
		d = append(d, bson.E{Key: fieldName(f), Value: poolValue(r, y.pool)})
	}
	return d
}

// Worker draws operations from the mix.
func (y *ycsb) Worker(i int) Worker {
	r := rand.New(rand.NewPCG(y.cfg.Seed, uint64(i)+1))
	keys := newScrambled()
	var recent latest
	if y.mix.latest {
		recent = latest{newZipfianZeta(y.cfg.Records, y.zetan)}
	}
	key := func() string {
		last := y.acked.get()
		if y.mix.latest {
			return ycsbKey(recent.next(r, last))
		}
		return ycsbKey(keys.next(r, last+1))
	}
	m := y.mix
	coll := y.t.Coll(i, "usertable")
	var b cmdBuf
	return func(ctx context.Context) (Result, error) {
		p := r.IntN(100)
		switch {
		case p < m.read:
			return Result{"read", 1}, y.read(ctx, coll, &b, key())
		case p < m.read+m.update:
			return Result{"update", 1}, y.update(ctx, coll, &b, r, key())
		case p < m.read+m.update+m.scan:
			n, err := y.scan(ctx, coll, key(), 1+r.IntN(ycsbMaxScan))
			return Result{"scan", n}, err
		case p < m.read+m.update+m.scan+m.insert:
			return Result{"insert", 1}, y.insert(ctx, coll, r)
		default:
			k := key()
			if err := y.read(ctx, coll, &b, k); err != nil {
				return Result{"read-modify-write", 1}, err
			}
			return Result{"read-modify-write", 1}, y.update(ctx, coll, &b, r, k)
		}
	}
}

// read fetches a whole record by key.
func (y *ycsb) read(ctx context.Context, coll *mongo.Collection, b *cmdBuf, key string) error {
	_, err := coll.FindOne(ctx, b.idFilter(key)).Raw()
	return err
}

// update sets one random field, as YCSB does by default (writeallfields=false).
func (y *ycsb) update(ctx context.Context, coll *mongo.Collection, b *cmdBuf, r *rand.Rand, key string) error {
	_, err := coll.UpdateOne(ctx, b.idFilter(key), b.setOne(fieldName(r.IntN(ycsbFields)), poolValue(r, y.pool)))
	return err
}

// cmdBuf builds one client's filters and updates as BSON directly, reusing
// its buffers, so the load generator spends no reflection on them: the
// driver marshals a bson.D through its codecs, about 6 µs of the client's
// CPU per update (profiled with -cpuprofile). Each document is only valid
// until the next call, which the synchronous driver calls allow.
type cmdBuf struct{ filter, update []byte }

// idFilter is {_id: key}.
func (b *cmdBuf) idFilter(key string) bson.Raw {
	i, d := bsoncore.AppendDocumentStart(b.filter[:0])
	d = bsoncore.AppendStringElement(d, "_id", key)
	b.filter, _ = bsoncore.AppendDocumentEnd(d, i)
	return b.filter
}

// setOne is {$set: {field: value}}.
func (b *cmdBuf) setOne(field, value string) bson.Raw {
	i, d := bsoncore.AppendDocumentStart(b.update[:0])
	j, d := bsoncore.AppendDocumentElementStart(d, "$set")
	d = bsoncore.AppendStringElement(d, field, value)
	d, _ = bsoncore.AppendDocumentEnd(d, j)
	b.update, _ = bsoncore.AppendDocumentEnd(d, i)
	return b.update
}

// scan reads up to n records from key on, in key order.
func (y *ycsb) scan(ctx context.Context, coll *mongo.Collection, key string, n int) (int, error) {
	cur, err := coll.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: key}}}},
		options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(int64(n)))
	if err != nil {
		return 0, err
	}
	defer cur.Close(ctx)
	got := 0
	for cur.Next(ctx) {
		got++
	}
	return got, cur.Err()
}

// insert adds the next record.
func (y *ycsb) insert(ctx context.Context, coll *mongo.Collection, r *rand.Rand) error {
	n := y.next.add()
	if _, err := coll.InsertOne(ctx, y.record(r, n)); err != nil {
		return err
	}
	y.acked.ack(n)
	return nil
}

// Finish has nothing to check.
func (y *ycsb) Finish(context.Context) ([]string, error) { return nil, nil }

// fieldNames are YCSB's field names.
var fieldNames = func() (names [ycsbFields]string) {
	for i := range names {
		names[i] = "field" + strconv.Itoa(i)
	}
	return names
}()

func fieldName(i int) string { return fieldNames[i] }

// randomPool returns n random printable ASCII bytes.
func randomPool(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(' ' + r.IntN(95))
	}
	return b
}

// poolValue is a random ycsbFieldLen-byte string cut from pool.
func poolValue(r *rand.Rand, pool []byte) string {
	off := r.IntN(len(pool) - ycsbFieldLen)
	return string(pool[off : off+ycsbFieldLen])
}

// counter hands out consecutive numbers to concurrent clients.
type counter struct {
	mu sync.Mutex
	n  int64
}

func (c *counter) set(n int64) { c.mu.Lock(); c.n = n; c.mu.Unlock() }

// add returns the next number.
func (c *counter) add() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return c.n - 1
}

// acked tracks acknowledged inserts, which complete out of order, so that
// readers only ask for records known to exist (YCSB's
// AcknowledgedCounterGenerator).
type acked struct {
	mu      sync.Mutex
	last    int64 // every record number <= last is acknowledged
	pending map[int64]bool
}

func (a *acked) set(n int64) { a.mu.Lock(); a.last = n; a.pending = map[int64]bool{}; a.mu.Unlock() }

func (a *acked) get() int64 { a.mu.Lock(); defer a.mu.Unlock(); return a.last }

// ack records that record n is acknowledged.
func (a *acked) ack(n int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pending[n] = true
	for a.pending[a.last+1] {
		delete(a.pending, a.last+1)
		a.last++
	}
}

// parallelLoad calls load for consecutive ranges of at most loadBatchSize of
// [0, n), from up to clients goroutines, and returns the first error.
func parallelLoad(ctx context.Context, clients int, n int64, load func(ctx context.Context, r *rand.Rand, from, to int64) error) error {
	var next counter
	var wg sync.WaitGroup
	errs := make([]error, clients)
	for i := range clients {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(i), 99))
			for errs[i] == nil {
				from := next.add() * loadBatchSize
				if from >= n {
					return
				}
				errs[i] = load(ctx, r, from, min(from+loadBatchSize, n))
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
