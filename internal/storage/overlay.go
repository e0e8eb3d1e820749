package storage

import (
	"bytes"
	"sort"

	"github.com/google/btree"
)

// Overlay is a write buffer over a Reader: reads through it see its own
// writes over the base, as a transaction sees its writes over its snapshot.
// It is not safe for concurrent use.
//
// The writes are kept sorted by key: in a slice while each new key lands
// near its end (a single document's write, no allocation; an insertMany
// of ascending _ids), in a B-tree from the first that would move more than
// maxSliceShift others, so that a transaction of many writes in no key
// order (an index build's batch, a multi-document transaction) costs
// O(log n) per write, not O(n).
type Overlay struct {
	base Reader
	// keys are sorted; vals[i] is nil for a deletion of keys[i]. Empty
	// once tree holds the writes.
	keys [][]byte
	vals [][]byte
	tree *btree.BTreeG[write]
	// The first writes go here, sparing the allocations of a single
	// document's write.
	keyBuf, valBuf [4][]byte
}

// write is a buffered write; a nil val is a deletion.
type write struct{ key, val []byte }

func writeLess(a, b write) bool { return bytes.Compare(a.key, b.key) < 0 }

// maxSliceShift is how many writes a write into the sorted slice may move.
const maxSliceShift = 64

// NewOverlay returns an empty overlay over base.
func NewOverlay(base Reader) *Overlay {
	o := &Overlay{base: base}
	o.keys, o.vals = o.keyBuf[:0], o.valBuf[:0]
	return o
}

// search is the position of the first key >= key in the slice, and
// whether it is key.
func (o *Overlay) search(key []byte) (int, bool) {
	i := sort.Search(len(o.keys), func(i int) bool { return bytes.Compare(o.keys[i], key) >= 0 })
	return i, i < len(o.keys) && bytes.Equal(o.keys[i], key)
}

func (o *Overlay) put(key, val []byte) {
	if o.tree != nil {
		o.tree.ReplaceOrInsert(write{key, val})
		return
	}
	i, found := o.search(key)
	if found {
		o.vals[i] = val
		return
	}
	if len(o.keys)-i > maxSliceShift {
		o.tree = btree.NewG(32, writeLess)
		for j := range o.keys {
			o.tree.ReplaceOrInsert(write{o.keys[j], o.vals[j]})
		}
		o.keys, o.vals = nil, nil
		o.tree.ReplaceOrInsert(write{key, val})
		return
	}
	o.keys = append(o.keys, nil)
	o.vals = append(o.vals, nil)
	copy(o.keys[i+1:], o.keys[i:])
	copy(o.vals[i+1:], o.vals[i:])
	o.keys[i], o.vals[i] = key, val
}

// get is the buffered write of key, if any.
func (o *Overlay) get(key []byte) (write, bool) {
	if o.tree != nil {
		return o.tree.Get(write{key: key})
	}
	if i, found := o.search(key); found {
		return write{o.keys[i], o.vals[i]}, true
	}
	return write{}, false
}

// ceil is the buffered write of the smallest key >= key.
func (o *Overlay) ceil(key []byte) (w write, ok bool) {
	if o.tree != nil {
		o.tree.AscendGreaterOrEqual(write{key: key}, func(x write) bool {
			w, ok = x, true
			return false
		})
		return w, ok
	}
	if i, _ := o.search(key); i < len(o.keys) {
		return write{o.keys[i], o.vals[i]}, true
	}
	return write{}, false
}

// below is the buffered write of the largest key < key (key nil: the
// largest key).
func (o *Overlay) below(key []byte) (w write, ok bool) {
	if o.tree != nil {
		if key == nil {
			return o.tree.Max()
		}
		o.tree.DescendLessOrEqual(write{key: key}, func(x write) bool {
			if bytes.Equal(x.key, key) {
				return true
			}
			w, ok = x, true
			return false
		})
		return w, ok
	}
	i := len(o.keys)
	if key != nil {
		i, _ = o.search(key)
	}
	if i == 0 {
		return write{}, false
	}
	return write{o.keys[i-1], o.vals[i-1]}, true
}

