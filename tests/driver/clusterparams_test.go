package driver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestClusterParameters: setClusterParameter stores changeStreamOptions
// and getClusterParameter reads it back (its default, "off" at
// Timestamp(0, 0), until set), with MongoDB 7.0's errors; a standalone
// refuses both.
func TestClusterParameters(t *testing.T) {
	client := startReplSet(t)
	ctx := context.Background()
	admin := client.Database("admin")
	get := func(arg any) string {
		t.Helper()
		raw, err := admin.RunCommand(ctx, bson.D{{Key: "getClusterParameter", Value: arg}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		return raw.Lookup("clusterParameters").String()
	}
	def := `[{"_id": "changeStreamOptions","clusterParameterTime": {"$timestamp":{"t":0,"i":0}},"preAndPostImages": {"expireAfterSeconds": "off"}}]`
	for _, arg := range []any{"changeStreamOptions", "*", bson.A{"changeStreamOptions"}} {
		if got := get(arg); got != def {
			t.Errorf("getClusterParameter %v: %s", arg, got)
		}
	}
	set := func(v any) error {
		return admin.RunCommand(ctx, bson.D{{Key: "setClusterParameter", Value: bson.D{{Key: "changeStreamOptions", Value: v}}}}).Err()
	}
	if err := set(bson.D{{Key: "preAndPostImages", Value: bson.D{{Key: "expireAfterSeconds", Value: 7200}}}}); err != nil {
		t.Fatal(err)
	}
	raw, err := admin.RunCommand(ctx, bson.D{{Key: "getClusterParameter", Value: "changeStreamOptions"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	p := raw.Lookup("clusterParameters", "0").Document()
	if ts, _ := p.Lookup("clusterParameterTime").Timestamp(); ts == 0 || p.Lookup("preAndPostImages", "expireAfterSeconds").Type != bson.TypeInt64 ||
		p.Lookup("preAndPostImages", "expireAfterSeconds").Int64() != 7200 {
		t.Errorf("after setting 7200: %s", p)
	}
	if err := set(bson.D{{Key: "preAndPostImages", Value: bson.D{{Key: "expireAfterSeconds", Value: "off"}}}}); err != nil {
		t.Fatal(err)
	}
	if got := get("changeStreamOptions"); got == def || !strings.Contains(got, `"expireAfterSeconds": "off"`) {
		t.Errorf("after setting off again: %s", got)
	}
	for _, tc := range []struct {
		cmd  bson.D
		code int
	}{
		{bson.D{{Key: "setClusterParameter", Value: 1}}, 14},
		{bson.D{{Key: "setClusterParameter", Value: nil}}, 40414},
		{bson.D{{Key: "setClusterParameter", Value: bson.D{{Key: "changeStreamOptions", Value: bson.D{}}, {Key: "other", Value: bson.D{}}}}}, 72},
		{bson.D{{Key: "setClusterParameter", Value: bson.D{{Key: "changeStreamOptions", Value: bson.D{{Key: "$bad", Value: 1}}}}}}, 52},
		{bson.D{{Key: "setClusterParameter", Value: bson.D{{Key: "noSuchParameter", Value: bson.D{}}}}}, 4},
		{bson.D{{Key: "setClusterParameter", Value: bson.D{{Key: "changeStreamOptions", Value: 1}}}}, 2},
		{bson.D{{Key: "setClusterParameter", Value: bson.D{{Key: "changeStreamOptions", Value: bson.D{}}}}}, 2},
		{bson.D{{Key: "setClusterParameter", Value: bson.D{{Key: "changeStreamOptions", Value: bson.D{{Key: "preAndPostImages", Value: 1}}}}}}, 2},
		{bson.D{{Key: "setClusterParameter", Value: bson.D{{Key: "changeStreamOptions", Value: bson.D{{Key: "preAndPostImages", Value: bson.D{}}}}}}}, 2},
		{bson.D{{Key: "setClusterParameter", Value: bson.D{{Key: "changeStreamOptions", Value: bson.D{{Key: "preAndPostImages", Value: bson.D{{Key: "expireAfterSeconds", Value: "on"}}}}}}}}, 2},
		{bson.D{{Key: "setClusterParameter", Value: bson.D{{Key: "changeStreamOptions", Value: bson.D{{Key: "preAndPostImages", Value: bson.D{{Key: "expireAfterSeconds", Value: 0}}}}}}}}, 2},
		{bson.D{{Key: "setClusterParameter", Value: bson.D{{Key: "changeStreamOptions", Value: bson.D{{Key: "preAndPostImages", Value: bson.D{{Key: "expireAfterSeconds", Value: true}}}}}}}}, 2},
		{bson.D{{Key: "setClusterParameter", Value: bson.D{{Key: "changeStreamOptions", Value: bson.D{{Key: "preAndPostImages", Value: bson.D{{Key: "expireAfterSeconds", Value: 5}, {Key: "other", Value: 1}}}}}}}}, 2},
		{bson.D{{Key: "getClusterParameter", Value: bson.A{}}}, 2},
		{bson.D{{Key: "getClusterParameter", Value: "noSuchParameter"}}, 4},
		{bson.D{{Key: "getClusterParameter", Value: bson.A{"changeStreamOptions", 1}}}, 14},
		{bson.D{{Key: "getClusterParameter", Value: 1}}, 14},
	} {
		requireCode(t, admin.RunCommand(ctx, tc.cmd).Err(), tc.code, "")
	}
	requireCode(t, client.Database("test").RunCommand(ctx, bson.D{{Key: "getClusterParameter", Value: "*"}}).Err(), 13, "Unauthorized")

	standalone, _ := startServer(t)
	requireCode(t, standalone.Database("admin").RunCommand(ctx, bson.D{{Key: "getClusterParameter", Value: "*"}}).Err(), 20, "IllegalOperation")
}

// TestPreImagesExpire: with changeStreamOptions.preAndPostImages.
// expireAfterSeconds set, the pre-images of older changes go: a stream
// started before them then gives fullDocumentBeforeChange null
// (whenAvailable) or fails (required, NoMatchingDocument), while the
// changes themselves stay in the oplog.
func TestPreImagesExpire(t *testing.T) {
	cfg := defaultConfig()
	cfg.ReplSetName = "folio"
	cfg.PreImageRemovalSleep = 100 * time.Millisecond
	in := startInstance(t, cfg)
	client := connect(t, in)
	ctx := context.Background()
	db := client.Database(testDB)
	if err := db.CreateCollection(ctx, "expiring", options.CreateCollection().SetChangeStreamPreAndPostImages(bson.D{{Key: "enabled", Value: true}})); err != nil {
		t.Fatal(err)
	}
	coll := db.Collection("expiring")
	start, err := coll.Watch(ctx, mongo.Pipeline{})
	if err != nil {
		t.Fatal(err)
	}
	token := start.ResumeToken()
	start.Close(ctx)
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "v", Value: "before"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "v", Value: "after"}}}}); err != nil {
		t.Fatal(err)
	}
	// preImage reads the update's event from the start, with mode.
	preImage := func(mode options.FullDocument) (bson.RawValue, error) {
		t.Helper()
		cs, err := coll.Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetStartAfter(token).SetFullDocumentBeforeChange(mode))
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close(ctx)
		nextEvent(t, cs) // the insert
		tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if !cs.Next(tctx) {
			return bson.RawValue{}, cs.Err()
		}
		return cs.Current.Lookup("fullDocumentBeforeChange"), nil
	}
	if pre, err := preImage(options.Required); err != nil || pre.Document().Lookup("v").StringValue() != "before" {
		t.Fatalf("before any expiry: %s (%v)", pre, err)
	}
	if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "setClusterParameter", Value: bson.D{{Key: "changeStreamOptions", Value: bson.D{{Key: "preAndPostImages", Value: bson.D{{Key: "expireAfterSeconds", Value: 1}}}}}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		pre, err := preImage(options.WhenAvailable)
		if err != nil {
			t.Fatal(err)
		}
		if pre.Type == bson.TypeNull {
			break // the event is there, its pre-image gone
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pre-image is still there: %s", pre)
		}
		time.Sleep(200 * time.Millisecond)
	}
	_, err = preImage(options.Required)
	requireCode(t, err, 47, "NoMatchingDocument")
}
