package driver_test

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/internal/instance"
)

// replSetServer starts a Folio reporting a one-member replica set.
func replSetServer(t *testing.T) (*mongo.Client, *instance.Instance) {
	t.Helper()
	cfg := defaultConfig()
	cfg.ReplSetName = "rs0"
	in := startInstance(t, cfg)
	return connect(t, in), in
}

// helloOf runs cmd (a hello) on admin and returns the reply.
func helloOf(t *testing.T, client *mongo.Client, cmd bson.D) bson.Raw {
	t.Helper()
	reply, err := client.Database("admin").RunCommand(context.Background(), cmd).Raw()
	if err != nil {
		t.Fatal(err)
	}
	return reply
}

// TestHelloTopologyVersion checks hello's topologyVersion (a process id and
// a NumberLong counter, the same across hellos while nothing changes) and
// the reply's field order, MongoDB 7.0's, on a replica set member and on a
// standalone.
func TestHelloTopologyVersion(t *testing.T) {
	rs, _ := replSetServer(t)
	standalone, _ := startServer(t)
	for _, tc := range []struct {
		client *mongo.Client
		cmd    string
		want   []string
	}{
		{rs, "hello", []string{"helloOk", "topologyVersion", "hosts", "setName", "setVersion", "isWritablePrimary", "secondary", "primary", "me", "electionId", "lastWrite", "maxBsonObjectSize"}},
		{rs, "isMaster", []string{"helloOk", "topologyVersion", "hosts", "setName", "setVersion", "ismaster", "secondary", "primary", "me", "electionId", "lastWrite", "maxBsonObjectSize"}},
		{standalone, "hello", []string{"helloOk", "isWritablePrimary", "topologyVersion", "maxBsonObjectSize"}},
	} {
		reply := helloOf(t, tc.client, bson.D{{Key: tc.cmd, Value: 1}, {Key: "helloOk", Value: true}})
		if got := keysOf(t, reply); !slices.Equal(got[:len(tc.want)], tc.want) {
			t.Errorf("%s: fields %v, want them to start %v", tc.cmd, got, tc.want)
		}
		tv := reply.Lookup("topologyVersion").Document()
		if tv.Lookup("processId").Type != bson.TypeObjectID || tv.Lookup("counter").Type != bson.TypeInt64 {
			t.Errorf("%s: topologyVersion %v", tc.cmd, tv)
		}
		again := helloOf(t, tc.client, bson.D{{Key: tc.cmd, Value: 1}}).Lookup("topologyVersion").Document()
		if !slices.Equal(again, tv) {
			t.Errorf("%s: topologyVersion %v then %v", tc.cmd, tv, again)
		}
	}
}

