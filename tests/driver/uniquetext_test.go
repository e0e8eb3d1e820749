package driver_test

import (
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/internal/instance"
)

// TestUniqueTextIndex: a unique text index is built, as MongoDB builds
// one; a document holding a term with the score another document's holds
// is a DuplicateKey named by _fts and _ftsx, one whose terms score
// differently is inserted and found by $text.
func TestUniqueTextIndex(t *testing.T) {
	ctx := t.Context()
	coll := connect(t, startInstance(t, instance.Config{Addr: "127.0.0.1:0", DBPath: t.TempDir(), ReplSetName: "rs"})).Database(testDB).Collection("ut")
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "s", Value: "text"}}, Options: options.Index().SetUnique(true)}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "s", Value: "hello world"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 2}, {Key: "s", Value: "hello"}}); err != nil {
		t.Fatalf("same term, another score: %v", err)
	}
	_, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 3}, {Key: "s", Value: "hello world"}})
	var we mongo.WriteException
	if !errors.As(err, &we) || len(we.WriteErrors) != 1 || we.WriteErrors[0].Code != 11000 ||
		we.WriteErrors[0].Message != `E11000 duplicate key error collection: `+testDB+`.ut index: s_text dup key: { _fts: "hello", _ftsx: 0.75 }` {
		t.Fatalf("duplicate: %v", err)
	}
	cur, err := coll.Find(ctx, bson.D{{Key: "$text", Value: bson.D{{Key: "$search", Value: "hello"}}}})
	if err != nil {
		t.Fatal(err)
	}
	var docs []bson.M
	if err := cur.All(ctx, &docs); err != nil || len(docs) != 2 {
		t.Fatalf("$text found %v (%v), want 2 documents", docs, err)
	}
}
