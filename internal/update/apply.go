package update

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// applyCtx is the state of one Apply of an operator update.
type applyCtx struct {
	u         *Update
	root      *node
	pos       int
	insert    bool
	now       time.Time
	origID    bson.RawValue // the document's _id before the update, if any
	idTouched bool          // an operator wrote at or under _id
	// events are the changes logged for the delta, of an update that is
	// not an upsert's insert (an insert has no delta).
	events []deltaEvent
	// forced is set by an operator MongoDB counts as a modification even
	// when the document's bytes stay the same ($push with $sort, $inc or
	// $mul of a NaN).
	forced bool
	// dollarTops are the top-level fields starting with '$' the update
	// wrote (outside an upsert's insert).
	dollarTops []string
}

// log records a change at s, unless the update is an insert.
func (c *applyCtx) log(s *slot, kind deltaKind, n int) {
	if !c.insert {
		c.events = append(c.events, deltaEvent{s: s, kind: kind, n: n})
	}
}

// slot is a place in the document an operator applies to: an existing value,
// or a missing one that the operator may create, together with the chain of
// places leading to it.
type slot struct {
	parent *slot
	name   string // field name, or array index as a string
	n      *node  // the current value; nil when missing
}

func (s *slot) path() string {
	if s.parent == nil {
		return ""
	}
	if s.parent.parent == nil {
		return s.name
	}
	return s.parent.path() + "." + s.name
}

func (s *slot) top() string {
	for s.parent != nil && s.parent.parent != nil {
		s = s.parent
	}
	return s.name
}

// applyOperators applies the operators to doc and, unless insert, returns
// their delta.
func (u *Update) applyOperators(doc bson.Raw, pos int, insert bool) (_ bson.Raw, _ []byte, forced bool, err error) {
	c := &applyCtx{u: u, root: rawNode(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}),
		pos: pos, insert: insert, now: time.Now()}
	c.origID, _ = doc.LookupErr("_id")
	if err := c.walk(u.root, &slot{n: c.root}); err != nil {
		return nil, nil, false, err
	}
	if c.idTouched {
		if id := c.root.lookup("_id"); id != nil {
			if err := checkIDType(id.t); err != nil {
				return nil, nil, false, err
			}
		}
	}
	// The result is usually about the size of the document.
	out := bson.Raw(c.root.appendValue(make([]byte, 0, len(doc)+len(doc)/8+64)))
	if err := checkTopLevelDollars(out, c.dollarTops); err != nil {
		return nil, nil, false, err
	}
	if insert {
		return out, nil, c.forced, nil
	}
	return out, buildDelta(c.events), c.forced, nil
}

// walk applies the update tree t to the value at s.
func (c *applyCtx) walk(t *tnode, s *slot) error {
	if t.leaf != nil {
		return t.leaf.apply(c, s)
	}
	if t.array {
		return c.walkArray(t, s)
	}
	order, children := t.order, t.children
	if pc, ok := children["$"]; ok {
		if c.pos < 0 {
			return mongoerr.New(mongoerr.BadValue, "The positional operator did not find the match needed from the query.")
		}
		name := strconv.Itoa(c.pos)
		order, children = nil, map[string]*tnode{name: pc}
		for _, n := range t.order {
			switch {
			case n == "$":
			case n == name:
				m, err := merge(t.children[n], pc, joinPath(s.path(), n))
				if err != nil {
					return err
				}
				children[n] = m
			default:
				children[n] = t.children[n]
				order = append(order, n)
			}
		}
		order = insertSorted(order, name)
	}
	for _, name := range order {
		child := &slot{parent: s, name: name, n: childOf(s.n, name)}
		if err := c.walk(children[name], child); err != nil {
			return err
		}
	}
	return nil
}

func insertSorted(order []string, name string) []string {
	i := 0
	for i < len(order) && lessField(order[i], name) {
		i++
	}
	return append(order[:i], append([]string{name}, order[i:]...)...)
}

