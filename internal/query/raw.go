package query

import (
	"github.com/folio-db/folio/internal/values"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// rawIter walks the elements of a BSON document or array in place, without
// decoding or allocating. Malformed input ends the iteration.
type rawIter struct{ rest []byte }

func iterate(doc []byte) rawIter {
	if len(doc) < 5 {
		return rawIter{}
	}
	return rawIter{rest: doc[4 : len(doc)-1]}
}

// next returns the next element's key and value; ok is false at the end.
func (it *rawIter) next() (key []byte, v bson.RawValue, ok bool) {
	if len(it.rest) < 2 {
		return nil, bson.RawValue{}, false
	}
	t := it.rest[0]
	end := 1
	for end < len(it.rest) && it.rest[end] != 0 {
		end++
	}
	if end >= len(it.rest) {
		it.rest = nil
		return nil, bson.RawValue{}, false
	}
	key = it.rest[1:end]
	val, rest, ok := bsoncore.ReadValue(it.rest[end+1:], bsoncore.Type(t))
	if !ok {
		it.rest = nil
		return nil, bson.RawValue{}, false
	}
	it.rest = rest
	return key, bson.RawValue{Type: bson.Type(t), Value: val.Data}, true
}

// lookup returns the value of the field named name in doc, or a zero
// RawValue (missing) when there is none.
func lookup(doc []byte, name string) bson.RawValue {
	it := iterate(doc)
	for {
		k, v, ok := it.next()
		if !ok {
			return bson.RawValue{}
		}
		if string(k) == name {
			return v
		}
	}
}

// arrayLen counts the elements of a BSON array.
func arrayLen(arr []byte) int {
	n := 0
	it := iterate(arr)
	for {
		if _, _, ok := it.next(); !ok {
			return n
		}
		n++
	}
}

// appendValue appends an element named key holding v to a document being built.
func appendValue(dst []byte, key string, v bson.RawValue) []byte {
	dst = bsoncore.AppendHeader(dst, bsoncore.Type(v.Type), key)
	return append(dst, v.Value...)
}

// isTrue is MongoDB's BSONElement::trueValue: false for missing, null,
// undefined, false and numeric zero (a decimal zero of any exponent
// included); true otherwise.
func isTrue(v bson.RawValue) bool {
	switch v.Type {
	case 0, bson.TypeNull, bson.TypeUndefined:
		return false
	case bson.TypeBoolean:
		return v.Boolean()
	}
	return !values.IsZero(v)
}

// firstKey is the name of doc's first field, or "" for an empty document.
func firstKey(doc []byte) string {
	it := iterate(doc)
	k, _, ok := it.next()
	if !ok {
		return ""
	}
	return string(k)
}

// wellFormed reports whether doc is a BSON document that the accessors used
// here can read without panicking. It is stricter than
// bsoncore.Document.Validate, which accepts zero-length strings.
func wellFormed(doc []byte) bool {
	if bsoncore.Document(doc).Validate() != nil {
		return false
	}
	return elementsWellFormed(doc)
}

func elementsWellFormed(doc []byte) bool {
	if len(doc) < 5 || int(int32(uint32(doc[0])|uint32(doc[1])<<8|uint32(doc[2])<<16|uint32(doc[3])<<24)) != len(doc) {
		return false
	}
	it := iterate(doc)
	for {
		_, v, ok := it.next()
		if !ok {
			return len(it.rest) == 0
		}
		if !valueWellFormed(v) {
			return false
		}
	}
}

func valueWellFormed(v bson.RawValue) bool {
	switch v.Type {
	case bson.TypeString, bson.TypeJavaScript, bson.TypeSymbol, bson.TypeDBPointer:
		_, _, ok := bsoncore.ReadString(v.Value)
		return ok
	case bson.TypeEmbeddedDocument, bson.TypeArray:
		return elementsWellFormed(v.Value)
	case bson.TypeCodeWithScope:
		_, _, ok := bsoncore.Value{Type: bsoncore.TypeCodeWithScope, Data: v.Value}.CodeWithScopeOK()
		if !ok || len(v.Value) < 4 {
			return false
		}
		_, rest, ok := bsoncore.ReadString(v.Value[4:])
		return ok && elementsWellFormed(rest)
	}
	return true
}
