// Package folioproc builds the folio binary and runs it as a child process
// for the end-to-end and crash tests, so they exercise the real command line,
// signal handling and on-disk recovery rather than an in-process server.
package folioproc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	// The blank import puts the server's packages into every test binary
	// that runs folio, so go test's result cache is invalidated when they
	// change; Binary covers cmd/folio itself.
	_ "github.com/folio-db/folio/internal/instance"
)

// startupGuard bounds how long Start waits for the "folio listening" log
// line, so a server that never comes up fails the test instead of hanging it.
const startupGuard = 2 * time.Minute

// logTail is how much of a server's log is kept for failure reports.
const logTail = 64 << 10

// built is the binary Binary builds, once per test process.
var built struct {
	once     sync.Once
	dir, bin string
	err      error
}

// Binary returns the folio binary under test: $FOLIO_BIN when set, else
// cmd/folio built on first use into a temporary directory that RunTests
// removes. It runs inside a test, where go test records the environment and
// the files it stats, so that a cached result is not reused after cmd/folio
// changes.
func Binary(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv("FOLIO_BIN"); bin != "" {
		return bin
	}
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "folio-bin-"); built.err == nil {
			built.bin, built.err = build(built.dir)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

// build compiles cmd/folio into dir and stats its sources (see Binary).
func build(dir string) (string, error) {
	const pkg = "github.com/folio-db/folio/cmd/folio"
	bin := filepath.Join(dir, "folio")
	if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
	}
	src, err := exec.Command("go", "list", "-f", "{{.Dir}}", pkg).Output()
	if err != nil {
		return "", fmt.Errorf("go list %s: %v", pkg, err)
	}
	files, err := filepath.Glob(filepath.Join(strings.TrimSpace(string(src)), "*.go"))
	if err != nil {
		return "", err
	}
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			return "", err
		}
	}
	return bin, nil
}

// RunTests runs a package's tests and then removes the binary Binary built.
// A package's TestMain calls it as os.Exit(folioproc.RunTests(m)).
func RunTests(m *testing.M) int {
	defer func() {
		if built.dir != "" {
			_ = os.RemoveAll(built.dir)
		}
	}()
	return m.Run()
}

// Proc is a running folio child process.
type Proc struct {
	cmd  *exec.Cmd
	addr string
	done chan struct{} // closed once the process has exited and been reaped
	err  error         // cmd.Wait's result, set before done is closed

	mu  sync.Mutex
	log bytes.Buffer // the tail of the server's stderr
}

// Start runs folio (see Binary) on a free 127.0.0.1 port with the given data directory and
// extra flags, and returns once the server logs that it is listening. The
// process is killed when the test ends if it is still running; if the test
// failed, the tail of its log is printed.
func Start(t testing.TB, dbpath string, args ...string) *Proc {
	t.Helper()
	bin := Binary(t)
	argv := append([]string{"--addr", "127.0.0.1:0", "--dbpath", dbpath, "--log-format", "json"}, args...)
	p := &Proc{cmd: exec.Command(bin, argv...), done: make(chan struct{})}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatalf("folio stderr pipe: %v", err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start folio: %v", err)
	}
	ready := make(chan string, 1)
	go p.readLog(stderr, ready)
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("folio log (pid %d, tail):\n%s", p.cmd.Process.Pid, p.Log())
		}
	})
	select {
	case p.addr = <-ready:
		return p
	case <-p.done:
		t.Fatalf("folio exited before listening (%v); log:\n%s", p.err, p.Log())
	case <-time.After(startupGuard):
		t.Fatalf("folio did not log \"folio listening\" within %v; log:\n%s", startupGuard, p.Log())
	}
	return nil
}

// readLog copies the server's JSON log into p.log, reports the listen
// address from the "folio listening" line on ready, and reaps the process
// once stderr closes.
func (p *Proc) readLog(stderr io.Reader, ready chan<- string) {
	sc := bufio.NewScanner(stderr)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	announced := false
	for sc.Scan() {
		line := sc.Bytes()
		p.mu.Lock()
		p.log.Write(line)
		p.log.WriteByte('\n')
		if over := p.log.Len() - logTail; over > 0 {
			p.log.Next(over)
		}
		p.mu.Unlock()
		if announced {
			continue
		}
		var rec struct{ Msg, Addr string }
		if json.Unmarshal(line, &rec) == nil && rec.Msg == "folio listening" {
			announced = true
			ready <- rec.Addr
		}
	}
	_, _ = io.Copy(io.Discard, stderr)
	p.err = p.cmd.Wait()
	close(p.done)
}

// Addr is the server's listen address.
func (p *Proc) Addr() string { return p.addr }

// PID is the server's process id.
func (p *Proc) PID() int { return p.cmd.Process.Pid }

// URI is a mongodb:// URI for the server.
func (p *Proc) URI() string { return "mongodb://" + p.addr + "/" }

// Log returns the retained tail of the server's log.
func (p *Proc) Log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// Signal sends sig to the server.
func (p *Proc) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Kill sends SIGKILL and waits for the process to be reaped. It is a no-op
// once the process has exited.
func (p *Proc) Kill() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// Wait waits for the process to exit, or for ctx to end, and returns its
// exit code (-1 when it was ended by a signal).
func (p *Proc) Wait(ctx context.Context) (int, error) {
	select {
	case <-p.done:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	var exit *exec.ExitError
	if p.err != nil && !errors.As(p.err, &exit) {
		return 0, p.err
	}
	return p.cmd.ProcessState.ExitCode(), nil
}
