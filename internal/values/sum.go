package values

import (
	"math"
	"math/big"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Sum adds numbers as MongoDB's $sum (and $avg) do: the result has the
// widest type summed (int, long, double, decimal), integers are summed
// exactly, so that a sum that overflowed on the way but fits at the end
// keeps its type (an int sum past int32 is a long, a long sum past int64 a
// double), doubles are summed with the rounding error of each addition
// kept (a double-double sum: a hundred 0.1 make 10, not
// 9.99999999999998), and decimals are summed apart, the other numbers
// converted exactly to decimal at the end. The zero value is an empty sum.
type Sum struct {
	widest  bson.Type
	n       int64    // the integers' sum, while it fits
	big     *big.Int // the integers' sum once it overflowed int64
	hi, lo  float64  // the finite doubles' double-double sum
	special float64  // the infinities and NaNs summed
	dec     decimal  // the decimals' sum, when decimals were added
}

// Add adds v when it is a number; it reports whether it was one.
func (s *Sum) Add(v bson.RawValue) bool {
	if !IsNumber(v.Type) {
		return false
	}
	if s.widest == 0 || typeRank(v.Type) > typeRank(s.widest) {
		s.widest = v.Type
	}
	switch v.Type {
	case bson.TypeInt32, bson.TypeInt64:
		s.addInt(intValue(v))
	case bson.TypeDouble:
		s.addFloat(v.Double())
	case bson.TypeDecimal128:
		if s.dec.coef == nil && !s.dec.nan && s.dec.inf == 0 {
			s.dec = decimal{coef: new(big.Int)}
		}
		s.dec = toDecimal(DecimalValue(decimalArith(s.dec, toDecimal(v), false)))
	}
	return true
}

func typeRank(t bson.Type) int {
	switch t {
	case bson.TypeInt32:
		return 1
	case bson.TypeInt64:
		return 2
	case bson.TypeDouble:
		return 3
	}
	return 4
}

func (s *Sum) addInt(x int64) {
	if s.big != nil {
		s.big.Add(s.big, big.NewInt(x))
		return
	}
	r := s.n + x
	if (s.n >= 0) == (x >= 0) && (r >= 0) != (x >= 0) {
		s.big = new(big.Int).Add(big.NewInt(s.n), big.NewInt(x))
		return
	}
	s.n = r
}

func (s *Sum) addFloat(x float64) {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		s.special += x
		return
	}
	s.hi, s.lo = twoSum(s.hi, s.lo, x)
}

// twoSum adds x to the double-double hi+lo, keeping the rounding error of
// the addition in lo.
func twoSum(hi, lo, x float64) (float64, float64) {
	t := hi + x
	if math.IsInf(t, 0) {
		return t, lo // overflow: the error term is meaningless
	}
	var e float64
	if math.Abs(hi) >= math.Abs(x) {
		e = (hi - t) + x
	} else {
		e = (x - t) + hi
	}
	return t, lo + e
}

// integer is the integers' exact sum.
func (s *Sum) integer() *big.Int {
	if s.big != nil {
		return s.big
	}
	return big.NewInt(s.n)
}

// nonDecimal is the sum of the integers and doubles as a double-double.
func (s *Sum) nonDecimal() (float64, float64) {
	i := s.integer()
	ih, _ := new(big.Float).SetInt(i).Float64()
	rest, _ := new(big.Float).Sub(new(big.Float).SetInt(i), big.NewFloat(ih)).Float64()
	hi, lo := twoSum(s.hi, s.lo, ih)
	return twoSum(hi, lo, rest)
}

// Empty reports whether no number was added.
func (s *Sum) Empty() bool { return s.widest == 0 }

// Result is the sum: int 0 when empty.
func (s *Sum) Result() bson.RawValue {
	switch s.widest {
	case 0:
		return Int32Value(0)
	case bson.TypeInt32, bson.TypeInt64:
		i := s.integer()
		switch {
		case s.widest == bson.TypeInt32 && i.IsInt64() && i.Int64() >= math.MinInt32 && i.Int64() <= math.MaxInt32:
			return Int32Value(int32(i.Int64()))
		case i.IsInt64():
			return Int64Value(i.Int64())
		}
		f, _ := new(big.Float).SetInt(i).Float64()
		return DoubleValue(f)
	case bson.TypeDouble:
		return DoubleValue(s.Float())
	}
	hi, lo := s.nonDecimal()
	total := s.dec
	for _, f := range []float64{s.special, hi, lo} {
		if f != 0 || math.IsNaN(f) {
			total = toDecimal(DecimalValue(decimalArith(total, exactDecimal(f), false)))
		}
	}
	return DecimalValue(decimalArith(total, decimal{coef: new(big.Int)}, false))
}

// Float is the non-decimal sum as a double (the mean's numerator).
func (s *Sum) Float() float64 {
	if s.special != 0 || math.IsNaN(s.special) {
		return s.special
	}
	hi, lo := s.nonDecimal()
	return hi + lo
}

// exactDecimal is DecimalFromFloatExact as an operand.
func exactDecimal(f float64) decimal {
	return toDecimal(DecimalValue(DecimalFromFloatExact(f)))
}

// DecimalFromFloatExact converts a double as MongoDB's Decimal128(double,
// kRoundTo34Digits) does (a sum's double part, $round and $trunc of a
// double): its exact value rounded to 34 digits, half to even, without
// trailing zeros (2.5 is 2.5, 2^63 is 9223372036854775808, 0.29 is
// 0.2899999999999999800159855567471823). NaN and the infinities convert
// as they are.
func DecimalFromFloatExact(f float64) bson.Decimal128 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return DecimalFromFloat(f)
	}
	text := new(big.Float).SetPrec(200).SetFloat64(f).Text('e', 33)
	mant, exp, _ := strings.Cut(text, "e")
	if strings.Contains(mant, ".") {
		mant = strings.TrimRight(strings.TrimRight(mant, "0"), ".")
	}
	d, err := bson.ParseDecimal128(mant + "E" + exp)
	if err != nil {
		return decimalNaN
	}
	return d
}
