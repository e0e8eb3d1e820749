package driver_test

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestListCursorsBatching proves listCollections and listIndexes return
// real cursors honouring cursor.batchSize, read to the end through getMore
// by the driver's ListCollections and Indexes().List.
func TestListCursorsBatching(t *testing.T) {
	counter, mon := newCommandCounter()
	in := startInstance(t, defaultConfig())
	client := connect(t, in, mon)
	db := client.Database(testDB)
	var want []string
	for i := range 7 {
		name := fmt.Sprintf("c%d", i)
		want = append(want, name)
		if err := db.CreateCollection(t.Context(), name); err != nil {
			t.Fatal(err)
		}
	}
	ixColl := db.Collection("c0")
	for _, f := range []string{"a", "b", "c", "d"} {
		if _, err := ixColl.Indexes().CreateOne(t.Context(), mongo.IndexModel{Keys: bson.D{{Key: f, Value: 1}}}); err != nil {
			t.Fatal(err)
		}
	}

	counter.reset()
	cur, err := db.ListCollections(t.Context(), bson.D{}, options.ListCollections().SetBatchSize(2))
	if err != nil {
		t.Fatal(err)
	}
	if cur.ID() == 0 || cur.RemainingBatchLength() != 2 {
		t.Fatalf("first batch of %d with id %d: want 2 and an open cursor", cur.RemainingBatchLength(), cur.ID())
	}
	var got []string
	for cur.Next(t.Context()) {
		got = append(got, cur.Current.Lookup("name").StringValue())
	}
	if err := cur.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("collections %v, want %v", got, want)
	}
	if n := counter.count("getMore"); n != 3 {
		t.Errorf("%d getMores for 7 collections in batches of 2, want 3", n)
	}

	counter.reset()
	icur, err := ixColl.Indexes().List(t.Context(), options.ListIndexes().SetBatchSize(1))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for icur.Next(t.Context()) {
		names = append(names, icur.Current.Lookup("name").StringValue())
	}
	if err := icur.Err(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(names, ",") != "_id_,a_1,b_1,c_1,d_1" {
		t.Errorf("indexes %v", names)
	}
	if n := counter.count("getMore"); n != 4 {
		t.Errorf("%d getMores for 5 indexes in batches of 1, want 4", n)
	}
	if n := counter.count("killCursors"); n != 0 {
		t.Errorf("%d killCursors, want 0: an exhausted list cursor closes itself", n)
	}
}

