package pebblekv

import (
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/folio-db/folio/internal/mongoerr"
)

// spaceRefresh is how often the guard re-reads the free space.
const spaceRefresh = 250 * time.Millisecond

// FreeSpaceFunc reports the bytes free to an unprivileged writer on the
// filesystem holding dir.
type FreeSpaceFunc func(dir string) (uint64, error)

// spaceGuard refuses commits while the data directory's filesystem has
// less free space than the reserve. Pebble treats a failed WAL write as
// fatal, so a write that might not fit is refused before Pebble sees it:
// nothing of it is written and reads go on. The figure is cached (one atomic
// load per commit), refreshed every spaceRefresh and again before each
// refusal, so writes resume as soon as space is freed.
type spaceGuard struct {
	dir     string
	reserve uint64
	free    FreeSpaceFunc
	log     *slog.Logger
	avail   atomic.Uint64
	stop    chan struct{}
	done    chan struct{}
}

// newSpaceGuard reads the free space of dir once and fails, naming the
// directory, the free space and the reserve, when it is below the reserve:
// a store that cannot take a write is not opened.
func newSpaceGuard(dir string, reserve uint64, free FreeSpaceFunc, log *slog.Logger) (*spaceGuard, error) {
	if free == nil {
		free = Statfs
	}
	g := &spaceGuard{dir: dir, reserve: reserve, free: free, log: log, stop: make(chan struct{}), done: make(chan struct{})}
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

// check returns OutOfDiskSpace when the free space is below the reserve.
func (g *spaceGuard) check() error {
	if g == nil || g.avail.Load() >= g.reserve {
		return nil
	}
	if n := g.refresh(); n < g.reserve {
		return mongoerr.New(mongoerr.OutOfDiskSpace, "cannot write: %s free in %s, below the disk reserve of %s", mb(n), g.dir, mb(g.reserve))
	}
	return nil
}

// close stops the refresher.
func (g *spaceGuard) close() {
	if g != nil {
		close(g.stop)
		<-g.done
	}
}
