package sorter

import "bytes"

// cursor is one run being merged, with its current entry.
type cursor struct {
	r   *runReader
	run int
	cur Entry
}

// Iterator is a k-way merge of sorted runs by (key, run): runs are
// numbered in arrival order, the held entries last, so equal keys keep
// arrival order.
type Iterator struct {
	heap []*cursor
	left int64 // entries still to yield; -1: no limit
	fail func(verb string, err error) error
}

func (it *Iterator) less(i, j int) bool {
	a, b := it.heap[i], it.heap[j]
	if c := bytes.Compare(a.cur.Key, b.cur.Key); c != 0 {
		return c < 0
	}
	return a.run < b.run
}

// advance reads c's next entry and puts c back in the heap, or drops it
// at the end of its run.
func (it *Iterator) advance(c *cursor) error {
	e, ok, err := c.r.next()
	if err != nil {
		return it.fail("read", err)
	}
	if !ok {
		return nil
	}
	c.cur = e
	it.heap = append(it.heap, c)
	for i := len(it.heap) - 1; i > 0; {
		p := (i - 1) / 2
		if !it.less(i, p) {
			break
		}
		it.heap[i], it.heap[p] = it.heap[p], it.heap[i]
		i = p
	}
	return nil
}

// pop removes the cursor with the smallest entry.
func (it *Iterator) pop() *cursor {
	h := it.heap
	c := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h[last] = nil
	it.heap = h[:last]
	for i, n := 0, last; ; {
		m := 2*i + 1
		if m >= n {
			break
		}
		if m+1 < n && it.less(m+1, m) {
			m++
		}
		if !it.less(m, i) {
			break
		}
		it.heap[i], it.heap[m] = it.heap[m], it.heap[i]
		i = m
	}
	return c
}

// Peek is the next entry without consuming it; ok is false at the end.
func (it *Iterator) Peek() (Entry, bool) {
	if len(it.heap) == 0 || it.left == 0 {
		return Entry{}, false
	}
	return it.heap[0].cur, true
}

// Next consumes the next entry; ok is false at the end.
func (it *Iterator) Next() (Entry, bool, error) {
	if len(it.heap) == 0 || it.left == 0 {
		return Entry{}, false, nil
	}
	if it.left > 0 {
		it.left--
	}
	c := it.pop()
	e := c.cur
	return e, true, it.advance(c)
}
