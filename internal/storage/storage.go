// Package storage defines the small ordered, transactional key-value
// interface the engine is written against. Implementations live in
// subpackages (pebblekv is the embedded default).
package storage

import (
	"context"
	"errors"
	"sync"

	"github.com/folio-db/folio/internal/mongoerr"
)

// KV is an ordered key-value store. Reads through KV see the latest committed
// state; a Snapshot pins one consistent state; every write goes through a
// Txn, which reads one state and commits its writes atomically, only if no
// other commit wrote the same keys since it began.
type KV interface {
	Reader
	// NewSnapshot pins the current committed state for repeatable reads.
	NewSnapshot() Snapshot
	// Begin starts a read-write transaction on the current committed state.
	Begin() (Txn, error)
	// DeleteRange removes every key in [start, end) outside any
	// transaction, for ranges no transaction reads or writes any more (the
	// ids of a dropped collection or index are never reused).
	DeleteRange(start, end []byte) error
	// Exist sets found[i] to whether keys[i] is present, for keys in any
	// order: one pass that costs less than a Get per key.
	Exist(keys [][]byte, found []bool) error
	// Sync makes every transaction committed so far durable.
	Sync() error
	// Close flushes and closes the store.
	Close() error
}

// ErrWriteConflict is Commit's error when another transaction committed a
// write to a key this one writes after this one began (the first committer
// wins). Nothing of the failed transaction is applied: run it again from a
// new Begin.
var ErrWriteConflict = errors.New("storage: write conflict")

// Txn is a read-write transaction with snapshot isolation. Its reads see the
// committed state of its Begin plus its own writes; its writes are buffered
// until Commit applies all of them atomically, or none when Commit fails
// (ErrWriteConflict, or a store error). A Txn is used by one goroutine.
type Txn interface {
	Reader
	Set(key, value []byte) error
	Delete(key []byte) error
	// Commit applies the writes. It does not wait for the disk: KV.Sync
	// does. Committing a transaction without writes succeeds.
	Commit() error
	// Rollback discards the writes and releases the transaction; after
	// Commit it does nothing.
	Rollback() error
}

// Inserter is implemented by a Txn that writes a key known to be new for
// less than Set costs (Pebble's row cache skips looking for its entry).
// Insert is Set of a key absent from the state the commit applies to and
// not written before in the transaction: the caller read it absent after
// the transaction began, so that a commit writing it since makes this one
// conflict.
type Inserter interface {
	Insert(key, value []byte) error
}

// KeyLimit is implemented by a store that refuses to write a key longer
// than MaxKeySize bytes (TiKV's storage.max-key-size): its Txn's Set fails
// on one, and the engine refuses the document first.
type KeyLimit interface {
	MaxKeySize() int
}

// MaxKeySize is the longest key kv writes; 0 for no limit.
func MaxKeySize(kv KV) int {
	if l, ok := kv.(KeyLimit); ok {
		return l.MaxKeySize()
	}
	return 0
}

// KeyTooLong is the error of a write of a key of n bytes to a store whose
// longest is max: a document's _id, or an index key of it, that long
// cannot be stored there.
func KeyTooLong(n, max int) error {
	return mongoerr.New(mongoerr.NotImplemented,
		"Folio's storage does not write a key of %d bytes (its longest is %d): the document's _id, or one of its index keys, is too long for it", n, max)
}

// Insert writes key, which is new (see Inserter), in tx.
func Insert(tx Txn, key, value []byte) error {
	if in, ok := tx.(Inserter); ok {
		return in.Insert(key, value)
	}
	return tx.Set(key, value)
}

