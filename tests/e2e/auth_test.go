package e2e

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/tests/folioproc"
)

// startAuthFolio runs folio -auth, creates a root user through the
// localhost exception and an application user (readWrite on e2e_auth),
// and returns the application user's URI.
func startAuthFolio(t *testing.T) string {
	t.Helper()
	srv := folioproc.Start(t, t.TempDir(), "-auth")
	ctx := context.Background()
	anon, err := mongo.Connect(options.Client().ApplyURI(srv.URI()).SetDirect(true))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = anon.Disconnect(ctx) }()
	if err := anon.Database("admin").RunCommand(ctx, bson.D{{Key: "createUser", Value: "admin"}, {Key: "pwd", Value: "adminpw"}, {Key: "roles", Value: bson.A{"root"}}}).Err(); err != nil {
		t.Fatalf("first user: %v", err)
	}
	root, err := mongo.Connect(options.Client().ApplyURI("mongodb://admin:adminpw@" + srv.Addr() + "/?authSource=admin").SetDirect(true))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = root.Disconnect(ctx) }()
	if err := root.Database("e2e_auth").RunCommand(ctx, bson.D{{Key: "createUser", Value: "appuser"}, {Key: "pwd", Value: "app pw"}, {Key: "roles", Value: bson.A{"readWrite"}}}).Err(); err != nil {
		t.Fatalf("app user: %v", err)
	}
	return "mongodb://appuser:app%20pw@" + srv.Addr() + "/?authSource=e2e_auth"
}

// TestAuthClients runs mongosh and pymongo against folio -auth with a
// plain user URI.
func TestAuthClients(t *testing.T) {
	uri := startAuthFolio(t)
	run := func(t *testing.T, args ...string) {
		out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	t.Run("mongosh", func(t *testing.T) {
		mongosh, ok := findMongosh()
		if !ok {
			requireTool(t, "mongosh not found (FOLIO_MONGOSH, PATH, .ci/node_modules/.bin)")
		}
		run(t, mongosh, "--quiet", "--norc", uri, "auth/login.js")
	})
	t.Run("pymongo", func(t *testing.T) {
		python, ok := findPython()
		if !ok {
			requireTool(t, "no Python with pymongo (FOLIO_PYTHON, /usr/bin/python3, python3)")
		}
		run(t, python, "auth/login.py", uri)
	})
}
