package pebblekv

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain lets the test binary hold a store open in a child process: with
// PEBBLEKV_HOLD=<dir> it opens dir, says "open" and waits for stdin to close.
func TestMain(m *testing.M) {
	if dir := os.Getenv("PEBBLEKV_HOLD"); dir != "" {
		db, err := Open(dir, Options{})
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("open")
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		db.Close()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestOpenLockedDirectory checks that opening a directory another process
// holds fails with an error naming the directory, that process's pid and
// what to do, and that the directory opens once it is released.
func TestOpenLockedDirectory(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PEBBLEKV_HOLD="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if strings.TrimSpace(line) != "open" {
		t.Fatalf("child: %q", line)
	}

	_, err = Open(dir, Options{})
	if err == nil {
		t.Fatal("opened a directory another process holds")
	}
	abs, _ := filepath.Abs(dir)
	for _, want := range []string{abs, fmt.Sprintf("pid %d", cmd.Process.Pid), "stop that server", "-dbpath"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}

	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("open after release: %v", err)
	}
	defer db.Close()
	_, err = Open(dir, Options{})
	if err == nil || !strings.Contains(err.Error(), "already open in this process") || !strings.Contains(err.Error(), abs) {
		t.Fatalf("second open in one process: %v", err)
	}
}
