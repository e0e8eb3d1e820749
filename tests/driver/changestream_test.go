package driver_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/internal/instance"
	"github.com/folio-db/folio/internal/storage/testkv"
)

// startStreams starts a replica set member for change streams.
func startStreams(t *testing.T) *mongo.Client {
	t.Helper()
	return startReplSet(t)
}

// nextEvent waits for cs's next event. The wait is long because an event
// of 16 MB through the mock TiKV cluster on a loaded CI machine took more
// than 5 seconds; a test that expects no event uses its own short wait.
func nextEvent(t *testing.T, cs *mongo.ChangeStream) bson.Raw {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if !cs.Next(ctx) {
		t.Fatalf("no event: %v", cs.Err())
	}
	return append(bson.Raw(nil), cs.Current...)
}

func TestChangeStreamCollectionEvents(t *testing.T) {
	client := startStreams(t)
	ctx := context.Background()
	coll := client.Database(testDB).Collection("cs")
	cs, err := coll.Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetFullDocument(options.UpdateLookup))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(ctx)
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}, {Key: "arr", Value: bson.A{1, 2, 3}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "b", Value: 2}}}, {Key: "$unset", Value: bson.D{{Key: "a", Value: ""}}}, {Key: "$pop", Value: bson.D{{Key: "arr", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.ReplaceOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "c", Value: 3}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := coll.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"insert", "update", "replace", "delete", "drop", "invalidate"} {
		ev := nextEvent(t, cs)
		t.Logf("%s", ev)
		if got := ev.Lookup("operationType").StringValue(); got != want {
			t.Fatalf("event %s, want %s", got, want)
		}
	}
}

// aggregateRaw runs a change stream's aggregate or getMore command itself,
// in the test's session (sessionCtx), so that the reply's shape can be
// checked.
func aggregateRaw(t *testing.T, db *mongo.Database, cmd bson.D) (bson.Raw, error) {
	t.Helper()
	return db.RunCommand(sessionCtx(t, db.Client()), cmd).Raw()
}

func TestChangeStreamDatabaseAndCluster(t *testing.T) {
	client := startStreams(t)
	ctx := context.Background()
	db := client.Database("csdb")
	dbStream, err := db.Watch(ctx, mongo.Pipeline{})
	if err != nil {
		t.Fatal(err)
	}
	defer dbStream.Close(ctx)
	all, err := client.Watch(ctx, mongo.Pipeline{})
	if err != nil {
		t.Fatal(err)
	}
	defer all.Close(ctx)
	if _, err := db.Collection("a").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Database("other").Collection("b").InsertOne(ctx, bson.D{{Key: "_id", Value: 2}}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Database("admin").Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: 3}}); err != nil {
		t.Fatal(err)
	}
	if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "renameCollection", Value: "csdb.a"}, {Key: "to", Value: "csdb.a2"}}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := db.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	type seen struct{ op, ns string }
	read := func(cs *mongo.ChangeStream, n int) []seen {
		var out []seen
		for range n {
			ev := nextEvent(t, cs)
			ns, _ := ev.Lookup("ns").DocumentOK()
			s := seen{op: ev.Lookup("operationType").StringValue()}
			if ns != nil {
				s.ns = ns.Lookup("db").StringValue()
				if c, ok := ns.Lookup("coll").StringValueOK(); ok {
					s.ns += "." + c
				}
			}
			out = append(out, s)
		}
		return out
	}
	wantDB := []seen{{"insert", "csdb.a"}, {"rename", "csdb.a"}, {"drop", "csdb.a2"}, {"dropDatabase", "csdb"}, {"invalidate", ""}}
	if got := read(dbStream, len(wantDB)); !slices.Equal(got, wantDB) {
		t.Errorf("database stream: %v, want %v", got, wantDB)
	}
	if dbStream.Next(ctx) || dbStream.ID() != 0 {
		t.Errorf("database stream still open after its invalidate (id %d, err %v)", dbStream.ID(), dbStream.Err())
	}
	// The deployment's stream leaves admin out and is not invalidated.
	wantAll := []seen{{"insert", "csdb.a"}, {"insert", "other.b"}, {"rename", "csdb.a"}, {"drop", "csdb.a2"}, {"dropDatabase", "csdb"}}
	if got := read(all, len(wantAll)); !slices.Equal(got, wantAll) {
		t.Errorf("deployment stream: %v, want %v", got, wantAll)
	}
	if _, err := db.Collection("again").InsertOne(ctx, bson.D{{Key: "_id", Value: 4}}); err != nil {
		t.Fatal(err)
	}
	if got := read(all, 1); got[0] != (seen{"insert", "csdb.again"}) {
		t.Errorf("deployment stream after dropDatabase: %v", got)
	}
}

// TestChangeStreamResumeFromEveryToken resumes a long stream after each of
// its events, and after each batch's postBatchResumeToken, and checks that
// the resumed stream continues with exactly the events that followed.
func TestChangeStreamResumeFromEveryToken(t *testing.T) {
	client := startStreams(t)
	ctx := context.Background()
	coll := client.Database(testDB).Collection("resume")
	cs, err := coll.Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetBatchSize(7))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(ctx)
	const n = 60
	for i := range n {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: i}}); err != nil {
			t.Fatal(err)
		}
		if i%10 == 9 {
			if _, err := coll.UpdateMany(ctx, bson.D{}, bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// every tenth insert is followed by an update of every document so far
	total := n
	for k := 1; k <= n/10; k++ {
		total += 10 * k
	}
	var events []bson.Raw
	for len(events) < total {
		events = append(events, nextEvent(t, cs))
	}
	key := func(ev bson.Raw) string {
		return ev.Lookup("operationType").StringValue() + ev.Lookup("documentKey").String()
	}
	for i := 0; i < total-1; i += 3 {
		tok := events[i].Lookup("_id").Document()
		rs, err := coll.Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetResumeAfter(tok))
		if err != nil {
			t.Fatal(err)
		}
		for j := i + 1; j < min(i+4, total); j++ {
			if got := nextEvent(t, rs); key(got) != key(events[j]) || !got.Lookup("_id").Equal(events[j].Lookup("_id")) {
				t.Fatalf("resumed after event %d: got %s, want %s", i, got, events[j])
			}
		}
		rs.Close(ctx)
	}
	// startAtOperationTime of an event starts with that event.
	ts := events[5].Lookup("clusterTime")
	secs, inc := ts.Timestamp()
	rs, err := coll.Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetStartAtOperationTime(&bson.Timestamp{T: secs, I: inc}))
	if err != nil {
		t.Fatal(err)
	}
	if got := nextEvent(t, rs); key(got) != key(events[5]) {
		t.Fatalf("startAtOperationTime: got %s, want %s", got, events[5])
	}
	rs.Close(ctx)
}

// TestChangeStreamResumeTokenNotMet: a stream resumed after an event must
// meet that event among its own before any later one, as MongoDB's
// DocumentSourceChangeStreamEnsureResumeTokenPresent: the token of another
// collection's event, or of an event the stream does not show (a create
// without showExpandedEvents), fails it with ChangeStreamFatalError at its
// first later event, naming that event's token. A database stream's token
// of an event of the collection resumes the collection's stream.
func TestChangeStreamResumeTokenNotMet(t *testing.T) {
	client := startStreams(t)
	ctx := context.Background()
	db := client.Database(testDB)
	if err := db.CreateCollection(ctx, "other"); err != nil {
		t.Fatal(err)
	}
	dbStream, err := db.Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetShowExpandedEvents(true))
	if err != nil {
		t.Fatal(err)
	}
	defer dbStream.Close(ctx)
	if err := db.CreateCollection(ctx, "mine"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"other", "mine"} {
		if _, err := db.Collection(name).InsertOne(ctx, bson.D{{Key: "_id", Value: name}}); err != nil {
			t.Fatal(err)
		}
	}
	create, otherInsert, mineInsert := nextEvent(t, dbStream), nextEvent(t, dbStream), nextEvent(t, dbStream)
	if _, err := db.Collection("mine").InsertOne(ctx, bson.D{{Key: "_id", Value: "later"}}); err != nil {
		t.Fatal(err)
	}
	mine := db.Collection("mine")
	for _, tc := range []struct {
		name string
		tok  bson.Raw
		next bson.Raw // the first event after the token the stream shows
	}{
		{"another collection's event", otherInsert, mineInsert},
		{"a create without showExpandedEvents", create, mineInsert},
	} {
		for _, start := range []string{"resumeAfter", "startAfter"} {
			opts := options.ChangeStream()
			if start == "resumeAfter" {
				opts.SetResumeAfter(tc.tok.Lookup("_id").Document())
			} else {
				opts.SetStartAfter(tc.tok.Lookup("_id").Document())
			}
			cs, err := mine.Watch(ctx, mongo.Pipeline{}, opts)
			if err == nil {
				tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				if cs.Next(tctx) {
					t.Fatalf("%s, %s: got %s", tc.name, start, cs.Current)
				}
				cancel()
				err = cs.Err()
				cs.Close(ctx)
			}
			want := fmt.Sprintf("cannot resume stream; the resume token was not found. {_data: %q}", tc.next.Lookup("_id", "_data").StringValue())
			var ce mongo.CommandError
			if !errors.As(err, &ce) || ce.Code != 280 || !strings.HasSuffix(ce.Message, want) || !ce.HasErrorLabel("NonResumableChangeStreamError") {
				t.Fatalf("%s, %s: got %v, want 280 %q", tc.name, start, err, want)
			}
		}
	}
	cs, err := mine.Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetResumeAfter(mineInsert.Lookup("_id").Document()))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(ctx)
	if got := nextEvent(t, cs); got.Lookup("documentKey", "_id").StringValue() != "later" {
		t.Fatalf("resumed after the database stream's event: got %s", got)
	}
}

// TestChangeStreamTransactions: a committed transaction's writes appear in
// commit order with its lsid and txnNumber; an aborted transaction's and a
// failed write's never do.
func TestChangeStreamTransactions(t *testing.T) {
	client := startStreams(t)
	ctx := context.Background()
	coll := client.Database(testDB).Collection("txn")
	if err := client.Database(testDB).CreateCollection(ctx, "txn"); err != nil {
		t.Fatal(err)
	}
	cs, err := coll.Watch(ctx, mongo.Pipeline{})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(ctx)
	sess, err := client.StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(ctx)
	// aborted
	err = mongo.WithSession(ctx, sess, func(sc context.Context) error {
		if err := sess.StartTransaction(); err != nil {
			return err
		}
		if _, err := coll.InsertOne(sc, bson.D{{Key: "_id", Value: "aborted"}}); err != nil {
			return err
		}
		return sess.AbortTransaction(sc)
	})
	if err != nil {
		t.Fatal(err)
	}
	// a failed write: a duplicate _id
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "x"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "x"}}); err == nil {
		t.Fatal("duplicate insert succeeded")
	}
	_, err = sess.WithTransaction(ctx, func(sc context.Context) (any, error) {
		if _, err := coll.InsertOne(sc, bson.D{{Key: "_id", Value: "t1"}}); err != nil {
			return nil, err
		}
		if _, err := coll.UpdateOne(sc, bson.D{{Key: "_id", Value: "x"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "v", Value: 1}}}}); err != nil {
			return nil, err
		}
		_, err := coll.DeleteOne(sc, bson.D{{Key: "_id", Value: "t1"}})
		return nil, err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "after"}}); err != nil {
		t.Fatal(err)
	}
	type ev struct {
		op, id string
		txn    bool
	}
	want := []ev{{"insert", "x", false}, {"insert", "t1", true}, {"update", "x", true}, {"delete", "t1", true}, {"insert", "after", false}}
	var clusterTime bson.RawValue
	for i, w := range want {
		e := nextEvent(t, cs)
		got := ev{op: e.Lookup("operationType").StringValue(), id: e.Lookup("documentKey", "_id").StringValue()}
		_, hasLsid := e.Lookup("lsid").DocumentOK()
		txnNumber, hasTxn := e.Lookup("txnNumber").Int64OK()
		got.txn = hasLsid && hasTxn && txnNumber > 0
		if got != w {
			t.Fatalf("event %d: %+v, want %+v (%s)", i, got, w, e)
		}
		if w.txn {
			// one commit: one cluster time
			if clusterTime.Type != 0 && !clusterTime.Equal(e.Lookup("clusterTime")) {
				t.Errorf("transaction events at different cluster times: %s and %s", clusterTime, e.Lookup("clusterTime"))
			}
			clusterTime = e.Lookup("clusterTime")
		}
	}
}

