package driver_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// startTestCommands starts a replica set member with test commands and
// returns a client whose application name is app.
func startTestCommands(t *testing.T, app string) *mongo.Client {
	t.Helper()
	cfg := defaultConfig()
	cfg.ReplSetName = "folio"
	cfg.TestCommands = true
	in := startInstance(t, cfg)
	return connect(t, in, options.Client().SetAppName(app))
}

// failCommand sets the failCommand fail point.
func failCommand(t *testing.T, client *mongo.Client, mode any, data bson.D) {
	t.Helper()
	cmd := bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: mode}, {Key: "data", Value: data}}
	if err := client.Database("admin").RunCommand(context.Background(), cmd).Err(); err != nil {
		t.Fatal(err)
	}
}

// TestFailCommandErrors: with test commands, failCommand fails the named
// commands with the code given, labelled as MongoDB labels it (a
// retryable write's retriable error RetryableWriteError, so the driver
// retries it once and the write is applied once), or with the labels
// given; {times: n} acts n times; appName selects connections; the reply
// counts the times the fail point acted.
func TestFailCommandErrors(t *testing.T) {
	client := startTestCommands(t, "failtest")
	ctx := context.Background()
	coll := client.Database(testDB).Collection("fail")

	// A retriable error on a retryable write: retried once, applied once.
	failCommand(t, client, bson.D{{Key: "times", Value: 1}}, bson.D{{Key: "failCommands", Value: bson.A{"insert"}}, {Key: "errorCode", Value: 91}})
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatalf("insert after one ShutdownInProgress: %v", err)
	}
	// The raw reply of a failed command: code, message and label.
	failCommand(t, client, bson.D{{Key: "times", Value: 1}}, bson.D{{Key: "failCommands", Value: bson.A{"insert"}}, {Key: "errorCode", Value: 91}})
	sess, err := client.StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(ctx)
	raw := bson.D{{Key: "insert", Value: "fail"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 2}}}}, {Key: "txnNumber", Value: int64(1)}}
	err = mongo.WithSession(ctx, sess, func(ctx context.Context) error {
		return client.Database(testDB).RunCommand(ctx, raw).Err()
	})
	var ce mongo.CommandError
	if !errors.As(err, &ce) || ce.Code != 91 || ce.Message != "Failing command via 'failCommand' failpoint" || !ce.HasErrorLabel("RetryableWriteError") {
		t.Fatalf("failed insert: %v (labels %v)", err, ce.Labels)
	}
	if n, err := coll.CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
		t.Fatalf("%d documents (%v), want the first insert's alone", n, err)
	}
	// Labels given replace MongoDB's; a read gets none of its own.
	failCommand(t, client, "alwaysOn", bson.D{{Key: "failCommands", Value: bson.A{"find"}}, {Key: "errorCode", Value: 2}, {Key: "errorLabels", Value: bson.A{"Custom"}}})
	err = coll.FindOne(ctx, bson.D{}).Err()
	if !errors.As(err, &ce) || ce.Code != 2 || !ce.HasErrorLabel("Custom") || len(ce.Labels) != 1 {
		t.Fatalf("find: %v (labels %v)", err, ce.Labels)
	}
	if err := coll.FindOne(ctx, bson.D{}).Err(); err == nil {
		t.Fatal("alwaysOn failed find once only")
	}
	// Another application's connections are not failed.
	failCommand(t, client, "alwaysOn", bson.D{{Key: "failCommands", Value: bson.A{"find"}}, {Key: "errorCode", Value: 2}, {Key: "appName", Value: "someoneElse"}})
	if err := coll.FindOne(ctx, bson.D{}).Err(); err != nil {
		t.Fatalf("find by another application: %v", err)
	}
	// off reports how many times the fail point acted: 4 so far.
	var off struct {
		Count int64 `bson:"count"`
	}
	if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: "off"}}).Decode(&off); err != nil || off.Count != 4 {
		t.Fatalf("count %d (%v), want 4", off.Count, err)
	}
	if err := coll.FindOne(ctx, bson.D{}).Err(); err != nil {
		t.Fatalf("find after off: %v", err)
	}
}