// Reader reads keys and ranges.
type Reader interface {
	// Get returns the value stored at key; ok is false when the key is
	// absent. The value may be shared (a cached value, or a write a
	// transaction buffered, valid until the transaction ends): the caller
	// must not modify it.
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

// ValueLener is implemented by iterators that tell the length of the
// current value without reading it (Pebble's, for values kept in blob
// files).
type ValueLener interface {
	ValueLen() int
}

// ValueLen returns the length of the value the iterator is at, reading the
// value only if the iterator is not a ValueLener.
func ValueLen(it Iter) int {
	if l, ok := it.(ValueLener); ok {
		return l.ValueLen()
	}
	return len(it.Value())
}

// DiskUsageEstimator is implemented by stores that can tell how much disk
// space a key range takes (collStats' storageSize and indexSizes). Data
// committed but not yet flushed from memory counts only as far as the
// store is told how to group it (UnflushedGrouper).
type DiskUsageEstimator interface {
	// EstimateDiskUsage returns the bytes on disk of the keys in
	// [lower, upper), and those of the groups of unflushed writes that lie
	// wholly inside it.
	EstimateDiskUsage(lower, upper []byte) (uint64, error)
}

// UnflushedGrouper is implemented by a DiskUsageEstimator whose commits
// reach its files some time after they land in memory (Pebble's memtable,
// until a flush writes it out): it can count the bytes (keys and values,
// a deletion's key) committed since into its estimates, by group.
//
// A key's group is its first group(key) bytes; a key for which group
// returns 0 (or more than its length) is not counted. A group counts in
// an estimate of [lower, upper) when every key with its prefix lies in the
// range, and nothing otherwise: the caller's ranges should be unions of
// groups. DeleteRange forgets the groups it covers wholly.
type UnflushedGrouper interface {
	// GroupUnflushed sets the grouping; until it is called nothing
	// unflushed is counted. group must be cheap and allocate nothing: it
	// runs for every key of every commit.
	GroupUnflushed(group func(key []byte) int)
}

// StampedTxn is a Txn of a store that orders its commits by a clock (see
// Stamps). SetStamped adds a key made of prefix and the 8-byte big-endian
// stamp the commit gives it, holding value with that stamp written in.
// Commits become visible in the order of their stamps: once Stamps'
// LastStamp reports a stamp, every stamped key up to it is readable.
//
// A store gives each stamped write of a commit its own stamp (Pebble), or
// the commit one stamp (TiKV: its commit timestamp); the latter joins the
// commit's stamped values into one (StampedValue.Join) under one key.
type StampedTxn interface {
	Txn
	SetStamped(prefix []byte, value StampedValue) error
	// CommitStamp is, once Commit succeeded, the stamp the commit gave
	// the transaction's latest stamped write: the time of the last oplog
	// entry it wrote. It is 0 before, or when the commit stamped nothing.
	CommitStamp() uint64
}

// StampRefTxn is a StampedTxn that can also write a value holding the
// stamp its commit gives to the transaction's latest stamped write: how a
// document names the oplog entry that refers to it (an insert's entry by
// reference). A store that gives each stamped write its own stamp and
// applies a commit alone (Pebble) implements it.
type StampRefTxn interface {
	StampedTxn
	// InsertStampRef is Insert (see Inserter) of key holding head
	// followed by body, with the stamp of the transaction's latest
	// SetStamped write written at offset at of head (8 bytes,
	// little-endian) when it commits. The store copies head and body
	// into its write once: the caller need not join them.
	InsertStampRef(key, head, body []byte, at int) error
}

// StampRefStore is a store whose transactions are StampRefTxns.
type StampRefStore interface {
	// StampRefs is a lock shared by every user of the store (the engines
	// over one Pebble store in tests' frontends): a write that rewrites a
	// stamped key holds it shared until its commit, and a deletion of
	// stamped keys holds it exclusively, so that no stamped key is
	// written back once deleted.
	StampRefs() *sync.RWMutex
	// GetStamped is Get of a stamped key in the latest state, past any
	// cache of the store's: stamped keys are read in order by iterators,
	// and a point read of one (whether an entry is gone) must not make a
	// cache evict what point reads of other keys keep.
	GetStamped(key []byte) ([]byte, bool, error)
}

// StampChainTxn is a StampedTxn of a store that gives each stamped write
// its own stamp (Pebble; a test's wrapper does not pass it on).
// SetStampedChain stages values as that many SetStamped writes, in order,
// each after the first also holding the stamp of the one before it: how
// the oplog entries of one transaction split across several are chained
// by prevOpTime. The commit writes nothing between them.
type StampChainTxn interface {
	StampedTxn
	SetStampedChain(prefix []byte, values []ChainedValue) error
}

// ChainedValue is a value of a stamp chain (StampChainTxn).
type ChainedValue interface {
	StampedValue
	// PrevStampAt is, once AppendValue has built the value, the offset in
	// it of the 8 bytes where the store writes the stamp of the chain's
	// previous value, little-endian as the stamp (-1 for the first).
	PrevStampAt() int
}

// StampedValue is the value of a stamped key before its stamp is known.
type StampedValue interface {
	// AppendValue appends the value to dst and returns it, with the offset
	// in the value of the 8 bytes where the store writes the stamp,
	// little-endian (a BSON Timestamp's layout).
	AppendValue(dst []byte) (_ []byte, stampAt int)
	// Join is the one value standing for this value then next, for a
	// store that gives a commit one stamp.
	Join(next StampedValue) StampedValue
}

// Sweeper is implemented by a store that leaves garbage of its own behind
// writes (the chunks of overwritten large values on TiKV): SweepGarbage
// removes it. The frontend that runs background jobs calls it with the
// removal of dropped collections' data.
type Sweeper interface {
	SweepGarbage() error
}

// As returns kv as a T (an optional interface of a store), looking
// through wrappers that have an Unwrap method, and whether it is one.
func As[T any](kv KV) (T, bool) {
	for {
		if t, ok := kv.(T); ok {
			return t, true
		}
		u, ok := kv.(interface{ Unwrap() KV })
		if !ok {
			var none T
			return none, false
		}
		kv = u.Unwrap()
	}
}

// Sweep runs kv's SweepGarbage (see As), when it has one.
func Sweep(kv KV) error {
	if s, ok := As[Sweeper](kv); ok {
		return s.SweepGarbage()
	}
	return nil
}

// Stamps is implemented by a store whose transactions are StampedTxns.
type Stamps interface {
	// LastStamp is a stamp up to which every stamped key is in place (the
	// stamp of the latest commit applied, on Pebble) and a channel closed
	// once a later one may be (a commit, or on a shared store the next
	// time to look).
	LastStamp() (uint64, <-chan struct{})
	// AdvanceStamp makes every later stamp greater than s (a stamp read
	// back from the store after a restart).
	AdvanceStamp(s uint64)
}

// StampsOf returns kv's Stamps (see As), and whether it has any.
func StampsOf(kv KV) (Stamps, bool) { return As[Stamps](kv) }

// DurableStamps is implemented by a Stamps store whose commits become
// visible before they are on disk (Pebble's, where Sync makes them
// durable): a crash may take away what is past DurableStamp.
type DurableStamps interface {
	// DurableStamp is a stamp up to which every stamped key is on disk
	// (at most LastStamp's), and a channel closed once a later one may be.
	DurableStamp() (uint64, <-chan struct{})
}

// Compacter is implemented by stores that can compact a key range on
// request (the compact command).
type Compacter interface {
	// Compact rewrites the data of [start, end) compactly, dropping what
	// deletions and overwrites left, until done or ctx ends.
	Compact(ctx context.Context, start, end []byte) error
}

// Splitter is implemented by a store that spreads its keys over ranges
// held apart (TiKV's regions).
type Splitter interface {
	// SplitKeys returns the starts of the ranges that begin strictly
	// inside (lower, upper), in order.
	SplitKeys(lower, upper []byte) ([][]byte, error)
}

// SplitKeys returns kv's range starts inside (lower, upper) (see As); a
// store of one range has none.
func SplitKeys(kv KV, lower, upper []byte) ([][]byte, error) {
	if s, ok := As[Splitter](kv); ok {
		return s.SplitKeys(lower, upper)
	}
	return nil, nil
}
