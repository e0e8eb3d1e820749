package values

import "go.mongodb.org/mongo-driver/v2/bson"

// typeNames are MongoDB's string aliases for BSON types, as accepted by
// $type and returned by the $type expression.
var typeNames = map[bson.Type]string{
	bson.TypeDouble:           "double",
	bson.TypeString:           "string",
	bson.TypeEmbeddedDocument: "object",
	bson.TypeArray:            "array",
	bson.TypeBinary:           "binData",
	bson.TypeUndefined:        "undefined",
	bson.TypeObjectID:         "objectId",
	bson.TypeBoolean:          "bool",
	bson.TypeDateTime:         "date",
	bson.TypeNull:             "null",
	bson.TypeRegex:            "regex",
	bson.TypeDBPointer:        "dbPointer",
	bson.TypeJavaScript:       "javascript",
	bson.TypeSymbol:           "symbol",
	bson.TypeCodeWithScope:    "javascriptWithScope",
	bson.TypeInt32:            "int",
	bson.TypeTimestamp:        "timestamp",
	bson.TypeInt64:            "long",
	bson.TypeDecimal128:       "decimal",
	bson.TypeMinKey:           "minKey",
	bson.TypeMaxKey:           "maxKey",
}

var typesByName = func() map[string]bson.Type {
	m := make(map[string]bson.Type, len(typeNames))
	for t, n := range typeNames {
		m[n] = t
	}
	return m
}()

// TypeName is MongoDB's alias for t ("double", "objectId", ...); a zero t is
// "missing".
func TypeName(t bson.Type) string {
	if t == 0 {
		return "missing"
	}
	return typeNames[t]
}

// TypeByName resolves a $type alias. "number" is not a single type and is not
// resolved here.
func TypeByName(name string) (bson.Type, bool) {
	t, ok := typesByName[name]
	return t, ok
}

// TypeByNumber resolves a $type number (1 double ... 19 decimal, -1 minKey,
// 127 maxKey).
func TypeByNumber(n int) (bson.Type, bool) {
	t := bson.Type(byte(n))
	if n < -1 || n > 127 {
		return 0, false
	}
	_, ok := typeNames[t]
	return t, ok
}
