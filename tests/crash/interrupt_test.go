package crash

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/tests/folioproc"
)

// slowExpr costs milliseconds per document and is always true, so that a
// scan of a few thousand documents runs for many seconds.
func slowExpr() bson.D {
	sum := bson.D{{Key: "$reduce", Value: bson.D{
		{Key: "input", Value: bson.D{{Key: "$range", Value: bson.A{0, 4000}}}},
		{Key: "initialValue", Value: 0},
		{Key: "in", Value: bson.D{{Key: "$add", Value: bson.A{"$$value", "$$this"}}}},
	}}}
	return bson.D{{Key: "$gte", Value: bson.A{sum, 0}}}
}

// TestSignalDuringLongOperations sends SIGTERM while a long aggregation and
// a long multi-update run, with -shutdown-timeout=1s: the server stops
// within the timeout plus a second, the operations fail with
// InterruptedAtShutdown (11600), nothing panics, and after a restart every
// document is there, each updated or not as a whole.
func TestSignalDuringLongOperations(t *testing.T) {
	const n = 3000
	const grace = time.Second
	dbpath := t.TempDir()
	p := folioproc.Start(t, dbpath, "--shutdown-timeout="+grace.String())
	ctx := context.Background()
	client := connect(t, p.URI())
	coll := client.Database(dbName).Collection("slow")
	docs := make([]any, n)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "g", Value: i % 10}}
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 2)
	go func() {
		cur, err := coll.Aggregate(ctx, mongo.Pipeline{{{Key: "$group", Value: bson.D{
			{Key: "_id", Value: "$g"}, {Key: "n", Value: bson.D{{Key: "$sum", Value: bson.D{{Key: "$cond", Value: bson.A{slowExpr(), 1, 0}}}}}},
		}}}}, options.Aggregate().SetComment("shutdown"))
		if err == nil {
			err = cur.Close(ctx)
		}
		errs <- err
	}()
	go func() {
		_, err := coll.UpdateMany(ctx, bson.D{{Key: "$expr", Value: slowExpr()}}, bson.D{{Key: "$set", Value: bson.D{{Key: "touched", Value: true}}}},
			options.UpdateMany().SetComment("shutdown"))
		errs <- err
	}()
	for deadline := time.Now().Add(time.Minute); ; {
		var res struct{ Inprog []bson.Raw }
		err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "currentOp", Value: 1}, {Key: "command.comment", Value: "shutdown"}}).Decode(&res)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Inprog) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the long operations never both ran: %v", res.Inprog)
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, exitGuard)
	defer cancel()
	code, err := p.Wait(wctx)
	took := time.Since(start)
	if err != nil || code != 0 {
		t.Fatalf("exit after SIGTERM: code %d, %v", code, err)
	}
	t.Logf("exited %v after SIGTERM with a %v shutdown timeout", took, grace)
	if took > grace+2*time.Second {
		t.Fatalf("exited %v after SIGTERM, want within %v plus a second", took, grace)
	}
	if log := p.Log(); strings.Contains(log, "panic") {
		t.Fatalf("the server panicked:\n%s", log)
	}
	for range 2 {
		var se mongo.ServerError
		if err := <-errs; !errors.As(err, &se) || !se.HasErrorCode(11600) {
			t.Errorf("long operation at shutdown: %v, want InterruptedAtShutdown (11600)", err)
		}
	}

	p = folioproc.Start(t, dbpath)
	coll = connect(t, p.URI()).Database(dbName).Collection("slow")
	all, err := coll.CountDocuments(ctx, bson.D{})
	if err != nil || all != n {
		t.Fatalf("after restart %d documents (%v), want %d", all, err, n)
	}
	touched, err := coll.CountDocuments(ctx, bson.D{{Key: "touched", Value: true}})
	if err != nil || touched == n {
		t.Fatalf("after restart %d documents updated (%v), want the update interrupted", touched, err)
	}
	t.Logf("the interrupted update changed %d of %d documents", touched, n)
}
