package oplog

import (
	"bytes"
	"slices"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/rawdoc"
)

// UpdateO is the o of an update entry that changed old into next, as
// MongoDB logs an update pipeline's change (pipeline_executor.cpp,
// doc_diff::computeOplogDiff): its $v: 2 delta, {$v: 2, diff: D}, or next
// itself (a replacement) when D with the delta's own fields
// (deltaMetadata) would not be smaller than next. A document diff D holds
// d (fields removed: false), u (fields whose value changed), i (fields
// added) and, for an embedded document or array that changed in part,
// s<field>: the sub-diff. An array diff holds a: true, l (the new length,
// when the array shrank), u<index> (a new element value) and s<index> (an
// element's sub-diff). An embedded document or array is replaced whole (u)
// when its diff would not be smaller than it.
func UpdateO(dst []byte, old, next bson.Raw) []byte {
	diff := docDiff(old, next)
	if len(diff)+deltaMetadata >= len(next) {
		return append(dst, next...)
	}
	return DeltaO(dst, diff)
}

// deltaMetadata is the room MongoDB counts for a delta's $v and diff
// fields when it weighs a diff against the document
// (update_oplog_entry::kSizeOfDeltaOplogEntryMetadata).
const deltaMetadata = 15

// deltaOverhead is the size of a DeltaO document without its diff.
const deltaOverhead = 4 + 1 + len("$v\x00") + 4 + 1 + len("diff\x00") + 1

// DeltaO is the o of an update entry whose document diff is diff, as an
// update's operators logged it (MongoDB logs operator updates so, and diffs
// the documents of replacement-free pipeline updates).
func DeltaO(dst, diff []byte) []byte {
	// the o's own bytes around diff: its length, $v: 2, the diff's name
	// and type, and its end
	dst = slices.Grow(dst, len(diff)+deltaOverhead)
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
// differ: to subs as the sub-diff of an embedded document or array when
// it is smaller than the new value (subDiff), else to ups as the new value.
func diffField(ups, subs []byte, name string, was, v bson.RawValue) ([]byte, []byte) {
	if sub := subDiff(was, v); sub != nil {
		return ups, bsoncore.AppendDocumentElement(subs, "s"+name, sub)
	}
	return rawdoc.AppendElement(ups, name, v), subs
}

// subDiff is the diff from was to v, both embedded documents or both
// arrays, when it is smaller than v; else nil: v is logged whole, as
// MongoDB's computeDocDiff and computeArrayDiff do.
func subDiff(was, v bson.RawValue) []byte {
	var sub []byte
	switch {
	case was.Type == bson.TypeEmbeddedDocument && v.Type == bson.TypeEmbeddedDocument:
		sub = docDiff(was.Document(), v.Document())
	case was.Type == bson.TypeArray && v.Type == bson.TypeArray:
		sub = arrayDiff(was.Array(), v.Array())
	}
	if sub == nil || len(sub) >= len(v.Value) {
		return nil
	}
	return sub
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
		if was := av[i]; !was.Equal(v) {
			if sub := subDiff(was, v); sub != nil {
				out = bsoncore.AppendDocumentElement(out, "s"+idx, sub)
			} else {
				out = rawdoc.AppendElement(out, "u"+idx, v)
			}
		}
	}
	out, _ = bsoncore.AppendDocumentEnd(out, start)
	return out
}

// section is the document field name of diff, or nil.
func section(diff bson.Raw, name string) bson.Raw {
	d, _ := rawdoc.Lookup(diff, name).DocumentOK()
	return d
}
