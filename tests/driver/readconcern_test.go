package driver_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestReadConcernSupport: outside transactions only find, aggregate,
// distinct and count (but for snapshot) take a read concern level other
// than local, and a change stream only majority; other commands refuse it
// with InvalidOptions before running.
// linearizable and snapshot need a replica set: a standalone refuses them
// with NotAReplicaSet.
// https://www.mongodb.com/docs/v7.0/reference/read-concern/
func TestReadConcernSupport(t *testing.T) {
	standalone, _ := startServer(t)
	replSet := startReplSet(t)
	ctx := context.Background()
	rc := func(level string) bson.E {
		return bson.E{Key: "readConcern", Value: bson.D{{Key: "level", Value: level}}}
	}
	insert := func(level string) bson.D {
		return bson.D{{Key: "insert", Value: "rc"}, {Key: "documents", Value: bson.A{bson.D{}}}, rc(level)}
	}
	find := func(level string) bson.D {
		return bson.D{{Key: "find", Value: "rc"}, rc(level)}
	}
	count := func(level string) bson.D { return bson.D{{Key: "count", Value: "rc"}, rc(level)} }
	distinct := func(level string) bson.D {
		return bson.D{{Key: "distinct", Value: "rc"}, {Key: "key", Value: "a"}, rc(level)}
	}
	agg := func(level string, stages ...bson.D) bson.D {
		p := bson.A{}
		for _, s := range stages {
			p = append(p, s)
		}
		return bson.D{{Key: "aggregate", Value: "rc"}, {Key: "pipeline", Value: p}, {Key: "cursor", Value: bson.D{}}, rc(level)}
	}
	out := bson.D{{Key: "$out", Value: "rcout"}}
	stream := bson.D{{Key: "$changeStream", Value: bson.D{}}}
	tests := []struct {
		name    string
		replSet bool
		cmd     bson.D
		code    int // 0: succeeds
	}{
		{"insert local", false, insert("local"), 0},
		{"insert majority", false, insert("majority"), 72},
		{"insert snapshot", true, insert("snapshot"), 72},
		{"killCursors snapshot", true, bson.D{{Key: "killCursors", Value: "rc"}, {Key: "cursors", Value: bson.A{int64(1)}}, rc("snapshot")}, 72},
		// a snapshot session's getMores carry its read concern; a cursor
		// reads the state it was opened at
		{"getMore snapshot", true, bson.D{{Key: "getMore", Value: int64(1)}, {Key: "collection", Value: "rc"}, rc("snapshot")}, 43},
		{"update linearizable", true, bson.D{{Key: "update", Value: "rc"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "u", Value: bson.D{}}}}}, rc("linearizable")}, 72},
		{"delete available", false, bson.D{{Key: "delete", Value: "rc"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "limit", Value: 0}}}}, rc("available")}, 72},
		{"findAndModify majority", false, bson.D{{Key: "findAndModify", Value: "rc"}, {Key: "remove", Value: true}, rc("majority")}, 72},
		{"createIndexes majority", false, bson.D{{Key: "createIndexes", Value: "rc"}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "a_1"}}}}, rc("majority")}, 72},
		{"listCollections majority", false, bson.D{{Key: "listCollections", Value: 1}, rc("majority")}, 72},
		{"listIndexes majority", false, bson.D{{Key: "listIndexes", Value: "rc"}, rc("majority")}, 72},
		{"find majority", false, find("majority"), 0},
		{"find available", false, find("available"), 0},
		{"find linearizable on a standalone", false, find("linearizable"), 123},
		{"find snapshot on a standalone", false, find("snapshot"), 123},
		{"find linearizable on a replica set", true, find("linearizable"), 0},
		{"find snapshot on a replica set", true, find("snapshot"), 0},
		{"count majority", false, count("majority"), 0},
		{"count snapshot", true, count("snapshot"), 72},
		{"distinct snapshot", true, distinct("snapshot"), 0},
		{"aggregate majority", false, agg("majority"), 0},
		{"aggregate snapshot", true, agg("snapshot"), 0},
		{"aggregate $out linearizable", true, agg("linearizable", out), 72},
		{"aggregate $out majority", true, agg("majority", out), 0},
		// a change stream reads majority-committed changes only
		{"change stream local", true, agg("local", stream), 72},
		{"change stream snapshot", true, agg("snapshot", stream), 72},
		{"change stream majority", true, agg("majority", stream), 0},
		// stages of this node's own state take local only, nested too;
		// $collStats and $indexStats take any (migration tools read them
		// under majority)
		{"$collStats local", true, agg("local", bson.D{{Key: "$collStats", Value: bson.D{{Key: "count", Value: bson.D{}}}}}), 0},
		{"$collStats majority", true, agg("majority", bson.D{{Key: "$collStats", Value: bson.D{{Key: "count", Value: bson.D{}}}}}), 0},
		{"$indexStats majority", false, agg("majority", bson.D{{Key: "$indexStats", Value: bson.D{}}}), 0},
		{"$planCacheStats majority", false, agg("majority", bson.D{{Key: "$planCacheStats", Value: bson.D{}}}), 72},
		{"$listSearchIndexes snapshot", true, agg("snapshot", bson.D{{Key: "$listSearchIndexes", Value: bson.D{}}}), 72},
		{"$planCacheStats in $unionWith majority", false, agg("majority", bson.D{{Key: "$unionWith", Value: bson.D{{Key: "coll", Value: "rc"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$planCacheStats", Value: bson.D{}}}}}}}}), 72},
		{"explain find majority", false, bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "rc"}}}, rc("majority")}, 0},
		{"explain aggregate majority", false, bson.D{{Key: "explain", Value: bson.D{{Key: "aggregate", Value: "rc"}, {Key: "pipeline", Value: bson.A{}}, {Key: "cursor", Value: bson.D{}}}}, rc("majority")}, 72},
		{"aggregate explain majority", false, append(agg("majority"), bson.E{Key: "explain", Value: true}), 72},
		{"aggregate explain snapshot", true, append(agg("snapshot"), bson.E{Key: "explain", Value: true}), 72},
		{"aggregate explain local", false, append(agg("local"), bson.E{Key: "explain", Value: true}), 0},
		{"explain insert majority", false, bson.D{{Key: "explain", Value: bson.D{{Key: "insert", Value: "rc"}, {Key: "documents", Value: bson.A{}}}}, rc("majority")}, 72},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := standalone
			if tc.replSet {
				client = replSet
			}
			db := client.Database(testDB)
			if err := db.RunCommand(ctx, bson.D{{Key: "insert", Value: "rc"}, {Key: "documents", Value: bson.A{bson.D{{Key: "a", Value: 1}}}}}).Err(); err != nil {
				t.Fatal(err)
			}
			err := db.RunCommand(ctx, tc.cmd).Err()
			if tc.code == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			requireCode(t, err, tc.code, "")
			var ce mongo.CommandError
			if tc.code == 72 && (!errors.As(err, &ce) || !strings.Contains(ce.Message, "does not support { readConcern")) {
				t.Fatalf("message %v", err)
			}
		})
	}
}

