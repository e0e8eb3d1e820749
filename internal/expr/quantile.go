package expr

import (
	"math"
	"slices"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/values"
)

// Quantiles is a compiled $percentile or $median argument, shared by the
// expression and the accumulator of the same names. MongoDB 7.0 accepts
// only method "approximate"; Folio answers it with the discrete
// percentile (the sample of 0-based rank ceil(n*p)-1, n-1 for p = 1), the
// value MongoDB's t-digest returns while its centroids are single points
// and the one its expressions always return. Non-numeric inputs and NaN
// are ignored; infinities count.
type Quantiles struct {
	Input  *Expr
	ps     []float64
	median bool
}

// CompileQuantiles reads the argument of op ("$percentile" or "$median"):
// {input, p, method} or {input, method}. accumulator selects the codes
// MongoDB raises for a non-object argument of the accumulator form.
func CompileQuantiles(op string, v bson.RawValue, s *Scope, accumulator bool) (*Quantiles, error) {
	return compileQuantiles(op, v, accumulator, func(v bson.RawValue) (*Expr, error) { return Compile(v, s) })
}

// compileQuantiles reads the argument, compiling its expressions with
// compile (the enclosing expression's compiler, or a fresh one for an
// accumulator).
func compileQuantiles(op string, v bson.RawValue, accumulator bool, compile func(bson.RawValue) (*Expr, error)) (*Quantiles, error) {
	q := &Quantiles{median: op == "$median"}
	if v.Type != bson.TypeEmbeddedDocument {
		code := map[[2]bool]mongoerr.Code{
			{false, true}:  mongoerr.PercentileAccSpecNotObject,
			{false, false}: mongoerr.PercentileExprSpecNotObject,
			{true, true}:   mongoerr.MedianAccSpecNotObject,
			{true, false}:  mongoerr.MedianExprSpecNotObject,
		}[[2]bool{q.median, accumulator}]
		return nil, mongoerr.New(code, "specification must be an object; found %s: %s", op, v)
	}
	var input, p, method bson.RawValue
	it := rawdoc.Iterate(v.Value)
	for {
		kb, ev, ok := it.Next()
		if !ok {
			break
		}
		var dst *bson.RawValue
		switch string(kb) {
		case "input":
			dst = &input
		case "method":
			dst = &method
		case "p":
			if !q.median {
				dst = &p
			}
		}
		if dst == nil {
			return nil, mongoerr.New(mongoerr.IDLUnknownField, "BSON field '%s.%s' is an unknown field.", op, kb)
		}
		if dst.Type != 0 {
			return nil, mongoerr.New(mongoerr.IDLDuplicateField, "BSON field '%s.%s' is a duplicate field", op, kb)
		}
		*dst = ev
		if dst == &method {
			if ev.Type != bson.TypeString {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.method' is the wrong type '%s', expected type 'string'", op, typeName(ev))
			}
			if ev.StringValue() != "approximate" {
				return nil, mongoerr.New(mongoerr.BadValue, "Currently only 'approximate' can be used as percentile 'method'.")
			}
		}
	}
	for _, f := range []struct {
		name string
		v    bson.RawValue
	}{{"input", input}, {"p", p}, {"method", method}} {
		if f.v.Type == 0 && (f.name != "p" || !q.median) {
			return nil, mongoerr.MissingField(op + "." + f.name)
		}
	}
	var err error
	if q.Input, err = compile(input); err != nil {
		return nil, err
	}
	if q.median {
		q.ps = []float64{0.5}
		return q, nil
	}
	if q.ps, err = compilePs(p, compile); err != nil {
		return nil, err
	}
	return q, nil
}

