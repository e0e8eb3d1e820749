package commands

import (
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"

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
