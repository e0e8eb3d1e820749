package driver_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/internal/instance"
)

// slowDocs is how many documents the interruption tests seed; every one
// costs a slow filter milliseconds, so a scan runs for seconds (about 15 s
// on a loaded two-core machine).
const slowDocs = 3000

// slowExpr is an aggregation expression that costs milliseconds per
// document and is always true.
func slowExpr() bson.D {
	sum := bson.D{{Key: "$reduce", Value: bson.D{
		{Key: "input", Value: bson.D{{Key: "$range", Value: bson.A{0, 4000}}}},
		{Key: "initialValue", Value: 0},
		{Key: "in", Value: bson.D{{Key: "$add", Value: bson.A{"$$value", "$$this"}}}},
	}}}
	return bson.D{{Key: "$gte", Value: bson.A{sum, 0}}}
}

// slowFilter matches every document, slowly.
func slowFilter() bson.D { return bson.D{{Key: "$expr", Value: slowExpr()}} }

// startBounded starts a Folio whose shutdown, when the test ends, gives
// running operations at most a second, so that an interruption test that
// fails cannot hang the run.
func startBounded(t *testing.T) (*mongo.Client, *instance.Instance) {
	t.Helper()
	in, err := instance.Start(defaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	client := dial(t, in)
	t.Cleanup(func() {
		_ = client.Disconnect(context.Background())
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := in.Close(ctx); err != nil {
			t.Errorf("close server: %v", err)
		}
	})
	return client, in
}

// seedSlow fills coll with slowDocs documents.
func seedSlow(t *testing.T, coll *mongo.Collection) {
	t.Helper()
	docs := make([]any, slowDocs)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "g", Value: i % 10}}
	}
	if _, err := coll.InsertMany(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
}

// currentOps lists the operations whose command carries comment.
func currentOps(t *testing.T, client *mongo.Client, comment string) []bson.Raw {
	t.Helper()
	var res struct{ Inprog []bson.Raw }
	err := client.Database("admin").RunCommand(context.Background(), bson.D{
		{Key: "currentOp", Value: 1}, {Key: "command.comment", Value: comment},
	}).Decode(&res)
	if err != nil {
		t.Fatal(err)
	}
	return res.Inprog
}

// awaitOp waits until an operation whose command carries comment runs and
// returns its opid.
func awaitOp(t *testing.T, client *mongo.Client, comment string) int64 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if ops := currentOps(t, client, comment); len(ops) > 0 {
			return ops[0].Lookup("opid").Int64()
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("operation %q never showed in currentOp", comment)
	return 0
}

// awaitGone waits until no operation carrying comment runs and returns how
// long that took; it fails the test past limit.
func awaitGone(t *testing.T, client *mongo.Client, comment string, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for len(currentOps(t, client, comment)) > 0 {
		if time.Since(start) > limit {
			t.Fatalf("operation %q still running %v later", comment, limit)
		}
		time.Sleep(2 * time.Millisecond)
	}
	return time.Since(start)
}

