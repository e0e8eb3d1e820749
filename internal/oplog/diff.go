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
	return DeltaO(dst, docDiff(old, next))
}

// DeltaO is the o of an update entry whose document diff is diff, as an
// update's operators logged it (MongoDB logs operator updates so, and diffs
// the documents of replacement-free pipeline updates).
func DeltaO(dst, diff []byte) []byte {
	start, dst := bsoncore.AppendDocumentStart(dst)
	dst = bsoncore.AppendInt32Element(dst, "$v", 2)
	dst = bsoncore.AppendDocumentElement(dst, "diff", diff)
	dst, _ = bsoncore.AppendDocumentEnd(dst, start)
	return dst
}

// docDiff is the diff from document a to document b. Fields keep b's
// order: from the first field of b that is new or out of a's order on,
// every field is inserted anew (i), which appends it, as MongoDB's diffs
// do.
func docDiff(a, b bson.Raw) []byte {
	if sameNames(a, b) {
		return pairDiff(a, b)
	}
	return lookupDiff(a, b)
}

// lookupDiff is docDiff of any two documents: each field is looked up in
// the other document.
func lookupDiff(a, b bson.Raw) []byte {
	var dels, ups, ins, subs []byte
	var kept []string // a's fields that b has, in a's order
	it := rawdoc.Iterate(a)
	for {
		k, _, ok := it.Next()
		if !ok {
			break
		}
		if rawdoc.Lookup(b, string(k)).Type == 0 {
			dels = bsoncore.AppendBooleanElement(dels, string(k), false)
		} else {
			kept = append(kept, string(k))
		}
	}
	appending := false
	it = rawdoc.Iterate(b)
	for {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		name := string(k)
		if !appending && len(kept) > 0 && kept[0] == name {
			kept = kept[1:]
		} else {
			appending = true
		}
		if appending {
			ins = rawdoc.AppendElement(ins, name, v)
			continue
		}
		if was := rawdoc.Lookup(a, name); !was.Equal(v) {
			ups, subs = diffField(ups, subs, name, was, v)
		}
	}
	return appendDiff(dels, ups, ins, subs)
}

// sameNames reports whether documents a and b have the same field names in
// the same order: an update that changes values only (most do).
func sameNames(a, b bson.Raw) bool {
	ia, ib := rawdoc.Iterate(a), rawdoc.Iterate(b)
	for {
		ka, _, oka := ia.Next()
		kb, _, okb := ib.Next()
		if oka != okb || !bytes.Equal(ka, kb) {
			return false
		}
		if !oka {
			return true
		}
	}
}

// pairDiff is docDiff of documents with the same names in the same order:
// the fields are compared in pairs, with no lookups, and nothing is
// deleted or inserted.
func pairDiff(a, b bson.Raw) []byte {
	var ups, subs []byte
	ia, ib := rawdoc.Iterate(a), rawdoc.Iterate(b)
	for {
		_, was, _ := ia.Next()
		k, v, ok := ib.Next()
		if !ok {
			break
		}
		if !was.Equal(v) {
			ups, subs = diffField(ups, subs, string(k), was, v)
		}
	}
	return appendDiff(nil, ups, nil, subs)
}

// diffField appends the change of field name from was to v, values that
// differ: to subs as a sub-diff of an embedded document (always) or of an
// array (when smaller than the array), else to ups as the new value.
func diffField(ups, subs []byte, name string, was, v bson.RawValue) ([]byte, []byte) {
	switch {
	case was.Type == bson.TypeEmbeddedDocument && v.Type == bson.TypeEmbeddedDocument:
		subs = bsoncore.AppendDocumentElement(subs, "s"+name, docDiff(was.Document(), v.Document()))
	case was.Type == bson.TypeArray && v.Type == bson.TypeArray:
		if sub := arrayDiff(was.Array(), v.Array()); len(sub) < len(v.Value) {
			subs = bsoncore.AppendDocumentElement(subs, "s"+name, sub)
		} else {
			ups = bsoncore.AppendArrayElement(ups, name, v.Value)
		}
	default:
		ups = rawdoc.AppendElement(ups, name, v)
	}
	return ups, subs
}

