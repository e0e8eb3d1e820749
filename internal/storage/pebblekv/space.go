package pebblekv

import (
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/folio-db/folio/internal/mongoerr"
)

// spaceRefresh is how often the guard re-reads the free space, and how
// often a write stalled on a full disk is retried.
const spaceRefresh = 250 * time.Millisecond

// FreeSpaceFunc reports the bytes free to an unprivileged writer on the
// filesystem holding dir.
type FreeSpaceFunc func(dir string) (uint64, error)

// spaceGuard refuses commits that might not fit on the disk, so that a
// write fails with OutOfDiskSpace before Pebble sees any of it: nothing of
// it is written and reads go on. It refuses a commit when the free space
// minus the batch is below the reserve, and while any file system operation
// is stalled on a full disk (see fullFS). The free space is cached (one
// atomic load per commit), refreshed every spaceRefresh and again before each
// refusal, so writes resume as soon as space is freed.
type spaceGuard struct {
	dir     string
	reserve uint64
	free    FreeSpaceFunc
	log     *slog.Logger
	avail   atomic.Uint64
	// stalled counts the file system operations waiting for space.
	stalled atomic.Int32
	// opening is set while Pebble opens the store: a full disk then fails
	// the open (fullOpen records it) instead of stalling it.
	opening  atomic.Bool
	fullOpen atomic.Bool
	stop     chan struct{}
	done     chan struct{}
}

// newSpaceGuard reads the free space of dir once and fails, naming the
// directory, the free space and the reserve, when it is below the reserve:
// a store that cannot take a write is not opened. A zero reserve disables the
// free-space check; stalls on a full disk are still handled.
func newSpaceGuard(dir string, reserve uint64, free FreeSpaceFunc, log *slog.Logger) (*spaceGuard, error) {
	if free == nil {
		free = Statfs
	}
	g := &spaceGuard{dir: dir, reserve: reserve, free: free, log: log, stop: make(chan struct{}), done: make(chan struct{})}
	g.opening.Store(true)
	if reserve == 0 {
		close(g.done)
		return g, nil
	}
	n, err := free(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the free disk space of %s: %w", dir, err)
	}
	if n < reserve {
		return nil, fmt.Errorf("not enough free disk space to start: %s has %s free, below the disk reserve of %s; free some space or lower the reserve (-disk-reserve-mb)", dir, mb(n), mb(reserve))
	}
	g.avail.Store(n)
	go g.watch()
	return g, nil
}

// mb formats a byte count in whole megabytes (2^20 bytes).
func mb(n uint64) string { return fmt.Sprintf("%d MB", n>>20) }

// refresh re-reads the free space; on failure the last figure stands.
func (g *spaceGuard) refresh() uint64 {
	n, err := g.free(g.dir)
	if err != nil {
		if g.log != nil {
			g.log.Error("reading free disk space", "dir", g.dir, "err", err)
		}
		return g.avail.Load()
	}
	g.avail.Store(n)
	return n
}

func (g *spaceGuard) watch() {
	defer close(g.done)
	t := time.NewTicker(spaceRefresh)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			g.refresh()
		case <-g.stop:
			return
		}
	}
}

// check returns OutOfDiskSpace when a write of size bytes would leave less
// free space than the reserve, or while the disk is full.
func (g *spaceGuard) check(size int) error {
	if g == nil {
		return nil
	}
	if g.stalled.Load() > 0 {
		return mongoerr.New(mongoerr.OutOfDiskSpace, "cannot write: the disk holding %s is full; writes resume once space is freed", g.dir)
	}
	if g.reserve == 0 || g.avail.Load() >= g.reserve+uint64(size) {
		return nil
	}
	if n := g.refresh(); n < g.reserve+uint64(size) {
		return mongoerr.New(mongoerr.OutOfDiskSpace, "cannot write %d bytes: %s free in %s, below the disk reserve of %s", size, mb(n), g.dir, mb(g.reserve))
	}
	return nil
}

// retry runs op and, if the disk has no room for it, stalls it (see stall).
func (g *spaceGuard) retry(op func() error) error {
	err := op()
	if isNoSpace(err) {
		err = g.stall(err, op)
	}
	return err
}

// stall handles err, a file system operation's failure for lack of space:
// while the store opens, or once it closed, it returns err; otherwise it
// retries op every spaceRefresh until op no longer fails for lack of space,
// and returns op's result. Commits are refused while any operation stalls.
func (g *spaceGuard) stall(err error, op func() error) error {
	if g.opening.Load() {
		g.fullOpen.Store(true)
		return err
	}
	if g.stalled.Add(1) == 1 && g.log != nil {
		g.log.Error("disk full: writes fail with OutOfDiskSpace until space is freed", "dir", g.dir, "err", err)
	}
	defer func() {
		if g.stalled.Add(-1) == 0 && g.log != nil && !isNoSpace(err) {
			g.log.Info("disk space freed: writes resume", "dir", g.dir)
		}
	}()
	t := time.NewTicker(spaceRefresh)
	defer t.Stop()
	for isNoSpace(err) {
		select {
		case <-g.stop:
			return err
		case <-t.C:
		}
		err = op()
	}
	return err
}

// close stops the refresher and ends every stall with its error; the store
// calls it once Pebble is closed, when nothing writes any more.
func (g *spaceGuard) close() {
	if g != nil {
		close(g.stop)
		<-g.done
	}
}