// slowOps are long operations of each kind, tagged with a comment so that
// currentOp finds them.
var slowOps = []struct {
	name  string
	write bool
	run   func(ctx context.Context, coll *mongo.Collection, comment string) error
}{
	{"find", false, func(ctx context.Context, coll *mongo.Collection, comment string) error {
		cur, err := coll.Find(ctx, slowFilter(), options.Find().SetComment(comment).SetBatchSize(slowDocs))
		if err == nil {
			err = cur.Close(ctx)
		}
		return err
	}},
	{"aggregate", false, func(ctx context.Context, coll *mongo.Collection, comment string) error {
		cur, err := coll.Aggregate(ctx, mongo.Pipeline{
			{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$g"}, {Key: "ok", Value: bson.D{{Key: "$sum", Value: bson.D{{Key: "$cond", Value: bson.A{slowExpr(), 1, 0}}}}}}}}},
		}, options.Aggregate().SetComment(comment))
		if err == nil {
			err = cur.Close(ctx)
		}
		return err
	}},
	{"multi-update", true, func(ctx context.Context, coll *mongo.Collection, comment string) error {
		_, err := coll.UpdateMany(ctx, slowFilter(), bson.D{{Key: "$set", Value: bson.D{{Key: "touched", Value: true}}}}, options.UpdateMany().SetComment(comment))
		return err
	}},
	{"multi-delete", true, func(ctx context.Context, coll *mongo.Collection, comment string) error {
		_, err := coll.DeleteMany(ctx, slowFilter(), options.DeleteMany().SetComment(comment))
		return err
	}},
}

// changed counts the documents a slow write changed: updated, or deleted.
func changed(t *testing.T, coll *mongo.Collection, name string) int64 {
	t.Helper()
	ctx := context.Background()
	if name == "multi-delete" {
		left, err := coll.CountDocuments(ctx, bson.D{})
		if err != nil {
			t.Fatal(err)
		}
		return slowDocs - left
	}
	n, err := coll.CountDocuments(ctx, bson.D{{Key: "touched", Value: true}})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestKillOp kills running operations of each kind with killOp: the
// operation fails with Interrupted (11601) and leaves currentOp at once; a
// write keeps the documents it changed before the kill, as in MongoDB.
// currentOp shows a killed operation still running with killPending: true.
// https://www.mongodb.com/docs/manual/reference/command/killOp/
func TestKillOp(t *testing.T) {
	for _, op := range slowOps {
		t.Run(op.name, func(t *testing.T) {
			client, _ := startBounded(t)
			coll := client.Database(testDB).Collection("slow")
			seedSlow(t, coll)
			comment := "killop-" + op.name
			errc := make(chan error, 1)
			go func() { errc <- op.run(context.Background(), coll, comment) }()
			opid := awaitOp(t, client, comment)
			for op.write && changed(t, coll, op.name) == 0 {
				time.Sleep(5 * time.Millisecond) // kill a write midway
			}
			var reply bson.D
			err := client.Database("admin").RunCommand(context.Background(), bson.D{{Key: "killOp", Value: 1}, {Key: "op", Value: opid}}).Decode(&reply)
			if err != nil || len(reply) != 2 || fmt.Sprint(reply[0]) != `{info attempting to kill op}` {
				t.Fatalf("killOp: %v %v", reply, err)
			}
			for _, d := range currentOps(t, client, comment) {
				if kp, _ := d.Lookup("killPending").BooleanOK(); !kp {
					t.Fatalf("killed op without killPending: %v", d)
				}
			}
			awaitGone(t, client, comment, 2*time.Second)
			if err := <-errc; serverCode(err) != 11601 {
				t.Fatalf("killed %s: %v, want Interrupted (11601)", op.name, err)
			}
			if op.write {
				if n := changed(t, coll, op.name); n == 0 || n == slowDocs {
					t.Fatalf("killed %s changed %d of %d documents, want a part", op.name, n, slowDocs)
				}
			}
		})
	}
}

// TestKillOpArguments checks killOp's argument errors and that killing an
// operation that does not exist answers as MongoDB does.
func TestKillOpArguments(t *testing.T) {
	client, _ := startServer(t)
	admin := client.Database("admin")
	for _, tc := range []struct {
		cmd  bson.D
		code int
	}{
		{bson.D{{Key: "killOp", Value: 1}}, 4},
		{bson.D{{Key: "killOp", Value: 1}, {Key: "op", Value: "x"}}, 14},
		{bson.D{{Key: "killOp", Value: 1}, {Key: "op", Value: 1.5}}, 2},
		{bson.D{{Key: "killOp", Value: 1}, {Key: "op", Value: int64(1) << 40}}, 0},
	} {
		err := admin.RunCommand(context.Background(), tc.cmd).Err()
		if serverCode(err) != tc.code || tc.code == 0 && err != nil {
			t.Errorf("%v: %v, want code %d", tc.cmd, err, tc.code)
		}
	}
	if err := client.Database(testDB).RunCommand(context.Background(), bson.D{{Key: "killOp", Value: 1}, {Key: "op", Value: 1}}).Err(); serverCode(err) != 13 {
		t.Errorf("killOp outside admin: %v, want Unauthorized", err)
	}
}

// TestMaxTimeMSBoundsWrites checks that maxTimeMS bounds multi-document
// writes: the command fails with MaxTimeMSExpired (50) and the documents
// changed before the limit stay changed, as MongoDB leaves them.
// https://www.mongodb.com/docs/manual/reference/method/cursor.maxTimeMS/
func TestMaxTimeMSBoundsWrites(t *testing.T) {
	for _, tc := range []struct {
		name string
		cmd  func(coll string) bson.D
	}{
		{"multi-update", func(coll string) bson.D {
			return bson.D{{Key: "update", Value: coll}, {Key: "updates", Value: bson.A{bson.D{
				{Key: "q", Value: slowFilter()}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "touched", Value: true}}}}}, {Key: "multi", Value: true},
			}}}, {Key: "maxTimeMS", Value: 200}}
		}},
		{"multi-delete", func(coll string) bson.D {
			return bson.D{{Key: "delete", Value: coll}, {Key: "deletes", Value: bson.A{bson.D{
				{Key: "q", Value: slowFilter()}, {Key: "limit", Value: 0},
			}}}, {Key: "maxTimeMS", Value: 200}}
		}},
		{"findAndModify", func(coll string) bson.D {
			// {$abs: "$_id"}, not "$_id": a comparison of a bare field
			// with a constant would bound the _id index (RewriteExpr)
			// and read no document.
			return bson.D{{Key: "findAndModify", Value: coll}, {Key: "query", Value: bson.D{{Key: "$expr", Value: bson.D{{Key: "$and", Value: bson.A{slowExpr(), bson.D{{Key: "$lt", Value: bson.A{bson.D{{Key: "$abs", Value: "$_id"}}, 0}}}}}}}}},
				{Key: "update", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "touched", Value: true}}}}}, {Key: "maxTimeMS", Value: 200}}
		}},
		{"aggregate $out", func(coll string) bson.D {
			return bson.D{{Key: "aggregate", Value: coll}, {Key: "pipeline", Value: bson.A{
				bson.D{{Key: "$match", Value: slowFilter()}}, bson.D{{Key: "$out", Value: "copy"}},
			}}, {Key: "cursor", Value: bson.D{}}, {Key: "maxTimeMS", Value: 200}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, _ := startBounded(t)
			db := client.Database(testDB)
			coll := db.Collection("slow")
			seedSlow(t, coll)
			start := time.Now()
			err := db.RunCommand(context.Background(), tc.cmd("slow")).Err()
			if serverCode(err) != 50 {
				t.Fatalf("%v, want MaxTimeMSExpired (50)", err)
			}
			if took := time.Since(start); took > 2*time.Second {
				t.Fatalf("a 200 ms limit ended the write after %v", took)
			}
			switch n := changed(t, coll, tc.name); {
			case tc.name == "multi-update" || tc.name == "multi-delete":
				if n == 0 || n == slowDocs {
					t.Fatalf("changed %d of %d documents, want a part", n, slowDocs)
				}
			case n != 0:
				t.Fatalf("changed %d documents, want none", n)
			}
		})
	}
}

