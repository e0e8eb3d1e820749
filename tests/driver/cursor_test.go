package driver_test

import (
	"errors"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/internal/instance"
)

// numbered returns a collection holding n documents {_id: i, n: i} for i in
// [0, n).
func numbered(t *testing.T, client *mongo.Client, name string, n int) *mongo.Collection {
	t.Helper()
	coll := client.Database(testDB).Collection(name)
	docs := make([]any, n)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: int32(i)}, {Key: "n", Value: int32(i)}}
	}
	if _, err := coll.InsertMany(t.Context(), docs); err != nil {
		t.Fatal(err)
	}
	return coll
}

// drain reads every document of cur and returns their n fields.
func drain(t *testing.T, cur *mongo.Cursor) []int32 {
	t.Helper()
	var out []int32
	for cur.Next(t.Context()) {
		out = append(out, cur.Current.Lookup("n").Int32())
	}
	if err := cur.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// requireSequence fails unless got is 0, 1, ..., want-1.
func requireSequence(t *testing.T, got []int32, want int) {
	t.Helper()
	if len(got) != want {
		t.Fatalf("got %d documents, want %d", len(got), want)
	}
	for i, n := range got {
		if n != int32(i) {
			t.Fatalf("document %d has n = %d, want %d", i, n, i)
		}
	}
}

// TestCursorBatching proves a 1000-document result read in batches of 10
// arrives whole and in order through 99 getMores, with a live cursor after
// the first batch and an exhausted one at the end.
func TestCursorBatching(t *testing.T) {
	counter, mon := newCommandCounter()
	in := startInstance(t, defaultConfig())
	client := connect(t, in, mon)
	coll := numbered(t, client, "batching", 1000)
	counter.reset()

	cur, err := coll.Find(t.Context(), bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetBatchSize(10))
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close(t.Context())
	if cur.ID() == 0 {
		t.Fatal("cursor id is 0 after the first batch of 10 out of 1000")
	}
	if n := cur.RemainingBatchLength(); n != 10 {
		t.Fatalf("first batch holds %d documents, want 10", n)
	}
	requireSequence(t, drain(t, cur), 1000)
	if cur.ID() != 0 {
		t.Errorf("cursor id is %d after the last batch, want 0", cur.ID())
	}
	// A streaming plan cannot know it has reached the end when a batch fills
	// exactly, so MongoDB may need one more, empty, getMore.
	if n := counter.count("getMore"); n != 99 && n != 100 {
		t.Errorf("%d getMores, want 99 (or 100 with a final empty batch)", n)
	}
	if n := counter.count("killCursors"); n != 0 {
		t.Errorf("%d killCursors for an exhausted cursor, want 0", n)
	}
}

// TestCursorLimitAndBatchSize proves limit and batchSize combine as in
// MongoDB: the server returns exactly limit documents and closes the cursor
// once the limit is reached, so no getMore or killCursors is wasted.
func TestCursorLimitAndBatchSize(t *testing.T) {
	tests := []struct {
		name         string
		limit, batch int32 // 0: not set
		wantDocs     int
		wantGetMores int
		// mayProbeEOF allows one more, empty, getMore: a streaming plan that
		// ends exactly at a full batch learns it is done only then.
		mayProbeEOF bool
	}{
		{"limit above batch", 25, 10, 25, 2, false},
		{"limit equals batch", 10, 10, 10, 0, false},
		{"limit below batch", 5, 10, 5, 0, false},
		{"limit multiple of batch", 30, 10, 30, 2, false},
		{"limit past end", 500, 100, 200, 1, true},
		{"no limit", 0, 50, 200, 3, true},
		{"negative limit is one batch", -7, 0, 7, 0, false},
	}
	counter, mon := newCommandCounter()
	in := startInstance(t, defaultConfig())
	client := connect(t, in, mon)
	coll := numbered(t, client, "limits", 200)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			counter.reset()
			opts := options.Find().SetSort(bson.D{{Key: "_id", Value: 1}})
			if tt.batch != 0 {
				opts.SetBatchSize(tt.batch)
			}
			if tt.limit != 0 {
				opts.SetLimit(int64(tt.limit))
			}
			cur, err := coll.Find(t.Context(), bson.D{}, opts)
			if err != nil {
				t.Fatal(err)
			}
			requireSequence(t, drain(t, cur), tt.wantDocs)
			if err := cur.Close(t.Context()); err != nil {
				t.Fatal(err)
			}
			if n := counter.count("getMore"); n != tt.wantGetMores && (!tt.mayProbeEOF || n != tt.wantGetMores+1) {
				t.Errorf("%d getMores, want %d", n, tt.wantGetMores)
			}
			if n := counter.count("killCursors"); n != 0 {
				t.Errorf("%d killCursors, want 0: the server should close the cursor at the limit", n)
			}
		})
	}
}

