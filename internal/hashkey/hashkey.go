// Package hashkey computes MongoDB's hash of a BSON value, the key of a
// hashed index and of a hashed shard key (BSONElementHasher::hash64 with
// the default seed 0): the MD5 digest of the seed, then the value's
// canonical type and bytes, recursively for documents and arrays, read as
// a little-endian int64 from its first 8 bytes.
package hashkey

import (
	"crypto/md5"
	"encoding/binary"
	"hash"
	"math"
	"math/big"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Hash is MongoDB's hash of v. Numbers of every type hash as their value
// truncated to a 64-bit integer (NaN as 0, out-of-range values clamped),
// so 1, 1.5 and NumberLong(1) hash alike; a missing value hashes as null.
func Hash(v bson.RawValue) int64 {
	h := md5.New()
	var buf [8]byte
	h.Write(buf[:4]) // the seed, 0
	hashValue(h, v, &buf)
	var sum [md5.Size]byte
	return int64(binary.LittleEndian.Uint64(h.Sum(sum[:0])))
}

// hashValue appends v's canonical type and its bytes.
func hashValue(h hash.Hash, v bson.RawValue, buf *[8]byte) {
	if v.Type == 0 {
		v.Type = bson.TypeNull
	}
	writeType(h, v.Type, buf)
	hashBody(h, v, buf)
}

func writeType(h hash.Hash, t bson.Type, buf *[8]byte) {
	binary.LittleEndian.PutUint32(buf[:4], uint32(canonicalType(t)))
	h.Write(buf[:4])
}

// hashBody appends the bytes of v after its canonical type: numbers as
// an int64, documents and arrays element by element, the code of a code
// with scope (with its NUL) then its scope, else the value's own bytes.
func hashBody(h hash.Hash, v bson.RawValue, buf *[8]byte) {
	switch v.Type {
	case bson.TypeDouble, bson.TypeInt32, bson.TypeInt64, bson.TypeDecimal128:
		binary.LittleEndian.PutUint64(buf[:], uint64(numberForHash(v)))
		h.Write(buf[:])
	case bson.TypeEmbeddedDocument, bson.TypeArray:
		hashElements(h, v.Value, buf)
	case bson.TypeCodeWithScope:
		codeLen := int(binary.LittleEndian.Uint32(v.Value[4:8]))
		h.Write(v.Value[8 : 8+codeLen])
		hashElements(h, v.Value[8+codeLen:], buf)
	default:
		h.Write(v.Value)
	}
}

// hashElements appends each element of a BSON document (canonical type,
// name with its NUL, value), then the terminating EOO element, which
// hashes as type 0 alone.
func hashElements(h hash.Hash, doc []byte, buf *[8]byte) {
	elems, _ := bson.Raw(doc).Elements()
	for _, el := range elems {
		v := el.Value()
		writeType(h, v.Type, buf)
		h.Write([]byte(el)[1 : 2+len(el.Key())])
		hashBody(h, v, buf)
	}
	binary.LittleEndian.PutUint32(buf[:4], 0)
	h.Write(buf[:4])
}

// canonicalType is MongoDB's canonical type number, which groups the
// types that compare as equals (numbers, strings and symbols).
func canonicalType(t bson.Type) int32 {
	switch t {
	case bson.TypeMinKey:
		return -1
	case bson.TypeMaxKey:
		return 127
	case bson.TypeUndefined:
		return 0
	case bson.TypeNull:
		return 5
	case bson.TypeDouble, bson.TypeInt32, bson.TypeInt64, bson.TypeDecimal128:
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

// twoTo63 is 2^63 as a float64, the first double past int64's range.
const twoTo63 = float64(1 << 63)

// numberForHash is MongoDB's safeNumberLongForHash: the value truncated
// toward zero, NaN as 0, values past int64's range clamped, except that
// the double 2^63 itself gives the smallest int64 (as older versions'
// overflowing cast did).
func numberForHash(v bson.RawValue) int64 {
	switch v.Type {
	case bson.TypeInt32:
		return int64(v.Int32())
	case bson.TypeInt64:
		return v.Int64()
	case bson.TypeDouble:
		f := v.Double()
		switch {
		case math.IsNaN(f):
			return 0
		case f == twoTo63:
			return math.MinInt64
		case f > twoTo63:
			return math.MaxInt64
		case f < -twoTo63:
			return math.MinInt64
		}
		return int64(f)
	case bson.TypeDecimal128:
		return decimalForHash(v.Decimal128())
	}
	return 0
}

// decimalForHash truncates a decimal toward zero into int64's range.
func decimalForHash(d bson.Decimal128) int64 {
	if d.IsNaN() {
		return 0
	}
	if inf := d.IsInf(); inf != 0 {
		if inf > 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	coef, exp, err := d.BigInt()
	if err != nil {
		return 0
	}
	n := new(big.Int).Set(coef)
	if exp > 0 {
		if exp > 40 {
			exp = 40 // enough to leave int64's range
		}
		n.Mul(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(exp)), nil))
	} else if exp < 0 {
		n.Quo(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-exp)), nil))
	}
	switch {
	case n.IsInt64():
		return n.Int64()
	case n.Sign() > 0:
		return math.MaxInt64
	}
	return math.MinInt64
}