// TestGetMoreOwnership proves getMore checks, as MongoDB's getmore_cmd.cpp
// does, that the cursor belongs to the caller's session (50736-50738) and
// transaction (50739-50741) and namespace (Unauthorized), validates its own
// batchSize and maxTimeMS, and that a refused getMore leaves the cursor
// open for its owner.
func TestGetMoreOwnership(t *testing.T) {
	cfg := defaultConfig()
	cfg.ReplSetName = "folio"
	in := startInstance(t, cfg)
	client, err := mongo.Connect(clientOptions(in))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Disconnect(t.Context()) })
	db := client.Database(testDB)
	numbered(t, client, "own", 20)

	sessA, err := client.StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sessA.EndSession(t.Context())
	sessB, err := client.StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sessB.EndSession(t.Context())
	ctxA := mongo.NewSessionContext(t.Context(), sessA)
	ctxB := mongo.NewSessionContext(t.Context(), sessB)

	reply, err := db.RunCommand(ctxA, bson.D{{Key: "find", Value: "own"}, {Key: "batchSize", Value: 2}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	_, id := batchOf(t, reply)
	getMore := func(fields ...bson.E) bson.D {
		return append(bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "own"}}, fields...)
	}
	lsidA := sessA.ID()

	raw := rawDial(t, in)
	noSession := rawCommand(t, raw, 1, append(getMore(), bson.E{Key: "$db", Value: testDB}))
	// under access control, a getMore from another session is
	// Unauthorized before these checks (checkCursorSessionPrivilege)
	sessionCode := func(code int) int {
		if testAuth() {
			return 13
		}
		return code
	}
	if code := noSession.Lookup("code").Int32(); int(code) != sessionCode(50737) {
		t.Fatalf("getMore without an lsid: %s, want code %d", noSession, sessionCode(50737))
	}
	if msg := noSession.Lookup("errmsg").StringValue(); !testAuth() && (!strings.Contains(msg, "which was created in session") || !strings.HasSuffix(msg, ", without an lsid")) {
		t.Errorf("message %q", msg)
	}
	tests := []struct {
		name     string
		cmd      bson.D
		wantCode int
	}{
		{name: "other session", cmd: getMore(), wantCode: sessionCode(50738)},
		{name: "other collection", cmd: bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "other"}}, wantCode: 13},
		{name: "batchSize -1", cmd: getMore(bson.E{Key: "batchSize", Value: -1}), wantCode: 51024},
		{name: "batchSize string", cmd: getMore(bson.E{Key: "batchSize", Value: "1"}), wantCode: 14},
		{name: "maxTimeMS on a non-awaitData cursor", cmd: getMore(bson.E{Key: "maxTimeMS", Value: 100}), wantCode: 2},
		{name: "maxTimeMS negative", cmd: getMore(bson.E{Key: "maxTimeMS", Value: -1}), wantCode: 2},
		{name: "id not a long", cmd: bson.D{{Key: "getMore", Value: int32(id)}, {Key: "collection", Value: "own"}}, wantCode: 14},
		{name: "collection missing", cmd: bson.D{{Key: "getMore", Value: id}}, wantCode: 40414},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := ctxA
			if tt.name == "other session" {
				ctx = ctxB
			}
			err := db.RunCommand(ctx, tt.cmd).Err()
			requireCode(t, err, tt.wantCode, "")
		})
	}
	// batchSize 0 is no limit but the reply's size (MongoDB 7.0's getMore)
	reply, err = db.RunCommand(ctxA, getMore(bson.E{Key: "batchSize", Value: 0})).Raw()
	if err != nil {
		t.Fatalf("the owner's getMore after refused ones: %v", err)
	}
	if batch, last := batchOf(t, reply); len(batch) != 18 || last != 0 {
		t.Fatalf("owner's getMore: %d documents, id %d; want 18 and 0", len(batch), last)
	}

	// A cursor opened in a transaction is the transaction's, and one opened
	// outside is not.
	reply, err = db.RunCommand(ctxA, bson.D{{Key: "find", Value: "own"}, {Key: "batchSize", Value: 2}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	_, plainID := batchOf(t, reply)
	if err := sessA.StartTransaction(); err != nil {
		t.Fatal(err)
	}
	reply, err = db.RunCommand(ctxA, bson.D{{Key: "find", Value: "own"}, {Key: "batchSize", Value: 2}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	_, txnID := batchOf(t, reply)
	withoutTxn := rawCommand(t, raw, 3, bson.D{{Key: "getMore", Value: txnID}, {Key: "collection", Value: "own"},
		{Key: "lsid", Value: lsidA}, {Key: "$db", Value: testDB}})
	if code := withoutTxn.Lookup("code").Int32(); code != 50740 {
		t.Errorf("getMore outside the transaction that opened the cursor: %s, want code 50740", withoutTxn)
	}
	if _, err := db.RunCommand(ctxA, bson.D{{Key: "getMore", Value: txnID}, {Key: "collection", Value: "own"}}).Raw(); err != nil {
		t.Fatalf("getMore in the cursor's transaction: %v", err)
	}
	// An error in a transaction aborts it, so this check comes last.
	err = db.RunCommand(ctxA, bson.D{{Key: "getMore", Value: plainID}, {Key: "collection", Value: "own"}}).Err()
	requireCode(t, err, 50739, "")
	_ = sessA.AbortTransaction(t.Context())
	err = db.RunCommand(ctxA, bson.D{{Key: "getMore", Value: txnID}, {Key: "collection", Value: "own"}}).Err()
	requireCode(t, err, 43, "CursorNotFound")
}

// TestQueryPlanKilled proves a cursor whose collection is dropped (alone
// or with its database) or renamed, or whose scanned index is dropped,
// fails its next getMore with QueryPlanKilled (175) and MongoDB's message,
// and is gone afterwards (43), as in MongoDB's
// getmore_invalidated_cursors.js; dropping an index the plan does not use
// changes nothing.
func TestQueryPlanKilled(t *testing.T) {
	client, _ := startServer(t)
	tests := []struct {
		name    string
		db      string
		hint    any
		action  func(db *mongo.Database) error
		wantMsg string // "" : the cursor survives
	}{
		{name: "drop", action: func(db *mongo.Database) error { return db.Collection("k").Drop(t.Context()) }, wantMsg: "collection dropped. UUID "},
		{name: "drop and recreate", action: func(db *mongo.Database) error {
			if err := db.Collection("k").Drop(t.Context()); err != nil {
				return err
			}
			return db.CreateCollection(t.Context(), "k")
		}, wantMsg: "collection dropped. UUID "},
		{name: "dropDatabase", db: "qpk_db", action: func(db *mongo.Database) error { return db.Drop(t.Context()) }, wantMsg: "collection dropped. UUID "},
		{name: "rename", action: func(db *mongo.Database) error {
			return client.Database("admin").RunCommand(t.Context(), bson.D{{Key: "renameCollection", Value: db.Name() + ".k"}, {Key: "to", Value: db.Name() + ".k2"}}).Err()
		}, wantMsg: "collection renamed from 'test.k' to 'test.k2'. UUID "},
		{name: "drop scanned index", hint: bson.D{{Key: "x", Value: 1}}, action: func(db *mongo.Database) error {
			return db.Collection("k").Indexes().DropOne(t.Context(), "x_1")
		}, wantMsg: "query plan killed :: index 'x_1' dropped"},
		{name: "drop unused index", action: func(db *mongo.Database) error {
			return db.Collection("k").Indexes().DropOne(t.Context(), "x_1")
		}},
	}
	// An aggregate's cursor is killed as a find's is, while its pipeline
	// still reads the collection.
	for _, kind := range []string{"find", "aggregate"} {
		for _, tt := range tests {
			t.Run(kind+"/"+tt.name, func(t *testing.T) {
				dbName := tt.db
				if dbName == "" {
					dbName = testDB
				}
				db := client.Database(dbName)
				_ = db.Collection("k").Drop(t.Context())
				_ = db.Collection("k2").Drop(t.Context())
				docs := make([]any, 20)
				for i := range docs {
					docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "x", Value: i}}
				}
				if _, err := db.Collection("k").InsertMany(t.Context(), docs); err != nil {
					t.Fatal(err)
				}
				if _, err := db.Collection("k").Indexes().CreateOne(t.Context(), mongo.IndexModel{Keys: bson.D{{Key: "x", Value: 1}}}); err != nil {
					t.Fatal(err)
				}
				cmd := bson.D{{Key: "find", Value: "k"}, {Key: "batchSize", Value: 3}}
				if kind == "aggregate" {
					cmd = bson.D{{Key: "aggregate", Value: "k"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$match", Value: bson.D{}}}}}, {Key: "cursor", Value: bson.D{{Key: "batchSize", Value: 3}}}}
				}
				if tt.hint != nil {
					cmd = append(cmd, bson.E{Key: "hint", Value: tt.hint})
				}
				reply, err := runRaw(t, db, cmd)
				if err != nil {
					t.Fatal(err)
				}
				_, id := batchOf(t, reply)
				if err := tt.action(db); err != nil {
					t.Fatal(err)
				}
				getMore := bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "k"}}
				reply, err = runRaw(t, db, getMore)
				if tt.wantMsg == "" {
					if err != nil {
						t.Fatalf("getMore after dropping an index the plan does not use: %v", err)
					}
					if batch, _ := batchOf(t, reply); len(batch) != 17 {
						t.Fatalf("%d documents after the first batch, want 17", len(batch))
					}
					return
				}
				requireCode(t, err, 175, "QueryPlanKilled")
				var ce mongo.CommandError
				if !errors.As(err, &ce) || !strings.HasPrefix(ce.Message, tt.wantMsg) {
					t.Errorf("message %v, want prefix %q", err, tt.wantMsg)
				}
				_, err = runRaw(t, db, getMore)
				requireCode(t, err, 43, "CursorNotFound")
			})
		}
	}
}

// TestAggregateCursorAfterItsScan proves when MongoDB's aggregate cursor
// outlives a drop of its collection: a pipeline that is all query ($match,
// $sort) runs as a find and is killed (175); one with further stages reads
// its scan in 4 MiB batches (internalDocumentSourceCursorBatchSizeBytes),
// so over a small collection the scan has ended by the first batch and the
// getMore goes on, while over more than 4 MiB it is killed.
func TestAggregateCursorAfterItsScan(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database(testDB)
	sortDesc := bson.D{{Key: "$sort", Value: bson.D{{Key: "n", Value: -1}}}}
	project := bson.D{{Key: "$project", Value: bson.D{{Key: "n", Value: 1}}}}
	big := strings.Repeat("x", 1<<20)
	tests := []struct {
		name     string
		pipeline bson.A
		docs     int
		pad      string
		killed   bool
	}{
		{"query only", bson.A{sortDesc}, 10, "", true},
		{"stages over a small collection", bson.A{sortDesc, project}, 10, "", false},
		{"stages over more than 4 MiB", bson.A{sortDesc, project}, 6, big, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			coll := db.Collection("drained")
			_ = coll.Drop(t.Context())
			for i := range tc.docs {
				if _, err := coll.InsertOne(t.Context(), bson.D{{Key: "_id", Value: i}, {Key: "n", Value: i}, {Key: "pad", Value: tc.pad}}); err != nil {
					t.Fatal(err)
				}
			}
			reply, err := runRaw(t, db, bson.D{{Key: "aggregate", Value: "drained"},
				{Key: "pipeline", Value: tc.pipeline}, {Key: "cursor", Value: bson.D{{Key: "batchSize", Value: 2}}}})
			if err != nil {
				t.Fatal(err)
			}
			_, id := batchOf(t, reply)
			if err := coll.Drop(t.Context()); err != nil {
				t.Fatal(err)
			}
			reply, err = runRaw(t, db, bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "drained"}})
			if tc.killed {
				requireCode(t, err, 175, "QueryPlanKilled")
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if batch, _ := batchOf(t, reply); len(batch) != tc.docs-2 {
				t.Fatalf("%d documents after the first batch, want %d", len(batch), tc.docs-2)
			}
		})
	}
}