func TestChangeStreamStagesAndReply(t *testing.T) {
	client := startStreams(t)
	ctx := context.Background()
	db := client.Database(testDB)
	coll := db.Collection("stages")
	pipeline := mongo.Pipeline{
		{{Key: "$match", Value: bson.D{{Key: "operationType", Value: "insert"}, {Key: "fullDocument.keep", Value: true}}}},
		{{Key: "$project", Value: bson.D{{Key: "fullDocument.v", Value: 1}, {Key: "operationType", Value: 1}}}},
		{{Key: "$addFields", Value: bson.D{{Key: "extra", Value: "x"}}}},
	}
	cs, err := coll.Watch(ctx, pipeline)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(ctx)
	for i, keep := range []bool{false, true, false, true} {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: i}, {Key: "keep", Value: keep}, {Key: "v", Value: i * 10}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range []int32{10, 30} {
		e := nextEvent(t, cs)
		if got := e.Lookup("fullDocument", "v").Int32(); got != v {
			t.Errorf("fullDocument.v %d, want %d (%s)", got, v, e)
		}
		if _, ok := e.Lookup("fullDocument", "keep").BooleanOK(); ok {
			t.Errorf("projected-out field kept: %s", e)
		}
		if e.Lookup("extra").StringValue() != "x" {
			t.Errorf("$addFields not applied: %s", e)
		}
	}

	// The following stages compare under the command's collation.
	ci, err := coll.Watch(ctx, mongo.Pipeline{{{Key: "$match", Value: bson.D{{Key: "fullDocument.name", Value: "ANN"}}}}},
		options.ChangeStream().SetCollation(options.Collation{Locale: "en", Strength: 2}))
	if err != nil {
		t.Fatal(err)
	}
	defer ci.Close(ctx)
	if _, err := coll.InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 20}, {Key: "name", Value: "bob"}}, bson.D{{Key: "_id", Value: 21}, {Key: "name", Value: "ann"}}}); err != nil {
		t.Fatal(err)
	}
	if e := nextEvent(t, ci); e.Lookup("documentKey", "_id").Int32() != 21 {
		t.Errorf("collated $match on a change stream: %s", e)
	}
	// Without one they compare under the simple collation, not the
	// collection's default.
	if err := db.CreateCollection(ctx, "stagesci", options.CreateCollection().SetCollation(&options.Collation{Locale: "en_US", Strength: 2})); err != nil {
		t.Fatal(err)
	}
	simple, err := db.Collection("stagesci").Watch(ctx, mongo.Pipeline{{{Key: "$match", Value: bson.D{{Key: "fullDocument.text", Value: "abc"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer simple.Close(ctx)
	if _, err := db.Collection("stagesci").InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 0}, {Key: "text", Value: "aBc"}}, bson.D{{Key: "_id", Value: 1}, {Key: "text", Value: "abc"}}}); err != nil {
		t.Fatal(err)
	}
	if e := nextEvent(t, simple); e.Lookup("documentKey", "_id").Int32() != 1 {
		t.Errorf("a stream took its collection's default collation: %s", e)
	}

	// The reply: the batch, then postBatchResumeToken, id and ns; the
	// getMore's too.
	reply, err := aggregateRaw(t, db, bson.D{{Key: "aggregate", Value: "stages"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$changeStream", Value: bson.D{}}}}}, {Key: "cursor", Value: bson.D{}}})
	if err != nil {
		t.Fatal(err)
	}
	cur := reply.Lookup("cursor").Document()
	if got := keysOf(t, cur); !slices.Equal(got, []string{"firstBatch", "postBatchResumeToken", "id", "ns"}) {
		t.Errorf("cursor fields %v", got)
	}
	if _, ok := cur.Lookup("postBatchResumeToken", "_data").StringValueOK(); !ok {
		t.Errorf("postBatchResumeToken %s", cur.Lookup("postBatchResumeToken"))
	}
	id := cur.Lookup("id").Int64()
	if id == 0 {
		t.Fatal("change stream cursor closed")
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 99}}); err != nil {
		t.Fatal(err)
	}
	more, err := aggregateRaw(t, db, bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "stages"}, {Key: "maxTimeMS", Value: 2000}})
	if err != nil {
		t.Fatal(err)
	}
	cur = more.Lookup("cursor").Document()
	if got := keysOf(t, cur); !slices.Equal(got, []string{"nextBatch", "postBatchResumeToken", "id", "ns"}) {
		t.Errorf("getMore cursor fields %v", got)
	}
	batch, _ := cur.Lookup("nextBatch").Array().Values()
	if len(batch) != 1 || batch[0].Document().Lookup("documentKey", "_id").Int32() != 99 {
		t.Errorf("getMore batch %v", batch)
	}
	// With nothing new, the getMore waits maxTimeMS and the token is the
	// last event's, as MongoDB's (the oplog read ends at that event); once
	// an entry the stream does not show was read, the token moves past it.
	last := batch[0].Document().Lookup("_id", "_data").StringValue()
	emptyPBRT := func() string {
		t.Helper()
		empty, err := aggregateRaw(t, db, bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "stages"}, {Key: "maxTimeMS", Value: 50}})
		if err != nil {
			t.Fatal(err)
		}
		return empty.Lookup("cursor", "postBatchResumeToken", "_data").StringValue()
	}
	// (On TiKV the frontends' own writes, such as their catalog leases,
	// are oplog entries too and may come after the event.)
	if pbrt := emptyPBRT(); pbrt < last || pbrt != last && !testkv.TiKV() {
		t.Errorf("postBatchResumeToken %s after the last event %s, nothing after it", pbrt, last)
	}
	if _, err := db.Collection("unwatched").InsertOne(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	if pbrt := emptyPBRT(); pbrt <= last {
		t.Errorf("postBatchResumeToken %s did not move past the last event %s and an entry after it", pbrt, last)
	}
}

func TestChangeStreamRefusals(t *testing.T) {
	client := startStreams(t)
	ctx := context.Background()
	cs := func(spec bson.D, more ...bson.D) bson.A {
		p := bson.A{bson.D{{Key: "$changeStream", Value: spec}}}
		for _, m := range more {
			p = append(p, m)
		}
		return p
	}
	tok := bson.D{{Key: "_data", Value: "826B0A301900077F4F00"}}
	for _, tc := range []struct {
		name     string
		db       string
		coll     any
		pipeline bson.A
		code     int
	}{
		{"unknown option", testDB, "c", cs(bson.D{{Key: "bogus", Value: 1}}), 40415},
		{"two resume options", testDB, "c", cs(bson.D{{Key: "resumeAfter", Value: tok}, {Key: "startAtOperationTime", Value: bson.Timestamp{T: 1}}}), 40674},
		{"resumeAfter and startAfter", testDB, "c", cs(bson.D{{Key: "resumeAfter", Value: tok}, {Key: "startAfter", Value: tok}}), 50865},
		{"all three resume options", testDB, "c", cs(bson.D{{Key: "startAtOperationTime", Value: bson.Timestamp{T: 1}}, {Key: "resumeAfter", Value: tok}, {Key: "startAfter", Value: tok}}), 50865},
		{"token without _data", testDB, "c", cs(bson.D{{Key: "resumeAfter", Value: bson.D{}}}), 40647},
		{"token _data not a string", testDB, "c", cs(bson.D{{Key: "startAfter", Value: bson.D{{Key: "_data", Value: 1}}}}), 40647},
		{"bad fullDocument", testDB, "c", cs(bson.D{{Key: "fullDocument", Value: "nope"}}), 2},
		{"bad fullDocumentBeforeChange", testDB, "c", cs(bson.D{{Key: "fullDocumentBeforeChange", Value: "on"}}), 2},
		{"not a document", testDB, "c", bson.A{bson.D{{Key: "$changeStream", Value: 1}}}, 50808},
		{"wrong type", testDB, "c", cs(bson.D{{Key: "startAtOperationTime", Value: 1}}), 14},
		{"not first", testDB, "c", bson.A{bson.D{{Key: "$match", Value: bson.D{}}}, bson.D{{Key: "$changeStream", Value: bson.D{}}}}, 40602},
		{"stage not allowed", testDB, "c", cs(bson.D{}, bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: nil}}}}), 20},
		{"unknown stage", testDB, "c", cs(bson.D{}, bson.D{{Key: "$unsupported", Value: "foo"}}), 40324},
		{"split stage not last", testDB, "c", cs(bson.D{}, bson.D{{Key: "$changeStreamSplitLargeEvent", Value: bson.D{}}}, bson.D{{Key: "$match", Value: bson.D{}}}), 7182802},
		{"split stage twice", testDB, "c", cs(bson.D{}, bson.D{{Key: "$changeStreamSplitLargeEvent", Value: bson.D{}}}, bson.D{{Key: "$changeStreamSplitLargeEvent", Value: bson.D{}}}), 7182802},
		{"split stage spec", testDB, "c", cs(bson.D{}, bson.D{{Key: "$changeStreamSplitLargeEvent", Value: bson.D{{Key: "a", Value: 1}}}}), 7182800},
		{"fragment token without the split stage", testDB, "c", cs(bson.D{{Key: "resumeAfter", Value: bson.D{{Key: "_data", Value: "826B0A301900077F4F01000000000000F000000001"}}}}), 280},
		{"admin database", "admin", 1, cs(bson.D{}), 73},
		{"cluster outside admin", testDB, 1, cs(bson.D{{Key: "allChangesForCluster", Value: true}}), 72},
		{"cluster on an admin collection", "admin", "c", cs(bson.D{{Key: "allChangesForCluster", Value: true}}), 72},
		{"config database", "config", "c", cs(bson.D{}), 73},
		{"bad token", testDB, "c", cs(bson.D{{Key: "resumeAfter", Value: bson.D{{Key: "_data", Value: "zz"}}}}), 9},
		{"token of no event", testDB, "c", cs(bson.D{{Key: "resumeAfter", Value: bson.D{{Key: "_data", Value: "82FFFFFFF00000000101000000000000"}}}}), 280},
	} {
		err := client.Database(tc.db).RunCommand(ctx, bson.D{{Key: "aggregate", Value: tc.coll}, {Key: "pipeline", Value: tc.pipeline}, {Key: "cursor", Value: bson.D{}}}).Err()
		if got := serverCode(err); got != tc.code {
			t.Errorf("%s: code %d (%v), want %d", tc.name, got, err, tc.code)
		}
		// Errors a stream cannot resume after carry MongoDB's label.
		var ce mongo.CommandError
		if nonResumable := tc.code == 280 || tc.code == 286; errors.As(err, &ce) && ce.HasErrorLabel("NonResumableChangeStreamError") != nonResumable {
			t.Errorf("%s: labels %v", tc.name, ce.Labels)
		}
	}
	hinted := client.Database(testDB).RunCommand(ctx, bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: cs(bson.D{})}, {Key: "cursor", Value: bson.D{}}, {Key: "hint", Value: "_id_"}}).Err()
	requireCode(t, hinted, 238, "NotImplemented")
	// Folio does not explain a stream, whether the aggregate's explain
	// option or the explain command asks it.
	explainMsg := "explain of a $changeStream pipeline is not supported by Folio"
	err := client.Database(testDB).RunCommand(ctx, bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: cs(bson.D{})}, {Key: "explain", Value: true}}).Err()
	requireError(t, err, 238, "NotImplemented", explainMsg)
	err = client.Database(testDB).RunCommand(ctx, bson.D{{Key: "explain", Value: bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: cs(bson.D{})}, {Key: "cursor", Value: bson.D{}}}}}).Err()
	requireError(t, err, 238, "NotImplemented", explainMsg)
	// A standalone server has no change streams.
	standalone := connect(t, startInstance(t, defaultConfig()))
	_, err = standalone.Database(testDB).Collection("c").Watch(ctx, mongo.Pipeline{})
	if got := serverCode(err); got != 40573 {
		t.Errorf("standalone: code %d (%v), want 40573", got, err)
	}
}

// TestChangeStreamResumeTokenKept: the stages after $changeStream may
// reshape events but not their _id, the resume token: an event whose _id
// was removed or changed fails the stream with ChangeStreamFatalError,
// labelled NonResumableChangeStreamError.
func TestChangeStreamResumeTokenKept(t *testing.T) {
	client := startStreams(t)
	ctx := context.Background()
	coll := client.Database(testDB).Collection("tokenkept")
	kept, err := coll.Watch(ctx, mongo.Pipeline{{{Key: "$project", Value: bson.D{{Key: "operationType", Value: 1}}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer kept.Close(ctx)
	var broken []*mongo.ChangeStream
	for _, stage := range []bson.D{
		{{Key: "$project", Value: bson.D{{Key: "_id", Value: 0}}}},
		{{Key: "$addFields", Value: bson.D{{Key: "_id", Value: "x"}}}},
		{{Key: "$replaceRoot", Value: bson.D{{Key: "newRoot", Value: "$fullDocument"}}}},
	} {
		cs, err := coll.Watch(ctx, mongo.Pipeline{stage})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close(ctx)
		broken = append(broken, cs)
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "z", Value: int32(3)}}); err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, kept); ev.Lookup("operationType").StringValue() != "insert" || ev.Lookup("_id", "_data").Type != bson.TypeString {
		t.Errorf("kept _id: %s", ev)
	}
	for i, cs := range broken {
		nctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		if cs.Next(nctx) {
			t.Errorf("stream %d: event %s, want an error", i, cs.Current)
		}
		cancel()
		var ce mongo.CommandError
		if err := cs.Err(); serverCode(err) != 280 || !errors.As(err, &ce) || !ce.HasErrorLabel("NonResumableChangeStreamError") {
			t.Errorf("stream %d: %v, want 280 labelled NonResumableChangeStreamError", i, err)
		}
	}
}

// TestChangeStreamExpandedEvents: showExpandedEvents adds create,
// createIndexes, dropIndexes and modify, with collectionUUID.
func TestChangeStreamExpandedEvents(t *testing.T) {
	client := startStreams(t)
	ctx := context.Background()
	db := client.Database("expanded")
	cs, err := db.Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetShowExpandedEvents(true))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(ctx)
	plain, err := db.Watch(ctx, mongo.Pipeline{})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close(ctx)
	if err := db.CreateCollection(ctx, "e"); err != nil {
		t.Fatal(err)
	}
	coll := db.Collection("e")
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "e"}, {Key: "validator", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$exists", Value: true}}}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := coll.Indexes().DropOne(ctx, "a_1"); err != nil {
		t.Fatal(err)
	}
	// A collMod changing nothing is a modify event too, as in MongoDB.
	if err := db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "e"}}).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: bson.D{{Key: "0", Value: 1}}}}}}, options.UpdateOne().SetUpsert(true)); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "a.0", Value: 2}}}}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"create", "createIndexes", "modify", "dropIndexes", "modify", "insert", "update"} {
		ev := nextEvent(t, cs)
		if got := ev.Lookup("operationType").StringValue(); got != want {
			t.Fatalf("event %s, want %s: %s", got, want, ev)
		}
		if _, _, ok := ev.Lookup("collectionUUID").BinaryOK(); !ok {
			t.Errorf("%s event without collectionUUID: %s", want, ev)
		}
		switch want {
		case "createIndexes", "dropIndexes":
			if name := ev.Lookup("operationDescription", "indexes", "0", "name").StringValue(); name != "a_1" {
				t.Errorf("%s: %s", want, ev)
			}
		case "update":
			// "a.0" names a field of a document, not an array element.
			paths := ev.Lookup("updateDescription", "disambiguatedPaths").Document()
			if got := paths.Lookup("a.0").String(); got != `["a","0"]` {
				t.Errorf("disambiguatedPaths %s", paths)
			}
		}
	}
	// Without showExpandedEvents, the DDL events other than drop, rename
	// and dropDatabase are left out.
	for _, want := range []string{"insert", "update"} {
		ev := nextEvent(t, plain)
		if got := ev.Lookup("operationType").StringValue(); got != want {
			t.Fatalf("plain stream: event %s, want %s", got, want)
		}
		if _, _, ok := ev.Lookup("collectionUUID").BinaryOK(); ok {
			t.Errorf("plain stream: collectionUUID in %s", ev)
		}
	}
}

