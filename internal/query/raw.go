package query

import (
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