// TestFailCommandConnectionAndWriteConcern: closeConnection closes the
// connection without a reply (the driver retries the retryable write on a
// new one); blockConnection waits, cut short by maxTimeMS;
// writeConcernError runs the command and reports the error given in its
// reply.
func TestFailCommandConnectionAndWriteConcern(t *testing.T) {
	client := startTestCommands(t, "failtest")
	ctx := context.Background()
	db := client.Database(testDB)
	coll := db.Collection("failconn")

	failCommand(t, client, bson.D{{Key: "times", Value: 1}}, bson.D{{Key: "failCommands", Value: bson.A{"insert"}}, {Key: "closeConnection", Value: true}})
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatalf("insert retried after a closed connection: %v", err)
	}

	// The block comes before the command's time limit starts, as in
	// MongoDB: a find blocked 300 ms with a maxTimeMS of 100 runs.
	failCommand(t, client, "alwaysOn", bson.D{{Key: "failCommands", Value: bson.A{"find"}}, {Key: "blockConnection", Value: true}, {Key: "blockTimeMS", Value: 300}})
	start := time.Now()
	err := db.RunCommand(ctx, bson.D{{Key: "find", Value: "failconn"}, {Key: "maxTimeMS", Value: 100}}).Err()
	if took := time.Since(start); err != nil || took < 300*time.Millisecond {
		t.Fatalf("blocked find with maxTimeMS: %v after %v, want success after the block", err, took)
	}
	failCommand(t, client, "off", nil)

	wce := bson.D{{Key: "code", Value: 91}, {Key: "errmsg", Value: "Replication is being shut down"}}
	failCommand(t, client, bson.D{{Key: "times", Value: 1}}, bson.D{{Key: "failCommands", Value: bson.A{"insert"}}, {Key: "writeConcernError", Value: wce}})
	var reply bson.Raw
	if reply, err = db.RunCommand(ctx, bson.D{{Key: "insert", Value: "failconn"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 2}}}}}).Raw(); err == nil {
		t.Fatalf("insert: no error, reply %s", reply)
	}
	var we mongo.WriteException
	if !errors.As(err, &we) || we.WriteConcernError == nil || we.WriteConcernError.Code != 91 || we.WriteConcernError.Message != "Replication is being shut down" {
		t.Fatalf("insert: %v, want the writeConcernError given", err)
	}
	if n, err := coll.CountDocuments(ctx, bson.D{}); err != nil || n != 2 {
		t.Fatalf("%d documents (%v), want 2: the write concern error's insert ran", n, err)
	}
}

// TestFailPointRefusals: without test commands configureFailPoint and
// clearLog do not exist; other fail points and unknown data fields are
// refused.
func TestFailPointRefusals(t *testing.T) {
	plain := connect(t, startInstance(t, defaultConfig()))
	ctx := context.Background()
	cmd := func(name string, data bson.D) bson.D {
		return bson.D{{Key: "configureFailPoint", Value: name}, {Key: "mode", Value: "alwaysOn"}, {Key: "data", Value: data}}
	}
	err := plain.Database("admin").RunCommand(ctx, cmd("failCommand", bson.D{{Key: "failCommands", Value: bson.A{"find"}}})).Err()
	requireCode(t, err, 59, "CommandNotFound")
	requireCode(t, plain.Database("admin").RunCommand(ctx, bson.D{{Key: "clearLog", Value: "global"}}).Err(), 59, "CommandNotFound")

	client := startTestCommands(t, "failtest")
	for _, c := range []struct {
		client *mongo.Client
		listed bool
	}{{plain, false}, {client, true}} {
		list, err := c.client.Database("admin").RunCommand(ctx, bson.D{{Key: "listCommands", Value: 1}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"configureFailPoint", "clearLog"} {
			if _, err := list.LookupErr("commands", name); (err == nil) != c.listed {
				t.Errorf("listCommands lists %s: %v, want %v", name, err == nil, c.listed)
			}
		}
	}
	admin := client.Database("admin")

	requireCode(t, admin.RunCommand(ctx, cmd("hangBeforeTransactionCommit", bson.D{})).Err(), 238, "NotImplemented")
	requireCode(t, admin.RunCommand(ctx, cmd("failCommand", bson.D{{Key: "failCommands", Value: bson.A{"find"}}, {Key: "errorExtraInfo", Value: bson.D{}}})).Err(), 238, "NotImplemented")
	requireCode(t, admin.RunCommand(ctx, cmd("failCommand", bson.D{{Key: "failCommands", Value: bson.A{"find"}}, {Key: "bogus", Value: 1}})).Err(), 40415, "")
	requireCode(t, admin.RunCommand(ctx, bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: "sometimes"}}).Err(), 2, "BadValue")
	requireCode(t, client.Database(testDB).RunCommand(ctx, cmd("failCommand", bson.D{{Key: "failCommands", Value: bson.A{"find"}}})).Err(), 13, "Unauthorized")
}