// TestChangeStreamViewEvents: with showExpandedEvents, a database stream
// reports a view's creation, collMod and drop as create, modify and drop
// events of the view, with its definition as operationDescription and no
// collectionUUID; resuming from each event gives the next. A stream
// without showExpandedEvents and a stream on the view's name see none.
func TestChangeStreamViewEvents(t *testing.T) {
	client := startStreams(t)
	ctx := context.Background()
	db := client.Database("viewevents")
	expanded := options.ChangeStream().SetShowExpandedEvents(true)
	cs, err := db.Watch(ctx, mongo.Pipeline{}, expanded)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(ctx)
	plain, err := db.Watch(ctx, mongo.Pipeline{})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close(ctx)
	named, err := db.Collection("v").Watch(ctx, mongo.Pipeline{}, expanded)
	if err != nil {
		t.Fatal(err)
	}
	defer named.Close(ctx)

	pipeline := bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "a", Value: int32(2)}}}}}
	updated := bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "a", Value: int32(1)}}}}}
	run := func(cmd bson.D) {
		t.Helper()
		if err := db.RunCommand(ctx, cmd).Err(); err != nil {
			t.Fatal(err)
		}
	}
	run(bson.D{{Key: "create", Value: "v"}, {Key: "viewOn", Value: "base"}, {Key: "pipeline", Value: pipeline}})
	run(bson.D{{Key: "collMod", Value: "v"}, {Key: "viewOn", Value: "base"}, {Key: "pipeline", Value: updated}})
	run(bson.D{{Key: "drop", Value: "v"}})
	if _, err := db.Collection("base").InsertOne(ctx, bson.D{{Key: "_id", Value: int32(1)}}); err != nil {
		t.Fatal(err)
	}

	wants := []struct {
		kind string
		desc bson.D // nil: none
	}{
		{"create", bson.D{{Key: "viewOn", Value: "base"}, {Key: "pipeline", Value: pipeline}}},
		{"modify", bson.D{{Key: "viewOn", Value: "base"}, {Key: "pipeline", Value: updated}}},
		{"drop", nil},
		{"create", nil}, // base, created by the insert
	}
	var tokens []bson.Raw
	for _, want := range wants {
		ev := nextEvent(t, cs)
		tokens = append(tokens, ev.Lookup("_id").Document())
		if got := ev.Lookup("operationType").StringValue(); got != want.kind {
			t.Fatalf("event %s, want %s: %s", got, want.kind, ev)
		}
		if want.desc == nil {
			continue
		}
		if ns := ev.Lookup("ns").Document(); !bytes.Equal(ns, mustRaw(t, bson.D{{Key: "db", Value: "viewevents"}, {Key: "coll", Value: "v"}})) {
			t.Errorf("%s: ns %s", want.kind, ns)
		}
		if got := ev.Lookup("operationDescription").Document(); !bytes.Equal(got, mustRaw(t, want.desc)) {
			t.Errorf("%s: operationDescription %s, want %s", want.kind, got, mustRaw(t, want.desc))
		}
		if _, err := ev.LookupErr("collectionUUID"); err == nil {
			t.Errorf("%s: a view event with a collectionUUID: %s", want.kind, ev)
		}
	}
	for i, tok := range tokens[:len(tokens)-1] {
		resumed, err := db.Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetShowExpandedEvents(true).SetResumeAfter(tok))
		if err != nil {
			t.Fatal(err)
		}
		next := nextEvent(t, resumed)
		resumed.Close(ctx)
		if got := next.Lookup("_id").Document(); !bytes.Equal(got, tokens[i+1]) {
			t.Errorf("resumed after event %d: token %s, want %s", i, got, tokens[i+1])
		}
	}
	if ev := nextEvent(t, plain); ev.Lookup("operationType").StringValue() != "insert" {
		t.Errorf("stream without showExpandedEvents: %s, want the insert", ev)
	}
	if err := db.Collection("v").Drop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("v").InsertOne(ctx, bson.D{{Key: "_id", Value: int32(1)}}); err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, named); ev.Lookup("operationType").StringValue() != "create" || ev.Lookup("operationDescription", "idIndex").Type == 0 {
		t.Errorf("stream on v: %s, want the collection's create", ev)
	}
}

// TestChangeStreamAcrossRestart: the oplog is durable like the data; a
// stream resumes after a restart from a token taken before it.
func TestChangeStreamAcrossRestart(t *testing.T) {
	testkv.SkipOnTiKV(t, "the test restarts a server on its Pebble data directory")
	ctx := context.Background()
	cfg := defaultConfig()
	cfg.InMemory, cfg.DBPath, cfg.ReplSetName = false, t.TempDir(), "folio"
	first, err := instance.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	client := dial(t, first)
	coll := client.Database(testDB).Collection("durable")
	cs, err := coll.Watch(ctx, mongo.Pipeline{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: i}}); err != nil {
			t.Fatal(err)
		}
	}
	ev := nextEvent(t, cs)
	token := ev.Lookup("_id").Document()
	cs.Close(ctx)
	client.Disconnect(ctx)
	if err := first.Close(ctx); err != nil {
		t.Fatal(err)
	}
	second := startInstance(t, cfg)
	client = connect(t, second)
	coll = client.Database(testDB).Collection("durable")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 5}}); err != nil {
		t.Fatal(err)
	}
	rs, err := coll.Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetResumeAfter(token))
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close(ctx)
	var prev bson.RawValue
	for want := int32(1); want <= 5; want++ {
		ev := nextEvent(t, rs)
		if got := ev.Lookup("documentKey", "_id").Int32(); got != want {
			t.Fatalf("after restart: event for %d, want %d", got, want)
		}
		// cluster times keep growing across the restart
		if ct := ev.Lookup("clusterTime"); prev.Type != 0 {
			pt, pi := prev.Timestamp()
			ct1, ci := ct.Timestamp()
			if ct1 < pt || (ct1 == pt && ci <= pi) {
				t.Errorf("clusterTime %v not after %v", ct, prev)
			}
		}
		prev = ev.Lookup("clusterTime")
	}
}

// TestChangeStreamHistoryLost: a stream may start before the oldest entry
// of an oplog never truncated, which lost nothing; once the oplog is
// truncated past a token or a time, resuming from it fails with
// ChangeStreamHistoryLost.
func TestChangeStreamHistoryLost(t *testing.T) {
	ctx := context.Background()
	cfg := defaultConfig()
	cfg.ReplSetName, cfg.OplogSize = "folio", 64<<10
	in := startInstance(t, cfg)
	client := connect(t, in)
	coll := client.Database(testDB).Collection("lost")
	cs, err := coll.Watch(ctx, mongo.Pipeline{})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(ctx)
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: -1}}); err != nil {
		t.Fatal(err)
	}
	token := nextEvent(t, cs).Lookup("_id").Document()
	early := options.ChangeStream().SetStartAtOperationTime(&bson.Timestamp{T: 1})
	es, err := coll.Watch(ctx, mongo.Pipeline{}, early)
	if err != nil {
		t.Fatalf("a stream from before an oplog never truncated: %v", err)
	}
	if ev := nextEvent(t, es); ev.Lookup("documentKey", "_id").Int32() != -1 {
		t.Errorf("the stream from the oplog's start begins with %v", ev)
	}
	es.Close(ctx)
	// updates, whose entries hold their values (an insert's refers to its
	// document: a few dozen bytes)
	pad := string(make([]byte, 1000))
	for i := range 200 {
		if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: -1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "pad", Value: strconv.Itoa(i) + pad}}}}); err != nil {
			t.Fatal(err)
		}
	}
	// The server truncates the oplog every second or so.
	deadline := time.Now().Add(10 * time.Second)
	for {
		rs, err := coll.Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetResumeAfter(token))
		if err == nil {
			rs.Close(ctx)
			if time.Now().Before(deadline) {
				time.Sleep(100 * time.Millisecond)
				continue
			}
		}
		requireCode(t, err, 286, "ChangeStreamHistoryLost")
		break
	}
	_, err = coll.Watch(ctx, mongo.Pipeline{}, early)
	requireCode(t, err, 286, "ChangeStreamHistoryLost")
	// The newest entries are kept: a stream from the latest event works.
	if _, err := coll.Watch(ctx, mongo.Pipeline{}); err != nil {
		t.Fatal(err)
	}
}

// TestChangeStreamDriverResumes: the driver resumes a stream whose cursor
// the server lost (killed here) from its last token, and misses nothing.
func TestChangeStreamDriverResumes(t *testing.T) {
	client := startStreams(t)
	ctx := context.Background()
	coll := client.Database(testDB).Collection("autoresume")
	cs, err := coll.Watch(ctx, mongo.Pipeline{})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(ctx)
	for i := range 3 {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: i}}); err != nil {
			t.Fatal(err)
		}
	}
	if got := nextEvent(t, cs).Lookup("documentKey", "_id").Int32(); got != 0 {
		t.Fatalf("first event for %d", got)
	}
	if err := client.Database(testDB).RunCommand(ctx, bson.D{{Key: "killCursors", Value: "autoresume"}, {Key: "cursors", Value: bson.A{cs.ID()}}}).Err(); err != nil {
		t.Fatal(err)
	}
	for want := int32(1); want < 3; want++ {
		if got := nextEvent(t, cs).Lookup("documentKey", "_id").Int32(); got != want {
			t.Fatalf("after the resume: event for %d, want %d", got, want)
		}
	}
}

