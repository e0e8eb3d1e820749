package aggregate

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/values"
)

// quantileAcc is $percentile and $median: it keeps every numeric input as
// a double (the group's memory counts each) and answers with the discrete
// percentiles of expr.Quantiles.
type quantileAcc struct {
	q       *expr.Quantiles
	samples []float64
}

func (a *quantileAcc) add(_ bson.Raw, v bson.RawValue) error {
	a.samples = expr.Sample(a.samples, v)
	return nil
}

func (a *quantileAcc) result() bson.RawValue { return a.q.Result(a.samples) }

// state is the samples as an array of doubles.
func (a *quantileAcc) state() bson.RawValue {
	vals := make([]bson.RawValue, len(a.samples))
	for i, f := range a.samples {
		vals[i] = values.DoubleValue(f)
	}
	return buildArray(vals)
}

func (a *quantileAcc) merge(st bson.RawValue) error {
	for _, v := range arrayValues(st) {
		a.samples = expr.Sample(a.samples, v)
	}
	return nil
}