// TestCursorClosedAtLimit proves a find whose first batch reaches its limit
// replies with cursor id 0, as does singleBatch, both returning only the
// requested documents.
func TestCursorClosedAtLimit(t *testing.T) {
	tests := []struct {
		name     string
		cmd      bson.D
		wantDocs int
	}{
		{"limit equals batchSize", bson.D{{Key: "limit", Value: 10}, {Key: "batchSize", Value: 10}}, 10},
		{"limit below default batch", bson.D{{Key: "limit", Value: 3}}, 3},
		{"singleBatch", bson.D{{Key: "batchSize", Value: 5}, {Key: "singleBatch", Value: true}}, 5},
		{"singleBatch with limit", bson.D{{Key: "limit", Value: 4}, {Key: "singleBatch", Value: true}}, 4},
	}
	client, _ := startServer(t)
	numbered(t, client, "closed", 50)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := append(bson.D{{Key: "find", Value: "closed"}, {Key: "sort", Value: bson.D{{Key: "_id", Value: 1}}}}, tt.cmd...)
			reply, err := client.Database(testDB).RunCommand(t.Context(), cmd).Raw()
			if err != nil {
				t.Fatal(err)
			}
			if id := reply.Lookup("cursor", "id"); id.Type != bson.TypeInt64 || id.Int64() != 0 {
				t.Errorf("cursor id = %v, want int64 0", id)
			}
			batch, err := reply.Lookup("cursor", "firstBatch").Array().Values()
			if err != nil {
				t.Fatal(err)
			}
			if len(batch) != tt.wantDocs {
				t.Errorf("first batch holds %d documents, want %d", len(batch), tt.wantDocs)
			}
		})
	}
}

// TestCursorCloseKills proves closing an open cursor sends killCursors and
// the server then no longer knows it: a getMore gets CursorNotFound (43).
func TestCursorCloseKills(t *testing.T) {
	counter, mon := newCommandCounter()
	in := startInstance(t, defaultConfig())
	client := connect(t, in, mon)
	coll := numbered(t, client, "kill", 30)
	cur, err := coll.Find(t.Context(), bson.D{}, options.Find().SetBatchSize(5))
	if err != nil {
		t.Fatal(err)
	}
	id := cur.ID()
	if id == 0 {
		t.Fatal("cursor id is 0 with 25 documents left")
	}
	if err := cur.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := counter.count("killCursors"); n != 1 {
		t.Fatalf("%d killCursors, want 1", n)
	}
	err = client.Database(testDB).RunCommand(t.Context(), bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "kill"}}).Err()
	requireCode(t, err, 43, "CursorNotFound")
}

