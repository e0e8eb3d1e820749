package driver_test

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestCollModOptionsOutliveIndexChanges: what collMod made of a
// collection's options (a time series collection's granularity and
// expiry, a plain one's validator) stays through a later createIndexes,
// collMod of an index and dropIndexes, as listCollections shows; an index
// change put back the options the collection was loaded with.
func TestCollModOptionsOutliveIndexChanges(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("collmodidx")
	if err := db.CreateCollection(ctx, "ts", options.CreateCollection().SetTimeSeriesOptions(options.TimeSeries().SetTimeField("t").SetMetaField("m"))); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateCollection(ctx, "plain"); err != nil {
		t.Fatal(err)
	}
	mustRunRaw(t, db, bson.D{{Key: "collMod", Value: "ts"}, {Key: "timeseries", Value: bson.D{{Key: "granularity", Value: "hours"}}}})
	mustRunRaw(t, db, bson.D{{Key: "collMod", Value: "ts"}, {Key: "expireAfterSeconds", Value: 100}})
	mustRunRaw(t, db, bson.D{{Key: "collMod", Value: "plain"}, {Key: "validator", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$gt", Value: 1}}}}}})
	want := map[string]string{
		"ts":    `{"expireAfterSeconds": {"$numberLong":"100"},"timeseries": {"timeField": "t","metaField": "m","granularity": "hours","bucketMaxSpanSeconds": {"$numberInt":"2592000"}}}`,
		"plain": `{"validator": {"a": {"$gt": {"$numberInt":"1"}}},"validationLevel": "strict","validationAction": "error"}`,
	}
	check := func(after string) {
		t.Helper()
		for name, w := range want {
			specs, err := db.ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: name}})
			if err != nil || len(specs) != 1 {
				t.Fatalf("listCollections %s: %v %v", name, specs, err)
			}
			if got := specs[0].Options.String(); got != w {
				t.Errorf("after %s, %s's options: %s, want %s", after, name, got, w)
			}
		}
	}
	check("collMod")
	for _, name := range []string{"ts", "plain"} {
		if _, err := db.Collection(name).Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "x", Value: 1}}}); err != nil {
			t.Fatal(err)
		}
	}
	check("createIndexes")
	for _, name := range []string{"ts", "plain"} {
		mustRunRaw(t, db, bson.D{{Key: "collMod", Value: name}, {Key: "index", Value: bson.D{{Key: "name", Value: "x_1"}, {Key: "hidden", Value: true}}}})
	}
	check("collMod of an index")
	for _, name := range []string{"ts", "plain"} {
		if err := db.Collection(name).Indexes().DropOne(ctx, "x_1"); err != nil {
			t.Fatal(err)
		}
	}
	check("dropIndexes")
}