// TestOplogStats: local.oplog.rs has statistics as a replica set member's
// capped oplog (mongosh's db.getReplicationInfo reads them), agreeing with
// its entries, and local, which holds it, is listed and counted.
func TestOplogStats(t *testing.T) {
	client := startStreams(t)
	ctx := context.Background()
	for i := range 5 {
		if _, err := client.Database(testDB).Collection("stats").InsertOne(ctx, bson.D{{Key: "_id", Value: i}}); err != nil {
			t.Fatal(err)
		}
	}
	entries := findAll(t, client.Database("local").Collection("oplog.rs"), bson.D{})
	var size int64
	for _, e := range entries {
		size += int64(len(e))
	}
	specs, err := client.Database("local").ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: "oplog.rs"}})
	if err != nil || len(specs) != 1 {
		t.Fatalf("listCollections: %v %v", specs, err)
	}
	bound := specs[0].Options.Lookup("size").Int64()
	stats, err := runCmd(client, "local", bson.D{{Key: "collStats", Value: "oplog.rs"}})
	if err != nil {
		t.Fatal(err)
	}
	agg, err := client.Database("local").Collection("oplog.rs").Aggregate(ctx, mongo.Pipeline{{{Key: "$collStats", Value: bson.D{{Key: "storageStats", Value: bson.D{}}, {Key: "count", Value: bson.D{}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	var staged []bson.Raw
	if err := agg.All(ctx, &staged); err != nil || len(staged) != 1 {
		t.Fatalf("$collStats: %v %v", staged, err)
	}
	for name, doc := range map[string]bson.Raw{"collStats": stats, "$collStats": staged[0].Lookup("storageStats").Document()} {
		if n, _ := doc.Lookup("count").AsInt64OK(); n != int64(len(entries)) {
			t.Errorf("%s count %d, want %d", name, n, len(entries))
		}
		if n, _ := doc.Lookup("size").AsInt64OK(); n != size {
			t.Errorf("%s size %d, want %d", name, n, size)
		}
		if n, _ := doc.Lookup("maxSize").AsInt64OK(); !doc.Lookup("capped").Boolean() || n != bound {
			t.Errorf("%s capped %v maxSize %d, want the bound %d", name, doc.Lookup("capped"), n, bound)
		}
		if n, _ := doc.Lookup("nindexes").AsInt64OK(); n != 0 {
			t.Errorf("%s nindexes %d", name, n)
		}
	}
	if n, _ := staged[0].Lookup("count").AsInt64OK(); n != int64(len(entries)) {
		t.Errorf("$collStats count %d, want %d", n, len(entries))
	}
	db, err := runCmd(client, "local", bson.D{{Key: "dbStats", Value: 1}})
	if err != nil {
		t.Fatal(err)
	}
	// local holds the oplog and the startup log (one document per start)
	startup, err := runCmd(client, "local", bson.D{{Key: "collStats", Value: "startup_log"}})
	if err != nil {
		t.Fatal(err)
	}
	starts, _ := startup.Lookup("count").AsInt64OK()
	startupSize, _ := startup.Lookup("size").AsInt64OK()
	if db.Lookup("collections").Int64() != 2 || db.Lookup("objects").Int64() != int64(len(entries))+starts || int64(db.Lookup("dataSize").Double()) != size+startupSize {
		t.Errorf("dbStats of local: %v", db)
	}
	dbs, err := client.ListDatabases(ctx, bson.D{{Key: "name", Value: "local"}})
	if err != nil || len(dbs.Databases) != 1 || dbs.Databases[0].Empty {
		t.Errorf("listDatabases of local: %+v %v", dbs, err)
	}
}

// TestOplogCollection: local.oplog.rs reads as a capped collection of
// MongoDB-shaped entries, in commit order, newest first with $natural: -1,
// from a ts bound, and tailable.
func TestOplogCollection(t *testing.T) {
	client := startStreams(t)
	ctx := context.Background()
	coll := client.Database(testDB).Collection("oplogged")
	oplog := client.Database("local").Collection("oplog.rs")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 2}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	entries := findAll(t, oplog, bson.D{{Key: "ns", Value: testDB + ".oplogged"}})
	if len(entries) != 3 {
		t.Fatalf("%d entries: %v", len(entries), entries)
	}
	// counts and aggregations read the same entries
	if n, err := oplog.CountDocuments(ctx, bson.D{{Key: "ns", Value: testDB + ".oplogged"}}); err != nil || n != 3 {
		t.Errorf("countDocuments: %d %v", n, err)
	}
	if n, err := oplog.EstimatedDocumentCount(ctx); err != nil || n < 3 {
		t.Errorf("estimatedDocumentCount: %d %v", n, err)
	}
	agg, err := oplog.Aggregate(ctx, mongo.Pipeline{{{Key: "$match", Value: bson.D{{Key: "ns", Value: testDB + ".oplogged"}}}},
		{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$op"}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}}, {{Key: "$sort", Value: bson.D{{Key: "_id", Value: 1}}}}})
	if err != nil {
		t.Fatal(err)
	}
	var ops []bson.Raw
	if err := agg.All(ctx, &ops); err != nil || len(ops) != 3 || ops[0].Lookup("_id").StringValue() != "d" {
		t.Errorf("aggregate by op: %v %v", ops, err)
	}
	// the driver's writes are retryable: they carry their session
	wantKeys := []string{"op", "ns", "ui", "o", "o2", "ts", "t", "v", "wall", "lsid", "txnNumber", "stmtId"}
	for i, op := range []string{"i", "u", "d"} {
		e := entries[i]
		if got := e.Lookup("op").StringValue(); got != op {
			t.Errorf("entry %d: op %s, want %s", i, got, op)
		}
		var keys []string
		els, _ := e.Elements()
		for _, el := range els {
			keys = append(keys, el.Key())
		}
		want := wantKeys
		if op == "d" {
			want = slices.DeleteFunc(slices.Clone(wantKeys), func(k string) bool { return k == "o2" })
		}
		if !slices.Equal(keys, want) {
			t.Errorf("entry %d fields %v, want %v", i, keys, want)
		}
	}
	if got := entries[1].Lookup("o").String(); got != `{"$v": {"$numberInt":"2"},"diff": {"u": {"a": {"$numberInt":"2"}}}}` {
		t.Errorf("update entry o: %s", got)
	}
	// newest first
	latest := findAll(t, oplog, bson.D{}, options.Find().SetSort(bson.D{{Key: "$natural", Value: -1}}).SetLimit(1))
	if len(latest) != 1 || latest[0].Lookup("op").StringValue() != "d" {
		t.Errorf("latest entry: %v", latest)
	}
	// from a ts on
	ts := entries[1].Lookup("ts")
	secs, inc := ts.Timestamp()
	from := findAll(t, oplog, bson.D{{Key: "ts", Value: bson.D{{Key: "$gte", Value: bson.Timestamp{T: secs, I: inc}}}}})
	if len(from) != 2 || !from[0].Lookup("ts").Equal(ts) {
		t.Errorf("entries from %v: %v", ts, from)
	}
	// the oplog has no index to hint; a $natural hint sets the direction
	// (mongodump hints {$natural: 1}), and may not contradict the sort
	_, err = oplog.Find(ctx, bson.D{}, options.Find().SetHint("_id_"))
	requireCode(t, err, 238, "NotImplemented")
	hinted := findAll(t, oplog, bson.D{{Key: "ns", Value: testDB + ".oplogged"}}, options.Find().SetHint(bson.D{{Key: "$natural", Value: -1}}))
	if len(hinted) != 3 || hinted[0].Lookup("op").StringValue() != "d" {
		t.Errorf("hinted $natural: -1: %v", hinted)
	}
	if hinted := findAll(t, oplog, bson.D{{Key: "ns", Value: testDB + ".oplogged"}}, options.Find().SetHint(bson.D{{Key: "$natural", Value: 1}})); len(hinted) != 3 || hinted[0].Lookup("op").StringValue() != "i" {
		t.Errorf("hinted $natural: 1: %v", hinted)
	}
	_, err = oplog.Find(ctx, bson.D{}, options.Find().SetHint(bson.D{{Key: "$natural", Value: 1}}).SetSort(bson.D{{Key: "$natural", Value: -1}}))
	requireCode(t, err, 2, "BadValue")
	_, err = oplog.Find(ctx, bson.D{}, options.Find().SetHint(bson.D{{Key: "$natural", Value: 0}}))
	requireCode(t, err, 2, "BadValue")
	// listed as MongoDB lists a replica set member's oplog: capped, with no
	// index at all
	specs, err := client.Database("local").ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: "oplog.rs"}})
	if err != nil || len(specs) != 1 || specs[0].Type != "collection" || specs[0].UUID == nil || specs[0].IDIndex.Name != "" ||
		!specs[0].Options.Lookup("capped").Boolean() || specs[0].Options.Lookup("size").Int64() <= 0 || specs[0].Options.Lookup("autoIndexId").Boolean() {
		t.Errorf("listCollections: %+v %v", specs, err)
	}
	icur, err := oplog.Indexes().List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var oplogIndexes []bson.Raw
	if err := icur.All(ctx, &oplogIndexes); err != nil || len(oplogIndexes) != 0 {
		t.Errorf("listIndexes: %v %v", oplogIndexes, err)
	}
	// tailable
	lt, li := latest[0].Lookup("ts").Timestamp()
	cur, err := oplog.Find(ctx, bson.D{{Key: "ts", Value: bson.D{{Key: "$gt", Value: bson.Timestamp{T: lt, I: li}}}}}, options.Find().SetCursorType(options.TailableAwait))
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close(ctx)
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 2}}); err != nil {
		t.Fatal(err)
	}
	tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if !cur.Next(tctx) {
		t.Fatalf("tailable oplog cursor: %v", cur.Err())
	}
	if cur.Current.Lookup("op").StringValue() != "i" || cur.Current.Lookup("o", "_id").Int32() != 2 {
		t.Errorf("tailed entry %s", cur.Current)
	}
}

// TestChangeStreamPreAndPostImages: with changeStreamPreAndPostImages on,
// events carry the document before the change (fullDocumentBeforeChange)
// and the post-image of updates (fullDocument: whenAvailable/required);
// without it, required fails with NoMatchingDocument and whenAvailable
// gives null.
func TestChangeStreamPreAndPostImages(t *testing.T) {
	client := startStreams(t)
	ctx := context.Background()
	db := client.Database(testDB)
	if err := db.CreateCollection(ctx, "images", options.CreateCollection().SetChangeStreamPreAndPostImages(bson.D{{Key: "enabled", Value: true}})); err != nil {
		t.Fatal(err)
	}
	coll := db.Collection("images")
	specs, err := db.ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: "images"}})
	if err != nil || len(specs) != 1 || specs[0].Options.Lookup("changeStreamPreAndPostImages", "enabled").Boolean() != true {
		t.Fatalf("listCollections: %v %v", specs, err)
	}
	opts := options.ChangeStream().SetFullDocument(options.Required).SetFullDocumentBeforeChange(options.Required)
	cs, err := coll.Watch(ctx, mongo.Pipeline{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(ctx)
	lookup, err := coll.Watch(ctx, mongo.Pipeline{bson.D{{Key: "$match", Value: bson.D{{Key: "operationType", Value: "update"}}}}}, options.ChangeStream().SetFullDocument(options.UpdateLookup))
	if err != nil {
		t.Fatal(err)
	}
	defer lookup.Close(ctx)
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "n", Value: 1}, {Key: "s", Value: bson.D{{Key: "x", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}, {Key: "$set", Value: bson.D{{Key: "s.y", Value: 2}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.ReplaceOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "r", Value: true}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	nextEvent(t, cs) // insert
	upd := nextEvent(t, cs)
	if got := upd.Lookup("fullDocumentBeforeChange").String(); got != `{"_id": {"$numberInt":"1"},"n": {"$numberInt":"1"},"s": {"x": {"$numberInt":"1"}}}` {
		t.Errorf("update pre-image %s", got)
	}
	if got := upd.Lookup("fullDocument").String(); got != `{"_id": {"$numberInt":"1"},"n": {"$numberInt":"2"},"s": {"x": {"$numberInt":"1"},"y": {"$numberInt":"2"}}}` {
		t.Errorf("update post-image %s", got)
	}
	// The post-image fills the place MongoDB's transform reserves for
	// fullDocument after wallTime; the pre-image comes last.
	if got := strings.Join(keysOf(t, upd), ","); got != "_id,operationType,clusterTime,wallTime,fullDocument,ns,documentKey,updateDescription,fullDocumentBeforeChange" {
		t.Errorf("update event fields %s", got)
	}
	if got := strings.Join(keysOf(t, nextEvent(t, lookup)), ","); got != "_id,operationType,clusterTime,wallTime,fullDocument,ns,documentKey,updateDescription" {
		t.Errorf("updateLookup event fields %s", got)
	}
	rep := nextEvent(t, cs)
	if got := rep.Lookup("fullDocumentBeforeChange", "n").Int32(); got != 2 {
		t.Errorf("replace pre-image %s", rep)
	}
	del := nextEvent(t, cs)
	if _, ok := del.Lookup("fullDocumentBeforeChange", "r").BooleanOK(); !ok {
		t.Errorf("delete pre-image %s", del)
	}

	// A collection without pre-images: whenAvailable gives null, required
	// fails at the first event it lacks one for, naming that event by
	// operationType, ns and clusterTime (makePreImageNotFoundErrorMsg); a
	// post-image is required of updates alone.
	plain := db.Collection("noimages")
	soft, err := plain.Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetFullDocumentBeforeChange(options.WhenAvailable))
	if err != nil {
		t.Fatal(err)
	}
	defer soft.Close(ctx)
	hard, err := plain.Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetFullDocumentBeforeChange(options.Required))
	if err != nil {
		t.Fatal(err)
	}
	defer hard.Close(ctx)
	hardPost, err := plain.Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetFullDocument(options.Required))
	if err != nil {
		t.Fatal(err)
	}
	defer hardPost.Close(ctx)
	if _, err := plain.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := plain.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "u", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := plain.DeleteOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	nextEvent(t, soft)
	softUpdate := nextEvent(t, soft)
	if ev := nextEvent(t, soft); softUpdate.Lookup("fullDocumentBeforeChange").Type != bson.TypeNull || ev.Lookup("fullDocumentBeforeChange").Type != bson.TypeNull {
		t.Errorf("whenAvailable without a pre-image: %s %s", softUpdate, ev)
	}
	secs, inc := softUpdate.Lookup("clusterTime").Timestamp()
	event := fmt.Sprintf(`{operationType: "update", ns: {db: "%s", coll: "noimages"}, clusterTime: Timestamp(%d, %d)}`, testDB, secs, inc)
	for _, tc := range []struct {
		cs  *mongo.ChangeStream
		msg string
	}{
		{hard, "Change stream was configured to require a pre-image for all update, delete and replace events, but the pre-image was not found for event: " + event},
		{hardPost, "Change stream was configured to require a post-image for all update events, but the post-image was not found for event: " + event},
	} {
		nextEvent(t, tc.cs)
		tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		if tc.cs.Next(tctx) {
			t.Fatalf("required without an image gave %s", tc.cs.Current)
		}
		cancel()
		requireError(t, tc.cs.Err(), 47, "NoMatchingDocument", "Executor error during getMore :: caused by :: "+tc.msg)
	}

	// collMod turns it on and off; a transaction's pre-images are kept too.
	if err := db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "noimages"}, {Key: "changeStreamPreAndPostImages", Value: bson.D{{Key: "enabled", Value: true}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	txnStream, err := plain.Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetFullDocumentBeforeChange(options.Required))
	if err != nil {
		t.Fatal(err)
	}
	defer txnStream.Close(ctx)
	if _, err := plain.InsertOne(ctx, bson.D{{Key: "_id", Value: 2}, {Key: "v", Value: "before"}}); err != nil {
		t.Fatal(err)
	}
	sess, err := client.StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(ctx)
	if _, err := sess.WithTransaction(ctx, func(sc context.Context) (any, error) {
		_, err := plain.UpdateOne(sc, bson.D{{Key: "_id", Value: 2}}, bson.D{{Key: "$set", Value: bson.D{{Key: "v", Value: "after"}}}})
		return nil, err
	}); err != nil {
		t.Fatal(err)
	}
	nextEvent(t, txnStream)
	if ev := nextEvent(t, txnStream); ev.Lookup("fullDocumentBeforeChange", "v").StringValue() != "before" {
		t.Errorf("transaction's pre-image: %s", ev)
	}
}

