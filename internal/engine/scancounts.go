package engine

import "sync/atomic"

// ScanCounts counts the queries that read a collection by a collection
// scan, as $collStats' queryExecStats reports them (collectionScans): all
// of them, and those that were not tailable. Like the indexes' usage, they
// are counted from this process's start. Each scan of a collection also
// counts into the engine's counts of every collection's scans (up), as
// MongoDB's CollectionIndexUsageTracker counts a collection's scans into
// serverStatus' metrics.queryExecutor.collectionScans too.
type ScanCounts struct {
	total, nonTailable atomic.Int64
	up                 *ScanCounts
}

// Total is how many queries scanned the collection.
func (s *ScanCounts) Total() int64 { return s.total.Load() }

// NonTailable is how many of them were not tailable.
func (s *ScanCounts) NonTailable() int64 { return s.nonTailable.Load() }

// add counts one query's collection scan, in s and in the counts above it.
func (s *ScanCounts) add(tailable bool) {
	for ; s != nil; s = s.up {
		s.total.Add(1)
		if !tailable {
			s.nonTailable.Add(1)
		}
	}
}

// Scans counts the queries that scanned c.
func (c *Collection) Scans() *ScanCounts { return &c.scans }

// AllScans counts the collection scans of every collection, the oplog's
// included, since the engine opened (serverStatus'
// metrics.queryExecutor.collectionScans).
func (e *Engine) AllScans() *ScanCounts { return &e.scans }

// OplogScans counts the queries that scanned the oplog (always a
// collection scan: it has no index); nil without an oplog.
func (e *Engine) OplogScans() *ScanCounts {
	if e.oplog == nil {
		return nil
	}
	return &e.oplog.scans
}
