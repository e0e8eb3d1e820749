package main

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestNullServer drives the null server with the driver and with the ping
// and YCSB-A workloads, which check their replies.
func TestNullServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- serveNull(ctx, l, time.Microsecond) }()
	uri := "mongodb://" + l.Addr().String() + "/"

	client, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatal(err)
	}
	coll := client.Database("bench").Collection("usertable")
	doc, err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: "user42"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if id := doc.Lookup("_id").StringValue(); id != "user42" || len(doc) < ycsbFields*ycsbFieldLen {
		t.Errorf("find returned _id %q in %d bytes", id, len(doc))
	}
	res, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: "user42"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "field1", Value: "x"}}}})
	if err != nil || res.MatchedCount != 1 || res.ModifiedCount != 1 {
		t.Errorf("update: %+v, %v", res, err)
	}
	if err := client.Disconnect(ctx); err != nil {
		t.Fatal(err)
	}

	var out, log bytes.Buffer
	if err := run([]string{"-uri", uri, "-workload", "ping,ycsb-a", "-clients", "2", "-records", "2000", "-duration", "300ms", "-rounds", "2"}, &out, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if !strings.Contains(out.String(), "ycsb-a") || !strings.Contains(out.String(), "median of 2 rounds") {
		t.Errorf("no ycsb-a runs or no medians in\n%s", out.String())
	}
	cancel()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
}
