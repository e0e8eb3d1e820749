package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
)

// Result is what one operation did: its type, reported separately, and how
// many items (documents) it handled, for workloads whose operations handle
// several.
type Result struct {
	Op    string
	Items int
}

// Worker performs one client's operations, one per call. It is called from
// one goroutine only.
type Worker func(ctx context.Context) (Result, error)

// errExhausted is returned by a worker that has nothing left to do (a
// drained queue): its client stops, the others go on.
var errExhausted = errors.New("workload exhausted")

// Workload is one benchmark. A fresh Workload is made for every run.
type Workload interface {
	// Setup prepares the data set on t; t is nil for serverless workloads.
	Setup(ctx context.Context, t *Target) error
	// Worker returns client i's operation loop.
	Worker(i int) Worker
	// Finish checks the outcome (an error means a failed check), returns
	// notes for the report and releases what Setup acquired.
	Finish(ctx context.Context) (notes []string, err error)
}

// Config is what workloads are parameterised by.
type Config struct {
	Clients  int
	Records  int64 // YCSB records, queue jobs, raw storage keys
	Comments int64 // comments in the comment-page workload
	Seed     uint64
}

// Target is a server under test.
type Target struct {
	Label string // "uri" or "compare"
	// URI is the target as reported (an in-process or playground target
	// is named, then its servers' URIs); URIs are the servers' URIs.
	URI    string
	URIs   []string
	Client *mongo.Client
	DB     *mongo.Database
	// Frontends are benchDB on each server of a multi-frontend target
	// (several URIs, or a playground), the first being DB; one element
	// otherwise.
	Frontends []*mongo.Database
}

// Coll is collection name on the frontend client i uses: clients are
// spread over the frontends round-robin.
func (t *Target) Coll(i int, name string) *mongo.Collection {
	return t.Frontends[i%len(t.Frontends)].Collection(name)
}

// benchDB is the database every run works in; it is dropped before and
// after each run.
const benchDB = "foliobench"

// Limits is when a run stops: after Ops operations, or after Duration,
// whichever comes first.
type Limits struct {
	Ops      int64
	Duration time.Duration
}

// maxConsecutiveErrors stops a client that only fails, so a broken
// workload ends quickly instead of spinning.
const maxConsecutiveErrors = 100

// opStats accumulates one operation type of one client.
type opStats struct {
	hist     Histogram
	items    int64
	errors   int64
	firstErr string
}

// runner runs workloads and collects their reports.
type runner struct {
	cfg      Config
	limits   Limits
	progress io.Writer // nil: no progress bar
	log      io.Writer
	// measure, if set, is called when the timed phase of a run starts; the
	// function it returns is called when it ends (CPU profiling).
	measure func(run string) func()
	// round numbers the runs of -rounds from 1; 0 for a single round.
	round int
}

// run runs workload spec once against t (nil for serverless workloads).
func (r *runner) run(ctx context.Context, spec workloadSpec, t *Target) (*Run, error) {
	w := spec.make(&r.cfg)
	label, uri := "local", ""
	if t != nil {
		label, uri = t.Label, t.URI
		if err := t.DB.Drop(ctx); err != nil {
			return nil, fmt.Errorf("drop %s: %w", benchDB, err)
		}
	}
	fmt.Fprintf(r.log, "%s @ %s: loading\n", spec.name, label)
	loadStart := time.Now()
	if err := w.Setup(ctx, t); err != nil {
		_, ferr := w.Finish(ctx)
		return nil, errors.Join(fmt.Errorf("%s setup: %w", spec.name, err), ferr)
	}
	rep := &Run{Workload: spec.name, Server: label, URI: uri, Round: r.round, Clients: r.cfg.Clients, LoadSeconds: time.Since(loadStart).Seconds()}

	var stop func()
	if r.measure != nil {
		name := spec.name + "." + label
		if r.round > 0 {
			name += fmt.Sprintf(".%d", r.round)
		}
		stop = r.measure(name)
	}
	perClient, elapsed := r.drive(ctx, w, spec.name+" @ "+label)
	if stop != nil {
		stop()
	}
	rep.Seconds = elapsed.Seconds()
	rep.fill(perClient)

	notes, err := w.Finish(ctx)
	rep.Notes = notes
	if err != nil {
		rep.Check = err.Error()
	}
	if t != nil {
		if err := t.DB.Drop(ctx); err != nil {
			return rep, fmt.Errorf("drop %s: %w", benchDB, err)
		}
	}
	return rep, nil
}

