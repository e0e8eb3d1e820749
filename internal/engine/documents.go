package engine

import (
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/update"
)

// MaxDocumentSize is MongoDB's BSON document limit (16 MiB).
const MaxDocumentSize = 16 * 1024 * 1024

// maxStorageDepth is how deeply MongoDB lets a stored document nest: the
// 200-level BSON limit less 20 levels kept for the server's own use.
const maxStorageDepth = 180

// CheckInsert reports the error inserting doc fails with before any
// collection is looked at (MongoDB's fixDocumentForInsert): its size,
// nesting, _id.
func CheckInsert(doc bson.Raw) error {
	_, _, err := prepareInsert(doc)
	return err
}

// checkUpserted applies to an upsert's new document the storage validation
// MongoDB's upsert stage gives it (scanDocument, top-level '$' fields
// allowed) before the insert's own rules (prepareInsert): the fields of an
// _id document are checked as top-level ones, and the nesting limit fails
// with the update's message.
func checkUpserted(doc bson.Raw) error {
	if id, err := doc.LookupErr("_id"); err == nil && id.Type == bson.TypeEmbeddedDocument {
		if err := update.CheckUpsertedID(id.Value); err != nil {
			return err
		}
	}
	return checkUpdatedDepth(doc)
}

// checkUpsertSize refuses, as MongoDB's upsert stage does (17420), the
// new document of an upsert over the size limit once the _id it lacks (an
// ObjectId element, 17 bytes) is added.
func checkUpsertSize(doc bson.Raw) error {
	n := len(doc)
	if _, err := doc.LookupErr("_id"); err != nil {
		n += 17
	}
	if n > MaxDocumentSize {
		return mongoerr.New(mongoerr.UpsertResultTooLarge, "Document to upsert is larger than %d", MaxDocumentSize)
	}
	return nil
}

// prepareInsert validates doc for storage and returns it with _id as its
// first field, generating an ObjectId when _id is missing, as MongoDB does.
// A second top-level _id fails with BadValue (2); other repeated field names
// are stored as given, which MongoDB's insert path also allows. A document
// over the size limit fails with BadValue, as fixDocumentForInsert refuses
// it (jstests/core/max_doc_size.js).
func prepareInsert(doc bson.Raw) (_ bson.Raw, id bson.RawValue, _ error) {
	if len(doc) > MaxDocumentSize {
		return nil, bson.RawValue{}, mongoerr.New(mongoerr.BadValue,
			"object to insert too large. size in bytes: %d, max size: %d", len(doc), MaxDocumentSize)
	}
	// Documents are well-formed (the wire layer validates what clients
	// send); walk doc in place, without allocating, once: its nesting
	// depth (doc is level 1), then its _id. idAt is the offset of the _id
	// element idEl.
	idAt := -1
	var idEl []byte
	deep, twoIDs := false, false
	it := rawdoc.Iterate(doc)
	for {
		rest := it.Rest()
		k, v, ok := it.Next()
		if !ok {
			break
		}
		if (v.Type == bson.TypeEmbeddedDocument || v.Type == bson.TypeArray) && depth(v.Value, 1) > maxStorageDepth {
			deep = true
		}
		if string(k) == "_id" {
			twoIDs = twoIDs || idAt >= 0
			idAt, idEl, id = len(doc)-1-len(rest), rest[:len(rest)-len(it.Rest())], v
		}
	}
	switch {
	case deep:
		return nil, bson.RawValue{}, mongoerr.New(mongoerr.Overflow,
			"cannot insert document because it exceeds %d levels of nesting", maxStorageDepth)
	case twoIDs:
		return nil, bson.RawValue{}, mongoerr.New(mongoerr.BadValue, "can't have multiple _id fields in one document")
	}
	if idAt == 4 {
		return doc, id, validateID(id)
	}
	out := make([]byte, 0, len(doc)+17)
	var start int32
	start, out = bsoncore.ReserveLength(out)
	if idAt < 0 {
		oid := bson.NewObjectID()
		out = bsoncore.AppendObjectIDElement(out, "_id", oid)
		id = bson.RawValue{Type: bson.TypeObjectID, Value: oid[:]}
		out = append(out, doc[4:len(doc)-1]...)
	} else {
		if err := validateID(id); err != nil {
			return nil, bson.RawValue{}, err
		}
		// _id first, then the elements before and after it, in order.
		out = append(out, idEl...)
		out = append(out, doc[4:idAt]...)
		out = append(out, doc[idAt+len(idEl):len(doc)-1]...)
	}
	out = append(out, 0)
	out = bsoncore.UpdateLength(out, start, int32(len(out)-int(start)))
	if len(out) > MaxDocumentSize {
		return nil, bson.RawValue{}, mongoerr.New(mongoerr.BadValue,
			"object to insert too large. size in bytes: %d, max size: %d", len(out), MaxDocumentSize)
	}
	return out, id, nil
}

