package pebblekv

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/folio-db/folio/internal/mongoerr"
)

// fakeDisk is an injected FreeSpaceFunc whose figure the test sets.
type fakeDisk struct{ free atomic.Uint64 }

func (f *fakeDisk) space(string) (uint64, error) { return f.free.Load(), nil }

// TestDiskReserve checks the free-space guard: below the reserve, or when
// the batch would take the free space below it, a commit fails with
// OutOfDiskSpace (14031) and none of its writes exist, reads go on, and
// commits succeed again as soon as space returns, without reopening.
func TestDiskReserve(t *testing.T) {
	const reserve = 100 << 20
	disk := &fakeDisk{}
	disk.free.Store(1 << 30)
	db, err := Open(t.TempDir(), Options{DiskReserve: reserve, FreeSpace: disk.space})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	write := func(keys ...string) error {
		b := begin(t, db)
		defer b.Rollback()
		for _, k := range keys {
			if err := b.Set([]byte(k), []byte("v")); err != nil {
				t.Fatal(err)
			}
		}
		return commit(db, b, true)
	}
	has := func(key string) bool {
		_, ok, err := db.Get([]byte(key))
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if err := write("before"); err != nil {
		t.Fatal(err)
	}
	disk.free.Store(reserve - 1)
	// The guard reads the figure it cached at its last refresh.
	deadline := time.Now().Add(5 * time.Second)
	for db.space.avail.Load() >= reserve {
		if time.Now().After(deadline) {
			t.Fatal("free space never refreshed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	err = write("doc", "index1", "index2")
	if !mongoerr.Is(err, mongoerr.OutOfDiskSpace) {
		t.Fatalf("commit below the reserve: %v, want OutOfDiskSpace", err)
	}
	if !strings.Contains(err.Error(), "99 MB free") || !strings.Contains(err.Error(), "reserve of 100 MB") {
		t.Errorf("message %q names neither the free space nor the reserve", err)
	}
	for _, k := range []string{"doc", "index1", "index2"} {
		if has(k) {
			t.Errorf("refused batch left %q", k)
		}
	}
	if !has("before") {
		t.Error("read below the reserve lost an earlier write")
	}
	// A batch that would take the free space below the reserve is refused
	// too, naming its size.
	disk.free.Store(reserve + 10)
	err = write("doc", "index1")
	if !mongoerr.Is(err, mongoerr.OutOfDiskSpace) || !strings.Contains(err.Error(), "cannot write 29 bytes") {
		t.Fatalf("commit of a batch larger than the room above the reserve: %v, want OutOfDiskSpace", err)
	}
	if has("doc") {
		t.Error("refused batch left \"doc\"")
	}
	// With room for the batch above the reserve, writes resume.
	disk.free.Store(reserve + 29)
	if err := write("doc", "index1"); err != nil {
		t.Fatalf("commit once space returned: %v", err)
	}
	if !has("doc") || !has("index1") {
		t.Error("commit once space returned is missing")
	}
}

// TestDiskReserveAtOpen checks that a store is not opened below the
// reserve, with an error naming the directory, the free space and the
// reserve, and that an in-memory store has no guard.
func TestDiskReserveAtOpen(t *testing.T) {
	disk := &fakeDisk{}
	disk.free.Store(10 << 20)
	dir := t.TempDir()
	_, err := Open(dir, Options{DiskReserve: 128 << 20, FreeSpace: disk.space})
	if err == nil {
		t.Fatal("open below the reserve succeeded")
	}
	for _, want := range []string{dir, "10 MB free", "reserve of 128 MB"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	db, err := Open("", Options{InMemory: true, DiskReserve: 128 << 20, FreeSpace: disk.space})
	if err != nil {
		t.Fatalf("in memory: %v", err)
	}
	defer db.Close()
	b := begin(t, db)
	defer b.Rollback()
	if err := b.Set([]byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := commit(db, b, true); err != nil {
		t.Errorf("in-memory commit with a full disk: %v", err)
	}
}

// TestStatfs checks that the system's free space of a real directory is
// read and is not zero.
func TestStatfs(t *testing.T) {
	n, err := Statfs(t.TempDir())
	if err != nil || n == 0 {
		t.Fatalf("Statfs: %d, %v", n, err)
	}
}