// TestCursorIdleTimeout proves, with a short cursorTimeoutMillis, that a
// cursor outside any session is closed once idle past it unless opened
// with noCursorTimeout, and that a cursor of a session is not timed out
// for idleness but closed when its session ends (MongoDB 5.0+: "Cursors
// Opened Within a Session",
// https://www.mongodb.com/docs/v7.0/reference/method/cursor.noCursorTimeout/).
func TestCursorIdleTimeout(t *testing.T) {
	cfg := defaultConfig()
	cfg.CursorIdle = 150 * time.Millisecond
	in := startInstance(t, cfg)
	client := connect(t, in)
	numbered(t, client, "idle", 10)
	db := client.Database(testDB)

	raw := rawDial(t, in)
	open := func(reqID int32, extra ...bson.E) int64 {
		cmd := append(bson.D{{Key: "find", Value: "idle"}, {Key: "batchSize", Value: 1}}, extra...)
		reply := rawCommand(t, raw, reqID, append(cmd, bson.E{Key: "$db", Value: testDB}))
		_, id := batchOf(t, reply)
		if id == 0 {
			t.Fatalf("no cursor: %s", reply)
		}
		return id
	}
	plain := open(1)
	kept := open(2, bson.E{Key: "noCursorTimeout", Value: true})
	sess, err := client.StartSession()
	if err != nil {
		t.Fatal(err)
	}
	sctx := mongo.NewSessionContext(t.Context(), sess)
	reply, err := db.RunCommand(sctx, bson.D{{Key: "find", Value: "idle"}, {Key: "batchSize", Value: 1}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	_, inSession := batchOf(t, reply)

	time.Sleep(600 * time.Millisecond)
	getMore := func(reqID int32, id int64) bson.Raw {
		return rawCommand(t, raw, reqID, bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "idle"}, {Key: "batchSize", Value: 1}, {Key: "$db", Value: testDB}})
	}
	if r := getMore(3, plain); r.Lookup("code").Int32() != 43 {
		t.Errorf("idle cursor without noCursorTimeout: %s, want CursorNotFound", r)
	}
	if r := getMore(4, kept); r.Lookup("ok").Double() != 1 {
		t.Errorf("idle cursor with noCursorTimeout: %s, want it alive", r)
	}
	if _, err := db.RunCommand(sctx, bson.D{{Key: "getMore", Value: inSession}, {Key: "collection", Value: "idle"}, {Key: "batchSize", Value: 1}}).Raw(); err != nil {
		t.Errorf("idle cursor of a live session: %v, want it alive", err)
	}
	sess.EndSession(t.Context())
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := db.RunCommand(t.Context(), bson.D{{Key: "getMore", Value: inSession}, {Key: "collection", Value: "idle"}}).Err()
		if serverCode(err) == 43 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cursor of an ended session still answers: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
