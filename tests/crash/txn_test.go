package crash

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/folio-db/folio/tests/folioproc"
)

// TestSIGKILLKeepsOnlyCommittedTransactions proves that a transaction
// survives a SIGKILL exactly when its commit was acknowledged: a committed
// transaction's writes are all there after the restart, an open one's are
// all gone.
func TestSIGKILLKeepsOnlyCommittedTransactions(t *testing.T) {
	dbpath := t.TempDir()
	p := folioproc.Start(t, dbpath)
	client := connect(t, p.URI())
	ctx := context.Background()
	coll := client.Database(dbName).Collection("txn")
	run := func(id string, commit bool) {
		sess, err := client.StartSession()
		if err != nil {
			t.Fatal(err)
		}
		if err := sess.StartTransaction(); err != nil {
			t.Fatal(err)
		}
		sctx := mongo.NewSessionContext(ctx, sess)
		for i := range 3 {
			if _, err := coll.InsertOne(sctx, bson.D{{Key: "_id", Value: id + string(rune('a'+i))}}); err != nil {
				t.Fatal(err)
			}
		}
		if commit {
			if err := sess.CommitTransaction(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	run("committed-", true)
	run("open-", false)
	p.Kill()
	p = folioproc.Start(t, dbpath)
	client = connect(t, p.URI())
	coll = client.Database(dbName).Collection("txn")
	cur, err := coll.Find(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var docs []struct {
		ID string `bson:"_id"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		t.Fatal(err)
	}
	if len(docs) != 3 || docs[0].ID != "committed-a" || docs[2].ID != "committed-c" {
		t.Fatalf("after the crash: %+v, want exactly the committed transaction's three documents", docs)
	}
}
