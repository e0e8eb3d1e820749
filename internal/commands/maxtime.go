package commands

import (
	"context"
	"time"
)

// An operation's maxTimeMS ends its context at its deadline. One timer per
// registry does it for every operation, set for the earliest deadline
// (opRegistry.sweep), rather than one timer per operation: drivers send
// maxTimeMS with every command once a client timeout is set, and a timer
// made and stopped per command cost more than a short command's reads.

// deadlineCtx is the context of an operation with a maxTimeMS: the
// registry's sweep ends it, with errMaxTimeMS, at its deadline, which it
// reports.
type deadlineCtx struct {
	context.Context
	deadline time.Time
}

func (c deadlineCtx) Deadline() (time.Time, bool) { return c.deadline, true }

// Err also reads the clock, as MongoDB's interrupt checks compare the
// deadline with it: past the deadline, an operation polling its context
// stops even when the sweep that ends the context runs late on a busy
// machine. It reads the monotonic clock alone (time.Until of a deadline
// taken from time.Now), not the wall clock as well, since it runs at
// every interrupt check.
func (c deadlineCtx) Err() error {
	if err := c.Context.Err(); err != nil {
		return err
	}
	if time.Until(c.deadline) <= 0 {
		return context.DeadlineExceeded
	}
	return nil
}

// watchDeadline makes the sweep end op at op.deadline. The caller holds
// o.mu and registered op.
func (o *opRegistry) watchDeadline(op *activeOp) {
	if !o.nextSweep.IsZero() && !op.deadline.Before(o.nextSweep) {
		return // the sweep wakes before, and then sees op
	}
	o.nextSweep = op.deadline
	if o.sweepWake == nil {
		o.sweepWake = make(chan struct{}, 1)
		go o.sweep(o.sweepWake, o.root.Done())
	}
	select {
	case o.sweepWake <- struct{}{}:
	default: // a wake-up is pending already
	}
}

// sweep ends the operations past their deadline whenever the earliest
// deadline passes or watchDeadline signals an earlier one, until the
// registry's root context ends (shutdown).
func (o *opRegistry) sweep(wake, done <-chan struct{}) {
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	var expired []*activeOp
	for {
		select {
		case <-done:
			return
		case <-wake:
		case <-t.C:
		}
		now := time.Now()
		var next time.Time
		o.mu.Lock()
		for _, op := range o.ops {
			switch {
			case op.deadline.IsZero():
			case !op.deadline.After(now):
				expired = append(expired, op)
			case next.IsZero() || op.deadline.Before(next):
				next = op.deadline
			}
		}
		o.nextSweep = next
		o.mu.Unlock()
		for i, op := range expired {
			op.kill(errMaxTimeMS)
			expired[i] = nil
		}
		expired = expired[:0]
		if !next.IsZero() {
			t.Reset(next.Sub(now))
		}
	}
}

// holdDeadline runs wait (the failCommand fail point's blockConnection)
// with op's maxTimeMS clock stopped, then moves its deadline by the time
// wait took: MongoDB evaluates that fail point before it gives an
// operation its time limit. killOp, a disconnect and shutdown still end
// wait (op.ctx).
func (o *opRegistry) holdDeadline(r *Request, wait func(ctx context.Context) error) error {
	op := r.op
	o.mu.Lock()
	deadline := op.deadline
	op.deadline = time.Time{}
	o.mu.Unlock()
	start := time.Now()
	err := wait(op.ctx)
	if deadline.IsZero() {
		return err
	}
	o.mu.Lock()
	op.deadline = deadline.Add(time.Since(start))
	o.watchDeadline(op)
	o.mu.Unlock()
	op.bind(r)
	return err
}
