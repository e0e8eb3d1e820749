package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/folio-db/folio/tests/folioproc"
	"github.com/folio-db/folio/tests/testcerts"
)

// tlsServer starts a folio with -tls-mode requireTLS and connections
// without client certificates allowed, and returns it with the CA file and
// a client certificate key file.
func tlsServer(t *testing.T) (srv *folioproc.Proc, caFile, clientFile string) {
	t.Helper()
	dir := t.TempDir()
	ca := testcerts.NewCA(t, "folio e2e CA")
	caFile = testcerts.Write(t, dir, "ca.pem", ca.PEM)
	serverFile := testcerts.Write(t, dir, "server.pem", ca.Server(t))
	clientFile = testcerts.Write(t, dir, "client.pem", ca.Client(t, "e2e client"))
	srv = folioproc.Start(t, t.TempDir(), "-tls-mode", "requireTLS", "-tls-certificate-key-file", serverFile,
		"-tls-ca-file", caFile, "-tls-allow-connections-without-certificates")
	return srv, caFile, clientFile
}

// runTool runs argv under the script guard and fails t on a non-zero exit.
func runTool(t *testing.T, env []string, argv ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), scriptGuard)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(cmd.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", argv, err, out)
	}
}

// TestPymongoTLS runs tests/e2e/tls/pymongo_tls.py against a requireTLS
// folio.
func TestPymongoTLS(t *testing.T) {
	python, ok := findPython()
	if !ok {
		requireTool(t, "no Python with pymongo (FOLIO_PYTHON, /usr/bin/python3, python3)")
	}
	srv, caFile, clientFile := tlsServer(t)
	lib, err := filepath.Abs("python/lib")
	if err != nil {
		t.Fatal(err)
	}
	runTool(t, []string{"PYTHONPATH=" + lib}, python, "tls/pymongo_tls.py", srv.URI(), caFile, clientFile)
}

// TestMongoshTLS runs tests/e2e/tls/mongosh_tls.js with mongosh over TLS
// against a requireTLS folio.
func TestMongoshTLS(t *testing.T) {
	mongosh, ok := findMongosh()
	if !ok {
		requireTool(t, "mongosh not found (FOLIO_MONGOSH, PATH, .ci/node_modules/.bin)")
	}
	srv, caFile, _ := tlsServer(t)
	runTool(t, []string{"HOME=" + t.TempDir()}, mongosh, "--quiet", "--norc", "--tls", "--tlsCAFile", caFile, srv.URI(), "tls/mongosh_tls.js")
}
