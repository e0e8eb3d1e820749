package commands

import (
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/mongoerr"
)

// topology is what an awaitable hello waits on: MongoDB's topologyVersion,
// a process id chosen at start (Service.ProcessID) and a counter that grows
// at each change of the server's state a client must learn of. A hello
// naming the current version waits until the next change or its
// maxAwaitTimeMS; drivers keep one such hello outstanding per server
// (streaming, with exhaust) instead of polling. Folio's one-member replica
// set never changes state (no step down, no election; a single primary's
// shutdown is not one either, as in MongoDB): the counter stays 0, and
// only maxAwaitTimeMS, the request's end or the shutdown ends a wait.
type topology struct {
	made, closed sync.Once
	// shutdown is closed when the server starts shutting down.
	shutdown chan struct{}
}

// topologyCounter is the counter of this process's topology version.
const topologyCounter = int64(0)

// closing is closed once the server starts shutting down.
func (t *topology) closing() <-chan struct{} {
	t.made.Do(func() { t.shutdown = make(chan struct{}) })
	return t.shutdown
}

// close marks the start of the shutdown, which ends the waits.
func (t *topology) close() {
	t.closing()
	t.closed.Do(func() { close(t.shutdown) })
}

// topologyVersion is the version hello reports, in its reply's shape.
func (s *Service) topologyVersion() bson.D {
	return bson.D{{Key: "processId", Value: s.ProcessID}, {Key: "counter", Value: topologyCounter}}
}

// notPrimaryCodes are the errors that say the server is not (or no longer)
// a writable primary: on a replica set member their replies carry the
// topologyVersion, which drivers compare with the one they know to
// ignore a stale error (MongoDB's NotPrimaryError category).
var notPrimaryCodes = map[mongoerr.Code]bool{
	mongoerr.NotWritablePrimary:              true,
	mongoerr.NotPrimaryNoSecondaryOk:         true,
	mongoerr.NotPrimaryOrSecondary:           true,
	mongoerr.InterruptedDueToReplStateChange: true,
	mongoerr.PrimarySteppedDown:              true,
}

// topologyVersionSpec declares hello's topologyVersion (MongoDB's
// topology_version.idl).
var topologyVersionSpec = &argSpec{path: "hello.topologyVersion", fields: []argField{
	required("processId", tObjectID),
	required("counter", tNumberLong),
}}

// awaitTopologyChange is the wait of an awaitable hello, which names the
// version it last saw (tv) and how long it may wait (maxAwait, in ms):
// when tv is this process's current version it returns once maxAwait has
// passed (or at the next change, were there any); another process's
// version, or an older counter, returns at once. Shutdown ends the wait with
// InterruptedAtShutdown, as it ends every operation of a primary, rather
// than hold the shutdown for maxAwait; so does the end of the request's
// context. It returns how long it waited, which the slow-operation log
// leaves out, as MongoDB's.
func (s *Service) awaitTopologyChange(r *Request, tv cmdArgs, maxAwait int64) (time.Duration, error) {
	pid, counter := tv.value("processId").ObjectID(), tv.value("counter").Int64()
	now := topologyCounter
	if pid != s.ProcessID || counter < now {
		return 0, nil
	}
	if counter > now {
		return 0, mongoerr.New(mongoerr.TopologyVersionFromFuture, "Received a topology version with counter: %d which is greater than the server topology version counter: %d", counter, now)
	}
	start := time.Now()
	t := time.NewTimer(time.Duration(maxAwait) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.topo.closing():
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
