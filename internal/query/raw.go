package query

import (
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/values"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

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
	it := rawdoc.Iterate(doc)
	for {
		_, v, ok := it.Next()
		if !ok {
			return len(it.Rest()) == 0
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
