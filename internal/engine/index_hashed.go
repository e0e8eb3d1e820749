package engine

import (
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/hashkey"
	"github.com/folio-db/folio/internal/mongoerr"
)

// hashedIndexValue is the key value of field f of a hashed index in doc:
// the value at its path (null when missing, which missing reports), as a
// NumberLong of MongoDB's hash when f is the hashed field: of the value's
// collation key under coll, the index's collation (MongoDB's getHashKeys
// hashes the collation-aware key), so that strings equal under it share
// a hash. A hashed index
// holds no arrays, in any of its fields: an array anywhere along the path
// fails with 16766 (MongoDB's getHashKeys reads every field so).
func hashedIndexValue(doc bson.RawValue, f IndexField, coll *collation.Collator) (v bson.RawValue, missing bool, err error) {
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
	if !f.Hashed {
		return cur, missing, nil
	}
	return bson.RawValue{Type: bson.TypeInt64, Value: bsoncore.AppendInt64(nil, hashkey.Hash(coll.Transform(cur)))}, missing, nil
}

// hashed reports whether ix has a hashed field.
func (ix *Index) hashed() bool {
	return slices.ContainsFunc(ix.Fields, func(f IndexField) bool { return f.Hashed })
}

func hashedArrayError(parts []string) error {
	return mongoerr.New(mongoerr.HashedArrayValue,
		"Error: hashed indexes do not currently support array values. Found array at path: %s", strings.Join(parts, "."))
}
