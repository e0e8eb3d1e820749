package update

import (
	"slices"
	"sort"
	"strings"

	"github.com/folio-db/folio/internal/mongoerr"
)

// tnode is a node of the update tree, MongoDB's UpdateNode: every update path
// is a branch and every operator a leaf. An internal node is either an object
// node, whose children are field names, array indexes or the positional $, or
// an array node, whose children are array filter identifiers ("" for $[]).
// Two paths where one is a prefix of the other conflict.
type tnode struct {
	leaf     leaf
	array    bool
	children map[string]*tnode
	order    []string // children names in application order
}

// leaf is an update operator applied at one path.
type leaf interface {
	apply(c *applyCtx, s *slot) error
}

// insert adds op at parts, reporting MongoDB's ConflictingUpdateOperators
// when the path overlaps one already present.
func (t *tnode) insert(parts []string, op leaf) error {
	cur := t
	for i, p := range parts {
		name := childName(p)
		child := cur.children[name]
		last := i == len(parts)-1
		if last {
			if child != nil {
				return conflict(parts, len(parts))
			}
			cur.add(name, &tnode{leaf: op})
			return nil
		}
		_, nextIsFilter := filterIdentifier(parts[i+1])
		if child == nil {
			child = &tnode{array: nextIsFilter}
			cur.add(name, child)
		} else if child.leaf != nil || child.array != nextIsFilter {
			return conflict(parts, i+1)
		}
		cur = child
	}
	return nil
}

func conflict(parts []string, n int) error {
	return mongoerr.New(mongoerr.ConflictingUpdateOperators,
		"Updating the path '%s' would create a conflict at '%s'",
		strings.Join(parts, "."), strings.Join(parts[:n], "."))
}

// childName is the tree key for a path component: the identifier for array
// filters, the component itself otherwise.
func childName(p string) string {
	if id, ok := filterIdentifier(p); ok {
		return id
	}
	return p
}

func (t *tnode) add(name string, child *tnode) {
	if t.children == nil {
		t.children = map[string]*tnode{}
	}
	t.children[name] = child
	i := sort.Search(len(t.order), func(i int) bool { return lessField(name, t.order[i]) })
	t.order = slices.Insert(t.order, i, name)
}

// merge combines two trees that apply to the same element (the positional $
// and an explicit index, or several array filters matching one element), as
// MongoDB's createUpdateNodeByMerging: two operators at one path conflict.
// The conflict's path names an array node's child as $[<identifier>] ($[]
// for the all-positional), as createUpdateNodeMapByMerging writes it.
func merge(a, b *tnode, path string) (*tnode, error) {
	if a.leaf != nil || b.leaf != nil || a.array != b.array {
		return nil, mongoerr.New(mongoerr.ConflictingUpdateOperators,
			"Update created a conflict at '%s'", path)
	}
	m := &tnode{array: a.array}
	for _, name := range a.order {
		m.add(name, a.children[name])
	}
	for _, name := range b.order {
		if prev, ok := m.children[name]; ok {
			part := name
			if m.array {
				part = "$[" + name + "]"
			}
			merged, err := merge(prev, b.children[name], path+"."+part)
			if err != nil {
				return nil, err
			}
			m.children[name] = merged
			continue
		}
		m.add(name, b.children[name])
	}
	return m, nil
}
