// Package values implements MongoDB's rules for single BSON values: the total
// order across types used by comparisons, sorts and indexes, type names and
// aliases, and numeric conversions.
package values

import (
	"bytes"
	"cmp"
	"math"
	"math/big"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Canonical type classes in MongoDB's comparison order. Values of different
// classes compare by class; numbers of every type share one class, as do
// strings and symbols.
const (
	rankMinKey    = -1
	rankMissing   = 0 // EOO (missing) and undefined
	rankNull      = 5
	rankNumber    = 10
	rankString    = 15
	rankObject    = 20
	rankArray     = 25
	rankBinary    = 30
	rankObjectID  = 35
	rankBool      = 40
	rankDate      = 45
	rankTimestamp = 47
	rankRegex     = 50
	rankDBPointer = 55
	rankCode      = 60
	rankCodeScope = 65
	rankMaxKey    = 127
)

// Rank is the canonical type class of t (MongoDB's canonicalizeBSONType).
// A zero t means a missing value.
func Rank(t bson.Type) int {
	switch t {
	case bson.TypeMinKey:
		return rankMinKey
	case 0, bson.TypeUndefined:
		return rankMissing
	case bson.TypeNull:
		return rankNull
	case bson.TypeDouble, bson.TypeInt32, bson.TypeInt64, bson.TypeDecimal128:
		return rankNumber
	case bson.TypeString, bson.TypeSymbol:
		return rankString
	case bson.TypeEmbeddedDocument:
		return rankObject
	case bson.TypeArray:
		return rankArray
	case bson.TypeBinary:
		return rankBinary
	case bson.TypeObjectID:
		return rankObjectID
	case bson.TypeBoolean:
		return rankBool
	case bson.TypeDateTime:
		return rankDate
	case bson.TypeTimestamp:
		return rankTimestamp
	case bson.TypeRegex:
		return rankRegex
	case bson.TypeDBPointer:
		return rankDBPointer
	case bson.TypeJavaScript:
		return rankCode
	case bson.TypeCodeWithScope:
		return rankCodeScope
	case bson.TypeMaxKey:
		return rankMaxKey
	}
	return rankMaxKey + 1
}

// IsNumber reports whether t is one of the four numeric types.
func IsNumber(t bson.Type) bool { return Rank(t) == rankNumber }

// Compare orders a and b as MongoDB does: first by canonical type class, then
// by value within the class. Numbers compare by numeric value across types,
// with NaN below every other number and -0 equal to 0; strings compare
// bytewise; documents and arrays field by field; binary data by length, then
// subtype, then bytes. A zero RawValue (missing) sorts below null.
func Compare(a, b bson.RawValue) int {
	ra, rb := Rank(a.Type), Rank(b.Type)
	if ra != rb {
		return cmp.Compare(ra, rb)
	}
	switch ra {
	case rankMinKey, rankMissing, rankNull, rankMaxKey:
		return 0
	case rankNumber:
		return CompareNumbers(a, b)
	case rankString:
		return bytes.Compare(stringBytes(a), stringBytes(b))
	case rankObject, rankArray:
		return CompareDocuments(a.Value, b.Value)
	case rankBinary:
		sa, da := a.Binary()
		sb, db := b.Binary()
		if c := cmp.Compare(len(da), len(db)); c != 0 {
			return c
		}
		if c := cmp.Compare(int(sa), int(sb)); c != 0 {
			return c
		}
		return bytes.Compare(da, db)
	case rankObjectID:
		oa, ob := a.ObjectID(), b.ObjectID()
		return bytes.Compare(oa[:], ob[:])
	case rankBool:
		return cmpBool(a.Boolean(), b.Boolean())
	case rankDate:
		return cmp.Compare(a.DateTime(), b.DateTime())
	case rankTimestamp:
		ta, ia := a.Timestamp()
		tb, ib := b.Timestamp()
		if ta != tb {
			return cmp.Compare(ta, tb)
		}
		return cmp.Compare(ia, ib)
	case rankRegex:
		pa, oa := a.Regex()
		pb, ob := b.Regex()
		if c := cmp.Compare(pa, pb); c != 0 {
			return c
		}
		return cmp.Compare(oa, ob)
	case rankDBPointer:
		na, ida := a.DBPointer()
		nb, idb := b.DBPointer()
		if c := cmp.Compare(len(na), len(nb)); c != 0 {
			return c
		}
		if c := cmp.Compare(na, nb); c != 0 {
			return c
		}
		return bytes.Compare(ida[:], idb[:])
	case rankCode:
		return cmp.Compare(a.JavaScript(), b.JavaScript())
	case rankCodeScope:
		ca, sa := a.CodeWithScope()
		cb, sb := b.CodeWithScope()
		if c := cmp.Compare(ca, cb); c != 0 {
			return c
		}
		return CompareDocuments(sa, sb)
	}
	return bytes.Compare(a.Value, b.Value)
}

// Equal reports whether Compare(a, b) == 0.
func Equal(a, b bson.RawValue) bool { return Compare(a, b) == 0 }

// CompareDocuments compares two BSON documents (or arrays) element by element:
// each pair of elements compares by canonical type class, then field name,
// then value; a document that is a prefix of the other is smaller.
func CompareDocuments(a, b []byte) int {
	ea, errA := bson.Raw(a).Elements()
	eb, errB := bson.Raw(b).Elements()
	if errA != nil || errB != nil {
		return bytes.Compare(a, b)
	}
	for i := 0; i < len(ea) && i < len(eb); i++ {
		va, vb := ea[i].Value(), eb[i].Value()
		if c := cmp.Compare(Rank(va.Type), Rank(vb.Type)); c != 0 {
			return c
		}
		if c := cmp.Compare(ea[i].Key(), eb[i].Key()); c != 0 {
			return c
		}
		if c := Compare(va, vb); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(ea), len(eb))
}

// CompareNumbers compares two numeric values of any numeric types exactly.
func CompareNumbers(a, b bson.RawValue) int {
	if a.Type == bson.TypeDecimal128 || b.Type == bson.TypeDecimal128 {
		return compareDecimal(a, b)
	}
	if a.Type == bson.TypeDouble || b.Type == bson.TypeDouble {
		if a.Type == bson.TypeDouble && b.Type == bson.TypeDouble {
			return cmpFloat(a.Double(), b.Double())
		}
		if a.Type == bson.TypeDouble {
			return cmpFloatInt(a.Double(), intValue(b))
		}
		return -cmpFloatInt(b.Double(), intValue(a))
	}
	return cmp.Compare(intValue(a), intValue(b))
}

func intValue(v bson.RawValue) int64 {
	if v.Type == bson.TypeInt32 {
		return int64(v.Int32())
	}
	return v.Int64()
}

// cmpFloat orders doubles with NaN below everything and NaN equal to NaN.
func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	case a == b:
		return 0
	case math.IsNaN(a) && math.IsNaN(b):
		return 0
	case math.IsNaN(a):
		return -1
	default:
		return 1
	}
}