// TestHelloLastWrite: a member's hello gives the optime and date of its
// last write, which its one-member majority has too.
func TestHelloLastWrite(t *testing.T) {
	client, _ := replSetServer(t)
	ctx := context.Background()
	if _, err := client.Database(testDB).Collection("lastwrite").InsertOne(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	// the insert's oplog entry, the newest
	entry, err := client.Database("local").Collection("oplog.rs").FindOne(ctx, bson.D{}, options.FindOne().SetSort(bson.D{{Key: "$natural", Value: -1}})).Raw()
	if err != nil {
		t.Fatal(err)
	}
	wt, wi := entry.Lookup("ts").Timestamp()
	lw := helloOf(t, client, bson.D{{Key: "hello", Value: 1}}).Lookup("lastWrite").Document()
	if got := keysOf(t, lw); !slices.Equal(got, []string{"opTime", "lastWriteDate", "majorityOpTime", "majorityWriteDate"}) {
		t.Fatalf("lastWrite %v", lw)
	}
	ts, i := lw.Lookup("opTime", "ts").Timestamp()
	if (bson.Timestamp{T: ts, I: i}).Compare(bson.Timestamp{T: wt, I: wi}) < 0 || lw.Lookup("opTime", "t").Type != bson.TypeInt64 {
		t.Errorf("lastWrite.opTime %v before the insert's entry %v", lw.Lookup("opTime"), entry)
	}
	if date := lw.Lookup("lastWriteDate").Time(); date.Unix() != int64(ts) || !slices.Equal(lw.Lookup("majorityOpTime").Document(), lw.Lookup("opTime").Document()) {
		t.Errorf("lastWrite %v", lw)
	}
}

// TestAwaitableHelloArguments runs hello with topologyVersion and
// maxAwaitTimeMS as MongoDB 7.0's awaitable_hello test does: the codes of
// malformed ones, and which wait.
func TestAwaitableHelloArguments(t *testing.T) {
	client, _ := replSetServer(t)
	tv := helloOf(t, client, bson.D{{Key: "hello", Value: 1}}).Lookup("topologyVersion").Document()
	pid, counter := tv.Lookup("processId").ObjectID(), tv.Lookup("counter").Int64()
	version := func(pid any, counter any) bson.D {
		return bson.D{{Key: "processId", Value: pid}, {Key: "counter", Value: counter}}
	}
	for _, tc := range []struct {
		name string
		args bson.D
		code int
	}{
		{"tv not an object", bson.D{{Key: "topologyVersion", Value: "topology_version_string"}, {Key: "maxAwaitTimeMS", Value: 0}}, 14},
		{"processId a string", bson.D{{Key: "topologyVersion", Value: version("pid1", counter)}, {Key: "maxAwaitTimeMS", Value: 0}}, 14},
		{"counter a double", bson.D{{Key: "topologyVersion", Value: version(pid, 0.0)}, {Key: "maxAwaitTimeMS", Value: 0}}, 14},
		{"counter an int", bson.D{{Key: "topologyVersion", Value: version(pid, int32(0))}, {Key: "maxAwaitTimeMS", Value: 0}}, 14},
		{"no counter", bson.D{{Key: "topologyVersion", Value: bson.D{{Key: "processId", Value: pid}}}, {Key: "maxAwaitTimeMS", Value: 0}}, 40414},
		{"no processId", bson.D{{Key: "topologyVersion", Value: bson.D{{Key: "counter", Value: counter}}}, {Key: "maxAwaitTimeMS", Value: 0}}, 40414},
		{"extra field", bson.D{{Key: "topologyVersion", Value: append(version(pid, counter), bson.E{Key: "randomField", Value: "x"})}, {Key: "maxAwaitTimeMS", Value: 0}}, 40415},
		{"negative counter", bson.D{{Key: "topologyVersion", Value: version(pid, int64(-1))}, {Key: "maxAwaitTimeMS", Value: 0}}, 31372},
		{"tv without maxAwaitTimeMS", bson.D{{Key: "topologyVersion", Value: tv}}, 31368},
		{"maxAwaitTimeMS without tv", bson.D{{Key: "maxAwaitTimeMS", Value: 0}}, 31368},
		{"maxAwaitTimeMS a string", bson.D{{Key: "topologyVersion", Value: tv}, {Key: "maxAwaitTimeMS", Value: "x"}}, 14},
		{"negative maxAwaitTimeMS", bson.D{{Key: "topologyVersion", Value: tv}, {Key: "maxAwaitTimeMS", Value: -1}}, 51024},
		{"counter from the future", bson.D{{Key: "topologyVersion", Value: version(pid, counter+1)}, {Key: "maxAwaitTimeMS", Value: 0}}, 31382},
		// another process's version: answered at once, whatever its
		// counter (a wait would outlast the test's deadline)
		{"other process", bson.D{{Key: "topologyVersion", Value: version(bson.NewObjectID(), counter)}, {Key: "maxAwaitTimeMS", Value: 3_600_000}}, 0},
		{"other process, higher counter", bson.D{{Key: "topologyVersion", Value: version(bson.NewObjectID(), counter+1)}, {Key: "maxAwaitTimeMS", Value: 3_600_000}}, 0},
		{"null fields are absent", bson.D{{Key: "topologyVersion", Value: nil}, {Key: "maxAwaitTimeMS", Value: nil}}, 0},
	} {
		for _, name := range []string{"hello", "isMaster", "ismaster"} {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			err := client.Database("admin").RunCommand(ctx, append(bson.D{{Key: name, Value: 1}}, tc.args...)).Err()
			cancel()
			if got := serverCode(err); got != tc.code {
				t.Errorf("%s (%s): %v, want code %d", tc.name, name, err, tc.code)
			}
		}
	}
	// the current version waits for maxAwaitTimeMS, then answers with it
	start := time.Now()
	reply := helloOf(t, client, bson.D{{Key: "hello", Value: 1}, {Key: "topologyVersion", Value: tv}, {Key: "maxAwaitTimeMS", Value: int64(300)}})
	if waited := time.Since(start); waited < 300*time.Millisecond {
		t.Errorf("an awaitable hello answered after %v, before its maxAwaitTimeMS", waited)
	}
	if got := reply.Lookup("topologyVersion").Document(); !slices.Equal(got, tv) {
		t.Errorf("topologyVersion %v after the wait, want %v", got, tv)
	}
}

// TestStreamingMonitor: the driver, seeing hello's topologyVersion,
// monitors the server with awaitable hellos streamed on one connection
// (exhaust), as it does a MongoDB 4.4 or later; their heartbeats are
// reported awaited.
func TestStreamingMonitor(t *testing.T) {
	cfg := defaultConfig()
	cfg.ReplSetName = "rs0"
	in := startInstance(t, cfg)
	var awaited, failed atomic.Int64
	monitor := &event.ServerMonitor{
		ServerHeartbeatSucceeded: func(e *event.ServerHeartbeatSucceededEvent) {
			if e.Awaited {
				awaited.Add(1)
			}
		},
		ServerHeartbeatFailed: func(*event.ServerHeartbeatFailedEvent) { failed.Add(1) },
	}
	client := connect(t, in, options.Client().SetHeartbeatInterval(500*time.Millisecond).SetServerMonitor(monitor).SetServerMonitoringMode(options.ServerMonitoringModeStream))
	for deadline := time.Now().Add(hangGuard); awaited.Load() < 3; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d awaited heartbeats in %v", awaited.Load(), hangGuard)
		}
	}
	if n := failed.Load(); n != 0 {
		t.Errorf("%d heartbeats failed", n)
	}
	if err := client.Ping(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
}

