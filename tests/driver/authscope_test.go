package driver_test

import (
	"context"
	"fmt"
	"sort"
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

// TestAuthListDatabasesAuthorized: authorizedDatabases: true lists only
// the databases the user holds privileges on, even for a user holding the
// listDatabases action, which otherwise lists them all.
// https://www.mongodb.com/docs/v7.0/reference/command/listDatabases/
func TestAuthListDatabasesAuthorized(t *testing.T) {
	root, in := startAuthServer(t)
	ctx := context.Background()
	if _, err := root.Database("other").Collection("c").InsertOne(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	if _, err := root.Database("app").Collection("c").InsertOne(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	if _, err := runCmd(root, "admin", bson.D{{Key: "createRole", Value: "lister"}, {Key: "roles", Value: bson.A{}},
		{Key: "privileges", Value: bson.A{bson.D{{Key: "resource", Value: bson.D{{Key: "cluster", Value: true}}}, {Key: "actions", Value: bson.A{"listDatabases"}}}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := runCmd(root, "app", bson.D{{Key: "createUser", Value: "bob"}, {Key: "pwd", Value: "pw"},
		{Key: "roles", Value: bson.A{"readWrite", bson.D{{Key: "role", Value: "lister"}, {Key: "db", Value: "admin"}}}}}); err != nil {
		t.Fatal(err)
	}
	bob := connectAs(t, in, "bob", "pw", "app", "")
	for _, tc := range []struct {
		opts bson.D
		want string
	}{
		{nil, "[admin app local other]"},
		{bson.D{{Key: "authorizedDatabases", Value: false}}, "[admin app local other]"},
		{bson.D{{Key: "authorizedDatabases", Value: true}}, "[app]"},
	} {
		cmd := append(bson.D{{Key: "listDatabases", Value: 1}, {Key: "nameOnly", Value: true},
			{Key: "filter", Value: bson.D{{Key: "name", Value: bson.D{{Key: "$ne", Value: "config"}}}}}}, tc.opts...)
		r, err := runCmd(bob, "admin", cmd)
		if err != nil {
			t.Fatalf("%v: %v", tc.opts, err)
		}
		var names []string
		dbs, _ := r.Lookup("databases").Array().Values()
		for _, d := range dbs {
			names = append(names, d.Document().Lookup("name").StringValue())
		}
		sort.Strings(names)
		if got := fmt.Sprint(names); got != tc.want {
			t.Errorf("listDatabases %v: %s, want %s", tc.opts, got, tc.want)
		}
	}
}

// TestAuthListDatabasesAllRefused: authorizedDatabases: false from a user
// without the listDatabases action fails as the command runs, with
// MongoDB's own message rather than the authorization check's "not
// authorized on admin to execute command", and before its filter is
// parsed (CmdListDatabases::typedRun).
func TestAuthListDatabasesAllRefused(t *testing.T) {
	root, in := startAuthServer(t)
	if _, err := runCmd(root, "app", bson.D{{Key: "createUser", Value: "carl"}, {Key: "pwd", Value: "pw"},
		{Key: "roles", Value: bson.A{"read"}}}); err != nil {
		t.Fatal(err)
	}
	carl := connectAs(t, in, "carl", "pw", "app", "")
	for _, extra := range []bson.D{nil, {{Key: "filter", Value: bson.D{{Key: "$bad", Value: 1}}}}} {
		cmd := append(bson.D{{Key: "listDatabases", Value: 1}, {Key: "authorizedDatabases", Value: false}}, extra...)
		_, err := runCmd(carl, "admin", cmd)
		requireError(t, err, 13, "Unauthorized", "Insufficient permissions to list all databases")
	}
	// unset, it lists what the user may read; a bad filter then fails
	if _, err := runCmd(carl, "admin", bson.D{{Key: "listDatabases", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	_, err := runCmd(carl, "admin", bson.D{{Key: "listDatabases", Value: 1}, {Key: "filter", Value: bson.D{{Key: "$bad", Value: 1}}}})
	requireCode(t, err, 2, "BadValue")
}

// TestAuthListOwnNames: listCollections with authorizedCollections and
// nameOnly lists what a user may reach in a database it holds some
// privilege in, and needs the listCollections action elsewhere
// (checkAuthorizedToListCollections); listDatabases with
// authorizedDatabases counts a privilege on a collection name of every
// database as one in each (isAuthorizedForAnyActionOnAnyResourceInDB).
func TestAuthListOwnNames(t *testing.T) {
	root, in := startAuthServer(t)
	ctx := context.Background()
	for _, db := range []string{"app", "other"} {
		if _, err := root.Database(db).Collection("c").InsertOne(ctx, bson.D{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := runCmd(root, "admin", bson.D{{Key: "createRole", Value: "findAnyC"}, {Key: "roles", Value: bson.A{}},
		{Key: "privileges", Value: bson.A{bson.D{{Key: "resource", Value: bson.D{{Key: "db", Value: ""}, {Key: "collection", Value: "c"}}}, {Key: "actions", Value: bson.A{"find"}}}}}}); err != nil {
		t.Fatal(err)
	}
	for _, u := range []bson.D{
		{{Key: "createUser", Value: "dana"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{"read"}}},
		{{Key: "createUser", Value: "eve"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{bson.D{{Key: "role", Value: "findAnyC"}, {Key: "db", Value: "admin"}}}}},
	} {
		if _, err := runCmd(root, "app", u); err != nil {
			t.Fatal(err)
		}
	}
	dana := connectAs(t, in, "dana", "pw", "app", "")
	own := bson.D{{Key: "listCollections", Value: 1}, {Key: "authorizedCollections", Value: true}, {Key: "nameOnly", Value: true}}
	if _, err := runCmd(dana, "app", own); err != nil {
		t.Errorf("dana's own collections in app: %v", err)
	}
	_, err := runCmd(dana, "other", own)
	requireCode(t, err, 13, "Unauthorized")

	// authorizedCollections, with or without nameOnly, lists only what
	// the user holds a privilege on, even with the listCollections
	// action: read's database-wide privileges leave system.views out
	if err := root.Database("app").RunCommand(ctx, bson.D{{Key: "create", Value: "v"}, {Key: "viewOn", Value: "c"}, {Key: "pipeline", Value: bson.A{}}}).Err(); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []bson.D{own, {{Key: "listCollections", Value: 1}, {Key: "authorizedCollections", Value: true}}} {
		r, err := runCmd(dana, "app", cmd)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		infos, _ := r.Lookup("cursor", "firstBatch").Array().Values()
		for _, info := range infos {
			names = append(names, info.Document().Lookup("name").StringValue())
		}
		if got := fmt.Sprint(names); got != "[c v]" {
			t.Errorf("dana's %v in app: %s, want [c v]", cmd, got)
		}
	}
	r, err := runCmd(dana, "app", bson.D{{Key: "listCollections", Value: 1}, {Key: "nameOnly", Value: true}})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Lookup("cursor", "firstBatch").String(); got != `[{"name": "c","type": "collection"},{"name": "system.views","type": "collection"},{"name": "v","type": "view"}]` {
		t.Errorf("dana's listCollections in app: %s", got)
	}

	eve := connectAs(t, in, "eve", "pw", "app", "")
	r, err = runCmd(eve, "other", own)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Lookup("cursor", "firstBatch").String(); got != `[{"name": "c","type": "collection"}]` {
		t.Errorf("eve's own collections in other: %s", got)
	}
	r, err = runCmd(eve, "admin", bson.D{{Key: "listDatabases", Value: 1}, {Key: "nameOnly", Value: true},
		{Key: "filter", Value: bson.D{{Key: "name", Value: bson.D{{Key: "$in", Value: bson.A{"app", "other"}}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Lookup("databases").String(); got != `[{"name": "app"},{"name": "other"}]` {
		t.Errorf("eve's databases: %s", got)
	}
}

// TestAuthMechanismsParameter: getParameter authenticationMechanisms lists
// the mechanisms Folio authenticates with, by default MongoDB's (X.509,
// which needs TLS, is TestX509Auth's), and each SCRAM one works.
// https://www.mongodb.com/docs/v7.0/reference/parameters/#mongodb-parameter-param.authenticationMechanisms
func TestAuthMechanismsParameter(t *testing.T) {
	root, in := startAuthServer(t)
	r, err := runCmd(root, "admin", bson.D{{Key: "getParameter", Value: 1}, {Key: "authenticationMechanisms", Value: 1}})
	if err != nil {
		t.Fatal(err)
	}
	vals, _ := r.Lookup("authenticationMechanisms").Array().Values()
	var mechs []string
	for _, v := range vals {
		mechs = append(mechs, v.StringValue())
	}
	if got := fmt.Sprint(mechs); got != "[MONGODB-X509 SCRAM-SHA-1 SCRAM-SHA-256]" {
		t.Errorf("authenticationMechanisms %s", got)
	}
	for _, m := range mechs[1:] {
		c := connectAs(t, in, rootUser, rootPassword, "admin", m)
		if _, err := runCmd(c, "admin", bson.D{{Key: "connectionStatus", Value: 1}}); err != nil {
			t.Errorf("%s: %v", m, err)
		}
	}
}

// TestKillAllSessionsOfUsers: killAllSessions with a list of users kills
// only the sessions those users own (a session belongs to the user who
// first used it): a cursor of ann's session is closed, bob's survives; an
// empty list kills every session. The list's entries are parsed as
// MongoDB's KillAllSessionsUser, and the command ignores unknown fields.
// https://www.mongodb.com/docs/v7.0/reference/command/killAllSessions/
func TestKillAllSessionsOfUsers(t *testing.T) {
	root, in := startAuthServer(t)
	ctx := context.Background()
	for _, u := range []string{"ann", "bob"} {
		if _, err := runCmd(root, "app", bson.D{{Key: "createUser", Value: u}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{"readWrite"}}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := root.Database("app").Collection("c").InsertMany(ctx, []any{bson.D{}, bson.D{}, bson.D{}}); err != nil {
		t.Fatal(err)
	}
	// cursor opens a cursor in a session of c's user.
	cursor := func(c *mongo.Client) (*mongo.Session, int64) {
		sess, err := c.StartSession()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sess.EndSession(ctx) })
		var id int64
		err = mongo.WithSession(ctx, sess, func(ctx context.Context) error {
			r, err := c.Database("app").RunCommand(ctx, bson.D{{Key: "find", Value: "c"}, {Key: "batchSize", Value: 1}}).Raw()
			id = r.Lookup("cursor", "id").Int64()
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return sess, id
	}
	getMore := func(c *mongo.Client, sess *mongo.Session, id int64) error {
		return mongo.WithSession(ctx, sess, func(ctx context.Context) error {
			return c.Database("app").RunCommand(ctx, bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "c"}, {Key: "batchSize", Value: 1}}).Err()
		})
	}
	ann, bob := connectAs(t, in, "ann", "pw", "app", ""), connectAs(t, in, "bob", "pw", "app", "")
	annSess, annCursor := cursor(ann)
	bobSess, bobCursor := cursor(bob)
	users := bson.A{bson.D{{Key: "user", Value: "ann"}, {Key: "db", Value: "app"}}, nil, bson.D{{Key: "user", Value: "bob"}, {Key: "db", Value: "other"}}}
	if _, err := runCmd(root, "admin", bson.D{{Key: "killAllSessions", Value: users}, {Key: "unknownField", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	requireCode(t, getMore(ann, annSess, annCursor), 43, "CursorNotFound")
	if err := getMore(bob, bobSess, bobCursor); err != nil {
		t.Fatalf("bob's cursor after killing ann's sessions: %v", err)
	}
	if _, err := runCmd(root, "admin", bson.D{{Key: "killAllSessions", Value: bson.A{nil}}}); err != nil {
		t.Fatal(err)
	}
	requireCode(t, getMore(bob, bobSess, bobCursor), 43, "CursorNotFound")

	for _, tc := range []struct {
		arg  any
		code int
		name string
	}{
		{1, 14, "TypeMismatch"},
		{nil, 40414, "Location40414"},
		{bson.A{1}, 14, "TypeMismatch"},
		{bson.A{bson.D{{Key: "user", Value: "u"}}}, 40414, "Location40414"},
		{bson.A{bson.D{{Key: "user", Value: "u"}, {Key: "db", Value: 1}}}, 14, "TypeMismatch"},
		{bson.A{bson.D{{Key: "user", Value: "u"}, {Key: "db", Value: "d"}, {Key: "x", Value: 1}}}, 40415, "Location40415"},
	} {
		_, err := runCmd(root, "admin", bson.D{{Key: "killAllSessions", Value: tc.arg}})
		requireCode(t, err, tc.code, tc.name)
	}
}
