package driver_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestAuthBuiltinRoles runs a sample of commands per action as a user of
// each built-in role and checks which are allowed and which refused
// (Unauthorized), per MongoDB's built-in role privileges.
// https://www.mongodb.com/docs/manual/reference/built-in-roles/
// https://www.mongodb.com/docs/manual/reference/privilege-actions/
func TestAuthBuiltinRoles(t *testing.T) {
	root, in := startAuthServer(t)
	ctx := context.Background()
	if _, err := root.Database("app").Collection("c").InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 2}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := root.Database("app").Collection("other").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	// commands: name -> database and command; each role lists the ones
	// it may run.
	type cmd struct {
		db  string
		doc bson.D
	}
	commands := map[string]cmd{
		"find":            {"app", bson.D{{Key: "find", Value: "c"}}},
		"count":           {"app", bson.D{{Key: "count", Value: "c"}}},
		"insert":          {"app", bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{}}}}},
		"update":          {"app", bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 99}}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 1}}}}}}}}}},
		"delete":          {"app", bson.D{{Key: "delete", Value: "c"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 99}}}, {Key: "limit", Value: 0}}}}}},
		"createIndexes":   {"app", bson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "a_1"}}}}}},
		"listIndexes":     {"app", bson.D{{Key: "listIndexes", Value: "c"}}},
		"listCollections": {"app", bson.D{{Key: "listCollections", Value: 1}}},
		"collStats":       {"app", bson.D{{Key: "collStats", Value: "c"}}},
		"dbStats":         {"app", bson.D{{Key: "dbStats", Value: 1}}},
		"validate":        {"app", bson.D{{Key: "validate", Value: "c"}}},
		"lookupOther":     {"app", bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "other"}, {Key: "localField", Value: "_id"}, {Key: "foreignField", Value: "_id"}, {Key: "as", Value: "o"}}}}}}, {Key: "cursor", Value: bson.D{}}}},
		"unionWithOther":  {"app", bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$unionWith", Value: "other"}}}}, {Key: "cursor", Value: bson.D{}}}},
		"outElsewhere":    {"app", bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$out", Value: bson.D{{Key: "db", Value: "elsewhere"}, {Key: "coll", Value: "copy"}}}}}}, {Key: "cursor", Value: bson.D{}}}},
		"mergeSameDB":     {"app", bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$merge", Value: bson.D{{Key: "into", Value: "merged"}}}}}}, {Key: "cursor", Value: bson.D{}}}},
		"serverStatus":    {"admin", bson.D{{Key: "serverStatus", Value: 1}}},
		"hostInfo":        {"admin", bson.D{{Key: "hostInfo", Value: 1}}},
		"currentOp":       {"admin", bson.D{{Key: "currentOp", Value: 1}}},
		"getParameter":    {"admin", bson.D{{Key: "getParameter", Value: 1}, {Key: "cursorTimeoutMillis", Value: 1}}},
		"setParameter":    {"admin", bson.D{{Key: "setParameter", Value: 1}, {Key: "cursorTimeoutMillis", Value: 600000}}},
		"listDatabases":   {"admin", bson.D{{Key: "listDatabases", Value: 1}, {Key: "authorizedDatabases", Value: false}}},
		"usersInfoApp":    {"app", bson.D{{Key: "usersInfo", Value: 1}}},
		"createUserApp":   {"app", bson.D{{Key: "createUser", Value: "x"}, {Key: "pwd", Value: "x"}, {Key: "roles", Value: bson.A{}}}},
		"findUsers":       {"admin", bson.D{{Key: "find", Value: "system.users"}}},
		"collMod":         {"app", bson.D{{Key: "collMod", Value: "c"}}},
		"whatsmyuri":      {"app", bson.D{{Key: "whatsmyuri", Value: 1}}},
		// applyOps needs what each entry does: insert on app.c, and
		// appendOplogNote on the cluster for a no-op
		"applyOpsInsert": {"admin", bson.D{{Key: "applyOps", Value: bson.A{bson.D{{Key: "op", Value: "i"}, {Key: "ns", Value: "app.c"}, {Key: "o", Value: bson.D{{Key: "_id", Value: 50}}}}}}}},
		"applyOpsNoop":   {"admin", bson.D{{Key: "applyOps", Value: bson.A{bson.D{{Key: "op", Value: "n"}, {Key: "ns", Value: ""}}}}}},
	}
	readOnly := []string{"find", "count", "listIndexes", "listCollections", "collStats", "dbStats", "lookupOther", "unionWithOther", "whatsmyuri"}
	writes := []string{"insert", "update", "delete", "createIndexes", "mergeSameDB", "applyOpsInsert"}
	monitor := []string{"serverStatus", "hostInfo", "currentOp", "getParameter", "listDatabases", "collStats", "dbStats", "whatsmyuri"}
	all := func(groups ...[]string) []string {
		var out []string
		for _, g := range groups {
			out = append(out, g...)
		}
		return out
	}
	roles := []struct {
		role, db string
		allowed  []string
	}{
		{"read", "app", readOnly},
		{"readWrite", "app", all(readOnly, writes)},
		{"dbAdmin", "app", []string{"listIndexes", "listCollections", "collStats", "dbStats", "validate", "createIndexes", "collMod", "whatsmyuri"}},
		{"userAdmin", "app", []string{"usersInfoApp", "createUserApp", "whatsmyuri"}},
		{"dbOwner", "app", all(readOnly, writes, []string{"validate", "usersInfoApp", "createUserApp", "collMod"})},
		{"readAnyDatabase", "admin", all(readOnly, []string{"listDatabases"})},
		{"readWriteAnyDatabase", "admin", all(readOnly, writes, []string{"outElsewhere", "listDatabases"})},
		{"userAdminAnyDatabase", "admin", []string{"usersInfoApp", "createUserApp", "listDatabases", "findUsers", "whatsmyuri"}},
		{"dbAdminAnyDatabase", "admin", []string{"listIndexes", "listCollections", "collStats", "dbStats", "validate", "createIndexes", "collMod", "listDatabases", "whatsmyuri"}},
		{"clusterMonitor", "admin", monitor},
		{"hostManager", "admin", []string{"setParameter", "whatsmyuri"}},
		{"clusterManager", "admin", []string{"whatsmyuri", "applyOpsNoop"}},
		{"clusterAdmin", "admin", all(monitor, []string{"setParameter", "applyOpsNoop"})},
		{"backup", "admin", []string{"applyOpsNoop", "find", "count", "listIndexes", "listCollections", "collStats", "serverStatus", "getParameter", "listDatabases", "findUsers", "lookupOther", "unionWithOther", "whatsmyuri"}},
		{"restore", "admin", []string{"insert", "applyOpsInsert", "listCollections", "createIndexes", "collMod", "getParameter", "usersInfoApp", "createUserApp", "findUsers", "whatsmyuri"}},
		{"root", "admin", all(readOnly, writes, monitor, []string{"outElsewhere", "validate", "setParameter", "usersInfoApp", "createUserApp", "findUsers", "collMod", "applyOpsNoop"})},
	}
	for i, rc := range roles {
		user := fmt.Sprintf("u%d", i)
		if _, err := runCmd(root, "admin", bson.D{{Key: "createUser", Value: user}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{bson.D{{Key: "role", Value: rc.role}, {Key: "db", Value: rc.db}}}}}); err != nil {
			t.Fatalf("create %s: %v", user, err)
		}
		c := connectAs(t, in, user, "pw", "admin", "")
		allowed := map[string]bool{}
		for _, a := range rc.allowed {
			allowed[a] = true
		}
		for name, cm := range commands {
			_, err := runCmd(c, cm.db, cm.doc)
			refused := serverCode(err) == 13
			if allowed[name] && refused {
				t.Errorf("%s: %s refused: %v", rc.role, name, err)
			}
			if !allowed[name] && !refused {
				t.Errorf("%s: %s not refused (err %v)", rc.role, name, err)
			}
			if name == "createUserApp" && err == nil {
				_, _ = runCmd(root, "app", bson.D{{Key: "dropUser", Value: "x"}})
			}
		}
	}
}

