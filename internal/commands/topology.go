package commands

import (
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/clock"
	"github.com/folio-db/folio/internal/mongoerr"
)

// topology is a replica set member's state as hello reports it, and what
// an awaitable hello waits on: MongoDB's topologyVersion, a process id
// chosen at start (Service.ProcessID) and a counter that grows at each
// change of the member's state a client must learn of. A hello naming the
// current version waits until the next change or its maxAwaitTimeMS;
// drivers keep one such hello outstanding per server (streaming, with
// exhaust) instead of polling.
//
// Folio's set has one member. It is the primary from the start; a step
// down (replSetStepDown) makes it a secondary until its stepdown period
// ends, when, the only member, it elects itself at once (MongoDB's
// prompt election of a one-member set); replSetFreeze and replSetStepUp
// move that election. Each election gives a new electionId, greater than
// every earlier one. A single primary's shutdown is not a change of state,
// as in MongoDB.
type topology struct {
	made, closed sync.Once
	// shutdown is closed when the server starts shutting down.
	shutdown chan struct{}
	// now is the role, read without the lock by every command.
	now atomic.Int32
	// downs counts the step downs: a transaction begun before the last
	// one is aborted at its next command (Session.TxnEpoch).
	downs atomic.Int64

	mu      sync.Mutex
	counter int64
	// changed is closed, and replaced, at each change of state.
	changed chan struct{}
	// electionID and elected are the current (or last) election's;
	// the first is the start of the process.
	electionID bson.ObjectID
	elected    time.Time
	// stepDownUntil is the end of the stepdown (or freeze) period, before
	// which the member does not stand for election; election is the timer
	// of the election at its end.
	stepDownUntil time.Time
	election      *time.Timer
}

// role is what a member is to its set.
type role int32

const (
	// rolePrimary is the writable primary.
	rolePrimary role = iota
	// roleSteppingDown is a primary whose step down waits for a secondary
	// to catch up: it takes no writes, and hello no longer calls it
	// writable, but it is still the set's primary.
	roleSteppingDown
	// roleSecondary is a secondary: the set has no primary.
	roleSecondary
)

// init makes t's channels and first election, once.
func (t *topology) init(s *Service) {
	t.made.Do(func() {
		t.shutdown, t.changed = make(chan struct{}), make(chan struct{})
		t.electionID, t.elected = s.ProcessID, s.Started
	})
}

// role is the member's role now.
func (s *Service) role() role {
	return role(s.topo.now.Load())
}

// Writable reports whether the server takes writes to replicated data:
// a standalone, or the primary. The background jobs that write (the TTL
// monitor, the session reaper, the advisor's and the chunks' records)
// pause meanwhile, as MongoDB's run on the primary only.
func (s *Service) Writable() bool {
	return s.ReplSetName == "" || s.role() == rolePrimary
}

// topologyState is a consistent reading of t.
type topologyState struct {
	role       role
	counter    int64
	changed    <-chan struct{}
	electionID bson.ObjectID
	elected    time.Time
}

// state reads the member's state.
func (s *Service) state() topologyState {
	t := &s.topo
	t.init(s)
	t.mu.Lock()
	defer t.mu.Unlock()
	return topologyState{role: s.role(), counter: t.counter, changed: t.changed, electionID: t.electionID, elected: t.elected}
}

// setRole changes the member's role and the topology version; t.mu is
// held. Becoming the primary is an election.
func (t *topology) setRole(r role) {
	if r == rolePrimary && role(t.now.Load()) == roleSecondary {
		t.electionID, t.elected = bson.NewObjectID(), time.Now()
	}
	t.now.Store(int32(r))
	t.counter++
	close(t.changed)
	t.changed = make(chan struct{})
}

// scheduleElection sets the election of a secondary for the end of its
// stepdown period; t.mu is held.
func (t *topology) scheduleElection() {
	if t.election != nil {
		t.election.Stop()
	}
	t.election = time.AfterFunc(time.Until(t.stepDownUntil), t.electIfDue)
}

// electIfDue makes a secondary whose stepdown period is over the primary,
// unless the server is shutting down.
func (t *topology) electIfDue() {
	t.mu.Lock()
	defer t.mu.Unlock()
	select {
	case <-t.shutdown:
		return
	default:
	}
	if role(t.now.Load()) == roleSecondary && !time.Now().Before(t.stepDownUntil) {
		t.setRole(rolePrimary)
	}
}

// closing is closed once the server starts shutting down.
func (s *Service) closing() <-chan struct{} {
	s.topo.init(s)
	return s.topo.shutdown
}

// closeTopology marks the start of the shutdown, which ends the waits and
// cancels a pending election.
func (s *Service) closeTopology() {
	t := &s.topo
	t.init(s)
	t.closed.Do(func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		close(t.shutdown)
		if t.election != nil {
			t.election.Stop()
		}
	})
}

