package driver_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestListSessions: a session the client used is listed by
// $listLocalSessions ({aggregate: 1}) and by $listSessions
// (config.system.sessions) in MongoDB's record shape, its uid the SHA-256
// of its user ("user@db", "" without access control); and MongoDB's codes
// for the misuses.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/listLocalSessions/
func TestListSessions(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	sess, err := client.StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(ctx)
	coll := client.Database(testDB).Collection("ls")
	if err := mongo.WithSession(ctx, sess, func(ctx context.Context) error {
		return coll.FindOne(ctx, bson.D{}).Err()
	}); err != nil && err != mongo.ErrNoDocuments {
		t.Fatal(err)
	}
	id := sess.ID().Lookup("id")
	var status bson.Raw
	if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "connectionStatus", Value: 1}}).Decode(&status); err != nil {
		t.Fatal(err)
	}
	owner := ""
	if users, _ := status.Lookup("authInfo", "authenticatedUsers").Array().Values(); len(users) > 0 {
		u := users[0].Document()
		owner = u.Lookup("user").StringValue() + "@" + u.Lookup("db").StringValue()
	}
	uid := sha256.Sum256([]byte(owner))

	list := func(db *mongo.Database, coll string, stage bson.D) ([]bson.Raw, error) {
		return listSessionsStage(ctx, db, coll, stage)
	}
	for _, tc := range []struct {
		name  string
		db    string
		coll  string
		stage bson.D
	}{
		{"local, own", "admin", "", bson.D{{Key: "$listLocalSessions", Value: bson.D{}}}},
		{"local, all", testDB, "", bson.D{{Key: "$listLocalSessions", Value: bson.D{{Key: "allUsers", Value: true}}}}},
		{"stored, own", "config", "system.sessions", bson.D{{Key: "$listSessions", Value: bson.D{}}}},
	} {
		docs, err := list(client.Database(tc.db), tc.coll, tc.stage)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var found bson.Raw
		for _, d := range docs {
			if bytes.Equal(d.Lookup("_id", "id").Value, id.Value) {
				found = d
			}
		}
		if found == nil {
			t.Fatalf("%s: session %s not listed in %v", tc.name, id, docs)
		}
		keys := []string{}
		elems, _ := found.Elements()
		for _, e := range elems {
			keys = append(keys, e.Key())
		}
		want := []string{"_id", "lastUse"}
		if owner != "" {
			want = append(want, "user")
			if got := found.Lookup("user", "name").StringValue(); got != owner {
				t.Fatalf("%s: user %q, want %q", tc.name, got, owner)
			}
		}
		if len(keys) != len(want) || keys[0] != "_id" || keys[1] != "lastUse" {
			t.Fatalf("%s: fields %v, want %v", tc.name, keys, want)
		}
		if st, data := found.Lookup("_id", "uid").Binary(); st != 0 || !bytes.Equal(data, uid[:]) {
			t.Fatalf("%s: uid %x, want sha256(%q)", tc.name, data, owner)
		}
		if found.Lookup("lastUse").Type != bson.TypeDateTime {
			t.Fatalf("%s: lastUse %s", tc.name, found.Lookup("lastUse"))
		}
	}
	// Another user's sessions: none of ours.
	docs, err := list(client.Database("admin"), "", bson.D{{Key: "$listLocalSessions", Value: bson.D{{Key: "users", Value: bson.A{bson.D{{Key: "user", Value: "nobody"}, {Key: "db", Value: "x"}}}}}}})
	if err != nil || len(docs) != 0 {
		t.Fatalf("another user's sessions: %v, %v", docs, err)
	}
	for _, tc := range []struct {
		db, coll string
		pipeline bson.A
		code     int
	}{
		{testDB, "ls", bson.A{bson.D{{Key: "$listLocalSessions", Value: bson.D{}}}}, 73},
		{testDB, "ls", bson.A{bson.D{{Key: "$listSessions", Value: bson.D{}}}}, 73},
		{"admin", "", bson.A{bson.D{{Key: "$listLocalSessions", Value: 1}}}, 14},
		{"admin", "", bson.A{bson.D{{Key: "$listLocalSessions", Value: bson.D{{Key: "allUsers", Value: true}, {Key: "users", Value: bson.A{bson.D{{Key: "user", Value: "a"}, {Key: "db", Value: "b"}}}}}}}}, 12},
		{"admin", "", bson.A{bson.D{{Key: "$listLocalSessions", Value: bson.D{{Key: "bogus", Value: 1}}}}}, 40415},
		{"admin", "", bson.A{bson.D{{Key: "$listLocalSessions", Value: bson.D{{Key: "users", Value: bson.A{bson.D{{Key: "user", Value: "a"}}}}}}}}, 40414},
		{"admin", "", bson.A{bson.D{{Key: "$documents", Value: bson.A{}}}, bson.D{{Key: "$listLocalSessions", Value: bson.D{}}}}, 40602},
	} {
		cmd := bson.D{{Key: "aggregate", Value: tc.coll}, {Key: "pipeline", Value: tc.pipeline}, {Key: "cursor", Value: bson.D{}}}
		if tc.coll == "" {
			cmd[0].Value = 1
		}
		err := client.Database(tc.db).RunCommand(ctx, cmd).Err()
		if serverCode(err) != tc.code {
			t.Errorf("%v on %s.%s: %v, want %d", tc.pipeline, tc.db, tc.coll, err, tc.code)
		}
	}
}

