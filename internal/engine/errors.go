package engine

import (
	"fmt"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// duplicateIDError is MongoDB's DuplicateKey error for the _id index, with
// keyPattern and keyValue.
func duplicateIDError(c *Collection, id bson.RawValue) *mongoerr.Error {
	err := mongoerr.New(mongoerr.DuplicateKey,
		"E11000 duplicate key error collection: %s.%s index: _id_ dup key: { _id: %s }",
		c.DB, c.Name, displayValue(id))
	err.Extra = bson.D{
		{Key: "keyPattern", Value: bson.D{{Key: "_id", Value: int32(1)}}},
		{Key: "keyValue", Value: bson.D{{Key: "_id", Value: id}}},
	}
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