// TestKillSessions checks that killSessions and killAllSessions interrupt
// the operations running in the sessions they kill.
// https://www.mongodb.com/docs/manual/reference/command/killSessions/
func TestKillSessions(t *testing.T) {
	for _, all := range []bool{false, true} {
		t.Run(fmt.Sprint("all=", all), func(t *testing.T) {
			client, _ := startBounded(t)
			coll := client.Database(testDB).Collection("slow")
			seedSlow(t, coll)
			sess, err := client.StartSession()
			if err != nil {
				t.Fatal(err)
			}
			defer sess.EndSession(context.Background())
			comment := fmt.Sprint("killsessions-", all)
			errc := make(chan error, 1)
			go func() {
				errc <- slowOps[0].run(mongo.NewSessionContext(context.Background(), sess), coll, comment)
			}()
			awaitOp(t, client, comment)
			cmd := bson.D{{Key: "killSessions", Value: bson.A{sess.ID()}}}
			if all {
				cmd = bson.D{{Key: "killAllSessions", Value: bson.A{}}}
			}
			if err := client.Database("admin").RunCommand(context.Background(), cmd).Err(); err != nil {
				t.Fatal(err)
			}
			awaitGone(t, client, comment, 2*time.Second)
			if err := <-errc; serverCode(err) != 11601 {
				t.Fatalf("find of a killed session: %v, want Interrupted (11601)", err)
			}
		})
	}
}

