package query

import (
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// appendValue appends an element named key holding v to a document being built.
func appendValue(dst []byte, key string, v bson.RawValue) []byte {
	dst = bsoncore.AppendHeader(dst, bsoncore.Type(v.Type), key)
	return append(dst, v.Value...)
}
