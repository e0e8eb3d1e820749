package driver_test

import (
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// TestAuthGetMoreRechecksPrivileges: a getMore needs the privileges of the
// command that opened the cursor, checked again at each getMore, so a user
// whose roles were revoked since gets no more, as MongoDB's getMore
// validateAuthorization refuses it (jstests/auth/getMore.js).
func TestAuthGetMoreRechecksPrivileges(t *testing.T) {
	root, in := startAuthServer(t)
	ctx := t.Context()
	db := root.Database("gmauth")
	if _, err := db.Collection("foo").InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 0}}, bson.D{{Key: "_id", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	opens := []struct {
		name string
		open bson.D
		coll string
	}{
		{"find", bson.D{{Key: "find", Value: "foo"}, {Key: "batchSize", Value: 0}}, "foo"},
		{"listIndexes", bson.D{{Key: "listIndexes", Value: "foo"}, {Key: "cursor", Value: bson.D{{Key: "batchSize", Value: 0}}}}, "foo"},
		{"listCollections", bson.D{{Key: "listCollections", Value: 1}, {Key: "cursor", Value: bson.D{{Key: "batchSize", Value: 0}}}}, "$cmd.listCollections"},
		{"$out", bson.D{{Key: "aggregate", Value: "foo"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$out", Value: "out"}}}}, {Key: "cursor", Value: bson.D{{Key: "batchSize", Value: 0}}}}, "foo"},
	}
	for _, o := range opens {
		user := "u" + o.name
		if err := db.RunCommand(ctx, bson.D{{Key: "createUser", Value: user}, {Key: "pwd", Value: "pwd"}, {Key: "roles", Value: bson.A{"readWrite"}}}).Err(); err != nil {
			t.Fatal(err)
		}
		c := connectAs(t, in, user, "pwd", "gmauth", "")
		sctx := sessionCtx(t, c)
		open := func() int64 {
			reply, err := c.Database("gmauth").RunCommand(sctx, o.open).Raw()
			if err != nil {
				t.Fatalf("%s: %v", o.name, err)
			}
			id, _ := reply.Lookup("cursor", "id").Int64OK()
			if id == 0 {
				t.Fatalf("%s opened no cursor: %v", o.name, reply)
			}
			return id
		}
		getMore := func(id int64) error {
			return c.Database("gmauth").RunCommand(sctx, bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: o.coll}}).Err()
		}
		if err := getMore(open()); err != nil {
			t.Fatalf("%s: getMore with the privileges: %v", o.name, err)
		}
		id := open()
		if err := db.RunCommand(ctx, bson.D{{Key: "revokeRolesFromUser", Value: user}, {Key: "roles", Value: bson.A{"readWrite"}}}).Err(); err != nil {
			t.Fatal(err)
		}
		requireError(t, getMore(id), 13, "Unauthorized", fmt.Sprintf("not authorized for getMore with cursor id %d", id))
	}
}

// TestAuthKillCursorsOwnCursor: killCursors needs no privilege of its own:
// a user may kill the cursors it opened, even holding no role, another's
// only with killAnyCursor on the cluster or on the cursor's namespace, as
// MongoDB's checkAuthForKillCursors allows (jstests/auth/kill_cursors.js).
func TestAuthKillCursorsOwnCursor(t *testing.T) {
	root, in := startAuthServer(t)
	ctx := t.Context()
	db := root.Database("kcauth")
	if _, err := db.Collection("coll").InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 0}}, bson.D{{Key: "_id", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	for _, u := range []struct {
		name  string
		roles bson.A
	}{{"norole", bson.A{}}, {"owner", bson.A{"read"}}, {"other", bson.A{"read"}}, {"killer", bson.A{"killColl"}}} {
		if u.name == "killer" {
			if err := db.RunCommand(ctx, bson.D{{Key: "createRole", Value: "killColl"}, {Key: "roles", Value: bson.A{}}, {Key: "privileges", Value: bson.A{
				bson.D{{Key: "resource", Value: bson.D{{Key: "db", Value: "kcauth"}, {Key: "collection", Value: "coll"}}}, {Key: "actions", Value: bson.A{"killAnyCursor"}}},
			}}}).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.RunCommand(ctx, bson.D{{Key: "createUser", Value: u.name}, {Key: "pwd", Value: "pwd"}, {Key: "roles", Value: u.roles}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	kill := func(c *mongo.Client, coll string, id int64) error {
		reply, err := c.Database("kcauth").RunCommand(ctx, bson.D{{Key: "killCursors", Value: coll}, {Key: "cursors", Value: bson.A{id}}}).Raw()
		if err == nil {
			if killed, _ := reply.Lookup("cursorsKilled").ArrayOK(); len(mustValues(killed)) != 1 {
				t.Fatalf("killCursors %d: %v", id, reply)
			}
		}
		return err
	}
	open := func(c *mongo.Client, cmd bson.D) int64 {
		reply, err := c.Database("kcauth").RunCommand(ctx, cmd).Raw()
		if err != nil {
			t.Fatal(err)
		}
		id, _ := reply.Lookup("cursor", "id").Int64OK()
		if id == 0 {
			t.Fatalf("no cursor: %v", reply)
		}
		return id
	}
	// a user with no role kills its own $listLocalSessions cursor
	norole := connectAs(t, in, "norole", "pwd", "kcauth", "")
	id := open(norole, bson.D{{Key: "aggregate", Value: 1}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$listLocalSessions", Value: bson.D{}}}}}, {Key: "cursor", Value: bson.D{{Key: "batchSize", Value: 0}}}})
	if err := kill(norole, "$cmd.aggregate", id); err != nil {
		t.Fatalf("kill own cursor without a role: %v", err)
	}
	owner := connectAs(t, in, "owner", "pwd", "kcauth", "")
	find := bson.D{{Key: "find", Value: "coll"}, {Key: "batchSize", Value: 0}}
	id = open(owner, find)
	requireError(t, kill(connectAs(t, in, "other", "pwd", "kcauth", ""), "coll", id), 13, "Unauthorized", "not authorized to kill cursor on kcauth.coll")
	if err := kill(connectAs(t, in, "killer", "pwd", "kcauth", ""), "coll", id); err != nil {
		t.Fatalf("killAnyCursor on the collection: %v", err)
	}
	if err := kill(owner, "coll", open(owner, find)); err != nil {
		t.Fatalf("kill own cursor: %v", err)
	}
}