// topologyVersion is the version hello reports, in its reply's shape.
func (s *Service) topologyVersion() bson.D {
	return s.state().version(s)
}

// memberFields are the fields hello (and serverStatus's repl section)
// gives a replica set member in state st, in MongoDB's order; writable
// names the writable-primary flag (isWritablePrimary, or ismaster for the
// legacy names). A secondary knows no primary, the set's only member
// having stepped down; a primary stepping down is still the primary.
func (s *Service) memberFields(st topologyState, writable string) bson.D {
	d := bson.D{
		{Key: "hosts", Value: bson.A{s.Host}},
		{Key: "setName", Value: s.ReplSetName},
		{Key: "setVersion", Value: int32(1)},
		{Key: writable, Value: st.role == rolePrimary},
		{Key: "secondary", Value: st.role == roleSecondary},
	}
	if st.role != roleSecondary {
		d = append(d, bson.E{Key: "primary", Value: s.Host})
	}
	d = append(d, bson.E{Key: "me", Value: s.Host})
	if st.role != roleSecondary {
		d = append(d, bson.E{Key: "electionId", Value: st.electionID})
	}
	if s.Engine.HasOplog() {
		d = append(d, bson.E{Key: "lastWrite", Value: s.lastWrite()})
	}
	return d
}

// lastWrite is hello's lastWrite: the optime of the newest oplog entry
// and its date (in whole seconds, as MongoDB gives it), and those of the
// newest the set's majority, its one member, has on disk
// (Engine.OplogMajority).
func (s *Service) lastWrite() bson.D {
	opTime := func(st uint64) (bson.D, bson.DateTime) {
		t := clock.Time(st)
		return bson.D{{Key: "ts", Value: bson.Timestamp{T: t.Secs(), I: t.Inc()}}, {Key: "t", Value: int64(term)}},
			bson.NewDateTimeFromTime(time.Unix(int64(t.Secs()), 0))
	}
	lastSt, majSt := s.Engine.OplogPoints()
	last, lastDate := opTime(lastSt)
	maj, majDate := opTime(majSt)
	return bson.D{{Key: "opTime", Value: last}, {Key: "lastWriteDate", Value: lastDate},
		{Key: "majorityOpTime", Value: maj}, {Key: "majorityWriteDate", Value: majDate}}
}

// version is st's topologyVersion in hello's shape.
func (st topologyState) version(s *Service) bson.D {
	return bson.D{{Key: "processId", Value: s.ProcessID}, {Key: "counter", Value: st.counter}}
}

// topologyVersionSpec declares hello's topologyVersion (MongoDB's
// topology_version.idl).
var topologyVersionSpec = &argSpec{path: "hello.topologyVersion", fields: []argField{
	required("processId", tObjectID),
	required("counter", tNumberLong),
}}

// awaitTopologyChange is the wait of an awaitable hello, which names the
// version it last saw (tv) and how long it may wait (maxAwait, in ms):
// when tv is this process's current version it returns at the next change
// or once maxAwait has passed; another process's version, or an older
// counter, returns at once. Shutdown ends the wait with
// InterruptedAtShutdown, as it ends every operation of a primary, rather
// than hold the shutdown for maxAwait; so does the end of the request's
// context. It returns how long it waited, which the slow-operation log
// leaves out, as MongoDB's.
func (s *Service) awaitTopologyChange(r *Request, tv cmdArgs, maxAwait int64) (time.Duration, error) {
	pid, counter := tv.value("processId").ObjectID(), tv.value("counter").Int64()
	st := s.state()
	if pid != s.ProcessID || counter < st.counter {
		return 0, nil
	}
	if counter > st.counter {
		return 0, mongoerr.New(mongoerr.TopologyVersionFromFuture, "Received a topology version with counter: %d which is greater than the server topology version counter: %d", counter, st.counter)
	}
	start := time.Now()
	t := time.NewTimer(time.Duration(maxAwait) * time.Millisecond)
	defer t.Stop()
	s.Hello.awaiting.Add(1)
	defer s.Hello.awaiting.Add(-1)
	select {
	case <-t.C:
	case <-st.changed:
	case <-s.closing():
		return time.Since(start), mongoerr.New(mongoerr.InterruptedAtShutdown, "interrupted at shutdown")
	case <-r.Ctx.Done():
		return time.Since(start), mongoerr.Interruption(r.Ctx)
	}
	return time.Since(start), nil
}

// withField is a copy of doc with its field key's value replaced by the
// document v, in place; doc must have the field.
func withField(doc bson.Raw, key string, v bson.Raw) bson.Raw {
	idx, out := bsoncore.AppendDocumentStart(nil)
	elems, _ := doc.Elements()
	for _, e := range elems {
		if e.Key() == key {
			out = bsoncore.AppendDocumentElement(out, key, v)
		} else {
			out = append(out, e...)
		}
	}
	out, _ = bsoncore.AppendDocumentEnd(out, idx)
	return out
}
