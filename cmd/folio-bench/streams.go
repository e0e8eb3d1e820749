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
)

// streamCount is how many change streams the stream workloads keep open.
const streamCount = 100

// watchers are change streams on one collection, each read by its own
// goroutine, recording how long after a write's acknowledgement its event
// arrived (acks maps a document _id to that time).
type watchers struct {
	client *mongo.Client
	cancel context.CancelFunc
	wg     sync.WaitGroup
	acks   sync.Map // int64 _id → time.Time
	mu     sync.Mutex
	lat    Histogram
	events []int64 // per stream
	errs   []error
}

// watch opens n streams on db.coll of t, through a client of their own
// with a connection per stream (a stream's getMore holds its connection
// while it waits); each has its first batch, so that writes made after
// watch returns are in every stream.
func watch(ctx context.Context, t *Target, coll string, n int) (*watchers, error) {
	client, err := mongo.Connect(options.Client().ApplyURI(t.URIs[0]).SetMaxPoolSize(uint64(n + 1)))
	if err != nil {
		return nil, err
	}
	c := client.Database(benchDB).Collection(coll)
	ctx, cancel := context.WithCancel(ctx)
	w := &watchers{client: client, cancel: cancel, events: make([]int64, n), errs: make([]error, n)}
	for i := range n {
		cs, err := c.Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetMaxAwaitTime(time.Second))
		if err != nil {
			cancel()
			w.wg.Wait()
			_ = client.Disconnect(context.Background())
			return nil, err
		}
		w.wg.Go(func() {
			defer cs.Close(context.Background())
			var h Histogram
			for cs.Next(ctx) {
				now := time.Now()
				w.events[i]++
				id, ok := cs.Current.Lookup("documentKey", "_id").AsInt64OK()
				if !ok {
					continue
				}
				d := time.Duration(0)
				if at, ok := w.acks.Load(id); ok {
					// an event that came before its acknowledgement counts 0
					d = max(0, now.Sub(at.(time.Time)))
				}
				h.Record(d)
			}
			if err := cs.Err(); err != nil && !errors.Is(err, context.Canceled) {
				w.errs[i] = err
			}
			w.mu.Lock()
			w.lat.Merge(&h)
			w.mu.Unlock()
		})
	}
	return w, nil
}

// stop closes the streams once each has seen want events or a few seconds
// passed, and reports the event latencies; an error if a stream failed or
// missed events. Without streams (the setup failed before opening them)
// there is nothing to report.
func (w *watchers) stop(want int64) ([]string, error) {
	if w == nil {
		return nil, nil
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) && !w.allSeen(want) {
		time.Sleep(20 * time.Millisecond)
	}
	w.cancel()
	w.wg.Wait()
	_ = w.client.Disconnect(context.Background())
	notes := []string{fmt.Sprintf("%d streams; event after acknowledgement: p50 %v, p99 %v, max %v over %d events",
		len(w.events), w.lat.Percentile(50), w.lat.Percentile(99), w.lat.Max(), w.lat.Count())}
	for i, err := range w.errs {
		if err != nil {
			return notes, fmt.Errorf("stream %d: %w", i, err)
		}
	}
	for i, n := range w.events {
		if n < want {
			return notes, fmt.Errorf("stream %d saw %d of %d events", i, n, want)
		}
	}
	return notes, nil
}

func (w *watchers) allSeen(want int64) bool {
	for i := range w.events {
		if w.events[i] < want {
			return false
		}
	}
	return true
}

// streamed inserts at a fixed total rate (1,000 documents/s over all
// clients) into a collection 100 change streams watch: the latency of
// change events.
type streamed struct {
	cfg  *Config
	coll *mongo.Collection
	t    *Target
	w    *watchers
	next counter
	mu   sync.Mutex
	done int64
	// writes is the inserts' own latency (the runner's includes the
	// pacing).
	writes Histogram
}

func newStreamed(cfg *Config) Workload { return &streamed{cfg: cfg} }

// streamRate is the streamed workload's writes per second.
const streamRate = 1000

func (s *streamed) Setup(ctx context.Context, t *Target) error {
	s.coll, s.t = t.DB.Collection("events"), t
	if err := t.DB.CreateCollection(ctx, "events"); err != nil {
		return err
	}
	var err error
	s.w, err = watch(ctx, t, "events", streamCount)
	return err
}

func (s *streamed) Worker(i int) Worker {
	coll := s.t.Coll(i, "events")
	every := time.Duration(s.cfg.Clients) * time.Second / streamRate
	next := time.Now()
	return func(ctx context.Context) (Result, error) {
		if d := time.Until(next); d > 0 {
			time.Sleep(d)
		}
		next = next.Add(every)
		id := s.next.add()
		start := time.Now()
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "v", Value: i}}); err != nil {
			return Result{"insert", 1}, err
		}
		now := time.Now()
		s.w.acks.Store(id, now)
		s.mu.Lock()
		s.done++
		s.writes.Record(now.Sub(start))
		s.mu.Unlock()
		return Result{"insert", 1}, nil
	}
}

func (s *streamed) Finish(context.Context) ([]string, error) {
	s.mu.Lock()
	done := s.done
	note := fmt.Sprintf("inserts paced to %d/s; their latency: p50 %v, p99 %v", streamRate, s.writes.Percentile(50), s.writes.Percentile(99))
	s.mu.Unlock()
	notes, err := s.w.stop(done)
	return append(notes, note), err
}

// ycsbStreamed is a YCSB workload with 100 change streams open on its
// collection, to compare with the same workload without them.
type ycsbStreamed struct {
	*ycsb
	w *watchers
}

func ycsbStreamedWorkload(mix ycsbMix) func(*Config) Workload {
	return func(cfg *Config) Workload { return &ycsbStreamed{ycsb: &ycsb{cfg: cfg, mix: mix}} }
}

func (y *ycsbStreamed) Setup(ctx context.Context, t *Target) error {
	if err := y.ycsb.Setup(ctx, t); err != nil {
		return err
	}
	var err error
	y.w, err = watch(ctx, t, "usertable", streamCount)
	return err
}

func (y *ycsbStreamed) Finish(ctx context.Context) ([]string, error) {
	// The streams' events are updates of records, not counted: only that
	// no stream failed.
	_, err := y.w.stop(0)
	return nil, err
}