// cmpFloatInt compares a double with an int64 without losing precision.
func cmpFloatInt(f float64, i int64) int {
	if math.IsNaN(f) {
		return -1
	}
	// Every int64 lies within [-2^63, 2^63).
	if f >= 9223372036854775808.0 {
		return 1
	}
	if f < -9223372036854775808.0 {
		return -1
	}
	t := math.Trunc(f)
	ti := int64(t)
	if ti != i {
		return cmp.Compare(ti, i)
	}
	return cmpFloat(f, t)
}

func compareDecimal(a, b bson.RawValue) int {
	ka, ra := numberKind(a)
	kb, rb := numberKind(b)
	if ka != kb || ka != kindFinite {
		return cmp.Compare(ka, kb)
	}
	return ra.Cmp(rb)
}

// Number kinds ordered as MongoDB orders them: NaN < -Inf < finite < +Inf.
const (
	kindNaN = iota
	kindNegInf
	kindFinite
	kindPosInf
)

func numberKind(v bson.RawValue) (int, *big.Rat) {
	switch v.Type {
	case bson.TypeDecimal128:
		d := v.Decimal128()
		if d.IsNaN() {
			return kindNaN, nil
		}
		switch d.IsInf() {
		case 1:
			return kindPosInf, nil
		case -1:
			return kindNegInf, nil
		}
		bi, exp, err := d.BigInt()
		if err != nil {
			return kindNaN, nil
		}
		r := new(big.Rat).SetInt(bi)
		if exp != 0 {
			p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(exp))), nil)
			if exp > 0 {
				r.Mul(r, new(big.Rat).SetInt(p))
			} else {
				r.Quo(r, new(big.Rat).SetInt(p))
			}
		}
		return kindFinite, r
	case bson.TypeDouble:
		f := v.Double()
		switch {
		case math.IsNaN(f):
			return kindNaN, nil
		case math.IsInf(f, 1):
			return kindPosInf, nil
		case math.IsInf(f, -1):
			return kindNegInf, nil
		}
		return kindFinite, new(big.Rat).SetFloat64(f)
	default:
		return kindFinite, new(big.Rat).SetInt64(intValue(v))
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func stringBytes(v bson.RawValue) []byte {
	// String and symbol share a layout: int32 length, bytes, NUL.
	if len(v.Value) < 5 {
		return nil
	}
	return v.Value[4 : len(v.Value)-1]
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}