// TestAuthCursorOwnership: a getMore or killCursors of another user's
// cursor is refused, as MongoDB refuses them.
func TestAuthCursorOwnership(t *testing.T) {
	root, in := startAuthServer(t)
	ctx := context.Background()
	var docs []any
	for i := range 10 {
		docs = append(docs, bson.D{{Key: "_id", Value: i}})
	}
	if _, err := root.Database("app").Collection("c").InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"a", "b"} {
		if _, err := runCmd(root, "app", bson.D{{Key: "createUser", Value: u}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{"readWrite"}}}); err != nil {
			t.Fatal(err)
		}
	}
	a := connectAs(t, in, "a", "pw", "app", "")
	b := connectAs(t, in, "b", "pw", "app", "")
	inA := sessionCtx(t, a)
	r, err := a.Database("app").RunCommand(inA, bson.D{{Key: "find", Value: "c"}, {Key: "batchSize", Value: 2}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	id := r.Lookup("cursor", "id").Int64()
	_, err = runCmd(b, "app", bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "c"}})
	requireCode(t, err, 13, "Unauthorized")
	_, err = runCmd(b, "app", bson.D{{Key: "killCursors", Value: "c"}, {Key: "cursors", Value: bson.A{id}}})
	requireCode(t, err, 13, "Unauthorized")
	if err := a.Database("app").RunCommand(inA, bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "c"}, {Key: "batchSize", Value: 2}}).Err(); err != nil {
		t.Errorf("owner's getMore: %v", err)
	}
	if _, err := runCmd(a, "app", bson.D{{Key: "killCursors", Value: "c"}, {Key: "cursors", Value: bson.A{id}}}); err != nil {
		t.Errorf("owner's killCursors: %v", err)
	}
}

// TestAuthBruteForce: many clients failing with wrong passwords at once
// do not stop the right one from authenticating, and each gets the right
// answer (checked by correctness under concurrency, not timing).
func TestAuthBruteForce(t *testing.T) {
	_, in := startAuthServer(t)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 4 {
				err := tryConnect(t, in, options.Credential{Username: rootUser, Password: fmt.Sprintf("guess-%d-%d", i, j), AuthSource: "admin"})
				if serverCode(err) != 18 {
					errs <- fmt.Errorf("wrong password %d/%d: %v", i, j, err)
				}
			}
		}()
	}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 4 {
				if err := tryConnect(t, in, options.Credential{Username: rootUser, Password: rootPassword, AuthSource: "admin"}); err != nil {
					errs <- fmt.Errorf("right password: %v", err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
