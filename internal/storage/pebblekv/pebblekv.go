// Package pebblekv implements storage.KV on Pebble, the embedded default.
// Concurrent synchronous commits share WAL fsyncs (Pebble's commit pipeline
// groups them), so many writers pay for one sync.
package pebblekv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/folio-db/folio/internal/clock"
	"github.com/folio-db/folio/internal/storage"
)

// Options configure Open.
type Options struct {
	// InMemory keeps all data in memory, without a write-ahead log
	// (tests, -in-memory); Dir is then ignored.
	InMemory bool
	// CacheSize is the block cache size in bytes; zero picks a default.
	CacheSize int64
	// RowCacheSize is the size in bytes of the cache of recently read
	// values (see rowCache); zero picks a default, a negative size none.
	RowCacheSize int64
	// Uncached are the key spaces (a key's first byte) the row cache
	// never holds: keys rewritten by most commits and read almost never
	// (sessions' records, read at startup), whose entries would cost each
	// commit a lookup and a copy for no read.
	Uncached []byte
	// Logger receives Pebble's own log lines; nil discards them.
	Logger *slog.Logger
	// DiskReserve is the free space, in bytes, the data directory's
	// filesystem keeps: below it commits fail with OutOfDiskSpace and
	// Open fails. Zero, or InMemory, disables the free-space check; a
	// store on disk always survives a full disk (see fullFS).
	DiskReserve uint64
	// FreeSpace reports the free space of the data directory's filesystem;
	// nil uses Statfs. Tests inject it.
	FreeSpace FreeSpaceFunc
	// FS is the file system under the store; nil is the operating
	// system's. Tests inject failures through it.
	FS vfs.FS
	// Clock gives the stamps of stamped writes (storage.StampedTxn); nil
	// is a clock of the store's own.
	Clock clock.Source
}

// DB is a Pebble-backed storage.KV.
type DB struct {
	db *pebble.DB
	// inMemory: the store lives in memory, without a write-ahead log.
	inMemory bool
	space    *spaceGuard
	// log orders commits and detects transactions' write conflicts.
	log *commitLog
	// rows caches values of the latest state for Get; nil when disabled.
	rows *rowCache
	// stamps gives stamped writes their stamps (storage.StampedTxn).
	stamps *stamps
	// compact compacts the spans scans found full of hidden keys.
	compact *compactor
	// unflushed counts the commits not yet flushed into tables, for
	// EstimateDiskUsage.
	unflushed *unflushed
}

var (
	_ storage.KV                 = (*DB)(nil)
	_ storage.DiskUsageEstimator = (*DB)(nil)
	_ storage.UnflushedGrouper   = (*DB)(nil)
)

// defaultRowCache is the row cache's size unless Options set one.
const defaultRowCache = 128 << 20

// Open opens (creating if needed) the store in dir. A directory another
// process has open is an error naming the directory and that process.
func Open(dir string, opts Options) (*DB, error) {
	po := &pebble.Options{Logger: pebbleLogger{opts.Logger}}
	if opts.InMemory {
		// Nothing in memory outlives the process, so a write-ahead log
		// would only be written, never read: it took about 40% of an
		// in-process one-document update's CPU (its file grows by copying).
		po.FS, po.DisableWAL = vfs.NewMem(), true
		dir = ""
	}
	size := opts.CacheSize
	if size == 0 {
		size = 256 << 20
	}
	cache := pebble.NewCache(size)
	defer cache.Unref()
	po.Cache = cache
	Tune(po)
	pending := &unflushed{}
	po.EventListener = &pebble.EventListener{FlushBegin: pending.flushBegan, FlushEnd: pending.flushEnded}
	var space *spaceGuard
	if !opts.InMemory {
		// The directory must exist for its filesystem to be asked.
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		var err error
		if space, err = newSpaceGuard(dir, opts.DiskReserve, opts.FreeSpace, opts.Logger); err != nil {
			return nil, err
		}
		inner := opts.FS
		if inner == nil {
			inner = vfs.Default
		}
		po.FS = fullFS{FS: inner, g: space}
	}
	db, err := openPebble(dir, po, space)
	if err != nil {
		space.close()
		return nil, explainOpen(dir, err)
	}
	if space != nil {
		space.opening.Store(false)
	}
	rows := opts.RowCacheSize
	if rows == 0 {
		rows = defaultRowCache
	}
	return &DB{db: db, space: space, log: newCommitLog(), rows: newRowCache(rows, opts.Uncached), stamps: newStamps(opts.Clock), compact: newCompactor(db, opts.Logger), unflushed: pending, inMemory: opts.InMemory}, nil
}