// msgReply is an OP_MSG reply as read off the wire.
type msgReply struct {
	requestID, responseTo int32
	flags                 uint32
	doc                   bson.Raw
}

// readReply reads one uncompressed OP_MSG.
func readReply(t *testing.T, c net.Conn) msgReply {
	t.Helper()
	if err := c.SetReadDeadline(time.Now().Add(hangGuard)); err != nil {
		t.Fatal(err)
	}
	var h [16]byte
	if _, err := io.ReadFull(c, h[:]); err != nil {
		t.Fatal(err)
	}
	body := make([]byte, binary.LittleEndian.Uint32(h[0:])-16)
	if _, err := io.ReadFull(c, body); err != nil {
		t.Fatal(err)
	}
	return msgReply{
		requestID:  int32(binary.LittleEndian.Uint32(h[4:])),
		responseTo: int32(binary.LittleEndian.Uint32(h[8:])),
		flags:      binary.LittleEndian.Uint32(body),
		doc:        bson.Raw(body[5:]),
	}
}

// flagExhaustAllowed is OP_MSG's exhaustAllowed flag bit.
const flagExhaustAllowed = 1 << 16

// TestExhaustHello streams an awaitable hello asked with exhaustAllowed:
// the server sends replies unasked, each with moreToCome and answering the
// one before; a hello allowing exhaust must be awaitable (51756).
func TestExhaustHello(t *testing.T) {
	cfg := defaultConfig()
	cfg.ReplSetName = "rs0"
	in := startInstance(t, cfg)
	c := rawDial(t, in)
	tv := rawCommand(t, c, 1, bson.D{{Key: "hello", Value: 1}, {Key: "$db", Value: "admin"}}).Lookup("topologyVersion").Document()
	cmd := mustRaw(t, bson.D{{Key: "hello", Value: 1}, {Key: "topologyVersion", Value: tv}, {Key: "maxAwaitTimeMS", Value: int64(20)}, {Key: "$db", Value: "admin"}})
	if _, err := c.Write(message(2, opMsg, msgBody(flagExhaustAllowed, cmd))); err != nil {
		t.Fatal(err)
	}
	prev := int32(2)
	for i := range 4 {
		r := readReply(t, c)
		if r.responseTo != prev || r.flags&flagMoreToCome == 0 || r.doc.Lookup("ok").Double() != 1 {
			t.Fatalf("streamed reply %d: responseTo %d (want %d), flags %#x, %v", i, r.responseTo, prev, r.flags, r.doc)
		}
		if got := r.doc.Lookup("topologyVersion").Document(); !slices.Equal(got, tv) {
			t.Fatalf("streamed reply %d: topologyVersion %v, want %v", i, got, tv)
		}
		prev = r.requestID
	}

	c2 := rawDial(t, in)
	plain := mustRaw(t, bson.D{{Key: "hello", Value: 1}, {Key: "$db", Value: "admin"}})
	if _, err := c2.Write(message(3, opMsg, msgBody(flagExhaustAllowed, plain))); err != nil {
		t.Fatal(err)
	}
	if r := readReply(t, c2); r.responseTo != 3 || r.flags&flagMoreToCome != 0 || r.doc.Lookup("code").Int32() != 51756 {
		t.Fatalf("exhaust hello without maxAwaitTimeMS: flags %#x, %v", r.flags, r.doc)
	}
}

