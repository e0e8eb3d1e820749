package pebblekv

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/folio-db/folio/internal/mongoerr"
)

// TestDiskFullTmpfs fills a real, small filesystem (a 32 MB tmpfs the test
// mounts; skipped where mounting is not permitted) with no disk reserve, so
// that Pebble's own WAL writes hit ENOSPC: writes then fail with
// OutOfDiskSpace, reads go on, and once a ballast file is removed writes
// resume without reopening; every acknowledged write survives a reopen.
func TestDiskFullTmpfs(t *testing.T) {
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=32m"); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	defer func() {
		if err := syscall.Unmount(mnt, 0); err != nil {
			t.Errorf("unmount: %v", err)
		}
	}()
	ballast := filepath.Join(mnt, "ballast")
	if err := os.WriteFile(ballast, make([]byte, 8<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(mnt, "db")
	db, err := Open(dir, Options{CacheSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	value := make([]byte, 4096)
	commit := func(key string) error {
		b := begin(t, db)
		defer b.Rollback()
		if err := b.Set([]byte(key), value); err != nil {
			t.Fatal(err)
		}
		return b.Commit()
	}
	// The writer fills the disk; a commit caught in Pebble when the WAL
	// stalls waits there until space is freed.
	var stop atomic.Bool
	var acked atomic.Int64
	done := make(chan error, 1)
	go func() {
		for i := 0; !stop.Load(); i++ {
			if err := commit(fmt.Sprintf("k%06d", i)); err != nil {
				done <- err
				return
			}
			acked.Store(int64(i + 1))
		}
		done <- nil
	}()
	waitFor(t, "a write stalls on the full tmpfs", func() bool { return db.space.stalled.Load() > 0 })
	stop.Store(true)
	if err := commit("refused"); !mongoerr.Is(err, mongoerr.OutOfDiskSpace) {
		t.Fatalf("commit on a full disk: %v, want OutOfDiskSpace", err)
	}
	if _, ok, err := db.Get([]byte("k000000")); err != nil || !ok {
		t.Fatalf("read on a full disk: %v, %v", ok, err)
	}
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil && !mongoerr.Is(err, mongoerr.OutOfDiskSpace) {
		t.Fatalf("writer: %v", err)
	}
	waitFor(t, "the stall ends", func() bool { return db.space.stalled.Load() == 0 })
	if err := commit("after"); err != nil {
		t.Fatalf("commit once space was freed: %v", err)
	}
	if err := db.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = Open(dir, Options{CacheSize: 8 << 20}); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	n := int(acked.Load())
	for _, k := range []string{"k000000", fmt.Sprintf("k%06d", n-1), "after"} {
		if _, ok, err := db.Get([]byte(k)); err != nil || !ok {
			t.Errorf("after reopening, %q: %v, %v", k, ok, err)
		}
	}
	if _, ok, _ := db.Get([]byte("refused")); ok {
		t.Error("after reopening, the refused commit exists")
	}
	t.Logf("%d writes acknowledged before the disk filled", n)
}
