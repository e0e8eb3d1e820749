package driver_test

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// TestAuthCurrentOpStageAllUsers: under access control the $currentOp
// stage shows only the caller's operations and cursors unless allUsers:
// true, which needs the inprog action; without it any authenticated user
// may run the stage.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/currentOp/
func TestAuthCurrentOpStageAllUsers(t *testing.T) {
	root, in := startAuthServer(t)
	ctx := context.Background()
	if _, err := runCmd(root, "app", bson.D{{Key: "createUser", Value: "ann"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{"readWrite"}}}); err != nil {
		t.Fatal(err)
	}
	ann := connectAs(t, in, "ann", "pw", "app", "")
	if _, err := ann.Database("app").Collection("c").InsertMany(ctx, []any{bson.D{}, bson.D{}, bson.D{}}); err != nil {
		t.Fatal(err)
	}
	r, err := runCmd(ann, "app", bson.D{{Key: "find", Value: "c"}, {Key: "batchSize", Value: 1}})
	if err != nil {
		t.Fatal(err)
	}
	annCursor := r.Lookup("cursor", "id").Int64()

	// currentOp runs $currentOp with opts and returns the users of the
	// operations listed and the ids of the idle cursors.
	currentOp := func(c *mongo.Client, opts bson.D) (users []string, cursors []int64, err error) {
		cur, err := c.Database("admin").Aggregate(ctx, mongo.Pipeline{{{Key: "$currentOp", Value: opts}}})
		if err != nil {
			return nil, nil, err
		}
		var docs []bson.Raw
		if err := cur.All(ctx, &docs); err != nil {
			return nil, nil, err
		}
		for _, d := range docs {
			if d.Lookup("type").StringValue() == "idleCursor" {
				cursors = append(cursors, d.Lookup("cursor", "cursorId").Int64())
			} else if u, err := d.LookupErr("effectiveUsers", "0", "user"); err == nil {
				users = append(users, u.StringValue())
			}
		}
		return users, cursors, nil
	}
	only := func(users []string, want string) bool {
		for _, u := range users {
			if u != want {
				return false
			}
		}
		return len(users) > 0
	}

	users, cursors, err := currentOp(ann, bson.D{{Key: "idleCursors", Value: true}})
	if err != nil {
		t.Fatalf("ann's own $currentOp: %v", err)
	}
	if !only(users, "ann") || len(cursors) != 1 || cursors[0] != annCursor {
		t.Errorf("ann's own $currentOp: users %v, cursors %v (want ann's cursor %d)", users, cursors, annCursor)
	}
	_, _, err = currentOp(ann, bson.D{{Key: "allUsers", Value: true}})
	requireCode(t, err, 13, "Unauthorized")

	users, cursors, err = currentOp(root, bson.D{{Key: "idleCursors", Value: true}})
	if err != nil {
		t.Fatal(err)
	}
	if !only(users, "root") || len(cursors) != 0 {
		t.Errorf("root's own $currentOp: users %v, cursors %v", users, cursors)
	}
	_, cursors, err = currentOp(root, bson.D{{Key: "idleCursors", Value: true}, {Key: "allUsers", Value: true}})
	if err != nil {
		t.Fatal(err)
	}
	if len(cursors) != 1 || cursors[0] != annCursor {
		t.Errorf("root's $currentOp with allUsers: cursors %v, want [%d]", cursors, annCursor)
	}
}
