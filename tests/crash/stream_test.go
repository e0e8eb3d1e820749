package crash

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/folio-db/folio/tests/folioproc"
)

// streamRounds and streamKillAt: SIGKILL/restart cycles of
// TestChangeStreamReturnsOnlyWhatSurvivesSIGKILL, each once the stream has
// returned streamKillAt events.
const (
	streamRounds = 6
	streamKillAt = 400
)

// TestChangeStreamReturnsOnlyWhatSurvivesSIGKILL SIGKILLs the server while
// writers insert with {w:1, j:false} and a change stream follows them. A
// change stream returns majority committed events only, which on a
// one-member set means on disk: after each restart every document whose
// insert the stream returned is there, the stream resumes after the last
// token it returned, and over all rounds it returns the insert of each
// document there exactly once and of nothing else.
func TestChangeStreamReturnsOnlyWhatSurvivesSIGKILL(t *testing.T) {
	dbpath := t.TempDir()
	ctx := context.Background()
	seen := map[string]int{}
	var token bson.Raw
	for round := range streamRounds {
		p := folioproc.Start(t, dbpath)
		token = streamUntilKilled(t, p, round, token, seen)
	}
	p := folioproc.Start(t, dbpath)
	db := connect(t, p.URI()).Database(dbName)
	coll := db.Collection("streamed")
	checkSeenStored(t, coll, seen)
	// the rest of the stream, up to a sentinel inserted now
	cs, err := coll.Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetResumeAfter(token))
	if err != nil {
		t.Fatalf("resume after the last round: %v", err)
	}
	defer cs.Close(ctx)
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "sentinel"}}); err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for cs.Next(rctx) {
		id := cs.Current.Lookup("documentKey", "_id").StringValue()
		if id == "sentinel" {
			break
		}
		seen[id]++
	}
	if err := cs.Err(); err != nil {
		t.Fatal(err)
	}
	stored := storedIDs(t, coll)
	delete(stored, "sentinel")
	for id, n := range seen {
		if n != 1 {
			t.Errorf("the stream returned the insert of %s %d times", id, n)
		}
	}
	missing := 0
	for id := range stored {
		if seen[id] == 0 {
			if missing++; missing <= 10 {
				t.Errorf("the stream never returned the insert of %s", id)
			}
		}
	}
	t.Logf("the stream returned the insert of each of the %d documents once", len(stored))
}

// streamUntilKilled resumes a change stream on the streamed collection
// after token (from the start of the oplog when nil), runs writers that
// insert with {w:1, j:false}, SIGKILLs p once the stream has returned
// streamKillAt events, counts each event's document in seen and returns
// the token of the last event returned.
func streamUntilKilled(t *testing.T, p *folioproc.Proc, round int, token bson.Raw, seen map[string]int) bson.Raw {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// the clients are disconnected while the server lives: a client's
	// Disconnect once it is gone waits out its server selection timeout
	client, err := mongo.Connect(clientOptions(p.URI()).SetRetryWrites(false).SetRetryReads(false))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = client.Disconnect(context.Background()) }()
	checkSeenStored(t, client.Database(dbName).Collection("streamed"), seen)
	if t.Failed() {
		t.FailNow()
	}
	opts := options.ChangeStream()
	if token != nil {
		opts.SetResumeAfter(token)
	} else {
		opts.SetStartAtOperationTime(&bson.Timestamp{T: 1})
	}
	cs, err := client.Database(dbName).Collection("streamed").Watch(ctx, mongo.Pipeline{
		{{Key: "$match", Value: bson.D{{Key: "operationType", Value: "insert"}}}},
	}, opts)
	if err != nil {
		t.Fatalf("round %d: resume: %v", round, err)
	}
	// the writers' own client, which does not wait for the disk
	unjournaled := writeconcern.W1()
	unjournaled.Journal = new(bool)
	wc, err := mongo.Connect(clientOptions(p.URI()).SetRetryWrites(false).SetWriteConcern(unjournaled))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = wc.Disconnect(context.Background()) }()
	wcoll := wc.Database(dbName).Collection("streamed")
	var wg sync.WaitGroup
	var sent atomic.Int64
	for w := range writers {
		wg.Go(func() {
			for seq := 0; ctx.Err() == nil && seq < maxPerWriter; seq++ {
				if _, err := wcoll.InsertOne(ctx, bson.D{{Key: "_id", Value: fmt.Sprintf("r%d-w%d-%06d", round, w, seq)}}); err != nil {
					return
				}
				sent.Add(1)
			}
		})
	}
	events := 0
	for events < streamKillAt && cs.Next(ctx) {
		seen[cs.Current.Lookup("documentKey", "_id").StringValue()]++
		token = cs.ResumeToken()
		events++
	}
	if events < streamKillAt {
		t.Fatalf("round %d: the stream ended after %d events: %v", round, events, cs.Err())
	}
	_ = cs.Close(ctx)
	_ = client.Disconnect(ctx)
	p.Kill()
	cancel()
	wg.Wait()
	t.Logf("round %d: SIGKILL after %d events returned, %d inserts acknowledged", round, events, sent.Load())
	return token
}

// checkSeenStored checks that each document whose insert the stream
// returned is in coll.
func checkSeenStored(t *testing.T, coll *mongo.Collection, seen map[string]int) {
	t.Helper()
	stored := storedIDs(t, coll)
	lost := 0
	for id := range seen {
		if !stored[id] {
			if lost++; lost <= 10 {
				t.Errorf("the stream returned the insert of %s, which a crash took away", id)
			}
		}
	}
	if lost > 0 {
		t.Errorf("%d of the %d inserts the stream returned were lost", lost, len(seen))
	}
}

// storedIDs is the _id of each document in coll.
func storedIDs(t *testing.T, coll *mongo.Collection) map[string]bool {
	t.Helper()
	ctx := context.Background()
	cur, err := coll.Find(ctx, bson.D{}, options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close(ctx)
	ids := map[string]bool{}
	for cur.Next(ctx) {
		ids[cur.Current.Lookup("_id").StringValue()] = true
	}
	if err := cur.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}