// drive runs the clients until the limits are reached and returns each
// client's statistics and the time they took. Operations are never cut
// short: a client stops before starting one past the limits.
func (r *runner) drive(ctx context.Context, w Workload, title string) ([]map[string]*opStats, time.Duration) {
	workers := make([]Worker, r.cfg.Clients)
	for i := range workers {
		workers[i] = w.Worker(i)
	}
	perClient := make([]map[string]*opStats, len(workers))
	var claimed, done atomic.Int64
	var stopped atomic.Bool
	start := time.Now()
	timer := time.AfterFunc(r.limits.Duration, func() { stopped.Store(true) })
	defer timer.Stop()
	finished := make(chan struct{})
	if r.progress != nil {
		go r.showProgress(title, start, &done, finished)
	}

	var wg sync.WaitGroup
	for i, work := range workers {
		stats := map[string]*opStats{}
		perClient[i] = stats
		wg.Go(func() {
			failures := 0
			for !stopped.Load() && ctx.Err() == nil {
				if r.limits.Ops > 0 && claimed.Add(1) > r.limits.Ops {
					return
				}
				t0 := time.Now()
				res, err := work(ctx)
				d := time.Since(t0)
				if errors.Is(err, errExhausted) {
					return
				}
				s := stats[res.Op]
				if s == nil {
					s = &opStats{}
					stats[res.Op] = s
				}
				done.Add(1)
				if err != nil {
					s.errors++
					if s.firstErr == "" {
						s.firstErr = err.Error()
					}
					if failures++; failures >= maxConsecutiveErrors {
						return
					}
					continue
				}
				failures = 0
				s.hist.Record(d)
				s.items += int64(res.Items)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(finished)
	return perClient, elapsed
}

// showProgress draws a progress bar until finished is closed.
func (r *runner) showProgress(title string, start time.Time, done *atomic.Int64, finished <-chan struct{}) {
	const width = 30
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-finished:
			fmt.Fprintf(r.progress, "\r%s\r", strings.Repeat(" ", 100))
			return
		case <-tick.C:
		}
		el := time.Since(start)
		n := done.Load()
		frac := el.Seconds() / r.limits.Duration.Seconds()
		if r.limits.Ops > 0 {
			frac = max(frac, float64(n)/float64(r.limits.Ops))
		}
		frac = min(frac, 1)
		bar := strings.Repeat("=", int(frac*width)) + strings.Repeat(" ", width-int(frac*width))
		fmt.Fprintf(r.progress, "\r%-28.28s [%s] %3.0f%% %9d ops %9.0f ops/s", title, bar, frac*100, n, float64(n)/el.Seconds())
	}
}

// fill sets the run's totals and per-operation figures from the clients'
// statistics.
func (rep *Run) fill(perClient []map[string]*opStats) {
	merged := map[string]*opStats{}
	for _, stats := range perClient {
		for op, s := range stats {
			m := merged[op]
			if m == nil {
				m = &opStats{}
				merged[op] = m
			}
			m.hist.Merge(&s.hist)
			m.items += s.items
			m.errors += s.errors
			if m.firstErr == "" {
				m.firstErr = s.firstErr
			}
		}
	}
	ops := make([]string, 0, len(merged))
	for op := range merged {
		ops = append(ops, op)
	}
	slices.Sort(ops)
	var all Histogram
	for _, op := range ops {
		s := merged[op]
		all.Merge(&s.hist)
		rep.Items += s.items
		rep.Errors += s.errors
		if rep.FirstError == "" {
			rep.FirstError = s.firstErr
		}
		rep.PerOp = append(rep.PerOp, opReport(op, &s.hist, s.items, s.errors, rep.Seconds))
	}
	rep.Ops = int64(all.Count())
	rep.OpsPerSec = float64(rep.Ops) / rep.Seconds
	rep.ItemsPerSec = float64(rep.Items) / rep.Seconds
	if len(ops) > 1 {
		rep.PerOp = append(rep.PerOp, opReport("all", &all, rep.Items, rep.Errors, rep.Seconds))
	}
}

// opReport summarises one histogram.
func opReport(op string, h *Histogram, items, errs int64, secs float64) OpReport {
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	return OpReport{
		Op: op, Ops: int64(h.Count()), Items: items, Errors: errs,
		OpsPerSec: float64(h.Count()) / secs,
		MeanMs:    ms(h.Mean()), P50Ms: ms(h.Percentile(50)), P95Ms: ms(h.Percentile(95)),
		P99Ms: ms(h.Percentile(99)), MaxMs: ms(h.Max()),
	}
}