// TestFailCommandWithoutCommands: a failCommand fail point whose data
// names no command (no failCommands, as pymongo's pool tests set it to
// close a connection; or no data at all) is set, as in MongoDB, and fails
// nothing: MongoDB looks a command up in failCommands only.
func TestFailCommandWithoutCommands(t *testing.T) {
	client := startTestCommands(t, "failtest")
	ctx := context.Background()
	coll := client.Database(testDB).Collection("nofail")
	for _, cmd := range []bson.D{
		{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: bson.D{{Key: "times", Value: 1}}}, {Key: "data", Value: bson.D{{Key: "closeConnection", Value: true}}}},
		{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: "alwaysOn"}},
	} {
		if err := client.Database("admin").RunCommand(ctx, cmd).Err(); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
		if _, err := coll.InsertOne(ctx, bson.D{}); err != nil {
			t.Fatalf("insert under %v: %v", cmd, err)
		}
		if err := coll.FindOne(ctx, bson.D{}).Err(); err != nil {
			t.Fatalf("find under %v: %v", cmd, err)
		}
	}
	failCommand(t, client, "off", bson.D{})
}

// TestClearLog: the test command clearLog empties the global log getLog
// serves, and only that one.
func TestClearLog(t *testing.T) {
	cfg := defaultConfig()
	cfg.TestCommands = true
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	admin := connect(t, startInstance(t, cfg)).Database("admin")
	ctx := context.Background()
	before, err := admin.RunCommand(ctx, bson.D{{Key: "getLog", Value: "global"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	lines, _ := before.Lookup("log").Array().Values()
	if len(lines) == 0 {
		t.Fatal("nothing logged at startup: the test does not test")
	}
	if err := admin.RunCommand(ctx, bson.D{{Key: "clearLog", Value: "global"}}).Err(); err != nil {
		t.Fatal(err)
	}
	after, err := admin.RunCommand(ctx, bson.D{{Key: "getLog", Value: "global"}}).Raw()
	if err != nil || after.Lookup("totalLinesWritten").Int32() >= before.Lookup("totalLinesWritten").Int32() ||
		strings.Contains(after.Lookup("log").String(), lines[0].StringValue()) {
		t.Errorf("getLog after clearLog: %v %v", after, err)
	}
	requireCode(t, admin.RunCommand(ctx, bson.D{{Key: "clearLog", Value: "startupWarnings"}}).Err(), 72, "InvalidOptions")
}

// TestPrimaryWriteFailPointExactlyOnce: the onPrimaryTransactionalWrite
// fail point closes a retryable write's connection without a reply, after
// the write or (failBeforeCommitExceptionCode) instead of it; the driver
// retries once on the network error, and every write is applied exactly
// once, whichever way it went.
func TestPrimaryWriteFailPointExactlyOnce(t *testing.T) {
	client := startTestCommands(t, "failtest")
	ctx := context.Background()
	coll := client.Database(testDB).Collection("exactlyonce")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "n", Value: 0}}); err != nil {
		t.Fatal(err)
	}
	set := func(mode any, data bson.D) {
		t.Helper()
		cmd := bson.D{{Key: "configureFailPoint", Value: "onPrimaryTransactionalWrite"}, {Key: "mode", Value: mode}}
		if data != nil {
			cmd = append(cmd, bson.E{Key: "data", Value: data})
		}
		if err := client.Database("admin").RunCommand(ctx, cmd).Err(); err != nil {
			t.Fatal(err)
		}
	}
	inc := bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}
	one := bson.D{{Key: "_id", Value: 1}}
	want := int32(0)
	check := func(what string) {
		t.Helper()
		var doc struct {
			N int32 `bson:"n"`
		}
		if err := coll.FindOne(ctx, one).Decode(&doc); err != nil || doc.N != want {
			t.Fatalf("%s: n = %d (%v), want %d", what, doc.N, err, want)
		}
	}

	set(bson.D{{Key: "times", Value: 1}}, nil) // applied, reply lost
	if res, err := coll.UpdateOne(ctx, one, inc); err != nil || res.ModifiedCount != 1 {
		t.Fatalf("update after a lost reply: %+v, %v", res, err)
	}
	want++
	check("reply lost")

	set(bson.D{{Key: "times", Value: 1}}, bson.D{{Key: "failBeforeCommitExceptionCode", Value: 1}}) // not applied
	var doc bson.M
	if err := coll.FindOneAndUpdate(ctx, one, inc).Decode(&doc); err != nil || doc["n"] != want {
		t.Fatalf("findAndModify after a failure before commit: %v, %v", doc, err)
	}
	want++
	check("failed before commit")

	// The fail point acts on attempts that write, not on retries that
	// find the write done: two writes each lose their first reply.
	set(bson.D{{Key: "times", Value: 2}}, nil)
	for range 2 {
		if _, err := coll.UpdateOne(ctx, one, inc); err != nil {
			t.Fatalf("update after a lost reply: %v", err)
		}
		want++
	}
	check("two writes, each reply lost once")

	set(bson.D{{Key: "times", Value: 1}}, bson.D{{Key: "closeConnection", Value: false}}) // nothing happens
	if _, err := coll.UpdateOne(ctx, one, inc); err != nil {
		t.Fatal(err)
	}
	want++
	check("closeConnection false")
}

