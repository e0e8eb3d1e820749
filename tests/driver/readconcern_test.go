package driver_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestReadConcernSupport: outside transactions only find, aggregate,
// distinct and count (but for snapshot) take a read concern level other
// than local; other commands refuse it with InvalidOptions before running.
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
	tests := []struct {
		name    string
		replSet bool
		cmd     bson.D
		code    int // 0: succeeds
	}{
		{"insert local", false, insert("local"), 0},
		{"insert majority", false, insert("majority"), 72},
		{"insert snapshot", true, insert("snapshot"), 72},
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
		{"explain find majority", false, bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "rc"}}}, rc("majority")}, 0},
		{"explain aggregate majority", false, bson.D{{Key: "explain", Value: bson.D{{Key: "aggregate", Value: "rc"}, {Key: "pipeline", Value: bson.A{}}, {Key: "cursor", Value: bson.D{}}}}, rc("majority")}, 72},
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
// that time with its next reads, which would need the history at it: Folio
// refuses them (NotImplemented) rather than reading the present.
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
	err = mongo.WithSession(ctx, sess, func(ctx context.Context) error {
		var doc bson.M
		if err := coll.FindOne(ctx, bson.D{}).Decode(&doc); err != nil || doc["x"] != int32(11) {
			t.Fatalf("first snapshot read: %v, %v", doc, err)
		}
		return coll.FindOne(ctx, bson.D{}).Err()
	})
	requireCode(t, err, 238, "NotImplemented")
}