// TestHelloConnectionMetrics: serverStatus' connections section has MongoDB
// 7.0's fields in its order, and counts the connections streaming an
// exhaust hello (until they close) and the hellos awaiting a topology
// change.
func TestHelloConnectionMetrics(t *testing.T) {
	cfg := defaultConfig()
	cfg.ReplSetName = "rs0"
	in := startInstance(t, cfg)
	client := connect(t, in)
	conns := func() bson.Raw {
		return replyOf(t, client, "admin", bson.D{{Key: "serverStatus", Value: 1}}).Lookup("connections").Document()
	}
	if got := strings.Join(keysOf(t, conns()), " "); got != "current available totalCreated rejected active threaded exhaustIsMaster exhaustHello awaitingTopologyChanges" {
		t.Errorf("connections fields %s", got)
	}
	waitFor := func(what string, ok func(bson.Raw) bool) {
		t.Helper()
		for deadline := time.Now().Add(hangGuard); ; time.Sleep(10 * time.Millisecond) {
			c := conns()
			if ok(c) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: connections %s", what, c)
			}
		}
	}
	count := func(c bson.Raw, field string) int32 { return c.Lookup(field).Int32() }
	if c := conns(); count(c, "active") < 1 || count(c, "threaded") != count(c, "current") || count(c, "exhaustHello") != 0 {
		t.Errorf("connections %s", c)
	}

	c := rawDial(t, in)
	tv := rawCommand(t, c, 1, bson.D{{Key: "hello", Value: 1}, {Key: "$db", Value: "admin"}}).Lookup("topologyVersion").Document()
	exhaust := mustRaw(t, bson.D{{Key: "hello", Value: 1}, {Key: "topologyVersion", Value: tv}, {Key: "maxAwaitTimeMS", Value: int64(20)}, {Key: "$db", Value: "admin"}})
	if _, err := c.Write(message(2, opMsg, msgBody(flagExhaustAllowed, exhaust))); err != nil {
		t.Fatal(err)
	}
	readReply(t, c)
	waitFor("streaming", func(c bson.Raw) bool { return count(c, "exhaustHello") == 1 && count(c, "exhaustIsMaster") == 0 })

	waiting := rawDial(t, in)
	awaitable := mustRaw(t, bson.D{{Key: "isMaster", Value: 1}, {Key: "topologyVersion", Value: tv}, {Key: "maxAwaitTimeMS", Value: int64(hangGuard / time.Millisecond)}, {Key: "$db", Value: "admin"}})
	if _, err := waiting.Write(message(3, opMsg, msgBody(0, awaitable))); err != nil {
		t.Fatal(err)
	}
	waitFor("awaiting", func(c bson.Raw) bool { return count(c, "awaitingTopologyChanges") >= 1 })
	waiting.Close()
	c.Close()
	waitFor("closed", func(c bson.Raw) bool {
		return count(c, "exhaustHello") == 0 && count(c, "awaitingTopologyChanges") == 0
	})
}

