package driver_test

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

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