// compilePs reads $percentile's p: a constant, non-empty array of numbers
// in [0, 1]. As MongoDB's parseP words its failures, a p that is not a
// non-empty array (7750301) or an element that is not a number (7750302)
// is shown as Value::toString does, an element out of range (7750303) as
// the double it was coerced to.
func compilePs(p bson.RawValue, compile func(bson.RawValue) (*Expr, error)) ([]float64, error) {
	e, err := compile(p)
	if err != nil {
		return nil, err
	}
	if !e.constant {
		return nil, mongoerr.New(mongoerr.PercentilePNotConstant, "The $percentile 'p' field must be an array of constant values, but found value: %s.", p)
	}
	const msg = "The $percentile 'p' field must be an array of numbers from [0.0, 1.0], but found: %s"
	if e.value.Type != bson.TypeArray {
		return nil, mongoerr.New(mongoerr.PercentilePNotArray, msg, values.ValueString(e.value))
	}
	var ps []float64
	it := rawdoc.Iterate(e.value.Value)
	for {
		_, ev, ok := it.Next()
		if !ok {
			break
		}
		f, num := values.Float64(ev)
		switch {
		case !num:
			return nil, mongoerr.New(mongoerr.PercentilePNotNumber, msg, values.ValueString(ev))
		case !(f >= 0 && f <= 1):
			return nil, mongoerr.New(mongoerr.PercentilePOutOfRange, msg, values.StreamDouble(f))
		}
		ps = append(ps, f)
	}
	if len(ps) == 0 {
		return nil, mongoerr.New(mongoerr.PercentilePNotArray, msg, values.ValueString(e.value))
	}
	return ps, nil
}

// Sample appends v to samples when it is a number other than NaN.
func Sample(samples []float64, v bson.RawValue) []float64 {
	if f, ok := values.Float64(v); ok && !math.IsNaN(f) {
		samples = append(samples, f)
	}
	return samples
}

// Result is the answer for samples (reordered in place): $median's double,
// or $percentile's array of doubles; null, or an array of nulls, when
// there are no samples.
func (q *Quantiles) Result(samples []float64) bson.RawValue {
	if !slices.IsSorted(samples) {
		slices.Sort(samples)
	}
	if q.median {
		if len(samples) == 0 {
			return nullValue
		}
		return values.DoubleValue(discretePercentile(samples, q.ps[0]))
	}
	idx, dst := bsoncore.AppendArrayStart(nil)
	var buf [20]byte
	for i, p := range q.ps {
		key := string(strconv.AppendInt(buf[:0], int64(i), 10))
		if len(samples) == 0 {
			dst = bsoncore.AppendNullElement(dst, key)
		} else {
			dst = bsoncore.AppendDoubleElement(dst, key, discretePercentile(samples, p))
		}
	}
	dst, _ = bsoncore.AppendArrayEnd(dst, idx)
	return bson.RawValue{Type: bson.TypeArray, Value: dst}
}

// discretePercentile is the sample of 0-based rank ceil(n*p)-1 (n-1 for p
// at least 1, 0 at most) of the sorted, non-empty samples.
func discretePercentile(sorted []float64, p float64) float64 {
	n := len(sorted)
	if p >= 1 {
		return sorted[n-1]
	}
	return sorted[max(0, int(math.Ceil(float64(n)*p))-1)]
}

// compileQuantileExpr is the $percentile and $median expressions: over an
// array, the quantiles of its numbers; over a number, that number for
// every p; otherwise null (or nulls).
func compileQuantileExpr(c *compiler, name string, v bson.RawValue, s *Scope) (*Expr, error) {
	q, err := compileQuantiles(name, v, false, func(v bson.RawValue) (*Expr, error) { return c.compile(v, s) })
	if err != nil {
		return nil, err
	}
	return c.fold([]*Expr{q.Input}, func(st *state) (bson.RawValue, error) {
		in, err := q.Input.eval(st)
		if err != nil {
			return missing, err
		}
		var samples []float64
		switch {
		case values.IsNumber(in.Type):
			f, _ := values.Float64(in)
			samples = []float64{f}
		case in.Type == bson.TypeArray:
			it := rawdoc.Iterate(in.Value)
			for {
				_, ev, ok := it.Next()
				if !ok {
					break
				}
				samples = Sample(samples, ev)
			}
		}
		return q.Result(samples), nil
	})
}

func init() {
	register(map[string]opCompiler{
		"$median":     compileQuantileExpr,
		"$percentile": compileQuantileExpr,
	})
}
