package driver_test

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/internal/instance"
)

// TestClusterTimeAcrossRestart: the cluster clock persists nothing, yet a
// server started after another reports later times than the first did
// (with a sane wall clock).
func TestClusterTimeAcrossRestart(t *testing.T) {
	cfg := defaultConfig()
	cfg.ReplSetName = "folio"
	opTime := func() bson.Timestamp {
		in, err := instance.Start(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close(context.Background())
		client := dial(t, in)
		defer client.Disconnect(context.Background())
		var reply bson.Raw
		for i := 0; i < 50; i++ {
			err = client.Database(testDB).RunCommand(context.Background(), bson.D{
				{Key: "insert", Value: "ct"}, {Key: "documents", Value: bson.A{bson.D{}}},
			}).Decode(&reply)
			if err != nil {
				t.Fatal(err)
			}
		}
		ts, i, ok := reply.Lookup("operationTime").TimestampOK()
		if !ok {
			t.Fatalf("no operationTime: %v", reply)
		}
		return bson.Timestamp{T: ts, I: i}
	}
	first := opTime()
	second := opTime()
	if second.Compare(first) <= 0 {
		t.Fatalf("after a restart operationTime %v, before it %v", second, first)
	}
}

// TestWriteOperationTime: a write's reply carries as operationTime the
// time of the last oplog entry it wrote, as MongoDB's (the client's
// lastOp), not a later time: a change stream started at it sees that
// write first.
func TestWriteOperationTime(t *testing.T) {
	in := startInstance(t, replSetConfig())
	client := dial(t, in)
	ctx := context.Background()
	db := client.Database(testDB)
	coll := db.Collection("optime")
	if _, err := coll.InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 2}}}); err != nil {
		t.Fatal(err)
	}
	lsid := bson.D{{Key: "id", Value: bson.Binary{Subtype: bson.TypeBinaryUUID, Data: []byte("optime-test-lsid")}}}
	rows := []struct {
		name string
		// cmds run in order; the last one's operationTime is checked.
		cmds []bson.D
		// op and id are the last entry's op and document _id (0: in an
		// applyOps).
		op string
		id int32
	}{
		{"insert of one", []bson.D{{{Key: "insert", Value: "optime"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 3}}}}}}, "i", 3},
		{"insert of several", []bson.D{{{Key: "insert", Value: "optime"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 4}}, bson.D{{Key: "_id", Value: 5}}}}}}, "i", 5},
		{"update", []bson.D{{{Key: "update", Value: "optime"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 1}}}}}}}}}}, "u", 1},
		{"multi-update", []bson.D{{{Key: "update", Value: "optime"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "u", Value: bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}}, {Key: "multi", Value: true}}}}}}, "u", 5},
		{"upsert", []bson.D{{{Key: "update", Value: "optime"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 6}}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 1}}}}}, {Key: "upsert", Value: true}}}}}}, "i", 6},
		{"delete", []bson.D{{{Key: "delete", Value: "optime"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 2}}}, {Key: "limit", Value: 1}}}}}}, "d", 2},
		{"findAndModify", []bson.D{{{Key: "findAndModify", Value: "optime"}, {Key: "query", Value: bson.D{{Key: "_id", Value: 3}}}, {Key: "update", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "b", Value: 1}}}}}}}, "u", 3},
		{"commitTransaction", []bson.D{
			{{Key: "insert", Value: "optime"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 7}}}}, {Key: "lsid", Value: lsid}, {Key: "txnNumber", Value: int64(1)}, {Key: "startTransaction", Value: true}, {Key: "autocommit", Value: false}},
			{{Key: "commitTransaction", Value: 1}, {Key: "lsid", Value: lsid}, {Key: "txnNumber", Value: int64(1)}, {Key: "autocommit", Value: false}},
		}, "c", 0},
	}
	for _, row := range rows {
		var reply bson.Raw
		for _, cmd := range row.cmds {
			name := cmd[0].Key
			target := db
			if name == "commitTransaction" {
				target = client.Database("admin")
			}
			if err := target.RunCommand(ctx, cmd).Decode(&reply); err != nil {
				t.Fatalf("%s: %s: %v", row.name, name, err)
			}
		}
		secs, inc, ok := reply.Lookup("operationTime").TimestampOK()
		if !ok {
			t.Fatalf("%s: no operationTime: %s", row.name, reply)
		}
		at := bson.Timestamp{T: secs, I: inc}
		var entry bson.Raw
		err := client.Database("local").Collection("oplog.rs").FindOne(ctx, bson.D{{Key: "ts", Value: at}}).Decode(&entry)
		if err != nil {
			t.Fatalf("%s: no oplog entry at operationTime %v: %v", row.name, at, err)
		}
		if ops, ok := entry.Lookup("o", "applyOps").ArrayOK(); ok && row.op != "c" {
			// TiKV logs a commit's several entries as one applyOps
			vals, _ := ops.Values()
			entry = vals[len(vals)-1].Document()
		}
		if op := entry.Lookup("op").StringValue(); op != row.op {
			t.Fatalf("%s: the entry at operationTime is %s", row.name, entry)
		}
		if row.id != 0 {
			id := entry.Lookup("o", "_id")
			if row.op == "u" {
				id = entry.Lookup("o2", "_id")
			}
			if n, ok := id.Int32OK(); !ok || n != row.id {
				t.Fatalf("%s: the entry at operationTime is %s", row.name, entry)
			}
		}
		// ... and the last entry the write made: none of the collection's follows.
		n, err := client.Database("local").Collection("oplog.rs").CountDocuments(ctx, bson.D{{Key: "ts", Value: bson.D{{Key: "$gt", Value: at}}}})
		if err != nil || n != 0 {
			t.Fatalf("%s: %d entries after operationTime (%v)", row.name, n, err)
		}
		cs, err := coll.Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetStartAtOperationTime(&at))
		if err != nil {
			t.Fatal(err)
		}
		ev := nextEvent(t, cs)
		cs.Close(ctx)
		if got := ev.Lookup("clusterTime"); !got.Equal(bson.RawValue{Type: bson.TypeTimestamp, Value: reply.Lookup("operationTime").Value}) {
			t.Fatalf("%s: a stream started at operationTime %v first sees %s", row.name, at, ev)
		}
	}
}