// TestAwaitingHelloEndsAtShutdown: a hello waiting for a topology change
// does not hold the shutdown for its maxAwaitTimeMS: it fails at once with
// InterruptedAtShutdown, as a primary's operations do, and the stream of
// an exhaust hello ends with that reply.
func TestAwaitingHelloEndsAtShutdown(t *testing.T) {
	cfg := defaultConfig()
	cfg.ReplSetName = "rs0"
	in, err := instance.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", in.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tv := rawCommand(t, c, 1, bson.D{{Key: "hello", Value: 1}, {Key: "$db", Value: "admin"}}).Lookup("topologyVersion").Document()
	cmd := mustRaw(t, bson.D{{Key: "hello", Value: 1}, {Key: "topologyVersion", Value: tv}, {Key: "maxAwaitTimeMS", Value: int64(3_600_000)}, {Key: "$db", Value: "admin"}})
	if _, err := c.Write(message(2, opMsg, msgBody(flagExhaustAllowed, cmd))); err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() {
		time.Sleep(100 * time.Millisecond) // let the hello start waiting
		// a deadline far beyond the test's guard: only the hello's
		// end lets Close return in time
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		closed <- in.Close(ctx)
	}()
	r := readReply(t, c)
	if r.responseTo != 2 || r.flags&flagMoreToCome != 0 || r.doc.Lookup("code").Int32() != 11600 {
		t.Fatalf("the waiting hello at shutdown: responseTo %d, flags %#x, %v", r.responseTo, r.flags, r.doc)
	}
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(hangGuard):
		t.Fatal("shutdown still waiting")
	}
}

// TestNotPrimaryErrorsCarryTopologyVersion: on a replica set member, an
// error saying the server is not a writable primary carries the
// topologyVersion, which drivers compare with theirs; others do not.
func TestNotPrimaryErrorsCarryTopologyVersion(t *testing.T) {
	cfg := defaultConfig()
	cfg.ReplSetName = "rs0"
	cfg.TestCommands = true
	in := startInstance(t, cfg)
	client := connect(t, in, options.Client().SetRetryWrites(false))
	admin := client.Database("admin")
	ctx := context.Background()
	tv := helloOf(t, client, bson.D{{Key: "hello", Value: 1}}).Lookup("topologyVersion").Document()
	for _, tc := range []struct {
		code int32
		want bool
	}{{10107, true}, {13435, true}, {11602, true}, {2, false}} {
		fp := bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: bson.D{{Key: "times", Value: 1}}},
			{Key: "data", Value: bson.D{{Key: "failCommands", Value: bson.A{"find"}}, {Key: "errorCode", Value: tc.code}}}}
		if err := admin.RunCommand(ctx, fp).Err(); err != nil {
			t.Fatal(err)
		}
		reply, err := client.Database(testDB).RunCommand(ctx, bson.D{{Key: "find", Value: "c"}}).Raw()
		if serverCode(err) != int(tc.code) {
			t.Fatalf("find: %v, want code %d", err, tc.code)
		}
		got, has := reply.Lookup("topologyVersion").DocumentOK()
		if has != tc.want || (has && !slices.Equal(got, tv)) {
			t.Errorf("code %d: topologyVersion %v in %v", tc.code, got, reply)
		}
	}
}
