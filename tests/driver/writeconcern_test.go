package driver_test

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"
)

// TestWriteConcernUnsatisfiable: on a one-member replica set a write
// concern needing more members (w: 2) or an unknown tag applies the write
// and reports a writeConcernError: 100 UnsatisfiableWriteConcern, 79
// UnknownReplWriteConcern.
// https://www.mongodb.com/docs/v7.0/reference/write-concern/
func TestWriteConcernUnsatisfiable(t *testing.T) {
	client := startReplSet(t)
	ctx := context.Background()
	db := client.Database(testDB)
	for _, tt := range []struct {
		name     string
		w        any
		code     int
		codeName string
	}{
		{"w2", 2, 100, "UnsatisfiableWriteConcern"},
		{"tag", "tagX", 79, "UnknownReplWriteConcern"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			coll := db.Collection("wc_"+tt.name, options.Collection().SetWriteConcern(&writeconcern.WriteConcern{W: tt.w}))
			_, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}})
			var we mongo.WriteException
			if !errors.As(err, &we) || we.WriteConcernError == nil {
				t.Fatalf("insert: %v, want a write concern error", err)
			}
			if we.WriteConcernError.Code != tt.code || we.WriteConcernError.Name != tt.codeName || len(we.WriteErrors) != 0 {
				t.Fatalf("write concern error %+v, want %d %s", we.WriteConcernError, tt.code, tt.codeName)
			}
			if n, err := db.Collection("wc_"+tt.name).CountDocuments(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil || n != 1 {
				t.Fatalf("document written: %d, %v", n, err)
			}
			// findAndModify and catalog commands report it the same way.
			err = coll.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 1}}}}).Err()
			if serverCode(err) != tt.code {
				t.Fatalf("findAndModify: %v, want code %d", err, tt.code)
			}
			_, err = coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}})
			if serverCode(err) != tt.code {
				t.Fatalf("createIndexes: %v, want code %d", err, tt.code)
			}
		})
	}
}

// TestWriteConcernJournalAndUnacknowledged: j: 1 (any truthy number) and w:
// 0 writes succeed and are stored.
func TestWriteConcernJournalAndUnacknowledged(t *testing.T) {
	client := startReplSet(t)
	ctx := context.Background()
	db := client.Database(testDB)
	var res bson.M
	err := db.RunCommand(ctx, bson.D{
		{Key: "insert", Value: "j"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}}}},
		{Key: "writeConcern", Value: bson.D{{Key: "j", Value: 1}}},
	}).Decode(&res)
	if err != nil || res["n"] != int32(1) {
		t.Fatalf("insert with j: 1: %v %v", res, err)
	}
	if _, ok := res["writeConcernError"]; ok {
		t.Fatalf("j: 1 gave a write concern error: %v", res)
	}

	coll := db.Collection("w0", options.Collection().SetWriteConcern(writeconcern.Unacknowledged()))
	r, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 7}})
	if err != nil || r.Acknowledged {
		t.Fatalf("w: 0 insert: %+v, %v", r, err)
	}
	// Unacknowledged: the write lands after the driver returns.
	deadline := time.Now().Add(5 * time.Second)
	for {
		n, err := db.Collection("w0").CountDocuments(ctx, bson.D{{Key: "_id", Value: 7}})
		if err == nil && n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("w: 0 insert never stored: %d, %v", n, err)
		}
		time.Sleep(10 * time.Millisecond)
	}

	// A command that carries w: 0 in its body is read like any other
	// (RunCommand sends no moreToCome). As in MongoDB 7.0, insert, update
	// and delete answer their reply's fields at their defaults whatever
	// they did (write_commands.cpp's shouldSkipOutput, write_ops.idl), a
	// duplicate key included; other commands answer in full. The writes
	// are applied: findAndModify finds the insert and the update.
	n0 := bson.D{{Key: "n", Value: int32(0)}, {Key: "ok", Value: 1.0}}
	for _, tc := range []struct {
		cmd  bson.D
		want bson.D
	}{
		{bson.D{{Key: "insert", Value: "w0"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 8}}}}}, n0},
		{bson.D{{Key: "insert", Value: "w0"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 8}}}}}, n0},
		{bson.D{{Key: "update", Value: "w0"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 8}}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}}}}}},
			bson.D{{Key: "n", Value: int32(0)}, {Key: "nModified", Value: int32(0)}, {Key: "ok", Value: 1.0}}},
		{bson.D{{Key: "delete", Value: "w0"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 7}}}, {Key: "limit", Value: 1}}}}}, n0},
		{bson.D{{Key: "findAndModify", Value: "w0"}, {Key: "query", Value: bson.D{{Key: "_id", Value: 8}}}, {Key: "update", Value: bson.D{{Key: "$inc", Value: bson.D{{Key: "x", Value: 1}}}}}, {Key: "new", Value: true}},
			bson.D{{Key: "lastErrorObject", Value: bson.D{{Key: "n", Value: int32(1)}, {Key: "updatedExisting", Value: true}}}, {Key: "value", Value: bson.D{{Key: "_id", Value: int32(8)}, {Key: "x", Value: int32(2)}}}, {Key: "ok", Value: 1.0}}},
		{bson.D{{Key: "drop", Value: "w0"}},
			bson.D{{Key: "nIndexesWas", Value: int32(1)}, {Key: "ns", Value: db.Name() + ".w0"}, {Key: "ok", Value: 1.0}}},
	} {
		cmd := append(tc.cmd, bson.E{Key: "writeConcern", Value: bson.D{{Key: "w", Value: 0}}})
		reply, err := db.RunCommand(ctx, cmd).Raw()
		if err != nil {
			t.Fatalf("%s with w: 0: %v", cmd[0].Key, err)
		}
		if got, want := withoutClusterTime(t, reply), mustRaw(t, tc.want); !bytes.Equal(got, want) {
			t.Errorf("%s with w: 0 answered %v, want %v", cmd[0].Key, got, want)
		}
	}
}