// TestPrimaryWriteFailPointCountsStatements: onPrimaryTransactionalWrite
// counts the statements of a retryable write (each document of an
// insert), as MongoDB evaluates it per write the session records: with
// {skip: n} and failBeforeCommitExceptionCode, the first n statements are
// applied and the next fails with a write error, unapplied.
func TestPrimaryWriteFailPointCountsStatements(t *testing.T) {
	client := startTestCommands(t, "failtest")
	ctx := context.Background()
	coll := client.Database(testDB).Collection("perstatement")
	if _, err := coll.InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 10}}, bson.D{{Key: "_id", Value: 11}}}); err != nil {
		t.Fatal(err)
	}
	ids := func(from, to int) (models []mongo.WriteModel) {
		for i := from; i < to; i++ {
			models = append(models, mongo.NewInsertOneModel().SetDocument(bson.D{{Key: "_id", Value: i}}))
		}
		return models
	}
	for _, tc := range []struct {
		name   string
		skip   int
		models []mongo.WriteModel
		count  bson.D // documents matching it after the batch
		want   int64
	}{
		{"insert", 3, ids(1, 5), bson.D{{Key: "_id", Value: bson.D{{Key: "$lt", Value: 10}}}}, 3},
		{"update", 1, []mongo.WriteModel{
			mongo.NewUpdateOneModel().SetFilter(bson.D{{Key: "_id", Value: 10}}).SetUpdate(bson.D{{Key: "$set", Value: bson.D{{Key: "u", Value: 1}}}}),
			mongo.NewUpdateOneModel().SetFilter(bson.D{{Key: "_id", Value: 11}}).SetUpdate(bson.D{{Key: "$set", Value: bson.D{{Key: "u", Value: 1}}}}),
		}, bson.D{{Key: "u", Value: 1}}, 1},
		{"delete", 1, []mongo.WriteModel{
			mongo.NewDeleteOneModel().SetFilter(bson.D{{Key: "_id", Value: 1}}),
			mongo.NewDeleteOneModel().SetFilter(bson.D{{Key: "_id", Value: 2}}),
		}, bson.D{{Key: "_id", Value: bson.D{{Key: "$lt", Value: 10}}}}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := bson.D{{Key: "configureFailPoint", Value: "onPrimaryTransactionalWrite"}, {Key: "mode", Value: bson.D{{Key: "skip", Value: tc.skip}}},
				{Key: "data", Value: bson.D{{Key: "failBeforeCommitExceptionCode", Value: 1}, {Key: "closeConnection", Value: false}}}}
			if err := client.Database("admin").RunCommand(ctx, cmd).Err(); err != nil {
				t.Fatal(err)
			}
			_, err := coll.BulkWrite(ctx, tc.models)
			off := bson.D{{Key: "configureFailPoint", Value: "onPrimaryTransactionalWrite"}, {Key: "mode", Value: "off"}}
			if err := client.Database("admin").RunCommand(ctx, off).Err(); err != nil {
				t.Fatal(err)
			}
			var bwe mongo.BulkWriteException
			if !errors.As(err, &bwe) || len(bwe.WriteErrors) != 1 || bwe.WriteErrors[0].Index != tc.skip || bwe.WriteErrors[0].Code != 1 ||
				!strings.Contains(bwe.WriteErrors[0].Message, "due to failpoint. The write must not be reflected.") {
				t.Fatalf("error %v, want one write error of code 1 at index %d", err, tc.skip)
			}
			if n, err := coll.CountDocuments(ctx, tc.count); err != nil || n != tc.want {
				t.Fatalf("%d documents match %v (%v), want %d", n, tc.count, err, tc.want)
			}
		})
	}
}

