package commands

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/auth"
)

// TestAuthzRulesComplete: every command has its row in the action table,
// so that none runs unchecked under access control.
func TestAuthzRulesComplete(t *testing.T) {
	for name := range handlers {
		if _, ok := authzRules[name]; !ok {
			t.Errorf("command %s has no authorization rule", name)
		}
	}
	for name := range authzRules {
		if _, ok := handlers[name]; !ok {
			t.Errorf("rule for %s, which is no command", name)
		}
	}
}

// TestAuthzNeeds checks the action table row by row: the actions each
// command needs on which resource.
// https://www.mongodb.com/docs/manual/reference/privilege-actions/
func TestAuthzNeeds(t *testing.T) {
	ns := func(c string) auth.Target { return auth.NSTarget("db", c) }
	db := auth.DBTarget("db")
	cl := auth.ClusterTarget()
	for _, tc := range []struct {
		cmd  bson.D
		want []need
	}{
		{bson.D{{Key: "find", Value: "c"}}, []need{{ns("c"), "find"}}},
		{bson.D{{Key: "count", Value: "c"}}, []need{{ns("c"), "find"}}},
		{bson.D{{Key: "distinct", Value: "c"}, {Key: "key", Value: "a"}}, []need{{ns("c"), "find"}}},
		{bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{}}}, {Key: "bypassDocumentValidation", Value: true}}, []need{{ns("c"), "insert"}, {ns("c"), "bypassDocumentValidation"}}},
		{bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{bson.D{{Key: "upsert", Value: true}}}}}, []need{{ns("c"), "update"}, {ns("c"), "insert"}}},
		// bypassDocumentValidation is read as its trueValue: a non-zero
		// number asks for it (shouldBypassDocumentValidationForCommand)
		{bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{}}, {Key: "bypassDocumentValidation", Value: 1}}, []need{{ns("c"), "update"}, {ns("c"), "bypassDocumentValidation"}}},
		{bson.D{{Key: "findAndModify", Value: "c"}, {Key: "bypassDocumentValidation", Value: 1.5}}, []need{{ns("c"), "find"}, {ns("c"), "update"}, {ns("c"), "bypassDocumentValidation"}}},
		{bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{}}, {Key: "bypassDocumentValidation", Value: int64(0)}}, []need{{ns("c"), "insert"}}},
		{bson.D{{Key: "applyOps", Value: bson.A{bson.D{{Key: "op", Value: "i"}, {Key: "ns", Value: "db.c"}, {Key: "o", Value: bson.D{}}}}}, {Key: "bypassDocumentValidation", Value: 1}},
			[]need{{ns("c"), "insert"}, {ns("c"), "bypassDocumentValidation"}}},
		// an aggregation needs it on the collection $out or $merge writes,
		// not on the one it reads (DocumentSourceOut/Merge requiredPrivileges)
		{bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$out", Value: "o"}}}}, {Key: "bypassDocumentValidation", Value: true}},
			[]need{{ns("c"), "find"}, {ns("o"), "insert"}, {ns("o"), "remove"}, {ns("o"), "bypassDocumentValidation"}}},
		{bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$merge", Value: "m"}}}}, {Key: "bypassDocumentValidation", Value: 1}},
			[]need{{ns("c"), "find"}, {ns("m"), "insert"}, {ns("m"), "update"}, {ns("m"), "bypassDocumentValidation"}}},
		{bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{}}, {Key: "bypassDocumentValidation", Value: true}}, []need{{ns("c"), "find"}}},
		// $merge needs what its modes write (getMergeStrategyDescriptors)
		{bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$merge", Value: bson.D{{Key: "into", Value: "m"}, {Key: "whenMatched", Value: "fail"}}}}}}},
			[]need{{ns("c"), "find"}, {ns("m"), "insert"}}},
		{bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$merge", Value: bson.D{{Key: "into", Value: "m"}, {Key: "whenMatched", Value: bson.A{}}, {Key: "whenNotMatched", Value: "discard"}}}}}}},
			[]need{{ns("c"), "find"}, {ns("m"), "update"}}},
		{bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$merge", Value: bson.D{{Key: "into", Value: "m"}, {Key: "whenMatched", Value: "keepExisting"}}}}}}},
			[]need{{ns("c"), "find"}, {ns("m"), "insert"}, {ns("m"), "update"}}},
		// mapReduce needs it on its output (mr::addPrivilegesRequiredForMapReduce)
		{bson.D{{Key: "mapReduce", Value: "c"}, {Key: "map", Value: "function(){}"}, {Key: "reduce", Value: "function(){}"}, {Key: "out", Value: "o"}, {Key: "bypassDocumentValidation", Value: true}},
			[]need{{ns("c"), "find"}, {ns("o"), "insert"}, {ns("o"), "remove"}, {ns("o"), "bypassDocumentValidation"}}},
		{bson.D{{Key: "mapReduce", Value: "c"}, {Key: "map", Value: "function(){}"}, {Key: "reduce", Value: "function(){}"}, {Key: "out", Value: bson.D{{Key: "inline", Value: 1}}}, {Key: "bypassDocumentValidation", Value: true}},
			[]need{{ns("c"), "find"}}},
		{bson.D{{Key: "delete", Value: "c"}, {Key: "deletes", Value: bson.A{}}}, []need{{ns("c"), "remove"}}},
		{bson.D{{Key: "findAndModify", Value: "c"}, {Key: "remove", Value: true}}, []need{{ns("c"), "find"}, {ns("c"), "remove"}}},
		{bson.D{{Key: "findAndModify", Value: "c"}, {Key: "upsert", Value: true}}, []need{{ns("c"), "find"}, {ns("c"), "update"}, {ns("c"), "insert"}}},
		{bson.D{{Key: "findAndModify", Value: "c"}, {Key: "remove", Value: 1}}, []need{{ns("c"), "find"}, {ns("c"), "remove"}}},
		{bson.D{{Key: "findAndModify", Value: "c"}, {Key: "upsert", Value: 1.0}}, []need{{ns("c"), "find"}, {ns("c"), "update"}, {ns("c"), "insert"}}},
		{bson.D{{Key: "create", Value: "c"}}, []need{{ns("c"), "createCollection"}}},
		{bson.D{{Key: "drop", Value: "c"}}, []need{{ns("c"), "dropCollection"}}},
		{bson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: bson.A{}}}, []need{{ns("c"), "createIndex"}}},
		{bson.D{{Key: "dropIndexes", Value: "c"}, {Key: "index", Value: "*"}}, []need{{ns("c"), "dropIndex"}}},
		{bson.D{{Key: "listIndexes", Value: "c"}}, []need{{ns("c"), "listIndexes"}}},
		{bson.D{{Key: "collMod", Value: "c"}}, []need{{ns("c"), "collMod"}}},
		{bson.D{{Key: "collStats", Value: "c"}}, []need{{ns("c"), "collStats"}}},
		{bson.D{{Key: "validate", Value: "c"}}, []need{{ns("c"), "validate"}}},
		{bson.D{{Key: "validateDBMetadata", Value: 1}, {Key: "db", Value: "other"}, {Key: "apiParameters", Value: bson.D{{Key: "version", Value: "1"}}}}, []need{{auth.DBTarget("other"), "validate"}}},
		{bson.D{{Key: "validateDBMetadata", Value: 1}, {Key: "apiParameters", Value: bson.D{{Key: "version", Value: "1"}}}}, []need{{auth.AnyNormalTarget(), "validate"}}},
		{bson.D{{Key: "killCursors", Value: "c"}, {Key: "cursors", Value: bson.A{}}}, nil},
		{bson.D{{Key: "listCollections", Value: 1}}, []need{{db, "listCollections"}}},
		{bson.D{{Key: "listCollections", Value: 1}, {Key: "authorizedCollections", Value: true}}, []need{{db, "listCollections"}}},
		// the user here holds no privilege in db (checkAuthorizedToListCollections)
		{bson.D{{Key: "listCollections", Value: 1}, {Key: "authorizedCollections", Value: true}, {Key: "nameOnly", Value: true}}, []need{{db, "listCollections"}}},
		{bson.D{{Key: "dbStats", Value: 1}}, []need{{db, "dbStats"}}},
		{bson.D{{Key: "dropDatabase", Value: 1}}, []need{{db, "dropDatabase"}}},
		{bson.D{{Key: "serverStatus", Value: 1}}, []need{{cl, "serverStatus"}}},
		{bson.D{{Key: "currentOp", Value: 1}}, []need{{cl, "inprog"}}},
		{bson.D{{Key: "currentOp", Value: 1}, {Key: "$ownOps", Value: true}}, nil},
		{bson.D{{Key: "killOp", Value: 1}}, []need{{cl, "killop"}}},
		{bson.D{{Key: "listDatabases", Value: 1}, {Key: "authorizedDatabases", Value: false}}, nil},
		{bson.D{{Key: "listDatabases", Value: 1}}, nil},
		{bson.D{{Key: "usersInfo", Value: 1}}, []need{{db, "viewUser"}}},
		{bson.D{{Key: "usersInfo", Value: bson.D{{Key: "forAllDBs", Value: true}}}}, []need{{cl, "viewUser"}}},
		{bson.D{{Key: "usersInfo", Value: "me"}}, nil},
		{bson.D{{Key: "usersInfo", Value: bson.A{"me", "other"}}}, []need{{db, "viewUser"}}},
		{bson.D{{Key: "rolesInfo", Value: "mine"}}, nil},
		{bson.D{{Key: "rolesInfo", Value: "inherited"}}, []need{{db, "viewRole"}}},
		{bson.D{{Key: "rolesInfo", Value: bson.D{{Key: "role", Value: "r"}, {Key: "db", Value: "o"}}}}, []need{{auth.DBTarget("o"), "viewRole"}}},
		{bson.D{{Key: "setParameter", Value: 1}}, []need{{cl, "setParameter"}}},
		{bson.D{{Key: "killAllSessions", Value: bson.A{}}}, []need{{cl, "killAnySession"}}},
		{bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "c"}}}}, []need{{ns("c"), "find"}}},
		{bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{
			bson.D{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "l"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$unionWith", Value: "u"}}}}}}},
			bson.D{{Key: "$graphLookup", Value: bson.D{{Key: "from", Value: "g"}}}},
			bson.D{{Key: "$facet", Value: bson.D{{Key: "f", Value: bson.A{bson.D{{Key: "$unionWith", Value: bson.D{{Key: "coll", Value: "v"}}}}}}}}},
			bson.D{{Key: "$out", Value: "o"}},
		}}}, []need{{ns("c"), "find"}, {ns("l"), "find"}, {ns("u"), "find"}, {ns("g"), "find"}, {ns("v"), "find"}, {ns("o"), "insert"}, {ns("o"), "remove"}}},
		{bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$merge", Value: bson.D{{Key: "into", Value: bson.D{{Key: "db", Value: "x"}, {Key: "coll", Value: "m"}}}}}}}}},
			[]need{{ns("c"), "find"}, {auth.NSTarget("x", "m"), "insert"}, {auth.NSTarget("x", "m"), "update"}}},
		{bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$collStats", Value: bson.D{}}}}}}, []need{{ns("c"), "collStats"}}},
		{bson.D{{Key: "aggregate", Value: 1}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$documents", Value: bson.A{}}}}}}, nil},
		// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/currentOp/#access-control
		{bson.D{{Key: "aggregate", Value: 1}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$currentOp", Value: bson.D{}}}}}}, nil},
		{bson.D{{Key: "aggregate", Value: 1}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$currentOp", Value: bson.D{{Key: "allUsers", Value: true}}}}}}}, []need{{cl, "inprog"}}},
		// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/listLocalSessions/
		{bson.D{{Key: "aggregate", Value: 1}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$listLocalSessions", Value: bson.D{}}}}}}, nil},
		{bson.D{{Key: "aggregate", Value: 1}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$listLocalSessions", Value: bson.D{{Key: "allUsers", Value: true}}}}}}}, []need{{cl, "listSessions"}}},
		{bson.D{{Key: "aggregate", Value: "system.sessions"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$listSessions", Value: bson.D{{Key: "users", Value: bson.A{bson.D{{Key: "user", Value: "u"}, {Key: "db", Value: "d"}}}}}}}}}}, []need{{cl, "listSessions"}}},
		{bson.D{{Key: "renameCollection", Value: "a.b"}, {Key: "to", Value: "c.d"}, {Key: "dropTarget", Value: true}},
			[]need{{auth.NSTarget("a", "b"), "find"}, {auth.NSTarget("a", "b"), "dropCollection"}, {auth.NSTarget("c", "d"), "insert"}, {auth.NSTarget("c", "d"), "createIndex"}, {auth.NSTarget("c", "d"), "dropCollection"}}},
		{bson.D{{Key: "createUser", Value: "u"}, {Key: "pwd", Value: "p"}, {Key: "roles", Value: bson.A{"read", bson.D{{Key: "role", Value: "read"}, {Key: "db", Value: "o"}}}}},
			[]need{{db, "createUser"}, {db, "grantRole"}, {auth.DBTarget("o"), "grantRole"}}},
		{bson.D{{Key: "updateUser", Value: "u"}, {Key: "pwd", Value: "p"}, {Key: "customData", Value: bson.D{}}}, []need{{db, "changePassword"}, {db, "changeCustomData"}}},
		{bson.D{{Key: "dropUser", Value: "u"}}, []need{{db, "dropUser"}}},
		{bson.D{{Key: "revokeRolesFromUser", Value: "u"}, {Key: "roles", Value: bson.A{"r"}}}, []need{{db, "revokeRole"}}},
		{bson.D{{Key: "createRole", Value: "r"}, {Key: "privileges", Value: bson.A{bson.D{{Key: "resource", Value: bson.D{{Key: "cluster", Value: true}}}, {Key: "actions", Value: bson.A{"inprog"}}}}}, {Key: "roles", Value: bson.A{}}},
			[]need{{db, "createRole"}, {auth.DBTarget("admin"), "grantRole"}}},
		// updateUser and updateRole may revoke any role: revokeRole on any
		// normal resource (user_management_commands_common.cpp)
		{bson.D{{Key: "updateUser", Value: "u"}, {Key: "roles", Value: bson.A{"read"}}}, []need{{auth.AnyNormalTarget(), "revokeRole"}, {db, "grantRole"}}},
		{bson.D{{Key: "updateRole", Value: "r"}, {Key: "roles", Value: bson.A{}}}, []need{{auth.AnyNormalTarget(), "revokeRole"}}},
		{bson.D{{Key: "revokePrivilegesFromRole", Value: "r"}, {Key: "privileges", Value: bson.A{bson.D{{Key: "resource", Value: bson.D{{Key: "db", Value: ""}, {Key: "collection", Value: ""}}}, {Key: "actions", Value: bson.A{"find"}}}}}},
			[]need{{auth.DBTarget("admin"), "revokeRole"}}},
		{bson.D{{Key: "dropRole", Value: "r"}}, []need{{db, "dropRole"}}},
	} {
		cmd, _ := bson.Marshal(tc.cmd)
		r := &Request{DB: "db", Cmd: cmd}
		var err error
		if r.args, err = parseCommand(cmd, handlers[Name(cmd)].spec); err != nil {
			t.Errorf("%v: %v", tc.cmd, err)
			continue
		}
		if Name(cmd) == "createRole" {
			// only admin's roles may grant on the cluster
			r.DB = "admin"
			for i := range tc.want {
				if tc.want[i].target == db {
					tc.want[i].target = auth.DBTarget("admin")
				}
			}
		}
		rule := authzRules[Name(cmd)]
		var got []need
		if rule.userNeeds != nil {
			me := &authedUser{name: auth.UserName{User: "me", DB: "db"}, direct: []auth.RoleName{{Role: "mine", DB: "db"}},
				roles: []auth.RoleName{{Role: "mine", DB: "db"}, {Role: "inherited", DB: "db"}}}
			got, err = rule.userNeeds(r, me)
		} else {
			got, err = rule.needs(r)
		}
		if err != nil {
			t.Errorf("%v: %v", tc.cmd, err)
			continue
		}
		if len(got) != len(tc.want) {
			t.Errorf("%v: needs %v, want %v", tc.cmd, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%v: needs %v, want %v", tc.cmd, got, tc.want)
				break
			}
		}
	}
	for _, name := range []string{"hello", "isMaster", "buildInfo", "ping", "saslStart", "saslContinue", "authenticate", "logout", "connectionStatus"} {
		if !authzRules[name].open {
			t.Errorf("%s needs authentication", name)
		}
	}
}

// TestWritesAuthCollections: the commands after which connections resolve
// their users' privileges again are those that may write admin's users or
// roles, not every command run on admin.
func TestWritesAuthCollections(t *testing.T) {
	for _, tc := range []struct {
		db   string
		cmd  bson.D
		want bool
	}{
		{"admin", bson.D{{Key: "insert", Value: "system.users"}, {Key: "documents", Value: bson.A{bson.D{}}}}, true},
		{"admin", bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{}}}}, false},
		{"app", bson.D{{Key: "insert", Value: "system.users"}, {Key: "documents", Value: bson.A{bson.D{}}}}, false},
		{"admin", bson.D{{Key: "aggregate", Value: 1}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$currentOp", Value: bson.D{}}}}}, {Key: "cursor", Value: bson.D{}}}, false},
		{"admin", bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$out", Value: "system.roles"}}}}, {Key: "cursor", Value: bson.D{}}}, true},
		{"app", bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$merge", Value: bson.D{{Key: "into", Value: bson.D{{Key: "db", Value: "admin"}, {Key: "coll", Value: "system.users"}}}}}}}}, {Key: "cursor", Value: bson.D{}}}, true},
		{"admin", bson.D{{Key: "dropDatabase", Value: 1}}, true},
	} {
		cmd, _ := bson.Marshal(tc.cmd)
		r := &Request{DB: tc.db, Cmd: cmd}
		var err error
		if r.args, err = parseCommand(cmd, handlers[Name(cmd)].spec); err != nil {
			t.Fatalf("%v: %v", tc.cmd, err)
		}
		if got := writesAuthCollections(r, Name(cmd)); got != tc.want {
			t.Errorf("%s %v: %v, want %v", tc.db, tc.cmd, got, tc.want)
		}
	}
}
