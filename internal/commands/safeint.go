package commands

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
)

// safeInt64 reads a number as MongoDB's safeInt64 fields and
// safeNumberLong do (expr.SafeLong: a double truncated toward zero, a
// decimal rounded half to even, NaN as 0, values past the int64 range
// saturated). ok is false for a value that is not a number.
func safeInt64(v bson.RawValue) (n int64, ok bool) {
	if !v.IsNumber() {
		return 0, false
	}
	return expr.SafeLong(v), true
}

// nonNegative is the check MongoDB's IDL makes of a field declared with
// the validator gte: 0.
func nonNegative(field string, n int64) error {
	if n < 0 {
		return mongoerr.New(mongoerr.IDLValueOutOfRange, "BSON field '%s' value must be >= 0, actual value '%d'", field, n)
	}
	return nil
}

// cursorSpec declares the cursor option document of a command (aggregate,
// listCollections, listIndexes): {batchSize: n}.
func cursorSpec(cmd string) *argSpec {
	return &argSpec{path: cmd + ".cursor", fields: []argField{withDefault("batchSize", tSafe, noBatchSize)}}
}

// cursorBatchSize reads a cursor option document parsed against spec
// (cursorSpec); it returns noBatchSize when it names none.
func cursorBatchSize(spec *argSpec, cursor bson.Raw) (int64, error) {
	c, err := parseSub(cursor, spec)
	if err != nil {
		return 0, err
	}
	n := c.safeInt("batchSize")
	if c.has("batchSize") {
		err = nonNegative("batchSize", n)
	}
	return n, err
}
