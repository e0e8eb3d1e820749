package commands

import (
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// number is a reply count typed by magnitude as MongoDB types it
// (values.Number).
func number(n int64) bson.RawValue { return values.Number(n) }

// safeInt32 is safeInt64 clamped to the int32 range, as safeNumberInt.
func safeInt32(v bson.RawValue) (int32, bool) {
	n, ok := safeInt64(v)
	return int32(max(math.MinInt32, min(math.MaxInt32, n))), ok
}

// extractInteger reads the field named field, of value v, as MongoDB's
// bsonExtractIntegerField: a number exactly representable as an int64,
// else TypeMismatch (not a number, null included) or BadValue.
func extractInteger(field string, v bson.RawValue) (int64, error) {
	switch v.Type {
	case bson.TypeInt32:
		return int64(v.Int32()), nil
	case bson.TypeInt64:
		return v.Int64(), nil
	}
	if !values.IsNumber(v.Type) {
		return 0, mongoerr.New(mongoerr.TypeMismatch, "Expected field \"%s\" to have numeric type, but found %s", field, values.TypeName(v.Type))
	}
	f, _ := values.Float64(v)
	if f != math.Trunc(f) || math.Abs(f) >= 1<<63 {
		return 0, mongoerr.New(mongoerr.BadValue, "Expected field \"%s\" to have a value exactly representable as a 64-bit integer, but found %s: %v", field, field, f)
	}
	return int64(f), nil
}