// TestWriteConcernInTransaction: a statement of a transaction may not carry
// a write concern.
func TestWriteConcernInTransaction(t *testing.T) {
	client := startReplSet(t)
	ctx := context.Background()
	sess, err := client.StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(ctx)
	if err := sess.StartTransaction(); err != nil {
		t.Fatal(err)
	}
	err = mongo.WithSession(ctx, sess, func(ctx context.Context) error {
		return client.Database(testDB).RunCommand(ctx, bson.D{
			{Key: "insert", Value: "t"}, {Key: "documents", Value: bson.A{bson.D{}}},
			{Key: "writeConcern", Value: bson.D{{Key: "w", Value: 1}}},
		}).Err()
	})
	requireCode(t, err, 72, "InvalidOptions")
}

// replyTimes records the $clusterTime and operationTime of every reply.
type replyTimes struct {
	mu   sync.Mutex
	seen []struct {
		cmd         string
		cluster, op bson.Timestamp
	}
}

func (rt *replyTimes) monitor() *options.ClientOptions {
	record := func(cmd string, reply bson.Raw) {
		ct, ci, ok1 := reply.Lookup("$clusterTime", "clusterTime").TimestampOK()
		ot, oi, ok2 := reply.Lookup("operationTime").TimestampOK()
		if !ok1 || !ok2 {
			ct, ci, ot, oi = 0, 0, 0, 0
		}
		rt.mu.Lock()
		rt.seen = append(rt.seen, struct {
			cmd         string
			cluster, op bson.Timestamp
		}{cmd, bson.Timestamp{T: ct, I: ci}, bson.Timestamp{T: ot, I: oi}})
		rt.mu.Unlock()
	}
	return options.Client().SetMonitor(&event.CommandMonitor{
		Succeeded: func(_ context.Context, e *event.CommandSucceededEvent) { record(e.CommandName, bson.Raw(e.Reply)) },
		Failed:    func(_ context.Context, e *event.CommandFailedEvent) { record(e.CommandName, nil) },
	})
}

