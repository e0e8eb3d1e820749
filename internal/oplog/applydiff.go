package oplog

import (
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
)

// maxArrayIndex bounds the array index a diff may name: an element past
// it cannot be in a document of at most 16 MB (each takes 3 bytes or more),
// so the update could only fail, after allocating the elements before it.
const maxArrayIndex = 16 * 1024 * 1024 / 3

// ApplyDiff is the document an update entry's $v: 2 diff (UpdateO's diff)
// makes of doc: the post-image of an update, from its pre-image. A diff
// that is not one fails as MongoDB's reader of diffs fails (CheckDiff). As
// in MongoDB, a sub-diff of a field that is absent, or not of the sub-diff's
// kind (a document diff for an array, say), leaves the field as it is.
func ApplyDiff(doc, diff bson.Raw) (bson.Raw, error) {
	if err := CheckDiff(diff); err != nil {
		return nil, err
	}
	return applyDocDiff(nil, doc, diff), nil
}

// CheckDiff checks that diff is a document diff: sections d, u and i, each
// a document and in that order, then s<field> sub-diffs; an array
// sub-diff starts with a: true, may then hold l (an int), then u<index>
// and s<index> fields. The codes are MongoDB's.
func CheckDiff(diff bson.Raw) error {
	return checkDocDiff(diff)
}

func checkDocDiff(diff bson.Raw) error {
	it := rawdoc.Iterate(diff)
	prev, n := 0, 0
	for {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		n++
		if len(k) == 0 {
			return mongoerr.New(mongoerr.DiffSectionName, "Expected sections field names in diff to be non-empty ")
		}
		order := map[byte]int{'d': 1, 'u': 2, 'i': 3, 's': 4}[k[0]]
		if order == 0 || order < prev || order == prev && order != 4 {
			return mongoerr.New(mongoerr.DiffUnexpectedSection, "Unexpected section: %c in document diff", k[0])
		}
		prev = order
		if v.Type != bson.TypeEmbeddedDocument {
			if order == 4 {
				return mongoerr.New(mongoerr.DiffSubDiffNotObject, "Subdiffs should be objects, got %s: %s", k, v)
			}
			return mongoerr.New(mongoerr.DiffSectionType, "Expected %c section to be type object", k[0])
		}
		if order == 4 {
			if err := checkSubDiff(v.Document()); err != nil {
				return err
			}
		}
	}
	if n == 0 {
		return mongoerr.New(mongoerr.DiffEmpty, "Expected diff to be non-empty")
	}
	return nil
}

// checkSubDiff checks a sub-diff: an array diff when it starts with a, a
// document diff otherwise.
func checkSubDiff(diff bson.Raw) error {
	first, err := diff.IndexErr(0)
	if err != nil || first.Key() != "a" {
		return checkDocDiff(diff)
	}
	if b, ok := first.Value().BooleanOK(); !ok || !b {
		return mongoerr.New(mongoerr.DiffArrayHeader, "Expected array header to be bool value true but got %s", first.Value())
	}
	it := rawdoc.Iterate(diff)
	it.Next()
	for i := 0; ; i++ {
		k, v, ok := it.Next()
		if !ok {
			return nil
		}
		key := string(k)
		if i == 0 && key == "l" {
			if v.Type != bson.TypeInt32 {
				return mongoerr.New(mongoerr.DiffSectionType, "Expected l section to be type int")
			}
			continue
		}
		if len(key) < 2 {
			return mongoerr.New(mongoerr.DiffArrayFieldName, "expected field name to be at least two characters long, but found: %s", key)
		}
		idx, err := strconv.ParseUint(key[1:], 10, 63)
		if err != nil || key[1] == '+' {
			return mongoerr.New(mongoerr.DiffArrayIndex, "Expected integer but got %s", key[1:])
		}
		if idx >= maxArrayIndex {
			return mongoerr.New(mongoerr.UpdateResultTooLarge, "Resulting document after update is larger than %d", 16*1024*1024)
		}
		switch key[0] {
		case 'u':
		case 's':
			if v.Type != bson.TypeEmbeddedDocument {
				return mongoerr.New(mongoerr.DiffArraySubDiff, "expected sub diff at index %d but got %s", idx, v)
			}
			if err := checkSubDiff(v.Document()); err != nil {
				return err
			}
		default:
			return mongoerr.New(mongoerr.DiffArrayModification, "Expected either 'u' (update) or 's' (sub diff) at index %d but got %s", idx, v)
		}
	}
}

// isArrayDiff reports whether a (checked) sub-diff is an array's.
func isArrayDiff(diff bson.Raw) bool {
	first, err := diff.IndexErr(0)
	return err == nil && first.Key() == "a"
}

// applyDocDiff appends to dst doc changed by a (checked) document diff.
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
			sub, _ := rawdoc.Lookup(diff, "s"+name).DocumentOK()
			dst = appendPatched(dst, name, v, sub)
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

// appendPatched appends the element name: v changed by its sub-diff sub
// (nil for none). A sub-diff of a value of another kind (a document diff
// for an array, say) leaves it as it is.
func appendPatched(dst []byte, name string, v bson.RawValue, sub bson.Raw) []byte {
	switch {
	case sub != nil && v.Type == bson.TypeArray && isArrayDiff(sub):
		dst = bsoncore.AppendHeader(dst, bsoncore.TypeArray, name)
		return applyArrayDiff(dst, v.Array(), sub)
	case sub != nil && v.Type == bson.TypeEmbeddedDocument && !isArrayDiff(sub):
		dst = bsoncore.AppendHeader(dst, bsoncore.TypeEmbeddedDocument, name)
		return applyDocDiff(dst, v.Document(), sub)
	}
	return rawdoc.AppendElement(dst, name, v)
}

// applyArrayDiff appends to dst arr changed by a (checked) array diff: l
// truncates it, u<index> sets an element (padding with nulls up to it)
// and s<index> changes one in part.
func applyArrayDiff(dst []byte, arr bson.RawArray, diff bson.Raw) []byte {
	vals, _ := arr.Values()
	if l, ok := diff.Lookup("l").Int32OK(); ok && int(l) < len(vals) {
		vals = vals[:max(l, 0)]
	}
	var subs map[int]bson.Raw
	it := rawdoc.Iterate(diff)
	for {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		key := string(k)
		if len(key) < 2 {
			continue // the header a, or l
		}
		idx, _ := strconv.Atoi(key[1:])
		for len(vals) <= idx {
			vals = append(vals, bson.RawValue{Type: bson.TypeNull, Value: []byte{}})
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
		dst = appendPatched(dst, strconv.Itoa(i), v, subs[i])
	}
	dst, _ = bsoncore.AppendArrayEnd(dst, start)
	return dst
}