// TestClientDisconnectStopsOperation runs long reads on a raw connection
// and closes it mid-operation: the server notices the client is gone and
// the operation leaves currentOp at once instead of running to its end.
func TestClientDisconnectStopsOperation(t *testing.T) {
	for _, op := range []struct {
		name string
		cmd  bson.D
	}{
		{"aggregate", bson.D{{Key: "aggregate", Value: "slow"}, {Key: "pipeline", Value: bson.A{
			bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$g"}, {Key: "ok", Value: bson.D{{Key: "$sum", Value: bson.D{{Key: "$cond", Value: bson.A{slowExpr(), 1, 0}}}}}}}}},
		}}, {Key: "cursor", Value: bson.D{}}}},
		{"find", bson.D{{Key: "find", Value: "slow"}, {Key: "filter", Value: slowFilter()}}},
	} {
		t.Run(op.name, func(t *testing.T) {
			client, in := startBounded(t)
			seedSlow(t, client.Database(testDB).Collection("slow"))
			comment := "disconnect-" + op.name
			cmd := append(op.cmd, bson.E{Key: "comment", Value: comment}, bson.E{Key: "$db", Value: testDB})
			raw := rawDial(t, in)
			if _, err := raw.Write(message(1, opMsg, msgBody(0, mustRaw(t, cmd)))); err != nil {
				t.Fatal(err)
			}
			awaitOp(t, client, comment)
			raw.Close()
			took := awaitGone(t, client, comment, 2*time.Second)
			t.Logf("%s ended %v after its client closed the connection", op.name, took)
		})
	}
}

// TestMaxTimeMSAcrossGetMores checks that a cursor's maxTimeMS bounds the
// time its find and getMores spend running, not the time between them, as
// MongoDB carries the time left over to each getMore.
// https://www.mongodb.com/docs/manual/reference/method/cursor.maxTimeMS/
func TestMaxTimeMSAcrossGetMores(t *testing.T) {
	client, _ := startBounded(t)
	db := client.Database(testDB)
	seedSlow(t, db.Collection("slow"))
	ctx := sessionCtx(t, client)
	open := func(filter bson.D) int64 {
		t.Helper()
		var res struct{ Cursor struct{ ID int64 } }
		err := db.RunCommand(ctx, bson.D{{Key: "find", Value: "slow"}, {Key: "filter", Value: filter},
			{Key: "batchSize", Value: 1}, {Key: "maxTimeMS", Value: 300}}).Decode(&res)
		if err != nil || res.Cursor.ID == 0 {
			t.Fatalf("find: %v, cursor %d", err, res.Cursor.ID)
		}
		return res.Cursor.ID
	}
	getMore := func(id int64) error {
		return db.RunCommand(ctx, bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "slow"}, {Key: "batchSize", Value: 1}}).Err()
	}

	// Idle time is not charged: a fast cursor outlives its maxTimeMS.
	id := open(bson.D{})
	time.Sleep(500 * time.Millisecond)
	if err := getMore(id); err != nil {
		t.Fatalf("getMore after idling past maxTimeMS: %v", err)
	}

	// Running time is: a slow cursor's getMores run out of it.
	id = open(slowFilter())
	start := time.Now()
	var err error
	for err == nil && time.Since(start) < 10*time.Second {
		err = getMore(id)
	}
	if serverCode(err) != 50 {
		t.Fatalf("getMores of a slow cursor: %v after %v, want MaxTimeMSExpired", err, time.Since(start))
	}
}