// openPebble opens Pebble. Pebble treats some write failures while opening
// (the MANIFEST) as fatal; when the disk was full, that is an error saying
// so rather than a crash.
func openPebble(dir string, po *pebble.Options, space *spaceGuard) (db *pebble.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			if space == nil || !space.fullOpen.Load() {
				panic(r)
			}
			err = fmt.Errorf("not enough free disk space to open the store in %s: %v", dir, r)
		}
	}()
	db, err = pebble.Open(dir, po)
	if err != nil && space != nil && space.fullOpen.Load() {
		err = fmt.Errorf("not enough free disk space to open the store in %s: %w", dir, err)
	}
	return db, err
}

// Tune applies Folio's Pebble configuration, other than the cache, the
// logger and the file system, to po: folio-bench's Pebble floor uses it too.
func Tune(po *pebble.Options) {
	po.MemTableSize = 64 << 20
	// Bloom filters let point reads (documents by _id, index entries)
	// skip the tables that do not hold the key. 32 KB data blocks (Pebble's
	// default is 4 KB) hold tens of documents each, so flushes and
	// compactions write a block per write call instead of one per few
	// documents, and 256 KB index blocks keep a table's index in one level,
	// so a point read fetches one index block instead of two.
	// Bulk loads are bound by flushes and compactions on two cores: L0
	// compacts when it holds 8 tables rather than 4 (fewer, larger
	// compactions; writes stop at 24), and the base level holds 256 MB
	// before the next level (fewer levels to rewrite while a store grows).
	// Values of 512 bytes and more (documents, oplog entries) go to blob
	// files that compactions move by reference instead of rewriting: an
	// insert writes each document twice (its key and its oplog entry), and
	// rewriting both through every level bound bulk loads.
	po.FormatMajorVersion = pebble.FormatValueSeparation
	po.Experimental.ValueSeparationPolicy = func() pebble.ValueSeparationPolicy {
		return pebble.ValueSeparationPolicy{Enabled: true, MinimumSize: 512, MaxBlobReferenceDepth: 10, RewriteMinimumAge: 5 * time.Minute, TargetGarbageRatio: 0.2}
	}
	// Every level's tables target 32 MB (Pebble's default is 2 MB for L0,
	// doubling per level): a flush or compaction cuts its output, blob
	// files included, at the target, so a 64 MB memtable became some 30
	// tables and 30 blob files of 2 MB, each created and synced. Bulk
	// inserts run 7-15% faster (docs/benchmarks.md).
	for i := range po.TargetFileSizes {
		po.TargetFileSizes[i] = 32 << 20
	}
	po.Experimental.SpanPolicyFunc = keySpaceEnd
	po.L0CompactionThreshold = 8
	po.L0StopWritesThreshold = 24
	po.LBaseMaxBytes = 256 << 20
	for i := range po.Levels {
		po.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
		po.Levels[i].BlockSize = 32 << 10
		po.Levels[i].IndexBlockSize = 256 << 10
	}
}

// keySpaceEnd, as Pebble's span policy, ends a flush's or compaction's
// output table where the first byte of the keys changes: a table holds the
// keys of one space (the engine tags documents, index entries, oplog
// entries and session records each with their own first byte); tables
// are still cut at the level's target size within a space. A space written in key order (a
// collection whose _id grows, the oplog) then gets tables that overlap none
// in the lower levels, and compacting them writes them once; mixed with the
// other spaces, each table spanned the keys between them and its
// compaction rewrote every lower table in that span. Loading 1.5M 1 KB
// documents with their oplog entries wrote 27 MB of tables in compactions
// instead of 116 MB, and the server spends about a tenth less CPU per
// document of a bulk insert (docs/benchmarks.md).
func keySpaceEnd(start []byte) (pebble.SpanPolicy, []byte, error) {
	if len(start) == 0 || start[0] == 0xff {
		return pebble.SpanPolicy{}, nil, nil
	}
	return pebble.SpanPolicy{}, []byte{start[0] + 1}, nil
}

// Get implements storage.Reader.
func (d *DB) Get(key []byte) ([]byte, bool, error) {
	if !d.rows.holds(key) {
		return get(d.db.Get(key))
	}
	v, hit, version := d.rows.lookup(key)
	if hit {
		return v, true, nil
	}
	pv, closer, err := d.db.Get(key)
	if err != nil || len(pv) > rowCacheMaxValue {
		return get(pv, closer, err)
	}
	// The value is copied out of Pebble once, into the entry it fills.
	e := makeEntry(key, pv)
	if err := closer.Close(); err != nil {
		return nil, false, err
	}
	d.rows.fill(key, e, version)
	return entryValue(e), true, nil
}

// NewIter implements storage.Reader.
func (d *DB) NewIter(lower, upper []byte) (storage.Iter, error) {
	return newIter(d.compact, d.db, lower, upper)
}

