// Command squillions shows one->squillions: log messages are far too many to
// embed in their host, so each is its own document referencing the host,
// while the host keeps a bounded copy of the latest ones, maintained by
// $push with $each, $sort and $slice.
package main

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/examples/internal/cookbook"
)

func main() { cookbook.Main("squillions", run) }

// keep is how many recent messages a host embeds (the seed keeps 1000).
const keep = 5

// entry is an embedded recent message.
type entry struct {
	Time    time.Time `bson:"time"`
	Message string    `bson:"message"`
}

func run(ctx context.Context, k *cookbook.Kitchen) {
	hosts, logs := k.DB.Collection("hosts"), k.DB.Collection("logmsg")
	k.Step("hosts are found by address; messages reference their host")
	_, err := hosts.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "ipaddr", Value: 1}}, Options: options.Index().SetUnique(true)})
	k.OK(err, "createIndex {ipaddr: 1} unique")
	_, err = logs.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "host", Value: 1}, {Key: "time", Value: -1}}})
	k.OK(err, "createIndex {host: 1, time: -1}")
	_, err = hosts.InsertOne(ctx, bson.M{"ipaddr": "127.66.66.66", "hostname": "goofy.example.com", "logmsgs": bson.A{}})
	k.OK(err, "insert host")

	k.Step("log 12 messages, out of order: each is inserted and pushed onto the host's capped list")
	start := time.Date(2014, 3, 28, 9, 42, 0, 0, time.UTC)
	for _, i := range []int{0, 1, 2, 3, 11, 4, 5, 6, 10, 7, 8, 9} {
		logMessage(ctx, k, hosts, logs, "127.66.66.66", start.Add(time.Duration(i)*time.Second), fmt.Sprintf("message %d", i))
	}
	k.UsesIndex(ctx, hosts, bson.M{"ipaddr": "127.66.66.66"}, nil, "ipaddr_1")

	var host struct {
		ID      bson.ObjectID `bson:"_id"`
		Logmsgs []entry       `bson:"logmsgs"`
	}
	if !k.OK(hosts.FindOne(ctx, bson.M{"ipaddr": "127.66.66.66"}).Decode(&host), "find host") {
		return
	}
	var got []string
	for _, e := range host.Logmsgs {
		got = append(got, e.Message)
	}
	k.Check(fmt.Sprint(got) == "[message 7 message 8 message 9 message 10 message 11]",
		"the host embeds the %d latest messages, oldest first (got %v)", keep, got)
	n, err := logs.CountDocuments(ctx, bson.M{"host": host.ID})
	k.Check(err == nil && n == 12, "all 12 messages are in logmsg (got %d)", n)
	k.UsesIndex(ctx, logs, bson.M{"host": host.ID}, bson.D{{Key: "time", Value: -1}}, "host_1_time_-1")
}

// logMessage stores one message on the many side and keeps the latest keep
// messages, sorted by time, on the one side.
func logMessage(ctx context.Context, k *cookbook.Kitchen, hosts, logs *mongo.Collection, ip string, now time.Time, msg string) {
	var host struct {
		ID bson.ObjectID `bson:"_id"`
	}
	// Project only _id: the host document is big, do not ship it.
	err := hosts.FindOne(ctx, bson.M{"ipaddr": ip}, options.FindOne().SetProjection(bson.M{"_id": 1})).Decode(&host)
	if !k.OK(err, "find host id") {
		return
	}
	_, err = logs.InsertOne(ctx, bson.M{"time": now, "message": msg, "ipaddr": ip, "host": host.ID})
	k.OK(err, "insert log message")
	_, err = hosts.UpdateOne(ctx, bson.M{"_id": host.ID}, bson.M{"$push": bson.M{"logmsgs": bson.M{
		"$each":  []entry{{Time: now, Message: msg}},
		"$sort":  bson.M{"time": 1},
		"$slice": -keep,
	}}})
	k.OK(err, "push onto the capped list")
}
