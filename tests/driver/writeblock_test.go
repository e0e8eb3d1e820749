package driver_test

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/internal/instance"
	"github.com/folio-db/folio/internal/storage/testkv"
)

// TestUserWriteBlockMode: setUserWriteBlockMode makes the writes of a user
// without bypassWriteBlockingMode fail with UserWritesBlocked (371) where
// they would change something (an update matching nothing succeeds), and
// catalog changes too, outside admin, config and local; reads go on; root
// (through restore) bypasses the block; it survives a restart and lifts.
func TestUserWriteBlockMode(t *testing.T) {
	testkv.SkipOnTiKV(t, "the test restarts a server on its Pebble data directory")
	ctx := context.Background()
	cfg := defaultConfig()
	cfg.Auth, cfg.InMemory, cfg.DBPath = true, false, t.TempDir()
	first, err := instance.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	createRootUser(t, first)
	// The first server's clients disconnect before it closes.
	as := func(user, pwd string) *mongo.Client {
		return dial(t, first, options.Client().SetAuth(options.Credential{Username: user, Password: pwd, AuthSource: "admin"}))
	}
	root := as(rootUser, rootPassword)
	if _, err := runCmd(root, "admin", bson.D{{Key: "createUser", Value: "writer"}, {Key: "pwd", Value: "writer-pw"},
		{Key: "roles", Value: bson.A{bson.D{{Key: "role", Value: "readWriteAnyDatabase"}, {Key: "db", Value: "admin"}}, bson.D{{Key: "role", Value: "dbAdminAnyDatabase"}, {Key: "db", Value: "admin"}}}}}); err != nil {
		t.Fatal(err)
	}
	writer := as("writer", "writer-pw")
	if _, err := writer.Database(testDB).Collection("wb").InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}}, bson.D{{Key: "_id", Value: 2}, {Key: "a", Value: 2}}}); err != nil {
		t.Fatal(err)
	}
	block := func(c *mongo.Client, on bool) error {
		_, err := runCmd(c, "admin", bson.D{{Key: "setUserWriteBlockMode", Value: 1}, {Key: "global", Value: on}})
		return err
	}
	if err := block(writer, true); serverCode(err) != 13 {
		t.Fatalf("setUserWriteBlockMode without the privilege: %v, want 13", err)
	}
	if err := block(root, true); err != nil {
		t.Fatal(err)
	}
	checkBlocked(t, writer)
	// root bypasses the block
	if _, err := root.Database(testDB).Collection("wb").InsertOne(ctx, bson.D{{Key: "_id", Value: 3}}); err != nil {
		t.Fatalf("root's insert while blocked: %v", err)
	}
	root.Disconnect(ctx)
	writer.Disconnect(ctx)
	if err := first.Close(ctx); err != nil {
		t.Fatal(err)
	}

	// The block survives a restart, and lifts.
	second := startInstance(t, cfg)
	root = connectAs(t, second, rootUser, rootPassword, "admin", "")
	writer = connectAs(t, second, "writer", "writer-pw", "admin", "")
	checkBlocked(t, writer)
	if err := block(root, false); err != nil {
		t.Fatal(err)
	}
	if _, err := writer.Database(testDB).Collection("wb").InsertOne(ctx, bson.D{{Key: "_id", Value: 4}}); err != nil {
		t.Fatalf("insert after the block lifted: %v", err)
	}
	for _, tc := range []struct {
		cmd  bson.D
		code int
	}{
		{bson.D{{Key: "setUserWriteBlockMode", Value: 1}}, 40414},
		{bson.D{{Key: "setUserWriteBlockMode", Value: 1}, {Key: "global", Value: 1}}, 14},
		{bson.D{{Key: "setUserWriteBlockMode", Value: 1}, {Key: "global", Value: true}, {Key: "reason", Value: "x"}}, 40415},
	} {
		if _, err := runCmd(root, "admin", tc.cmd); serverCode(err) != tc.code {
			t.Errorf("%v: %v, want %d", tc.cmd, err, tc.code)
		}
	}
	if _, err := runCmd(root, testDB, bson.D{{Key: "setUserWriteBlockMode", Value: 1}, {Key: "global", Value: true}}); serverCode(err) != 13 {
		t.Errorf("setUserWriteBlockMode outside admin: %v, want 13", err)
	}
}