// TestClusterTimeOnReplies: every reply carries $clusterTime and
// operationTime, and cluster times never go back; a causally consistent
// session's read waits on (afterClusterTime) the time of its write and
// sees it.
// https://www.mongodb.com/docs/v7.0/core/read-isolation-consistency-recency/#causal-consistency
func TestClusterTimeOnReplies(t *testing.T) {
	cfg := defaultConfig()
	cfg.ReplSetName = "folio"
	in := startInstance(t, cfg)
	rt := &replyTimes{}
	started := map[string]bson.Raw{}
	var mu sync.Mutex
	mon := rt.monitor()
	mon.Monitor.Started = func(_ context.Context, e *event.CommandStartedEvent) {
		mu.Lock()
		started[e.CommandName] = append(bson.Raw(nil), e.Command...)
		mu.Unlock()
	}
	client := connect(t, in, mon)
	ctx := context.Background()
	coll := client.Database(testDB).Collection("ct")
	sess, err := client.StartSession(options.Session().SetCausalConsistency(true))
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(ctx)
	var found bson.M
	err = mongo.WithSession(ctx, sess, func(ctx context.Context) error {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
			return err
		}
		return coll.FindOne(ctx, bson.D{{Key: "_id", Value: 1}}).Decode(&found)
	})
	if err != nil || found["_id"] != int32(1) {
		t.Fatalf("causal write then read: %v %v", found, err)
	}
	mu.Lock()
	findCmd := started["find"]
	mu.Unlock()
	after, ai, ok := findCmd.Lookup("readConcern", "afterClusterTime").TimestampOK()
	if !ok {
		t.Fatalf("the driver sent no afterClusterTime: %v", findCmd)
	}
	if op := sess.OperationTime(); op == nil || op.T < after || op.T == after && op.I < ai {
		t.Fatalf("session operationTime %v before afterClusterTime %v", op, bson.Timestamp{T: after, I: ai})
	}
	if _, err := coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}

	rt.mu.Lock()
	seen := append(rt.seen[:0:0], rt.seen...)
	rt.mu.Unlock()
	var last bson.Timestamp
	for _, s := range seen {
		if s.cluster.T == 0 || s.op.T == 0 {
			t.Fatalf("%s reply without $clusterTime or operationTime", s.cmd)
		}
		if s.cluster.Compare(last) < 0 || s.op.Compare(s.cluster) > 0 {
			t.Fatalf("%s: clusterTime %v, operationTime %v after %v", s.cmd, s.cluster, s.op, last)
		}
		last = s.cluster
	}
	if len(seen) < 4 {
		t.Fatalf("only %d replies seen", len(seen))
	}

	// A time this node never reached is refused.
	future := bson.Timestamp{T: last.T + 1000, I: 1}
	err = client.Database(testDB).RunCommand(ctx, bson.D{
		{Key: "find", Value: "ct"}, {Key: "readConcern", Value: bson.D{{Key: "afterClusterTime", Value: future}}},
	}).Err()
	requireCode(t, err, 72, "InvalidOptions")
}