// TestSnapshotSessionReads: a read at readConcern snapshot reports the
// cluster time its snapshot has every write up to (cursor.atClusterTime,
// or atClusterTime beside distinct's values). A snapshot session sends
// that time with its next reads, which read that state whatever was
// written since, as does any read naming it.
func TestSnapshotSessionReads(t *testing.T) {
	client := startReplSet(t)
	ctx := context.Background()
	db := client.Database(testDB)
	coll := db.Collection("snapreads")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "x", Value: 11}}); err != nil {
		t.Fatal(err)
	}
	snap := bson.D{{Key: "readConcern", Value: bson.D{{Key: "level", Value: "snapshot"}}}}
	for _, cmd := range []bson.D{
		append(bson.D{{Key: "find", Value: "snapreads"}}, snap...),
		append(bson.D{{Key: "aggregate", Value: "snapreads"}, {Key: "pipeline", Value: bson.A{}}, {Key: "cursor", Value: bson.D{}}}, snap...),
		append(bson.D{{Key: "distinct", Value: "snapreads"}, {Key: "key", Value: "x"}}, snap...),
	} {
		reply, err := db.RunCommand(ctx, cmd).Raw()
		if err != nil {
			t.Fatal(err)
		}
		field := reply.Lookup("atClusterTime")
		if cmd[0].Key != "distinct" {
			field = reply.Lookup("cursor", "atClusterTime")
		}
		at, inc, ok := field.TimestampOK()
		opAt, opInc, _ := reply.Lookup("operationTime").TimestampOK()
		if !ok || at == 0 || at > opAt || at == opAt && inc > opInc {
			t.Errorf("%s: atClusterTime %v in %s", cmd[0].Key, field, reply)
		}
	}
	plain, err := db.RunCommand(ctx, bson.D{{Key: "find", Value: "snapreads"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.LookupErr("cursor", "atClusterTime"); err == nil {
		t.Errorf("a local read reports atClusterTime: %s", plain)
	}

	sess, err := client.StartSession(options.Session().SetSnapshot(true))
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(ctx)
	x := func(ctx context.Context) any {
		t.Helper()
		var doc bson.M
		if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: 1}}).Decode(&doc); err != nil {
			t.Fatal(err)
		}
		return doc["x"]
	}
	inSession := mongo.NewSessionContext(ctx, sess)
	if got := x(inSession); got != int32(11) {
		t.Fatalf("first snapshot read: x = %v", got)
	}
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "x", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 2}, {Key: "x", Value: 33}}); err != nil {
		t.Fatal(err)
	}
	if got := x(ctx); got != int32(12) {
		t.Fatalf("read outside the session: x = %v", got)
	}
	if got := x(inSession); got != int32(11) {
		t.Fatalf("second snapshot read: x = %v, want the first read's 11", got)
	}
	var vals []int32
	if err := coll.Distinct(inSession, "x", bson.D{}).Decode(&vals); err != nil || !slices.Equal(vals, []int32{11}) {
		t.Fatalf("distinct in the session: %v, %v", vals, err)
	}
	n, err := coll.CountDocuments(inSession, bson.D{})
	if err != nil || n != 1 {
		t.Fatalf("countDocuments in the session: %d, %v", n, err)
	}

	// the session's time, named by another session
	at := sess.SnapshotTime()
	if at.IsZero() {
		t.Fatal("the session has no snapshot time")
	}
	at2 := options.Session().SetSnapshot(true).SetSnapshotTime(at)
	sess2, err := client.StartSession(at2)
	if err != nil {
		t.Fatal(err)
	}
	defer sess2.EndSession(ctx)
	if got := x(mongo.NewSessionContext(ctx, sess2)); got != int32(11) {
		t.Fatalf("read at the saved snapshot time: x = %v", got)
	}

	// a cursor reads its state to the end
	cur, err := coll.Find(inSession, bson.D{}, options.Find().SetBatchSize(1).SetSort(bson.D{{Key: "_id", Value: -1}}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := coll.DeleteMany(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	var all []bson.M
	if err := cur.All(ctx, &all); err != nil || len(all) != 1 || all[0]["x"] != int32(11) {
		t.Fatalf("cursor at the snapshot after a delete: %v, %v", all, err)
	}

	readAt := func(ts bson.Timestamp) error {
		return db.RunCommand(ctx, bson.D{{Key: "find", Value: "snapreads"}, {Key: "readConcern", Value: bson.D{
			{Key: "level", Value: "snapshot"}, {Key: "atClusterTime", Value: ts}}}}).Err()
	}
	if err := readAt(at); err != nil {
		t.Fatalf("a read naming the held time: %v", err)
	}
	requireCode(t, readAt(bson.Timestamp{T: at.T, I: at.I - 1}), 239, "SnapshotTooOld")
	requireCode(t, readAt(bson.Timestamp{T: at.T + 3600}), 72, "InvalidOptions")

	// with no history window the state goes once nothing reads it: the
	// sessions' cursors are closed
	admin := client.Database("admin")
	if err := admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: "minSnapshotHistoryWindowInSeconds", Value: 0}}).Err(); err != nil {
		t.Fatal(err)
	}
	defer admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: "minSnapshotHistoryWindowInSeconds", Value: 300}})
	for deadline := time.Now().Add(10 * time.Second); readAt(at) == nil; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the state of a snapshot read is still held with no history window")
		}
	}
	requireCode(t, readAt(at), 239, "SnapshotTooOld")
	// in a transaction (of a session that is not causally consistent,
	// whose driver would add afterClusterTime to the read concern)
	tsess, err := client.StartSession(options.Session().SetCausalConsistency(false))
	if err != nil {
		t.Fatal(err)
	}
	defer tsess.EndSession(ctx)
	txnReadAt := func(ts bson.Timestamp) error {
		return mongo.WithSession(ctx, tsess, func(ctx context.Context) error {
			if err := tsess.StartTransaction(options.Transaction().SetReadConcern(nil)); err != nil {
				return err
			}
			defer tsess.AbortTransaction(context.Background())
			return db.RunCommand(ctx, bson.D{{Key: "find", Value: "snapreads"}, {Key: "readConcern", Value: bson.D{
				{Key: "level", Value: "snapshot"}, {Key: "atClusterTime", Value: ts}}}}).Err()
		})
	}
	requireCode(t, txnReadAt(at), 238, "NotImplemented")
	// a time never handed out is refused as outside a transaction
	// (jstest readConcern_atClusterTime.js)
	requireCode(t, txnReadAt(bson.Timestamp{T: at.T + 3600}), 72, "InvalidOptions")
}
