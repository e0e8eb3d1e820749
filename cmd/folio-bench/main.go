// Command folio-bench measures a MongoDB-compatible server through the
// official Go driver: the YCSB core workloads, the workloads of Folio's seed
// applications, and two floors (driver round trips, and Pebble without a
// server) that show how close the server comes to what the machine can do;
// -null serves a third, a server that does no database work.
//
// By default it starts a Folio in-process on a loopback port with its data
// in a temporary directory, so a run needs no separate server:
//
//	go run ./cmd/folio-bench -workload ycsb-a,ping -clients 16 -duration 15s
//
// docs/benchmarks.md lists the workloads and the reference runs.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "folio-bench:", err)
		os.Exit(1)
	}
}

// cliOptions are the parsed command line.
type cliOptions struct {
	uri, compare string
	workloads    string
	cfg          Config
	limits       Limits
	jsonOut      string
	svgOut       string
	progress     bool
	cpuProfile   string
	phaseStart   string
	phaseEnd     string
	list         bool
	null         string
	nullWork     time.Duration
	rounds       int
}

func parseFlags(args []string, stderr io.Writer) (*cliOptions, error) {
	o := &cliOptions{}
	fs := flag.NewFlagSet("folio-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.uri, "uri", inprocPrefix, `server to measure: a mongodb:// URI; several separated by spaces, frontends of one database that the clients are spread over (ycsb and queue workloads); "inproc", "inproc-always" or "inproc-never" to start a Folio in this process with that durability; or "playground:N" for an in-process mock TiKV cluster and N frontends`)
	fs.StringVar(&o.compare, "compare", "", "a second server (same forms as -uri): every workload runs on both, one after the other, and the report gives the ratio")
	fs.StringVar(&o.workloads, "workload", "ycsb-a", `comma-separated workloads or groups ("ycsb", "seeds", "floor", "all"); -list shows them`)
	fs.IntVar(&o.cfg.Clients, "clients", 16, "concurrent clients (goroutines sharing one driver connection pool)")
	fs.Int64Var(&o.limits.Ops, "ops", 0, "stop each run after this many operations (0: run for -duration)")
	fs.DurationVar(&o.limits.Duration, "duration", 10*time.Second, "stop each run after this long (with -ops, the run stops at whichever comes first)")
	fs.Int64Var(&o.cfg.Records, "records", 100_000, "records loaded: YCSB records, preloaded queue jobs, Pebble keys")
	fs.Int64Var(&o.cfg.Comments, "comments", 100_000, "comments loaded for the comments workload, 1000 per discussion")
	fs.Uint64Var(&o.cfg.Seed, "seed", 1, "random seed")
	fs.IntVar(&o.rounds, "rounds", 1, "run the workloads this many times over, one round after another, and summarize each workload's median; on a noisy machine one run's ops/s, and its share of ping, vary more than most differences measured")
	fs.StringVar(&o.jsonOut, "json", "", "write the report as JSON to this file")
	fs.StringVar(&o.svgOut, "svg", "", "write a bar chart of ops/s per workload and server to this SVG file")
	fs.BoolVar(&o.progress, "progress", false, "show a progress bar (only when stderr is a terminal)")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of each timed phase to this file (suffixed by workload and server when there are several runs); with -uri inproc it covers the server")
	fs.StringVar(&o.phaseStart, "phase-start", "", "a shell command run before each timed phase, after the loading (FOLIO_BENCH_RUN names the run): to zero a counter of the server's, such as callgrind_control -z <pid> (docs/benchmarks.md)")
	fs.StringVar(&o.phaseEnd, "phase-end", "", "a shell command run after each timed phase (FOLIO_BENCH_RUN names the run): to read that counter, such as callgrind_control -d <pid>")
	fs.BoolVar(&o.list, "list", false, "list the workloads and exit")
	fs.StringVar(&o.null, "null", "", "instead of measuring, serve the null server on this host:port until interrupted: a server that does no database work, to measure against from another folio-bench (docs/benchmarks.md)")
	fs.DurationVar(&o.nullWork, "null-work", 0, "with -null, spin each find and update for this long before answering")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: folio-bench [flags]\n\nfolio-bench drives a MongoDB-compatible server with the official Go driver and reports\nops/s and p50/p95/p99 latencies per operation type.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	switch {
	case fs.NArg() > 0:
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	case o.cfg.Clients < 1:
		return nil, errors.New("-clients must be at least 1")
	case o.limits.Duration <= 0:
		return nil, errors.New("-duration must be positive")
	case o.cfg.Records < 1 || o.cfg.Comments < 1:
		return nil, errors.New("-records and -comments must be at least 1")
	case o.rounds < 1:
		return nil, errors.New("-rounds must be at least 1")
	}
	return o, nil
}

func run(args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	if o.list {
		for _, s := range registry {
			fmt.Fprintf(stdout, "%-10s %s\n", s.name, s.about)
		}
		return nil
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if o.null != "" {
		return runNull(ctx, o.null, o.nullWork, stderr)
	}
	specs, err := selectWorkloads(o.workloads)
	if err != nil {
		return err
	}

	tuneClientGC(o.uri, o.compare)
	var targets []*Target
	for _, s := range []struct{ label, uri string }{{"uri", o.uri}, {"compare", o.compare}} {
		if s.uri == "" {
			continue
		}
		t, closeT, err := openTarget(s.label, s.uri, o.cfg.Clients)
		if err != nil {
			return err
		}
		defer func() {
			cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if cerr := closeT(cctx); cerr != nil {
				fmt.Fprintln(stderr, "folio-bench: closing", s.label+":", cerr)
			}
		}()
		targets = append(targets, t)
	}

	r := &runner{cfg: o.cfg, limits: o.limits, log: stderr}
	if o.progress && isTerminal(os.Stderr) {
		r.progress = stderr
	}
	if o.cpuProfile != "" {
		r.measure = profiler(o.cpuProfile, stderr, o.rounds*countRuns(specs, len(targets)) > 1)
	}
	if o.phaseStart != "" || o.phaseEnd != "" {
		r.measure = around(phaseCommands(o.phaseStart, o.phaseEnd, stderr), r.measure)
	}
	rep := &Report{Started: time.Now(), GoVersion: runtime.Version(), CPUs: runtime.NumCPU(), Args: args, Clients: o.cfg.Clients, Records: o.cfg.Records}
	if o.rounds > 1 {
		rep.Rounds = o.rounds
	}
	for round := range o.rounds {
		if o.rounds > 1 {
			r.round = round + 1
		}
		for _, spec := range specs {
			on := targets
			if spec.serverless {
				on = []*Target{nil}
			}
			for _, t := range on {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				res, err := r.run(ctx, spec, t)
				if err != nil {
					return err
				}
				printRun(stdout, res)
				rep.Runs = append(rep.Runs, res)
			}
		}
	}
	rep.finish()
	printSummary(stdout, rep)
	if o.jsonOut != "" {
		if err := writeJSON(o.jsonOut, rep); err != nil {
			return err
		}
	}
	if o.svgOut != "" {
		if err := writeSVG(o.svgOut, rep); err != nil {
			return err
		}
	}
	for _, res := range rep.Runs {
		if res.Check != "" {
			return fmt.Errorf("%s @ %s: check failed: %s", res.Workload, res.Server, res.Check)
		}
	}
	return nil
}

// countRuns is the number of runs the workloads make on n targets.
func countRuns(specs []workloadSpec, n int) int {
	total := 0
	for _, s := range specs {
		if s.serverless {
			total++
		} else {
			total += n
		}
	}
	return total
}

// profiler returns a runner.measure function that writes a CPU profile of
// each timed phase to path, or to path.<run> when several runs are made.
func profiler(path string, log io.Writer, suffix bool) func(run string) func() {
	return func(run string) func() {
		p := path
		if suffix {
			p += "." + run
		}
		f, err := os.Create(p)
		if err == nil {
			if err = pprof.StartCPUProfile(f); err != nil {
				f.Close()
			}
		}
		if err != nil {
			fmt.Fprintln(log, "folio-bench: cpu profile:", err)
			return func() {}
		}
		return func() {
			pprof.StopCPUProfile()
			if err := f.Close(); err != nil {
				fmt.Fprintln(log, "folio-bench: cpu profile:", err)
			}
		}
	}
}

// phaseCommands returns a runner.measure function that runs the shell
// command start before each timed phase and end after it (either may be
// empty), with FOLIO_BENCH_RUN set to the run's name. A command that fails
// is reported on log; the run goes on.
func phaseCommands(start, end string, log io.Writer) func(run string) func() {
	sh := func(command, run string) {
		if command == "" {
			return
		}
		cmd := exec.Command("sh", "-c", command)
		cmd.Env = append(os.Environ(), "FOLIO_BENCH_RUN="+run)
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(log, "folio-bench: %q: %v\n", command, err)
		}
	}
	return func(run string) func() {
		sh(start, run)
		return func() { sh(end, run) }
	}
}

// around runs inner (nil: none) inside outer: outer starts first and
// stops last, so a profile does not cover the phase commands.
func around(outer, inner func(run string) func()) func(run string) func() {
	if inner == nil {
		return outer
	}
	return func(run string) func() {
		stopOuter := outer(run)
		stopInner := inner(run)
		return func() {
			stopInner()
			stopOuter()
		}
	}
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
