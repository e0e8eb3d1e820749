package driver_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"
)

// TestStepDownArguments: replSetStepDown, replSetFreeze and replSetStepUp
// read their arguments as MongoDB 7.0 does, on the primary of a one-member
// set, which none of these rows changes.
func TestStepDownArguments(t *testing.T) {
	client, _ := replSetServer(t)
	admin := client.Database("admin")
	ctx := context.Background()
	for _, tc := range []struct {
		cmd  bson.D
		code int
	}{
		{bson.D{{Key: "replSetStepDown", Value: -1}}, 2},
		{bson.D{{Key: "replSetStepDown", Value: 5}, {Key: "secondaryCatchUpPeriodSecs", Value: 6}}, 2},
		{bson.D{{Key: "replSetStepDown", Value: "x"}, {Key: "secondaryCatchUpPeriodSecs", Value: 61}}, 2}, // "x" reads as 0: 60 s
		{bson.D{{Key: "replSetStepDown", Value: 5}, {Key: "secondaryCatchUpPeriodSecs", Value: -1}}, 2},
		{bson.D{{Key: "replSetStepDown", Value: 5}, {Key: "secondaryCatchUpPeriodSecs", Value: 1.5}}, 2},
		{bson.D{{Key: "replSetStepDown", Value: 5}, {Key: "secondaryCatchUpPeriodSecs", Value: "1"}}, 14},
		{bson.D{{Key: "replSetStepDown", Value: 5}, {Key: "secondaryCatchUpPeriodSecs", Value: nil}}, 14},
		{bson.D{{Key: "replSetFreeze", Value: 10}}, 95},
		{bson.D{{Key: "replSetStepUp", Value: 1}}, 0},
	} {
		if got := serverCode(admin.RunCommand(ctx, tc.cmd).Err()); got != tc.code {
			t.Errorf("%v: code %d, want %d", tc.cmd, got, tc.code)
		}
	}
	elsewhere := client.Database(testDB).RunCommand(ctx, bson.D{{Key: "replSetStepDown", Value: 1}}).Err()
	requireCode(t, elsewhere, 13, "Unauthorized")
	standalone := connect(t, startInstance(t, defaultConfig()))
	for _, name := range []string{"replSetStepDown", "replSetFreeze", "replSetStepUp"} {
		err := standalone.Database("admin").RunCommand(ctx, bson.D{{Key: name, Value: 1}}).Err()
		requireCode(t, err, 76, "NoReplicationEnabled")
	}
	if h := helloOf(t, client, bson.D{{Key: "hello", Value: 1}}); !h.Lookup("isWritablePrimary").Boolean() || h.Lookup("topologyVersion", "counter").Int64() != 0 {
		t.Errorf("after refused state changes: %v", h)
	}
}

