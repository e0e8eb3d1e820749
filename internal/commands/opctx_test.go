package commands

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/sessions"
)

// running registers a find as a running operation, as Run does while its
// handler works, and returns it with its request.
func running(t *testing.T, s *Service) (*Request, *activeOp) {
	t.Helper()
	r := &Request{DB: "test", Cmd: marshal(bson.D{{Key: "find", Value: "c"}, {Key: "$db", Value: "test"}}), Conn: &Conn{ID: 7}}
	op, err := s.ops.begin(r, "find")
	if err != nil {
		t.Fatal(err)
	}
	return r, op
}

func run(s *Service, db string, cmd bson.D) bson.Raw {
	return s.Run(&Request{DB: db, Cmd: marshal(append(cmd, bson.E{Key: "$db", Value: db}))})
}

// TestKillOpMarksKillPending checks that killOp ends a running operation's
// context with Interrupted and that currentOp shows it with killPending
// until it returns.
func TestKillOpMarksKillPending(t *testing.T) {
	s := newTestService(t)
	s.Sessions = sessions.NewRegistry()
	r, op := running(t, s)
	if reply := run(s, "admin", bson.D{{Key: "killOp", Value: 1}, {Key: "op", Value: op.id}}); reply.Lookup("ok").Double() != 1 {
		t.Fatalf("killOp: %v", reply)
	}
	if err := mongoerr.Interruption(r.Ctx); !mongoerr.Is(err, mongoerr.Interrupted) || err.Error() == "" {
		t.Fatalf("killed operation's interruption: %v, want Interrupted", err)
	}
	reply := run(s, "admin", bson.D{{Key: "currentOp", Value: 1}, {Key: "opid", Value: op.id}})
	inprog, _ := reply.Lookup("inprog").Array().Values()
	if len(inprog) != 1 || !inprog[0].Document().Lookup("killPending").Boolean() {
		t.Fatalf("currentOp of the killed operation: %v", reply)
	}
	s.ops.end(op)
	reply = run(s, "admin", bson.D{{Key: "currentOp", Value: 1}, {Key: "opid", Value: op.id}})
	if inprog, _ := reply.Lookup("inprog").Array().Values(); len(inprog) != 0 {
		t.Fatalf("currentOp after the operation returned: %v", reply)
	}
}

// TestShutdownSequence checks the service's side of shutdown: Drain
// refuses new operations with ShutdownInProgress and waits for the running
// ones until its deadline; Interrupt ends them with InterruptedAtShutdown
// and reports when they have returned.
func TestShutdownSequence(t *testing.T) {
	s := newTestService(t)
	s.Sessions = sessions.NewRegistry()
	r, op := running(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if s.Drain(ctx) {
		t.Fatal("Drain reported idle with an operation running")
	}
	if reply := run(s, "admin", bson.D{{Key: "ping", Value: 1}}); reply.Lookup("code").Int32() != int32(mongoerr.ShutdownInProgress) {
		t.Fatalf("new operation while draining: %v, want ShutdownInProgress", reply)
	}
	go func() {
		<-r.Ctx.Done() // the operation notices and returns
		s.ops.end(op)
	}()
	ictx, icancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer icancel()
	if !s.Interrupt(ictx) {
		t.Fatal("Interrupt did not see the operation return")
	}
	if err := mongoerr.Interruption(r.Ctx); !mongoerr.Is(err, mongoerr.InterruptedAtShutdown) {
		t.Fatalf("interrupted operation: %v, want InterruptedAtShutdown", err)
	}
}

// TestDrainEndsTheSweep: a drain that finds nothing running ends the
// registry's root context, which the maxTimeMS sweep (started by any
// command with a maxTimeMS) waits on: a closed service leaves no
// goroutine behind.
func TestDrainEndsTheSweep(t *testing.T) {
	s := newTestService(t)
	if reply := run(s, "admin", bson.D{{Key: "ping", Value: 1}, {Key: "maxTimeMS", Value: 60000}}); reply.Lookup("ok").Double() != 1 {
		t.Fatal(reply)
	}
	s.ops.mu.Lock()
	started := s.ops.sweepWake != nil
	s.ops.mu.Unlock()
	if !started {
		t.Fatal("no sweep after a command with a maxTimeMS: the test does not test")
	}
	if !s.Drain(context.Background()) {
		t.Fatal("Drain found operations running")
	}
	if err := s.Context().Err(); err == nil {
		t.Fatal("the root context still open after an idle drain: the sweep runs on")
	}
}

// TestMaxTimeEndsOperations checks the sweep that ends operations at their
// maxTimeMS: while it waits for a deadline an hour away, operations with
// earlier ones, begun in any order, each end at their own, never before
// it, with MaxTimeMSExpired (one already past begins ended); the hour-long
// one and one without a maxTimeMS run on; a context reports its deadline.
func TestMaxTimeEndsOperations(t *testing.T) {
	s := newTestService(t)
	begin := func(dl time.Time) (*Request, *activeOp) {
		r := &Request{DB: "test", Cmd: marshal(bson.D{{Key: "find", Value: "c"}, {Key: "$db", Value: "test"}}), Conn: &Conn{ID: 7}}
		r.Args.Deadline = dl
		op, err := s.ops.begin(r, "find")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.ops.end(op) })
		return r, op
	}
	_, far := begin(time.Now().Add(time.Hour))
	_, none := begin(time.Time{})
	// Once a sweep ended this one, the next waits for the hour.
	if warm, _ := begin(time.Now().Add(5 * time.Millisecond)); !waitDone(warm.Ctx) {
		t.Fatal("operation with a 5 ms deadline still running")
	}
	var reqs []*Request
	for _, d := range []time.Duration{40 * time.Millisecond, 10 * time.Millisecond, -time.Millisecond, 25 * time.Millisecond} {
		r, _ := begin(time.Now().Add(d))
		if d < 0 && r.Ctx.Err() == nil {
			t.Error("an operation whose deadline has passed began with a live context")
		}
		reqs = append(reqs, r)
	}
	for _, r := range reqs {
		if !waitDone(r.Ctx) {
			t.Fatalf("operation with deadline %v still running", r.Args.Deadline)
		}
		if now := time.Now(); now.Before(r.Args.Deadline) {
			t.Errorf("operation ended %v before its deadline", r.Args.Deadline.Sub(now))
		}
		if err := mongoerr.Interruption(r.Ctx); !mongoerr.Is(err, mongoerr.MaxTimeMSExpired) {
			t.Errorf("expired operation's interruption: %v, want MaxTimeMSExpired", err)
		}
		if dl, ok := r.Ctx.Deadline(); !ok || !dl.Equal(r.Args.Deadline) {
			t.Errorf("context's deadline %v %v, want %v", dl, ok, r.Args.Deadline)
		}
	}
	if far.ctx.Err() != nil || none.ctx.Err() != nil {
		t.Errorf("operations without an expired deadline ended: %v, %v", context.Cause(far.ctx), context.Cause(none.ctx))
	}
}

// waitDone reports whether ctx ends within 10 s.
func waitDone(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return true
	case <-time.After(10 * time.Second):
		return false
	}
}