// TestTailableCursorInterrupted checks a tailable awaitData cursor across
// getMores: it returns documents inserted later, and a getMore awaiting
// new ones ends with Interrupted when killed, instead of waiting out its
// maxTimeMS.
func TestTailableCursorInterrupted(t *testing.T) {
	client, _ := startBounded(t)
	ctx := context.Background()
	db := client.Database(testDB)
	if err := db.CreateCollection(ctx, "capped", options.CreateCollection().SetCapped(true).SetSizeInBytes(1<<20)); err != nil {
		t.Fatal(err)
	}
	coll := db.Collection("capped")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	// The cursor belongs to the session that opened it: find and getMores
	// share one explicit session, so the driver cannot hand the getMore
	// another pooled session while awaitOp runs currentOp.
	sctx := sessionCtx(t, client)
	var res struct{ Cursor struct{ ID int64 } }
	err := db.RunCommand(sctx, bson.D{{Key: "find", Value: "capped"}, {Key: "tailable", Value: true}, {Key: "awaitData", Value: true}}).Decode(&res)
	if err != nil || res.Cursor.ID == 0 {
		t.Fatalf("tailable find: %v, cursor %d", err, res.Cursor.ID)
	}
	getMore := func(comment string) (bson.Raw, error) {
		return db.RunCommand(sctx, bson.D{{Key: "getMore", Value: res.Cursor.ID}, {Key: "collection", Value: "capped"},
			{Key: "maxTimeMS", Value: 20000}, {Key: "comment", Value: comment}}).Raw()
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 2}}); err != nil {
		t.Fatal(err)
	}
	reply, err := getMore("tail-1")
	if err != nil {
		t.Fatal(err)
	}
	if batch, _ := reply.Lookup("cursor", "nextBatch").Array().Values(); len(batch) != 1 {
		t.Fatalf("getMore after an insert: %v", reply)
	}
	errc := make(chan error, 1)
	go func() { _, err := getMore("tail-2"); errc <- err }()
	opid := awaitOp(t, client, "tail-2")
	if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "killOp", Value: 1}, {Key: "op", Value: opid}}).Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if serverCode(err) != 11601 {
			t.Fatalf("killed awaiting getMore: %v, want Interrupted (11601)", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("killed awaiting getMore still waits")
	}
}

// TestKillSessionsKillsCursors: killSessions and killAllSessions also close
// the cursors opened in the sessions they kill, so a getMore on one fails
// with CursorNotFound (43); a cursor of another session survives
// killSessions.
// https://www.mongodb.com/docs/v7.0/reference/command/killSessions/
func TestKillSessionsKillsCursors(t *testing.T) {
	for _, all := range []bool{false, true} {
		t.Run(fmt.Sprint("all=", all), func(t *testing.T) {
			client, _ := startServer(t)
			numbered(t, client, "ks", 10)
			db := client.Database(testDB)
			open := func(sess *mongo.Session) int64 {
				var id int64
				err := mongo.WithSession(context.Background(), sess, func(ctx context.Context) error {
					reply, err := db.RunCommand(ctx, bson.D{{Key: "find", Value: "ks"}, {Key: "batchSize", Value: 2}}).Raw()
					if err == nil {
						id = reply.Lookup("cursor", "id").Int64()
					}
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
				return id
			}
			getMore := func(sess *mongo.Session, id int64) error {
				return mongo.WithSession(context.Background(), sess, func(ctx context.Context) error {
					return db.RunCommand(ctx, bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "ks"}, {Key: "batchSize", Value: 2}}).Err()
				})
			}
			killed, err := client.StartSession()
			if err != nil {
				t.Fatal(err)
			}
			defer killed.EndSession(context.Background())
			other, err := client.StartSession()
			if err != nil {
				t.Fatal(err)
			}
			defer other.EndSession(context.Background())
			victim, bystander := open(killed), open(other)
			cmd := bson.D{{Key: "killSessions", Value: bson.A{killed.ID()}}}
			if all {
				cmd = bson.D{{Key: "killAllSessions", Value: bson.A{}}}
			}
			if err := client.Database("admin").RunCommand(context.Background(), cmd).Err(); err != nil {
				t.Fatal(err)
			}
			requireCode(t, getMore(killed, victim), 43, "CursorNotFound")
			err = getMore(other, bystander)
			if all {
				requireCode(t, err, 43, "CursorNotFound")
			} else if err != nil {
				t.Fatalf("cursor of another session: %v", err)
			}
		})
	}
}
