// Package cookbook is the shared harness of the seed-pattern examples: it
// parses -uri (or starts an in-memory Folio on the loopback), connects the
// official Go driver, hands each example a fresh database, records failed
// checks and turns them into the exit status.
package cookbook

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/embedded"
)

// Run is one example: it drives the pattern through k and records every
// result the pattern promises with k.Check.
type Run func(ctx context.Context, k *Kitchen)

// Kitchen is what an example works with: a client, its own database and the
// failure record. Its methods may be called from several goroutines.
type Kitchen struct {
	Client *mongo.Client
	// DB is a database named after the example, dropped before it runs.
	DB       *mongo.Database
	mu       sync.Mutex
	out      io.Writer
	failures []string
}

// Main runs one example from the command line: against -uri when given,
// otherwise against a Folio started in-process. It exits 1 if any check
// failed.
func Main(name string, run Run) {
	uri := flag.String("uri", "", "MongoDB URI to run against (default: start an in-memory Folio on 127.0.0.1)")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	failures, err := Serve(ctx, *uri, name, os.Stdout, run)
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(2)
	}
	if len(failures) > 0 {
		fmt.Printf("%d check(s) failed\n", len(failures))
		os.Exit(1)
	}
	fmt.Println("all checks passed")
}

// Test runs one example under go test against an in-process Folio and fails
// t with every check that did not hold.
func Test(t *testing.T, name string, run Run) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var log strings.Builder
	failures, err := Serve(ctx, "", name, &log, run)
	if err != nil {
		t.Fatal(err)
	}
	if len(failures) > 0 {
		t.Logf("output:\n%s", log.String())
		for _, f := range failures {
			t.Error(f)
		}
	}
}

// Serve connects to uri (starting an in-memory Folio, through the embedded
// package, when it is empty), runs
// the example on a fresh database named "cookbook_"+name and returns the
// failed checks. err reports only what kept the example from running.
func Serve(ctx context.Context, uri, name string, out io.Writer, run Run) (failures []string, err error) {
	if uri == "" {
		srv, err := embedded.Start(ctx, embedded.Options{InMemory: true})
		if err != nil {
			return nil, fmt.Errorf("start folio: %w", err)
		}
		defer srv.Close()
		uri = srv.URI()
	}
	client, err := mongo.Connect(options.Client().ApplyURI(uri).SetTimeout(30 * time.Second))
	if err != nil {
		return nil, err
	}
	defer client.Disconnect(context.Background())
	db := client.Database("cookbook_" + name)
	if err := db.Drop(ctx); err != nil {
		return nil, fmt.Errorf("drop %s: %w", db.Name(), err)
	}
	k := &Kitchen{Client: client, DB: db, out: out}
	run(ctx, k)
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.failures, nil
}

// Step prints what the example does next.
func (k *Kitchen) Step(format string, args ...any) {
	k.print("== "+format, args...)
}

// Say prints a detail of the current step.
func (k *Kitchen) Say(format string, args ...any) {
	k.print("   "+format, args...)
}

// Check records a failure unless cond holds; it reports cond.
func (k *Kitchen) Check(cond bool, format string, args ...any) bool {
	msg := fmt.Sprintf(format, args...)
	if cond {
		k.print("   ok   %s", msg)
		return true
	}
	k.print("   FAIL %s", msg)
	k.mu.Lock()
	k.failures = append(k.failures, msg)
	k.mu.Unlock()
	return false
}

// print writes one line of output.
func (k *Kitchen) print(format string, args ...any) {
	k.mu.Lock()
	defer k.mu.Unlock()
	fmt.Fprintf(k.out, format+"\n", args...)
}

// OK records err as a failure of what; it reports whether err was nil.
func (k *Kitchen) OK(err error, what string) bool {
	if err == nil {
		return true
	}
	return k.Check(false, "%s: %v", what, err)
}
