package aggregate

import (
	"math"
	"math/bits"
	"slices"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// A granularity rounds $bucketAuto's boundaries to a series of preferred
// numbers (Renard, E or 1-2-5, repeated in every decade) or to powers of
// two. Round up gives the least series value above a number, round down
// the greatest below it; 0 rounds to itself. The callers pass only
// non-negative, non-NaN numbers. A Decimal128 rounds to a Decimal128,
// computed in decimal arithmetic as MongoDB's rounders compute it; other
// numbers round to doubles (a series) or to $pow's 2^n (POWERSOF2).
type granularity struct {
	name string
	// series is one decade of the preferred numbers, nil for POWERSOF2.
	series []float64
	// decimals is series as Decimal128 values (each converted as
	// MongoDB's Decimal128(double) converts it), made when a Decimal128
	// is first rounded.
	decimals []bson.RawValue
}

// preferredSeries are MongoDB's preferred number series, one decade each
// (the Renard and E series of ISO 3 and IEC 60063 as MongoDB lists them).
var preferredSeries = map[string][]float64{
	"R5":    {10, 16, 25, 40, 63},
	"R10":   {100, 125, 160, 200, 250, 315, 400, 500, 630, 800},
	"R20":   {100, 112, 125, 140, 160, 180, 200, 224, 250, 280, 315, 355, 400, 450, 500, 560, 630, 710, 800, 900},
	"R40":   {100, 106, 112, 118, 125, 132, 140, 150, 160, 170, 180, 190, 200, 212, 224, 236, 250, 265, 280, 300, 315, 355, 375, 400, 425, 450, 475, 500, 530, 560, 600, 630, 670, 710, 750, 800, 850, 900, 950},
	"R80":   {103, 109, 115, 122, 128, 136, 145, 155, 165, 175, 185, 195, 206, 218, 230, 243, 258, 272, 290, 307, 325, 345, 365, 387, 412, 437, 462, 487, 515, 545, 575, 615, 650, 690, 730, 775, 825, 875, 925, 975},
	"1-2-5": {10, 20, 50},
	"E6":    {10, 15, 22, 33, 47, 68},
	"E12":   {10, 12, 15, 18, 22, 27, 33, 39, 47, 56, 68, 82},
	"E24":   {10, 11, 12, 13, 15, 16, 18, 20, 22, 24, 27, 30, 33, 36, 39, 43, 47, 51, 56, 62, 68, 75, 82, 91},
	"E48": {100, 105, 110, 115, 121, 127, 133, 140, 147, 154, 162, 169, 178, 187, 196, 205, 215, 226, 237, 249, 261, 274, 287, 301,
		316, 332, 348, 365, 383, 402, 422, 442, 464, 487, 511, 536, 562, 590, 619, 649, 681, 715, 750, 787, 825, 866, 909, 953},
	"E96": {100, 102, 105, 107, 110, 113, 115, 118, 121, 124, 127, 130, 133, 137, 140, 143, 147, 150, 154, 158, 162, 165, 169, 174,
		178, 182, 187, 191, 196, 200, 205, 210, 215, 221, 226, 232, 237, 243, 249, 255, 261, 267, 274, 280, 287, 294, 301, 309,
		316, 324, 332, 340, 348, 357, 365, 374, 383, 392, 402, 412, 422, 432, 442, 453, 464, 475, 487, 499, 511, 523, 536, 549,
		562, 576, 590, 604, 619, 634, 649, 665, 681, 698, 715, 732, 750, 768, 787, 806, 825, 845, 866, 887, 909, 931, 953, 976},
	"E192": {100, 101, 102, 104, 105, 106, 107, 109, 110, 111, 113, 114, 115, 117, 118, 120, 121, 123, 124, 126, 127, 129, 130, 132,
		133, 135, 137, 138, 140, 142, 143, 145, 147, 149, 150, 152, 154, 156, 158, 160, 162, 164, 165, 167, 169, 172, 174, 176,
		178, 180, 182, 184, 187, 189, 191, 193, 196, 198, 200, 203, 205, 208, 210, 213, 215, 218, 221, 223, 226, 229, 232, 234,
		237, 240, 243, 246, 249, 252, 255, 258, 261, 264, 267, 271, 274, 277, 280, 284, 287, 291, 294, 298, 301, 305, 309, 312,
		316, 320, 324, 328, 332, 336, 340, 344, 348, 352, 357, 361, 365, 370, 374, 379, 383, 388, 392, 397, 402, 407, 412, 417,
		422, 427, 432, 437, 442, 448, 453, 459, 464, 470, 475, 481, 487, 493, 499, 505, 511, 517, 523, 530, 536, 542, 549, 556,
		562, 569, 576, 583, 590, 597, 604, 612, 619, 626, 634, 642, 649, 657, 665, 673, 681, 690, 698, 706, 715, 723, 732, 741,
		750, 759, 768, 777, 787, 796, 806, 816, 825, 835, 845, 856, 866, 876, 887, 898, 909, 920, 931, 942, 953, 965, 976, 988},
}

// parseGranularity reads $bucketAuto's granularity: a string (40261)
// naming a series or POWERSOF2 (40257).
func parseGranularity(v bson.RawValue) (*granularity, error) {
	name, ok := v.StringValueOK()
	if !ok {
		return nil, mongoerr.New(mongoerr.BucketAutoGranularityNotString, "The $bucketAuto 'granularity' field must be a string, but found type: %s", typeName(v))
	}
	if name == "POWERSOF2" {
		return &granularity{name: name}, nil
	}
	series, ok := preferredSeries[name]
	if !ok {
		return nil, mongoerr.New(mongoerr.GranularityUnknown, "Unknown rounding granularity '%s'", name)
	}
	return &granularity{name: name, series: series}, nil
}

// checkKey checks a groupBy value $bucketAuto rounds: a number
// (40258), not NaN (40259), not negative (40260).
func (g *granularity) checkKey(v bson.RawValue) error {
	if !values.IsNumber(v.Type) {
		return mongoerr.New(mongoerr.BucketAutoGranularityNotNumeric, "$bucketAuto can specify a 'granularity' with numeric boundaries only, but found a value with type: %s", typeName(v))
	}
	f, _ := values.Float64(v)
	switch {
	case math.IsNaN(f):
		return mongoerr.New(mongoerr.BucketAutoGranularityNaN, "$bucketAuto can specify a 'granularity' with numeric boundaries only, but found a NaN")
	case f < 0:
		return mongoerr.New(mongoerr.BucketAutoGranularityNegative, "$bucketAuto can specify a 'granularity' with non-negative numbers only, but found a negative number")
	case math.IsInf(f, 1) && (v.Type != bson.TypeDecimal128 || v.Decimal128().IsInf() != 0):
		// MongoDB's rounders never return for an infinity (a Decimal128
		// past the doubles is finite, and rounds in decimal arithmetic).
		return mongoerr.New(mongoerr.BadValue, "$bucketAuto cannot round Infinity to a 'granularity'")
	}
	return nil
}

// roundUp is the least value of the granularity above v (v itself when
// it is 0).
func (g *granularity) roundUp(v bson.RawValue) bson.RawValue {
	f, _ := values.Float64(v)
	if f == 0 {
		return v
	}
	if g.series == nil {
		switch v.Type {
		case bson.TypeDouble:
			return powerOfTwo(int(math.Floor(math.Log2(f)) + 1))
		case bson.TypeDecimal128:
			return decimalPowerOfTwo(int64(math.Floor(decimalLog2(v)) + 1))
		}
		return powerOfTwo(bits.Len64(uint64(toInt64(v))))
	}
	if v.Type == bson.TypeDecimal128 {
		return g.preferredUpDecimal(v)
	}
	return values.DoubleValue(g.preferredUp(f))
}

// roundDown is the greatest value of the granularity below v (v itself
// when it is 0).
func (g *granularity) roundDown(v bson.RawValue) bson.RawValue {
	f, _ := values.Float64(v)
	if f == 0 {
		return v
	}
	if g.series == nil {
		switch v.Type {
		case bson.TypeDouble:
			return powerOfTwo(int(math.Ceil(math.Log2(f)) - 1))
		case bson.TypeDecimal128:
			return decimalPowerOfTwo(int64(math.Ceil(decimalLog2(v)) - 1))
		}
		n := uint64(toInt64(v))
		if n&(n-1) == 0 {
			return powerOfTwo(bits.Len64(n) - 2)
		}
		return powerOfTwo(bits.Len64(n) - 1)
	}
	if v.Type == bson.TypeDecimal128 {
		return g.preferredDownDecimal(v)
	}
	return values.DoubleValue(g.preferredDown(f))
}

func toInt64(v bson.RawValue) int64 {
	n, _ := values.Int64(v)
	return n
}

// preferredUp scales the series by a power of ten (computed as MongoDB
// computes it, by repeated multiplication, so that the results are the
// same doubles) until f lies within it, then takes the first value above
// f; a value just under the scaled series rounds up to the previous
// decade's first value.
func (g *granularity) preferredUp(f float64) float64 {
	first, last := g.series[0], g.series[len(g.series)-1]
	mult := 1.0
	for f >= last*mult {
		mult *= 10
	}
	for f < first*mult {
		prev := first * mult
		mult /= 10
		if f >= last*mult {
			return prev
		}
	}
	i, _ := slices.BinarySearchFunc(g.series, f, func(s, f float64) int {
		if f < s*mult {
			return 1
		}
		return -1
	})
	return g.series[min(i, len(g.series)-1)] * mult
}

// preferredDown mirrors preferredUp: the last scaled value below f.
func (g *granularity) preferredDown(f float64) float64 {
	first, last := g.series[0], g.series[len(g.series)-1]
	mult := 1.0
	for f <= first*mult && mult > 0 {
		mult /= 10
	}
	if mult == 0 {
		// Below the smallest scaled series, where MongoDB's loop does not end.
		return 0
	}
	for f > last*mult {
		prev := last * mult
		mult *= 10
		if f <= first*mult {
			return prev
		}
	}
	i, _ := slices.BinarySearchFunc(g.series, f, func(s, f float64) int {
		if s*mult < f {
			return -1
		}
		return 1
	})
	return g.series[i-1] * mult
}

// powerOfTwo is 2^exp typed as MongoDB's $pow of two integers gives it:
// an int or a long while it fits, a double past a long or for a negative
// exponent.
func powerOfTwo(exp int) bson.RawValue {
	switch {
	case exp < 0 || exp > 62:
		return values.DoubleValue(math.Ldexp(1, exp))
	case exp <= 30:
		return values.Int32Value(int32(1) << exp)
	}
	return values.Int64Value(int64(1) << exp)
}

// decimalOne and decimalTen are MongoDB's Decimal128(1) and Decimal128(10),
// the scale the decimal rounders start from and step by.
var (
	decimalOne = values.DecimalValue(bson.NewDecimal128(0x3040000000000000, 1))
	decimalTen = values.DecimalValue(bson.NewDecimal128(0x3040000000000000, 10))
)

// scaledDecimal is the series' i-th value as a Decimal128 times mult.
func (g *granularity) scaledDecimal(i int, mult bson.RawValue) bson.RawValue {
	if g.decimals == nil {
		g.decimals = make([]bson.RawValue, len(g.series))
		for j, f := range g.series {
			g.decimals[j] = values.DecimalValue(values.DecimalFromFloat(f))
		}
	}
	r, _ := values.Multiply(g.decimals[i], mult)
	return r
}

// preferredUpDecimal is preferredUp in Decimal128 arithmetic: the scale
// grows by multiplying by 10 and shrinks by dividing by 10, and the result
// is a series value times the scale, all decimal products and quotients
// (GranularityRounderPreferredNumbers::roundUp).
func (g *granularity) preferredUpDecimal(v bson.RawValue) bson.RawValue {
	last := len(g.series) - 1
	mult := decimalOne
	for values.Compare(v, g.scaledDecimal(last, mult)) >= 0 {
		mult, _ = values.Multiply(mult, decimalTen)
	}
	for values.Compare(v, g.scaledDecimal(0, mult)) < 0 {
		prev := g.scaledDecimal(0, mult)
		mult = values.DecimalQuo(mult, decimalTen)
		if values.Compare(v, g.scaledDecimal(last, mult)) >= 0 {
			return prev
		}
	}
	i := 0
	for i < last && values.Compare(v, g.scaledDecimal(i, mult)) >= 0 {
		i++
	}
	return g.scaledDecimal(i, mult)
}

// preferredDownDecimal mirrors preferredUpDecimal: the last scaled value
// below v (GranularityRounderPreferredNumbers::roundDown).
func (g *granularity) preferredDownDecimal(v bson.RawValue) bson.RawValue {
	last := len(g.series) - 1
	mult := decimalOne
	for values.Compare(v, g.scaledDecimal(0, mult)) <= 0 {
		mult = values.DecimalQuo(mult, decimalTen)
	}
	for values.Compare(v, g.scaledDecimal(last, mult)) > 0 {
		prev := g.scaledDecimal(last, mult)
		mult, _ = values.Multiply(mult, decimalTen)
		if values.Compare(v, g.scaledDecimal(0, mult)) <= 0 {
			return prev
		}
	}
	i := 1
	for i < last && values.Compare(g.scaledDecimal(i, mult), v) < 0 {
		i++
	}
	return g.scaledDecimal(i-1, mult)
}

// decimalLog2 is log2 of a positive Decimal128 as a double, as MongoDB's
// powers-of-two rounder takes it (Decimal128::logarithm(2), then
// toDouble).
func decimalLog2(v bson.RawValue) float64 {
	f, _ := values.Float64(values.DecimalLog(v, values.Int32Value(2)))
	return f
}

// decimalPowerOfTwo is 2^exp for a Decimal128 rounded to POWERSOF2: $pow of
// the int 2 and the Decimal128 exp, a Decimal128.
func decimalPowerOfTwo(exp int64) bson.RawValue {
	d, _ := bson.ParseDecimal128(strconv.FormatInt(exp, 10))
	r, _ := expr.Pow(values.Int32Value(2), values.DecimalValue(d))
	return r
}
