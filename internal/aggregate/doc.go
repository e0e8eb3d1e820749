package aggregate

import (
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/values"
)

// field is one element of a document being rebuilt.
type field struct {
	key string
	val bson.RawValue
}

// missing is the absent value; null is BSON null.
var (
	missing = bson.RawValue{}
	null    = bson.RawValue{Type: bson.TypeNull}
)

// fieldsOf lists the elements of a document in order.
func fieldsOf(doc []byte) []field {
	elems, err := bson.Raw(doc).Elements()
	if err != nil {
		return nil
	}
	out := make([]field, len(elems))
	for i, el := range elems {
		out[i] = field{el.Key(), el.Value()}
	}
	return out
}

// appendValue appends key: v; a missing v appends nothing.
func appendValue(dst []byte, key string, v bson.RawValue) []byte {
	if v.Type == 0 {
		return dst
	}
	return rawdoc.AppendElement(dst, key, v)
}

// buildDoc encodes fields as a document, leaving out missing values.
func buildDoc(fs []field) bson.Raw {
	start, d := bsoncore.AppendDocumentStart(nil)
	for _, f := range fs {
		d = appendValue(d, f.key, f.val)
	}
	d, _ = bsoncore.AppendDocumentEnd(d, start)
	return d
}

// buildArray encodes vals as an array; missing values become null, as
// arrays cannot hold missing.
func buildArray(vals []bson.RawValue) bson.RawValue {
	start, a := bsoncore.AppendArrayStart(nil)
	for i, v := range vals {
		if v.Type == 0 {
			v = null
		}
		a = appendValue(a, strconv.Itoa(i), v)
	}
	a, _ = bsoncore.AppendArrayEnd(a, start)
	return bson.RawValue{Type: bson.TypeArray, Value: a}
}

// docValue wraps a document as a value.
func docValue(d []byte) bson.RawValue {
	return bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: d}
}

// arrayValues lists the elements of an array value.
func arrayValues(v bson.RawValue) []bson.RawValue {
	vals, _ := bson.Raw(v.Value).Values()
	return vals
}

// setField replaces the value of key in place, or appends it.
func setField(fs []field, key string, v bson.RawValue) []field {
	for i := range fs {
		if fs[i].key == key {
			fs[i].val = v
			return fs
		}
	}
	return append(fs, field{key, v})
}

// getField is the value of key in fs, or missing.
func getField(fs []field, key string) bson.RawValue {
	for _, f := range fs {
		if f.key == key {
			return f.val
		}
	}
	return missing
}

// lookupPath follows a dotted path through subdocuments only, as MongoDB's
// Document::getNestedField does: an array on the way yields missing.
func lookupPath(doc []byte, path []string) bson.RawValue {
	v := docValue(doc)
	for _, p := range path {
		if v.Type != bson.TypeEmbeddedDocument {
			return missing
		}
		c, err := bson.Raw(v.Value).LookupErr(p)
		if err != nil {
			return missing
		}
		v = c
	}
	return v
}

// setPath returns doc with the dotted path set to v (removed when v is
// missing). Missing or non-document parents are replaced by documents, as
// MongoDB's setNestedField does; the field keeps its position if present.
func setPath(doc []byte, path []string, v bson.RawValue) bson.Raw {
	fs := fieldsOf(doc)
	if len(path) > 1 {
		var sub []byte
		if cur := getField(fs, path[0]); cur.Type == bson.TypeEmbeddedDocument {
			sub = cur.Value
		} else {
			sub = emptyDoc
		}
		v = docValue(setPath(sub, path[1:], v))
	}
	return buildDoc(setField(fs, path[0], v))
}

// setComputedPath returns doc with the dotted path set to v as $addFields
// sets a computed field (InclusionNode): through an array the rest of the
// path is set in each element, an element that is not a document (nor an
// array) replaced by a document, as is a missing or scalar parent.
func setComputedPath(doc []byte, path []string, v bson.RawValue) bson.Raw {
	fs := fieldsOf(doc)
	if len(path) > 1 {
		v = setComputedIn(getField(fs, path[0]), path[1:], v)
	}
	return buildDoc(setField(fs, path[0], v))
}

func setComputedIn(cur bson.RawValue, path []string, v bson.RawValue) bson.RawValue {
	switch cur.Type {
	case bson.TypeArray:
		vals := arrayValues(cur)
		for i, el := range vals {
			vals[i] = setComputedIn(el, path, v)
		}
		return buildArray(vals)
	case bson.TypeEmbeddedDocument:
		return docValue(setComputedPath(cur.Value, path, v))
	}
	return docValue(setComputedPath(emptyDoc, path, v))
}

// emptyDoc is {}.
var emptyDoc = bson.Raw{5, 0, 0, 0, 0}

// splitPath splits a dotted field path.
func splitPath(p string) []string { return strings.Split(p, ".") }

// nullIfMissing turns missing into null.
func nullIfMissing(v bson.RawValue) bson.RawValue {
	if v.Type == 0 {
		return null
	}
	return v
}

// typeName is MongoDB's name for the type of v ("missing" when absent).
func typeName(v bson.RawValue) string {
	if v.Type == 0 {
		return "missing"
	}
	return values.TypeName(v.Type)
}

// stringValue is a BSON string.
func stringValue(s string) bson.RawValue {
	return bson.RawValue{Type: bson.TypeString, Value: bsoncore.AppendString(nil, s)}
}