// validateID applies MongoDB's rules on inserted _id values: no arrays,
// regexes or undefined, and in a document no '$'-prefixed field name.
func validateID(id bson.RawValue) error {
	switch id.Type {
	case bson.TypeArray:
		return mongoerr.New(mongoerr.InvalidIdField, "The '_id' value cannot be of type array")
	case bson.TypeRegex:
		return mongoerr.New(mongoerr.InvalidIdField, "The '_id' value cannot be of type regex")
	case bson.TypeUndefined:
		return mongoerr.New(mongoerr.InvalidIdField, "The '_id' value cannot be of type undefined")
	case bson.TypeEmbeddedDocument:
		if name, bad := dollarPrefixed(id.Value); bad {
			return mongoerr.New(mongoerr.DollarPrefixedFieldName,
				"_id fields may not contain '$'-prefixed fields: %s is not valid for storage.", name)
		}
	}
	return nil
}

// dollarPrefixed finds the first field name of doc (a document or an
// array), at any depth, that starts with '$' and is not part of a DBRef:
// a sub-document may start with $ref (a string) then $id, and an optional
// $db (a string) after them, whose values are not looked into. Scopes of
// code with scope are looked into, as MongoDB's storage check does.
func dollarPrefixed(doc []byte) (string, bool) {
	it := rawdoc.Iterate(doc)
	for first := true; ; first = false {
		k, v, ok := it.Next()
		if !ok {
			return "", false
		}
		if len(k) > 0 && k[0] == '$' {
			if !first || string(k) != "$ref" || v.Type != bson.TypeString {
				return string(k), true
			}
			if idName, _, ok := it.Next(); !ok || string(idName) != "$id" {
				return string(k), true
			}
			if k, v, ok = it.Next(); !ok {
				return "", false
			}
			if string(k) == "$db" && v.Type == bson.TypeString {
				continue
			}
			if len(k) > 0 && k[0] == '$' {
				return string(k), true
			}
		}
		var inner []byte
		switch v.Type {
		case bson.TypeEmbeddedDocument, bson.TypeArray:
			inner = v.Value
		case bson.TypeCodeWithScope:
			_, inner, _ = bsoncore.Value{Type: bsoncore.TypeCodeWithScope, Data: v.Value}.CodeWithScopeOK()
		}
		if inner != nil {
			if name, bad := dollarPrefixed(inner); bad {
				return name, true
			}
		}
	}
}

// checkUpdatedDepth refuses an updated document nested deeper than
// maxStorageDepth, as MongoDB's storage validation of an update's result
// (modifier, replacement or pipeline) does.
func checkUpdatedDepth(doc bson.Raw) error {
	if depth(doc, 0) > maxStorageDepth {
		return mongoerr.New(mongoerr.Overflow, "Document exceeds maximum nesting depth of %d", maxStorageDepth)
	}
	return nil
}

// depth is the deepest nesting level of doc and the documents and arrays
// within it, doc's parent being at level. A non-empty document or array is
// one level below its parent; an empty one adds no level, as MongoDB counts
// (insert.cpp's validateDepth descends only into non-empty objects, and
// storage_validation.cpp's scanDocument checks the level of elements, of
// which an empty object has none).
func depth(doc []byte, level int) int {
	if len(doc) <= 5 {
		return level
	}
	max := level + 1
	if max > maxStorageDepth+1 {
		return max
	}
	it := rawdoc.Iterate(doc)
	for {
		_, v, ok := it.Next()
		if !ok {
			break
		}
		if v.Type == bson.TypeEmbeddedDocument || v.Type == bson.TypeArray {
			if d := depth(v.Value, level+1); d > max {
				max = d
			}
		}
	}
	return max
}

// documentID returns doc's _id, which stored documents hold as their first
// field.
func documentID(doc bson.Raw) bson.RawValue {
	return doc.Lookup("_id")
}
