package driver_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/internal/instance"
)

// startAuthServer starts a Folio with access control and a root user
// (created through the localhost exception) and returns a client logged
// in as root.
func startAuthServer(t *testing.T) (*mongo.Client, *instance.Instance) {
	t.Helper()
	cfg := defaultConfig()
	cfg.Auth = true
	in := startInstance(t, cfg)
	createRootUser(t, in)
	return connectAs(t, in, rootUser, rootPassword, "admin", ""), in
}

// connectAs connects as user (authSource db, mechanism "" for the
// driver's choice).
func connectAs(t *testing.T, in *instance.Instance, user, pwd, db, mechanism string, opts ...*options.ClientOptions) *mongo.Client {
	t.Helper()
	cred := options.Credential{Username: user, Password: pwd, AuthSource: db, AuthMechanism: mechanism}
	return connect(t, in, append([]*options.ClientOptions{options.Client().SetAuth(cred)}, opts...)...)
}

// tryConnect connects and pings, returning the error instead of failing.
func tryConnect(t *testing.T, in *instance.Instance, cred options.Credential) error {
	t.Helper()
	c, err := mongo.Connect(uriOptions(in.URI()).SetDirect(true).SetAuth(cred))
	if err != nil {
		return err
	}
	defer func() { _ = c.Disconnect(context.Background()) }()
	return c.Ping(context.Background(), nil)
}

// anonymous is a client that does not authenticate.
func anonymous(t *testing.T, in *instance.Instance) *mongo.Client {
	t.Helper()
	c, err := mongo.Connect(uriOptions(in.URI()).SetDirect(true))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Disconnect(context.Background()) })
	return c
}

func runCmd(c *mongo.Client, db string, cmd bson.D) (bson.Raw, error) {
	return c.Database(db).RunCommand(context.Background(), cmd).Raw()
}

// TestAuthLocalhostException: with access control on and no user, a
// loopback client may create the first user in admin and nothing else;
// once it exists, unauthenticated clients run only the handshake.
// https://www.mongodb.com/docs/manual/core/localhost-exception/
func TestAuthLocalhostException(t *testing.T) {
	cfg := defaultConfig()
	cfg.Auth = true
	in := startInstance(t, cfg)
	anon := anonymous(t, in)
	for _, cmd := range []bson.D{{{Key: "ping", Value: 1}}, {{Key: "hello", Value: 1}}, {{Key: "buildInfo", Value: 1}}, {{Key: "connectionStatus", Value: 1}}, {{Key: "listCommands", Value: 1}}} {
		if _, err := runCmd(anon, "admin", cmd); err != nil {
			t.Errorf("%v without a user: %v", cmd, err)
		}
	}
	_, err := runCmd(anon, "test", bson.D{{Key: "find", Value: "c"}})
	requireCode(t, err, 13, "Unauthorized")
	_, err = runCmd(anon, "test", bson.D{{Key: "createUser", Value: "u"}, {Key: "pwd", Value: "p"}, {Key: "roles", Value: bson.A{}}})
	requireCode(t, err, 13, "Unauthorized")
	if _, err := runCmd(anon, "admin", bson.D{{Key: "createUser", Value: "first"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{"root"}}}); err != nil {
		t.Fatalf("first user through the localhost exception: %v", err)
	}
	_, err = runCmd(anon, "admin", bson.D{{Key: "createUser", Value: "second"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{"root"}}})
	requireCode(t, err, 13, "Unauthorized")
	if !strings.Contains(err.Error(), "requires authentication") {
		t.Errorf("message %q", err)
	}
	root := connectAs(t, in, "first", "pw", "admin", "")
	if _, err := runCmd(root, "test", bson.D{{Key: "find", Value: "c"}}); err != nil {
		t.Errorf("root find: %v", err)
	}
}

// TestAuthMechanisms: both SCRAM mechanisms, with and without speculative
// authentication; wrong passwords and unknown users fail alike with
// AuthenticationFailed.
func TestAuthMechanisms(t *testing.T) {
	root, in := startAuthServer(t)
	for _, u := range []struct {
		name  string
		mechs bson.A
	}{{"both", nil}, {"sha1", bson.A{"SCRAM-SHA-1"}}, {"sha256", bson.A{"SCRAM-SHA-256"}}} {
		cmd := bson.D{{Key: "createUser", Value: u.name}, {Key: "pwd", Value: "secret"}, {Key: "roles", Value: bson.A{"readWrite"}}}
		if u.mechs != nil {
			cmd = append(cmd, bson.E{Key: "mechanisms", Value: u.mechs})
		}
		if _, err := runCmd(root, "app", cmd); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		user, mech string
		ok         bool
	}{
		{"both", "", true}, {"both", "SCRAM-SHA-1", true}, {"both", "SCRAM-SHA-256", true},
		{"sha1", "", true}, {"sha1", "SCRAM-SHA-1", true}, {"sha1", "SCRAM-SHA-256", false},
		{"sha256", "", true}, {"sha256", "SCRAM-SHA-256", true}, {"sha256", "SCRAM-SHA-1", false},
	} {
		// The driver authenticates speculatively in its handshake (its
		// saslContinue follows hello); rawLogin covers saslStart.
		cred := options.Credential{Username: tc.user, Password: "secret", AuthSource: "app", AuthMechanism: tc.mech}
		c, err := mongo.Connect(uriOptions(in.URI()).SetDirect(true).SetAuth(cred))
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Database("app").Collection("c").InsertOne(context.Background(), bson.D{{Key: "x", Value: 1}})
		_ = c.Disconnect(context.Background())
		if (err == nil) != tc.ok {
			t.Errorf("%s with %q: %v", tc.user, tc.mech, err)
		}
		if !tc.ok {
			requireCode(t, err, 18, "AuthenticationFailed")
		}
	}
	var msgs []string
	for _, cred := range []options.Credential{
		{Username: "both", Password: "wrong", AuthSource: "app"},
		{Username: "nobody", Password: "secret", AuthSource: "app"},
		{Username: "both", Password: "secret", AuthSource: "other"},
		{Username: "both", Password: "wrong", AuthSource: "app", AuthMechanism: "SCRAM-SHA-1"},
	} {
		err := tryConnect(t, in, cred)
		requireCode(t, err, 18, "AuthenticationFailed")
		var ce mongo.CommandError
		if errors.As(err, &ce) {
			msgs = append(msgs, ce.Message)
		}
	}
	for _, m := range msgs {
		if m != "Authentication failed." {
			t.Errorf("failure message %q", m)
		}
	}
}

