package driver_test

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestUserRolesVariable: $$USER_ROLES (MongoDB 7.0) is the roles of the
// operation's user, as Variables::defineUserRoles marshals them: a
// {_id: "<db>.<role>", role, db} document for each, the same in every
// document and in find's $expr.
func TestUserRolesVariable(t *testing.T) {
	root, in := startAuthServer(t)
	ctx := context.Background()
	if _, err := runCmd(root, "app", bson.D{{Key: "createUser", Value: "ann"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{"readWrite"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := root.Database("app").Collection("c").InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 2}}}); err != nil {
		t.Fatal(err)
	}
	ann := connectAs(t, in, "ann", "pw", "app", "")
	coll := ann.Database("app").Collection("c")
	cur, err := coll.Aggregate(ctx, bson.A{bson.D{{Key: "$project", Value: bson.D{{Key: "_id", Value: 0}, {Key: "r", Value: "$$USER_ROLES"}, {Key: "n", Value: "$$USER_ROLES.role"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	var out []bson.Raw
	if err := cur.All(ctx, &out); err != nil {
		t.Fatal(err)
	}
	want := canonicalDocs(t, []bson.Raw{mustRaw(t, bson.D{
		{Key: "r", Value: bson.A{bson.D{{Key: "_id", Value: "app.readWrite"}, {Key: "role", Value: "readWrite"}, {Key: "db", Value: "app"}}}},
		{Key: "n", Value: bson.A{"readWrite"}},
	})})[0]
	if len(out) != 2 {
		t.Fatalf("%d documents", len(out))
	}
	for _, got := range canonicalDocs(t, out) {
		if got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
	filter := bson.D{{Key: "$expr", Value: bson.D{{Key: "$in", Value: bson.A{"readWrite", "$$USER_ROLES.role"}}}}}
	if n, err := coll.CountDocuments(ctx, filter); err != nil || n != 2 {
		t.Errorf("count with $$USER_ROLES: %d, %v", n, err)
	}
	if n, err := root.Database("app").Collection("c").CountDocuments(ctx, filter); err != nil || n != 0 {
		t.Errorf("root's count with readWrite in $$USER_ROLES: %d, %v", n, err)
	}

	// Inherited roles count (getAuthenticatedRoleNames is the user's
	// indirect roles).
	if _, err := runCmd(root, "app", bson.D{{Key: "createRole", Value: "appReader"}, {Key: "privileges", Value: bson.A{}}, {Key: "roles", Value: bson.A{"read"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := runCmd(root, "app", bson.D{{Key: "createUser", Value: "bob"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{"appReader"}}}); err != nil {
		t.Fatal(err)
	}
	bob := connectAs(t, in, "bob", "pw", "app", "")
	cur, err = bob.Database("app").Collection("c").Aggregate(ctx, bson.A{
		bson.D{{Key: "$limit", Value: 1}},
		bson.D{{Key: "$project", Value: bson.D{{Key: "_id", Value: 0}, {Key: "ids", Value: bson.D{{Key: "$sortArray", Value: bson.D{{Key: "input", Value: "$$USER_ROLES._id"}, {Key: "sortBy", Value: 1}}}}}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	out = nil
	if err := cur.All(ctx, &out); err != nil {
		t.Fatal(err)
	}
	want = canonicalDocs(t, []bson.Raw{mustRaw(t, bson.D{{Key: "ids", Value: bson.A{"app.appReader", "app.read"}}})})[0]
	if len(out) != 1 || canonicalDocs(t, out)[0] != want {
		t.Errorf("bob's $$USER_ROLES: %v, want %s", out, want)
	}
}
