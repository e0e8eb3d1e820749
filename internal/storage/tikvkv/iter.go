package tikvkv

import (
	"bytes"

	"github.com/tikv/client-go/v2/txnkv/transaction"
	"github.com/tikv/client-go/v2/txnkv/txnsnapshot"
)

// rawIter is client-go's one-direction iterator (unionstore.Iterator, an
// internal type of client-go).
type rawIter interface {
	Valid() bool
	Key() []byte
	Value() []byte
	Next() error
	Close()
}

// source opens client-go iterators: forward from k (inclusive) below
// upper, or backward from the last key below k; get reads the chunks of a
// large value at the same snapshot.
type source struct {
	s   *Store
	fwd func(k, upper []byte) (rawIter, error)
	rev func(k []byte) (rawIter, error)
	get batchGetter
}

func snapSource(st *Store, s *txnsnapshot.KVSnapshot) source {
	return source{
		s:   st,
		fwd: func(k, upper []byte) (rawIter, error) { return nilIfErr(s.Iter(k, upper)) },
		rev: func(k []byte) (rawIter, error) { return nilIfErr(s.IterReverse(k)) },
		get: s.BatchGet,
	}
}

func txnSource(st *Store, t *transaction.KVTxn) source {
	return source{
		s:   st,
		fwd: func(k, upper []byte) (rawIter, error) { return nilIfErr(t.Iter(k, upper)) },
		rev: func(k []byte) (rawIter, error) { return nilIfErr(t.IterReverse(k)) },
		get: t.BatchGet,
	}
}

func nilIfErr[I rawIter](it I, err error) (rawIter, error) {
	if err != nil {
		return nil, err
	}
	return it, nil
}

// maxKey bounds backward scans with no upper bound: client-go's reverse
// scanner needs an end key. Folio's keys start with an ASCII space tag.
var maxKey = bytes.Repeat([]byte{0xff}, 16)

// iter is a storage.Iter over [lower, upper): a forward or a backward
// client-go iterator, reopened when the direction changes. client-go pages
// through regions.
type iter struct {
	src          source
	lower, upper []byte
	cur          rawIter
	reverse      bool
	valid        bool
	err          error
}

// newIter iterates [lower, upper) within the users' keys: below the
// staged keys of stamped writes (stamps.go) and the chunks of large values.
func newIter(src source, lower, upper []byte) *iter {
	if end := []byte{stagedSpace}; upper == nil || bytes.Compare(upper, end) > 0 {
		upper = end
	}
	return &iter{src: src, lower: clone(lower), upper: clone(upper)}
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

func (it *iter) closeCur() {
	if it.cur != nil {
		it.cur.Close()
		it.cur = nil
	}
}

// openFwd positions on the first key >= k (k within bounds).
func (it *iter) openFwd(k []byte) bool {
	it.closeCur()
	if k == nil {
		k = []byte{}
	}
	it.cur, it.err = it.src.fwd(k, it.upper)
	it.reverse = false
	return it.settle()
}

// openRev positions on the last key < k (k within bounds).
func (it *iter) openRev(k []byte) bool {
	it.closeCur()
	if k == nil {
		k = maxKey
	}
	it.cur, it.err = it.src.rev(k)
	it.reverse = true
	return it.settle()
}

// settle sets valid from the current position and the bounds.
func (it *iter) settle() bool {
	it.valid = false
	if it.err != nil || it.cur == nil || !it.cur.Valid() {
		return false
	}
	k := it.cur.Key()
	if it.upper != nil && bytes.Compare(k, it.upper) >= 0 {
		return false
	}
	if it.lower != nil && bytes.Compare(k, it.lower) < 0 {
		return false
	}
	it.valid = true
	return true
}

func (it *iter) First() bool { return it.openFwd(it.lower) }

func (it *iter) Last() bool { return it.openRev(it.upper) }

func (it *iter) SeekGE(key []byte) bool {
	if it.lower != nil && bytes.Compare(key, it.lower) < 0 {
		key = it.lower
	}
	return it.openFwd(key)
}

func (it *iter) SeekLT(key []byte) bool {
	if it.upper != nil && bytes.Compare(key, it.upper) > 0 {
		key = it.upper
	}
	return it.openRev(key)
}

func (it *iter) Next() bool {
	if !it.valid {
		return false
	}
	if it.reverse {
		return it.openFwd(append(clone(it.cur.Key()), 0))
	}
	it.err = it.cur.Next()
	return it.settle()
}

func (it *iter) Prev() bool {
	if !it.valid {
		return false
	}
	if !it.reverse {
		return it.openRev(clone(it.cur.Key()))
	}
	it.err = it.cur.Next()
	return it.settle()
}

func (it *iter) Valid() bool { return it.valid }

func (it *iter) Key() []byte { return it.cur.Key() }

// Value strips the stored prefix, or assembles a large value from its
// chunks (a failure to read them is the iterator's error).
func (it *iter) Value() []byte {
	v := it.cur.Value()
	if len(v) == 0 {
		return v
	}
	if h, ok := decodeHeader(v); ok {
		out, err := it.src.s.assemble(it.src.get, it.cur.Key(), h)
		if err != nil && it.err == nil {
			it.err = err
		}
		return out
	}
	return v[1:]
}

// Error is the first error of a read; a cluster that did not answer is
// HostUnreachable (unavailable).
func (it *iter) Error() error { return unavailable(it.err) }

func (it *iter) Close() error {
	it.closeCur()
	it.valid = false
	return it.err
}