// TestPreAndPostImagesInternalDatabases: changeStreamPreAndPostImages
// cannot be enabled on a collection of admin, local or config, by create
// or collMod (InvalidOptions, as MongoDB's
// validateChangeStreamPreAndPostImagesOptionIsPermitted); disabling it
// there is allowed (change_stream_pre_and_post_images collection options
// jstest).
func TestPreAndPostImagesInternalDatabases(t *testing.T) {
	client := startStreams(t)
	ctx := context.Background()
	on := bson.D{{Key: "enabled", Value: true}}
	off := bson.D{{Key: "enabled", Value: false}}
	for _, name := range []string{"local", "admin", "config"} {
		db := client.Database(name)
		msg := "changeStreamPreAndPostImages collection option is not supported on the " + name + " database"
		err := db.RunCommand(ctx, bson.D{{Key: "create", Value: "images"}, {Key: "changeStreamPreAndPostImages", Value: on}}).Err()
		requireError(t, err, 72, "InvalidOptions", msg)
		if err := db.RunCommand(ctx, bson.D{{Key: "create", Value: "images"}, {Key: "changeStreamPreAndPostImages", Value: off}}).Err(); err != nil {
			t.Fatalf("%s: create with images disabled: %v", name, err)
		}
		err = db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "images"}, {Key: "changeStreamPreAndPostImages", Value: on}}).Err()
		requireError(t, err, 72, "InvalidOptions", msg)
		if err := db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "images"}, {Key: "changeStreamPreAndPostImages", Value: off}}).Err(); err != nil {
			t.Fatalf("%s: collMod disabling images: %v", name, err)
		}
		specs, err := db.ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: "images"}})
		if err != nil || len(specs) != 1 || specs[0].Options.Lookup("changeStreamPreAndPostImages").Type != 0 {
			t.Fatalf("%s: listCollections %v %v", name, specs, err)
		}
		if err := db.Collection("images").Drop(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestChangeStreamReplaysToState: concurrent clients make random inserts,
// updates, replacements, deletes and transactions; replaying the stream's
// events (the post-image of each update) onto an empty collection gives
// exactly the collection the writes left: no event is missing, none is
// invented, and they come in commit order.
func TestChangeStreamReplaysToState(t *testing.T) {
	client := startStreams(t)
	ctx := context.Background()
	db := client.Database(testDB)
	if err := db.CreateCollection(ctx, "replay", options.CreateCollection().SetChangeStreamPreAndPostImages(bson.D{{Key: "enabled", Value: true}})); err != nil {
		t.Fatal(err)
	}
	coll := db.Collection("replay")
	cs, err := coll.Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetFullDocument(options.Required))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(ctx)
	const writers, ops, keys = 4, 150, 12
	errs := make(chan error, writers)
	for w := range writers {
		go func() {
			r := rand.New(rand.NewPCG(uint64(w), 9))
			sess, err := client.StartSession()
			if err != nil {
				errs <- err
				return
			}
			defer sess.EndSession(ctx)
			for i := range ops {
				id := r.IntN(keys)
				var err error
				switch r.IntN(6) {
				case 0:
					_, err = coll.InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "w", Value: w}, {Key: "arr", Value: bson.A{i}}})
				case 1:
					_, err = coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}, {Key: "$push", Value: bson.D{{Key: "arr", Value: i}}}})
				case 2:
					_, err = coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$set", Value: bson.D{{Key: "sub.v", Value: i}}}, {Key: "$unset", Value: bson.D{{Key: "w", Value: ""}}}, {Key: "$pop", Value: bson.D{{Key: "arr", Value: -1}}}})
				case 3:
					_, err = coll.ReplaceOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "r", Value: i}}, options.Replace().SetUpsert(true))
				case 4:
					_, err = coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}})
				case 5:
					other := r.IntN(keys)
					_, err = sess.WithTransaction(ctx, func(sc context.Context) (any, error) {
						if _, err := coll.UpdateOne(sc, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "t", Value: 1}}}}, options.UpdateOne().SetUpsert(true)); err != nil {
							return nil, err
						}
						_, err := coll.DeleteOne(sc, bson.D{{Key: "_id", Value: other}})
						return nil, err
					})
				}
				if err != nil && !mongo.IsDuplicateKeyError(err) {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{}
	for _, d := range findAll(t, coll, bson.D{}) {
		want[d.Lookup("_id").String()] = d.String()
	}
	// the events end with the insert of a sentinel
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "end"}}); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	events := 0
	for {
		ev := nextEvent(t, cs)
		key := ev.Lookup("documentKey", "_id").String()
		if key == `"end"` {
			break
		}
		events++
		switch op := ev.Lookup("operationType").StringValue(); op {
		case "insert", "replace", "update":
			got[key] = ev.Lookup("fullDocument").Document().String()
		case "delete":
			delete(got, key)
		default:
			t.Fatalf("unexpected %s event", op)
		}
	}
	if len(got) != len(want) {
		t.Errorf("replayed %d documents, the collection holds %d", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("document %s: replayed %s, stored %s", k, got[k], v)
		}
	}
	t.Logf("%d events replayed to %d documents", events, len(want))
}

// TestChangeStreamStartAfterInvalidate: startAfter an invalidate starts a
// new stream on the collection after its drop.
func TestChangeStreamStartAfterInvalidate(t *testing.T) {
	client := startStreams(t)
	ctx := context.Background()
	coll := client.Database(testDB).Collection("reborn")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	cs, err := coll.Watch(ctx, mongo.Pipeline{})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(ctx)
	if err := coll.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	nextEvent(t, cs)
	inv := nextEvent(t, cs)
	if inv.Lookup("operationType").StringValue() != "invalidate" {
		t.Fatalf("want invalidate: %s", inv)
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 2}}); err != nil {
		t.Fatal(err)
	}
	_, err = coll.Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetResumeAfter(inv.Lookup("_id").Document()))
	requireCode(t, err, 260, "InvalidResumeToken")
	again, err := coll.Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetStartAfter(inv.Lookup("_id").Document()))
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close(ctx)
	if ev := nextEvent(t, again); ev.Lookup("operationType").StringValue() != "insert" || ev.Lookup("documentKey", "_id").Int32() != 2 {
		t.Errorf("after the invalidate: %s", ev)
	}
}

// TestChangeStreamUpdateDescription checks update events' descriptions as
// MongoDB's update operators log their changes: an array element set by
// its path or appended by $push or $addToSet is named alone, and $pull
// and $pop replace the whole array, whatever the sizes. Fields come as
// MongoDB reads the diff: updated, inserted, then those of sub-diffs.
func TestChangeStreamUpdateDescription(t *testing.T) {
	client := startStreams(t)
	ctx := context.Background()
	coll := client.Database("updesc").Collection("c")
	cases := []struct {
		doc, update, want string
	}{
		{`{"a": [{"1": 1}]}`, `{"$set": {"a.0.1": 2}}`,
			`{"updatedFields": {"a.0.1": 2}, "removedFields": [], "truncatedArrays": [], "disambiguatedPaths": {"a.0.1": ["a", 0, "1"]}}`},
		{`{"a": [1, 2]}`, `{"$push": {"a": 3}}`,
			`{"updatedFields": {"a.2": 3}, "removedFields": [], "truncatedArrays": [], "disambiguatedPaths": {}}`},
		{`{"a": [1]}`, `{"$addToSet": {"a": {"$each": [1, 2]}}}`,
			`{"updatedFields": {"a.1": 2}, "removedFields": [], "truncatedArrays": [], "disambiguatedPaths": {}}`},
		{`{"a": [1, 2, 3, 4, 5, 6, 7, 8]}`, `{"$pull": {"a": 8}}`,
			`{"updatedFields": {"a": [1, 2, 3, 4, 5, 6, 7]}, "removedFields": [], "truncatedArrays": [], "disambiguatedPaths": {}}`},
		{`{"a": [1, 2]}`, `{"$push": {"a": {"$each": [0], "$position": 0}}}`,
			`{"updatedFields": {"a": [0, 1, 2]}, "removedFields": [], "truncatedArrays": [], "disambiguatedPaths": {}}`},
		{`{"a": 1, "b": {"c": [1, 2]}}`, `{"$unset": {"a": "", "b.c.1": ""}, "$set": {"x.y": 1}}`,
			`{"updatedFields": {"x": {"y": 1}, "b.c.1": null}, "removedFields": ["a"], "truncatedArrays": [], "disambiguatedPaths": {}}`},
		// jstests/change_streams/expanded_update_description.js: array
		// indexes alone are not ambiguous, a numeric field name is
		{`{"t": [{"s": [0, [0, [{"b": [1, 2]}]]]}]}`, `{"$set": {"t.0.s.1.1.0.b.1": 3}}`,
			`{"updatedFields": {"t.0.s.1.1.0.b.1": 3}, "removedFields": [], "truncatedArrays": [], "disambiguatedPaths": {}}`},
		{`{"o": {"0": {"1": "n"}}}`, `{"$set": {"o.0.1": "u"}}`,
			`{"updatedFields": {"o.0.1": "u"}, "removedFields": [], "truncatedArrays": [], "disambiguatedPaths": {"o.0.1": ["o", "0", "1"]}}`},
	}
	for i, tc := range cases {
		cs, err := coll.Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetShowExpandedEvents(true))
		if err != nil {
			t.Fatal(err)
		}
		doc := append(bson.D{{Key: "_id", Value: i}}, mustD(t, tc.doc)...)
		if _, err := coll.InsertOne(ctx, doc); err != nil {
			t.Fatal(err)
		}
		if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: i}}, extJSON(t, []byte(tc.update))); err != nil {
			t.Fatal(err)
		}
		ev := nextEvent(t, cs)
		for ev.Lookup("operationType").StringValue() != "update" { // create, insert
			ev = nextEvent(t, cs)
		}
		got, want := ev.Lookup("updateDescription").Document(), extJSON(t, []byte(tc.want))
		if !bytes.Equal(got, want) {
			t.Errorf("%s on %s:\n got %s\nwant %s", tc.update, tc.doc, got, want)
		}
		cs.Close(ctx)
	}
}

// mustD reads a document of Extended JSON as a bson.D.
func mustD(t *testing.T, j string) bson.D {
	t.Helper()
	var d bson.D
	if err := bson.UnmarshalExtJSON([]byte(j), false, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestChangeStreamSplitLargeEvents: an update of a 10 MB document, with
// its updateDescription and fullDocument, is a 20 MB event. Without
// $changeStreamSplitLargeEvent the stream fails with BSONObjectTooLarge;
// with it the event comes in two fragments (its fields smallest first:
// updateDescription, the larger, alone in the second), each with its own resume token, and a stream
// resumed after the first fragment returns the second, as the Go driver's
// own test of the stage expects.
func TestChangeStreamSplitLargeEvents(t *testing.T) {
	client := startStreams(t)
	ctx := context.Background()
	coll := client.Database(testDB).Collection("split")
	big := func(c string) string { return c + strings.Repeat("q", 10<<20) }
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "value", Value: big("q")}}); err != nil {
		t.Fatal(err)
	}
	split := mongo.Pipeline{{{Key: "$changeStreamSplitLargeEvent", Value: bson.D{}}}}
	opts := options.ChangeStream().SetFullDocument(options.UpdateLookup)
	whole, err := coll.Watch(ctx, mongo.Pipeline{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer whole.Close(ctx)
	cs, err := coll.Watch(ctx, split, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(ctx)
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "value", Value: big("z")}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 2}}); err != nil {
		t.Fatal(err)
	}
	first, second := nextEvent(t, cs), nextEvent(t, cs)
	var fields []string
	for i, f := range []bson.Raw{first, second} {
		se := f.Lookup("splitEvent").Document()
		if se.Lookup("fragment").Int32() != int32(i+1) || se.Lookup("of").Int32() != 2 || len(f) > 16<<20+8<<10 {
			t.Fatalf("fragment %d: splitEvent %v, %d bytes", i+1, se, len(f))
		}
		fields = append(fields, keysOf(t, f)[2:]...)
	}
	// smallest first (ties by name): the larger 10 MB field comes last
	if want := []string{"wallTime", "clusterTime", "operationType", "documentKey", "ns", "fullDocument", "updateDescription"}; !slices.Equal(fields, want) || keysOf(t, second)[2] != "updateDescription" {
		t.Errorf("the fragments' fields %v, want %v (updateDescription in the second)", fields, want)
	}
	if got := nextEvent(t, cs); got.Lookup("operationType").StringValue() != "insert" || got.Lookup("splitEvent").Type != 0 {
		t.Errorf("the event after the split one: %v", got)
	}
	// without the stage the event is too large
	if whole.Next(ctx) || serverCode(whole.Err()) != 10334 {
		t.Errorf("a 20 MB event without the split stage: %v", whole.Err())
	}
	// resumed after the first fragment, the stream returns the second
	resumed, err := coll.Watch(ctx, split, options.ChangeStream().SetFullDocument(options.UpdateLookup).SetResumeAfter(first.Lookup("_id").Document()))
	if err != nil {
		t.Fatal(err)
	}
	defer resumed.Close(ctx)
	if got := nextEvent(t, resumed); !bytes.Equal(got, second) {
		t.Errorf("resumed after the first fragment: %.200s, want the second fragment", got.String())
	}
	// after the last fragment: the next event
	after, err := coll.Watch(ctx, split, options.ChangeStream().SetFullDocument(options.UpdateLookup).SetStartAfter(second.Lookup("_id").Document()))
	if err != nil {
		t.Fatal(err)
	}
	defer after.Close(ctx)
	if got := nextEvent(t, after); got.Lookup("operationType").StringValue() != "insert" {
		t.Errorf("started after the last fragment: %v", got)
	}
}

