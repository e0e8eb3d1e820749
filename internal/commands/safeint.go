package commands

import (
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// safeInt64 reads a number as MongoDB's safeInt64 fields and
// safeNumberLong do: a double truncated toward zero and a decimal rounded
// half to even, NaN as 0 and values past the int64 range saturated. ok is
// false for a value that is not a number.
func safeInt64(v bson.RawValue) (n int64, ok bool) {
	switch v.Type {
	case bson.TypeInt32:
		return int64(v.Int32()), true
	case bson.TypeInt64:
		return v.Int64(), true
	case bson.TypeDouble:
		return saturate(math.Trunc(v.Double())), true
	case bson.TypeDecimal128:
		f, _ := values.Float64(v)
		return saturate(math.RoundToEven(f)), true
	}
	return 0, false
}

// argSafeInt64 reads a field MongoDB declares as safeInt64 (find's skip,
// limit and batchSize, a cursor's batchSize, getMore's batchSize).
func argSafeInt64(cmd, field string, v bson.RawValue) (int64, error) {
	if n, ok := safeInt64(v); ok {
		return n, nil
	}
	return 0, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.%s' is the wrong type '%s', expected types '[long, int, decimal, double]'",
		cmd, field, values.TypeName(v.Type))
}

func saturate(f float64) int64 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// nonNegative is the check MongoDB's IDL makes of a field declared with
// the validator gte: 0.
func nonNegative(field string, n int64) error {
	if n < 0 {
		return mongoerr.New(mongoerr.IDLValueOutOfRange, "BSON field '%s' value must be >= 0, actual value '%d'", field, n)
	}
	return nil
}

// argBatchSize reads a batchSize (find's, or a cursor option's): a
// safeInt64 that must be >= 0.
func argBatchSize(cmd, field string, v bson.RawValue) (int64, error) {
	n, err := argSafeInt64(cmd, field, v)
	if err == nil {
		err = nonNegative("batchSize", n)
	}
	return n, err
}

// cursorBatchSize reads the cursor option document of aggregate,
// listCollections and listIndexes ({batchSize: n}); it returns
// noBatchSize when it names none.
func cursorBatchSize(cmd string, cursor bson.Raw) (int64, error) {
	n := int64(noBatchSize)
	err := eachField(cursor, cmd+".cursor", func(key string, v bson.RawValue) (bool, error) {
		if key != "batchSize" {
			return false, nil
		}
		var err error
		n, err = argBatchSize(cmd+".cursor", key, v)
		return true, err
	})
	return n, err
}