// checkBlocked checks, as a client without bypassWriteBlockingMode, what
// the user write block refuses and what it lets through.
func checkBlocked(t *testing.T, c *mongo.Client) {
	t.Helper()
	ctx := context.Background()
	coll := c.Database(testDB).Collection("wb")
	writeErr := func(reply bson.Raw) int {
		code, _ := reply.Lookup("writeErrors", "0", "code").AsInt64OK()
		return int(code)
	}
	for _, tc := range []struct {
		name string
		db   string
		cmd  bson.D
		// code is the error, or the first write error's code.
		code int
	}{
		{"insert", testDB, bson.D{{Key: "insert", Value: "wb"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 9}}}}}, 371},
		{"insert into a new collection", testDB, bson.D{{Key: "insert", Value: "wb_new"}, {Key: "documents", Value: bson.A{bson.D{}}}}, 371},
		{"update", testDB, bson.D{{Key: "update", Value: "wb"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "b", Value: 1}}}}}}}}}, 371},
		{"update matching nothing", testDB, bson.D{{Key: "update", Value: "wb"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 99}}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "b", Value: 1}}}}}}}}}, 0},
		{"upsert", testDB, bson.D{{Key: "update", Value: "wb"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 99}}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "b", Value: 1}}}}}, {Key: "upsert", Value: true}}}}}, 371},
		{"delete", testDB, bson.D{{Key: "delete", Value: "wb"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "limit", Value: 0}}}}}, 371},
		{"findAndModify", testDB, bson.D{{Key: "findAndModify", Value: "wb"}, {Key: "query", Value: bson.D{}}, {Key: "remove", Value: true}}, 371},
		{"createIndexes", testDB, bson.D{{Key: "createIndexes", Value: "wb"}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "b", Value: 1}}}, {Key: "name", Value: "b_1"}}}}}, 371},
		{"drop", testDB, bson.D{{Key: "drop", Value: "wb"}}, 371},
		{"create", testDB, bson.D{{Key: "create", Value: "wb2"}}, 371},
		{"renameCollection", "admin", bson.D{{Key: "renameCollection", Value: testDB + ".wb"}, {Key: "to", Value: testDB + ".wb3"}}, 371},
		{"$out", testDB, bson.D{{Key: "aggregate", Value: "wb"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$out", Value: "wb_out"}}}}, {Key: "cursor", Value: bson.D{}}}, 371},
		{"find", testDB, bson.D{{Key: "find", Value: "wb"}}, 0},
		{"count", testDB, bson.D{{Key: "count", Value: "wb"}}, 0},
		{"an insert into local", "local", bson.D{{Key: "insert", Value: "wb_local"}, {Key: "documents", Value: bson.A{bson.D{}}}}, 0},
	} {
		reply, err := runCmd(c, tc.db, tc.cmd)
		code := serverCode(err)
		if err == nil {
			code = writeErr(reply)
		}
		if code != tc.code {
			t.Errorf("%s while blocked: %v %v, want code %d", tc.name, reply, err, tc.code)
		}
	}
	if n, err := coll.CountDocuments(ctx, bson.D{}); err != nil || n < 2 {
		t.Errorf("documents while blocked: %d %v", n, err)
	}
}

// TestUserWriteBlockWithoutAccessControl: without access control no
// client holds bypassWriteBlockingMode, so every client's writes are
// blocked, as in MongoDB.
func TestUserWriteBlockWithoutAccessControl(t *testing.T) {
	if testAuth() {
		t.Skip("under FOLIO_TEST_AUTH=1 the suite's clients are root, which bypasses the block")
	}
	client, _ := startServer(t)
	if _, err := runCmd(client, "admin", bson.D{{Key: "setUserWriteBlockMode", Value: 1}, {Key: "global", Value: true}}); err != nil {
		t.Fatal(err)
	}
	_, err := client.Database(testDB).Collection("wb").InsertOne(context.Background(), bson.D{})
	requireCode(t, err, 371, "")
	if _, err := runCmd(client, "admin", bson.D{{Key: "setUserWriteBlockMode", Value: 1}, {Key: "global", Value: false}}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Database(testDB).Collection("wb").InsertOne(context.Background(), bson.D{}); err != nil {
		t.Fatal(err)
	}
}