// TestChangeStreamShowSystemEvents: a database's stream reports the writes
// of system.js only with showSystemEvents, as MongoDB 7.0's namespace
// filter has it.
func TestChangeStreamShowSystemEvents(t *testing.T) {
	client := startStreams(t)
	ctx := context.Background()
	db := client.Database("cssys")
	plain, err := db.Watch(ctx, mongo.Pipeline{})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close(ctx)
	system, err := db.Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetCustomPipeline(bson.M{"showSystemEvents": true}))
	if err != nil {
		t.Fatal(err)
	}
	defer system.Close(ctx)
	for _, coll := range []string{"system.js", "plain"} {
		if _, err := db.Collection(coll).InsertOne(ctx, bson.D{{Key: "_id", Value: coll}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []struct {
		cs    *mongo.ChangeStream
		colls []string
	}{{plain, []string{"plain"}}, {system, []string{"system.js", "plain"}}} {
		for _, coll := range want.colls {
			if got := nextEvent(t, want.cs).Lookup("ns", "coll").StringValue(); got != coll {
				t.Fatalf("event on %s, want %s", got, coll)
			}
		}
	}
}

// TestChangeStreamRenameOntoWatched: a collection's stream sees another
// collection renamed onto it (also with dropTarget, and by $out) as a
// rename event and is invalidated, as MongoDB's filters match "o.to".
func TestChangeStreamRenameOntoWatched(t *testing.T) {
	client := startStreams(t)
	ctx := context.Background()
	db := client.Database(testDB)
	src := db.Collection("ontosrc")
	rename := func(dropTarget bool) error {
		cmd := bson.D{{Key: "renameCollection", Value: testDB + ".ontosrc"}, {Key: "to", Value: testDB + ".onto"}, {Key: "dropTarget", Value: dropTarget}}
		return client.Database("admin").RunCommand(ctx, cmd).Err()
	}
	for _, c := range []struct {
		name string
		run  func() error
	}{
		{"rename", func() error { return rename(false) }},
		{"rename dropTarget", func() error { return rename(true) }},
		{"$out", func() error {
			_, err := src.Aggregate(ctx, mongo.Pipeline{{{Key: "$out", Value: "onto"}}})
			return err
		}},
	} {
		if _, err := src.InsertOne(ctx, bson.D{}); err != nil {
			t.Fatal(err)
		}
		cs, err := db.Collection("onto").Watch(ctx, mongo.Pipeline{})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.run(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		ev := nextEvent(t, cs)
		if ev.Lookup("operationType").StringValue() != "rename" || ev.Lookup("to", "coll").StringValue() != "onto" {
			t.Errorf("%s: %s, want a rename onto the watched collection", c.name, ev)
		}
		if ev := nextEvent(t, cs); ev.Lookup("operationType").StringValue() != "invalidate" {
			t.Errorf("%s: %s, want invalidate", c.name, ev)
		}
		cs.Close(ctx)
	}
}

// TestChangeStreamDropEmptyDatabase: dropping a database whose last
// collection was dropped before still logs dropDatabase (MongoDB's
// Database outlives its collections), which ends the database's stream;
// a database that never held a collection logs nothing.
func TestChangeStreamDropEmptyDatabase(t *testing.T) {
	client := startStreams(t)
	ctx := context.Background()
	db := client.Database("csemptydb")
	if err := db.CreateCollection(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	cs, err := db.Watch(ctx, mongo.Pipeline{})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(ctx)
	all, err := client.Watch(ctx, mongo.Pipeline{})
	if err != nil {
		t.Fatal(err)
	}
	defer all.Close(ctx)
	if err := db.Collection("c").Drop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := client.Database("csneverdb").Drop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Database("csemptydb2").Collection("c").InsertOne(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"drop", "dropDatabase", "invalidate"} {
		if ev := nextEvent(t, cs); ev.Lookup("operationType").StringValue() != want {
			t.Fatalf("database stream: %s, want %s", ev, want)
		}
	}
	for _, want := range []string{"drop csemptydb", "dropDatabase csemptydb", "insert csemptydb2"} {
		ev := nextEvent(t, all)
		if got := ev.Lookup("operationType").StringValue() + " " + ev.Lookup("ns", "db").StringValue(); got != want {
			t.Fatalf("deployment stream: %s, want %s", got, want)
		}
	}
}

// TestChangeStreamUpdateLookupByUUID: updateLookup reads the collection of
// the event's UUID, as MongoDB's lookupSingleDocument: renamed, it still
// finds the document; dropped and recreated, fullDocument is null.
func TestChangeStreamUpdateLookupByUUID(t *testing.T) {
	client := startStreams(t)
	ctx := context.Background()
	db := client.Database(testDB)
	coll := db.Collection("lookupuuid")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	// a database stream outlives the drop and the rename
	cs, err := db.Watch(ctx, mongo.Pipeline{{{Key: "$match", Value: bson.D{{Key: "operationType", Value: "update"}}}}}, options.ChangeStream().SetFullDocument(options.UpdateLookup))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(ctx)
	update := func() {
		t.Helper()
		if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}); err != nil {
			t.Fatal(err)
		}
	}
	update()
	if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "renameCollection", Value: testDB + ".lookupuuid"}, {Key: "to", Value: testDB + ".lookupuuid2"}}).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "other", Value: true}}); err != nil {
		t.Fatal(err)
	}
	update()
	if err := coll.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "third", Value: true}}); err != nil {
		t.Fatal(err)
	}
	// read after all of it: the first update's document is in lookupuuid2,
	// the second's collection is gone
	if ev := nextEvent(t, cs); ev.Lookup("fullDocument").Type != bson.TypeEmbeddedDocument || ev.Lookup("fullDocument", "n").Type != bson.TypeInt32 || ev.Lookup("fullDocument", "other").Type != 0 {
		t.Errorf("update before the rename: %s", ev)
	}
	if ev := nextEvent(t, cs); ev.Lookup("fullDocument").Type != bson.TypeNull {
		t.Errorf("update of a collection since dropped: %s, want fullDocument null", ev)
	}

	// The lookup is made when the event is returned: a batch of one
	// leaves the update's for the next getMore, after the drop.
	one, err := coll.Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetFullDocument(options.UpdateLookup).SetBatchSize(1))
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close(ctx)
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 5}}); err != nil {
		t.Fatal(err)
	}
	update5 := bson.D{{Key: "$set", Value: bson.D{{Key: "u", Value: 1}}}}
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 5}}, update5); err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, one); ev.Lookup("operationType").StringValue() != "insert" {
		t.Fatalf("%s, want the insert", ev)
	}
	if err := coll.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 5}, {Key: "u", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, one); ev.Lookup("operationType").StringValue() != "update" || ev.Lookup("fullDocument").Type != bson.TypeNull {
		t.Errorf("update read after its collection's drop: %s, want fullDocument null", ev)
	}
}

// TestChangeStreamGetMoreWaitsForRelevantChanges: an awaitData getMore
// woken by writes its stream does not show (another collection, an event
// its $match drops) keeps waiting until maxTimeMS, as MongoDB's
// (only_wake_getmore_for_relevant_changes.js).
func TestChangeStreamGetMoreWaitsForRelevantChanges(t *testing.T) {
	client := startStreams(t)
	ctx := context.Background()
	db := client.Database(testDB)
	reply, err := aggregateRaw(t, db, bson.D{{Key: "aggregate", Value: "wake"}, {Key: "pipeline", Value: bson.A{
		bson.D{{Key: "$changeStream", Value: bson.D{}}},
		bson.D{{Key: "$match", Value: bson.D{{Key: "fullDocument.keep", Value: true}}}},
	}}, {Key: "cursor", Value: bson.D{}}})
	if err != nil {
		t.Fatal(err)
	}
	id := reply.Lookup("cursor", "id").Int64()
	writes := make(chan error, 1)
	go func() {
		for i := range 5 {
			time.Sleep(50 * time.Millisecond)
			coll := "wakeother"
			if i%2 == 1 {
				coll = "wake"
			}
			if _, err := db.Collection(coll).InsertOne(ctx, bson.D{{Key: "keep", Value: false}}); err != nil {
				writes <- err
				return
			}
		}
		writes <- nil
	}()
	start := time.Now()
	more, err := aggregateRaw(t, db, bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "wake"}, {Key: "maxTimeMS", Value: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-writes; err != nil {
		t.Fatal(err)
	}
	if vals, _ := more.Lookup("cursor", "nextBatch").Array().Values(); len(vals) != 0 {
		t.Errorf("batch %s, want empty", more.Lookup("cursor", "nextBatch"))
	}
	if took := time.Since(start); took < 900*time.Millisecond {
		t.Errorf("getMore returned after %v, before its maxTimeMS of 1s", took)
	}
	// a relevant change ends the wait
	go func() {
		time.Sleep(50 * time.Millisecond)
		_, err := db.Collection("wake").InsertOne(ctx, bson.D{{Key: "keep", Value: true}})
		writes <- err
	}()
	start = time.Now()
	more, err = aggregateRaw(t, db, bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "wake"}, {Key: "maxTimeMS", Value: 5000}})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-writes; err != nil {
		t.Fatal(err)
	}
	if vals, _ := more.Lookup("cursor", "nextBatch").Array().Values(); len(vals) != 1 || time.Since(start) > 4*time.Second {
		t.Errorf("batch %v after %v, want the insert at once", vals, time.Since(start))
	}
}

// TestChangeStreamInvalidateBatchSizeOne: a batch that ends with the
// invalidate leaves the cursor open; the next read past it closes it, as
// MongoDB's ChangeStreamInvalidated on the read after the invalidate.
func TestChangeStreamInvalidateBatchSizeOne(t *testing.T) {
	client := startStreams(t)
	ctx := context.Background()
	db := client.Database(testDB)
	if err := db.CreateCollection(ctx, "b1"); err != nil {
		t.Fatal(err)
	}
	open := func(spec bson.D) bson.Raw {
		t.Helper()
		reply, err := aggregateRaw(t, db, bson.D{{Key: "aggregate", Value: "b1"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$changeStream", Value: spec}}}}, {Key: "cursor", Value: bson.D{{Key: "batchSize", Value: 1}}}})
		if err != nil {
			t.Fatal(err)
		}
		return reply.Lookup("cursor").Document()
	}
	// batch reads the cursor's batches of one: their operationType (""
	// for an empty one) and whether the cursor stayed open
	batch := func(cur bson.Raw) (string, bool) {
		t.Helper()
		b, ok := cur.Lookup("firstBatch").ArrayOK()
		if !ok {
			b = cur.Lookup("nextBatch").Array()
		}
		vals, _ := b.Values()
		op := ""
		if len(vals) > 0 {
			op = vals[0].Document().Lookup("operationType").StringValue()
		}
		return op, cur.Lookup("id").Int64() != 0
	}
	getMore := func(id int64) bson.Raw {
		t.Helper()
		reply, err := aggregateRaw(t, db, bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "b1"}, {Key: "batchSize", Value: 1}, {Key: "maxTimeMS", Value: 200}})
		if err != nil {
			t.Fatal(err)
		}
		return reply.Lookup("cursor").Document()
	}
	cur := open(bson.D{})
	id := cur.Lookup("id").Int64()
	if err := db.Collection("b1").Drop(ctx); err != nil {
		t.Fatal(err)
	}
	var dropToken bson.Raw
	for _, want := range []struct {
		op   string
		open bool
	}{{"drop", true}, {"invalidate", true}, {"", false}} {
		cur := getMore(id)
		if op, open := batch(cur); op != want.op || open != want.open {
			t.Fatalf("getMore: %s open %v, want %q open %v", op, open, want.op, want.open)
		}
		if want.op == "drop" {
			dropToken = cur.Lookup("nextBatch", "0", "_id").Document()
		}
	}
	// startAfter the drop: the first batch is the invalidate, the cursor
	// open until the next read
	cur = open(bson.D{{Key: "startAfter", Value: dropToken}})
	if op, open := batch(cur); op != "invalidate" || !open {
		t.Fatalf("startAfter the drop: %s open %v, want invalidate, open", op, open)
	}
	if op, open := batch(getMore(cur.Lookup("id").Int64())); op != "" || open {
		t.Fatalf("getMore after the invalidate: %s open %v, want nothing, closed", op, open)
	}
}

// TestChangeStreamRawUpdateDescription: with showRawUpdateDescription an
// update event carries the oplog entry's update ({$v: 2, diff}) as
// rawUpdateDescription instead of updateDescription; other events are
// unchanged (jstests/change_streams/show_raw_update_description.js).
func TestChangeStreamRawUpdateDescription(t *testing.T) {
	client := startStreams(t)
	ctx := context.Background()
	coll := client.Database("rawupd").Collection("c")
	if _, err := coll.InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: 3}, {Key: "a", Value: 5}, {Key: "b", Value: 1}},
		bson.D{{Key: "_id", Value: 8}, {Key: "a", Value: 2}, {Key: "b", Value: bson.D{{Key: "c", Value: 1}}}},
	}); err != nil {
		t.Fatal(err)
	}
	cs, err := coll.Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetCustomPipeline(bson.M{"showRawUpdateDescription": true}))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(ctx)
	update := func(id int, u string) func() error {
		return func() error {
			_, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, extJSON(t, []byte(u)))
			return err
		}
	}
	steps := []struct {
		run  func() error
		kind string
		raw  string // rawUpdateDescription, for updates
	}{
		{func() error {
			_, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}})
			return err
		}, "insert", ""},
		{func() error {
			_, err := coll.ReplaceOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "a", Value: 3}})
			return err
		}, "replace", ""},
		{update(3, `{"$inc": {"b": 2}}`), "update", `{"$v": {"$numberInt": "2"}, "diff": {"u": {"b": {"$numberInt": "3"}}}}`},
		{update(3, `{"$unset": {"b": ""}}`), "update", `{"$v": {"$numberInt": "2"}, "diff": {"d": {"b": false}}}`},
		{update(8, `{"$set": {"b.d": 2}}`), "update", `{"$v": {"$numberInt": "2"}, "diff": {"sb": {"i": {"d": {"$numberInt": "2"}}}}}`},
		{func() error {
			_, err := coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: 1}})
			return err
		}, "delete", ""},
	}
	for i, s := range steps {
		if err := s.run(); err != nil {
			t.Fatal(err)
		}
		ev := nextEvent(t, cs)
		if got := ev.Lookup("operationType").StringValue(); got != s.kind {
			t.Fatalf("step %d: %s event, want %s: %s", i, got, s.kind, ev)
		}
		if _, err := ev.LookupErr("updateDescription"); err == nil {
			t.Errorf("step %d: updateDescription present: %s", i, ev)
		}
		raw, err := ev.LookupErr("rawUpdateDescription")
		if s.raw == "" {
			if err == nil {
				t.Errorf("step %d: rawUpdateDescription on a %s event: %s", i, s.kind, ev)
			}
			continue
		}
		if want := extJSON(t, []byte(s.raw)); err != nil || !bytes.Equal(raw.Document(), want) {
			t.Errorf("step %d: rawUpdateDescription %v, want %s", i, raw, want)
		}
	}
}

