package auth

import (
	"bytes"
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// TestResourceMatches: which targets each resource pattern covers;
// database and any-normal resources leave out system collections; only
// any-normal and any-resource cover every normal resource at once.
// https://www.mongodb.com/docs/manual/reference/resource-document/
func TestResourceMatches(t *testing.T) {
	cl, db, ns, sys := ClusterTarget(), DBTarget("app"), NSTarget("app", "c"), NSTarget("app", "system.js")
	other, bk, otherBk := NSTarget("x", "c"), NSTarget("app", "system.buckets.c"), NSTarget("x", "system.buckets.d")
	normal := AnyNormalTarget()
	all := []Target{cl, db, ns, sys, other, bk, otherBk, normal}
	for _, tc := range []struct {
		res  bson.D
		want []Target
	}{
		{bson.D{{Key: "anyResource", Value: true}}, all},
		{bson.D{{Key: "cluster", Value: true}}, []Target{cl}},
		{bson.D{{Key: "db", Value: ""}, {Key: "collection", Value: ""}}, []Target{db, ns, other, normal}},
		{bson.D{{Key: "db", Value: "app"}, {Key: "collection", Value: ""}}, []Target{db, ns}},
		{bson.D{{Key: "db", Value: ""}, {Key: "collection", Value: "c"}}, []Target{ns, other}},
		{bson.D{{Key: "db", Value: "app"}, {Key: "collection", Value: "system.js"}}, []Target{sys}},
		{bson.D{{Key: "system_buckets", Value: ""}}, []Target{bk, otherBk}},
		{bson.D{{Key: "db", Value: "app"}, {Key: "system_buckets", Value: ""}}, []Target{bk}},
		{bson.D{{Key: "system_buckets", Value: "d"}}, []Target{otherBk}},
		{bson.D{{Key: "db", Value: "app"}, {Key: "system_buckets", Value: "c"}}, []Target{bk}},
	} {
		raw, _ := bson.Marshal(tc.res)
		r, err := ParseResource(raw)
		if err != nil {
			t.Fatalf("%v: %v", tc.res, err)
		}
		if doc, _ := bson.Marshal(r.Doc()); !bytes.Equal(doc, raw) {
			t.Errorf("%v shows as %v", tc.res, r.Doc())
		}
		for _, tg := range all {
			if got, want := r.Matches(tg), slices.Contains(tc.want, tg); got != want {
				t.Errorf("%v matches %v: %v, want %v", tc.res, tg, got, want)
			}
		}
	}
	for _, bad := range []bson.D{
		{{Key: "cluster", Value: false}},
		{{Key: "db", Value: "x"}},
		{{Key: "cluster", Value: true}, {Key: "db", Value: "x"}},
		{{Key: "db", Value: 1}, {Key: "collection", Value: ""}},
		{{Key: "bogus", Value: true}},
		{{Key: "collection", Value: "c"}, {Key: "system_buckets", Value: "c"}},
	} {
		raw, _ := bson.Marshal(bad)
		if _, err := ParseResource(raw); err == nil {
			t.Errorf("%v parsed", bad)
		}
	}
}

// TestResolveBuiltin: built-in roles resolve to MongoDB's privileges,
// inherited roles included, and only admin defines the cluster roles
// (enableSharding is on every database).
// https://www.mongodb.com/docs/manual/reference/built-in-roles/
func TestResolveBuiltin(t *testing.T) {
	none := func(RoleName) (RoleDef, bool, error) { return RoleDef{}, false, nil }
	for _, tc := range []struct {
		role    RoleName
		allowed []struct {
			t Target
			a string
		}
		refused []struct {
			t Target
			a string
		}
	}{
		{RoleName{"read", "app"},
			[]struct {
				t Target
				a string
			}{{NSTarget("app", "c"), "find"}, {DBTarget("app"), "listCollections"}, {NSTarget("app", "system.js"), "find"}},
			[]struct {
				t Target
				a string
			}{{NSTarget("app", "c"), "insert"}, {NSTarget("x", "c"), "find"}, {NSTarget("app", "system.users"), "find"}}},
		{RoleName{"dbOwner", "app"},
			[]struct {
				t Target
				a string
			}{{NSTarget("app", "c"), "insert"}, {DBTarget("app"), "dropDatabase"}, {DBTarget("app"), "createUser"}},
			[]struct {
				t Target
				a string
			}{{ClusterTarget(), "serverStatus"}, {DBTarget("x"), "createUser"}}},
		{RoleName{"root", "admin"},
			[]struct {
				t Target
				a string
			}{{NSTarget("x", "c"), "insert"}, {ClusterTarget(), "inprog"}, {NSTarget("admin", "system.users"), "find"}, {NSTarget("x", "c"), "validate"}},
			[]struct {
				t Target
				a string
			}{{ClusterTarget(), "anyAction"}, {NSTarget("x", "system.profile"), "insert"}}},
		{RoleName{"root", "app"}, nil,
			[]struct {
				t Target
				a string
			}{{NSTarget("app", "c"), "find"}}},
		// enableSharding exists on every database (SERVER-42522)
		{RoleName{"enableSharding", "app"},
			[]struct {
				t Target
				a string
			}{{NSTarget("x", "c"), "enableSharding"}, {NSTarget("app", "c"), "reshardCollection"}},
			[]struct {
				t Target
				a string
			}{{NSTarget("app", "c"), "find"}, {ClusterTarget(), "serverStatus"}}},
	} {
		_, privs, err := Resolve([]RoleName{tc.role}, none)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range tc.allowed {
			if !privs.Allows(a.t, a.a) {
				t.Errorf("%s does not allow %s on %s", tc.role, a.a, a.t)
			}
		}
		for _, a := range tc.refused {
			if privs.Allows(a.t, a.a) {
				t.Errorf("%s allows %s on %s", tc.role, a.a, a.t)
			}
		}
	}
}

// TestResolveUserDefined: user-defined roles inherit, cycles end, and
// missing roles grant nothing.
func TestResolveUserDefined(t *testing.T) {
	defs := map[RoleName]RoleDef{
		{"a", "app"}: {Name: RoleName{"a", "app"}, Roles: []RoleName{{"b", "app"}, {"gone", "app"}},
			Privileges: []Privilege{{Resource: Resource{Pattern: ExactNamespace, DB: "app", Coll: "x"}, Actions: []string{"insert"}}}},
		{"b", "app"}: {Name: RoleName{"b", "app"}, Roles: []RoleName{{"a", "app"}, {"read", "app"}}},
	}
	lookup := func(r RoleName) (RoleDef, bool, error) { d, ok := defs[r]; return d, ok, nil }
	roles, privs, err := Resolve([]RoleName{{"a", "app"}}, lookup)
	if err != nil {
		t.Fatal(err)
	}
	if len(roles) != 3 || roles[0] != (RoleName{"a", "app"}) {
		t.Errorf("roles %v", roles)
	}
	if !privs.Allows(NSTarget("app", "x"), "insert") || !privs.Allows(NSTarget("app", "y"), "find") || privs.Allows(NSTarget("app", "y"), "insert") {
		t.Errorf("privileges %v", privs)
	}
	left := Remove(privs, []Privilege{{Resource: Resource{Pattern: ExactNamespace, DB: "app", Coll: "x"}, Actions: []string{"insert"}}})
	if Privileges(left).Allows(NSTarget("app", "x"), "insert") {
		t.Errorf("Remove left %v", left)
	}
}

// TestAnyActionAllowsEvery: anyAction grants every action on its resource,
// and nothing elsewhere.
func TestAnyActionAllowsEvery(t *testing.T) {
	privs := Privileges{{Resource: Resource{Pattern: ExactNamespace, DB: "app", Coll: "x"}, Actions: []string{"anyAction"}}}
	if !privs.Allows(NSTarget("app", "x"), "insert") || !privs.Allows(NSTarget("app", "x"), "dropCollection") {
		t.Error("anyAction does not grant insert and dropCollection on its collection")
	}
	if privs.Allows(NSTarget("app", "y"), "insert") {
		t.Error("anyAction granted an action on another collection")
	}
}

// TestPrivilegeDocEmptyActions: a privilege without actions is stored and
// shown with actions: [], never null, so that the role stays readable.
func TestPrivilegeDocEmptyActions(t *testing.T) {
	p := Privilege{Resource: Resource{Pattern: Database, DB: "app"}}
	raw, err := bson.Marshal(p.Doc())
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParsePrivilege(raw)
	if err != nil {
		t.Fatalf("%s does not parse back: %v", bson.Raw(raw), err)
	}
	if got := bson.Raw(raw).Lookup("actions").String(); got != "[]" {
		t.Errorf("actions %s, want []", got)
	}
	if len(back.Actions) != 0 {
		t.Errorf("actions %v", back.Actions)
	}
}

// TestBuiltinDatabases: built-in roles exist only on a valid database
// name other than $external (MongoDB's isValidDB in
// builtin_roles.tpl.cpp; builtin_roles_external.js,
// user_management_commands_edge_cases.js).
func TestBuiltinDatabases(t *testing.T) {
	for _, tc := range []struct {
		db   string
		read bool // read@db is built-in
		any  bool // readAnyDatabase@db is built-in
	}{
		{"admin", true, true},
		{"test", true, false},
		{"$test", true, false},
		{"$external", false, false},
		{"", false, false},
		{"a.b", false, false},
		{"a b", false, false},
	} {
		if got := IsBuiltin(RoleName{"read", tc.db}); got != tc.read {
			t.Errorf("read@%s built-in: %v", tc.db, got)
		}
		if got := IsBuiltin(RoleName{"readAnyDatabase", tc.db}); got != tc.any {
			t.Errorf("readAnyDatabase@%s built-in: %v", tc.db, got)
		}
		if got := slices.Contains(BuiltinNames(tc.db), "read"); got != tc.read {
			t.Errorf("BuiltinNames(%q) lists read: %v", tc.db, got)
		}
	}
}

// TestParseResourceErrors: the resource documents MongoDB's
// Privilege::resolvePrivilegeWithTenant refuses, with its BadValue
// messages, in its order (role_management_commands_edge_cases.js).
func TestParseResourceErrors(t *testing.T) {
	for _, tc := range []struct {
		res bson.D
		msg string // "" when it parses
	}{
		{bson.D{{Key: "cluster", Value: false}}, "resource: {cluster: false} must be true"},
		{bson.D{{Key: "db", Value: "test"}, {Key: "collection", Value: "foo"}, {Key: "cluster", Value: true}}, "resource: {cluster: true} conflicts with resource type 'db'"},
		{bson.D{{Key: "cluster", Value: true}, {Key: "anyResource", Value: true}}, "resource: {cluster: true} conflicts with resource type 'anyResource'"},
		{bson.D{{Key: "anyResource", Value: false}}, "resource: {anyResource: false} must be true"},
		{bson.D{{Key: "anyResource", Value: true}, {Key: "collection", Value: ""}}, "resource: {anyResource: true} conflicts with resource type 'collection'"},
		{bson.D{{Key: "db", Value: "test"}, {Key: "collection", Value: "c"}, {Key: "system_buckets", Value: "c"}}, "resource: {collection: '...'} conflicts with resource type 'system_buckets'"},
		{bson.D{{Key: "collection", Value: "foo"}}, "resource {collection: '...'} must include 'db' field as well"},
		{bson.D{{Key: "db", Value: "test"}, {Key: "collection", Value: "$cmd"}}, "'$cmd' is not a valid collection name"},
		{bson.D{{Key: "db", Value: "test"}, {Key: "collection", Value: ".x"}}, "'.x' is not a valid collection name"},
		{bson.D{{Key: "db", Value: "local"}, {Key: "collection", Value: "oplog.$main"}}, ""},
		{bson.D{{Key: "db", Value: "test"}}, "resource pattern must contain 'collection' or 'systemBuckets' specifier"},
		{bson.D{}, "resource pattern must contain 'collection' or 'systemBuckets' specifier"},
	} {
		raw, _ := bson.Marshal(tc.res)
		_, err := ParseResource(raw)
		if tc.msg == "" {
			if err != nil {
				t.Errorf("%v: %v", tc.res, err)
			}
			continue
		}
		if err == nil || mongoerr.As(err).Code != mongoerr.BadValue || mongoerr.As(err).Msg != tc.msg {
			t.Errorf("%v: %v, want BadValue %q", tc.res, err, tc.msg)
		}
	}
}

// TestSystemRole: admin lists every built-in role, __system and
// __queryableBackup included (getBuiltinRoleNamesForDB), and __system
// grants every action on every resource, shown as anyAction
// (builtin_roles.tpl.cpp; ActionSet::getActionsAsStringDatas).
func TestSystemRole(t *testing.T) {
	names := BuiltinNames("admin")
	for _, n := range []string{"__system", "__queryableBackup", "root"} {
		if !slices.Contains(names, n) {
			t.Errorf("admin's built-in roles %v lack %s", names, n)
		}
	}
	if slices.Contains(BuiltinNames("test"), "__system") || IsBuiltin(RoleName{"__system", "test"}) {
		t.Error("__system is defined on test")
	}
	none := func(RoleName) (RoleDef, bool, error) { return RoleDef{}, false, nil }
	_, privs, err := Resolve([]RoleName{{"__system", "admin"}}, none)
	if err != nil {
		t.Fatal(err)
	}
	if len(privs) != 1 || privs[0].Resource.Pattern != AnyResource || !slices.Equal(privs[0].Actions, []string{"anyAction"}) {
		t.Errorf("__system's privileges %v", privs)
	}
	for _, tg := range []Target{ClusterTarget(), NSTarget("x", "system.users"), NSTarget("local", "oplog.rs")} {
		if !privs.Allows(tg, "internal") || !privs.Allows(tg, "insert") {
			t.Errorf("__system cannot act on %s", tg)
		}
	}
}

// TestPrivilegesAnyInDB: the privileges that reach into a database, as
// MongoDB's isAuthorizedForAnyActionOnAnyResourceInDB counts them.
func TestPrivilegesAnyInDB(t *testing.T) {
	find := []string{"find"}
	for _, tc := range []struct {
		res  Resource
		acts []string
		db   string
		want bool
	}{
		{Resource{Pattern: AnyResource}, find, "local", true},
		{Resource{Pattern: ClusterResource}, []string{"listDatabases"}, "app", false},
		{Resource{Pattern: AnyNormal}, find, "app", true},
		{Resource{Pattern: AnyNormal}, find, "local", false},
		{Resource{Pattern: AnyNormal}, find, "config", false},
		{Resource{Pattern: Database, DB: "app"}, find, "app", true},
		{Resource{Pattern: Database, DB: "app"}, find, "other", false},
		{Resource{Pattern: CollectionName, Coll: "c"}, find, "other", true},
		{Resource{Pattern: ExactNamespace, DB: "app", Coll: "c"}, find, "app", true},
		{Resource{Pattern: ExactNamespace, DB: "app", Coll: "c"}, find, "other", false},
		{Resource{Pattern: AnySystemBuckets}, find, "other", true},
		{Resource{Pattern: SystemBucketsInDB, DB: "app"}, find, "app", true},
		{Resource{Pattern: SystemBucketsInDB, DB: "app"}, find, "other", false},
		{Resource{Pattern: SystemBucketsOfColl, Coll: "ts"}, find, "other", true},
		{Resource{Pattern: ExactSystemBuckets, DB: "app", Coll: "ts"}, find, "app", true},
		{Resource{Pattern: ExactSystemBuckets, DB: "app", Coll: "ts"}, find, "other", false},
		{Resource{Pattern: Database, DB: "app"}, nil, "app", false},
	} {
		ps := Privileges{{Resource: tc.res, Actions: tc.acts}}
		if got := ps.AnyInDB(tc.db); got != tc.want {
			t.Errorf("%+v %v in %s: %v, want %v", tc.res, tc.acts, tc.db, got, tc.want)
		}
	}
}
