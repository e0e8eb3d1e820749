package driver_test

import (
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
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