// TestChangeStreamResumesAfterGetMoreFailure: a change stream's getMore
// that found its cursor and failed with a resumable error carries
// ResumableChangeStreamError, and the driver resumes the stream without
// losing an event; a getMore failed by failCommand before it found its
// cursor carries no such label, and the stream fails.
func TestChangeStreamResumesAfterGetMoreFailure(t *testing.T) {
	client := startTestCommands(t, "failtest")
	ctx := context.Background()
	coll := client.Database(testDB).Collection("resume")
	cs, err := coll.Watch(ctx, mongo.Pipeline{})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(ctx)
	setGetMore := func(code int, app string) {
		t.Helper()
		// failCommands and errmsg as the Node driver's tests send them:
		// MongoDB does not read them.
		cmd := bson.D{{Key: "configureFailPoint", Value: "failGetMoreAfterCursorCheckout"}, {Key: "mode", Value: bson.D{{Key: "times", Value: 1}}},
			{Key: "data", Value: bson.D{{Key: "failCommands", Value: bson.A{"getMore"}}, {Key: "errorCode", Value: code},
				{Key: "errmsg", Value: "fail"}, {Key: "closeConnection", Value: false}, {Key: "appName", Value: app}}}}
		if err := client.Database("admin").RunCommand(ctx, cmd).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for i, code := range []int{6, 91, 11600, 234} {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: i}}); err != nil {
			t.Fatal(err)
		}
		setGetMore(code, "failtest")
		ev := nextEvent(t, cs)
		if id := ev.Lookup("documentKey", "_id").Int32(); id != int32(i) {
			t.Fatalf("after code %d: event of _id %d, want %d", code, id, i)
		}
	}
	// A fail point for another application's getMores leaves this one's.
	setGetMore(2, "another") // not resumable: the stream would fail
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 4}}); err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, cs); ev.Lookup("documentKey", "_id").Int32() != 4 {
		t.Fatalf("event %v, want _id 4", ev)
	}
	failCommand(t, client, bson.D{{Key: "times", Value: 1}}, bson.D{{Key: "failCommands", Value: bson.A{"getMore"}}, {Key: "errorCode", Value: 6}})
	nctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if cs.Next(nctx) {
		t.Fatalf("event %s, want the getMore's error", cs.Current)
	}
	if got := serverCode(cs.Err()); got != 6 {
		t.Fatalf("stream error %v, want code 6", cs.Err())
	}
}