// NewSnapshot implements storage.KV.
func (d *DB) NewSnapshot() storage.Snapshot { return snapshot{d.db.NewSnapshot(), d.compact} }

// batchRetained is the largest batch buffer Pebble keeps for reuse once
// the batch is closed. Pebble's default (1 MB) is below an insert of a
// thousand 1 KB documents, whose buffer would otherwise be grown again by
// doubling, about four times its size in allocations, on every insertMany.
const batchRetained = 4 << 20

// Sync implements storage.KV: an empty synced WAL record forces every
// earlier commit to disk, so every stamp applied before it is durable
// (DurableStamp). An in-memory store has no log and nothing to make
// durable.
func (d *DB) Sync() error {
	if d.inMemory {
		return nil
	}
	last, _ := d.LastStamp()
	if err := d.db.LogData(nil, pebble.Sync); err != nil {
		return err
	}
	d.stamps.synced(last)
	return nil
}

// EstimateDiskUsage implements storage.DiskUsageEstimator: the size of the
// sstables holding [lower, upper), counting only the overlapping data blocks
// of tables that straddle a bound, plus the bytes committed into the
// range's groups (GroupUnflushed) that no flush has written to tables yet
// (see unflushed). Those are read first: a flush ending meanwhile counts
// its bytes twice rather than not at all.
func (d *DB) EstimateDiskUsage(lower, upper []byte) (uint64, error) {
	if bytes.Compare(lower, upper) >= 0 {
		return 0, nil
	}
	pending := d.unflushed.sum(lower, upper)
	// Pebble's end bound is inclusive: a table starting exactly at upper
	// may add a block; an estimate either way.
	n, err := d.db.EstimateDiskUsage(lower, upper)
	return n + uint64(pending), err
}

// GroupUnflushed implements storage.UnflushedGrouper.
func (d *DB) GroupUnflushed(group func(key []byte) int) { d.unflushed.setGroup(group) }

// Flush writes the memtable to sstables, so that its data has a size on
// disk.
func (d *DB) Flush() error { return d.db.Flush() }

// DiskFull reports whether a write of the store waits for disk space (see
// fullFS). Failing that write would crash Pebble, so a caller that cannot
// wait for space (a shutdown) leaves the store open instead of closing it.
func (d *DB) DiskFull() bool { return d.space != nil && d.space.stalled.Load() > 0 }

// Close implements storage.KV. Pebble is flushed and closed before the
// space guard stops: a write the disk has no room for meanwhile waits for
// space (Close with it) rather than failing, which Pebble would treat as
// fatal for a WAL or MANIFEST write. DiskFull tells a caller that Close
// waits for space.
func (d *DB) Close() error {
	d.compact.close()
	err := d.db.Flush()
	err = errors.Join(err, d.db.Close())
	d.space.close()
	return err
}

type snapshot struct {
	s *pebble.Snapshot
	c *compactor
}

func (s snapshot) Get(key []byte) ([]byte, bool, error) { return get(s.s.Get(key)) }

func (s snapshot) NewIter(lower, upper []byte) (storage.Iter, error) {
	return newIter(s.c, s.s, lower, upper)
}

func (s snapshot) Close() error { return s.s.Close() }

// get copies a Pebble value so it outlives the closer.
func get(v []byte, closer io.Closer, err error) ([]byte, bool, error) {
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	out := make([]byte, len(v))
	copy(out, v)
	return out, true, closer.Close()
}

// pebbleLogger routes Pebble's logging into slog at debug level, errors at
// error level.
type pebbleLogger struct{ l *slog.Logger }

func (p pebbleLogger) Infof(format string, args ...any) {
	if p.l != nil {
		p.l.Debug("pebble", "msg", fmt.Sprintf(format, args...))
	}
}

func (p pebbleLogger) Errorf(format string, args ...any) {
	if p.l != nil {
		p.l.Error("pebble", "msg", fmt.Sprintf(format, args...))
	}
}

func (p pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if p.l != nil {
		p.l.Error("pebble fatal", "msg", msg)
	}
	panic(msg)
}

// Compact implements storage.Compacter: the memtable is flushed and every
// table overlapping [start, end) compacted down.
func (d *DB) Compact(ctx context.Context, start, end []byte) error {
	return d.db.Compact(ctx, start, end, false)
}

// RowCacheStats counts the point reads the row cache served and those it
// did not hold (zero without a row cache).
func (d *DB) RowCacheStats() (hits, misses uint64) {
	if d.rows == nil {
		return 0, 0
	}
	return d.rows.stats()
}

// Metrics are Pebble's own figures (compactions, flushes, caches, WAL).
func (d *DB) Metrics() *pebble.Metrics { return d.db.Metrics() }
