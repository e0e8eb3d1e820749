package crash

import (
	"context"
	"fmt"
	"syscall"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/folio-db/folio/tests/folioproc"
)

// retryKinds are the writes the driver retries, by the command whose reply
// the proxy loses; each applies one logical operation.
var retryKinds = []string{"insert", "update", "delete", "findAndModify", "bulk", "commitTransaction"}

// TestRetriesApplyOnceAcrossLostRepliesAndCrashes loses the reply of a
// write of each kind after the server applied it, and then either leaves
// the server running, stops it with SIGTERM or kills it with SIGKILL and
// restarts it on the same data. The driver retries the write (retryable
// writes, and commitTransaction's retry) once the failure reaches it; every
// logical operation must have been applied exactly once: the retry answers
// the original result from the session's durable record.
// https://www.mongodb.com/docs/manual/core/retryable-writes/
func TestRetriesApplyOnceAcrossLostRepliesAndCrashes(t *testing.T) {
	dbpath := t.TempDir()
	srv := folioproc.Start(t, dbpath)
	px := startProxy(t, srv.Addr())
	restart := func(sig syscall.Signal) func() {
		return func() {
			if sig == syscall.SIGKILL {
				srv.Kill()
			} else {
				if err := srv.Signal(sig); err != nil {
					t.Error(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), exitGuard)
				defer cancel()
				if code, err := srv.Wait(ctx); err != nil || code != 0 {
					t.Errorf("exit after %v: %d, %v", sig, code, err)
				}
			}
			srv = folioproc.Start(t, dbpath)
			px.setUpstream(srv.Addr())
		}
	}
	modes := []struct {
		name string
		then func()
	}{
		{"lost reply", func() {}},
		{"SIGTERM", restart(syscall.SIGTERM)},
		{"SIGKILL", restart(syscall.SIGKILL)},
	}

	ctx := context.Background()
	// Journaled writes: an acknowledged write survives SIGKILL, so every
	// acknowledged operation must be there exactly once.
	client, err := mongo.Connect(clientOptions(px.URI()).
		SetWriteConcern(writeconcern.Journaled()).SetServerSelectionTimeout(exitGuard))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Disconnect(ctx)
	db := client.Database(dbName)
	counters := db.Collection("counters")
	queue := db.Collection("queue")
	const queued = 200
	seedDocs := make([]any, queued)
	for i := range seedDocs {
		seedDocs[i] = bson.D{{Key: "_id", Value: i}, {Key: "k", Value: "q"}}
	}
	if _, err := queue.InsertMany(ctx, seedDocs); err != nil {
		t.Fatal(err)
	}
	var want struct{ inserts, incs, deletes, fams, bulks, txns int }
	inc := func(id string) bson.D {
		return bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}
	}
	upsert := options.UpdateOne().SetUpsert(true)
	op := func(kind string, seq int) error {
		switch kind {
		case "insert":
			_, err := db.Collection("inserted").InsertOne(ctx, bson.D{{Key: "_id", Value: seq}})
			if err == nil {
				want.inserts++
			}
			return err
		case "update":
			_, err := counters.UpdateOne(ctx, bson.D{{Key: "_id", Value: "inc"}}, inc("inc"), upsert)
			if err == nil {
				want.incs++
			}
			return err
		case "delete":
			res, err := queue.DeleteOne(ctx, bson.D{{Key: "k", Value: "q"}})
			if err == nil && res.DeletedCount != 1 {
				return fmt.Errorf("deleted %d", res.DeletedCount)
			}
			if err == nil {
				want.deletes++
			}
			return err
		case "findAndModify":
			var got struct{ N int }
			err := counters.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: "fam"}}, inc("fam"),
				options.FindOneAndUpdate().SetUpsert(true).SetReturnDocument(options.After)).Decode(&got)
			if err == nil && got.N != want.fams+1 {
				return fmt.Errorf("findAndModify returned n %d, want %d", got.N, want.fams+1)
			}
			if err == nil {
				want.fams++
			}
			return err
		case "bulk":
			models := []mongo.WriteModel{
				mongo.NewUpdateOneModel().SetFilter(bson.D{{Key: "_id", Value: "b0"}}).SetUpdate(inc("b0")).SetUpsert(true),
				mongo.NewUpdateOneModel().SetFilter(bson.D{{Key: "_id", Value: "b1"}}).SetUpdate(inc("b1")).SetUpsert(true),
				mongo.NewUpdateOneModel().SetFilter(bson.D{{Key: "_id", Value: "b2"}}).SetUpdate(inc("b2")).SetUpsert(true),
			}
			_, err := counters.BulkWrite(ctx, models)
			if err == nil {
				want.bulks++
			}
			return err
		case "commitTransaction":
			sess, err := client.StartSession()
			if err != nil {
				return err
			}
			defer sess.EndSession(ctx)
			_, err = sess.WithTransaction(ctx, func(sctx context.Context) (any, error) {
				if _, err := db.Collection("txndocs").InsertOne(sctx, bson.D{{Key: "_id", Value: seq}}); err != nil {
					return nil, err
				}
				_, err := counters.UpdateOne(sctx, bson.D{{Key: "_id", Value: "txn"}}, inc("txn"), upsert)
				return nil, err
			})
			if err == nil {
				want.txns++
			}
			return err
		}
		panic(kind)
	}

	seq := 0
	for _, mode := range modes {
		for _, kind := range retryKinds {
			name := kind
			if kind == "bulk" {
				name = "update"
			}
			px.arm(name, mode.then)
			// The armed operation, then two that go through normally.
			for range 3 {
				seq++
				if err := op(kind, seq); err != nil {
					t.Fatalf("%s, %s: operation %d: %v", mode.name, kind, seq, err)
				}
			}
			if !px.disarmed() {
				t.Fatalf("%s, %s: no reply was lost", mode.name, kind)
			}

		}
	}

	count := func(coll *mongo.Collection, filter bson.D) int {
		n, err := coll.CountDocuments(ctx, filter)
		if err != nil {
			t.Fatal(err)
		}
		return int(n)
	}
	counter := func(id string) int {
		var d struct{ N int }
		if err := counters.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&d); err != nil {
			t.Fatalf("counter %s: %v", id, err)
		}
		return d.N
	}
	checks := []struct {
		what      string
		got, want int
	}{
		{"inserted documents", count(db.Collection("inserted"), bson.D{}), want.inserts},
		{"$inc applications", counter("inc"), want.incs},
		{"deleted documents", queued - count(queue, bson.D{}), want.deletes},
		{"findAndModify applications", counter("fam"), want.fams},
		{"bulk statement 0 applications", counter("b0"), want.bulks},
		{"bulk statement 1 applications", counter("b1"), want.bulks},
		{"bulk statement 2 applications", counter("b2"), want.bulks},
		{"committed transactions' documents", count(db.Collection("txndocs"), bson.D{}), want.txns},
		{"committed transactions' $inc", counter("txn"), want.txns},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d (one per acknowledged operation)", c.what, c.got, c.want)
		}
	}
	t.Logf("%d operations, %d lost replies, %d restarts", seq, len(modes)*len(retryKinds), 2*len(retryKinds))
}