// TestChangeStreamPipelineUpdateEvents: an update pipeline's change is
// logged as its delta only when that is smaller than the new document,
// else as a replacement (a replace event), as MongoDB's
// pipeline_executor.cpp; a replacement is told from a delta by its _id,
// so a document's own $v field does not make it an update
// (jstests/change_streams/events_containing_version_literals.js).
func TestChangeStreamPipelineUpdateEvents(t *testing.T) {
	client := startStreams(t)
	ctx := context.Background()
	coll := client.Database("pipeupd").Collection("c")
	long := strings.Repeat("*", 100)
	if _, err := coll.InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: 0}, {Key: "$v", Value: 1}},
		bson.D{{Key: "_id", Value: 1}, {Key: "$v", Value: "x"}},
		bson.D{{Key: "_id", Value: 2}, {Key: "s", Value: long}, {Key: "a", Value: 1}},
	}); err != nil {
		t.Fatal(err)
	}
	cs, err := coll.Watch(ctx, mongo.Pipeline{})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(ctx)
	for _, tc := range []struct {
		id   int
		pipe string
		kind string
		want string // fullDocument of a replace, updatedFields of an update
	}{
		{0, `[{"$replaceWith": {"$literal": {"_id": 0, "$v": "test"}}}]`, "replace", `{"_id": 0, "$v": "test"}`},
		{1, `[{"$replaceWith": {"$literal": {"_id": 1, "$v": 2}}}]`, "replace", `{"_id": 1, "$v": 2}`},
		{2, `[{"$set": {"a": 2}}]`, "update", `{"a": 2}`},
	} {
		var pipe bson.A
		if err := bson.UnmarshalExtJSON([]byte(tc.pipe), false, &pipe); err != nil {
			t.Fatal(err)
		}
		if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: tc.id}}, pipe); err != nil {
			t.Fatal(err)
		}
		ev := nextEvent(t, cs)
		for ev.Lookup("operationType").StringValue() == "insert" {
			ev = nextEvent(t, cs)
		}
		if got := ev.Lookup("operationType").StringValue(); got != tc.kind {
			t.Fatalf("%s: %s event, want %s: %s", tc.pipe, got, tc.kind, ev)
		}
		got := ev.Lookup("fullDocument")
		if tc.kind == "update" {
			got = ev.Lookup("updateDescription", "updatedFields")
		}
		if want := extJSON(t, []byte(tc.want)); !bytes.Equal(got.Document(), want) {
			t.Errorf("%s: %s, want %s", tc.pipe, got, want)
		}
	}
}