// TestWriteConcernTakenBy: the commands that write take a writeConcern,
// user and role management and setFeatureCompatibilityVersion among
// them, and mapReduce when it writes a collection; a command that only
// reads, or an inline mapReduce, refuses one (InvalidOptions), as
// MongoDB's supportsWriteConcern says.
func TestWriteConcernTakenBy(t *testing.T) {
	client := startReplSet(t)
	ctx := context.Background()
	db := client.Database(testDB)
	if err := db.RunCommand(ctx, bson.D{{Key: "insert", Value: "wc"}, {Key: "documents", Value: bson.A{bson.D{{Key: "k", Value: 1}}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	mr := func(out any) bson.D {
		return bson.D{{Key: "mapReduce", Value: "wc"}, {Key: "map", Value: bson.JavaScript("function() { emit(this.k, 1) }")},
			{Key: "reduce", Value: bson.JavaScript("function(k, v) { return Array.sum(v) }")}, {Key: "out", Value: out}}
	}
	for _, tc := range []struct {
		db    string
		cmd   bson.D
		takes bool
	}{
		{testDB, bson.D{{Key: "createUser", Value: "wcuser"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{}}}, true},
		{testDB, bson.D{{Key: "grantRolesToUser", Value: "wcuser"}, {Key: "roles", Value: bson.A{"read"}}}, true},
		{testDB, bson.D{{Key: "createRole", Value: "wcrole"}, {Key: "privileges", Value: bson.A{}}, {Key: "roles", Value: bson.A{}}}, true},
		{testDB, bson.D{{Key: "dropRole", Value: "wcrole"}}, true},
		{testDB, bson.D{{Key: "dropUser", Value: "wcuser"}}, true},
		{"admin", bson.D{{Key: "setFeatureCompatibilityVersion", Value: "7.0"}, {Key: "confirm", Value: true}}, true},
		{testDB, mr("wcout"), true},
		{testDB, mr(bson.D{{Key: "inline", Value: 1}}), false},
		{testDB, bson.D{{Key: "usersInfo", Value: 1}}, false},
		{testDB, bson.D{{Key: "count", Value: "wc"}}, false},
	} {
		cmd := append(tc.cmd, bson.E{Key: "writeConcern", Value: bson.D{{Key: "w", Value: "majority"}}})
		err := client.Database(tc.db).RunCommand(ctx, cmd).Err()
		if tc.takes && err != nil {
			t.Errorf("%s with a writeConcern: %v", tc.cmd[0].Key, err)
		}
		if !tc.takes {
			requireCode(t, err, 72, "InvalidOptions")
		}
	}
}

// TestWriteConcernWaitsOncePerCommand: a batch of updates or deletes, or
// an aggregate's $merge, under a journaled write concern (the implicit w:
// "majority", or j: true) waits for the log's sync once, after its
// statements, as MongoDB waits for a command's write concern; it waited
// once per statement or merged document. The syncs are
// Pebble's, counted by /metrics; the journal flusher may add a few.
func TestWriteConcernWaitsOncePerCommand(t *testing.T) {
	cfg := replSetConfig()
	cfg.InMemory, cfg.DBPath, cfg.MetricsAddr = false, t.TempDir(), "127.0.0.1:0"
	in := startInstance(t, cfg)
	db := connect(t, in).Database(testDB)
	ctx := context.Background()
	const n = 60
	docs := make(bson.A, n)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: i}}
	}
	for _, coll := range []string{"wc", "wcsrc"} {
		if err := db.RunCommand(ctx, bson.D{{Key: "insert", Value: coll}, {Key: "documents", Value: docs}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// $merge replaces each document of wc by wcsrc's with y set, one
	// update each
	merge := bson.A{bson.D{{Key: "$set", Value: bson.D{{Key: "y", Value: 1}}}},
		bson.D{{Key: "$merge", Value: bson.D{{Key: "into", Value: "wc"}, {Key: "whenMatched", Value: "replace"}}}}}
	const syncs = "folio_pebble_wal_fsync_duration_seconds_count"
	for _, tc := range []struct {
		name string
		cmd  bson.D
	}{
		{"update", bson.D{{Key: "update", Value: "wc"}, {Key: "updates", Value: statements(n, func(i int) bson.D {
			return bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: i}}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: i}}}}}}
		})}}},
		{"update j: true", bson.D{{Key: "update", Value: "wc"}, {Key: "updates", Value: statements(n, func(i int) bson.D {
			return bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: i}}}, {Key: "u", Value: bson.D{{Key: "$inc", Value: bson.D{{Key: "x", Value: 1}}}}}}
		})}, {Key: "writeConcern", Value: bson.D{{Key: "j", Value: true}}}}},
		{"aggregate with $merge", bson.D{{Key: "aggregate", Value: "wcsrc"}, {Key: "pipeline", Value: merge}, {Key: "cursor", Value: bson.D{}}}},
		{"delete", bson.D{{Key: "delete", Value: "wc"}, {Key: "deletes", Value: statements(n, func(i int) bson.D {
			return bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: i}}}, {Key: "limit", Value: 1}}
		})}}},
	} {
		before := scrape(t, in.MetricsAddr())[syncs]
		var res bson.M
		if err := db.RunCommand(ctx, tc.cmd).Decode(&res); err != nil || res["n"] != int32(n) && tc.cmd[0].Key != "aggregate" {
			t.Fatalf("%s: %v, %v", tc.name, res, err)
		}
		if d := scrape(t, in.MetricsAddr())[syncs] - before; d < 1 || d > n/4 {
			t.Errorf("%s of %d statements: %v log syncs, want one (and the journal flusher's few)", tc.name, n, d)
		}
	}
}

// statements is n statements made by stmt.
func statements(n int, stmt func(i int) bson.D) bson.A {
	a := make(bson.A, n)
	for i := range a {
		a[i] = stmt(i)
	}
	return a
}
