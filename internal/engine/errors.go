package engine

import (
	"fmt"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// duplicateIDError is MongoDB's DuplicateKey error for the _id index.
func duplicateIDError(c *Collection, id bson.RawValue) *mongoerr.Error {
	return dupKey(c, idIndexName, idKeyPattern, []string{"_id"}, []bson.RawValue{id})
}

// duplicateKeyError is MongoDB's DuplicateKey error for key k of the unique
// index ix.
func duplicateKeyError(c *Collection, ix *Index, k indexKey) *mongoerr.Error {
	paths := make([]string, len(ix.Fields))
	for i, f := range ix.Fields {
		paths[i] = f.Path
	}
	return dupKey(c, ix.Name, ix.keyPattern(), paths, k.vals)
}

// dupKey builds error 11000 with MongoDB's message and its keyPattern and
// keyValue fields.
func dupKey(c *Collection, index string, pattern bson.Raw, paths []string, vals []bson.RawValue) *mongoerr.Error {
	var shown strings.Builder
	keyValue := bson.D{}
	for i, p := range paths {
		if i > 0 {
			shown.WriteString(", ")
		}
		shown.WriteString(p + ": " + displayValue(vals[i]))
		keyValue = append(keyValue, bson.E{Key: p, Value: vals[i]})
	}
	err := mongoerr.New(mongoerr.DuplicateKey,
		"E11000 duplicate key error collection: %s.%s index: %s dup key: { %s }", c.DB, c.Name, index, shown.String())
	err.Extra = bson.D{{Key: "keyPattern", Value: pattern}, {Key: "keyValue", Value: keyValue}}
	return err
}

// displayValue renders v as MongoDB renders values in error messages.
func displayValue(v bson.RawValue) string {
	switch v.Type {
	case bson.TypeString:
		return fmt.Sprintf("%q", v.StringValue())
	case bson.TypeInt32:
		return fmt.Sprint(v.Int32())
	case bson.TypeInt64:
		return fmt.Sprint(v.Int64())
	case bson.TypeDouble:
		return fmt.Sprint(v.Double())
	case bson.TypeObjectID:
		return fmt.Sprintf("ObjectId('%s')", v.ObjectID().Hex())
	case bson.TypeNull:
		return "null"
	case bson.TypeBoolean:
		return fmt.Sprint(v.Boolean())
	}
	s := v.String()
	return strings.TrimSpace(s)
}

func sortWriteErrors(werrs []WriteError) {
	slices.SortStableFunc(werrs, func(a, b WriteError) int { return a.Index - b.Index })
}