func joinPath(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// childOf is the child of n reached by name, or nil when n is missing, is
// not a container, or has no such child.
func childOf(n *node, name string) *node {
	if n == nil || !isContainer(n.t) {
		return nil
	}
	return n.lookup(name)
}

// walkArray applies an array node ($[] and $[<identifier>] children) to every
// element of the array at s that its filters select.
func (c *applyCtx) walkArray(t *tnode, s *slot) error {
	if s.n == nil {
		return mongoerr.New(mongoerr.BadValue,
			"The path '%s' must exist in the document in order to apply array updates.", s.path())
	}
	if s.n.t != bson.TypeArray {
		return mongoerr.New(mongoerr.BadValue,
			"Cannot apply array updates to non-array element %s", values.ShellElement(s.name, s.n.value()))
	}
	s.n.expand()
	for i := 0; i < len(s.n.elems); i++ {
		var sub *tnode
		for _, id := range t.order {
			if id != "" && !c.matchFilter(id, s.n.elems[i]) {
				continue
			}
			if sub == nil {
				sub = t.children[id]
				continue
			}
			m, err := merge(sub, t.children[id], joinPath(s.path(), strconv.Itoa(i)))
			if err != nil {
				return err
			}
			sub = m
		}
		if sub == nil {
			continue
		}
		if err := c.walk(sub, &slot{parent: s, name: strconv.Itoa(i), n: s.n.elems[i]}); err != nil {
			return err
		}
	}
	return nil
}

// set stores v at s, creating missing parents as empty documents and padding
// arrays with nulls. wholeValue marks operators that replace a value outright
// ($set, $setOnInsert, $rename): those may rewrite _id with an equal value.
func (c *applyCtx) set(s *slot, v *node, wholeValue bool) error {
	if s.n != nil && s.n.t == v.t && !s.n.expanded && !v.expanded && bytes.Equal(s.n.raw, v.raw) {
		return nil
	}
	if s.n == nil && c.origID.Type != 0 && s.top() == "_id" {
		return c.createUnderID(s, v)
	}
	if err := c.checkWrite(s, v, wholeValue); err != nil {
		return err
	}
	if s.n != nil {
		replaceChild(s.parent.n, s.name, v)
		s.n = v
		c.log(s, deltaUpdate, 0)
		return nil
	}
	created := s // the first missing field of the path
	for created.parent.n == nil {
		created = created.parent
	}
	parent, err := c.ensure(s.parent, s.name)
	if err != nil {
		return err
	}
	if err := addChild(parent, s.parent, s.name, v); err != nil {
		return err
	}
	s.n = v
	c.log(created, deltaCreate, 0)
	return nil
}

// createUnderID fails the creation of s, a missing path below an existing
// _id, as MongoDB's ModifierNode::applyToNonexistentElement does: once the
// path is created (a path that cannot be is PathNotViable first), the error
// names the deepest element that existed, with its new value.
func (c *applyCtx) createUnderID(s *slot, v *node) error {
	existing := s.parent
	for existing.n == nil {
		existing = existing.parent
	}
	parent, err := c.ensure(s.parent, s.name)
	if err != nil {
		return err
	}
	if err := addChild(parent, s.parent, s.name, v); err != nil {
		return err
	}
	return mongoerr.New(mongoerr.ImmutableField, "Updating the path '%s' to %s would modify the immutable field '_id'",
		existing.path(), values.ShellElement(existing.name, existing.n.value()))
}

// ensure returns the container at s, creating it (and its missing parents)
// as an empty document. child is the name about to be created in it, for the
// PathNotViable message.
func (c *applyCtx) ensure(s *slot, child string) (*node, error) {
	if s.n != nil {
		if !isContainer(s.n.t) {
			return nil, notViable(child, s)
		}
		s.n.expand()
		return s.n, nil
	}
	parent, err := c.ensure(s.parent, s.name)
	if err != nil {
		return nil, err
	}
	d := emptyDoc()
	if err := addChild(parent, s.parent, s.name, d); err != nil {
		return nil, err
	}
	s.n = d
	return d, nil
}

// checkViable is MongoDB's checkViability for the operators that leave a
// missing path alone ($pop, $pull, $pullAll): they still fail when the path
// could not be created, because the deepest element on it is neither a
// document nor an array whose next part is an index.
func checkViable(s *slot) error {
	e, next := s, s.name
	for e.n == nil {
		next, e = e.name, e.parent
	}
	if _, index := arrayIndex(next); e.n.t == bson.TypeEmbeddedDocument || e.n.t == bson.TypeArray && index {
		return nil
	}
	return mongoerr.New(mongoerr.PathNotViable, "Cannot use the part (%s) of (%s) to traverse the element ({%s})",
		next, s.path(), values.ShellElement(e.name, e.n.value()))
}

func notViable(child string, s *slot) error {
	return mongoerr.New(mongoerr.PathNotViable, "Cannot create field '%s' in element {%s}",
		child, values.ShellElement(s.name, s.n.value()))
}

// maxPadding is the most nulls MongoDB pads an array with to reach an index;
// more is CannotBackfillArray (path_support.cpp maybePadTo).
const maxPadding = 1500000

// addChild creates the missing child name in the container parent (whose
// slot is ps): a new field appended to a document, or an array element
// after padding with nulls.
func addChild(parent *node, ps *slot, name string, v *node) error {
	if parent.t == bson.TypeEmbeddedDocument {
		parent.fields = append(parent.fields, field{name: name, val: v})
		return nil
	}
	i, ok := arrayIndex(name)
	if !ok {
		return notViable(name, ps)
	}
	if i-len(parent.elems) > maxPadding {
		return mongoerr.New(mongoerr.CannotBackfillArray, "can't backfill more than %d elements", maxPadding)
	}
	for len(parent.elems) < i {
		parent.elems = append(parent.elems, &node{t: bson.TypeNull, raw: []byte{}})
	}
	parent.elems = append(parent.elems, v)
	return nil
}

// replaceChild replaces the existing child name of the container parent.
func replaceChild(parent *node, name string, v *node) {
	if parent.t == bson.TypeArray {
		i, _ := arrayIndex(name)
		parent.elems[i] = v
		return
	}
	for i := range parent.fields {
		if parent.fields[i].name == name {
			parent.fields[i].val = v
			return
		}
	}
}

// remove deletes the value at s: a document field is removed, an array
// element becomes null (MongoDB's $unset keeps array positions).
func (c *applyCtx) remove(s *slot) error {
	if s.n == nil {
		return nil
	}
	if err := c.checkWrite(s, nil, false); err != nil {
		return err
	}
	p := s.parent.n
	if p.t == bson.TypeArray {
		i, _ := arrayIndex(s.name)
		p.elems[i] = &node{t: bson.TypeNull, raw: []byte{}}
		s.n = p.elems[i]
		c.log(s, deltaUpdate, 0)
		return nil
	}
	for i := range p.fields {
		if p.fields[i].name == s.name {
			p.fields = append(p.fields[:i], p.fields[i+1:]...)
			break
		}
	}
	s.n = nil
	c.log(s, deltaDelete, 0)
	return nil
}

// modified records an in-place change of the value at s (an array
// operator's, or an arithmetic one's that kept its bytes): appended
// elements added at its end, else any change.
func (c *applyCtx) modified(s *slot, appended int) error {
	if err := c.checkWrite(s, s.n, false); err != nil {
		return err
	}
	if appended > 0 {
		c.log(s, deltaAppend, appended)
	} else {
		c.log(s, deltaUpdate, 0)
	}
	return nil
}

// checkWrite enforces the rules for writing v at s (nil v removes): _id is
// immutable, and outside an upsert's insert a top-level field starting with
// '$' is noted for checkTopLevelDollars.
func (c *applyCtx) checkWrite(s *slot, v *node, wholeValue bool) error {
	top := s.top()
	if top == "_id" {
		c.idTouched = true
		if path := s.path(); c.origID.Type != 0 && !(wholeValue && path == "_id" && v != nil && sameValue(v.value(), c.origID)) {
			// only writing _id's own value again is a no-op (MongoDB
			// compares the bytes: 1.0 for 1 is a change)
			return mongoerr.New(mongoerr.ImmutableField,
				"Performing an update on the path '%s' would modify the immutable field '_id'", path)
		}
	}
	if v != nil && !c.insert && strings.HasPrefix(top, "$") && !slices.Contains(c.dollarTops, top) {
		c.dollarTops = append(c.dollarTops, top) // checked in the result
	}
	return nil
}

// DollarField is MongoDB's error for a top-level field name starting with
// '$' in a replacement document.
func DollarField(name string) error { return dollarFieldAt(name, name) }

// dollarFieldAt is DollarField for the field name at path, its full name
// in the document (validateDollarPrefixElement names both).
func dollarFieldAt(name, path string) error {
	return mongoerr.New(mongoerr.DollarPrefixedFieldName,
		"The dollar ($) prefixed field '%s' in '%s' is not allowed in the context of an update's replacement document. Consider using an aggregation pipeline with $replaceWith.",
		name, path)
}

// checkIDType rejects the _id types MongoDB cannot store.
func checkIDType(t bson.Type) error {
	switch t {
	case bson.TypeArray, bson.TypeRegex, bson.TypeUndefined:
		return mongoerr.New(mongoerr.InvalidIdField, "The '_id' value cannot be of type %s", values.TypeName(t))
	}
	return nil
}

// sameValue reports whether a and b are the same BSON value, type and
// bytes.
func sameValue(a, b bson.RawValue) bool {
	return a.Type == b.Type && bytes.Equal(a.Value, b.Value)
}
