package values

import "go.mongodb.org/mongo-driver/v2/bson"

// Number is a 64-bit count typed as MongoDB's BSONObjBuilder::appendNumber
// types it in replies: an int32 strictly inside ±2^30, a double strictly
// inside ±2^40, an int64 beyond. Reply fields MongoDB builds that way
// (collStats sizes, validate's counts, hello's connectionId) use it so that
// their BSON types match MongoDB's at every magnitude.
func Number(n int64) bson.RawValue {
	switch {
	case -(1<<30) < n && n < 1<<30:
		return Int32Value(int32(n))
	case -(1<<40) < n && n < 1<<40:
		return DoubleValue(float64(n))
	}
	return Int64Value(n)
}
