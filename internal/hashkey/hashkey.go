// Package hashkey is MongoDB's hash of a BSON value, the key of a hashed
// index and the result of $toHashedIndexKey: the first 8 bytes (little
// endian) of the MD5 of the seed 0 and a canonical encoding of the value.
package hashkey

import (
	"crypto/md5"
	"encoding/binary"
	"hash"
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// Hash is MongoDB's BSONElementHasher::hash64 of v with the default seed:
// each value contributes its canonical type (int32) and, numbers, its
// value as an int64 (truncated, saturated, NaN as 0), documents and
// arrays, each element's canonical type, name and value in turn then the
// end marker's type, other values, their BSON bytes.
func Hash(v bson.RawValue) int64 {
	h := md5.New()
	var buf [8]byte
	binary.LittleEndian.PutUint32(buf[:4], 0) // the seed
	h.Write(buf[:4])
	hashValue(h, v.Type, v.Value, "", false)
	sum := h.Sum(nil)
	return int64(binary.LittleEndian.Uint64(sum[:8]))
}

func hashValue(h hash.Hash, t bson.Type, val []byte, name string, withName bool) {
	var buf [8]byte
	binary.LittleEndian.PutUint32(buf[:4], uint32(canonicalType(t)))
	h.Write(buf[:4])
	if withName {
		h.Write([]byte(name))
		h.Write([]byte{0})
	}
	switch t {
	case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128:
		binary.LittleEndian.PutUint64(buf[:], uint64(safeLong(t, val)))
		h.Write(buf[:])
	case bson.TypeEmbeddedDocument, bson.TypeArray:
		elems, _ := bsoncore.Document(val).Elements()
		for _, e := range elems {
			hashValue(h, bson.Type(e.Value().Type), e.Value().Data, e.Key(), true)
		}
		// The end of the document: an element of type EOO, canonical 0.
		binary.LittleEndian.PutUint32(buf[:4], 0)
		h.Write(buf[:4])
	default:
		h.Write(val)
	}
}

// safeLong is BSONElement::safeNumberLong.
func safeLong(t bson.Type, val []byte) int64 {
	switch t {
	case bson.TypeInt32:
		return int64(int32(binary.LittleEndian.Uint32(val)))
	case bson.TypeInt64:
		return int64(binary.LittleEndian.Uint64(val))
	case bson.TypeDouble:
		return saturate(math.Float64frombits(binary.LittleEndian.Uint64(val)))
	}
	d := bson.RawValue{Type: t, Value: val}.Decimal128()
	f, err := parseDecimal(d)
	if err != nil {
		return 0
	}
	return saturate(f)
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

// canonicalType is MongoDB's canonicalizeBSONType.
func canonicalType(t bson.Type) int32 {
	switch t {
	case bson.TypeMinKey:
		return -1
	case bson.TypeMaxKey:
		return 100
	case bson.TypeUndefined:
		return 0
	case bson.TypeNull:
		return 5
	case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128:
		return 10
	case bson.TypeString, bson.TypeSymbol:
		return 15
	case bson.TypeEmbeddedDocument:
		return 20
	case bson.TypeArray:
		return 25
	case bson.TypeBinary:
		return 30
	case bson.TypeObjectID:
		return 35
	case bson.TypeBoolean:
		return 40
	case bson.TypeDateTime:
		return 45
	case bson.TypeTimestamp:
		return 47
	case bson.TypeRegex:
		return 50
	case bson.TypeDBPointer:
		return 55
	case bson.TypeJavaScript:
		return 60
	case bson.TypeCodeWithScope:
		return 65
	}
	return 0
}