// listSessionsStage runs one $listLocalSessions or $listSessions stage on
// db.coll ({aggregate: 1} when coll is "") and returns its first batch.
func listSessionsStage(ctx context.Context, db *mongo.Database, coll string, stage bson.D) ([]bson.Raw, error) {
	cmd := bson.D{{Key: "aggregate", Value: coll}, {Key: "pipeline", Value: bson.A{stage}}, {Key: "cursor", Value: bson.D{}}}
	if coll == "" {
		cmd[0].Value = 1
	}
	var reply bson.Raw
	if err := db.RunCommand(ctx, cmd).Decode(&reply); err != nil {
		return nil, err
	}
	vals, _ := reply.Lookup("cursor", "firstBatch").Array().Values()
	out := make([]bson.Raw, len(vals))
	for i, v := range vals {
		out[i] = v.Document()
	}
	return out, nil
}

// TestStartSessionListed: a session the startSession command started is
// listed at once with lastUse the time it started, as MongoDB records it
// (jstests/core/list_local_sessions.js).
func TestStartSessionListed(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	before := time.Now().Add(-time.Second)
	var started bson.Raw
	if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "startSession", Value: 1}}).Decode(&started); err != nil {
		t.Fatal(err)
	}
	id := started.Lookup("id", "id")
	docs, err := listSessionsStage(ctx, client.Database("admin"), "", bson.D{{Key: "$listLocalSessions", Value: bson.D{}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if bytes.Equal(d.Lookup("_id", "id").Value, id.Value) {
			if used := d.Lookup("lastUse").Time(); used.Before(before) || used.After(time.Now().Add(time.Second)) {
				t.Fatalf("started session: lastUse %v, want about %v", used, before)
			}
			return
		}
	}
	t.Fatalf("started session %s not listed in %v", id, docs)
}

// TestNoAuthUserNamesAnonymousSessions: the user {user: "", db: ""} names
// the sessions opened without access control, whose uid is the SHA-256 of
// "" (MongoDB's getLogicalSessionUserDigestFor), in $listLocalSessions'
// users and killAllSessions' list (jstests/core/list_local_sessions.js
// asks for its session by that user in no-auth mode). Under access
// control the session is its user's, and that user lists and kills none.
func TestNoAuthUserNamesAnonymousSessions(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	sess, err := client.StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(ctx)
	coll := client.Database(testDB).Collection("anon")
	if _, err := coll.InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 2}}}); err != nil {
		t.Fatal(err)
	}
	var cur *mongo.Cursor
	if err := mongo.WithSession(ctx, sess, func(ctx context.Context) error {
		var err error
		cur, err = coll.Find(ctx, bson.D{}, options.Find().SetBatchSize(1))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer cur.Close(ctx)
	noAuthUser := bson.A{bson.D{{Key: "user", Value: ""}, {Key: "db", Value: ""}}}
	docs, err := listSessionsStage(ctx, client.Database("admin"), "", bson.D{{Key: "$listLocalSessions", Value: bson.D{{Key: "users", Value: noAuthUser}}}})
	if err != nil {
		t.Fatal(err)
	}
	listed := false
	for _, d := range docs {
		listed = listed || bytes.Equal(d.Lookup("_id", "id").Value, sess.ID().Lookup("id").Value)
	}
	if listed == testAuth() {
		t.Fatalf("session listed for {user: \"\", db: \"\"}: %v, want %v", listed, !testAuth())
	}
	if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "killAllSessions", Value: noAuthUser}}).Err(); err != nil {
		t.Fatal(err)
	}
	cur.Next(ctx) // the first batch's document
	killed := !cur.Next(ctx) && serverCode(cur.Err()) == 43
	if killed == testAuth() {
		t.Fatalf("session's cursor killed by killAllSessions [{user: \"\", db: \"\"}]: %v (%v), want %v", killed, cur.Err(), !testAuth())
	}
}