// Put buffers key = value (a nil value: the deletion of key) without
// copying them: the caller leaves both unchanged while the overlay is used
// (a store's write batch holds the copy they point into).
func (o *Overlay) Put(key, value []byte) { o.put(key, value) }

// Get implements Reader.
func (o *Overlay) Get(key []byte) ([]byte, bool, error) {
	if w, found := o.get(key); found {
		return w.val, w.val != nil, nil
	}
	return o.base.Get(key)
}

// NewIter implements Reader: a merge of the base's keys and the buffered
// writes, the buffer winning and deletions hiding base keys.
func (o *Overlay) NewIter(lower, upper []byte) (Iter, error) {
	it, err := o.base.NewIter(lower, upper)
	if err != nil {
		return nil, err
	}
	return &overlayIter{o: o, base: it, lower: lower, upper: upper}, nil
}

// overlayIter merges a base iterator with the overlay. Every move is a seek
// of both sides, which keeps the merge simple in both directions.
type overlayIter struct {
	o            *Overlay
	base         Iter
	lower, upper []byte
	key, val     []byte
	valid        bool
}

func (it *overlayIter) inBounds(k []byte) bool {
	return (it.lower == nil || bytes.Compare(k, it.lower) >= 0) && (it.upper == nil || bytes.Compare(k, it.upper) < 0)
}

// seekGE positions at the smallest visible key >= k.
func (it *overlayIter) seekGE(k []byte) bool {
	for {
		var baseOK bool
		if len(k) == 0 {
			baseOK = it.base.First() // Pebble's iterators want a non-empty seek key
		} else {
			baseOK = it.base.SeekGE(k)
		}
		w, ovOK := it.o.ceil(k)
		ovOK = ovOK && it.inBounds(w.key)
		switch {
		case !baseOK && !ovOK:
			it.valid = false
			return false
		case ovOK && (!baseOK || bytes.Compare(w.key, it.base.Key()) <= 0):
			if w.val == nil {
				k = append(append([]byte(nil), w.key...), 0)
				continue
			}
			it.key, it.val = w.key, w.val
		default:
			it.key, it.val = it.base.Key(), it.base.Value()
		}
		it.valid = true
		return true
	}
}

// seekLT positions at the largest visible key < k (k nil: the last key).
func (it *overlayIter) seekLT(k []byte) bool {
	for {
		var baseOK bool
		if k == nil {
			baseOK = it.base.Last()
		} else {
			baseOK = it.base.SeekLT(k)
		}
		w, ovOK := it.o.below(k)
		ovOK = ovOK && it.inBounds(w.key)
		switch {
		case !baseOK && !ovOK:
			it.valid = false
			return false
		case ovOK && (!baseOK || bytes.Compare(w.key, it.base.Key()) >= 0):
			if w.val == nil {
				k = w.key
				continue
			}
			it.key, it.val = w.key, w.val
		default:
			it.key, it.val = it.base.Key(), it.base.Value()
		}
		it.valid = true
		return true
	}
}

func (it *overlayIter) First() bool {
	if it.lower != nil {
		return it.seekGE(it.lower)
	}
	return it.seekGE([]byte{})
}

func (it *overlayIter) Last() bool {
	return it.seekLT(it.upper)
}

func (it *overlayIter) Next() bool {
	if !it.valid {
		return false
	}
	return it.seekGE(append(append([]byte(nil), it.key...), 0))
}

func (it *overlayIter) Prev() bool {
	if !it.valid {
		return false
	}
	return it.seekLT(append([]byte(nil), it.key...))
}

func (it *overlayIter) SeekGE(key []byte) bool {
	if it.lower != nil && bytes.Compare(key, it.lower) < 0 {
		key = it.lower
	}
	return it.seekGE(key)
}

func (it *overlayIter) SeekLT(key []byte) bool {
	if it.upper != nil && bytes.Compare(key, it.upper) > 0 {
		key = it.upper
	}
	return it.seekLT(key)
}

func (it *overlayIter) Valid() bool   { return it.valid }
func (it *overlayIter) Key() []byte   { return it.key }
func (it *overlayIter) Value() []byte { return it.val }
func (it *overlayIter) Error() error  { return it.base.Error() }
func (it *overlayIter) Close() error  { return it.base.Close() }
