package values

import "go.mongodb.org/mongo-driver/v2/bson"

// IsZero reports whether v is a numeric zero of any of the four numeric
// types. A decimal is zero whatever its exponent and sign (0, 0.00, -0,
// 0E+3), as MongoDB's Decimal128::isZero has it; the driver's
// Decimal128.IsZero recognizes only the all-bits-zero encoding.
func IsZero(v bson.RawValue) bool {
	switch v.Type {
	case bson.TypeDouble:
		return v.Double() == 0
	case bson.TypeInt32:
		return v.Int32() == 0
	case bson.TypeInt64:
		return v.Int64() == 0
	case bson.TypeDecimal128:
		return DecimalIsZero(v.Decimal128())
	}
	return false
}

// Truthy is MongoDB's boolean coercion of a value (BSONElement::trueValue,
// and Value::coerceToBool in expressions, which agree): missing, null,
// undefined, false and numeric zero of any type (a decimal zero of any
// exponent included) are false; everything else, NaN, empty strings and
// empty arrays included, is true.
func Truthy(v bson.RawValue) bool {
	switch v.Type {
	case 0, bson.TypeNull, bson.TypeUndefined:
		return false
	case bson.TypeBoolean:
		return v.Boolean()
	}
	return !IsZero(v)
}

// DecimalIsZero reports whether d has a zero coefficient. In IEEE 754
// decimal128 (BID) a coefficient is the low 113 bits, unless the two bits
// after the sign are both set: then the encoding is infinity or NaN when the
// next two are also set, and otherwise a coefficient above the 34-digit
// maximum, which the standard reads as zero.
func DecimalIsZero(d bson.Decimal128) bool {
	high, low := d.GetBytes()
	if high>>61&3 == 3 {
		return high>>59&3 != 3
	}
	return high&(1<<49-1) == 0 && low == 0
}
