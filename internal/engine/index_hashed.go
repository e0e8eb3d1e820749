package engine

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/hashkey"
	"github.com/folio-db/folio/internal/mongoerr"
)

// hashedValue is the key value of a hashed field in doc: MongoDB's hash of
// the value at its path (of null when missing, which missing reports), as
// a NumberLong. An array anywhere along the path fails with 16766, as
// MongoDB's hashed indexes hold no arrays.
func hashedValue(doc bson.RawValue, f IndexField) (v bson.RawValue, missing bool, err error) {
	cur := doc
	for i, part := range f.Parts {
		if cur.Type == bson.TypeArray {
			return v, false, hashedArrayError(f.Parts[:i])
		}
		if cur.Type != bson.TypeEmbeddedDocument {
			cur, missing = bson.RawValue{}, true
			break
		}
		next, lookErr := cur.Document().LookupErr(part)
		if lookErr != nil {
			cur, missing = bson.RawValue{}, true
			break
		}
		cur = next
	}
	if cur.Type == bson.TypeArray {
		return v, false, hashedArrayError(f.Parts)
	}
	if missing {
		cur = nullValue
	}
	return bson.RawValue{Type: bson.TypeInt64, Value: bsoncore.AppendInt64(nil, hashkey.Hash(cur))}, missing, nil
}

func hashedArrayError(parts []string) error {
	return mongoerr.New(mongoerr.HashedArrayValue,
		"Error: hashed indexes do not currently support array values. Found array at path: %s", strings.Join(parts, "."))
}
