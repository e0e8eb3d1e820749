package commands

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/clock"
	"github.com/folio-db/folio/internal/cursors"
	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
)

// Context is the root of every connection's and operation's context: it
// ends, with InterruptedAtShutdown, when Interrupt is called.
func (s *Service) Context() context.Context {
	s.ops.mu.Lock()
	defer s.ops.mu.Unlock()
	return s.ops.rootContext()
}

// Drain refuses new operations (ShutdownInProgress) and waits until the
// running ones return or ctx ends; it reports whether none is left. Once
// none is, it ends the registry's root context, and with it the
// maxTimeMS sweep (as Interrupt does otherwise).
func (s *Service) Drain(ctx context.Context) bool {
	s.closeTopology()
	s.ops.mu.Lock()
	s.ops.rootContext()
	s.ops.draining = true
	stop := s.ops.interrupt
	s.ops.mu.Unlock()
	if !s.waitIdle(ctx) {
		return false
	}
	stop(mongoerr.New(mongoerr.InterruptedAtShutdown, "interrupted at shutdown"))
	return true
}

// Interrupt ends every operation still running with InterruptedAtShutdown
// and waits, until ctx ends, for them to return; it reports whether none
// is left.
func (s *Service) Interrupt(ctx context.Context) bool {
	s.ops.mu.Lock()
	s.ops.rootContext()
	s.ops.draining = true
	stop := s.ops.interrupt
	s.ops.mu.Unlock()
	stop(mongoerr.New(mongoerr.InterruptedAtShutdown, "interrupted at shutdown"))
	return s.waitIdle(ctx)
}

// Running is how many operations are running now.
func (s *Service) Running() int {
	s.ops.mu.Lock()
	defer s.ops.mu.Unlock()
	return len(s.ops.ops)
}

// waitIdle waits until no operation runs or ctx ends.
func (s *Service) waitIdle(ctx context.Context) bool {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for s.Running() > 0 {
		select {
		case <-ctx.Done():
			return s.Running() == 0
		case <-t.C:
		}
	}
	return true
}

// binding is the context a cursor's reads check: the context of the
// command reading from it now (the find or aggregate that opened it, then
// each getMore in turn), as MongoDB reattaches a cursor to each getMore's
// operation. A cursor is used by one command at a time, handed over under
// the cursor registry's lock, so rebinding needs no further
// synchronization. op is that command's operation (nil between
// commands), to which the cursor's writes ($out, $merge) leave their wait
// for durability (deferDurable).
type binding struct {
	context.Context
	op *activeOp
}

// bind makes b the context of the command whose context is ctx and whose
// operation is op.
func (b *binding) bind(ctx context.Context, op *activeOp) { b.Context, b.op = ctx, op }

// boundSource is a cursor's source with its binding and the part of the
// opening command's maxTimeMS it has left: the time a cursor's commands
// spend reading counts against it, the time between them does not, as in
// MongoDB.
type boundSource struct {
	cursors.Source
	ctx     *binding
	limited bool
	left    time.Duration
	// opener is the operation that opened the cursor: its command is a
	// getMore's originatingCommand, and the scans it opened count their
	// work into its stats.
	opener *activeOp
	// view is the state a snapshot read's cursor reads, pinned until the
	// cursor closes (unpin), and read by the scans its getMores open
	// ($lookup's).
	view  *engine.ReadView
	unpin func()
	// atClusterTime is the time of view a read at readConcern snapshot
	// outside a transaction reads, which each getMore reports as the
	// opening command did; zero for any other cursor.
	atClusterTime clock.Time
}

// Close closes the source and lets go of its view.
func (bs *boundSource) Close() error {
	err := bs.Source.Close()
	if bs.unpin != nil {
		bs.unpin()
		bs.unpin = nil
	}
	return err
}

// attach binds the cursor to the command whose context is ctx and whose
// operation is op, bounded by the maxTimeMS it has left unless unbounded
// (the maxTimeNeverTimeOut fail point); detach, called when that command
// is done with it, charges the time spent, adds the work the opener's
// scans did meanwhile to op's, and unbinds it.
func (bs *boundSource) attach(ctx context.Context, op *activeOp, unbounded bool) (detach func()) {
	stop := context.CancelFunc(func() {})
	if bs.limited && !unbounded {
		ctx, stop = context.WithTimeoutCause(ctx, bs.left, errMaxTimeMS)
	}
	if bs.view != nil {
		ctx = engine.WithReadView(ctx, bs.view)
	}
	bs.ctx.bind(ctx, op)
	start := time.Now()
	var before engine.OpStats
	if bs.opener != nil {
		before = bs.opener.stats
	}
	return func() {
		bs.left -= time.Since(start)
		bs.ctx.bind(context.Background(), nil)
		stop()
		if bs.opener != nil && op != nil {
			op.stats.Add(bs.opener.stats.Since(before))
			op.out.origin = bs.opener.cmd
		}
	}
}

// Park parks the source between commands, through the wrapper (see
// cursors.Parker).
func (bs *boundSource) Park() bool {
	p, ok := bs.Source.(cursors.Parker)
	return ok && p.Park()
}

// Restore revalidates the source after a yield between commands (a dropped
// collection or index kills the cursor), through the wrapper.
func (bs *boundSource) Restore() error {
	if r, ok := bs.Source.(cursors.Restorer); ok {
		return r.Restore()
	}
	return nil
}

// Lend lends the next document through the wrapper (see docsrc.Lender).
func (bs *boundSource) Lend() (bson.Raw, error) { return docsrc.Lend(bs.Source) }

// Exhausted reports, through the wrapper, that the source knows it has
// nothing left (see cursors.Cursor.Exhausted).
func (bs *boundSource) Exhausted() bool {
	e, ok := bs.Source.(cursors.Exhauster)
	return ok && e.Exhausted()
}
