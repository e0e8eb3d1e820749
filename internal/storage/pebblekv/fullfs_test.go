package pebblekv

import (
	"bytes"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/folio-db/folio/internal/mongoerr"
)

// fullDisk injects ENOSPC into every operation that takes disk space
// (creating, linking, renaming files and directories, writing) while on,
// as a filesystem that has filled up does; reads, syncs and removals go on.
// A non-empty suffix limits the failures to the files named with it.
type fullDisk struct {
	on     atomic.Bool
	suffix string
}

func (d *fullDisk) MaybeError(op errorfs.Op) error {
	if !d.on.Load() || !strings.HasSuffix(op.Path, d.suffix) {
		return nil
	}
	switch op.Kind {
	case errorfs.OpCreate, errorfs.OpLink, errorfs.OpRename, errorfs.OpReuseForWrite,
		errorfs.OpMkdirAll, errorfs.OpFileWrite, errorfs.OpFileWriteAt:
		return syscall.ENOSPC
	}
	return nil
}

func (d *fullDisk) String() string { return "full disk" }

// waitFor polls cond for up to 10s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestDiskFull checks that a disk filling up under Pebble (ENOSPC from a
// WAL write and a flush) neither crashes the store nor loses or half-applies
// a write: the writes in flight wait, new commits fail with OutOfDiskSpace
// (14031) and leave nothing, reads go on, and once space is freed the
// waiting writes finish, new ones succeed, and everything survives a reopen.
func TestDiskFull(t *testing.T) {
	disk := &fullDisk{}
	dir := t.TempDir()
	opts := Options{FS: errorfs.Wrap(vfs.Default, disk)}
	db, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	write := func(sync bool, keys ...string) error {
		b := begin(t, db)
		defer b.Rollback()
		for _, k := range keys {
			if err := b.Set([]byte(k), []byte("v")); err != nil {
				t.Fatal(err)
			}
		}
		return commit(db, b, sync)
	}
	has := func(key string) bool {
		t.Helper()
		_, ok, err := db.Get([]byte(key))
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if err := write(true, "before"); err != nil {
		t.Fatal(err)
	}

	disk.on.Store(true)
	// A synced commit already past the guard stalls on its WAL write...
	inFlight := make(chan error, 1)
	go func() { inFlight <- write(true, "inflight") }()
	waitFor(t, "the WAL write stalls", func() bool { return db.space.stalled.Load() > 0 })
	// ...and so does a flush of the memtable to an sstable.
	flushed := make(chan error, 1)
	go func() { flushed <- db.Flush() }()
	select {
	case err := <-inFlight:
		t.Fatalf("commit finished on a full disk: %v", err)
	case err := <-flushed:
		t.Fatalf("flush finished on a full disk: %v", err)
	case <-time.After(3 * spaceRefresh):
	}

	// New commits are refused before Pebble sees them.
	err = write(true, "doc", "index1")
	if !mongoerr.Is(err, mongoerr.OutOfDiskSpace) {
		t.Fatalf("commit on a full disk: %v, want OutOfDiskSpace", err)
	}
	if !strings.Contains(err.Error(), dir) {
		t.Errorf("message %q does not name the directory", err)
	}
	if err := write(false, "nosync"); !mongoerr.Is(err, mongoerr.OutOfDiskSpace) {
		t.Fatalf("unsynced commit on a full disk: %v, want OutOfDiskSpace", err)
	}
	for _, k := range []string{"doc", "index1", "nosync"} {
		if has(k) {
			t.Errorf("refused commit left %q", k)
		}
	}
	// Reads go on: point reads and scans.
	if !has("before") {
		t.Error("point read on a full disk lost an earlier write")
	}
	it, err := db.NewIter(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !it.First() || !bytes.Equal(it.Key(), []byte("before")) {
		t.Errorf("scan on a full disk does not find the earlier write")
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}

	// Space is freed: the stalled work finishes and writes resume without
	// reopening the store.
	disk.on.Store(false)
	if err := <-inFlight; err != nil {
		t.Fatalf("stalled commit once space returned: %v", err)
	}
	if err := <-flushed; err != nil {
		t.Fatalf("stalled flush once space returned: %v", err)
	}
	waitFor(t, "the stall ends", func() bool { return db.space.stalled.Load() == 0 })
	if err := write(true, "doc", "index1"); err != nil {
		t.Fatalf("commit once space returned: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = Open(dir, opts); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, k := range []string{"before", "inflight", "doc", "index1"} {
		if !has(k) {
			t.Errorf("after reopening, %q is missing", k)
		}
	}
	if has("nosync") {
		t.Error("after reopening, the refused commit exists")
	}
}

// TestDiskFullFlush checks that a flush whose sstable the disk has no room
// for waits for space, instead of failing and being retried at once by
// Pebble, while commits are refused and reads go on.
func TestDiskFullFlush(t *testing.T) {
	disk := &fullDisk{suffix: ".sst"}
	db, err := Open(t.TempDir(), Options{FS: errorfs.Wrap(vfs.Default, disk)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	commit := func(key string) error {
		b := begin(t, db)
		defer b.Rollback()
		if err := b.Set([]byte(key), bytes.Repeat([]byte("v"), 1000)); err != nil {
			t.Fatal(err)
		}
		return b.Commit()
	}
	if err := commit("a"); err != nil {
		t.Fatal(err)
	}
	disk.on.Store(true)
	flushed := make(chan error, 1)
	go func() { flushed <- db.Flush() }()
	waitFor(t, "the flush stalls", func() bool { return db.space.stalled.Load() > 0 })
	if err := commit("b"); !mongoerr.Is(err, mongoerr.OutOfDiskSpace) {
		t.Fatalf("commit while a flush stalls: %v, want OutOfDiskSpace", err)
	}
	if v, ok, err := db.Get([]byte("a")); err != nil || !ok || len(v) != 1000 {
		t.Fatalf("read while a flush stalls: %d bytes, %v, %v", len(v), ok, err)
	}
	disk.on.Store(false)
	if err := <-flushed; err != nil {
		t.Fatalf("stalled flush once space returned: %v", err)
	}
	if n, err := db.EstimateDiskUsage([]byte("a"), []byte("b")); err != nil || n == 0 {
		t.Fatalf("flushed data on disk: %d bytes, %v", n, err)
	}
	waitFor(t, "the stall ends", func() bool { return db.space.stalled.Load() == 0 })
	if err := commit("b"); err != nil {
		t.Fatalf("commit once space returned: %v", err)
	}
}

// TestDiskFullAtOpen checks that a store whose disk is full when it opens
// fails to open with an error saying so: it neither stalls nor crashes.
func TestDiskFullAtOpen(t *testing.T) {
	disk := &fullDisk{}
	disk.on.Store(true)
	dir := t.TempDir()
	done := make(chan error, 1)
	go func() {
		db, err := Open(dir, Options{FS: errorfs.Wrap(vfs.Default, disk)})
		if err == nil {
			db.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not enough free disk space to open the store in "+dir) {
			t.Fatalf("open on a full disk: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("open on a full disk hangs")
	}
}

// TestCloseOnFullDisk checks that closing the store while a WAL write
// waits for space neither fails that write (Pebble would treat it as
// fatal) nor loses it: Close reports DiskFull meanwhile and waits, and
// once space is freed the write and Close finish and the write survives a
// reopen.
func TestCloseOnFullDisk(t *testing.T) {
	disk := &fullDisk{}
	dir := t.TempDir()
	opts := Options{FS: errorfs.Wrap(vfs.Default, disk)}
	db, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	disk.on.Store(true)
	committed := make(chan error, 1)
	go func() {
		b := begin(t, db)
		defer b.Rollback()
		if err := b.Set([]byte("k"), []byte("v")); err != nil {
			t.Error(err)
		}
		committed <- commit(db, b, true)
	}()
	waitFor(t, "the WAL write stalls", db.DiskFull)
	closed := make(chan error, 1)
	go func() { closed <- db.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned on a full disk: %v", err)
	case err := <-committed:
		t.Fatalf("the waiting commit returned on a full disk: %v", err)
	case <-time.After(3 * spaceRefresh):
	}
	if !db.DiskFull() {
		t.Error("DiskFull is false while a write waits")
	}
	disk.on.Store(false)
	if err := <-committed; err != nil {
		t.Fatalf("commit once space returned: %v", err)
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close once space returned: %v", err)
	}
	if db, err = Open(dir, opts); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, ok, err := db.Get([]byte("k")); err != nil || !ok {
		t.Fatalf("after reopening: %v, %v", ok, err)
	}
}
