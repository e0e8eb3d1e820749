package values

import (
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Display renders v as MongoDB renders values in error messages and in
// explain's index bounds.
func Display(v bson.RawValue) string {
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
