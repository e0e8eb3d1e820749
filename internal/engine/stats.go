package engine

import (
	"github.com/folio-db/folio/internal/keyenc"
	"github.com/folio-db/folio/internal/oplog"
	"github.com/folio-db/folio/internal/storage"
)

// CollectionStats are the figures collStats, dbStats and $collStats report.
type CollectionStats struct {
	Count int64
	Size  int64 // total BSON bytes of the documents
	// StorageSize is the disk space of the documents (and of a capped
	// collection's insertion order) as the store estimates it.
	StorageSize int64
	// IndexSizes are the disk sizes of the indexes, _id_ first, then the
	// secondary indexes in creation order, those being built included, as
	// MongoDB counts them in collStats' nindexes and indexSizes and in
	// dbStats. Documents are clustered by _id, so the _id index is their
	// keys: its size is the share of the documents' disk space that their
	// keys take.
	IndexSizes []IndexSize
	// Builds are the names of the indexes being built, in the order they
	// were created: a build is numbered by its first index's id, and its
	// indexes' ids ascend (collStats' indexBuilds).
	Builds []string
}

// IndexSize is one index's size on disk.
type IndexSize struct {
	Name string
	Size int64
}

// TotalIndexSize is the sum of the index sizes.
func (s CollectionStats) TotalIndexSize() int64 {
	var t int64
	for _, ix := range s.IndexSizes {
		t += ix.Size
	}
	return t
}

// Stats counts the documents of c and their total size by a scan of a
// consistent snapshot, and asks the store for the disk space of the
// collection's key ranges.
func (e *Engine) Stats(c *Collection) (CollectionStats, error) {
	lo, hi := docSpan(c.ID)
	snap := e.kv.NewSnapshot()
	defer snap.Close()
	it, err := snap.NewIter(lo, hi)
	if err != nil {
		return CollectionStats{}, err
	}
	var s CollectionStats
	// keyBytes and storedBytes are what the keys and the values take
	// before the store compresses them: a compressed bucket's stored
	// value, not the document it holds (s.Size).
	var keyBytes, storedBytes int64
	for it.First(); it.Valid(); it.Next() {
		s.Count++
		s.Size += int64(storedLen(it.Value()))
		storedBytes += int64(len(it.Value()))
		keyBytes += int64(len(it.Key()))
	}
	if err := firstErr(it.Error(), it.Close()); err != nil {
		return CollectionStats{}, err
	}
	docDisk := e.diskUsage(lo, hi)
	s.StorageSize = docDisk
	if c.Options.Capped {
		nlo, nhi := collNaturalSpan(c.ID)
		s.StorageSize += e.diskUsage(nlo, nhi)
	}
	ixs := c.Listed()
	s.IndexSizes = make([]IndexSize, 0, len(ixs)+1)
	var idSize int64
	switch {
	case c.shard != nil:
		idSize = e.IndexDiskSize(c, c.shard.idIndex)
	case keyBytes+storedBytes > 0:
		idSize = int64(float64(docDisk) * float64(keyBytes) / float64(keyBytes+storedBytes))
	}
	s.IndexSizes = append(s.IndexSizes, IndexSize{Name: idIndexName, Size: idSize})
	for _, ix := range ixs {
		s.IndexSizes = append(s.IndexSizes, IndexSize{Name: ix.Name, Size: e.IndexDiskSize(c, ix)})
		if ix.UnderConstruction() {
			s.Builds = append(s.Builds, ix.Name)
		}
	}
	return s, nil
}

// IndexDiskSize is the store's estimate of the disk space of c's
// secondary index ix.
func (e *Engine) IndexDiskSize(c *Collection, ix *Index) int64 {
	lo, hi := indexSpan(c.ID, ix.ID)
	return e.diskUsage(lo, hi)
}

// diskUsage is the store's estimate of the disk space of [lo, hi), which
// on Pebble counts what is committed but not flushed yet, by the groups
// sizeGroup names (every range asked for here is a union of them); a store
// that cannot estimate reports nothing on disk.
func (e *Engine) diskUsage(lo, hi []byte) int64 {
	est, ok := e.kv.(storage.DiskUsageEstimator)
	if !ok {
		return 0
	}
	n, err := est.EstimateDiskUsage(lo, hi)
	if err != nil {
		e.log.Warn("disk usage estimate failed", "err", err)
		return 0
	}
	return int64(n)
}

// DiskSize is the store's estimate of the disk space of c's documents,
// insertion order and indexes, read without a scan (listDatabases'
// sizeOnDisk).
func (e *Engine) DiskSize(c *Collection) int64 {
	var n int64
	for _, span := range collSpans(c.ID) {
		n += e.diskUsage(span[0], span[1])
	}
	return n
}

// OplogDiskSize is the store's estimate of the oplog's disk space; the
// engine must have an oplog.
func (e *Engine) OplogDiskSize() int64 {
	return e.diskUsage(oplogPrefix, keyenc.PrefixEnd(oplogPrefix))
}

// OplogStats counts the oplog's entries and their total size by a scan,
// as Stats does a collection's (the pre-images kept beside entries are not
// entries: MongoDB keeps them in a collection of their own); an insert's
// entry by reference counts whole, from the length it records, without a
// read of its document. The oplog has no index. The engine must have an
// oplog.
func (e *Engine) OplogStats() (CollectionStats, error) {
	var s CollectionStats
	err := scanOplog(e.kv, 0, ^uint64(0), false, func(_ uint64, it storage.Iter) (bool, error) {
		s.Count++
		s.Size += int64(oplog.Stored(it.Value()).EntryLen())
		return true, nil
	})
	if err != nil {
		return CollectionStats{}, err
	}
	s.StorageSize = e.OplogDiskSize()
	return s, nil
}