// TestStepDownForced: a forced step down makes the only member a
// secondary, which refuses writes and primary reads, keeps its cursors and
// connections, wakes the hellos awaiting a change, and aborts the open
// transactions; replSetFreeze 0 ends the stepdown period and the member
// is elected again, with a greater electionId.
func TestStepDownForced(t *testing.T) {
	client, in := replSetServer(t)
	admin := client.Database("admin")
	coll := client.Database(testDB).Collection("stepdown")
	ctx := context.Background()
	var docs []any
	for i := range 5 {
		docs = append(docs, bson.D{{Key: "_id", Value: i}})
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	before := helloOf(t, client, bson.D{{Key: "hello", Value: 1}})
	cur, err := coll.Find(ctx, bson.D{}, options.Find().SetBatchSize(2))
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close(ctx)
	sess, err := client.StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(ctx)
	if err := sess.StartTransaction(); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertOne(mongo.NewSessionContext(ctx, sess), bson.D{{Key: "_id", Value: "txn"}}); err != nil {
		t.Fatal(err)
	}
	// a hello awaiting the next change, as a driver's monitor streams
	awaited := make(chan bson.Raw, 1)
	go func() {
		reply, _ := admin.RunCommand(ctx, bson.D{{Key: "hello", Value: 1}, {Key: "topologyVersion", Value: before.Lookup("topologyVersion").Document()},
			{Key: "maxAwaitTimeMS", Value: int64(60000)}}).Raw()
		awaited <- reply
	}()
	time.Sleep(100 * time.Millisecond) // the hello is waiting (it would also answer at once)
	start := time.Now()
	if err := admin.RunCommand(ctx, bson.D{{Key: "replSetStepDown", Value: 60}, {Key: "force", Value: true}}).Err(); err != nil {
		t.Fatal(err)
	}
	if reply := <-awaited; reply.Lookup("isWritablePrimary").Boolean() || time.Since(start) > 30*time.Second {
		t.Errorf("the awaiting hello answered %v after %v", reply, time.Since(start))
	}
	h := helloOf(t, client, bson.D{{Key: "hello", Value: 1}})
	if h.Lookup("isWritablePrimary").Boolean() || !h.Lookup("secondary").Boolean() || h.Lookup("primary").Type != 0 || h.Lookup("electionId").Type != 0 ||
		h.Lookup("topologyVersion", "counter").Int64() <= before.Lookup("topologyVersion", "counter").Int64() {
		t.Fatalf("hello of a secondary: %v", h)
	}
	var status struct {
		MyState int32 `bson:"myState"`
	}
	if err := admin.RunCommand(ctx, bson.D{{Key: "replSetGetStatus", Value: 1}}).Decode(&status); err != nil || status.MyState != 2 {
		t.Errorf("replSetGetStatus: myState %d (%v)", status.MyState, err)
	}
	// writes and primary reads are refused, with the topologyVersion;
	// the driver, connected directly, reads with primaryPreferred
	_, err = coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 9}})
	requireCode(t, err, 10107, "NotWritablePrimary")
	if n, err := coll.CountDocuments(ctx, bson.D{}); err != nil || n != 5 {
		t.Errorf("count on the secondary: %d, %v", n, err)
	}
	primaryRead := client.Database(testDB).RunCommand(ctx, bson.D{{Key: "find", Value: "stepdown"}}, options.RunCmd().SetReadPreference(readpref.Primary()))
	if err := primaryRead.Err(); err != nil {
		t.Errorf("a direct connection reads with primaryPreferred: %v", err)
	}
	c := rawDial(t, in)
	reply := rawCommand(t, c, 1, bson.D{{Key: "find", Value: "stepdown"}, {Key: "$db", Value: testDB}})
	if code, _ := reply.Lookup("code").AsInt64OK(); code != 13435 || reply.Lookup("errmsg").StringValue() != "not master and slaveOk=false" || reply.Lookup("topologyVersion").Type == 0 {
		t.Errorf("a primary read on a secondary, without helloOk: %v", reply)
	}
	rawCommand(t, c, 2, bson.D{{Key: "hello", Value: 1}, {Key: "helloOk", Value: true}, {Key: "$db", Value: "admin"}})
	reply = rawCommand(t, c, 3, bson.D{{Key: "insert", Value: "stepdown"}, {Key: "documents", Value: bson.A{bson.D{}}}, {Key: "$db", Value: testDB}})
	if code, _ := reply.Lookup("code").AsInt64OK(); code != 10107 || reply.Lookup("errmsg").StringValue() != "not primary" {
		t.Errorf("a write on a secondary, after helloOk: %v", reply)
	}
	reply = rawCommand(t, c, 4, bson.D{{Key: "insert", Value: "x"}, {Key: "documents", Value: bson.A{bson.D{}}}, {Key: "$db", Value: "local"}})
	if ok, _ := reply.Lookup("ok").AsFloat64OK(); ok != 1 {
		t.Errorf("a write to local on a secondary: %v", reply)
	}
	// the cursor opened on the primary reads on
	n := 0
	for cur.Next(ctx) {
		n++
	}
	if err := cur.Err(); err != nil || n != 5 {
		t.Errorf("the cursor read %d documents after the step down (%v)", n, err)
	}
	err = admin.RunCommand(ctx, bson.D{{Key: "replSetStepDown", Value: 10}, {Key: "force", Value: true}}).Err()
	requireCode(t, err, 10107, "NotWritablePrimary")
	err = admin.RunCommand(ctx, bson.D{{Key: "replSetStepUp", Value: 1}}).Err()
	requireCode(t, err, 125, "CommandFailed")
	if reply, err := admin.RunCommand(ctx, bson.D{{Key: "replSetFreeze", Value: 1}}).Raw(); err != nil || reply.Lookup("warning").Type != bson.TypeString {
		t.Errorf("replSetFreeze 1: %v, %v", reply, err)
	}
	// replSetFreeze 0: elected at once
	if reply, err := admin.RunCommand(ctx, bson.D{{Key: "replSetFreeze", Value: 0}}).Raw(); err != nil || reply.Lookup("info").StringValue() != "unfreezing" {
		t.Fatalf("replSetFreeze 0: %v, %v", reply, err)
	}
	h = awaitWritable(t, client)
	if id, old := h.Lookup("electionId").ObjectID(), before.Lookup("electionId").ObjectID(); bytes.Compare(id[:], old[:]) <= 0 {
		t.Errorf("electionId %v after the election, %v before", id, old)
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 9}}); err != nil {
		t.Errorf("a write after the election: %v", err)
	}
	err = sess.CommitTransaction(ctx)
	requireCode(t, err, 251, "NoSuchTransaction")
	if n, err := coll.CountDocuments(ctx, bson.D{{Key: "_id", Value: "txn"}}); err != nil || n != 0 {
		t.Errorf("the aborted transaction's insert: %d, %v", n, err)
	}
}