// TestChangeStreamCreateIndexesInTransaction: createIndexes in a
// transaction, which creates the collection, logs the create and then one
// createIndexes entry per index in the transaction's applyOps: a stream
// with showExpandedEvents sees both events, with the transaction's lsid
// and txnNumber (jstests/change_streams/ddl_create_index_txn.js).
func TestChangeStreamCreateIndexesInTransaction(t *testing.T) {
	client := startStreams(t)
	ctx := context.Background()
	db := client.Database("cidxtxn")
	cs, err := db.Collection("c").Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetShowExpandedEvents(true))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(ctx)
	sess, err := client.StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(ctx)
	_, err = sess.WithTransaction(ctx, func(sc context.Context) (any, error) {
		return db.Collection("c").Indexes().CreateMany(sc, []mongo.IndexModel{
			{Keys: bson.D{{Key: "a", Value: 1}}}, {Keys: bson.D{{Key: "b", Value: 1}}},
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, cs); ev.Lookup("operationType").StringValue() != "create" {
		t.Fatalf("first event: %s", ev)
	}
	for _, name := range []string{"a_1", "b_1"} {
		ev := nextEvent(t, cs)
		if ev.Lookup("operationType").StringValue() != "createIndexes" {
			t.Fatalf("want createIndexes of %s: %s", name, ev)
		}
		idx := ev.Lookup("operationDescription", "indexes", "0").Document()
		if got := idx.Lookup("name").StringValue(); got != name {
			t.Errorf("index %s, want %s: %s", got, name, ev)
		}
		if _, err := ev.LookupErr("txnNumber"); err != nil {
			t.Errorf("no txnNumber: %s", ev)
		}
		if _, err := ev.LookupErr("lsid"); err != nil {
			t.Errorf("no lsid: %s", ev)
		}
	}
}

// TestChangeStreamApplyOpsDiff: applyOps applying an update entry's $v: 2
// diff logs that diff as given, as MongoDB's DeltaExecutor: an update
// event (with the pre- and post-images), however small the document
// (jstests/change_streams/lookup_pit_pre_and_post_image_in_transaction.js).
func TestChangeStreamApplyOpsDiff(t *testing.T) {
	client := startStreams(t)
	ctx := context.Background()
	db := client.Database("aodiff")
	if err := db.CreateCollection(ctx, "c", options.CreateCollection().SetChangeStreamPreAndPostImages(bson.D{{Key: "enabled", Value: true}})); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: 5}, {Key: "a", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	cs, err := db.Collection("c").Watch(ctx, mongo.Pipeline{}, options.ChangeStream().
		SetFullDocument(options.WhenAvailable).SetFullDocumentBeforeChange(options.WhenAvailable).
		SetCustomPipeline(bson.M{"showRawUpdateDescription": true}))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(ctx)
	diff := bson.D{{Key: "$v", Value: 2}, {Key: "diff", Value: bson.D{{Key: "u", Value: bson.D{{Key: "a", Value: 2}}}}}}
	if err := db.RunCommand(ctx, bson.D{{Key: "applyOps", Value: bson.A{bson.D{
		{Key: "op", Value: "u"}, {Key: "ns", Value: "aodiff.c"}, {Key: "o2", Value: bson.D{{Key: "_id", Value: 5}}}, {Key: "o", Value: diff},
	}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	ev := nextEvent(t, cs)
	if got := ev.Lookup("operationType").StringValue(); got != "update" {
		t.Fatalf("%s event, want update: %s", got, ev)
	}
	want, _ := bson.Marshal(diff)
	for _, c := range []struct {
		field string
		want  string
	}{
		{"rawUpdateDescription", bson.Raw(want).String()},
		{"fullDocumentBeforeChange", `{"_id": {"$numberInt":"5"},"a": {"$numberInt":"1"}}`},
		{"fullDocument", `{"_id": {"$numberInt":"5"},"a": {"$numberInt":"2"}}`},
	} {
		if got := ev.Lookup(c.field).String(); got != c.want {
			t.Errorf("%s: %s, want %s", c.field, got, c.want)
		}
	}
}

// TestChangeStreamModifyStateBeforeChange: a modify event carries the
// collMod as logged (an index by its name, a TTL as a long) and, as
// stateBeforeChange, the collection's options before it (uuid first) and
// what the index was in the options it changed, as MongoDB's
// OpObserverImpl::onCollMod logs them in o2
// (jstests/change_streams/ddl_coll_mod_event.js). An index's collMod is a
// modify event, also when it changes nothing.
func TestChangeStreamModifyStateBeforeChange(t *testing.T) {
	client := startStreams(t)
	ctx := t.Context()
	db := client.Database("collmodev")
	if err := db.CreateCollection(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	coll := db.Collection("c")
	if _, err := coll.Indexes().CreateMany(ctx, []mongo.IndexModel{
		{Keys: bson.D{{Key: "a", Value: 1}}},
		{Keys: bson.D{{Key: "t", Value: 1}}, Options: options.Index().SetExpireAfterSeconds(100)},
	}); err != nil {
		t.Fatal(err)
	}
	cs, err := coll.Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetShowExpandedEvents(true))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(ctx)
	validator := bson.D{{Key: "a", Value: bson.D{{Key: "$exists", Value: true}}}}
	for _, cmd := range []bson.D{
		{{Key: "index", Value: bson.D{{Key: "keyPattern", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "hidden", Value: true}}}},
		{{Key: "index", Value: bson.D{{Key: "name", Value: "a_1"}, {Key: "hidden", Value: true}}}},
		{{Key: "index", Value: bson.D{{Key: "name", Value: "t_1"}, {Key: "expireAfterSeconds", Value: 200}}}},
		{{Key: "validator", Value: validator}},
		{{Key: "validationLevel", Value: "off"}},
	} {
		if err := db.RunCommand(ctx, append(bson.D{{Key: "collMod", Value: "c"}}, cmd...)).Err(); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
	}
	var uuid bson.Binary
	withUUID := func(rest ...bson.E) bson.D {
		return append(bson.D{{Key: "uuid", Value: uuid}}, rest...)
	}
	wants := []func() (desc, state bson.D){
		func() (bson.D, bson.D) {
			return bson.D{{Key: "index", Value: bson.D{{Key: "name", Value: "a_1"}, {Key: "hidden", Value: true}}}},
				bson.D{{Key: "collectionOptions", Value: withUUID()}, {Key: "indexOptions", Value: bson.D{{Key: "hidden", Value: false}}}}
		},
		func() (bson.D, bson.D) {
			return bson.D{{Key: "index", Value: bson.D{{Key: "name", Value: "a_1"}, {Key: "hidden", Value: true}}}},
				bson.D{{Key: "collectionOptions", Value: withUUID()}, {Key: "indexOptions", Value: bson.D{{Key: "hidden", Value: true}}}}
		},
		func() (bson.D, bson.D) {
			return bson.D{{Key: "index", Value: bson.D{{Key: "name", Value: "t_1"}, {Key: "expireAfterSeconds", Value: int64(200)}}}},
				bson.D{{Key: "collectionOptions", Value: withUUID()}, {Key: "indexOptions", Value: bson.D{{Key: "expireAfterSeconds", Value: int64(100)}}}}
		},
		func() (bson.D, bson.D) {
			return bson.D{{Key: "validator", Value: validator}}, bson.D{{Key: "collectionOptions", Value: withUUID()}}
		},
		func() (bson.D, bson.D) {
			return bson.D{{Key: "validationLevel", Value: "off"}},
				bson.D{{Key: "collectionOptions", Value: withUUID(bson.E{Key: "validator", Value: validator}, bson.E{Key: "validationLevel", Value: "strict"}, bson.E{Key: "validationAction", Value: "error"})}}
		},
	}
	for i, want := range wants {
		ev := nextEvent(t, cs)
		if got := ev.Lookup("operationType").StringValue(); got != "modify" {
			t.Fatalf("event %d: %s", i, ev)
		}
		sub, data := ev.Lookup("collectionUUID").Binary()
		uuid = bson.Binary{Subtype: sub, Data: data}
		desc, state := want()
		if got, want := ev.Lookup("operationDescription").String(), mustRaw(t, desc).String(); got != want {
			t.Errorf("event %d operationDescription\n got %s\nwant %s", i, got, want)
		}
		if got, want := ev.Lookup("stateBeforeChange").String(), mustRaw(t, state).String(); got != want {
			t.Errorf("event %d stateBeforeChange\n got %s\nwant %s", i, got, want)
		}
	}
}

// TestChangeStreamCreateEventIDIndex: a create event's operationDescription
// holds the _id index (named _id_ whatever create's idIndex named it),
// but not one of version 1, which MongoDB's makeCreateCollCmdObj leaves
// out of the create entry (jstests/change_streams/ddl_create_event.js).
func TestChangeStreamCreateEventIDIndex(t *testing.T) {
	client := startStreams(t)
	ctx := t.Context()
	db := client.Database("createidx")
	cs, err := db.Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetShowExpandedEvents(true))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(ctx)
	for _, v := range []int32{2, 1} {
		idIndex := bson.D{{Key: "v", Value: v}, {Key: "key", Value: bson.D{{Key: "_id", Value: int32(1)}}}, {Key: "name", Value: "ignored"}}
		if err := db.RunCommand(ctx, bson.D{{Key: "create", Value: "v" + strconv.Itoa(int(v))}, {Key: "idIndex", Value: idIndex}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{`{"idIndex": {"v": {"$numberInt":"2"},"key": {"_id": {"$numberInt":"1"}},"name": "_id_"}}`, `{}`} {
		ev := nextEvent(t, cs)
		if got := ev.Lookup("operationDescription").String(); ev.Lookup("operationType").StringValue() != "create" || got != want {
			t.Errorf("create event %s, want operationDescription %s", ev, want)
		}
	}
}

// TestChangeStreamIndexBuildEvents: createIndexes naming two indexes makes
// one createIndexes event an index on an empty collection, and one event
// naming both, in the request's order, on a collection holding a document,
// whose build MongoDB logs as startIndexBuild and commitIndexBuild under
// one indexBuildUUID (IndexBuildsCoordinator::_filterSpecsAndRegisterBuild);
// dropIndexes of a list or "*" makes one dropIndexes event an index, with
// its spec (jstests/change_streams/ddl_create_drop_index_events.js), on a
// collection stream and on a database stream.
func TestChangeStreamIndexBuildEvents(t *testing.T) {
	client := startStreams(t)
	ctx := t.Context()
	db := client.Database("ddlindexev")
	oplog := client.Database("local").Collection("oplog.rs")
	spec1 := bson.D{{Key: "v", Value: int32(2)}, {Key: "key", Value: bson.D{{Key: "b", Value: int32(1)}, {Key: "c", Value: int32(-1)}}}, {Key: "name", Value: "b_1_c_-1"}, {Key: "sparse", Value: true}}
	spec2 := bson.D{{Key: "v", Value: int32(2)}, {Key: "key", Value: bson.D{{Key: "d", Value: "hashed"}}}, {Key: "name", Value: "d_hashed"}, {Key: "sparse", Value: true}}
	descOf := func(specs ...bson.D) string {
		return mustRaw(t, bson.D{{Key: "indexes", Value: specs}}).String()
	}
	// next returns the next n events' operationDescriptions, sorted
	// (MongoDB's test takes them unordered), after checking their type.
	next := func(cs *mongo.ChangeStream, kind string, n int) []string {
		t.Helper()
		var got []string
		for range n {
			ev := nextEvent(t, cs)
			if op := ev.Lookup("operationType").StringValue(); op != kind {
				t.Fatalf("event %s, want %s: %s", op, kind, ev)
			}
			if ns := ev.Lookup("ns", "coll").StringValue(); ns != "c" {
				t.Fatalf("event on %s: %s", ns, ev)
			}
			got = append(got, ev.Lookup("operationDescription").String())
		}
		slices.Sort(got)
		return got
	}
	one := []string{descOf(spec1), descOf(spec2)}
	slices.Sort(one)
	for _, nonEmpty := range []bool{false, true} {
		for _, wholeDB := range []bool{false, true} {
			name := fmt.Sprintf("nonEmpty=%v/wholeDB=%v", nonEmpty, wholeDB)
			if err := db.Drop(ctx); err != nil {
				t.Fatal(err)
			}
			if err := db.CreateCollection(ctx, "c"); err != nil {
				t.Fatal(err)
			}
			coll := db.Collection("c")
			if nonEmpty {
				if _, err := coll.InsertOne(ctx, bson.D{{Key: "a", Value: 1}}); err != nil {
					t.Fatal(err)
				}
			}
			var last bson.Raw
			if err := oplog.FindOne(ctx, bson.D{}, options.FindOne().SetSort(bson.D{{Key: "$natural", Value: -1}})).Decode(&last); err != nil {
				t.Fatal(err)
			}
			expanded := options.ChangeStream().SetShowExpandedEvents(true)
			var cs *mongo.ChangeStream
			var err error
			if wholeDB {
				cs, err = db.Watch(ctx, mongo.Pipeline{}, expanded)
			} else {
				cs, err = coll.Watch(ctx, mongo.Pipeline{}, expanded)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close(ctx)
			if _, err := coll.Indexes().CreateMany(ctx, []mongo.IndexModel{
				{Keys: bson.D{{Key: "b", Value: 1}, {Key: "c", Value: -1}}, Options: options.Index().SetSparse(true)},
				{Keys: bson.D{{Key: "d", Value: "hashed"}}, Options: options.Index().SetSparse(true)},
			}); err != nil {
				t.Fatal(err)
			}
			if nonEmpty {
				if got := next(cs, "createIndexes", 1); got[0] != descOf(spec1, spec2) {
					t.Errorf("%s: createIndexes %s, want one naming both", name, got)
				}
			} else if got := next(cs, "createIndexes", 2); !slices.Equal(got, one) {
				t.Errorf("%s: createIndexes %s, want %s", name, got, one)
			}
			if err := db.RunCommand(ctx, bson.D{{Key: "dropIndexes", Value: "c"}, {Key: "index", Value: bson.A{"b_1_c_-1", "d_hashed"}}}).Err(); err != nil {
				t.Fatal(err)
			}
			if got := next(cs, "dropIndexes", 2); !slices.Equal(got, one) {
				t.Errorf("%s: dropIndexes of a list %s, want %s", name, got, one)
			}
			// The oplog holds the build as MongoDB's does.
			var kinds []string
			var buildUUIDs []string
			for _, e := range oplogThroughKind(t, oplog, last.Lookup("ts"), "dropIndexes", 2) {
				if e.Lookup("op").StringValue() != "c" {
					continue
				}
				o := e.Lookup("o").Document()
				kind := o.Index(0).Key()
				kinds = append(kinds, kind)
				if kind == "startIndexBuild" || kind == "commitIndexBuild" {
					if got, want := o.Lookup("indexes").String(), mustRaw(t, bson.D{{Key: "indexes", Value: bson.A{spec1, spec2}}}).Lookup("indexes").String(); got != want {
						t.Errorf("%s: %s indexes %s, want %s", name, kind, got, want)
					}
					sub, data, ok := o.Lookup("indexBuildUUID").BinaryOK()
					if !ok || sub != bson.TypeBinaryUUID || len(data) != 16 {
						t.Errorf("%s: %s without a UUID indexBuildUUID: %s", name, kind, o)
					}
					buildUUIDs = append(buildUUIDs, string(data))
				}
			}
			want := []string{"createIndexes", "createIndexes", "dropIndexes", "dropIndexes"}
			if nonEmpty {
				want = []string{"startIndexBuild", "commitIndexBuild", "dropIndexes", "dropIndexes"}
				if len(buildUUIDs) == 2 && buildUUIDs[0] != buildUUIDs[1] {
					t.Errorf("%s: startIndexBuild and commitIndexBuild name different builds", name)
				}
			}
			if !slices.Equal(kinds, want) {
				t.Errorf("%s: oplog entries %v, want %v", name, kinds, want)
			}
			// dropIndexes "*": one event an index but _id's.
			if _, err := coll.Indexes().CreateMany(ctx, []mongo.IndexModel{{Keys: bson.D{{Key: "x", Value: 1}}}, {Keys: bson.D{{Key: "y", Value: 1}}}}); err != nil {
				t.Fatal(err)
			}
			next(cs, "createIndexes", map[bool]int{false: 2, true: 1}[nonEmpty])
			if err := db.RunCommand(ctx, bson.D{{Key: "dropIndexes", Value: "c"}, {Key: "index", Value: "*"}}).Err(); err != nil {
				t.Fatal(err)
			}
			x := bson.D{{Key: "v", Value: int32(2)}, {Key: "key", Value: bson.D{{Key: "x", Value: int32(1)}}}, {Key: "name", Value: "x_1"}}
			y := bson.D{{Key: "v", Value: int32(2)}, {Key: "key", Value: bson.D{{Key: "y", Value: int32(1)}}}, {Key: "name", Value: "y_1"}}
			wantStar := []string{descOf(x), descOf(y)}
			slices.Sort(wantStar)
			if got := next(cs, "dropIndexes", 2); !slices.Equal(got, wantStar) {
				t.Errorf("%s: dropIndexes \"*\" %s, want %s", name, got, wantStar)
			}
		}
	}
}

// TestIndexBuildAbortLogged: a two-phase build that fails (a unique index
// over duplicates) ends in the oplog with abortIndexBuild under its
// startIndexBuild's indexBuildUUID, naming its indexes, with the error as
// its cause {ok: false, code, codeName, errmsg, keyPattern, keyValue}
// (OpObserverImpl::onAbortIndexBuild, Status::serialize); a change
// stream shows no event for it.
func TestIndexBuildAbortLogged(t *testing.T) {
	client := startStreams(t)
	ctx := t.Context()
	coll := client.Database("abortbuild").Collection("c")
	oplog := client.Database("local").Collection("oplog.rs")
	if _, err := coll.InsertMany(ctx, []any{bson.D{{Key: "u", Value: 1}}, bson.D{{Key: "u", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	var last bson.Raw
	if err := oplog.FindOne(ctx, bson.D{}, options.FindOne().SetSort(bson.D{{Key: "$natural", Value: -1}})).Decode(&last); err != nil {
		t.Fatal(err)
	}
	cs, err := coll.Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetShowExpandedEvents(true))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(ctx)
	_, err = coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "u", Value: 1}}, Options: options.Index().SetUnique(true)})
	if code := serverCode(err); code != 11000 {
		t.Fatalf("unique index over duplicates: %v, want DuplicateKey", err)
	}
	spec := mustRaw(t, bson.D{{Key: "v", Value: int32(2)}, {Key: "key", Value: bson.D{{Key: "u", Value: int32(1)}}}, {Key: "name", Value: "u_1"}, {Key: "unique", Value: true}})
	var start, abort bson.Raw
	for _, e := range oplogThroughKind(t, oplog, last.Lookup("ts"), "abortIndexBuild", 1) {
		switch o := e.Lookup("o").Document(); o.Index(0).Key() {
		case "startIndexBuild":
			start = o
		case "abortIndexBuild":
			abort = o
		}
	}
	if start == nil {
		t.Fatal("no startIndexBuild before the abort")
	}
	if got, want := abort.Lookup("abortIndexBuild").StringValue(), "c"; got != want {
		t.Errorf("abortIndexBuild names %q, want %q", got, want)
	}
	if !abort.Lookup("indexBuildUUID").Equal(start.Lookup("indexBuildUUID")) {
		t.Errorf("abort %s and start %s name different builds", abort, start)
	}
	if got, want := abort.Lookup("indexes").String(), mustRaw(t, bson.D{{Key: "indexes", Value: bson.A{spec}}}).Lookup("indexes").String(); got != want {
		t.Errorf("abortIndexBuild indexes %s, want %s", got, want)
	}
	cause := abort.Lookup("cause").Document()
	var keys []string
	elems, _ := cause.Elements()
	for _, e := range elems {
		keys = append(keys, e.Key())
	}
	if ok, _ := cause.Lookup("ok").BooleanOK(); ok || cause.Lookup("ok").Type != bson.TypeBoolean ||
		cause.Lookup("code").Int32() != 11000 || cause.Lookup("codeName").StringValue() != "DuplicateKey" ||
		!slices.Equal(keys[:4], []string{"ok", "code", "codeName", "errmsg"}) || !slices.Contains(keys, "keyValue") {
		t.Errorf("cause %s, want {ok: false, code: 11000, codeName: DuplicateKey, errmsg, ..., keyValue}", cause)
	}
	// No event: the next one a stream shows is the insert after.
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "after", Value: true}}); err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, cs); ev.Lookup("operationType").StringValue() != "insert" {
		t.Fatalf("event %s, want the insert after the failed build", ev)
	}
}

// oplogThroughKind returns the oplog's entries after ts, an applyOps
// entry's operations in its place, once they hold n command entries of
// kind.
func oplogThroughKind(t *testing.T, oplog *mongo.Collection, ts bson.RawValue, kind string, n int) []bson.Raw {
	t.Helper()
	filter := bson.D{{Key: "ts", Value: bson.D{{Key: "$gt", Value: ts}}}}
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		// On TiKV the entries of one catalog change are the operations of
		// one applyOps entry (one timestamp a transaction).
		var entries []bson.Raw
		for _, e := range findAll(t, oplog, filter) {
			ops, err := e.LookupErr("o", "applyOps")
			if err != nil {
				entries = append(entries, e)
				continue
			}
			vals, _ := ops.Array().Values()
			for _, v := range vals {
				entries = append(entries, v.Document())
			}
		}
		seen := 0
		for _, e := range entries {
			if _, err := e.LookupErr("o", kind); err == nil {
				seen++
			}
		}
		if seen >= n {
			return entries
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("the oplog holds %d %s entries after %s, want %d", seen, kind, ts, n)
		}
	}
}

// TestChangeStreamModifyCombined: a collMod changing an index and the
// collection's validation is one oplog entry, so one modify event, whose
// operationDescription holds the index (by name, with what changed) then
// the validation fields, and whose stateBeforeChange holds the options and
// the index's values before the whole command (coll_mod.cpp
// parseCollModRequest logs the fields in CollModRequest's order, and
// _collModInternal calls onCollMod once; change_stream_event_transform.cpp's
// collMod branch). A collMod whose index is not found changes nothing.
func TestChangeStreamModifyCombined(t *testing.T) {
	client := startStreams(t)
	ctx := t.Context()
	db := client.Database("collmodcombined")
	if err := db.CreateCollection(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	coll := db.Collection("c")
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "t", Value: 1}}, Options: options.Index().SetExpireAfterSeconds(10)}); err != nil {
		t.Fatal(err)
	}
	cs, err := coll.Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetShowExpandedEvents(true))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(ctx)
	validator := bson.D{{Key: "a", Value: bson.D{{Key: "$gt", Value: 0}}}}
	// An unknown index fails before anything changes.
	err = db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "c"}, {Key: "index", Value: bson.D{{Key: "name", Value: "nope"}, {Key: "hidden", Value: true}}}, {Key: "validator", Value: validator}}).Err()
	if code := serverCode(err); code != 27 {
		t.Fatalf("collMod of an unknown index: %v, want IndexNotFound", err)
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "c"},
		{Key: "validationLevel", Value: "moderate"},
		{Key: "index", Value: bson.D{{Key: "keyPattern", Value: bson.D{{Key: "t", Value: 1}}}, {Key: "expireAfterSeconds", Value: 20}, {Key: "hidden", Value: true}}},
		{Key: "validator", Value: validator},
	}).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "a", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	ev := nextEvent(t, cs)
	if got := ev.Lookup("operationType").StringValue(); got != "modify" {
		t.Fatalf("first event %s: %s", got, ev)
	}
	sub, data := ev.Lookup("collectionUUID").Binary()
	uuid := bson.Binary{Subtype: sub, Data: data}
	desc := bson.D{
		{Key: "index", Value: bson.D{{Key: "name", Value: "t_1"}, {Key: "expireAfterSeconds", Value: int64(20)}, {Key: "hidden", Value: true}}},
		{Key: "validator", Value: validator},
		{Key: "validationLevel", Value: "moderate"},
	}
	state := bson.D{{Key: "collectionOptions", Value: bson.D{{Key: "uuid", Value: uuid}}}, {Key: "indexOptions", Value: bson.D{{Key: "expireAfterSeconds", Value: int64(10)}, {Key: "hidden", Value: false}}}}
	if got, want := ev.Lookup("operationDescription").String(), mustRaw(t, desc).String(); got != want {
		t.Errorf("operationDescription\n got %s\nwant %s", got, want)
	}
	if got, want := ev.Lookup("stateBeforeChange").String(), mustRaw(t, state).String(); got != want {
		t.Errorf("stateBeforeChange\n got %s\nwant %s", got, want)
	}
	if ev := nextEvent(t, cs); ev.Lookup("operationType").StringValue() != "insert" {
		t.Fatalf("second event, want the insert: %s", ev)
	}
	// Both changes hold.
	specs, err := coll.Indexes().ListSpecifications(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		if s.Name == "t_1" && (s.ExpireAfterSeconds == nil || *s.ExpireAfterSeconds != 20) {
			t.Errorf("t_1 after collMod: %+v", s)
		}
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "a", Value: -1}}); serverCode(err) != 121 {
		t.Errorf("insert the validator refuses: %v", err)
	}
}