// TestGetMoreErrors proves getMore refuses an unknown cursor with
// CursorNotFound (43) and a cursor of another collection with Unauthorized
// (13), as MongoDB does.
func TestGetMoreErrors(t *testing.T) {
	client, _ := startServer(t)
	numbered(t, client, "owner", 20)
	db := client.Database(testDB)

	ctx := sessionCtx(t, client)
	err := db.RunCommand(ctx, bson.D{{Key: "getMore", Value: int64(123456789)}, {Key: "collection", Value: "owner"}}).Err()
	requireCode(t, err, 43, "CursorNotFound")

	reply, err := db.RunCommand(ctx, bson.D{{Key: "find", Value: "owner"}, {Key: "batchSize", Value: 2}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	id := reply.Lookup("cursor", "id").Int64()
	if id == 0 {
		t.Fatal("cursor id is 0 with documents left")
	}
	err = db.RunCommand(ctx, bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "other"}}).Err()
	requireCode(t, err, 13, "Unauthorized")
}

// TestGetMoreReadsTheLatestState: a getMore does not return what was
// deleted since the find, and returns an updated document as it is now
// (still matching) or not at all (no longer matching), as MongoDB's cursors
// do after their yield between batches; a getMore in a snapshot session
// keeps reading its snapshot.
func TestGetMoreReadsTheLatestState(t *testing.T) {
	client := connect(t, startInstance(t, instance.Config{Addr: "127.0.0.1:0", DBPath: t.TempDir(), ReplSetName: "rs"}))
	ctx := t.Context()
	coll := numbered(t, client, "latest", 6)
	cur, err := coll.Find(ctx, bson.D{{Key: "n", Value: bson.D{{Key: "$lt", Value: 100}}}}, options.Find().SetBatchSize(2))
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close(ctx)
	if n := cur.RemainingBatchLength(); n != 2 {
		t.Fatalf("first batch of %d, want 2", n)
	}
	if _, err := coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: 2}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 3}}, bson.D{{Key: "$set", Value: bson.D{{Key: "n", Value: 30}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 4}}, bson.D{{Key: "$set", Value: bson.D{{Key: "n", Value: 400}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: 5}}); err != nil {
		t.Fatal(err)
	}
	if got := drain(t, cur); len(got) != 3 || got[0] != 0 || got[1] != 1 || got[2] != 30 {
		t.Errorf("n of the documents read: %v, want [0 1 30]", got)
	}
	if cur.ID() != 0 {
		t.Errorf("cursor id %d at the end, want 0", cur.ID())
	}

	sess, err := client.StartSession(options.Session().SetSnapshot(true))
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(ctx)
	sctx := mongo.NewSessionContext(ctx, sess)
	snap, err := coll.Find(sctx, bson.D{}, options.Find().SetBatchSize(1))
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close(sctx)
	if _, err := coll.DeleteMany(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	if got := drain(t, snap); len(got) != 4 {
		t.Errorf("the snapshot session's cursor read %v, want the snapshot's 4 documents", got)
	}
}

// TestGetMoreExecutorError: what a cursor's pipeline raises while a
// getMore fills its batch carries getmore_cmd's context, "Executor error
// during getMore", with the stage's code.
func TestGetMoreExecutorError(t *testing.T) {
	client, _ := startServer(t)
	ctx := t.Context()
	coll := client.Database(testDB).Collection("gmerr")
	if _, err := coll.InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 1}, {Key: "d", Value: 1}}, bson.D{{Key: "_id", Value: 2}, {Key: "d", Value: 0}}}); err != nil {
		t.Fatal(err)
	}
	cur, err := coll.Aggregate(ctx, mongo.Pipeline{
		{{Key: "$sort", Value: bson.D{{Key: "_id", Value: 1}}}},
		{{Key: "$project", Value: bson.D{{Key: "q", Value: bson.D{{Key: "$divide", Value: bson.A{1, "$d"}}}}}}},
	}, options.Aggregate().SetBatchSize(1))
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
	}
	var ce mongo.ServerError
	if err := cur.Err(); !errors.As(err, &ce) || !ce.HasErrorCode(2) || !strings.Contains(err.Error(), "Executor error during getMore :: caused by :: can't $divide by zero") {
		t.Errorf("getMore: %v, want BadValue with getMore's executor context", err)
	}
}
