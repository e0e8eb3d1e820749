package driver_test

import (
	"bytes"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestAppendOplogNote: appendOplogNote writes a no-op oplog entry holding
// its data, after every earlier write; with a maxClusterTime at or below
// the cluster time it writes nothing and says why, as MongoDB does.
func TestAppendOplogNote(t *testing.T) {
	client := startReplSet(t)
	admin := client.Database("admin")
	note := bson.D{{Key: "msg", Value: "checkpoint"}, {Key: "n", Value: int32(7)}}
	if _, err := runRaw(t, admin, bson.D{{Key: "appendOplogNote", Value: 1}, {Key: "data", Value: note}}); err != nil {
		t.Fatal(err)
	}
	oplog := client.Database("local").Collection("oplog.rs")
	last := findAll(t, oplog, bson.D{}, options.Find().SetSort(bson.D{{Key: "$natural", Value: -1}}).SetLimit(1))
	if len(last) != 1 || last[0].Lookup("op").StringValue() != "n" || !bytes.Equal(last[0].Lookup("o").Document(), mustRaw(t, note)) {
		t.Fatalf("the last oplog entry is %v, want a no-op holding %v", last, note)
	}
	reply, err := runRaw(t, admin, bson.D{{Key: "appendOplogNote", Value: 1}, {Key: "data", Value: note}, {Key: "maxClusterTime", Value: bson.Timestamp{T: 1, I: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if info, _ := reply.Lookup("info").StringValueOK(); !strings.HasPrefix(info, "Requested maxClusterTime Timestamp(1, 1) is less or equal to the last primary OpTime: Timestamp(") {
		t.Fatalf("a maxClusterTime in the past: %s", reply)
	}
	if after := findAll(t, oplog, bson.D{}, options.Find().SetSort(bson.D{{Key: "$natural", Value: -1}}).SetLimit(1)); !bytes.Equal(after[0], last[0]) {
		t.Fatalf("a maxClusterTime in the past wrote %s", after[0])
	}
	_, err = runRaw(t, client.Database("test"), bson.D{{Key: "appendOplogNote", Value: 1}, {Key: "data", Value: note}})
	requireCode(t, err, 13, "Unauthorized")
}
