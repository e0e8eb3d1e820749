package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// requireTool skips the test for a missing client tool, or fails it when
// FOLIO_E2E_REQUIRED=1 (as in CI), where a skip would hide a broken setup.
func requireTool(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("FOLIO_E2E_REQUIRED") == "1" {
		t.Fatalf(format+" (FOLIO_E2E_REQUIRED=1)", args...)
	}
	t.Skipf(format+"; set FOLIO_E2E_REQUIRED=1 to make this a failure", args...)
}

// findMongosh returns the mongosh binary: $FOLIO_MONGOSH, else mongosh on
// PATH, else the one .ci/run installs under <repo>/.ci.
func findMongosh() (string, bool) {
	if p := os.Getenv("FOLIO_MONGOSH"); p != "" {
		return p, true
	}
	if p, err := exec.LookPath("mongosh"); err == nil {
		return p, true
	}
	p, err := filepath.Abs(filepath.Join("..", "..", ".ci", "node_modules", ".bin", "mongosh"))
	if err != nil {
		return "", false
	}
	if _, err := os.Stat(p); err != nil {
		return "", false
	}
	return p, true
}

// findPython returns a Python that can import pymongo: $FOLIO_PYTHON, else
// /usr/bin/python3 (where Debian's python3-pymongo lives), else python3 on
// PATH.
func findPython() (string, bool) {
	candidates := []string{"/usr/bin/python3", "python3"}
	if p := os.Getenv("FOLIO_PYTHON"); p != "" {
		candidates = []string{p}
	}
	for _, c := range candidates {
		if exec.Command(c, "-c", "import pymongo").Run() == nil {
			return c, true
		}
	}
	return "", false
}

// findNodeDriver returns node and a node_modules directory holding the
// mongodb package: $FOLIO_NODE_MODULES, else the one .ci/run installs.
func findNodeDriver() (node, modules string, ok bool) {
	node, err := exec.LookPath("node")
	if err != nil {
		return "", "", false
	}
	modules = os.Getenv("FOLIO_NODE_MODULES")
	if modules == "" {
		if modules, err = filepath.Abs(filepath.Join("..", "..", ".ci", "node_modules")); err != nil {
			return "", "", false
		}
	}
	check := exec.Command(node, "-e", "require('mongodb')")
	check.Env = append(os.Environ(), "NODE_PATH="+modules)
	return node, modules, check.Run() == nil
}
