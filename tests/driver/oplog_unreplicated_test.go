package driver_test

import (
	"context"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestOplogSkipsUnreplicated: the writes and commands of the local
// database and of a database's system.profile leave no entry in
// local.oplog.rs, as MongoDB's NamespaceString::isReplicated has it, while
// those of test.c do; a collection is not renamed into or out of local;
// local's writes are kept all the same.
func TestOplogSkipsUnreplicated(t *testing.T) {
	client := startReplSet(t)
	ctx := context.Background()
	oplogColl := client.Database("local").Collection("oplog.rs")
	last := findAll(t, oplogColl, bson.D{}, options.Find().SetSort(bson.D{{Key: "$natural", Value: -1}}).SetLimit(1))
	from := last[0].Lookup("ts")

	// raw commands: a retryable write is refused on local
	// (IllegalOperation)
	local := client.Database("local")
	x := local.Collection("x")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(local.CreateCollection(ctx, "y"))
	for _, cmd := range []bson.D{
		{{Key: "insert", Value: "x"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}}}}},
		{{Key: "update", Value: "x"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "u", Value: bson.D{{Key: "$inc", Value: bson.D{{Key: "a", Value: 1}}}}}}}}},
		{{Key: "createIndexes", Value: "x"}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "a_1"}}}}},
		{{Key: "dropIndexes", Value: "x"}, {Key: "index", Value: "a_1"}},
		{{Key: "delete", Value: "x"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "limit", Value: 1}}}}},
		{{Key: "insert", Value: "x"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 2}}}}},
		{{Key: "drop", Value: "y"}},
	} {
		if _, err := runRaw(t, local, cmd); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
	}
	test := client.Database("test")
	_, err := runRaw(t, client.Database("admin"), bson.D{{Key: "renameCollection", Value: "local.x"}, {Key: "to", Value: "test.x"}})
	requireCode(t, err, 20, "IllegalOperation")
	must(test.CreateCollection(ctx, "d"))
	_, err = runRaw(t, client.Database("admin"), bson.D{{Key: "renameCollection", Value: "test.d"}, {Key: "to", Value: "local.d"}})
	requireCode(t, err, 20, "IllegalOperation")

	// the profiler's writes and system.profile's creation and drop
	must(test.RunCommand(ctx, bson.D{{Key: "profile", Value: 2}}).Err())
	if err := test.Collection("d").FindOne(ctx, bson.D{}).Err(); err != nil && !strings.Contains(err.Error(), "no documents") {
		t.Fatal(err)
	}
	must(test.RunCommand(ctx, bson.D{{Key: "profile", Value: 0}}).Err())
	if n, err := test.Collection("system.profile").CountDocuments(ctx, bson.D{}); err != nil || n == 0 {
		t.Fatalf("system.profile holds %d entries (%v)", n, err)
	}
	must(test.Collection("system.profile").Drop(ctx))

	_, err = test.Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}})
	must(err)

	entries := findAll(t, oplogColl, bson.D{{Key: "ts", Value: bson.D{{Key: "$gt", Value: from}}}})
	var sawC bool
	for _, e := range entries {
		ns := e.Lookup("ns").StringValue()
		o, _ := e.Lookup("o").DocumentOK()
		switch {
		case strings.HasPrefix(ns, "local."), ns == "test.system.profile":
			t.Errorf("an entry of an unreplicated namespace: %s", e)
		case ns == "test.$cmd" && strings.Contains(o.String(), "system.profile"):
			t.Errorf("an entry of system.profile's creation or drop: %s", e)
		case ns == "test.c":
			sawC = true
		}
	}
	if !sawC {
		t.Errorf("the insert into test.c is not logged: %v", entries)
	}
	if n, err := x.CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
		t.Errorf("local.x holds %d documents (%v), want 1", n, err)
	}
}
