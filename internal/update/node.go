package update

import (
	"math"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/rawdoc"
)

// node is one value of the document being updated. A node keeps the raw
// bytes of its value until an update needs to look inside it: only the
// documents and arrays on an updated path are expanded, and every untouched
// subtree is copied to the output as it was.
type node struct {
	t        bson.Type
	raw      []byte  // value bytes while not expanded
	expanded bool    // fields or elems hold the value
	fields   []field // expanded document
	elems    []*node // expanded array
}

type field struct {
	name string
	val  *node
}

func rawNode(v bson.RawValue) *node { return &node{t: v.Type, raw: v.Value} }

func emptyDoc() *node { return &node{t: bson.TypeEmbeddedDocument, expanded: true} }

func isContainer(t bson.Type) bool {
	return t == bson.TypeEmbeddedDocument || t == bson.TypeArray
}

// expand decodes one level of a document or array node; its children's
// nodes share one allocation.
func (n *node) expand() {
	if n.expanded || !isContainer(n.t) {
		return
	}
	n.expanded = true
	count := rawdoc.Len(n.raw)
	kids := make([]node, count)
	it := rawdoc.Iterate(n.raw)
	if n.t == bson.TypeArray {
		n.elems = make([]*node, count)
		for i := range count {
			_, v, _ := it.Next()
			kids[i] = node{t: v.Type, raw: v.Value}
			n.elems[i] = &kids[i]
		}
	} else {
		n.fields = make([]field, count)
		for i := range count {
			k, v, _ := it.Next()
			kids[i] = node{t: v.Type, raw: v.Value}
			n.fields[i] = field{name: string(k), val: &kids[i]}
		}
	}
	n.raw = nil
}

// lookup returns the child named name (a field of a document, an index of an
// array), or nil.
func (n *node) lookup(name string) *node {
	n.expand()
	switch n.t {
	case bson.TypeEmbeddedDocument:
		for _, f := range n.fields {
			if f.name == name {
				return f.val
			}
		}
	case bson.TypeArray:
		if i, ok := arrayIndex(name); ok && i < len(n.elems) {
			return n.elems[i]
		}
	}
	return nil
}

// value is the node as a RawValue, encoding it if it was expanded.
func (n *node) value() bson.RawValue {
	if !n.expanded {
		return bson.RawValue{Type: n.t, Value: n.raw}
	}
	return bson.RawValue{Type: n.t, Value: n.appendValue(nil)}
}

// appendValue appends the encoded value (without type or key) to dst.
func (n *node) appendValue(dst []byte) []byte {
	if !n.expanded {
		return append(dst, n.raw...)
	}
	idx, dst := bsoncore.AppendDocumentStart(dst)
	if n.t == bson.TypeArray {
		for i, e := range n.elems {
			dst = e.appendElement(dst, strconv.Itoa(i))
		}
	} else {
		for _, f := range n.fields {
			dst = f.val.appendElement(dst, f.name)
		}
	}
	dst, _ = bsoncore.AppendDocumentEnd(dst, idx)
	return dst
}

func (n *node) appendElement(dst []byte, key string) []byte {
	dst = bsoncore.AppendHeader(dst, bsoncore.Type(n.t), key)
	return n.appendValue(dst)
}

// arrayIndex parses a path component as an array index: decimal digits only,
// of a value an unsigned int holds, as MongoDB's parseUnsignedBase10Integer.
func arrayIndex(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	i := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
		i = i*10 + int(c-'0')
		if i > math.MaxUint32 {
			return 0, false
		}
	}
	return i, true
}
