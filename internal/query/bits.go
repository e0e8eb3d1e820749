package query

import (
	"encoding/binary"
	"math"

	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/values"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// parseBitPositions parses the operand of the $bits* operators into bit
// positions: a non-negative integer mask, a BinData mask (little-endian), or
// an array of non-negative bit positions.
func parseBitPositions(path, op string, v bson.RawValue) ([]uint32, error) {
	var pos []uint32
	switch {
	case v.Type == bson.TypeArray:
		it := rawdoc.Iterate(v.Value)
		for {
			k, e, ok := it.Next()
			if !ok {
				return pos, nil
			}
			shown := values.ShellElement(string(k), e)
			if !values.IsNumber(e.Type) {
				return nil, mongoerr.New(mongoerr.BadValue, "Failed to parse bit position. Expected a number in: %s", shown)
			}
			if values.IsNaN(e) {
				return nil, mongoerr.New(mongoerr.BadValue, "bit positions cannot take a NaN: %s", shown)
			}
			f, _ := values.Float64(e)
			if f > math.MaxInt32 || f < math.MinInt32 {
				return nil, mongoerr.New(mongoerr.BadValue, "bit positions cannot be represented as a 32-bit signed integer: %s", shown)
			}
			if f != math.Trunc(f) {
				return nil, mongoerr.New(mongoerr.BadValue, "Failed to parse bit position. Expected an integer: %s", shown)
			}
			if f < 0 {
				return nil, mongoerr.New(mongoerr.BadValue, "Failed to parse bit position. Expected a non-negative number in: %s", shown)
			}
			pos = append(pos, uint32(f))
		}
	case values.IsNumber(v.Type):
		// a bitmask, read as parseIntegerElementToNonNegativeLong reads it
		n, reason := values.IntegerReason(v)
		if reason == "" && n < 0 {
			reason = "Expected a non-negative number in"
		}
		if reason != "" {
			return nil, mongoerr.New(mongoerr.FailedToParse, "%s: %s", reason, values.ShellElement(op, v))
		}
		for b := uint32(0); b < 63; b++ {
			if n&(1<<b) != 0 {
				pos = append(pos, b)
			}
		}
		return pos, nil
	case v.Type == bson.TypeBinary:
		for i, c := range binaryBytes(v) {
			for b := uint32(0); b < 8; b++ {
				if c&(1<<b) != 0 {
					pos = append(pos, uint32(i)*8+b)
				}
			}
		}
		return pos, nil
	}
	return nil, mongoerr.New(mongoerr.BadValue, "%s takes an Array, a number, or a BinData but received: %s", path, values.ShellElement(op, v))
}

// bitsMatch implements BitTestMatchExpression. Numbers are read as int64 in
// two's complement (bits above 63 equal the sign): a double must be an
// integer in range (NaN, a fraction or out of range never match), while a
// decimal is converted as BSONElement::numberLong converts it, rounded half
// to even, with NaN, infinities and values out of range read as
// math.MinInt64 (expr.NumberLong); BinData is read little-endian with
// missing bytes clear, from its stored bytes (binaryBytes). Other types
// never match.
func (n *Node) bitsMatch(v bson.RawValue) bool {
	var bit func(p uint32) bool
	switch {
	case values.IsNumber(v.Type):
		x, ok := values.Int64(v)
		if v.Type == bson.TypeDecimal128 {
			x, ok = expr.NumberLong(v), true
		}
		if !ok {
			return false
		}
		bit = func(p uint32) bool {
			if p >= 64 {
				return x < 0
			}
			return x&(1<<p) != 0
		}
	case v.Type == bson.TypeBinary:
		data := binaryBytes(v)
		bit = func(p uint32) bool {
			i := int(p / 8)
			return i < len(data) && data[i]&(1<<(p%8)) != 0
		}
	default:
		return false
	}
	want := n.Kind == KindBitsAllSet || n.Kind == KindBitsAnySet
	all := n.Kind == KindBitsAllSet || n.Kind == KindBitsAllClear
	for _, p := range n.bits {
		if bit(p) == want {
			if !all {
				return true
			}
		} else if all {
			return false
		}
	}
	return all
}

// binaryBytes returns a BinData value's bytes as stored, which are what
// MongoDB's bit tests read (BSONElement::binData): for the old binary
// subtype 2 they begin with its own 4-byte length, which the driver's
// accessors strip.
func binaryBytes(v bson.RawValue) []byte {
	if len(v.Value) < 5 {
		return nil
	}
	n := int(binary.LittleEndian.Uint32(v.Value))
	if n < 0 || n > len(v.Value)-5 {
		return nil
	}
	return v.Value[5 : 5+n]
}
