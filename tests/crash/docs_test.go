package crash

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"
)

// dbName is the database every test in this package writes to.
const dbName = "crash"

// collFor spreads writers over two collections, so collections are created
// concurrently and more than one survives each crash.
func collFor(worker int) string { return fmt.Sprintf("docs%d", worker%2) }

// docFor is the document writer worker inserts as its seq'th in round: a
// mix of BSON types and sizes, deterministic so a read-back can be compared
// byte for byte.
func docFor(round, worker, seq int) bson.D {
	return bson.D{
		{Key: "_id", Value: fmt.Sprintf("r%d-w%d-%06d", round, worker, seq)},
		{Key: "worker", Value: int32(worker)},
		{Key: "seq", Value: int64(seq)},
		{Key: "ratio", Value: float64(seq) / 7},
		{Key: "tags", Value: bson.A{"crash", worker%2 == 0, int32(seq % 5)}},
		{Key: "nested", Value: bson.D{
			{Key: "text", Value: strings.Repeat(string(rune('a'+seq%26)), seq%300)},
			{Key: "bin", Value: bson.Binary{Data: []byte{byte(seq), byte(seq >> 8), byte(worker)}}},
		}},
	}
}

// tally is what one writer did in one round: inserts seq 0..attempted-1
// were sent, of which 0..acked-1 were acknowledged.
type tally struct {
	acked, attempted int
	err              error // the error that stopped the writer, if any
}

// String shows a tally as acked/attempted.
func (tl tally) String() string { return fmt.Sprintf("%d/%d", tl.acked, tl.attempted) }

// connect opens a driver client that writes with {w:1, j:true} and never
// retries, so an acknowledgement comes from exactly one server response.
func connect(t *testing.T, uri string) *mongo.Client {
	t.Helper()
	opts := clientOptions(uri).
		SetRetryWrites(false).SetRetryReads(false).
		SetWriteConcern(writeconcern.Journaled())
	c, err := mongo.Connect(opts)
	if err != nil {
		t.Fatalf("connect %s: %v", uri, err)
	}
	t.Cleanup(func() { _ = c.Disconnect(context.Background()) })
	return c
}

// clientOptions are the options of the tests' clients: uri, directly, and a
// monitor that polls. A streaming monitor (the driver's default) learns at
// once that a killed server is gone, and a client's Disconnect then waits
// out its server selection timeout (30 s) to end its sessions, as it would
// against MongoDB; a polling one has not looked yet, and its Disconnect
// fails fast.
func clientOptions(uri string) *options.ClientOptions {
	return options.Client().ApplyURI(uri).SetDirect(true).SetServerMonitoringMode(options.ServerMonitoringModePoll)
}

// verify reads every document in the test database and checks it against
// history (history[round][worker]): each acknowledged document is present
// and byte-identical to what was inserted, a document whose insert was sent
// but not acknowledged may or may not be present but is intact if it is,
// and nothing else exists.
func verify(t *testing.T, uri string, history [][]tally) {
	t.Helper()
	got := readDocs(t, connect(t, uri).Database(dbName))
	var acked, lost int
	for round, tallies := range history {
		for worker, tl := range tallies {
			acked += tl.acked
			for seq := range tl.attempted {
				want, err := bson.Marshal(docFor(round, worker, seq))
				if err != nil {
					t.Fatal(err)
				}
				id := bson.Raw(want).Lookup("_id").StringValue()
				raw, ok := got[id]
				delete(got, id)
				switch {
				case !ok && seq < tl.acked:
					lost++
					if lost <= 10 {
						t.Errorf("acknowledged document %s is missing", id)
					}
				case ok && !bytes.Equal(raw, want):
					t.Errorf("document %s reads back as\n%s\nwant\n%s", id, raw, bson.Raw(want))
				}
			}
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d acknowledged documents are missing", lost, acked)
	}
	for id := range got {
		t.Errorf("document %s was never inserted", id)
	}
	t.Logf("verified %d acknowledged documents", acked)
}

// operationTime is the cluster time a ping on uri reports.
func operationTime(t *testing.T, uri string) bson.Timestamp {
	t.Helper()
	reply, err := connect(t, uri).Database("admin").RunCommand(context.Background(), bson.D{{Key: "ping", Value: 1}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	secs, inc, ok := reply.Lookup("operationTime").TimestampOK()
	if !ok {
		t.Fatalf("ping reply without operationTime: %s", reply)
	}
	return bson.Timestamp{T: secs, I: inc}
}

// verifyOplog reads the test database's change stream from since and
// checks it against the documents there: one insert event per document,
// with the document as stored, and no event for anything else. So every
// acknowledged write is in the oplog (verify found its document) and
// nothing a crash lost is.
func verifyOplog(t *testing.T, uri string, since bson.Timestamp) {
	t.Helper()
	ctx := context.Background()
	db := connect(t, uri).Database(dbName)
	docs := readDocs(t, db)
	cs, err := db.Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetStartAtOperationTime(&since))
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer cs.Close(ctx)
	// the stream is read up to the insert of a sentinel made now
	sentinel := fmt.Sprintf("sentinel-%d", time.Now().UnixNano())
	if _, err := db.Collection("sentinels").InsertOne(ctx, bson.D{{Key: "_id", Value: sentinel}}); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	rctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for cs.Next(rctx) {
		ev := cs.Current
		if ev.Lookup("ns", "coll").StringValue() == "sentinels" {
			if ev.Lookup("documentKey", "_id").StringValue() == sentinel {
				break
			}
			continue
		}
		if op := ev.Lookup("operationType").StringValue(); op != "insert" {
			t.Errorf("unexpected %s event: %s", op, ev)
			continue
		}
		id := ev.Lookup("documentKey", "_id").StringValue()
		if seen[id] {
			t.Errorf("two insert events for %s", id)
		}
		seen[id] = true
		want, ok := docs[id]
		switch {
		case !ok:
			t.Errorf("the oplog has an insert of %s, which is not in the database", id)
		case !bytes.Equal(ev.Lookup("fullDocument").Value, want):
			t.Errorf("the oplog's insert of %s holds\n%s\nwant\n%s", id, ev.Lookup("fullDocument"), want)
		}
	}
	if err := cs.Err(); err != nil {
		t.Fatalf("change stream: %v", err)
	}
	missing := 0
	for id := range docs {
		if !seen[id] {
			if missing++; missing <= 10 {
				t.Errorf("document %s has no insert in the oplog", id)
			}
		}
	}
	t.Logf("the oplog holds the insert of each of the %d documents", len(seen))
}

// readDocs reads the writers' collections of db, by _id.
func readDocs(t *testing.T, db *mongo.Database) map[string]bson.Raw {
	t.Helper()
	ctx := context.Background()
	docs := map[string]bson.Raw{}
	for _, coll := range []string{collFor(0), collFor(1)} {
		cur, err := db.Collection(coll).Find(ctx, bson.D{})
		if err != nil {
			t.Fatalf("find in %s: %v", coll, err)
		}
		for cur.Next(ctx) {
			docs[cur.Current.Lookup("_id").StringValue()] = slices.Clone(cur.Current)
		}
		if err := cur.Err(); err != nil {
			t.Fatalf("read %s: %v", coll, err)
		}
		_ = cur.Close(ctx)
	}
	return docs
}
