package embedded_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestExternalModule builds and runs a program of another module that
// starts an embedded Folio and talks to it through the driver: the
// package works from outside this module, with only its exported API.
func TestExternalModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program (-short)")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// The program's go.mod requires what Folio's does, as go mod tidy
	// would write it: the build then needs only modules Folio's own build
	// put in the module cache, with no proxy to ask (GOPROXY=off).
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	gomod := "module example.com/app\n\ngo 1.26.8\n\nrequire github.com/folio-db/folio v0.0.0\n\n" + requireBlocks(string(mod)) +
		"\nreplace github.com/folio-db/folio => " + root + "\n"
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	program := `package main

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/embedded"
)

func main() {
	ctx := context.Background()
	srv, err := embedded.Start(ctx, embedded.Options{InMemory: true})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	client, err := mongo.Connect(options.Client().ApplyURI(srv.URI()))
	if err != nil {
		panic(err)
	}
	defer client.Disconnect(ctx)
	coll := client.Database("x").Collection("y")
	if _, err := coll.InsertMany(ctx, []any{bson.D{{Key: "n", Value: 1}}, bson.D{{Key: "n", Value: 2}}}); err != nil {
		panic(err)
	}
	n, err := coll.CountDocuments(ctx, bson.D{})
	if err != nil {
		panic(err)
	}
	fmt.Println("documents:", n)
}
`
	for name, body := range map[string][]byte{"go.mod": []byte(gomod), "go.sum": sum, "main.go": []byte(program)} {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	build := exec.Command("go", "build", "-mod=mod", "-o", "app", ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(filepath.Join(dir, "app")).CombinedOutput()
	if err != nil {
		t.Fatalf("the program: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "documents: 2") {
		t.Errorf("the program printed %q", out)
	}
}

// requireBlocks returns the require blocks of the go.mod file mod.
func requireBlocks(mod string) string {
	var b strings.Builder
	in := false
	for _, line := range strings.Split(mod, "\n") {
		switch {
		case strings.HasPrefix(line, "require ("):
			in = true
		case in && line == ")":
			in = false
			b.WriteString(")\n")
			continue
		case !in:
			continue
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}
