package update

import (
	"slices"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// An operator update's delta is the diff of MongoDB's $v: 2 oplog entries
// (see oplog.UpdateO for its layout) as MongoDB's update operators log
// their changes, which a diff of the two documents cannot tell apart:
//   - a value an operator set is updated (u) where the field existed, and
//     inserted (i) at the first field the update created otherwise;
//   - a change to an array element, or a new one, is u<index>;
//   - $unset removes a field (d), and sets an array element to null (u);
//   - $push appending to a non-empty array without $sort, a $slice that
//     trims or a $position inside it, and $addToSet, log each appended
//     element; other array operators ($pull, $pullAll, $pop, $push
//     otherwise) log the whole array.
//
// Values are read from the updated document when the delta is built, so a
// field one operator created and others filled is inserted once, whole.

// deltaKind is what an operator did at a slot.
type deltaKind uint8

const (
	deltaUpdate deltaKind = iota // set a value that existed
	deltaCreate                  // created the value (the first missing field of its path)
	deltaDelete                  // removed a document field
	deltaAppend                  // appended n elements to the array
)

// deltaEvent is one logged change.
type deltaEvent struct {
	s    *slot
	kind deltaKind
	n    int
}

// deltaNode is the diff of one document or array of the delta: its
// entries in logging order.
type deltaNode struct {
	array   bool
	entries []deltaEntry
}

// deltaEntry is a field removed ('d'), updated ('u'), inserted ('i') or
// changed in part ('s', sub), or an array element (idx) updated or changed
// in part.
type deltaEntry struct {
	kind byte
	name string
	idx  int
	val  *node
	sub  *deltaNode
}

// find returns the entry of name, or nil.
func (d *deltaNode) find(name string) *deltaEntry {
	for i := range d.entries {
		if d.entries[i].name == name {
			return &d.entries[i]
		}
	}
	return nil
}

// buildDelta is the diff of the logged events, or nil when they make none.
func buildDelta(events []deltaEvent) []byte {
	root := &deltaNode{}
	var path []*slot
	for _, ev := range events {
		path = path[:0]
		for s := ev.s; s.parent != nil; s = s.parent {
			path = append(path, s)
		}
		slices.Reverse(path)
		root.add(path, ev)
	}
	if len(root.entries) == 0 {
		return nil
	}
	return root.appendDiff(nil)
}

// add logs ev, at the end of path, under d. A change under a value the
// delta already holds whole is in that value.
func (d *deltaNode) add(path []*slot, ev deltaEvent) {
	for ; len(path) > 1; path = path[1:] {
		e := d.find(path[0].name)
		if e != nil && e.kind != 's' {
			return
		}
		if e == nil {
			d.entries = append(d.entries, deltaEntry{kind: 's', name: path[0].name, idx: index(path[0].name),
				sub: &deltaNode{array: path[0].n.t == bson.TypeArray}})
			e = &d.entries[len(d.entries)-1]
		}
		d = e.sub
	}
	s := path[0]
	if d.find(s.name) != nil {
		return
	}
	e := deltaEntry{kind: 'u', name: s.name, idx: index(s.name), val: s.n}
	switch {
	case ev.kind == deltaDelete:
		e.kind, e.val = 'd', nil
	case ev.kind == deltaCreate && !d.array:
		e.kind = 'i'
	case ev.kind == deltaAppend:
		sub := &deltaNode{array: true}
		for i := len(s.n.elems) - ev.n; i < len(s.n.elems); i++ {
			sub.entries = append(sub.entries, deltaEntry{kind: 'u', name: strconv.Itoa(i), idx: i, val: s.n.elems[i]})
		}
		e.kind, e.val, e.sub = 's', nil, sub
	}
	d.entries = append(d.entries, e)
}

// index is an array element's index, or -1 for a field name.
func index(name string) int {
	if i, ok := arrayIndex(name); ok {
		return i
	}
	return -1
}

// appendDiff appends d as a document or array diff.
func (d *deltaNode) appendDiff(dst []byte) []byte {
	start, dst := bsoncore.AppendDocumentStart(dst)
	if d.array {
		dst = bsoncore.AppendBooleanElement(dst, "a", true)
		entries := slices.Clone(d.entries)
		slices.SortStableFunc(entries, func(a, b deltaEntry) int { return a.idx - b.idx })
		for _, e := range entries {
			dst = e.appendTo(dst, string(e.kind)+e.name)
		}
	} else {
		for _, section := range []byte{'d', 'u', 'i'} {
			open := int32(-1)
			for _, e := range d.entries {
				if e.kind != section {
					continue
				}
				if open < 0 {
					open, dst = bsoncore.AppendDocumentElementStart(dst, string(section))
				}
				dst = e.appendTo(dst, e.name)
			}
			if open >= 0 {
				dst, _ = bsoncore.AppendDocumentEnd(dst, open)
			}
		}
		for _, e := range d.entries {
			if e.kind == 's' {
				dst = e.appendTo(dst, "s"+e.name)
			}
		}
	}
	dst, _ = bsoncore.AppendDocumentEnd(dst, start)
	return dst
}

// appendTo appends e's value under key: false for a removal, the value, or
// the sub-diff.
func (e deltaEntry) appendTo(dst []byte, key string) []byte {
	switch {
	case e.kind == 'd':
		return bsoncore.AppendBooleanElement(dst, key, false)
	case e.sub != nil:
		dst = bsoncore.AppendHeader(dst, bsoncore.TypeEmbeddedDocument, key)
		return e.sub.appendDiff(dst)
	}
	return e.val.appendElement(dst, key)
}
