package oplog

import (
	"bytes"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/rawdoc"
)

// UpdateO is the o of an update entry that changed old into next: MongoDB's
// $v: 2 delta, {$v: 2, diff: D}. A document diff D holds d (fields
// removed: false), u (fields whose value changed), i (fields added) and,
// for an embedded document or array that changed in part, s<field>: the
// sub-diff. An array diff holds a: true, l (the new length, when the array
// shrank), u<index> (a new element value) and s<index> (an element's
// sub-diff). An embedded document that stays one is always diffed, as the
// dotted paths update operators name; an array is replaced whole when its
// diff would be larger than it.
func UpdateO(dst []byte, old, next bson.Raw) []byte {
	start, dst := bsoncore.AppendDocumentStart(dst)
	dst = bsoncore.AppendInt32Element(dst, "$v", 2)
	dst = bsoncore.AppendDocumentElement(dst, "diff", docDiff(old, next))
	dst, _ = bsoncore.AppendDocumentEnd(dst, start)
	return dst
}

// docDiff is the diff from document a to document b.
func docDiff(a, b bson.Raw) []byte {
	var dels, ups, ins, subs []byte
	it := rawdoc.Iterate(a)
	for {
		k, _, ok := it.Next()
		if !ok {
			break
		}
		if rawdoc.Lookup(b, string(k)).Type == 0 {
			dels = bsoncore.AppendBooleanElement(dels, string(k), false)
		}
	}
	it = rawdoc.Iterate(b)
	for {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		name := string(k)
		was := rawdoc.Lookup(a, name)
		switch {
		case was.Type == 0:
			ins = bsoncore.AppendValueElement(ins, name, bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value})
		case was.Type == v.Type && bytes.Equal(was.Value, v.Value):
		case was.Type == bson.TypeEmbeddedDocument && v.Type == bson.TypeEmbeddedDocument:
			subs = bsoncore.AppendDocumentElement(subs, "s"+name, docDiff(was.Document(), v.Document()))
		case was.Type == bson.TypeArray && v.Type == bson.TypeArray:
			if sub := arrayDiff(was.Array(), v.Array()); len(sub) < len(v.Value) {
				subs = bsoncore.AppendDocumentElement(subs, "s"+name, sub)
			} else {
				ups = bsoncore.AppendArrayElement(ups, name, v.Value)
			}
		default:
			ups = bsoncore.AppendValueElement(ups, name, bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value})
		}
	}
	start, out := bsoncore.AppendDocumentStart(nil)
	if dels != nil {
		out = appendSection(out, "d", dels)
	}
	if ups != nil {
		out = appendSection(out, "u", ups)
	}
	if ins != nil {
		out = appendSection(out, "i", ins)
	}
	out = append(out, subs...)
	out, _ = bsoncore.AppendDocumentEnd(out, start)
	return out
}

// appendSection appends elems as the document field name.
func appendSection(dst []byte, name string, elems []byte) []byte {
	start, dst := bsoncore.AppendDocumentElementStart(dst, name)
	dst = append(dst, elems...)
	dst, _ = bsoncore.AppendDocumentEnd(dst, start)
	return dst
}

// arrayDiff is the diff from array a to array b.
func arrayDiff(a, b bson.RawArray) []byte {
	av, _ := a.Values()
	bv, _ := b.Values()
	start, out := bsoncore.AppendDocumentStart(nil)
	out = bsoncore.AppendBooleanElement(out, "a", true)
	if len(bv) < len(av) {
		out = bsoncore.AppendInt32Element(out, "l", int32(len(bv)))
	}
	for i, v := range bv {
		idx := strconv.Itoa(i)
		if i >= len(av) {
			out = bsoncore.AppendValueElement(out, "u"+idx, bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value})
			continue
		}
		was := av[i]
		switch {
		case was.Type == v.Type && bytes.Equal(was.Value, v.Value):
		case was.Type == bson.TypeEmbeddedDocument && v.Type == bson.TypeEmbeddedDocument:
			out = bsoncore.AppendDocumentElement(out, "s"+idx, docDiff(was.Document(), v.Document()))
		case was.Type == bson.TypeArray && v.Type == bson.TypeArray:
			if sub := arrayDiff(was.Array(), v.Array()); len(sub) < len(v.Value) {
				out = bsoncore.AppendDocumentElement(out, "s"+idx, sub)
				continue
			}
			out = bsoncore.AppendArrayElement(out, "u"+idx, v.Value)
		default:
			out = bsoncore.AppendValueElement(out, "u"+idx, bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value})
		}
	}
	out, _ = bsoncore.AppendDocumentEnd(out, start)
	return out
}
