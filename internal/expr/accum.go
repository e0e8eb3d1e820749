package expr

import (
	"math"
	"math/big"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/values"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// The expression forms of the accumulators $sum, $avg, $max, $min,
// $stdDevPop and $stdDevSamp: with a single operand that evaluates to an
// array they accumulate its elements, otherwise they accumulate their
// operands.

func init() {
	register(map[string]opCompiler{
		"$sum":        nary(0, -1, accumulated(Sum)),
		"$avg":        nary(0, -1, accumulated(Avg)),
		"$max":        extremeOp(true),
		"$min":        extremeOp(false),
		"$stdDevPop":  nary(0, -1, accumulated(func(v []bson.RawValue) bson.RawValue { return StdDev(v, false) })),
		"$stdDevSamp": nary(0, -1, accumulated(func(v []bson.RawValue) bson.RawValue { return StdDev(v, true) })),
	})
}

func accumulated(fn func([]bson.RawValue) bson.RawValue) naryFn {
	return func(args []bson.RawValue) (bson.RawValue, error) {
		if len(args) == 1 && args[0].Type == bson.TypeArray {
			return fn(elems(args[0])), nil
		}
		return fn(args), nil
	}
}

// Sum is $sum over vals: non-numeric values are ignored; the numbers
// add as MongoDB's $sum adds them (values.Sum); none sum to int 0.
func Sum(vals []bson.RawValue) bson.RawValue {
	var s values.Sum
	for _, v := range vals {
		s.Add(v)
	}
	return s.Result()
}

// Avg is $avg over vals: the mean of the numeric values as a double (a
// decimal when one is a decimal); null when there are none.
func Avg(vals []bson.RawValue) bson.RawValue {
	var s values.Sum
	n := 0
	for _, v := range vals {
		if s.Add(v) {
			n++
		}
	}
	if n == 0 {
		return nullValue
	}
	if total := s.Result(); total.Type == bson.TypeDecimal128 {
		return values.DecimalQuo(total, values.Int64Value(int64(n)))
	}
	return values.DoubleValue(s.Float() / float64(n))
}

// extremeOp is the expression $max (max true) or $min, under the scope's
// collation.
func extremeOp(max bool) opCompiler {
	return collated(func(coll *collation.Collator) opCompiler {
		return nary(0, -1, accumulated(func(v []bson.RawValue) bson.RawValue { return extreme(coll, v, max) }))
	})
}

// extreme is $max (max true) or $min over vals in MongoDB's order (strings
// by coll), ignoring null, undefined and missing values; null when nothing
// remains.
func extreme(coll *collation.Collator, vals []bson.RawValue, max bool) bson.RawValue {
	best := nullValue
	found := false
	for _, v := range vals {
		if isNullish(v) {
			continue
		}
		if c := coll.Compare(v, best); !found || (max && c > 0) || (!max && c < 0) {
			best, found = v, true
		}
	}
	return best
}

// StdDev is $stdDevPop (sample false) or $stdDevSamp over the numeric
// values of vals, as a double; null without values (or with fewer than two
// for the sample form).
func StdDev(vals []bson.RawValue, sample bool) bson.RawValue {
	var n float64
	mean, m2 := new(big.Float).SetPrec(bigPrec), new(big.Float).SetPrec(bigPrec)
	for _, v := range vals {
		if !isNumber(v) {
			continue
		}
		f := toFloat(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return values.DoubleValue(math.NaN())
		}
		// Welford's update in extended precision.
		n++
		x := new(big.Float).SetPrec(bigPrec).SetFloat64(f)
		delta := new(big.Float).SetPrec(bigPrec).Sub(x, mean)
		mean.Add(mean, new(big.Float).SetPrec(bigPrec).Quo(delta, big.NewFloat(n)))
		delta2 := new(big.Float).SetPrec(bigPrec).Sub(x, mean)
		m2.Add(m2, delta.Mul(delta, delta2))
	}
	div := n
	if sample {
		div = n - 1
	}
	if div <= 0 {
		return nullValue
	}
	variance, _ := new(big.Float).Quo(m2, big.NewFloat(div)).Float64()
	return values.DoubleValue(math.Sqrt(variance))
}
