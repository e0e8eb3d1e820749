package driver_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// TestSessionsBelongToUsers: under access control a session is its lsid
// {id, uid}, uid being the SHA-256 of "user@db", so two users naming the
// same id have two sessions; killSessions reaches only the caller's own,
// killSessions [] all of them; killAllSessionsByPattern selects by lsid or
// uid, and naming users to impersonate takes the impersonate privilege; a
// getMore from another session is refused with Unauthorized, naming both
// sessions (MongoDB's makeLogicalSessionId, kill_sessions_command.cpp,
// checkCursorSessionPrivilege).
func TestSessionsBelongToUsers(t *testing.T) {
	root, in := startAuthServer(t)
	ctx := context.Background()
	for _, u := range []string{"ann", "bob"} {
		if _, err := runCmd(root, "admin", bson.D{{Key: "createUser", Value: u}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{"root"}}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := root.Database("app").Collection("c").InsertMany(ctx, []any{bson.D{}, bson.D{}, bson.D{}}); err != nil {
		t.Fatal(err)
	}
	ann := connectAs(t, in, "ann", "pw", "admin", "")
	bob := connectAs(t, in, "bob", "pw", "admin", "")
	uid := func(user string) bson.Binary {
		sum := sha256.Sum256([]byte(user))
		return bson.Binary{Data: sum[:]}
	}

	// open starts a session of c and a cursor in it.
	open := func(c *mongo.Client) (*mongo.Session, bson.Binary, int64) {
		t.Helper()
		sess, err := c.StartSession()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sess.EndSession(ctx) })
		reply, err := c.Database("app").RunCommand(mongo.NewSessionContext(ctx, sess), bson.D{{Key: "find", Value: "c"}, {Key: "batchSize", Value: 1}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		_, data := sess.ID().Lookup("id").Binary()
		return sess, bson.Binary{Subtype: bson.TypeBinaryUUID, Data: data}, reply.Lookup("cursor", "id").Int64()
	}
	// alive reports whether the cursor of sess still answers a getMore.
	alive := func(c *mongo.Client, sess *mongo.Session, cursor int64) bool {
		t.Helper()
		err := c.Database("app").RunCommand(mongo.NewSessionContext(ctx, sess), bson.D{{Key: "getMore", Value: cursor}, {Key: "collection", Value: "c"}, {Key: "batchSize", Value: 1}}).Err()
		if err != nil && serverCode(err) != 43 {
			t.Fatalf("getMore: %v", err)
		}
		return err == nil
	}
	kill := func(c *mongo.Client, cmd bson.D) {
		t.Helper()
		if _, err := runCmd(c, "admin", cmd); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
	}

	annSess, annID, annCursor := open(ann)
	kill(bob, bson.D{{Key: "killSessions", Value: bson.A{bson.D{{Key: "id", Value: annID}}}}})
	if !alive(ann, annSess, annCursor) {
		t.Error("bob's killSessions of ann's session id killed ann's cursor")
	}

	// bob's getMore of ann's cursor, in a session of bob's: 13, naming both
	bobSess, _, bobCursor := open(bob)
	err := bob.Database("app").RunCommand(mongo.NewSessionContext(ctx, bobSess), bson.D{{Key: "getMore", Value: annCursor}, {Key: "collection", Value: "c"}}).Err()
	requireCode(t, err, 13, "Unauthorized")
	annUID := uid("ann@admin")
	if msg := err.Error(); !strings.Contains(msg, "Cursor session id (") || !strings.Contains(msg, base64.StdEncoding.EncodeToString(annUID.Data)) {
		t.Errorf("message %q does not name ann's session", msg)
	}

	// an lsid naming another user's uid takes impersonation
	spoofed := bson.D{{Key: "id", Value: annID}, {Key: "uid", Value: annUID}}
	err = bob.Database("app").RunCommand(ctx, bson.D{{Key: "find", Value: "c"}, {Key: "lsid", Value: spoofed}}).Err()
	requireCode(t, err, 13, "Unauthorized")

	// $listLocalSessions shows a session's uid as the user's digest
	cur, err := ann.Database("admin").Aggregate(ctx, mongo.Pipeline{{{Key: "$listLocalSessions", Value: bson.D{}}}})
	if err != nil {
		t.Fatal(err)
	}
	var listed []bson.Raw
	if err := cur.All(ctx, &listed); err != nil {
		t.Fatal(err)
	}
	if len(listed) == 0 {
		t.Fatal("$listLocalSessions listed none of ann's sessions")
	}
	for _, d := range listed {
		if _, got := d.Lookup("_id", "uid").Binary(); string(got) != string(annUID.Data) {
			t.Errorf("$listLocalSessions: %s, want uid of ann@admin", d)
		}
	}

	// killSessions [] kills the caller's sessions only
	kill(bob, bson.D{{Key: "killSessions", Value: bson.A{}}})
	if alive(bob, bobSess, bobCursor) {
		t.Error("bob's cursor survived bob's killSessions []")
	}
	if !alive(ann, annSess, annCursor) {
		t.Error("ann's cursor did not survive bob's killSessions []")
	}

	// naming users to impersonate takes the impersonate privilege
	_, err = runCmd(bob, "admin", bson.D{{Key: "killAllSessionsByPattern", Value: bson.A{bson.D{{Key: "users", Value: bson.A{bson.D{{Key: "user", Value: "ann"}, {Key: "db", Value: "admin"}}}}}}}})
	requireCode(t, err, 13, "Unauthorized")

	// bob naming ann's session id has a session of his own
	sameID := bson.D{{Key: "id", Value: annID}}
	reply, err := runCmd(bob, "app", bson.D{{Key: "find", Value: "c"}, {Key: "batchSize", Value: 1}, {Key: "lsid", Value: sameID}})
	if err != nil {
		t.Fatalf("bob's find in a session with ann's id: %v", err)
	}
	sameIDCursor := reply.Lookup("cursor", "id").Int64()

	// by lsid: ann's session {id, uid} and nothing else
	bobSess, _, bobCursor = open(bob)
	kill(bob, bson.D{{Key: "killAllSessionsByPattern", Value: bson.A{bson.D{{Key: "lsid", Value: spoofed}}}}})
	if alive(ann, annSess, annCursor) {
		t.Error("ann's cursor survived killAllSessionsByPattern of its lsid")
	}
	if !alive(bob, bobSess, bobCursor) {
		t.Error("bob's cursor did not survive killAllSessionsByPattern of ann's lsid")
	}
	_, err = runCmd(bob, "app", bson.D{{Key: "getMore", Value: sameIDCursor}, {Key: "collection", Value: "c"}, {Key: "lsid", Value: sameID}})
	if err != nil {
		t.Errorf("bob's cursor in the session with ann's id: %v", err)
	}

	// by uid: all of bob's sessions
	annSess, _, annCursor = open(ann)
	kill(ann, bson.D{{Key: "killAllSessionsByPattern", Value: bson.A{bson.D{{Key: "uid", Value: uid("bob@admin")}}}}})
	if alive(bob, bobSess, bobCursor) || !alive(ann, annSess, annCursor) {
		t.Error("killAllSessionsByPattern by bob's uid: want bob's cursor killed and ann's kept")
	}

	// the empty list: every session
	bobSess, _, bobCursor = open(bob)
	kill(root, bson.D{{Key: "killAllSessionsByPattern", Value: bson.A{}}})
	if alive(bob, bobSess, bobCursor) || alive(ann, annSess, annCursor) {
		t.Error("a cursor survived killAllSessionsByPattern []")
	}
}
