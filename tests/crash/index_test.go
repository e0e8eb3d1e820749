package crash

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/tests/folioproc"
)

// TestSIGKILLDuringIndexBuild SIGKILLs the server while createIndexes
// builds an index. After the restart the unfinished build is retired, so
// that the same createIndexes builds the index anew and returns, after
// which a query hinted to it finds what a collection scan finds. (A build
// the server left midway was listed but never usable, and a createIndexes
// of it waited for it forever.)
func TestSIGKILLDuringIndexBuild(t *testing.T) {
	const n = 20000
	dbpath := t.TempDir()
	ctx := context.Background()
	p := folioproc.Start(t, dbpath)
	client, err := mongo.Connect(clientOptions(p.URI()))
	if err != nil {
		t.Fatal(err)
	}
	coll := client.Database(dbName).Collection("indexed")
	docs := make([]any, n)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i % 97}, {Key: "b", Value: bson.A{i % 5, i % 7}}}
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	model := mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 1}}, Options: options.Index().SetName("a_b")}
	go func() { _, _ = coll.Indexes().CreateOne(ctx, model) }()
	for deadline := time.Now().Add(time.Minute); ; {
		var res struct{ Inprog []bson.Raw }
		err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "currentOp", Value: 1}, {Key: "command.createIndexes", Value: "indexed"}}).Decode(&res)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Inprog) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the index build never ran")
		}
		time.Sleep(time.Millisecond)
	}
	_ = client.Disconnect(ctx)
	p.Kill()

	p = folioproc.Start(t, dbpath)
	coll = connect(t, p.URI()).Database(dbName).Collection("indexed")
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if _, err := coll.Indexes().CreateOne(cctx, model); err != nil {
		t.Fatalf("createIndexes after the restart: %v", err)
	}
	filter := bson.D{{Key: "a", Value: bson.D{{Key: "$lt", Value: 10}}}, {Key: "b", Value: 3}}
	byIndex := countHinted(t, coll, filter, "a_b")
	byScan := countHinted(t, coll, filter, bson.D{{Key: "$natural", Value: 1}})
	if byIndex != byScan || byScan == 0 {
		t.Fatalf("%d documents by the index, %d by a collection scan", byIndex, byScan)
	}
	var res bson.M
	if err := coll.Database().RunCommand(ctx, bson.D{{Key: "validate", Value: "indexed"}}).Decode(&res); err != nil || res["valid"] != true {
		t.Fatalf("validate: %v %v", res, err)
	}
}

// countHinted counts the documents of coll matching filter, read with hint.
func countHinted(t *testing.T, coll *mongo.Collection, filter bson.D, hint any) int {
	t.Helper()
	ctx := context.Background()
	cur, err := coll.Find(ctx, filter, options.Find().SetHint(hint))
	if err != nil {
		t.Fatal(err)
	}
	var docs []bson.Raw
	if err := cur.All(ctx, &docs); err != nil {
		t.Fatal(err)
	}
	return len(docs)
}
