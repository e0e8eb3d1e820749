package commands

import (
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/values"
)

// number is a reply count typed by magnitude as MongoDB types it
// (values.Number).
func number(n int64) bson.RawValue { return values.Number(n) }

// safeInt64 reads a numeric command field as MongoDB's safeNumberLong does:
// doubles and decimals truncate toward zero and clamp to the int64 range,
// NaN is 0. ok is false for a non-numeric value.
func safeInt64(v bson.RawValue) (n int64, ok bool) {
	switch v.Type {
	case bson.TypeInt32:
		return int64(v.Int32()), true
	case bson.TypeInt64:
		return v.Int64(), true
	case bson.TypeDouble, bson.TypeDecimal128:
		f, _ := values.Float64(v)
		switch {
		case math.IsNaN(f):
			return 0, true
		case f >= math.MaxInt64:
			return math.MaxInt64, true
		case f <= math.MinInt64:
			return math.MinInt64, true
		}
		return int64(f), true
	}
	return 0, false
}

// safeInt32 is safeInt64 clamped to the int32 range, as safeNumberInt.
func safeInt32(v bson.RawValue) (int32, bool) {
	n, ok := safeInt64(v)
	return int32(max(math.MinInt32, min(math.MaxInt32, n))), ok
}