// TestMaxTimeAlwaysTimeOut: with the maxTimeAlwaysTimeOut fail point on,
// a command with a maxTimeMS fails with MaxTimeMSExpired before doing
// anything, and so does a getMore of a cursor opened with one; commands
// without a time limit run. getParameter reports enableTestCommands,
// which test suites read before using fail points.
func TestMaxTimeAlwaysTimeOut(t *testing.T) {
	client := startTestCommands(t, "failtest")
	ctx := context.Background()
	admin := client.Database("admin")
	params, err := admin.RunCommand(ctx, bson.D{{Key: "getParameter", Value: 1}, {Key: "enableTestCommands", Value: 1}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if on, ok := params.Lookup("enableTestCommands").BooleanOK(); !ok || !on {
		t.Fatalf("getParameter: %s, want enableTestCommands: true", params)
	}

	coll := client.Database(testDB).Collection("maxtime")
	docs := make([]any, 10)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: i}}
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	cur, err := client.Database(testDB).RunCommandCursor(ctx, bson.D{{Key: "find", Value: "maxtime"}, {Key: "batchSize", Value: 2}, {Key: "maxTimeMS", Value: 60000}})
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close(ctx)
	plain, err := coll.Find(ctx, bson.D{}, options.Find().SetBatchSize(2))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close(ctx)

	setMode := func(mode any) int64 {
		t.Helper()
		reply, err := admin.RunCommand(ctx, bson.D{{Key: "configureFailPoint", Value: "maxTimeAlwaysTimeOut"}, {Key: "mode", Value: mode}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		return reply.Lookup("count").AsInt64()
	}
	setMode("alwaysOn")
	withLimit := bson.D{{Key: "count", Value: "maxtime"}, {Key: "maxTimeMS", Value: 60000}}
	requireCode(t, client.Database(testDB).RunCommand(ctx, withLimit).Err(), 50, "MaxTimeMSExpired")
	if n, err := coll.CountDocuments(ctx, bson.D{}); err != nil || n != 10 {
		t.Fatalf("count without maxTimeMS: %d, %v", n, err)
	}
	for cur.TryNext(ctx) {
	}
	if got := serverCode(cur.Err()); got != 50 {
		t.Fatalf("getMore of a cursor with maxTimeMS: %v, want code 50", cur.Err())
	}
	n := 0
	for plain.Next(ctx) {
		n++
	}
	if plain.Err() != nil || n != 10 {
		t.Fatalf("cursor without maxTimeMS: %d documents, %v", n, plain.Err())
	}
	if acted := setMode(bson.D{{Key: "times", Value: 1}}); acted != 2 {
		t.Fatalf("the fail point acted %d times, want 2", acted)
	}
	requireCode(t, client.Database(testDB).RunCommand(ctx, withLimit).Err(), 50, "MaxTimeMSExpired")
	if err := client.Database(testDB).RunCommand(ctx, withLimit).Err(); err != nil {
		t.Fatalf("after its one time: %v", err)
	}
}

// TestFailCommandMatchesAliases: failCommand names a command by its name
// or any of its aliases (isMaster and ismaster, buildInfo and buildinfo),
// as MongoDB's Command::hasAlias; hello is a command of its own.
func TestFailCommandMatchesAliases(t *testing.T) {
	client := startTestCommands(t, "failtest")
	admin := client.Database("admin")
	for _, tc := range []struct {
		named, sent string
		fails       bool
	}{
		{"isMaster", "ismaster", true},
		{"isMaster", "isMaster", true},
		{"isMaster", "hello", false},
		{"buildInfo", "buildinfo", true},
		{"ismaster", "isMaster", true},
		{"hello", "ismaster", false},
	} {
		failCommand(t, client, bson.D{{Key: "times", Value: 1}}, bson.D{{Key: "failCommands", Value: bson.A{tc.named}}, {Key: "errorCode", Value: 2}})
		err := admin.RunCommand(t.Context(), bson.D{{Key: tc.sent, Value: 1}}).Err()
		if got := serverCode(err) == 2; got != tc.fails {
			t.Errorf("failCommands [%s], %s sent: failed %v (%v), want %v", tc.named, tc.sent, got, err, tc.fails)
		}
		failCommand(t, client, "off", bson.D{})
	}
}

// TestMaxTimeNeverTimeOut: with the maxTimeNeverTimeOut fail point on, a
// command runs past its maxTimeMS; off, the same command fails with
// MaxTimeMSExpired.
func TestMaxTimeNeverTimeOut(t *testing.T) {
	client := startTestCommands(t, "failtest")
	ctx := context.Background()
	db := client.Database(testDB)
	if _, err := db.Collection("never").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	slow := bson.D{{Key: "find", Value: "never"}, {Key: "filter", Value: bson.D{{Key: "$where", Value: "sleep(300) || true"}}}, {Key: "maxTimeMS", Value: 50}}
	set := func(mode string) {
		t.Helper()
		if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "configureFailPoint", Value: "maxTimeNeverTimeOut"}, {Key: "mode", Value: mode}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	set("alwaysOn")
	if err := db.RunCommand(ctx, slow).Err(); err != nil {
		t.Fatalf("with maxTimeNeverTimeOut: %v", err)
	}
	set("off")
	requireCode(t, db.RunCommand(ctx, slow).Err(), 50, "MaxTimeMSExpired")
}
