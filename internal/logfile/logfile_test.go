package logfile

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	slices.Sort(out)
	return out
}

// TestRename: an existing log is renamed aside at open unless appended
// to; each rotation renames the log to its time (twice in one second:
// suffixed) and starts a new one.
func TestRename(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "folio.log")
	if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 28, 4, 5, 6, 0, time.UTC)
	lf, err := Open(path, true, Rename)
	if err != nil {
		t.Fatal(err)
	}
	lf.now = func() time.Time { return at }
	if _, err := lf.Write([]byte("one\n")); err != nil {
		t.Fatal(err)
	}
	if got := read(t, path); got != "old\none\n" {
		t.Errorf("appended log %q", got)
	}
	for _, line := range []string{"two\n", "three\n"} {
		if err := lf.Rotate(); err != nil {
			t.Fatal(err)
		}
		if _, err := lf.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	if err := lf.Close(); err != nil {
		t.Fatal(err)
	}
	want := []string{"folio.log", "folio.log.2026-11-28T04-05-06", "folio.log.2026-11-28T04-05-06-1"}
	if got := names(t, dir); !slices.Equal(got, want) {
		t.Fatalf("files %v, want %v", got, want)
	}
	for name, content := range map[string]string{"folio.log": "three\n", want[1]: "old\none\n", want[2]: "two\n"} {
		if got := read(t, filepath.Join(dir, name)); got != content {
			t.Errorf("%s holds %q, want %q", name, got, content)
		}
	}
	// Without appending, the previous log is set aside at open.
	lf, err = Open(path, false, Rename)
	if err != nil {
		t.Fatal(err)
	}
	if err := lf.Close(); err != nil {
		t.Fatal(err)
	}
	if got := read(t, path); got != "" {
		t.Errorf("a log opened without append holds %q", got)
	}
	if n := len(names(t, dir)); n != 4 {
		t.Errorf("%d files after an open without append, want 4", n)
	}
}

// TestReopen: after a tool moved the log away, Rotate starts a new file
// at the path.
func TestReopen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "folio.log")
	lf, err := Open(path, false, Reopen)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lf.Write([]byte("a\n")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	if _, err := lf.Write([]byte("b\n")); err != nil {
		t.Fatal(err)
	}
	if err := lf.Rotate(); err != nil {
		t.Fatal(err)
	}
	if _, err := lf.Write([]byte("c\n")); err != nil {
		t.Fatal(err)
	}
	if err := lf.Close(); err != nil {
		t.Fatal(err)
	}
	if got := read(t, path+".1"); got != "a\nb\n" {
		t.Errorf("moved log %q", got)
	}
	if got := read(t, path); got != "c\n" {
		t.Errorf("reopened log %q", got)
	}
}
