package keyenc

import (
	"encoding/binary"
	"math"
	"math/big"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// gen builds BSON values of every type from fuzz input. Choices draw on
// small pools of interesting values so that two generated values are often
// equal or adjacent, across numeric types too. Exhausted input reads zeros.
type gen struct{ b []byte }

func (g *gen) byte() byte {
	if len(g.b) == 0 {
		return 0
	}
	c := g.b[0]
	g.b = g.b[1:]
	return c
}

func (g *gen) u64() uint64 {
	var buf [8]byte
	n := copy(buf[:], g.b)
	g.b = g.b[n:]
	return binary.LittleEndian.Uint64(buf[:])
}

func pick[T any](g *gen, pool []T) T { return pool[int(g.byte())%len(pool)] }

var (
	genInts = []int64{
		0, 1, -1, 2, 3, 5, 10, 100, -100, 1 << 31, math.MaxInt32, math.MinInt32,
		1 << 53, 1<<53 + 1, -(1<<53 + 1), 1 << 62, math.MaxInt64, math.MaxInt64 - 1,
		math.MinInt64, math.MinInt64 + 1, 1e18, -1e18,
	}
	genFloats = []float64{
		0, math.Copysign(0, -1), 1, -1, 0.5, -0.5, 0.1, -0.1, 1.5, 2, 3, 0.3,
		1 << 53, 1<<53 + 2, 1 << 63, -(1 << 63), 1 << 64, 1e30, 1e300, -1e300,
		math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64,
		-math.SmallestNonzeroFloat64, 2.2250738585072014e-308, 1.0000000000000002,
		0.9999999999999999, 1e-300, 123.456, math.Inf(1), math.Inf(-1), math.NaN(),
	}
	genStrings = []string{"", "\x00", "\x00\x00", "\x01", "a", "a\x00", "a\x00b", "ab", "b", "\xff", "\xff\x00"}
	genKeys    = []string{"", "a", "b", "ab"}
	genSubtype = []byte{0, 1, 2, 5, 0x80}
)

// value returns a value of any type; missing only at the top level.
func (g *gen) value(depth int, top bool) bson.RawValue {
	switch k := g.byte() % 28; {
	case k < 10:
		return g.number()
	case k < 12:
		return str(pick(g, genStrings))
	case k == 12:
		return sym(pick(g, genStrings))
	case k == 13:
		return g.document(depth, false)
	case k == 14:
		return g.document(depth, true)
	case k == 15:
		return bin(pick(g, genSubtype), pick(g, genStrings))
	case k == 16:
		return oid(pick(g, []byte{0, 1, 0xff}))
	case k == 17:
		return boolean(g.byte()&1 == 1)
	case k == 18:
		return date(pick(g, genInts))
	case k == 19:
		return ts(uint32(pick(g, genInts)), uint32(pick(g, genInts)))
	case k == 20:
		return regex(pick(g, genKeys), pick(g, []string{"", "i", "im", "m"}))
	case k == 21:
		return dbptr(pick(g, genStrings), g.byte()%3)
	case k == 22:
		return code(pick(g, genStrings))
	case k == 23:
		return cws(pick(g, genStrings), g.document(depth, false))
	case k == 24:
		return minKey
	case k == 25:
		return maxKey
	case k == 26:
		return null
	case top:
		return missing
	}
	return undefined
}

func (g *gen) document(depth int, array bool) bson.RawValue {
	n := 0
	if depth < 3 {
		n = int(g.byte() % 4)
	}
	var kv []any
	for i := range n {
		key := strconv.Itoa(i)
		if !array {
			key = pick(g, genKeys)
		}
		kv = append(kv, key, g.value(depth+1, false))
	}
	d := doc(kv...)
	if array {
		d.Type = bson.TypeArray
	}
	return d
}

func (g *gen) number() bson.RawValue {
	switch g.byte() % 12 {
	case 0:
		return i32(int32(g.u64()))
	case 1:
		return i64(int64(g.u64()))
	case 2:
		return i64(pick(g, genInts))
	case 3:
		return i32(int32(pick(g, genInts)))
	case 4:
		return dbl(math.Float64frombits(g.u64()))
	case 5:
		return dbl(pick(g, genFloats))
	case 6:
		f := pick(g, genFloats)
		switch g.byte() % 3 {
		case 0:
			f = float64(pick(g, genInts))
		case 1:
			f = math.Nextafter(f, math.Inf(1))
		case 2:
			f = math.Nextafter(f, math.Inf(-1))
		}
		return dbl(f)
	case 7:
		return decRaw(g.u64(), g.u64())
	case 8:
		// An integer with z trailing zeros in the coefficient: equal to it.
		i := pick(g, genInts)
		z := int(g.byte() % 5)
		c := new(big.Int).Mul(big.NewInt(i), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(z)), nil))
		return decimal(c, -z)
	case 9:
		// m × 5^j × 10^-j = m / 2^j, equal to a double.
		m := int64(int8(g.byte()))
		j := int(g.byte() % 60)
		c := new(big.Int).Mul(big.NewInt(m), new(big.Int).Exp(big.NewInt(5), big.NewInt(int64(j)), nil))
		return decimal(c, -j)
	case 10:
		c := new(big.Int).SetUint64(g.u64())
		if g.byte()&1 == 1 {
			c.Lsh(c, uint(g.byte()%50))
		}
		if g.byte()&1 == 1 {
			c.Neg(c)
		}
		exp := int(int16(g.u64())) % 6200
		if g.byte()&1 == 1 {
			exp = int(int8(g.byte())) % 40
		}
		return decimal(c, exp)
	}
	// A 34-digit decimal at or next to an interesting double.
	f := pick(g, genFloats)
	if math.IsNaN(f) || math.IsInf(f, 0) || f == 0 {
		f = 1
	}
	c, exp := digits34(strconv.FormatFloat(f, 'e', 33, 64))
	return decimal(c.Add(c, big.NewInt(int64(g.byte()%3)-1)), exp)
}

// digits34 splits "d.ddd…e±x" (34 significant digits) into an integer
// coefficient and exponent.
func digits34(s string) (*big.Int, int) {
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	var mant []byte
	i := 0
	for ; s[i] != 'e'; i++ {
		if s[i] != '.' {
			mant = append(mant, s[i])
		}
	}
	e, _ := strconv.Atoi(s[i+1:])
	c, _ := new(big.Int).SetString(string(mant), 10)
	if neg {
		c.Neg(c)
	}
	return c, e - (len(mant) - 1)
}

// decimal builds the Decimal128 c × 10^exp, with exp clamped to the valid
// range and c reduced to 113 bits.
func decimal(c *big.Int, exp int) bson.RawValue {
	neg := c.Sign() < 0
	a := new(big.Int).Abs(c)
	if a.BitLen() > 113 {
		a.Rsh(a, uint(a.BitLen()-113))
	}
	exp = min(max(exp, -6176), 6111)
	var coef [16]byte
	a.FillBytes(coef[:])
	hi := uint64(exp+6176)<<49 | binary.BigEndian.Uint64(coef[:8])
	if neg {
		hi |= 1 << 63
	}
	return decRaw(hi, binary.BigEndian.Uint64(coef[8:]))
}