// TestAuthSpeculative: the driver's handshake carries
// speculativeAuthenticate and, when it succeeds, no saslStart follows.
func TestAuthSpeculative(t *testing.T) {
	_, in := startAuthServer(t)
	var mu sync.Mutex
	started := map[string]int{}
	mon := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		mu.Lock()
		started[e.CommandName]++
		mu.Unlock()
	}}
	c := connectAs(t, in, rootUser, rootPassword, "admin", "SCRAM-SHA-256", options.Client().SetMonitor(mon))
	st, err := runCmd(c, "admin", bson.D{{Key: "connectionStatus", Value: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Lookup("authInfo", "authenticatedUsers").String(); got != `[{"user": "root","db": "admin"}]` {
		t.Errorf("authenticatedUsers %s", got)
	}
	if got := st.Lookup("authInfo", "authenticatedUserRoles").String(); got != `[{"role": "root","db": "admin"}]` {
		t.Errorf("authenticatedUserRoles %s", got)
	}
	// saslStart never shows in command monitoring (it is sensitive), so
	// check the server's answer instead: a raw hello with
	// speculativeAuthenticate gets the server's first message back.
	anon := anonymous(t, in)
	var hello bson.M
	err = anon.Database("admin").RunCommand(context.Background(), bson.D{
		{Key: "hello", Value: 1},
		{Key: "saslSupportedMechs", Value: "admin." + rootUser},
		{Key: "speculativeAuthenticate", Value: bson.D{
			{Key: "saslStart", Value: 1}, {Key: "mechanism", Value: "SCRAM-SHA-256"},
			{Key: "payload", Value: bson.Binary{Data: []byte("n,,n=" + rootUser + ",r=abcdefghijklmnop")}},
			{Key: "db", Value: "admin"},
		}},
	}).Decode(&hello)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(hello["saslSupportedMechs"]) != "[SCRAM-SHA-1 SCRAM-SHA-256]" {
		t.Errorf("saslSupportedMechs %v", hello["saslSupportedMechs"])
	}
	spec, ok := hello["speculativeAuthenticate"].(bson.D)
	if !ok {
		t.Fatalf("no speculativeAuthenticate in %v", hello)
	}
	sm := asM(spec)
	payload := string(sm["payload"].(bson.Binary).Data)
	if sm["done"] != false || !strings.HasPrefix(payload, "r=abcdefghijklmnop") || !strings.Contains(payload, ",i=15000") {
		t.Errorf("speculativeAuthenticate %v (%s)", spec, payload)
	}
}

// TestAuthUsersAndRoles: the user and role commands and what they store.
// https://www.mongodb.com/docs/manual/reference/command/nav-user-management/
func TestAuthUsersAndRoles(t *testing.T) {
	root, in := startAuthServer(t)
	ctx := context.Background()
	must := func(db string, cmd bson.D) bson.Raw {
		t.Helper()
		r, err := runCmd(root, db, cmd)
		if err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
		return r
	}
	must("app", bson.D{{Key: "createRole", Value: "reader"}, {Key: "privileges", Value: bson.A{
		bson.D{{Key: "resource", Value: bson.D{{Key: "db", Value: "app"}, {Key: "collection", Value: "open"}}}, {Key: "actions", Value: bson.A{"find"}}},
	}}, {Key: "roles", Value: bson.A{}}})
	must("app", bson.D{{Key: "createUser", Value: "ann"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{"reader"}}, {Key: "customData", Value: bson.D{{Key: "team", Value: "x"}}}})
	_, err := runCmd(root, "app", bson.D{{Key: "createUser", Value: "ann"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{}}})
	requireCode(t, err, 51003, "")
	_, err = runCmd(root, "app", bson.D{{Key: "createUser", Value: "bob"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{"nosuch"}}})
	requireCode(t, err, 31, "RoleNotFound")
	_, err = runCmd(root, "app", bson.D{{Key: "createRole", Value: "read"}, {Key: "privileges", Value: bson.A{}}, {Key: "roles", Value: bson.A{}}})
	requireCode(t, err, 2, "BadValue")

	// Stored as MongoDB stores users: salted and hashed, never the password.
	var stored bson.M
	if err := root.Database("admin").Collection("system.users").FindOne(ctx, bson.D{{Key: "_id", Value: "app.ann"}}).Decode(&stored); err != nil {
		t.Fatal(err)
	}
	creds := asM(stored["credentials"])
	for mech, iters := range map[string]int32{"SCRAM-SHA-1": 10000, "SCRAM-SHA-256": 15000} {
		c := asM(creds[mech])
		if c["iterationCount"] != iters || c["salt"] == nil || c["storedKey"] == nil || c["serverKey"] == nil {
			t.Errorf("%s credential %v", mech, c)
		}
	}
	if strings.Contains(fmt.Sprint(stored), "pw]") || stored["user"] != "ann" || stored["db"] != "app" {
		t.Errorf("stored user %v", stored)
	}

	ann := connectAs(t, in, "ann", "pw", "app", "")
	if _, err := ann.Database("app").Collection("open").Find(ctx, bson.D{}); err != nil {
		t.Errorf("find on a granted collection: %v", err)
	}
	_, err = ann.Database("app").Collection("closed").Find(ctx, bson.D{})
	requireCode(t, err, 13, "Unauthorized")
	_, err = ann.Database("app").Collection("open").InsertOne(ctx, bson.D{})
	requireCode(t, err, 13, "Unauthorized")
	// listCollections: refused, but for the collections ann may use
	// (authorizedCollections with nameOnly, as mongosh's show collections).
	if _, err := root.Database("app").Collection("open").InsertOne(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	if _, err := root.Database("app").Collection("closed").InsertOne(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	_, err = runCmd(ann, "app", bson.D{{Key: "listCollections", Value: 1}})
	requireCode(t, err, 13, "Unauthorized")
	names, err := ann.Database("app").ListCollectionNames(ctx, bson.D{}, options.ListCollections().SetAuthorizedCollections(true).SetNameOnly(true))
	if err != nil || fmt.Sprint(names) != "[open]" {
		t.Errorf("authorized collections: %v %v", names, err)
	}

	// Privileges changed are seen by the logged-in user's next command.
	must("app", bson.D{{Key: "grantPrivilegesToRole", Value: "reader"}, {Key: "privileges", Value: bson.A{
		bson.D{{Key: "resource", Value: bson.D{{Key: "db", Value: "app"}, {Key: "collection", Value: "open"}}}, {Key: "actions", Value: bson.A{"insert"}}},
	}}})
	if _, err := ann.Database("app").Collection("open").InsertOne(ctx, bson.D{}); err != nil {
		t.Errorf("insert after grantPrivilegesToRole: %v", err)
	}
	must("app", bson.D{{Key: "grantRolesToUser", Value: "ann"}, {Key: "roles", Value: bson.A{"read"}}})
	if _, err := ann.Database("app").Collection("closed").Find(ctx, bson.D{}); err != nil {
		t.Errorf("find after grantRolesToUser read: %v", err)
	}
	must("app", bson.D{{Key: "revokeRolesFromUser", Value: "ann"}, {Key: "roles", Value: bson.A{"read"}}})
	_, err = ann.Database("app").Collection("closed").Find(ctx, bson.D{})
	requireCode(t, err, 13, "Unauthorized")

	// Users see themselves and their roles without viewUser/viewRole.
	var info bson.M
	if err := ann.Database("app").RunCommand(ctx, bson.D{{Key: "usersInfo", Value: "ann"}, {Key: "showPrivileges", Value: true}}).Decode(&info); err != nil {
		t.Fatal(err)
	}
	users := info["users"].(bson.A)
	if len(users) != 1 {
		t.Fatalf("usersInfo %v", info)
	}
	u := asM(users[0])
	if u["credentials"] != nil || fmt.Sprint(u["mechanisms"]) != "[SCRAM-SHA-1 SCRAM-SHA-256]" || u["inheritedPrivileges"] == nil {
		t.Errorf("usersInfo user %v", u)
	}
	// showAuthenticationRestrictions alone shows the inherited roles and
	// privileges too (user_management_commands_lib.js: 1 role, 2 privileges)
	r0 := must("app", bson.D{{Key: "usersInfo", Value: "ann"}, {Key: "showAuthenticationRestrictions", Value: true}})
	for _, f := range []string{"inheritedRoles", "inheritedPrivileges", "inheritedAuthenticationRestrictions", "authenticationRestrictions"} {
		if _, err := r0.LookupErr("users", "0", f); err != nil {
			t.Errorf("usersInfo showAuthenticationRestrictions lacks %s: %s", f, r0)
		}
	}
	_, err = runCmd(ann, "app", bson.D{{Key: "usersInfo", Value: 1}})
	requireCode(t, err, 13, "Unauthorized")
	must("app", bson.D{{Key: "createUser", Value: "cat"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{}}})
	r := must("app", bson.D{{Key: "usersInfo", Value: 1}, {Key: "filter", Value: bson.D{{Key: "customData.team", Value: "x"}}}})
	if got := r.Lookup("users").String(); !strings.Contains(got, `"user": "ann"`) || strings.Contains(got, `"cat"`) {
		t.Errorf("usersInfo with a filter: %s", got)
	}
	// users listed are sorted by user, then db (MongoDB's pipeline), and
	// an empty list is its $or's error
	r = must("app", bson.D{{Key: "usersInfo", Value: bson.A{"cat", bson.D{{Key: "user", Value: "root"}, {Key: "db", Value: "admin"}}, "ann"}}})
	var order []string
	listed, _ := r.Lookup("users").Array().Values()
	for _, u := range listed {
		order = append(order, u.Document().Lookup("user").StringValue())
	}
	if fmt.Sprint(order) != "[ann cat root]" {
		t.Errorf("usersInfo of three users listed %v, want [ann cat root]", order)
	}
	_, err = runCmd(root, "app", bson.D{{Key: "usersInfo", Value: bson.A{}}})
	requireCode(t, err, 2, "BadValue")
	if err := root.Database("app").RunCommand(ctx, bson.D{{Key: "usersInfo", Value: "ann"}, {Key: "showCredentials", Value: true}}).Decode(&info); err != nil {
		t.Fatal(err)
	}
	if asM(info["users"].(bson.A)[0])["credentials"] == nil {
		t.Errorf("showCredentials: %v", info)
	}
	if err := ann.Database("app").RunCommand(ctx, bson.D{{Key: "rolesInfo", Value: "reader"}, {Key: "showPrivileges", Value: true}}).Decode(&info); err != nil {
		t.Fatal(err)
	}
	if r := info["roles"].(bson.A); len(r) != 1 || asM(r[0])["isBuiltin"] != false {
		t.Errorf("rolesInfo %v", info)
	}
	if err := root.Database("admin").RunCommand(ctx, bson.D{{Key: "rolesInfo", Value: "root"}, {Key: "showPrivileges", Value: true}}).Decode(&info); err != nil {
		t.Fatal(err)
	}
	// a built-in role inherits no role: its privileges are its own
	// (getRolesDescription synthesizes it with roles: [])
	if r := info["roles"].(bson.A); len(r) != 1 || asM(r[0])["isBuiltin"] != true || len(asM(r[0])["inheritedRoles"].(bson.A)) != 0 || len(asM(r[0])["privileges"].(bson.A)) < 20 {
		t.Errorf("rolesInfo root %v", info)
	}

	// Role inheritance, cycles refused; dropping a role takes it from users.
	must("app", bson.D{{Key: "createRole", Value: "outer"}, {Key: "privileges", Value: bson.A{}}, {Key: "roles", Value: bson.A{"reader"}}})
	_, err = runCmd(root, "app", bson.D{{Key: "grantRolesToRole", Value: "reader"}, {Key: "roles", Value: bson.A{"outer"}}})
	requireCode(t, err, 49, "InvalidRoleModification")
	must("app", bson.D{{Key: "updateUser", Value: "ann"}, {Key: "roles", Value: bson.A{"outer"}}})
	if _, err := ann.Database("app").Collection("open").Find(ctx, bson.D{}); err != nil {
		t.Errorf("find through an inherited role: %v", err)
	}
	must("app", bson.D{{Key: "dropRole", Value: "reader"}})
	_, err = ann.Database("app").Collection("open").Find(ctx, bson.D{})
	requireCode(t, err, 13, "Unauthorized")

	// Changing the password: the old one fails, the new one works.
	must("app", bson.D{{Key: "updateUser", Value: "ann"}, {Key: "pwd", Value: "new"}})
	requireCode(t, tryConnect(t, in, options.Credential{Username: "ann", Password: "pw", AuthSource: "app"}), 18, "AuthenticationFailed")
	if err := tryConnect(t, in, options.Credential{Username: "ann", Password: "new", AuthSource: "app"}); err != nil {
		t.Errorf("new password: %v", err)
	}
	must("app", bson.D{{Key: "dropUser", Value: "ann"}})
	requireCode(t, tryConnect(t, in, options.Credential{Username: "ann", Password: "new", AuthSource: "app"}), 18, "AuthenticationFailed")
	_, err = runCmd(root, "app", bson.D{{Key: "dropUser", Value: "ann"}})
	requireCode(t, err, 11, "UserNotFound")
	r = must("app", bson.D{{Key: "dropAllRolesFromDatabase", Value: 1}})
	if n, _ := r.Lookup("n").AsInt64OK(); n != 1 {
		t.Errorf("dropAllRolesFromDatabase %v", r)
	}
}

// asM is a nested document decoded as bson.D, as a map.
func asM(v any) bson.M {
	out := bson.M{}
	if d, ok := v.(bson.D); ok {
		for _, e := range d {
			out[e.Key] = e.Value
		}
	}
	return out
}

// lockedBuffer is a log sink safe for the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestAuthLogAndStatus: the log records authentication successes and
// failures without secrets; listDatabases shows a user without the
// listDatabases action only its databases; currentOp shows each
// operation's user; logout forgets the user.
func TestAuthLogAndStatus(t *testing.T) {
	var logBuf lockedBuffer
	cfg := defaultConfig()
	cfg.Auth = true
	cfg.Logger = slog.New(slog.NewTextHandler(&logBuf, nil))
	in := startInstance(t, cfg)
	createRootUser(t, in)
	root := connectAs(t, in, rootUser, rootPassword, "admin", "")
	ctx := context.Background()
	if _, err := runCmd(root, "app", bson.D{{Key: "createUser", Value: "ann"}, {Key: "pwd", Value: "s3cret-pw"}, {Key: "roles", Value: bson.A{"readWrite"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := root.Database("other").Collection("c").InsertOne(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	ann := connectAs(t, in, "ann", "s3cret-pw", "app", "")
	if _, err := ann.Database("app").Collection("c").InsertOne(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	requireCode(t, tryConnect(t, in, options.Credential{Username: "ann", Password: "wrong-pw", AuthSource: "app"}), 18, "AuthenticationFailed")
	log := logBuf.String()
	for _, want := range []string{"Successfully authenticated", "user=ann", "Authentication failed"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	for _, secret := range []string{"s3cret-pw", "wrong-pw", rootPassword} {
		if strings.Contains(log, secret) {
			t.Errorf("log shows a password:\n%s", log)
		}
	}

	names, err := ann.ListDatabaseNames(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(names) != "[app]" {
		t.Errorf("ann's listDatabases: %v", names)
	}
	_, err = runCmd(ann, "admin", bson.D{{Key: "listDatabases", Value: 1}, {Key: "authorizedDatabases", Value: false}})
	requireCode(t, err, 13, "Unauthorized")

	// currentOp shows who runs what: root's own currentOp is in it.
	r, err := runCmd(root, "admin", bson.D{{Key: "currentOp", Value: 1}, {Key: "command.currentOp", Value: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Lookup("inprog", "0", "effectiveUsers").String(); got != `[{"user": "root","db": "admin"}]` {
		t.Errorf("currentOp effectiveUsers %s (%s)", got, r)
	}

	// $ownOps: a user without inprog sees its own operations only.
	r, err = runCmd(ann, "admin", bson.D{{Key: "currentOp", Value: 1}, {Key: "$ownOps", Value: true}})
	if err != nil {
		t.Fatal(err)
	}
	if ops, _ := r.Lookup("inprog").Array().Values(); len(ops) != 1 || ops[0].Document().Lookup("effectiveUsers").String() != `[{"user": "ann","db": "app"}]` {
		t.Errorf("ann's own operations: %s", r)
	}
	_, err = runCmd(ann, "admin", bson.D{{Key: "currentOp", Value: 1}})
	requireCode(t, err, 13, "Unauthorized")
	// killOp: another user's operation needs the killop action; its own
	// (here the killOp itself) does not.
	ownID := r.Lookup("inprog", "0", "opid").Int64()
	_, err = runCmd(ann, "admin", bson.D{{Key: "killOp", Value: 1}, {Key: "op", Value: ownID}})
	requireCode(t, err, 13, "Unauthorized") // that currentOp has ended: not ann's any more
	r, err = runCmd(root, "admin", bson.D{{Key: "currentOp", Value: 1}, {Key: "$ownOps", Value: true}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = runCmd(ann, "admin", bson.D{{Key: "killOp", Value: 1}, {Key: "op", Value: r.Lookup("inprog", "0", "opid").Int64()}})
	requireCode(t, err, 13, "Unauthorized")
	// ann's own waiting getMore (a tailable awaitData cursor) is hers to
	// kill.
	if _, err := runCmd(root, "app", bson.D{{Key: "create", Value: "capped"}, {Key: "capped", Value: true}, {Key: "size", Value: 4096}}); err != nil {
		t.Fatal(err)
	}
	if _, err := root.Database("app").Collection("capped").InsertOne(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	sess, err := ann.StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(ctx)
	sctx := mongo.NewSessionContext(ctx, sess)
	tail, err := ann.Database("app").RunCommand(sctx, bson.D{{Key: "find", Value: "capped"}, {Key: "tailable", Value: true}, {Key: "awaitData", Value: true}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() {
		waited <- ann.Database("app").RunCommand(sctx, bson.D{{Key: "getMore", Value: tail.Lookup("cursor", "id").Int64()}, {Key: "collection", Value: "capped"}, {Key: "maxTimeMS", Value: 10000}}).Err()
	}()
	var getMoreID int64
	for range 200 {
		r, err = runCmd(ann, "admin", bson.D{{Key: "currentOp", Value: 1}, {Key: "$ownOps", Value: true}, {Key: "command.getMore", Value: bson.D{{Key: "$exists", Value: true}}}})
		if err != nil {
			t.Fatal(err)
		}
		if v, err := r.LookupErr("inprog", "0", "opid"); err == nil {
			getMoreID = v.Int64()
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := runCmd(ann, "admin", bson.D{{Key: "killOp", Value: 1}, {Key: "op", Value: getMoreID}}); err != nil {
		t.Errorf("killOp of ann's own getMore: %v", err)
	}
	requireCode(t, <-waited, 11601, "Interrupted")

	// A direct write to admin.system.users is seen at once.
	if _, err := root.Database("admin").Collection("system.users").UpdateOne(ctx, bson.D{{Key: "_id", Value: "app.ann"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "roles", Value: bson.A{}}}}}); err != nil {
		t.Fatal(err)
	}
	_, err = ann.Database("app").Collection("c").InsertOne(ctx, bson.D{})
	requireCode(t, err, 13, "Unauthorized")

	// logout: the connection's user is gone, and with it its privileges.
	raw := rawDial(t, in)
	rawLogin(t, raw)
	if got := rawCommand(t, raw, 1, bson.D{{Key: "connectionStatus", Value: 1}, {Key: "$db", Value: "admin"}}).Lookup("authInfo", "authenticatedUsers").String(); got != `[{"user": "root","db": "admin"}]` {
		t.Errorf("before logout: %s", got)
	}
	rawCommand(t, raw, 2, bson.D{{Key: "logout", Value: 1}, {Key: "$db", Value: "admin"}})
	if got := rawCommand(t, raw, 3, bson.D{{Key: "connectionStatus", Value: 1}, {Key: "$db", Value: "admin"}}).Lookup("authInfo", "authenticatedUsers").String(); got != `[]` {
		t.Errorf("after logout: %s", got)
	}
	reply := rawCommand(t, raw, 4, bson.D{{Key: "find", Value: "c"}, {Key: "$db", Value: "app"}})
	if code, _ := reply.Lookup("code").AsInt64OK(); code != 13 {
		t.Errorf("find after logout: %s", reply)
	}
}

// TestUserAndRoleNames: usersInfo's and rolesInfo's names, and the
// roles a command grants, are read by MongoDB's one name parser
// (AuthName<T>::parseFromBSON, auth/auth_name.cpp): its codes and
// messages, a user name document strict about its fields and a role name
// document not; usersInfo's other forms as UMCInfoCommandArg reads them (a
// number whose safeNumberLong is 1, forAllDBs by its truth).
func TestUserAndRoleNames(t *testing.T) {
	client, _ := startServer(t)
	const db = "names"
	for _, cmd := range []bson.D{
		{{Key: "createUser", Value: "one"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{}}},
		{{Key: "createUser", Value: "two"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{}}},
		{{Key: "createRole", Value: "r"}, {Key: "privileges", Value: bson.A{}}, {Key: "roles", Value: bson.A{}}},
	} {
		if _, err := runCmd(client, db, cmd); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
	}
	one := bson.D{{Key: "user", Value: "one"}, {Key: "db", Value: db}}
	for _, tc := range []struct {
		name     string
		cmd      bson.D
		code     int    // 0: the command succeeds
		codeName string // and msg is its message
		msg      string
		users    int // usersInfo's users, rolesInfo's roles, when it succeeds (-1: any)
	}{
		// the forms that ask for all users
		{name: "usersInfo 1", cmd: bson.D{{Key: "usersInfo", Value: 1}}, users: 2},
		{name: "usersInfo 1 as a long", cmd: bson.D{{Key: "usersInfo", Value: int64(1)}}, users: 2},
		{name: "usersInfo 1.5 truncates to 1", cmd: bson.D{{Key: "usersInfo", Value: 1.5}}, users: 2},
		{name: "usersInfo forAllDBs 1", cmd: bson.D{{Key: "usersInfo", Value: bson.D{{Key: "forAllDBs", Value: 1}}}}, users: -1},
		{name: "usersInfo exact with a filter", cmd: bson.D{{Key: "usersInfo", Value: bson.A{"one", "two"}}, {Key: "filter", Value: bson.D{{Key: "user", Value: "two"}}}}, users: 1},
		{name: "usersInfo a name twice", cmd: bson.D{{Key: "usersInfo", Value: bson.A{"one", one}}}, users: 1},
		{name: "usersInfo a document", cmd: bson.D{{Key: "usersInfo", Value: one}}, users: 1},
		// names that are neither strings nor documents
		{name: "usersInfo null", cmd: bson.D{{Key: "usersInfo", Value: nil}}, code: 2, codeName: "BadValue", msg: "UserName must be either a string or an object"},
		{name: "usersInfo true", cmd: bson.D{{Key: "usersInfo", Value: true}}, code: 2, codeName: "BadValue", msg: "UserName must be either a string or an object"},
		{name: "usersInfo 2", cmd: bson.D{{Key: "usersInfo", Value: 2}}, code: 2, codeName: "BadValue", msg: "UserName must be either a string or an object"},
		{name: "usersInfo array with null", cmd: bson.D{{Key: "usersInfo", Value: bson.A{"one", nil}}}, code: 2, codeName: "BadValue", msg: "UserName must be either a string or an object"},
		// name documents
		{name: "usersInfo without db", cmd: bson.D{{Key: "usersInfo", Value: bson.D{{Key: "user", Value: "one"}}}}, code: 2, codeName: "BadValue", msg: "UserName must contain a field named: db"},
		{name: "usersInfo array without db", cmd: bson.D{{Key: "usersInfo", Value: bson.A{bson.D{{Key: "user", Value: "one"}}}}}, code: 2, codeName: "BadValue", msg: "UserName must contain a field named: db"},
		{name: "usersInfo without user", cmd: bson.D{{Key: "usersInfo", Value: bson.D{{Key: "db", Value: db}}}}, code: 2, codeName: "BadValue", msg: "UserName must contain a field named: user"},
		{name: "usersInfo empty document", cmd: bson.D{{Key: "usersInfo", Value: bson.D{}}}, code: 2, codeName: "BadValue", msg: "UserName must contain a field named: user"},
		{name: "usersInfo user an int", cmd: bson.D{{Key: "usersInfo", Value: bson.D{{Key: "user", Value: 1}, {Key: "db", Value: db}}}}, code: 2, codeName: "BadValue", msg: "UserName must contain a string field named: user. But, has type int"},
		{name: "usersInfo db an int", cmd: bson.D{{Key: "usersInfo", Value: bson.D{{Key: "user", Value: "one"}, {Key: "db", Value: 1}}}}, code: 2, codeName: "BadValue", msg: "UserName must contain a string field named: db. But, has type int"},
		{name: "usersInfo db null", cmd: bson.D{{Key: "usersInfo", Value: bson.D{{Key: "user", Value: "one"}, {Key: "db", Value: nil}}}}, code: 2, codeName: "BadValue", msg: "UserName must contain a string field named: db. But, has type null"},
		{name: "usersInfo unknown field", cmd: bson.D{{Key: "usersInfo", Value: bson.D{{Key: "foo", Value: "bar"}}}}, code: 2, codeName: "BadValue", msg: "UserName contains an unknown field named: 'foo"},
		{name: "usersInfo unknown field after the name", cmd: bson.D{{Key: "usersInfo", Value: bson.D{{Key: "user", Value: "one"}, {Key: "db", Value: db}, {Key: "foo", Value: 1}}}}, code: 2, codeName: "BadValue", msg: "UserName contains an unknown field named: 'foo"},
		{name: "usersInfo forAllDBs false", cmd: bson.D{{Key: "usersInfo", Value: bson.D{{Key: "forAllDBs", Value: false}}}}, code: 2, codeName: "BadValue", msg: "UserName contains an unknown field named: 'forAllDBs"},
		{name: "usersInfo user twice", cmd: bson.D{{Key: "usersInfo", Value: bson.D{{Key: "user", Value: "one"}, {Key: "user", Value: "two"}, {Key: "db", Value: db}}}}, code: 2, codeName: "BadValue", msg: "UserName has more than one field named: user"},
		{name: "usersInfo tenant a string", cmd: bson.D{{Key: "usersInfo", Value: bson.D{{Key: "user", Value: "one"}, {Key: "db", Value: db}, {Key: "tenant", Value: "t"}}}}, code: 2, codeName: "BadValue", msg: "UserName must contain a objectId field named: tenant. But, has type string"},
		{name: "usersInfo tenant", cmd: bson.D{{Key: "usersInfo", Value: bson.D{{Key: "user", Value: "one"}, {Key: "db", Value: db}, {Key: "tenant", Value: bson.NewObjectID()}}}}, code: 238, codeName: "NotImplemented", msg: "a UserName with a tenant is not implemented: Folio has no tenants"},
		// privileges and restrictions come from the user cache, by name
		{name: "usersInfo 1 showPrivileges", cmd: bson.D{{Key: "usersInfo", Value: 1}, {Key: "showPrivileges", Value: true}}, code: 20, codeName: "IllegalOperation", msg: "Privilege or restriction details require exact-match usersInfo queries"},
		{name: "usersInfo filter showAuthenticationRestrictions", cmd: bson.D{{Key: "usersInfo", Value: "one"}, {Key: "filter", Value: bson.D{}}, {Key: "showAuthenticationRestrictions", Value: true}}, code: 20, codeName: "IllegalOperation", msg: "Privilege or restriction details require exact-match usersInfo queries"},
		// role names: the same parser, not strict
		{name: "rolesInfo a document with another field", cmd: bson.D{{Key: "rolesInfo", Value: bson.D{{Key: "role", Value: "r"}, {Key: "db", Value: db}, {Key: "foo", Value: 1}}}}, users: 1},
		{name: "rolesInfo null", cmd: bson.D{{Key: "rolesInfo", Value: nil}}, code: 2, codeName: "BadValue", msg: "RoleName must be either a string or an object"},
		{name: "rolesInfo without db", cmd: bson.D{{Key: "rolesInfo", Value: bson.D{{Key: "role", Value: "r"}}}}, code: 2, codeName: "BadValue", msg: "RoleName must contain a field named: db"},
		{name: "rolesInfo without role", cmd: bson.D{{Key: "rolesInfo", Value: bson.A{bson.D{{Key: "db", Value: db}}}}}, code: 2, codeName: "BadValue", msg: "RoleName must contain a field named: role"},
		{name: "rolesInfo forAllDBs", cmd: bson.D{{Key: "rolesInfo", Value: bson.D{{Key: "forAllDBs", Value: true}}}}, code: 2, codeName: "BadValue", msg: "RoleName must contain a field named: role"},
		{name: "rolesInfo role an int", cmd: bson.D{{Key: "rolesInfo", Value: bson.D{{Key: "role", Value: 1}, {Key: "db", Value: db}}}}, code: 2, codeName: "BadValue", msg: "RoleName must contain a string field named: role. But, has type int"},
		// the roles a command grants
		{name: "createUser roles [1]", cmd: bson.D{{Key: "createUser", Value: "three"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{1}}}, code: 2, codeName: "BadValue", msg: "Role name must be either a document or string"},
		{name: "grantRolesToUser role without db", cmd: bson.D{{Key: "grantRolesToUser", Value: "one"}, {Key: "roles", Value: bson.A{bson.D{{Key: "role", Value: "r"}}}}}, code: 2, codeName: "BadValue", msg: "RoleName must contain a field named: db"},
		{name: "grantRolesToRole role db an int", cmd: bson.D{{Key: "grantRolesToRole", Value: "r"}, {Key: "roles", Value: bson.A{bson.D{{Key: "role", Value: "read"}, {Key: "db", Value: 1}}}}}, code: 2, codeName: "BadValue", msg: "RoleName must contain a string field named: db. But, has type int"},
		// a granted role's tenant is the command's: none
		{name: "grantRolesToUser role with a tenant", cmd: bson.D{{Key: "grantRolesToUser", Value: "one"}, {Key: "roles", Value: bson.A{bson.D{{Key: "role", Value: "read"}, {Key: "db", Value: db}, {Key: "tenant", Value: bson.NewObjectID()}}}}}, users: -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := runCmd(client, db, tc.cmd)
			if tc.code != 0 {
				requireError(t, err, tc.code, tc.codeName, tc.msg)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.users < 0 {
				return
			}
			list, ok := r.Lookup("users").ArrayOK()
			if !ok {
				list, _ = r.Lookup("roles").ArrayOK()
			}
			if vals, _ := list.Values(); len(vals) != tc.users {
				t.Errorf("%d listed, want %d: %s", len(vals), tc.users, r)
			}
		})
	}
}

// TestUserCommandErrors: the user commands' checks, codes and messages as
// MongoDB 7.0 has them (commands/user_management_commands.cpp), in its
// order: a missing user is "User <user>@<db> not found" where the user's
// document is updated (updateUser, an empty name included) and "Could not
// find user" where the user is looked up first (grantRolesToUser,
// revokeRolesFromUser, updateUser's mechanisms without a password); a
// SCRAM-SHA-256 password goes through SASLprep, whose ICU errors are
// MongoDB's (50687, 50692), SCRAM-SHA-1 alone takes any password and a
// client's digest (digestPassword: false).
func TestUserCommandErrors(t *testing.T) {
	client, in := startServer(t)
	const db = "upd"
	if _, err := runCmd(client, db, bson.D{{Key: "createUser", Value: "ann"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{}}}); err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum([]byte("digested:mongo:secret"))
	for _, tc := range []struct {
		name     string
		db       string // db when empty
		cmd      bson.D
		code     int // 0: the command succeeds
		codeName string
		msg      string
	}{
		// users that do not exist
		{name: "updateUser missing", cmd: bson.D{{Key: "updateUser", Value: "not_found"}, {Key: "pwd", Value: "password"}}, code: 11, codeName: "UserNotFound", msg: "User not_found@upd not found"},
		{name: "updateUser empty name", cmd: bson.D{{Key: "updateUser", Value: ""}, {Key: "pwd", Value: "anewpassword"}}, code: 11, codeName: "UserNotFound", msg: "User @upd not found"},
		{name: "updateUser missing customData", cmd: bson.D{{Key: "updateUser", Value: "not_found"}, {Key: "customData", Value: bson.D{}}}, code: 11, codeName: "UserNotFound", msg: "User not_found@upd not found"},
		{name: "updateUser missing mechanisms", cmd: bson.D{{Key: "updateUser", Value: "not_found"}, {Key: "mechanisms", Value: bson.A{"SCRAM-SHA-1"}}}, code: 11, codeName: "UserNotFound", msg: `Could not find user "not_found" for db "upd"`},
		{name: "updateUser missing with a missing role", cmd: bson.D{{Key: "updateUser", Value: "not_found"}, {Key: "roles", Value: bson.A{"nosuch"}}}, code: 31, codeName: "RoleNotFound", msg: "Could not find role: nosuch@upd"},
		{name: "dropUser missing", cmd: bson.D{{Key: "dropUser", Value: "not_found"}}, code: 11, codeName: "UserNotFound", msg: "User 'not_found@upd' not found"},
		{name: "grantRolesToUser missing", cmd: bson.D{{Key: "grantRolesToUser", Value: "not_found"}, {Key: "roles", Value: bson.A{"read"}}}, code: 11, codeName: "UserNotFound", msg: `Could not find user "not_found" for db "upd"`},
		{name: "grantRolesToUser missing with a missing role", cmd: bson.D{{Key: "grantRolesToUser", Value: "not_found"}, {Key: "roles", Value: bson.A{"nosuch"}}}, code: 11, codeName: "UserNotFound", msg: `Could not find user "not_found" for db "upd"`},
		{name: "revokeRolesFromUser missing", cmd: bson.D{{Key: "revokeRolesFromUser", Value: "not_found"}, {Key: "roles", Value: bson.A{"read"}}}, code: 11, codeName: "UserNotFound", msg: `Could not find user "not_found" for db "upd"`},
		{name: "grantRolesToUser a missing role", cmd: bson.D{{Key: "grantRolesToUser", Value: "ann"}, {Key: "roles", Value: bson.A{"nosuch"}}}, code: 31, codeName: "RoleNotFound", msg: "Could not find role: nosuch@upd"},
		{name: "revokeRolesFromUser no roles", cmd: bson.D{{Key: "revokeRolesFromUser", Value: "ann"}, {Key: "roles", Value: bson.A{}}}, code: 2, codeName: "BadValue", msg: `revokeRolesFromUser command requires a non-empty "roles" array`},
		{name: "usersInfo missing", cmd: bson.D{{Key: "usersInfo", Value: "not_found"}}},
		// what updateUser changes
		{name: "updateUser nothing", cmd: bson.D{{Key: "updateUser", Value: "ann"}}, code: 2, codeName: "BadValue", msg: "Must specify at least one field to update in updateUser"},
		{name: "updateUser every mechanism it has", cmd: bson.D{{Key: "updateUser", Value: "ann"}, {Key: "mechanisms", Value: bson.A{"SCRAM-SHA-1", "SCRAM-SHA-256"}}}, code: 2, codeName: "BadValue", msg: "Must specify at least one field to update in updateUser"},
		{name: "updateUser no mechanisms", cmd: bson.D{{Key: "updateUser", Value: "ann"}, {Key: "mechanisms", Value: bson.A{}}}, code: 2, codeName: "BadValue", msg: "mechanisms field must not be empty"},
		{name: "updateUser a mechanism it lacks", cmd: bson.D{{Key: "updateUser", Value: "ann"}, {Key: "mechanisms", Value: bson.A{"bad"}}}, code: 2, codeName: "BadValue", msg: "mechanisms field must be a subset of previously set mechanisms"},
		{name: "updateUser no restrictions", cmd: bson.D{{Key: "updateUser", Value: "ann"}, {Key: "authenticationRestrictions", Value: bson.A{}}}},
		// passwords: SASLprep for SCRAM-SHA-256
		{name: "createUser empty password", cmd: bson.D{{Key: "createUser", Value: "empty_password_user"}, {Key: "roles", Value: bson.A{}}, {Key: "pwd", Value: ""}}, code: 50687, codeName: "Location50687", msg: "Error preflighting UTF-8 conversion: U_STRING_NOT_TERMINATED_WARNING"},
		{name: "createUser NUL in the password", cmd: bson.D{{Key: "createUser", Value: "bad_password_user"}, {Key: "roles", Value: bson.A{}}, {Key: "pwd", Value: "pass\x00word"}}, code: 50692, codeName: "Location50692", msg: "Error preflighting normalization: U_STRINGPREP_PROHIBITED_ERROR"},
		{name: "createUser unassigned character", cmd: bson.D{{Key: "createUser", Value: "bad_password_user"}, {Key: "roles", Value: bson.A{}}, {Key: "pwd", Value: "pass\u0221"}}, code: 50692, codeName: "Location50692", msg: "Error preflighting normalization: U_STRINGPREP_UNASSIGNED_ERROR"},
		{name: "createUser mixed directions", cmd: bson.D{{Key: "createUser", Value: "bad_password_user"}, {Key: "roles", Value: bson.A{}}, {Key: "pwd", Value: "\u05d0a"}}, code: 50692, codeName: "Location50692", msg: "Error preflighting normalization: U_STRINGPREP_CHECK_BIDI_ERROR"},
		{name: "createUser password mapped to nothing", cmd: bson.D{{Key: "createUser", Value: "bad_password_user"}, {Key: "roles", Value: bson.A{}}, {Key: "pwd", Value: "\u00ad"}}, code: 50692, codeName: "Location50692", msg: "Error preflighting normalization: U_STRING_NOT_TERMINATED_WARNING"},
		{name: "createUser password not UTF-8", cmd: bson.D{{Key: "createUser", Value: "bad_password_user"}, {Key: "roles", Value: bson.A{}}, {Key: "pwd", Value: "pass\xffword"}}, code: 2, codeName: "BadValue", msg: "Non UTF-8 data encountered"},
		{name: "updateUser empty password", cmd: bson.D{{Key: "updateUser", Value: "ann"}, {Key: "pwd", Value: ""}}, code: 50687, codeName: "Location50687", msg: "Error preflighting UTF-8 conversion: U_STRING_NOT_TERMINATED_WARNING"},
		{name: "updateUser NUL in the password", cmd: bson.D{{Key: "updateUser", Value: "ann"}, {Key: "pwd", Value: "pass\x00word"}}, code: 50692, codeName: "Location50692", msg: "Error preflighting normalization: U_STRINGPREP_PROHIBITED_ERROR"},
		{name: "updateUser missing, empty password", cmd: bson.D{{Key: "updateUser", Value: "not_found"}, {Key: "pwd", Value: ""}}, code: 50687, codeName: "Location50687", msg: "Error preflighting UTF-8 conversion: U_STRING_NOT_TERMINATED_WARNING"},
		{name: "createUser empty name and password", cmd: bson.D{{Key: "createUser", Value: ""}, {Key: "roles", Value: bson.A{}}, {Key: "pwd", Value: ""}}, code: 50687, codeName: "Location50687", msg: "Error preflighting UTF-8 conversion: U_STRING_NOT_TERMINATED_WARNING"},
		{name: "createUser empty name", cmd: bson.D{{Key: "createUser", Value: ""}, {Key: "roles", Value: bson.A{}}, {Key: "pwd", Value: "password"}}, code: 2, codeName: "BadValue", msg: "User document needs 'user' field to be non-empty"},
		// SCRAM-SHA-1 alone: no SASLprep
		{name: "createUser SCRAM-SHA-1 empty password", cmd: bson.D{{Key: "createUser", Value: "sha1_empty"}, {Key: "roles", Value: bson.A{}}, {Key: "pwd", Value: ""}, {Key: "mechanisms", Value: bson.A{"SCRAM-SHA-1"}}}},
		{name: "createUser SCRAM-SHA-1 NUL in the password", cmd: bson.D{{Key: "createUser", Value: "sha1_nul"}, {Key: "roles", Value: bson.A{}}, {Key: "pwd", Value: "pass\x00word"}, {Key: "mechanisms", Value: bson.A{"SCRAM-SHA-1"}}}},
		{name: "updateUser SCRAM-SHA-1 empty password", cmd: bson.D{{Key: "updateUser", Value: "ann"}, {Key: "pwd", Value: ""}, {Key: "mechanisms", Value: bson.A{"SCRAM-SHA-1"}}}},
		// digestPassword: false, SCRAM-SHA-1 only
		{name: "createUser digestPassword false", cmd: bson.D{{Key: "createUser", Value: "x"}, {Key: "roles", Value: bson.A{}}, {Key: "pwd", Value: "p"}, {Key: "digestPassword", Value: false}}, code: 2, codeName: "BadValue", msg: "Use of SCRAM-SHA-256 requires undigested passwords"},
		{name: "createUser digested SCRAM-SHA-1", cmd: bson.D{{Key: "createUser", Value: "digested"}, {Key: "roles", Value: bson.A{"read"}}, {Key: "pwd", Value: hex.EncodeToString(sum[:])}, {Key: "digestPassword", Value: false}, {Key: "mechanisms", Value: bson.A{"SCRAM-SHA-1"}}}},
		// createUser's other checks, in MongoDB's order
		{name: "createUser unknown mechanism", cmd: bson.D{{Key: "createUser", Value: "x"}, {Key: "roles", Value: bson.A{}}, {Key: "pwd", Value: "p"}, {Key: "mechanisms", Value: bson.A{"PLAIN", "BAD"}}}, code: 2, codeName: "BadValue", msg: "Unknown auth mechanism 'PLAIN'"},
		{name: "createUser mechanism not a string", cmd: bson.D{{Key: "createUser", Value: "x"}, {Key: "roles", Value: bson.A{}}, {Key: "pwd", Value: "p"}, {Key: "mechanisms", Value: bson.A{1}}}, code: 14, codeName: "TypeMismatch", msg: "BSON field 'createUser.mechanisms.0' is the wrong type 'int', expected type 'string'"},
		{name: "createUser no mechanisms, no password", cmd: bson.D{{Key: "createUser", Value: "x"}, {Key: "roles", Value: bson.A{}}, {Key: "mechanisms", Value: bson.A{}}}, code: 2, codeName: "BadValue", msg: "Must provide a 'pwd' field for all user documents, except those with '$external' as the user's source db"},
		{name: "createUser no mechanisms", cmd: bson.D{{Key: "createUser", Value: "x"}, {Key: "roles", Value: bson.A{}}, {Key: "pwd", Value: "p"}, {Key: "mechanisms", Value: bson.A{}}}, code: 2, codeName: "BadValue", msg: "mechanisms field must not be empty"},
		{name: "createUser NUL in the name", cmd: bson.D{{Key: "createUser", Value: "a\x00b"}, {Key: "roles", Value: bson.A{}}, {Key: "pwd", Value: "p"}}, code: 2, codeName: "BadValue", msg: "Username cannot contain NULL characters"},
		{name: "createUser in local", db: "local", cmd: bson.D{{Key: "createUser", Value: "x"}, {Key: "roles", Value: bson.A{}}, {Key: "pwd", Value: "p"}}, code: 2, codeName: "BadValue", msg: "Cannot create users in the local database"},
		{name: "createUser without roles", cmd: bson.D{{Key: "createUser", Value: "x"}, {Key: "pwd", Value: ""}}, code: 40414, codeName: "Location40414", msg: "BSON field 'createUser.roles' is missing but a required field"},
		{name: "createUser a missing role before the user exists", cmd: bson.D{{Key: "createUser", Value: "ann"}, {Key: "roles", Value: bson.A{"nosuch"}}, {Key: "pwd", Value: "p"}}, code: 31, codeName: "RoleNotFound", msg: "Could not find role: nosuch@upd"},
		{name: "createUser exists", cmd: bson.D{{Key: "createUser", Value: "ann"}, {Key: "roles", Value: bson.A{}}, {Key: "pwd", Value: "p"}}, code: 51003, codeName: "Location51003", msg: `User "ann@upd" already exists`},
		// built-in roles exist on no empty database name nor $external
		// (builtin_roles.tpl.cpp's isValidDB)
		{name: "createUser read on the empty database", cmd: bson.D{{Key: "createUser", Value: "x"}, {Key: "roles", Value: bson.A{bson.D{{Key: "role", Value: "read"}, {Key: "db", Value: ""}}}}, {Key: "pwd", Value: "p"}}, code: 31, codeName: "RoleNotFound", msg: "Could not find role: read@"},
		{name: "grantRolesToUser read on $external", cmd: bson.D{{Key: "grantRolesToUser", Value: "ann"}, {Key: "roles", Value: bson.A{bson.D{{Key: "role", Value: "read"}, {Key: "db", Value: "$external"}}}}}, code: 31, codeName: "RoleNotFound", msg: "Could not find role: read@$external"},
		{name: "revokeRolesFromUser read on the empty database", cmd: bson.D{{Key: "revokeRolesFromUser", Value: "ann"}, {Key: "roles", Value: bson.A{bson.D{{Key: "role", Value: "read"}, {Key: "db", Value: ""}}}}}, code: 31, codeName: "RoleNotFound", msg: "Could not find role: read@"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.db
			if d == "" {
				d = db
			}
			_, err := runCmd(client, d, tc.cmd)
			if tc.code != 0 {
				requireError(t, err, tc.code, tc.codeName, tc.msg)
			} else if err != nil {
				t.Fatal(err)
			}
		})
	}
	// a client's digest is SCRAM-SHA-1's key material: the user logs in
	// with the password the digest was made of
	if err := tryConnect(t, in, options.Credential{Username: "digested", Password: "secret", AuthSource: db, AuthMechanism: "SCRAM-SHA-1"}); err != nil {
		t.Errorf("login with a digested password: %v", err)
	}
	// ann's SCRAM-SHA-256 credential is gone, its SCRAM-SHA-1 one takes
	// the empty password
	r, err := runCmd(client, db, bson.D{{Key: "usersInfo", Value: "ann"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Lookup("users", "0", "mechanisms").String(); got != `["SCRAM-SHA-1"]` {
		t.Errorf("ann's mechanisms %s", got)
	}
}

// TestRoleCommandErrors: the role commands' checks, codes and messages,
// in MongoDB's order (user_management_commands.cpp: createRole refuses
// local and $external, checkOkayToGrantRolesToRole, the non-empty arrays
// of the grant and revoke commands, built-in roles not modified).
func TestRoleCommandErrors(t *testing.T) {
	client, _ := startServer(t)
	const db = "rolerr"
	priv := func(db, coll string, actions ...string) bson.D {
		a := bson.A{}
		for _, x := range actions {
			a = append(a, x)
		}
		return bson.D{{Key: "resource", Value: bson.D{{Key: "db", Value: db}, {Key: "collection", Value: coll}}}, {Key: "actions", Value: a}}
	}
	for _, cmd := range []bson.D{
		{{Key: "createRole", Value: "r"}, {Key: "privileges", Value: bson.A{}}, {Key: "roles", Value: bson.A{"read"}}},
		{{Key: "createRole", Value: "r2"}, {Key: "privileges", Value: bson.A{}}, {Key: "roles", Value: bson.A{"r"}}},
	} {
		if _, err := runCmd(client, db, cmd); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name     string
		db       string // db when empty
		cmd      bson.D
		code     int // 0: the command succeeds
		codeName string
		msg      string
	}{
		{name: "createRole in local", db: "local", cmd: bson.D{{Key: "createRole", Value: "x"}, {Key: "privileges", Value: bson.A{}}, {Key: "roles", Value: bson.A{}}}, code: 2, codeName: "BadValue", msg: "Cannot create roles in the local database"},
		{name: "createRole in $external", db: "$external", cmd: bson.D{{Key: "createRole", Value: "x"}, {Key: "privileges", Value: bson.A{}}, {Key: "roles", Value: bson.A{}}}, code: 2, codeName: "BadValue", msg: "Cannot create roles in the $external database"},
		{name: "createRole empty name", cmd: bson.D{{Key: "createRole", Value: ""}, {Key: "privileges", Value: bson.A{}}, {Key: "roles", Value: bson.A{}}}, code: 2, codeName: "BadValue", msg: "Role name must be non-empty"},
		{name: "createRole itself", cmd: bson.D{{Key: "createRole", Value: "x"}, {Key: "privileges", Value: bson.A{}}, {Key: "roles", Value: bson.A{"x"}}}, code: 49, codeName: "InvalidRoleModification", msg: "Cannot grant role x@rolerr to itself."},
		{name: "createRole a role of another database", cmd: bson.D{{Key: "createRole", Value: "x"}, {Key: "privileges", Value: bson.A{}}, {Key: "roles", Value: bson.A{bson.D{{Key: "role", Value: "read"}, {Key: "db", Value: "other"}}}}}, code: 49, codeName: "InvalidRoleModification", msg: "Roles on the 'rolerr' database cannot be granted roles from other databases"},
		{name: "createRole a missing role", cmd: bson.D{{Key: "createRole", Value: "x"}, {Key: "privileges", Value: bson.A{}}, {Key: "roles", Value: bson.A{"nosuch"}}}, code: 31, codeName: "RoleNotFound", msg: "Cannot grant roles to 'x@rolerr': Could not find role: nosuch@rolerr"},
		{name: "createRole a privilege on another database", cmd: bson.D{{Key: "createRole", Value: "x"}, {Key: "privileges", Value: bson.A{priv("other", "", "find")}}, {Key: "roles", Value: bson.A{}}}, code: 49, codeName: "InvalidRoleModification", msg: "Roles on the 'rolerr' database cannot be granted privileges that target other databases or the cluster"},
		{name: "createRole exists, a missing role first", cmd: bson.D{{Key: "createRole", Value: "r"}, {Key: "privileges", Value: bson.A{}}, {Key: "roles", Value: bson.A{"nosuch"}}}, code: 31, codeName: "RoleNotFound", msg: "Cannot grant roles to 'r@rolerr': Could not find role: nosuch@rolerr"},
		{name: "createRole exists", cmd: bson.D{{Key: "createRole", Value: "r"}, {Key: "privileges", Value: bson.A{}}, {Key: "roles", Value: bson.A{}}}, code: 51002, codeName: "Location51002", msg: `Role "r@rolerr" already exists`},
		{name: "grantRolesToRole a cycle", cmd: bson.D{{Key: "grantRolesToRole", Value: "r"}, {Key: "roles", Value: bson.A{"r2"}}}, code: 49, codeName: "InvalidRoleModification", msg: "Granting roles to r@rolerr would introduce a cycle in the role graph"},
		{name: "updateRole a cycle", cmd: bson.D{{Key: "updateRole", Value: "r"}, {Key: "roles", Value: bson.A{"r2"}}}, code: 49, codeName: "InvalidRoleModification", msg: "Granting roles to r@rolerr would introduce a cycle in the role graph"},
		{name: "grantRolesToRole itself", cmd: bson.D{{Key: "grantRolesToRole", Value: "r"}, {Key: "roles", Value: bson.A{"r"}}}, code: 49, codeName: "InvalidRoleModification", msg: "Cannot grant role r@rolerr to itself."},
		{name: "grantRolesToRole missing role", cmd: bson.D{{Key: "grantRolesToRole", Value: "nosuch"}, {Key: "roles", Value: bson.A{"read"}}}, code: 31, codeName: "RoleNotFound", msg: "Could not find role: nosuch@rolerr"},
		{name: "grantRolesToRole no roles", cmd: bson.D{{Key: "grantRolesToRole", Value: "r"}, {Key: "roles", Value: bson.A{}}}, code: 2, codeName: "BadValue", msg: `grantRolesToRole command requires a non-empty "roles" array`},
		{name: "revokeRolesFromRole no roles", cmd: bson.D{{Key: "revokeRolesFromRole", Value: "r"}, {Key: "roles", Value: bson.A{}}}, code: 2, codeName: "BadValue", msg: `revokeRolesFromRole command requires a non-empty "roles" array`},
		{name: "grantPrivilegesToRole no privileges", cmd: bson.D{{Key: "grantPrivilegesToRole", Value: "r"}, {Key: "privileges", Value: bson.A{}}}, code: 2, codeName: "BadValue", msg: `grantPrivilegesToRole command requires a non-empty "privileges" array`},
		{name: "revokePrivilegesFromRole no privileges", cmd: bson.D{{Key: "revokePrivilegesFromRole", Value: "r"}, {Key: "privileges", Value: bson.A{}}}, code: 2, codeName: "BadValue", msg: `revokePrivilegesFromRole command requires a non-empty "privileges" array`},
		{name: "revokePrivilegesFromRole on another database", cmd: bson.D{{Key: "revokePrivilegesFromRole", Value: "r"}, {Key: "privileges", Value: bson.A{priv("other", "", "find")}}}},
		{name: "revokeRolesFromRole a missing role", cmd: bson.D{{Key: "revokeRolesFromRole", Value: "r"}, {Key: "roles", Value: bson.A{"nosuch"}}}},
		{name: "grantPrivilegesToRole built-in", cmd: bson.D{{Key: "grantPrivilegesToRole", Value: "read"}, {Key: "privileges", Value: bson.A{priv(db, "", "find")}}}, code: 2, codeName: "BadValue", msg: "read@rolerr is a built-in role and cannot be modified"},
		{name: "revokePrivilegesFromRole built-in", cmd: bson.D{{Key: "revokePrivilegesFromRole", Value: "read"}, {Key: "privileges", Value: bson.A{priv(db, "", "find")}}}, code: 2, codeName: "BadValue", msg: "read@rolerr is a built-in role and cannot be modified"},
		{name: "grantRolesToRole built-in", cmd: bson.D{{Key: "grantRolesToRole", Value: "read"}, {Key: "roles", Value: bson.A{"r"}}}, code: 2, codeName: "BadValue", msg: "read@rolerr is a built-in role and cannot be modified"},
		{name: "revokeRolesFromRole built-in", cmd: bson.D{{Key: "revokeRolesFromRole", Value: "read"}, {Key: "roles", Value: bson.A{"r"}}}, code: 2, codeName: "BadValue", msg: "read@rolerr is a built-in role and cannot be modified"},
		{name: "dropRole built-in", cmd: bson.D{{Key: "dropRole", Value: "read"}}, code: 2, codeName: "BadValue", msg: "read@rolerr is a built-in role and cannot be modified"},
		{name: "updateRole built-in", cmd: bson.D{{Key: "updateRole", Value: "read"}, {Key: "roles", Value: bson.A{}}}, code: 31, codeName: "RoleNotFound", msg: "Role read@rolerr not found"},
		{name: "updateRole missing", cmd: bson.D{{Key: "updateRole", Value: "nosuch"}, {Key: "roles", Value: bson.A{}}}, code: 31, codeName: "RoleNotFound", msg: "Could not find role: nosuch@rolerr"},
		{name: "dropRole missing", cmd: bson.D{{Key: "dropRole", Value: "nosuch"}}, code: 31, codeName: "RoleNotFound", msg: "Could not find role: nosuch@rolerr"},
		// privileges as Privilege::resolvePrivilegeWithTenant checks them
		// (role_management_commands_edge_cases.js)
		{name: "createRole no actions", cmd: bson.D{{Key: "createRole", Value: "x"}, {Key: "privileges", Value: bson.A{priv(db, "foo")}}, {Key: "roles", Value: bson.A{}}}, code: 2, codeName: "BadValue", msg: "'actions' field of privilege resource must not be empty"},
		{name: "grantPrivilegesToRole no actions", cmd: bson.D{{Key: "grantPrivilegesToRole", Value: "r"}, {Key: "privileges", Value: bson.A{priv(db, "")}}}, code: 2, codeName: "BadValue", msg: "'actions' field of privilege resource must not be empty"},
		{name: "revokePrivilegesFromRole no actions", cmd: bson.D{{Key: "revokePrivilegesFromRole", Value: "r"}, {Key: "privileges", Value: bson.A{priv(db, "")}}}, code: 2, codeName: "BadValue", msg: "'actions' field of privilege resource must not be empty"},
		{name: "createRole on $cmd", cmd: bson.D{{Key: "createRole", Value: "x"}, {Key: "privileges", Value: bson.A{priv(db, "$cmd", "find")}}, {Key: "roles", Value: bson.A{}}}, code: 2, codeName: "BadValue", msg: "'$cmd' is not a valid collection name"},
		{name: "grantPrivilegesToRole a database alone", cmd: bson.D{{Key: "grantPrivilegesToRole", Value: "r"}, {Key: "privileges", Value: bson.A{bson.D{{Key: "resource", Value: bson.D{{Key: "db", Value: db}}}, {Key: "actions", Value: bson.A{"find"}}}}}}, code: 2, codeName: "BadValue", msg: "resource pattern must contain 'collection' or 'systemBuckets' specifier"},
		{name: "grantPrivilegesToRole cluster false", cmd: bson.D{{Key: "grantPrivilegesToRole", Value: "r"}, {Key: "privileges", Value: bson.A{bson.D{{Key: "resource", Value: bson.D{{Key: "cluster", Value: false}}}, {Key: "actions", Value: bson.A{"find"}}}}}}, code: 2, codeName: "BadValue", msg: "resource: {cluster: false} must be true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.db
			if d == "" {
				d = db
			}
			_, err := runCmd(client, d, tc.cmd)
			if tc.code != 0 {
				requireError(t, err, tc.code, tc.codeName, tc.msg)
			} else if err != nil {
				t.Fatal(err)
			}
		})
	}
	// rolesInfo's showPrivileges: "asUserFragment" shows the roles as a
	// user holding them (role_management_commands_lib.js)
	r, err := runCmd(client, db, bson.D{{Key: "rolesInfo", Value: bson.A{"r2", "r"}}, {Key: "showPrivileges", Value: "asUserFragment"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Lookup("userFragment", "roles").String(); got != `[{"role": "r2","db": "rolerr"},{"role": "r","db": "rolerr"}]` {
		t.Errorf("userFragment.roles %s", got)
	}
	inherited := r.Lookup("userFragment", "inheritedRoles").String()
	for _, want := range []string{`{"role": "r2","db": "rolerr"}`, `{"role": "r","db": "rolerr"}`, `{"role": "read","db": "rolerr"}`} {
		if !strings.Contains(inherited, want) {
			t.Errorf("userFragment.inheritedRoles %s lacks %s", inherited, want)
		}
	}
	if privs, ok := r.Lookup("userFragment", "inheritedPrivileges").ArrayOK(); !ok || len(mustValues(privs)) == 0 {
		t.Errorf("userFragment.inheritedPrivileges %s", r)
	}
	if _, err := r.LookupErr("roles"); err == nil {
		t.Errorf("asUserFragment answers roles too: %s", r)
	}
	_, err = runCmd(client, db, bson.D{{Key: "rolesInfo", Value: 1}, {Key: "showPrivileges", Value: "asUserFragment"}})
	requireError(t, err, 20, "IllegalOperation", "Cannot get user fragment for all roles in a database")
	// showAuthenticationRestrictions: each role's own and inherited
	// restrictions, empty arrays for roles without any
	r, err = runCmd(client, db, bson.D{{Key: "rolesInfo", Value: bson.A{"r", "read"}}, {Key: "showAuthenticationRestrictions", Value: true}})
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []string{"0", "1"} {
		for _, f := range []string{"authenticationRestrictions", "inheritedAuthenticationRestrictions"} {
			if got := r.Lookup("roles", i, f).String(); got != "[]" {
				t.Errorf("rolesInfo showAuthenticationRestrictions: role %s %s %q: %s", i, f, got, r)
			}
		}
	}
}

// TestUpdateUserAuthorization: updateUser's checks, as MongoDB's
// checkAuthForTypedCommand(UpdateUserCommand): a user holding
// changeOwnPassword / changeOwnCustomData on its database changes its own
// password and customData, not another's nor its roles; setting roles
// needs revokeRole on any role of the system, so a database's userAdmin
// may not; grantRole on admin covers privileges on the cluster.
func TestUpdateUserAuthorization(t *testing.T) {
	root, in := startAuthServer(t)
	must := func(db string, cmd bson.D) {
		t.Helper()
		if _, err := runCmd(root, db, cmd); err != nil {
			t.Fatal(err)
		}
	}
	must("admin", bson.D{{Key: "createRole", Value: "changeOwn"}, {Key: "roles", Value: bson.A{}}, {Key: "privileges", Value: bson.A{
		bson.D{{Key: "resource", Value: bson.D{{Key: "db", Value: "app"}, {Key: "collection", Value: ""}}}, {Key: "actions", Value: bson.A{"changeOwnPassword", "changeOwnCustomData"}}}}}})
	must("app", bson.D{{Key: "createUser", Value: "self"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{bson.D{{Key: "role", Value: "changeOwn"}, {Key: "db", Value: "admin"}}}}})
	must("app", bson.D{{Key: "createUser", Value: "other"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{}}})
	must("app", bson.D{{Key: "createUser", Value: "appAdmin"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{"userAdmin"}}})
	must("admin", bson.D{{Key: "createUser", Value: "adminAdmin"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{"userAdmin"}}})
	self := connectAs(t, in, "self", "pw", "app", "")
	for _, tc := range []struct {
		c   *mongo.Client
		db  string
		cmd bson.D
		ok  bool
	}{
		{self, "app", bson.D{{Key: "updateUser", Value: "self"}, {Key: "pwd", Value: "pw2"}}, true},
		{self, "app", bson.D{{Key: "updateUser", Value: "self"}, {Key: "customData", Value: bson.D{{Key: "a", Value: 1}}}}, true},
		{self, "app", bson.D{{Key: "updateUser", Value: "self"}, {Key: "roles", Value: bson.A{}}}, false},
		{self, "app", bson.D{{Key: "updateUser", Value: "other"}, {Key: "pwd", Value: "x"}}, false},
		{connectAs(t, in, "appAdmin", "pw", "app", ""), "app", bson.D{{Key: "updateUser", Value: "other"}, {Key: "roles", Value: bson.A{"read"}}}, false},
		{connectAs(t, in, "adminAdmin", "pw", "admin", ""), "admin", bson.D{{Key: "createRole", Value: "clusterReader"}, {Key: "roles", Value: bson.A{}}, {Key: "privileges", Value: bson.A{
			bson.D{{Key: "resource", Value: bson.D{{Key: "cluster", Value: true}}}, {Key: "actions", Value: bson.A{"serverStatus"}}}}}}, true},
	} {
		_, err := runCmd(tc.c, tc.db, tc.cmd)
		if tc.ok && err != nil {
			t.Errorf("%v: %v", tc.cmd, err)
		} else if !tc.ok {
			requireCode(t, err, 13, "Unauthorized")
		}
	}
	if err := tryConnect(t, in, options.Credential{Username: "self", Password: "pw2", AuthSource: "app"}); err != nil {
		t.Errorf("self's new password: %v", err)
	}
	// rolesInfo without viewRole: the roles granted to oneself only, not
	// those they inherit (User::hasRole)
	must("app", bson.D{{Key: "createRole", Value: "inner"}, {Key: "roles", Value: bson.A{}}, {Key: "privileges", Value: bson.A{}}})
	must("app", bson.D{{Key: "createRole", Value: "outer"}, {Key: "roles", Value: bson.A{"inner"}}, {Key: "privileges", Value: bson.A{}}})
	must("app", bson.D{{Key: "createUser", Value: "holder"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{"outer"}}})
	holder := connectAs(t, in, "holder", "pw", "app", "")
	if _, err := runCmd(holder, "app", bson.D{{Key: "rolesInfo", Value: "outer"}}); err != nil {
		t.Errorf("rolesInfo of its own role: %v", err)
	}
	_, err := runCmd(holder, "app", bson.D{{Key: "rolesInfo", Value: "inner"}})
	requireCode(t, err, 13, "Unauthorized")
}

// mustValues are an array's values (none when it is malformed).
func mustValues(a bson.RawArray) []bson.RawValue {
	v, _ := a.Values()
	return v
}

// TestUnauthorizedMessage: Unauthorized names the command as MongoDB's
// BSONObj::toString shows it ({ find: "c", ... }), its password hidden.
func TestUnauthorizedMessage(t *testing.T) {
	root, in := startAuthServer(t)
	if _, err := runCmd(root, "admin", bson.D{{Key: "createUser", Value: "nobody"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{}}}); err != nil {
		t.Fatal(err)
	}
	c := connectAs(t, in, "nobody", "pw", "admin", "")
	for _, tc := range []struct {
		cmd    bson.D
		prefix string
	}{
		{bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "a", Value: int32(1)}}}}, `not authorized on app to execute command { find: "c", filter: { a: 1 }, `},
		{bson.D{{Key: "createUser", Value: "x"}, {Key: "pwd", Value: "secret"}, {Key: "roles", Value: bson.A{}}}, `not authorized on app to execute command { createUser: "x", pwd: "xxx", roles: [], `},
	} {
		_, err := runCmd(c, "app", tc.cmd)
		var ce mongo.CommandError
		if !errors.As(err, &ce) || ce.Code != 13 || !strings.HasPrefix(ce.Message, tc.prefix) || !strings.Contains(ce.Message, `$db: "app"`) {
			t.Errorf("%v: got %v, want Unauthorized %q...", tc.cmd, err, tc.prefix)
		}
	}
}

// TestAuthenticationMechanismsParameter: authenticationMechanisms, set at
// startup, is honoured as MongoDB honours it: getParameter reports it,
// hello's saslSupportedMechs names only the mechanisms it enables (so
// that the driver picks one of them), createUser makes credentials for
// those only and refuses another ("<mech> not supported in
// authMechanisms"), and an authentication with another fails:
// MechanismUnavailable for one MongoDB does not count at all
// (SCRAM-SHA-1, PLAIN), AuthenticationFailed for SCRAM-SHA-256, which it
// counts and whose first step then fails.
func TestAuthenticationMechanismsParameter(t *testing.T) {
	start := func(mechs ...string) (*mongo.Client, *instance.Instance) {
		cfg := defaultConfig()
		cfg.Auth = true
		cfg.AuthenticationMechanisms = mechs
		in := startInstance(t, cfg)
		createRootUser(t, in)
		// the driver picks its mechanism from saslSupportedMechs
		return connectAs(t, in, rootUser, rootPassword, "admin", ""), in
	}
	sha1, in1 := start("SCRAM-SHA-1")
	sha256, in256 := start("SCRAM-SHA-256", "MONGODB-X509")
	for _, tc := range []struct {
		name     string
		client   *mongo.Client
		db       string
		cmd      bson.D
		want     string // the reply's field, as JSON, when the command succeeds
		field    string
		code     int
		codeName string
		msg      string
	}{
		{name: "getParameter", client: sha1, db: "admin", cmd: bson.D{{Key: "getParameter", Value: 1}, {Key: "authenticationMechanisms", Value: 1}}, field: "authenticationMechanisms", want: `["SCRAM-SHA-1"]`},
		{name: "getParameter showDetails", client: sha256, db: "admin", cmd: bson.D{{Key: "getParameter", Value: bson.D{{Key: "showDetails", Value: true}}}, {Key: "authenticationMechanisms", Value: 1}}, field: "authenticationMechanisms", want: `{"value": ["SCRAM-SHA-256","MONGODB-X509"],"settableAtRuntime": false,"settableAtStartup": true}`},
		{name: "setParameter", client: sha1, db: "admin", cmd: bson.D{{Key: "setParameter", Value: 1}, {Key: "authenticationMechanisms", Value: "SCRAM-SHA-256"}}, code: 20, codeName: "IllegalOperation", msg: "not allowed to change [authenticationMechanisms] at runtime"},
		{name: "saslSupportedMechs SCRAM-SHA-1", client: sha1, db: "admin", cmd: bson.D{{Key: "hello", Value: 1}, {Key: "saslSupportedMechs", Value: "admin." + rootUser}}, field: "saslSupportedMechs", want: `["SCRAM-SHA-1"]`},
		{name: "saslSupportedMechs SCRAM-SHA-256", client: sha256, db: "admin", cmd: bson.D{{Key: "hello", Value: 1}, {Key: "saslSupportedMechs", Value: "admin." + rootUser}}, field: "saslSupportedMechs", want: `["SCRAM-SHA-256"]`},
		{name: "createUser default credentials", client: sha1, db: "app", cmd: bson.D{{Key: "createUser", Value: "ann"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{}}}},
		{name: "usersInfo mechanisms", client: sha1, db: "app", cmd: bson.D{{Key: "usersInfo", Value: "ann"}}, field: "users.0.mechanisms", want: `["SCRAM-SHA-1"]`},
		{name: "createUser a disabled mechanism", client: sha1, db: "app", cmd: bson.D{{Key: "createUser", Value: "bob"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{}}, {Key: "mechanisms", Value: bson.A{"SCRAM-SHA-1", "SCRAM-SHA-256"}}}, code: 2, codeName: "BadValue", msg: "SCRAM-SHA-256 not supported in authMechanisms"},
		{name: "createUser without SASLprep", client: sha1, db: "app", cmd: bson.D{{Key: "createUser", Value: "cat"}, {Key: "pwd", Value: ""}, {Key: "roles", Value: bson.A{}}}},
		{name: "updateUser a disabled mechanism", client: sha256, db: "admin", cmd: bson.D{{Key: "updateUser", Value: rootUser}, {Key: "pwd", Value: "pw"}, {Key: "mechanisms", Value: bson.A{"SCRAM-SHA-1"}}}, code: 2, codeName: "BadValue", msg: "SCRAM-SHA-1 not supported in authMechanisms"},
		{name: "saslStart SCRAM-SHA-1", client: sha256, db: "admin", cmd: bson.D{{Key: "saslStart", Value: 1}, {Key: "mechanism", Value: "SCRAM-SHA-1"}, {Key: "payload", Value: bson.Binary{Data: []byte("n,,n=root,r=abcdefghijkl")}}}, code: 334, codeName: "MechanismUnavailable", msg: "Received authentication for mechanism SCRAM-SHA-1 which is not enabled"},
		{name: "saslStart SCRAM-SHA-256", client: sha1, db: "admin", cmd: bson.D{{Key: "saslStart", Value: 1}, {Key: "mechanism", Value: "SCRAM-SHA-256"}, {Key: "payload", Value: bson.Binary{Data: []byte("n,,n=root,r=abcdefghijkl")}}}, code: 18, codeName: "AuthenticationFailed", msg: "Authentication failed."},
		{name: "saslStart PLAIN", client: sha1, db: "admin", cmd: bson.D{{Key: "saslStart", Value: 1}, {Key: "mechanism", Value: "PLAIN"}, {Key: "payload", Value: bson.Binary{Data: []byte("\x00root\x00pw")}}}, code: 334, codeName: "MechanismUnavailable", msg: "Received authentication for mechanism PLAIN which is not enabled"},
		{name: "authenticate PLAIN", client: sha1, db: "$external", cmd: bson.D{{Key: "authenticate", Value: 1}, {Key: "mechanism", Value: "PLAIN"}}, code: 334, codeName: "MechanismUnavailable", msg: "Received authentication for mechanism PLAIN which is not enabled"},
		{name: "authenticate SCRAM-SHA-1", client: sha1, db: "admin", cmd: bson.D{{Key: "authenticate", Value: 1}, {Key: "mechanism", Value: "SCRAM-SHA-1"}}, code: 2, codeName: "BadValue", msg: "Unsupported mechanism: SCRAM-SHA-1"},
		{name: "authenticate without a mechanism", client: sha1, db: "$external", cmd: bson.D{{Key: "authenticate", Value: 1}}, code: 2, codeName: "BadValue", msg: "Auth mechanism not specified"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := runCmd(tc.client, tc.db, tc.cmd)
			if tc.code != 0 {
				requireError(t, err, tc.code, tc.codeName, tc.msg)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.field != "" {
				if got := r.Lookup(strings.Split(tc.field, ".")...).String(); got != tc.want {
					t.Errorf("%s %s, want %s", tc.field, got, tc.want)
				}
			}
		})
	}
	// through the driver: a mechanism left out fails
	requireCode(t, tryConnect(t, in1, options.Credential{Username: rootUser, Password: rootPassword, AuthSource: "admin", AuthMechanism: "SCRAM-SHA-256"}), 18, "AuthenticationFailed")
	requireCode(t, tryConnect(t, in256, options.Credential{Username: rootUser, Password: rootPassword, AuthSource: "admin", AuthMechanism: "SCRAM-SHA-1"}), 334, "MechanismUnavailable")
	if err := tryConnect(t, in1, options.Credential{Username: "ann", Password: "pw", AuthSource: "app"}); err != nil {
		t.Errorf("ann, whose only credential is SCRAM-SHA-1's: %v", err)
	}
}

// TestMergeAuthzCollections: mongorestore's internal command merges the
// users of a temporary collection into admin.system.users: without drop
// it adds those missing and keeps the others as they are; with drop it
// replaces those of the same name and removes the database's users the
// temporary collection does not hold.
func TestMergeAuthzCollections(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	admin := client.Database("admin")
	for _, u := range []string{"u1", "u2"} {
		if err := client.Database("m").RunCommand(ctx, bson.D{{Key: "createUser", Value: u}, {Key: "pwd", Value: "p"}, {Key: "roles", Value: bson.A{}}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	var u2 bson.D
	if err := admin.Collection("system.users").FindOne(ctx, bson.D{{Key: "_id", Value: "m.u2"}}).Decode(&u2); err != nil {
		t.Fatal(err)
	}
	with := func(d bson.D, key string, v any) bson.D {
		out := bson.D{}
		for _, e := range d {
			if e.Key != key {
				out = append(out, e)
			}
		}
		return append(out, bson.E{Key: key, Value: v})
	}
	u3 := with(with(u2, "_id", "m.u3"), "user", "u3")
	u1 := with(with(with(u2, "_id", "m.u1"), "user", "u1"), "customData", bson.D{{Key: "v", Value: 2}})
	if _, err := admin.Collection("tempusers").InsertMany(ctx, []any{u1, u3}); err != nil {
		t.Fatal(err)
	}
	users := func() map[string]bool {
		t.Helper()
		cur, err := admin.Collection("system.users").Find(ctx, bson.D{{Key: "db", Value: "m"}})
		if err != nil {
			t.Fatal(err)
		}
		var docs []bson.Raw
		if err := cur.All(ctx, &docs); err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, d := range docs {
			out[d.Lookup("user").StringValue()] = d.Lookup("customData").Type != 0
		}
		return out
	}
	merge := func(drop bool) {
		t.Helper()
		if err := admin.RunCommand(ctx, bson.D{{Key: "_mergeAuthzCollections", Value: 1}, {Key: "tempUsersCollection", Value: "admin.tempusers"}, {Key: "db", Value: "m"}, {Key: "drop", Value: drop},
			{Key: "writeConcern", Value: bson.D{{Key: "w", Value: "majority"}}}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	merge(false)
	if got, want := users(), map[string]bool{"u1": false, "u2": false, "u3": false}; !maps.Equal(got, want) {
		t.Fatalf("merged without drop: users (with customData) %v, want %v", got, want)
	}
	merge(true)
	if got, want := users(), map[string]bool{"u1": true, "u3": false}; !maps.Equal(got, want) {
		t.Fatalf("merged with drop: users (with customData) %v, want %v", got, want)
	}
	err := client.Database("m").RunCommand(ctx, bson.D{{Key: "_mergeAuthzCollections", Value: 1}, {Key: "db", Value: "m"}}).Err()
	requireCode(t, err, 13, "Unauthorized")
}

// TestAuthStableAPIStrict: saslStart, saslContinue and authenticate are in
// Stable API version 1, and drivers send the declared API parameters with
// them (versioned-api spec), so a client declaring apiStrict logs in with
// either SCRAM mechanism, and saslStart also runs outside the handshake.
func TestAuthStableAPIStrict(t *testing.T) {
	_, in := startAuthServer(t)
	ctx := context.Background()
	strict := options.Client().SetServerAPIOptions(options.ServerAPI(options.ServerAPIVersion1).SetStrict(true))
	for _, mech := range []string{"SCRAM-SHA-1", "SCRAM-SHA-256"} {
		c := connectAs(t, in, rootUser, rootPassword, "admin", mech, strict)
		if _, err := c.Database("app").Collection("c").InsertOne(ctx, bson.D{{Key: "x", Value: 1}}); err != nil {
			t.Errorf("%s: %v", mech, err)
		}
	}
	anon := connect(t, in, options.Client().SetDirect(true), strict)
	reply, err := runCmd(anon, "admin", bson.D{
		{Key: "saslStart", Value: 1}, {Key: "mechanism", Value: "SCRAM-SHA-256"},
		{Key: "payload", Value: bson.Binary{Data: []byte("n,,n=" + rootUser + ",r=abcdefghijklmnop")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if reply.Lookup("done").Boolean() || reply.Lookup("conversationId").Type != bson.TypeInt32 {
		t.Errorf("saslStart reply %s", reply)
	}
	// authenticate is in version 1 too: with no client certificate,
	// MONGODB-X509 fails for that, not for the API.
	_, err = runCmd(anon, "$external", bson.D{{Key: "authenticate", Value: 1}, {Key: "mechanism", Value: "MONGODB-X509"}})
	var ce mongo.CommandError
	if !errors.As(err, &ce) || ce.Code == 323 {
		t.Errorf("authenticate: %v", err)
	}
}

// TestBypassDocumentValidationPrivilege: a user without the
// bypassDocumentValidation action (readWrite) may not bypass a validator,
// however the flag is spelled (1 is true: shouldBypassDocumentValidationForCommand),
// through mapReduce's output (mr::addPrivilegesRequiredForMapReduce), nor
// through $out; the action is needed on the collection written, so an
// aggregation without $out may carry the flag (getPrivilegesForAggregate).
func TestBypassDocumentValidationPrivilege(t *testing.T) {
	root, in := startAuthServer(t)
	ctx := context.Background()
	app := root.Database("app")
	if err := app.CreateCollection(ctx, "v", options.CreateCollection().SetValidator(bson.D{{Key: "a", Value: bson.D{{Key: "$exists", Value: true}}}})); err != nil {
		t.Fatal(err)
	}
	if _, err := app.Collection("src").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := runCmd(root, "app", bson.D{{Key: "createUser", Value: "rw"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{"readWrite"}}}); err != nil {
		t.Fatal(err)
	}
	c := connectAs(t, in, "rw", "pw", "app", "")
	for _, cmd := range []bson.D{
		{{Key: "insert", Value: "v"}, {Key: "documents", Value: bson.A{bson.D{}}}, {Key: "bypassDocumentValidation", Value: 1}},
		{{Key: "findAndModify", Value: "v"}, {Key: "query", Value: bson.D{}}, {Key: "update", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "b", Value: 1}}}}}, {Key: "upsert", Value: true}, {Key: "bypassDocumentValidation", Value: 1.5}},
		{{Key: "mapReduce", Value: "src"}, {Key: "map", Value: "function() { emit(this._id, 1) }"}, {Key: "reduce", Value: "function(k, v) { return 1 }"}, {Key: "out", Value: bson.D{{Key: "replace", Value: "v"}}}, {Key: "bypassDocumentValidation", Value: true}},
		{{Key: "aggregate", Value: "src"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$out", Value: "v"}}}}, {Key: "cursor", Value: bson.D{}}, {Key: "bypassDocumentValidation", Value: true}},
	} {
		if _, err := runCmd(c, "app", cmd); serverCode(err) != 13 {
			t.Errorf("%v: %v, want Unauthorized", cmd, err)
		}
	}
	if n, _ := app.Collection("v").CountDocuments(ctx, bson.D{}); n != 0 {
		t.Errorf("%d documents bypassed the validator", n)
	}
	if _, err := runCmd(c, "app", bson.D{{Key: "aggregate", Value: "src"}, {Key: "pipeline", Value: bson.A{}}, {Key: "cursor", Value: bson.D{}}, {Key: "bypassDocumentValidation", Value: true}}); err != nil {
		t.Errorf("aggregate without $out: %v", err)
	}
}

// TestRoleListsDistinct: a role named twice in createUser, updateUser,
// createRole or updateRole is stored once, as MongoDB's resolveRoleNames
// keeps each role once (role_management_commands_edge_cases.js: role2
// created with ['read', 'read', 'role1', 'role1'] has two roles).
func TestRoleListsDistinct(t *testing.T) {
	client, _ := startServer(t)
	const db = "distinctroles"
	readDoc := bson.D{{Key: "role", Value: "read"}, {Key: "db", Value: db}}
	for _, tc := range []struct {
		cmd   bson.D
		info  bson.D // usersInfo or rolesInfo of what cmd wrote
		field string // the list in info's reply
		want  int
	}{
		{cmd: bson.D{{Key: "createUser", Value: "u"}, {Key: "pwd", Value: "p"}, {Key: "roles", Value: bson.A{"read", readDoc, "read"}}},
			info: bson.D{{Key: "usersInfo", Value: "u"}}, field: "users", want: 1},
		{cmd: bson.D{{Key: "updateUser", Value: "u"}, {Key: "roles", Value: bson.A{"readWrite", "read", "readWrite", readDoc}}},
			info: bson.D{{Key: "usersInfo", Value: "u"}}, field: "users", want: 2},
		{cmd: bson.D{{Key: "createRole", Value: "role1"}, {Key: "privileges", Value: bson.A{}}, {Key: "roles", Value: bson.A{}}},
			info: bson.D{{Key: "rolesInfo", Value: "role1"}}, field: "roles", want: 0},
		{cmd: bson.D{{Key: "createRole", Value: "role2"}, {Key: "privileges", Value: bson.A{}}, {Key: "roles", Value: bson.A{"read", "read", "role1", "role1"}}},
			info: bson.D{{Key: "rolesInfo", Value: "role2"}}, field: "roles", want: 2},
		{cmd: bson.D{{Key: "updateRole", Value: "role2"}, {Key: "roles", Value: bson.A{"role1", readDoc, "role1", "read"}}},
			info: bson.D{{Key: "rolesInfo", Value: "role2"}}, field: "roles", want: 2},
		{cmd: bson.D{{Key: "grantRolesToRole", Value: "role2"}, {Key: "roles", Value: bson.A{"role1", "readWrite", "readWrite"}}},
			info: bson.D{{Key: "rolesInfo", Value: "role2"}}, field: "roles", want: 3},
	} {
		if _, err := runCmd(client, db, tc.cmd); err != nil {
			t.Fatalf("%v: %v", tc.cmd, err)
		}
		r, err := runCmd(client, db, tc.info)
		if err != nil {
			t.Fatal(err)
		}
		roles, ok := r.Lookup(tc.field, "0", "roles").ArrayOK()
		if !ok || len(mustValues(roles)) != tc.want {
			t.Errorf("after %v: roles %s, want %d", tc.cmd[0], r.Lookup(tc.field, "0", "roles"), tc.want)
		}
	}
}

// TestRolesInfoShapes: rolesInfo answers as MongoDB 7.0's
// AuthzManagerExternalStateLocal builds each role: by name
// (getRolesDescription: the role's fields, its inherited ones, isBuiltin
// last) or among a database's roles (getRoleDescriptionsForDB: isBuiltin
// before the inherited fields; a built-in role as role, db, isBuiltin,
// roles, inheritedRoles, privileges...). A user-defined role's
// inheritedPrivileges are its own as stored, then those of its roles
// (serializeResolvedRoles; builtin_roles.js); a built-in role inherits no
// role, nor does a user granted one (usersInfo).
func TestRolesInfoShapes(t *testing.T) {
	client, _ := startServer(t)
	const db = "rishape"
	own := bson.A{bson.D{{Key: "resource", Value: bson.D{{Key: "db", Value: db}, {Key: "collection", Value: ""}}}, {Key: "actions", Value: bson.A{"insert"}}}}
	for _, cmd := range []bson.D{
		{{Key: "createRole", Value: "role1"}, {Key: "privileges", Value: own}, {Key: "roles", Value: bson.A{"read"}}},
		{{Key: "createUser", Value: "owner"}, {Key: "pwd", Value: "p"}, {Key: "roles", Value: bson.A{"dbOwner"}}},
	} {
		if _, err := runCmd(client, db, cmd); err != nil {
			t.Fatal(err)
		}
	}
	full := bson.D{{Key: "showPrivileges", Value: true}, {Key: "showAuthenticationRestrictions", Value: true}}
	for _, tc := range []struct {
		query bson.D
		role  string // which role of the reply
		keys  string
	}{
		{query: append(bson.D{{Key: "rolesInfo", Value: "role1"}}, full...), role: "role1",
			keys: "_id role db privileges roles authenticationRestrictions inheritedRoles inheritedPrivileges inheritedAuthenticationRestrictions isBuiltin"},
		{query: append(bson.D{{Key: "rolesInfo", Value: "read"}}, full...), role: "read",
			keys: "db role roles privileges authenticationRestrictions inheritedRoles inheritedPrivileges inheritedAuthenticationRestrictions isBuiltin"},
		{query: bson.D{{Key: "rolesInfo", Value: "dbOwner"}}, role: "dbOwner", keys: "db role roles inheritedRoles isBuiltin"},
		{query: append(bson.D{{Key: "rolesInfo", Value: 1}, {Key: "showBuiltinRoles", Value: true}}, full...), role: "role1",
			keys: "_id role db privileges roles authenticationRestrictions isBuiltin inheritedRoles inheritedPrivileges inheritedAuthenticationRestrictions"},
		{query: append(bson.D{{Key: "rolesInfo", Value: 1}, {Key: "showBuiltinRoles", Value: true}}, full...), role: "read",
			keys: "role db isBuiltin roles inheritedRoles privileges inheritedPrivileges authenticationRestrictions inheritedAuthenticationRestrictions"},
		{query: bson.D{{Key: "rolesInfo", Value: 1}, {Key: "showBuiltinRoles", Value: true}}, role: "dbOwner", keys: "role db isBuiltin roles inheritedRoles"},
	} {
		r, err := runCmd(client, db, tc.query)
		if err != nil {
			t.Fatal(err)
		}
		var found bson.Raw
		for _, v := range mustValues(r.Lookup("roles").Array()) {
			if v.Document().Lookup("role").StringValue() == tc.role {
				found = v.Document()
			}
		}
		if found == nil {
			t.Fatalf("%v: no %s in %s", tc.query, tc.role, r)
		}
		if got := strings.Join(keysOf(t, found), " "); got != tc.keys {
			t.Errorf("%v, %s: fields %s, want %s", tc.query, tc.role, got, tc.keys)
		}
		if tc.role == "dbOwner" && found.Lookup("inheritedRoles").String() != "[]" {
			t.Errorf("%v: dbOwner inherits %s", tc.query, found.Lookup("inheritedRoles"))
		}
		if tc.role == "role1" {
			read := `{"resource": {"db": "rishape","collection": ""},"actions": ["changeStream","collStats","dbHash","dbStats","find","killCursors","listCollections","listIndexes","listSearchIndexes","planCacheRead"]}`
			want := `[{"resource": {"db": "rishape","collection": ""},"actions": ["insert"]},` + read + `,` + strings.Replace(read, `""`, `"system.js"`, 1) + `]`
			if got := found.Lookup("inheritedPrivileges").String(); got != want {
				t.Errorf("%v: inheritedPrivileges %s, want %s", tc.query, got, want)
			}
		}
	}
	r, err := runCmd(client, db, bson.D{{Key: "usersInfo", Value: "owner"}, {Key: "showPrivileges", Value: true}})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Lookup("users", "0", "inheritedRoles").String(); got != `[{"role": "dbOwner","db": "rishape"}]` {
		t.Errorf("usersInfo inheritedRoles of a dbOwner %s", got)
	}
	// __system on admin, by name and among admin's roles
	r, err = runCmd(client, "admin", bson.D{{Key: "rolesInfo", Value: "__system"}, {Key: "showPrivileges", Value: true}})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Lookup("roles", "0", "privileges").String(); got != `[{"resource": {"anyResource": true},"actions": ["anyAction"]}]` {
		t.Errorf("__system's privileges %s", got)
	}
	r, err = runCmd(client, "admin", bson.D{{Key: "rolesInfo", Value: 1}, {Key: "showBuiltinRoles", Value: true}})
	if err != nil {
		t.Fatal(err)
	}
	if s := r.Lookup("roles").String(); !strings.Contains(s, `"role": "__system"`) || !strings.Contains(s, `"role": "__queryableBackup"`) {
		t.Errorf("admin's roles lack __system or __queryableBackup: %s", s)
	}
}

// TestReauthenticationRefused: a connection authenticates as one user
// only. Authenticating again as the same user succeeds; as another user of
// the same database it fails with 5626701, as a user of another database
// with 5626702, as MongoDB's AuthorizationSessionImpl::addAndAuthorizeUser
// refuses them (jstests/auth/db_multiple_login.js).
func TestReauthenticationRefused(t *testing.T) {
	root, in := startAuthServer(t)
	for _, u := range []struct{ name, db string }{{"other", "admin"}, {"ann", "app"}} {
		if _, err := runCmd(root, u.db, bson.D{{Key: "createUser", Value: u.name}, {Key: "pwd", Value: "pwd"}, {Key: "roles", Value: bson.A{}}}); err != nil {
			t.Fatal(err)
		}
	}
	raw := rawDial(t, in)
	rawLogin(t, raw)
	rawLogin(t, raw)
	for _, tc := range []struct {
		user, db string
		code     int32
		msg      string
	}{
		{"other", "admin", 5626701, "Each client connection may only be authenticated once. Previously authenticated as: root@admin"},
		{"ann", "app", 5626702, "Client has attempted to authenticate on multiple databases.Already authenticated as: root@admin"},
	} {
		reply := rawLoginAs(t, raw, tc.user, "pwd", tc.db)
		if code, _ := reply.Lookup("code").Int32OK(); code != tc.code || reply.Lookup("errmsg").StringValue() != tc.msg {
			t.Errorf("%s@%s: got %s, want code %d %q", tc.user, tc.db, reply, tc.code, tc.msg)
		}
	}
}

// TestScramIterationCountParameters: scramIterationCount and
// scramSHA256IterationCount (MongoDB's defaults 10000 and 15000, at least
// 5000) set the iteration counts of the credentials made afterwards;
// stored ones keep theirs until the password changes
// (jstests/auth/iteration_count_control.js).
func TestScramIterationCountParameters(t *testing.T) {
	root, in := startAuthServer(t)
	ctx := t.Context()
	admin := root.Database("admin")
	iters := func(user string) (int32, int32) {
		t.Helper()
		doc, err := admin.Collection("system.users").FindOne(ctx, bson.D{{Key: "_id", Value: "admin." + user}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		return doc.Lookup("credentials", "SCRAM-SHA-1", "iterationCount").Int32(), doc.Lookup("credentials", "SCRAM-SHA-256", "iterationCount").Int32()
	}
	if _, err := runCmd(root, "admin", bson.D{{Key: "createUser", Value: "old"}, {Key: "pwd", Value: "pass"}, {Key: "roles", Value: bson.A{}}}); err != nil {
		t.Fatal(err)
	}
	if s1, s256 := iters("old"); s1 != 10000 || s256 != 15000 {
		t.Fatalf("default iteration counts %d, %d", s1, s256)
	}
	for _, tc := range []struct {
		name string
		v    int32
		msg  string
	}{
		{"scramIterationCount", 4999, "Invalid value for parameter scramIterationCount: 4999 is not greater than or equal to 5000"},
		{"scramIterationCount", -5000, "Invalid value for parameter scramIterationCount: -5000 is not greater than or equal to 5000"},
		{"scramSHA256IterationCount", 4096, "Invalid value for parameter scramSHA256IterationCount: 4096 is not greater than or equal to 5000"},
	} {
		_, err := runCmd(root, "admin", bson.D{{Key: "setParameter", Value: 1}, {Key: tc.name, Value: tc.v}})
		requireError(t, err, 2, "BadValue", tc.msg)
	}
	for _, p := range []bson.E{{Key: "scramIterationCount", Value: int32(5000)}, {Key: "scramSHA256IterationCount", Value: int32(6000)}} {
		if _, err := runCmd(root, "admin", bson.D{{Key: "setParameter", Value: 1}, p}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := runCmd(root, "admin", bson.D{{Key: "getParameter", Value: 1}, {Key: "scramIterationCount", Value: 1}, {Key: "scramSHA256IterationCount", Value: 1}})
	if err != nil || got.Lookup("scramIterationCount").Int32() != 5000 || got.Lookup("scramSHA256IterationCount").Int32() != 6000 {
		t.Fatalf("getParameter: %v %v", got, err)
	}
	if s1, s256 := iters("old"); s1 != 10000 || s256 != 15000 {
		t.Errorf("stored credentials changed: %d, %d", s1, s256)
	}
	if _, err := runCmd(root, "admin", bson.D{{Key: "updateUser", Value: "old"}, {Key: "pwd", Value: "pass"}}); err != nil {
		t.Fatal(err)
	}
	if s1, s256 := iters("old"); s1 != 5000 || s256 != 6000 {
		t.Errorf("after the password changed: %d, %d", s1, s256)
	}
	for _, mech := range []string{"SCRAM-SHA-1", "SCRAM-SHA-256"} {
		if err := tryConnect(t, in, options.Credential{Username: "old", Password: "pass", AuthSource: "admin", AuthMechanism: mech}); err != nil {
			t.Errorf("%s: %v", mech, err)
		}
	}
}

// TestLogoutOnUserDatabase: logout logs the connection's user out only
// when it runs on the user's database, as MongoDB's
// AuthorizationSessionImpl::logoutDatabase does; elsewhere it succeeds and
// the user stays logged in.
func TestLogoutOnUserDatabase(t *testing.T) {
	_, in := startAuthServer(t)
	raw := rawDial(t, in)
	rawLogin(t, raw)
	users := func(id int32) string {
		return rawCommand(t, raw, id, bson.D{{Key: "connectionStatus", Value: 1}, {Key: "$db", Value: "admin"}}).Lookup("authInfo", "authenticatedUsers").String()
	}
	if ok := rawCommand(t, raw, 1, bson.D{{Key: "logout", Value: 1}, {Key: "$db", Value: "app"}}).Lookup("ok").Double(); ok != 1 {
		t.Fatalf("logout on app: ok %v", ok)
	}
	if got := users(2); got != `[{"user": "root","db": "admin"}]` {
		t.Errorf("after logout on another database: %s", got)
	}
	rawCommand(t, raw, 3, bson.D{{Key: "logout", Value: 1}, {Key: "$db", Value: "admin"}})
	if got := users(4); got != `[]` {
		t.Errorf("after logout on admin: %s", got)
	}
}

// TestDroppedUserLoggedOut: a connection whose user is dropped, or
// dropped and created again under the same name (another userId), is
// logged out: it gains none of the new user's privileges and its commands
// need authentication again, as MongoDB's _refreshUserInfoAsNeeded clears
// the user (jstests/auth/deleted_recreated_user_base.js).
func TestDroppedUserLoggedOut(t *testing.T) {
	root, in := startAuthServer(t)
	ctx := t.Context()
	for _, recreate := range []bool{false, true} {
		if _, err := runCmd(root, "admin", bson.D{{Key: "createUser", Value: "gone"}, {Key: "pwd", Value: "pass"}, {Key: "roles", Value: bson.A{"readWriteAnyDatabase"}}}); err != nil {
			t.Fatal(err)
		}
		c := connectAs(t, in, "gone", "pass", "admin", "", options.Client().SetMaxPoolSize(1))
		if _, err := c.Database("app").Collection("c").InsertOne(ctx, bson.D{}); err != nil {
			t.Fatal(err)
		}
		if _, err := runCmd(root, "admin", bson.D{{Key: "dropUser", Value: "gone"}}); err != nil {
			t.Fatal(err)
		}
		if recreate {
			if _, err := runCmd(root, "admin", bson.D{{Key: "createUser", Value: "gone"}, {Key: "pwd", Value: "secret"}, {Key: "roles", Value: bson.A{"root"}}}); err != nil {
				t.Fatal(err)
			}
		}
		_, err := c.Database("app").Collection("c").Find(ctx, bson.D{})
		requireError(t, err, 13, "Unauthorized", "Command find requires authentication")
		status, err := runCmd(c, "admin", bson.D{{Key: "connectionStatus", Value: 1}})
		if err != nil || status.Lookup("authInfo", "authenticatedUsers").String() != "[]" {
			t.Errorf("recreate %v: connectionStatus %v %v", recreate, status, err)
		}
		if recreate {
			if _, err := runCmd(root, "admin", bson.D{{Key: "dropUser", Value: "gone"}}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestConnectionStatusInheritedRoles: connectionStatus's
// authenticatedUserRoles are the user's roles and those they inherit, as
// MongoDB builds the session's authenticated role names from
// User::getIndirectRoles.
func TestConnectionStatusInheritedRoles(t *testing.T) {
	root, in := startAuthServer(t)
	for _, cmd := range []bson.D{
		{{Key: "createRole", Value: "r1"}, {Key: "privileges", Value: bson.A{}}, {Key: "roles", Value: bson.A{"read"}}},
		{{Key: "createRole", Value: "r2"}, {Key: "privileges", Value: bson.A{}}, {Key: "roles", Value: bson.A{"r1"}}},
		{{Key: "createUser", Value: "nested"}, {Key: "pwd", Value: "pwd"}, {Key: "roles", Value: bson.A{"r2"}}},
	} {
		if _, err := runCmd(root, "app", cmd); err != nil {
			t.Fatal(err)
		}
	}
	st, err := runCmd(connectAs(t, in, "nested", "pwd", "app", ""), "app", bson.D{{Key: "connectionStatus", Value: 1}})
	if err != nil {
		t.Fatal(err)
	}
	vals := mustValues(st.Lookup("authInfo", "authenticatedUserRoles").Array())
	var got []string
	for _, v := range vals {
		d := v.Document()
		got = append(got, d.Lookup("role").StringValue()+"@"+d.Lookup("db").StringValue())
	}
	slices.Sort(got)
	if want := []string{"r1@app", "r2@app", "read@app"}; !slices.Equal(got, want) {
		t.Errorf("authenticatedUserRoles %v, want %v", got, want)
	}
}
