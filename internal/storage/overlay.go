package storage

import (
	"bytes"
	"sort"
)

// Overlay is a write buffer over a Reader: reads through it see its own
// writes over the base, as a transaction sees its writes over its snapshot.
// It is not safe for concurrent use.
type Overlay struct {
	base Reader
	// keys are sorted; vals[i] is nil for a deletion of keys[i].
	keys [][]byte
	vals [][]byte
	// The first writes go here, sparing the allocations of a single
	// document's write (document, index entries, session record).
	keyBuf, valBuf [4][]byte
}

// NewOverlay returns an empty overlay over base.
func NewOverlay(base Reader) *Overlay {
	o := &Overlay{base: base}
	o.keys, o.vals = o.keyBuf[:0], o.valBuf[:0]
	return o
}

func (o *Overlay) find(key []byte) (int, bool) {
	i := sort.Search(len(o.keys), func(i int) bool { return bytes.Compare(o.keys[i], key) >= 0 })
	return i, i < len(o.keys) && bytes.Equal(o.keys[i], key)
}

func (o *Overlay) put(key, val []byte) {
	i, found := o.find(key)
	if found {
		o.vals[i] = val
		return
	}
	o.keys = append(o.keys, nil)
	o.vals = append(o.vals, nil)
	copy(o.keys[i+1:], o.keys[i:])
	copy(o.vals[i+1:], o.vals[i:])
	o.keys[i], o.vals[i] = key, val
}

// Put buffers key = value (a nil value: the deletion of key) without
// copying them: the caller leaves both unchanged while the overlay is used
// (a store's write batch holds the copy they point into).
func (o *Overlay) Put(key, value []byte) { o.put(key, value) }

// Get implements Reader.
func (o *Overlay) Get(key []byte) ([]byte, bool, error) {
	if i, found := o.find(key); found {
		return o.vals[i], o.vals[i] != nil, nil
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
		i, _ := it.o.find(k)
		ovOK := i < len(it.o.keys) && it.inBounds(it.o.keys[i])
		switch {
		case !baseOK && !ovOK:
			it.valid = false
			return false
		case ovOK && (!baseOK || bytes.Compare(it.o.keys[i], it.base.Key()) <= 0):
			if it.o.vals[i] == nil {
				k = append(append([]byte(nil), it.o.keys[i]...), 0)
				continue
			}
			it.key, it.val = it.o.keys[i], it.o.vals[i]
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
		var i int
		if k == nil {
			baseOK, i = it.base.Last(), len(it.o.keys)
		} else {
			baseOK = it.base.SeekLT(k)
			i, _ = it.o.find(k)
		}
		i--
		ovOK := i >= 0 && it.inBounds(it.o.keys[i])
		switch {
		case !baseOK && !ovOK:
			it.valid = false
			return false
		case ovOK && (!baseOK || bytes.Compare(it.o.keys[i], it.base.Key()) >= 0):
			if it.o.vals[i] == nil {
				k = it.o.keys[i]
				continue
			}
			it.key, it.val = it.o.keys[i], it.o.vals[i]
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