// appendDiff is a document diff of its sections, in MongoDB's order.
func appendDiff(dels, ups, ins, subs []byte) []byte {
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
			out = rawdoc.AppendElement(out, "u"+idx, v)
			continue
		}
		was := av[i]
		switch {
		case was.Equal(v):
		case was.Type == bson.TypeEmbeddedDocument && v.Type == bson.TypeEmbeddedDocument:
			out = bsoncore.AppendDocumentElement(out, "s"+idx, docDiff(was.Document(), v.Document()))
		case was.Type == bson.TypeArray && v.Type == bson.TypeArray:
			if sub := arrayDiff(was.Array(), v.Array()); len(sub) < len(v.Value) {
				out = bsoncore.AppendDocumentElement(out, "s"+idx, sub)
				continue
			}
			out = bsoncore.AppendArrayElement(out, "u"+idx, v.Value)
		default:
			out = rawdoc.AppendElement(out, "u"+idx, v)
		}
	}
	out, _ = bsoncore.AppendDocumentEnd(out, start)
	return out
}

// ApplyDiff is the document an update entry's $v: 2 diff (UpdateO's diff)
// makes of doc: the post-image of an update, from its pre-image.
func ApplyDiff(doc, diff bson.Raw) bson.Raw {
	return applyDocDiff(nil, doc, diff)
}

// applyDocDiff appends to dst doc changed by a document diff.
func applyDocDiff(dst []byte, doc, diff bson.Raw) []byte {
	dels, ups, ins := section(diff, "d"), section(diff, "u"), section(diff, "i")
	start, dst := bsoncore.AppendDocumentStart(dst)
	it := rawdoc.Iterate(doc)
	for {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		name := string(k)
		switch {
		case rawdoc.Lookup(dels, name).Type != 0, rawdoc.Lookup(ins, name).Type != 0:
			// removed, or inserted anew at the end
		case rawdoc.Lookup(ups, name).Type != 0:
			u := rawdoc.Lookup(ups, name)
			dst = rawdoc.AppendElement(dst, name, u)
		default:
			sub := rawdoc.Lookup(diff, "s"+name)
			switch {
			case sub.Type != bson.TypeEmbeddedDocument:
				dst = rawdoc.AppendElement(dst, name, v)
			case v.Type == bson.TypeArray:
				dst = bsoncore.AppendHeader(dst, bsoncore.TypeArray, name)
				dst = applyArrayDiff(dst, v.Array(), sub.Document())
			default:
				dst = bsoncore.AppendHeader(dst, bsoncore.TypeEmbeddedDocument, name)
				dst = applyDocDiff(dst, v.Document(), sub.Document())
			}
		}
	}
	// fields updated that the document lacked, then the inserted ones
	for i, section := range []bson.Raw{ups, ins} {
		it := rawdoc.Iterate(section)
		for {
			k, v, ok := it.Next()
			if !ok {
				break
			}
			if i == 0 && rawdoc.Lookup(doc, string(k)).Type != 0 {
				continue
			}
			dst = rawdoc.AppendElement(dst, string(k), v)
		}
	}
	dst, _ = bsoncore.AppendDocumentEnd(dst, start)
	return dst
}

// applyArrayDiff appends to dst arr changed by an array diff.
func applyArrayDiff(dst []byte, arr bson.RawArray, diff bson.Raw) []byte {
	vals, _ := arr.Values()
	if l, ok := diff.Lookup("l").AsInt64OK(); ok && int(l) < len(vals) {
		vals = vals[:l]
	}
	var subs map[int]bson.Raw
	it := rawdoc.Iterate(diff)
	for {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		key := string(k)
		if len(key) < 2 || (key[0] != 'u' && key[0] != 's') {
			continue
		}
		idx, err := strconv.Atoi(key[1:])
		if err != nil || idx < 0 {
			continue
		}
		for len(vals) <= idx {
			vals = append(vals, bson.RawValue{Type: bson.TypeNull})
		}
		if key[0] == 'u' {
			vals[idx] = v
			continue
		}
		if subs == nil {
			subs = map[int]bson.Raw{}
		}
		subs[idx] = v.Document()
	}
	start, dst := bsoncore.AppendArrayStart(dst)
	for i, v := range vals {
		name := strconv.Itoa(i)
		sub, ok := subs[i]
		switch {
		case !ok:
			dst = rawdoc.AppendElement(dst, name, v)
		case v.Type == bson.TypeArray:
			dst = bsoncore.AppendHeader(dst, bsoncore.TypeArray, name)
			dst = applyArrayDiff(dst, v.Array(), sub)
		default:
			dst = bsoncore.AppendHeader(dst, bsoncore.TypeEmbeddedDocument, name)
			dst = applyDocDiff(dst, v.Document(), sub)
		}
	}
	dst, _ = bsoncore.AppendArrayEnd(dst, start)
	return dst
}

// section is the document field name of diff, or nil.
func section(diff bson.Raw, name string) bson.Raw {
	d, _ := rawdoc.Lookup(diff, name).DocumentOK()
	return d
}
