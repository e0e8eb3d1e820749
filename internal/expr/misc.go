package expr

import (
	enc "encoding/binary"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/hashkey"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// The bitwise operators (ints and longs; a long operand makes a long),
// $binarySize, $bsonSize, $tsSecond, $tsIncrement and $toHashedIndexKey.
// Null or missing gives null, except for $toHashedIndexKey, which hashes
// it as null.
func init() {
	register(map[string]opCompiler{
		"$bitAnd":           nary(0, -1, bitOp("$bitAnd", -1, func(a, b int64) int64 { return a & b })),
		"$bitOr":            nary(0, -1, bitOp("$bitOr", 0, func(a, b int64) int64 { return a | b })),
		"$bitXor":           nary(0, -1, bitOp("$bitXor", 0, func(a, b int64) int64 { return a ^ b })),
		"$bitNot":           unary(evalBitNot),
		"$binarySize":       unary(evalBinarySize),
		"$bsonSize":         unary(evalBSONSize),
		"$tsSecond":         unary(tsPart("$tsSecond", mongoerr.TsSecondNotTimestamp, true)),
		"$tsIncrement":      unary(tsPart("$tsIncrement", mongoerr.TsIncrementNotTimestamp, false)),
		"$toHashedIndexKey": unary(evalToHashedIndexKey),
	})
}

func bitOp(op string, identity int64, fn func(a, b int64) int64) naryFn {
	return func(args []bson.RawValue) (bson.RawValue, error) {
		acc, long := identity, false
		for _, a := range args {
			switch a.Type {
			case bson.TypeInt32:
				acc = fn(acc, int64(a.Int32()))
			case bson.TypeInt64:
				acc, long = fn(acc, a.Int64()), true
			default:
				if isNullish(a) {
					return nullValue, nil
				}
				return missing, mongoerr.New(mongoerr.TypeMismatch, "%s only supports int and long operands.", op)
			}
		}
		if long {
			return values.Int64Value(acc), nil
		}
		return values.Int32Value(int32(acc)), nil
	}
}

// evalBitNot is $bitNot: like every single-number operator it refuses a
// non-number with 28765; a double or decimal is TypeMismatch.
func evalBitNot(v bson.RawValue) (bson.RawValue, error) {
	switch v.Type {
	case bson.TypeInt32:
		return values.Int32Value(^v.Int32()), nil
	case bson.TypeInt64:
		return values.Int64Value(^v.Int64()), nil
	}
	if ok, err := numericArg("$bitNot", v); !ok {
		return nullValue, err
	}
	return missing, mongoerr.New(mongoerr.TypeMismatch, "$bitNot only supports int and long, not: %s.", typeName(v))
}

// evalBinarySize is the bytes of a string (UTF-8) or of binData's data.
func evalBinarySize(v bson.RawValue) (bson.RawValue, error) {
	switch v.Type {
	case bson.TypeString:
		return values.Int32Value(int32(len(v.StringValue()))), nil
	case bson.TypeBinary:
		_, data := v.Binary()
		return values.Int32Value(int32(len(data))), nil
	}
	if isNullish(v) {
		return nullValue, nil
	}
	return missing, mongoerr.New(mongoerr.BinarySizeBadType, "$binarySize requires a string or BinData argument, found: %s", typeName(v))
}

// evalBSONSize is the encoded size of a document.
func evalBSONSize(v bson.RawValue) (bson.RawValue, error) {
	if v.Type == bson.TypeEmbeddedDocument {
		return values.Int32Value(int32(len(v.Value))), nil
	}
	if isNullish(v) {
		return nullValue, nil
	}
	return missing, mongoerr.New(mongoerr.BSONSizeNotDocument, "$bsonSize requires a document input, found: %s", typeName(v))
}

// tsPart reads the seconds or the increment of a timestamp, as a long.
func tsPart(op string, code mongoerr.Code, seconds bool) unaryFn {
	return func(v bson.RawValue) (bson.RawValue, error) {
		if v.Type == bson.TypeTimestamp {
			// The increment is the low 4 bytes, the seconds the high 4.
			inc := enc.LittleEndian.Uint32(v.Value[:4])
			secs := enc.LittleEndian.Uint32(v.Value[4:8])
			if seconds {
				return values.Int64Value(int64(secs)), nil
			}
			return values.Int64Value(int64(inc)), nil
		}
		if isNullish(v) {
			return nullValue, nil
		}
		return missing, mongoerr.New(code, " Argument to %s must be a timestamp, but is %s", op, typeName(v))
	}
}

// evalToHashedIndexKey is the hash a hashed index keeps for v (missing
// hashes as null).
func evalToHashedIndexKey(v bson.RawValue) (bson.RawValue, error) {
	if v.Type == 0 || v.Type == bson.TypeUndefined {
		v = nullValue
	}
	return values.Int64Value(hashkey.Hash(v)), nil
}
