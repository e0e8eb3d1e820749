package commands

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

func init() {
	// MongoDB parses none of them with an IDL: other fields are ignored.
	registerAdmin(replSetStepDownCmd, untyped("replSetStepDown", arg("force", tAny), arg("secondaryCatchUpPeriodSecs", tAny)), "replSetStepDown")
	registerAdmin(replSetFreezeCmd, untyped("replSetFreeze"), "replSetFreeze")
	registerAdmin(replSetStepUpCmd, untyped("replSetStepUp",
		ignore("skipDryRun", tAny, "the dry run of a one-member set's election cannot fail: skipping it changes nothing")), "replSetStepUp")
	for _, n := range []string{"replSetStepDown", "replSetFreeze", "replSetStepUp"} {
		authzRules[n] = onCluster("replSetStateChange")
	}
}

// errStepDownInterrupted is the error of the writes and transaction
// statements a step down interrupts.
var errStepDownInterrupted = mongoerr.New(mongoerr.InterruptedDueToReplStateChange, "operation was interrupted")

// replSetStepDownCmd steps the primary down: {replSetStepDown: secs,
// secondaryCatchUpPeriodSecs, force}. The member stops taking writes and
// interrupts those running, then waits secondaryCatchUpPeriodSecs (10, or
// 0 with force) for an electable secondary to catch up. A one-member set
// has none: without force the step down then fails with
// ExceededTimeLimit and the member is the writable primary again; with
// force it becomes a secondary, aborts the open transactions (those of
// busy sessions at their next command, see runInTxn), and stands
// for election secs (60 when 0 or not a number) after the command began,
// when, the only member, it is elected at once. Connections stay open and
// cursors keep reading, as in MongoDB 4.2 and later.
// https://www.mongodb.com/docs/v7.0/reference/command/replSetStepDown/
func replSetStepDownCmd(s *Service, r *Request) (bson.Raw, error) {
	start := time.Now()
	force := values.Truthy(r.args.value("force"))
	if err := s.notReplSet(); err != nil {
		return nil, err
	}
	secs, _ := safeInt64(r.args.first())
	switch {
	case secs == 0:
		secs = 60
	case secs < 0:
		return nil, mongoerr.New(mongoerr.BadValue, "stepdown period must be a positive integer")
	}
	catchUp := int64(10)
	if force {
		catchUp = 0
	}
	if v := r.args.value("secondaryCatchUpPeriodSecs"); v.Type != 0 {
		var err error
		if catchUp, err = extractInteger("secondaryCatchUpPeriodSecs", v); err != nil {
			return nil, err
		}
		if catchUp < 0 {
			return nil, mongoerr.New(mongoerr.BadValue, "secondaryCatchUpPeriodSecs period must be a positive or absent")
		}
	}
	if secs < catchUp {
		return nil, mongoerr.New(mongoerr.BadValue, "stepdown period must be longer than secondaryCatchUpPeriodSecs")
	}
	until := start.Add(time.Duration(secs) * time.Second)
	return nil, s.stepDown(r.Ctx, start.Add(time.Duration(catchUp)*time.Second), until, force)
}

// stepDown is replSetStepDown's state change: it waits for a secondary
// until catchUpUntil, then, with force, steps down until until.
func (s *Service) stepDown(ctx context.Context, catchUpUntil, until time.Time, force bool) error {
	t := &s.topo
	t.init(s)
	t.mu.Lock()
	switch s.role() {
	case roleSecondary:
		t.mu.Unlock()
		return mongoerr.New(mongoerr.NotWritablePrimary, "not primary so can't step down")
	case roleSteppingDown:
		t.mu.Unlock()
		return mongoerr.New(mongoerr.ConflictingOperationInProgress, "This node is already in the process of stepping down")
	}
	t.setRole(roleSteppingDown)
	t.mu.Unlock()
	s.ops.killWhere(func(op *activeOp) bool { return op.interruptedByStepDown }, errStepDownInterrupted)

	// No secondary will catch up: the set has one member.
	wait := time.NewTimer(time.Until(catchUpUntil))
	defer wait.Stop()
	var err error
	select {
	case <-wait.C:
	case <-ctx.Done():
		err = mongoerr.Interruption(ctx)
	case <-s.closing():
		err = mongoerr.New(mongoerr.InterruptedAtShutdown, "interrupted at shutdown")
	}
	now := time.Now()
	t.mu.Lock()
	switch {
	case err != nil:
	case !now.Before(until):
		err = mongoerr.New(mongoerr.ExceededTimeLimit, "By the time we were ready to step down, we were already past the time we were supposed to step down until")
	case !force:
		err = mongoerr.New(mongoerr.ExceededTimeLimit, "No electable secondaries caught up as of %s. Please use the replSetStepDown command with the argument {force: true} to force node to step down.", now.Format("2006-01-02T15:04:05.000-07:00"))
	}
	if err != nil {
		t.setRole(rolePrimary) // the step down failed: no election
		t.mu.Unlock()
		return err
	}
	t.stepDownUntil = until
	t.downs.Add(1)
	t.setRole(roleSecondary)
	t.scheduleElection()
	t.mu.Unlock()
	s.Sessions.AbortIdle()
	return nil
}

// replSetFreezeCmd keeps a secondary from standing for election for secs
// seconds ({replSetFreeze: secs}, read as a 32-bit integer, 0 when not a
// number), or with 0 ends its stepdown or freeze period: a one-member set
// then elects itself at once, after the reply. A primary cannot be
// frozen.
// https://www.mongodb.com/docs/v7.0/reference/command/replSetFreeze/
func replSetFreezeCmd(s *Service, r *Request) (bson.Raw, error) {
	if err := s.notReplSet(); err != nil {
		return nil, err
	}
	secs, _ := safeInt32(r.args.first())
	t := &s.topo
	t.init(s)
	t.mu.Lock()
	defer t.mu.Unlock()
	if s.role() != roleSecondary {
		return nil, mongoerr.New(mongoerr.NotSecondary, "Cannot freeze node when primary or running for election, state: Primary")
	}
	now := time.Now()
	switch {
	case secs == 0:
		t.stepDownUntil = now
		t.scheduleElection()
		return marshal(bson.D{{Key: "info", Value: "unfreezing"}}), nil
	case secs > 0:
		if until := now.Add(time.Duration(secs) * time.Second); until.After(t.stepDownUntil) {
			t.stepDownUntil = until
			t.scheduleElection()
		}
		if secs == 1 {
			return marshal(bson.D{{Key: "warning", Value: "you really want to freeze for only 1 second?"}}), nil
		}
	}
	return nil, nil
}

// replSetStepUpCmd makes a secondary whose stepdown or freeze period is
// over stand for election, which the only member of its set wins at once;
// it answers once the member is the primary. A primary answers ok; a
// secondary within its period, or a primary stepping down, fails.
// https://www.mongodb.com/docs/v7.0/reference/command/replSetStepUp/
func replSetStepUpCmd(s *Service, r *Request) (bson.Raw, error) {
	if err := s.notReplSet(); err != nil {
		return nil, err
	}
	t := &s.topo
	t.init(s)
	t.mu.Lock()
	defer t.mu.Unlock()
	switch s.role() {
	case roleSteppingDown:
		return nil, mongoerr.New(mongoerr.CommandFailed, "Election failed due to concurrent stepdown.")
	case roleSecondary:
		if time.Now().Before(t.stepDownUntil) {
			return nil, mongoerr.New(mongoerr.CommandFailed, "Election failed.")
		}
		t.setRole(rolePrimary)
	}
	return nil, nil
}
