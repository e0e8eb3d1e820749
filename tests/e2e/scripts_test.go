package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/folio-db/folio/tests/folioproc"
)

// scriptGuard bounds one script's run so a hung client cannot hang the suite.
const scriptGuard = 5 * time.Minute

// TestMongosh runs every tests/e2e/mongosh/*.js with mongosh against one
// on-disk folio; each script is a subtest and fails by throwing.
func TestMongosh(t *testing.T) {
	mongosh, ok := findMongosh()
	if !ok {
		requireTool(t, "mongosh not found (FOLIO_MONGOSH, PATH, .ci/node_modules/.bin)")
	}
	runScripts(t, "mongosh/*.js", func(uri, script string) []string {
		return []string{mongosh, "--quiet", "--norc", uri, script}
	})
}

// TestPymongo runs every tests/e2e/python/*.py against one on-disk folio;
// each script is a subtest, gets the server URI as its argument and fails by
// raising.
func TestPymongo(t *testing.T) {
	python, ok := findPython()
	if !ok {
		requireTool(t, "no Python with pymongo (FOLIO_PYTHON, /usr/bin/python3, python3)")
	}
	runScripts(t, "python/*.py", func(uri, script string) []string {
		return []string{python, script, uri}
	})
}

// TestNodeDriver runs every tests/e2e/node/*.js with node and the official
// Node driver (the mongodb package .ci/run installs) against one on-disk
// folio; each script gets the server URI as its argument and fails by
// exiting non-zero.
func TestNodeDriver(t *testing.T) {
	node, modules, ok := findNodeDriver()
	if !ok {
		requireTool(t, "node with the mongodb package not found (FOLIO_NODE_MODULES, .ci/node_modules)")
	}
	t.Setenv("NODE_PATH", modules)
	runScripts(t, "node/*.js", func(uri, script string) []string {
		return []string{node, script, uri}
	})
}

// runScripts starts a folio and runs each script matching pattern as a
// subtest, with the command line argv builds.
func runScripts(t *testing.T, pattern string, argv func(uri, script string) []string) {
	scripts, err := filepath.Glob(pattern)
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no scripts match %s (err %v)", pattern, err)
	}
	srv := folioproc.Start(t, t.TempDir())
	for _, script := range scripts {
		name := strings.TrimSuffix(filepath.Base(script), filepath.Ext(script))
		t.Run(name, func(t *testing.T) {
			// go test records the stat, so an edited script is not
			// passed from the result cache.
			if _, err := os.Stat(script); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), scriptGuard)
			defer cancel()
			args := argv(srv.URI(), script)
			cmd := exec.CommandContext(ctx, args[0], args[1:]...)
			cmd.Env = append(cmd.Environ(), "HOME="+t.TempDir())
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
			}
			if len(out) > 0 {
				t.Logf("output:\n%s", out)
			}
		})
	}
}