// awaitWritable waits for the server to be the writable primary again,
// and returns its hello.
func awaitWritable(t *testing.T, client *mongo.Client) bson.Raw {
	t.Helper()
	for {
		h := helloOf(t, client, bson.D{{Key: "hello", Value: 1}})
		if h.Lookup("isWritablePrimary").Boolean() {
			return h
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestStepDownElectsAfterItsPeriod: a secondary stepped down for a second
// is elected when the second is over.
func TestStepDownElectsAfterItsPeriod(t *testing.T) {
	client, _ := replSetServer(t)
	ctx := context.Background()
	if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "replSetStepDown", Value: 1}, {Key: "force", Value: true}}).Err(); err != nil {
		t.Fatal(err)
	}
	awaitWritable(t, client)
	if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "replSetStepUp", Value: 1}}).Err(); err != nil {
		t.Errorf("replSetStepUp on the primary: %v", err)
	}
}

// TestStepDownWithoutForce: without force the step down of the only
// member waits for a secondary to catch up, refusing writes and
// interrupting those running, then fails and the member takes writes
// again.
func TestStepDownWithoutForce(t *testing.T) {
	cfg := defaultConfig()
	cfg.ReplSetName, cfg.TestCommands = "rs0", true
	in := startInstance(t, cfg)
	client := connect(t, in, options.Client().SetRetryWrites(false))
	admin := client.Database("admin")
	coll := client.Database(testDB).Collection("stepdown")
	ctx := context.Background()
	before := helloOf(t, client, bson.D{{Key: "hello", Value: 1}})
	// an insert blocked in the fail point while the step down begins
	fp := bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: bson.D{{Key: "times", Value: 1}}},
		{Key: "data", Value: bson.D{{Key: "failCommands", Value: bson.A{"insert"}}, {Key: "blockConnection", Value: true}, {Key: "blockTimeMS", Value: 60000}}}}
	if err := admin.RunCommand(ctx, fp).Err(); err != nil {
		t.Fatal(err)
	}
	blocked := make(chan error, 1)
	go func() {
		_, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}, options.InsertOne().SetComment("blocked"))
		blocked <- err
	}()
	awaitOp(t, client, "blocked")
	stepped := make(chan error, 1)
	go func() {
		stepped <- admin.RunCommand(ctx, bson.D{{Key: "replSetStepDown", Value: 5}, {Key: "secondaryCatchUpPeriodSecs", Value: 2}}).Err()
	}()
	requireCode(t, <-blocked, 11602, "InterruptedDueToReplStateChange")
	h := helloOf(t, client, bson.D{{Key: "hello", Value: 1}})
	if h.Lookup("isWritablePrimary").Boolean() || h.Lookup("secondary").Boolean() || h.Lookup("primary").Type == 0 || h.Lookup("electionId").Type == 0 {
		t.Errorf("hello of a primary stepping down: %v", h)
	}
	_, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 2}})
	requireCode(t, err, 10107, "NotWritablePrimary")
	err = admin.RunCommand(ctx, bson.D{{Key: "replSetStepDown", Value: 5}, {Key: "force", Value: true}}).Err()
	requireCode(t, err, 117, "ConflictingOperationInProgress")
	requireCode(t, <-stepped, 262, "ExceededTimeLimit")
	// no election: the member stayed the primary
	if h := helloOf(t, client, bson.D{{Key: "hello", Value: 1}}); !h.Lookup("isWritablePrimary").Boolean() || h.Lookup("electionId").ObjectID() != before.Lookup("electionId").ObjectID() {
		t.Errorf("hello after the failed step down: %v", h)
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 3}}); err != nil {
		t.Errorf("a write after the failed step down: %v", err)
	}
}

// TestStepDownUnderWrites: writers running through a forced step down and
// the election after it lose no acknowledged write, and every write
// refused or interrupted fails with a not-primary error.
func TestStepDownUnderWrites(t *testing.T) {
	client, _ := replSetServer(t)
	coll := client.Database(testDB).Collection("stepdownwrites")
	ctx := context.Background()
	const writers = 4
	stop := make(chan struct{})
	acked := make([][]int, writers)
	errs := make(chan error, writers)
	for w := range writers {
		go func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					errs <- nil
					return
				default:
				}
				id := w*1_000_000 + i
				_, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: id}})
				switch code := serverCode(err); {
				case err == nil:
					acked[w] = append(acked[w], id)
				case code != 10107 && code != 11602:
					errs <- err
					return
				}
			}
		}()
	}
	time.Sleep(100 * time.Millisecond)
	if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "replSetStepDown", Value: 1}, {Key: "force", Value: true}}).Err(); err != nil {
		t.Fatal(err)
	}
	awaitWritable(t, client)
	time.Sleep(100 * time.Millisecond)
	close(stop)
	for range writers {
		if err := <-errs; err != nil {
			t.Errorf("a writer: %v", err)
		}
	}
	n := 0
	for w := range writers {
		n += len(acked[w])
		for _, id := range acked[w] {
			if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Err(); err != nil {
				t.Fatalf("acknowledged insert %d: %v", id, err)
			}
		}
	}
	if n == 0 {
		t.Fatal("no write acknowledged")
	}
}
