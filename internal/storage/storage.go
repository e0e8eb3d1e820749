// Package storage defines the small ordered, transactional key-value
// interface the engine is written against. Implementations live in
// subpackages (pebblekv is the embedded default).
package storage

// KV is an ordered key-value store. Reads through KV see the latest committed
// state; a Snapshot pins one consistent state; a Batch commits atomically.
type KV interface {
	Reader
	// NewSnapshot pins the current committed state for repeatable reads.
	NewSnapshot() Snapshot
	// NewBatch starts an empty write batch.
	NewBatch() Batch
	// Exist sets found[i] to whether keys[i] is present, for keys in any
	// order: one pass that costs less than a Get per key.
	Exist(keys [][]byte, found []bool) error
	// Sync makes every batch committed so far durable.
	Sync() error
	// Close flushes and closes the store.
	Close() error
}

// Reader reads keys and ranges.
type Reader interface {
	// Get returns a copy of the value stored at key; ok is false when the key
	// is absent.
	Get(key []byte) (value []byte, ok bool, err error)
	// NewIter iterates keys in [lower, upper) in bytewise order; a nil bound
	// is open. The iterator sees one state: the reader's at its creation.
	NewIter(lower, upper []byte) (Iter, error)
}

// Snapshot is a Reader over a fixed point in time. Close releases it.
type Snapshot interface {
	Reader
	Close() error
}

// Iter walks a key range. Key and Value are valid until the next move.
type Iter interface {
	First() bool
	Last() bool
	Next() bool
	Prev() bool
	SeekGE(key []byte) bool
	SeekLT(key []byte) bool
	Valid() bool
	Key() []byte
	Value() []byte
	Error() error
	Close() error
}

// Batch collects writes that commit atomically: all of them or none.
type Batch interface {
	Set(key, value []byte) error
	Delete(key []byte) error
	DeleteRange(start, end []byte) error
	// Empty reports whether the batch holds no writes.
	Empty() bool
	// Commit applies the batch; with sync it is durable when Commit returns.
	Commit(sync bool) error
	// Close releases the batch; committed or not.
	Close() error
}

// DiskUsageEstimator is implemented by stores that can tell how much disk
// space a key range takes (collStats' storageSize and indexSizes). Data
// not yet flushed from memory takes none.
type DiskUsageEstimator interface {
	// EstimateDiskUsage returns the bytes on disk of the keys in
	// [lower, upper).
	EstimateDiskUsage(lower, upper []byte) (uint64, error)
}
