package aggregate

import (
	"math"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// windowFunc computes one output field over a partition: out[i] is the
// value of document i.
type windowFunc interface {
	compute(p *partition, out []bson.RawValue) error
}

// windowFuncNames are the window functions of MongoDB 7.0.
var windowFuncNames = map[string]bool{
	"$sum": true, "$avg": true, "$min": true, "$max": true, "$count": true, "$push": true,
	"$addToSet": true, "$first": true, "$last": true, "$stdDevPop": true, "$stdDevSamp": true,
	"$firstN": true, "$lastN": true, "$minN": true, "$maxN": true, "$topN": true, "$bottomN": true,
	"$top": true, "$bottom": true, "$median": true, "$percentile": true, "$covariancePop": true,
	"$covarianceSamp": true, "$shift": true, "$derivative": true, "$integral": true,
	"$expMovingAvg": true, "$locf": true, "$linearFill": true, "$rank": true, "$denseRank": true,
	"$documentNumber": true,
}

// otherWindowArg refuses a field key beside a window function's own and
// its window, as the parser MongoDB chose by the function op words it
// (window_function_expression.h and .cpp): the parsers of the N functions,
// the quantiles, $first, $last, $derivative and $integral name the function
// and the field; $expMovingAvg takes one field; the generic parser of the
// accumulators ($sum, $push...) and of $locf and $linearFill, and those of
// $count and $shift, refuse a second function ("two", "multiple" for $count
// and $shift) apart from an unknown argument.
func otherWindowArg(op, key string) error {
	switch op {
	case "$first", "$last", "$firstN", "$lastN", "$minN", "$maxN", "$topN", "$bottomN", "$top",
		"$bottom", "$median", "$percentile", "$derivative", "$integral":
		return mongoerr.New(mongoerr.FailedToParse, "%s got unexpected argument: %s", op, key)
	case "$expMovingAvg":
		return mongoerr.New(mongoerr.FailedToParse, "$expMovingAvg must have exactly one argument that is an object")
	}
	switch {
	case windowFuncNames[key] && (op == "$count" || op == "$shift"):
		return mongoerr.New(mongoerr.FailedToParse, "Cannot specify multiple functions in window function spec")
	case windowFuncNames[key]:
		return mongoerr.New(mongoerr.FailedToParse, "Cannot specify two functions in window function spec")
	}
	return mongoerr.New(mongoerr.FailedToParse, "Window function found an unknown argument: %s", key)
}

// parseWindowFunc reads {<function>: <args>, window: {...}}.
func (p *parser) parseWindowFunc(s *windowStage, name string, v bson.RawValue) (windowFunc, error) {
	if v.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.FailedToParse, "The field '%s' must be an object", name)
	}
	// As MongoDB's window_function::Expression::parse, the function is the
	// first $-prefixed field; the other fields are its window or unknown.
	var op string
	var arg, win bson.RawValue
	fs := fieldsOf(v.Value)
	for _, f := range fs {
		if strings.HasPrefix(f.key, "$") {
			op, arg = f.key, f.val
			break
		}
	}
	if op == "" {
		msg := "Expected a $-prefixed window function"
		if len(fs) > 0 && fs[0].key != "" {
			msg += ", " + fs[0].key
		}
		return nil, mongoerr.New(mongoerr.FailedToParse, "%s", msg)
	}
	if !windowFuncNames[op] {
		return nil, mongoerr.New(mongoerr.FailedToParse, "Unrecognized window function, %s", op)
	}
	if isRankOp(op) {
		return parseRank(s, op, arg, len(fs))
	}
	for _, f := range fs {
		switch f.key {
		case op:
		case "window":
			win = f.val
		default:
			return nil, otherWindowArg(op, f.key)
		}
	}
	// $locf and $linearFill take no window: MongoDB refuses one without
	// reading it (ExpressionFromLeftUnboundedWindowFunction,
	// ExpressionLinearFill).
	// The window is read by the functions that take one, after the checks
	// MongoDB's parser of each makes first.
	var bounds windowBounds
	readWindow := func() error {
		if win.Type == 0 {
			return nil
		}
		var err error
		bounds, err = p.parseWindow(s, win)
		return err
	}
	noWindow := func() error {
		if win.Type != 0 {
			return mongoerr.New(mongoerr.FailedToParse, "%s does not accept a 'window' field", op)
		}
		return nil
	}
	needSort := func() error {
		if s.sort == nil {
			return mongoerr.New(mongoerr.FailedToParse, "%s requires a sortBy", op)
		}
		if s.sortField == "" {
			return mongoerr.New(mongoerr.FailedToParse, "%s requires a non-compound sortBy", op)
		}
		return nil
	}
	switch op {
	case "$sum", "$avg", "$min", "$max", "$count", "$push", "$addToSet", "$first", "$last",
		"$stdDevPop", "$stdDevSamp", "$firstN", "$lastN", "$minN", "$maxN", "$topN", "$bottomN",
		"$top", "$bottom", "$median", "$percentile":
		// The window function $count takes only {} and words its refusal
		// as FailedToParse, when its field comes before a window's
		// failure (parseCountWindowFunction reads the fields in order).
		var countErr error
		if op == "$count" && (arg.Type != bson.TypeEmbeddedDocument || len(fieldsOf(arg.Value)) != 0) {
			countErr = mongoerr.New(mongoerr.FailedToParse, "$count only accepts an empty object as input")
			for _, f := range fs {
				if f.key == op {
					return nil, countErr
				}
				if f.key == "window" {
					break
				}
			}
		}
		if err := readWindow(); err != nil {
			return nil, err
		}
		if countErr != nil {
			return nil, countErr
		}
		spec, err := p.parseAccumulator("w", op, arg)
		if err != nil {
			return nil, err
		}
		return &accWindow{spec: spec, win: bounds}, nil
	case "$covariancePop", "$covarianceSamp":
		if err := readWindow(); err != nil {
			return nil, err
		}
		pair, err := expr.Compile(arg, p.scope)
		if err != nil {
			return nil, err
		}
		return &covarianceWindow{pair: pair, sample: op == "$covarianceSamp", win: bounds}, nil
	case "$shift":
		return p.parseShift(s, arg, win)
	case "$derivative", "$integral":
		if err := needSort(); err != nil {
			return nil, err
		}
		if err := readWindow(); err != nil {
			return nil, err
		}
		if op == "$derivative" && win.Type == 0 {
			return nil, mongoerr.New(mongoerr.FailedToParse, "$derivative requires explicit window bounds")
		}
		args, err := namedArgs(arg, op, "input", "unit")
		if err != nil {
			return nil, err
		}
		if args["input"].Type == 0 {
			return nil, mongoerr.New(mongoerr.FailedToParse, "%s requires an 'input' expression", op)
		}
		input, err := expr.Compile(args["input"], p.scope)
		if err != nil {
			return nil, err
		}
		var unit time.Duration
		if u := args["unit"]; u.Type != 0 {
			if unit, err = parseRateUnit(u); err != nil {
				return nil, err
			}
		}
		return &rateWindow{integral: op == "$integral", input: input, unit: unit, win: bounds}, nil
	case "$expMovingAvg":
		if err := noWindow(); err != nil {
			return nil, err
		}
		if s.sort == nil {
			return nil, mongoerr.New(mongoerr.FailedToParse, "$expMovingAvg requires an explicit 'sortBy'")
		}
		return p.parseExpMovingAvg(arg)
	case "$locf", "$linearFill":
		if win.Type != 0 {
			return nil, mongoerr.New(mongoerr.FailedToParse, "'window' field is not allowed in %s", op)
		}
		// $linearFill interpolates along the one field of the sort.
		if op == "$linearFill" && (s.sort == nil || s.sortField == "") {
			return nil, mongoerr.New(mongoerr.LinearFillNeedsSingleSort, "%s must be specified with a top level sortBy expression with exactly one element", op)
		}
		input, err := expr.Compile(arg, p.scope)
		if err != nil {
			return nil, err
		}
		return &fillWindow{linear: op == "$linearFill", input: input}, nil
	}
	return nil, mongoerr.New(mongoerr.FailedToParse, "Unrecognized window function, %s", op)
}

// fixedUnits are the units of $derivative and $integral.
var fixedUnits = map[string]time.Duration{
	"week": 7 * 24 * time.Hour, "day": 24 * time.Hour, "hour": time.Hour,
	"minute": time.Minute, "second": time.Second, "millisecond": time.Millisecond,
}

// parseRateUnit reads the unit of $derivative and $integral: a string
// naming a time unit, week or smaller; month, quarter and year, whose
// length varies, fail with 5490710, as in MongoDB.
func parseRateUnit(u bson.RawValue) (time.Duration, error) {
	if u.Type != bson.TypeString {
		return 0, mongoerr.New(mongoerr.FailedToParse, "'unit' must be a string, but got %s", typeName(u))
	}
	switch name := u.StringValue(); name {
	case "year", "quarter", "month":
		return 0, mongoerr.New(mongoerr.WindowUnitTooLarge, "unit must be 'week' or smaller")
	default:
		if d, ok := fixedUnits[name]; ok {
			return d, nil
		}
		return 0, mongoerr.New(mongoerr.FailedToParse, "unknown time unit value: %s", name)
	}
}

// isRankOp reports whether op is one of the rank window functions.
func isRankOp(op string) bool {
	return op == "$rank" || op == "$denseRank" || op == "$documentNumber"
}

// parseRank reads $rank, $denseRank and $documentNumber, whose spec (of
// nFields fields) is the function alone, as MongoDB checks it: no window
// nor other field (5371601, before the window is read), an argument of {}
// (5371603), a sortBy of one field (5371602).
func parseRank(s *windowStage, op string, arg bson.RawValue, nFields int) (windowFunc, error) {
	if nFields != 1 {
		return nil, mongoerr.New(mongoerr.WindowRankTakesNoWindow, "Rank style window functions take no other arguments")
	}
	if arg.Type != bson.TypeEmbeddedDocument || len(fieldsOf(arg.Value)) != 0 {
		return nil, mongoerr.New(mongoerr.WindowRankArgNotEmpty, "%s must be specified with '{}' as the value", op)
	}
	if s.sortField == "" {
		return nil, mongoerr.New(mongoerr.WindowRankNeedsOneSortField, "%s must be specified with a top level sortBy expression with exactly one element", op)
	}
	return &rankWindow{op: op}, nil
}

// namedArgs reads an object of arguments, refusing others.
func namedArgs(arg bson.RawValue, op string, allowed ...string) (map[string]bson.RawValue, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.FailedToParse, "Argument to %s must be an object", op)
	}
	out := map[string]bson.RawValue{}
outer:
	for _, f := range fieldsOf(arg.Value) {
		for _, a := range allowed {
			if f.key == a {
				out[a] = f.val
				continue outer
			}
		}
		return nil, mongoerr.New(mongoerr.FailedToParse, "%s got unexpected argument: %s", op, f.key)
	}
	return out, nil
}

// accWindow is an accumulator over a window. A window that only grows
// from one document to the next (a cumulative one) keeps its accumulator.
type accWindow struct {
	spec *accSpec
	win  windowBounds
}

func (a *accWindow) compute(p *partition, out []bson.RawValue) error {
	var acc accumulator
	prevLo, prevHi := -1, -2
	for i := range out {
		lo, hi, ok, err := p.endpoints(a.win, i)
		if err != nil {
			return err
		}
		if !ok {
			lo, hi = 0, -1
		}
		switch {
		case acc != nil && lo == prevLo && hi >= prevHi:
			// grows: add the new documents below
		default:
			if acc, err = a.spec.newAccumulator(null, p.rt); err != nil {
				return err
			}
			if a.win.removable() {
				forRemovableWindow(acc)
			}
			prevHi = lo - 1
		}
		for j := prevHi + 1; j <= hi; j++ {
			d, err := p.doc(j)
			if err != nil {
				return err
			}
			var v bson.RawValue
			if a.spec.arg != nil {
				if v, err = a.spec.arg.Eval(p.rt.ectx, d); err != nil {
					return err
				}
			}
			if err := acc.add(d, p.own(v)); err != nil {
				return err
			}
		}
		prevLo, prevHi = lo, hi
		res := acc.result()
		if a.win.removable() {
			switch x := acc.(type) {
			case *stdDevAcc:
				res = x.windowResult()
			case *sumAcc:
				res = removableSum(res)
			case *addToSetAcc:
				res = x.sortedResult()
			}
		}
		out[i] = p.own(res)
	}
	return nil
}

// forRemovableWindow gives an accumulator what MongoDB's removable window
// state for its function (buildRemovable) does differently on adding:
// WindowFunctionMinMax and WindowFunctionMinMaxN hold every value of the
// window in an ordered multiset, equal values in arrival order, so $max is
// the last of equal maxima and $minN/$maxN read n of all the values, not
// of those an accumulator of n kept; the removable AccumulatorTopBottomN
// likewise holds every item, so $bottom/$bottomN read the last n, the
// later of tied items included. The results that differ only in how
// they are read are adapted after accumulating (compute).
func forRemovableWindow(acc accumulator) {
	switch x := acc.(type) {
	case *minMaxAcc:
		x.lastOfEqual = x.sign > 0
	case *extremeNAcc:
		x.all = true
	case *sortedNAcc:
		x.all = true
	}
}

// removableSum is the result of MongoDB's removable $sum (RemovableSum):
// a long that an int holds is narrowed to an int, whatever the window's
// numbers were.
func removableSum(v bson.RawValue) bson.RawValue {
	if v.Type == bson.TypeInt64 {
		if n := v.Int64(); n >= math.MinInt32 && n <= math.MaxInt32 {
			return values.Int32Value(int32(n))
		}
	}
	return v
}

// covarianceWindow is $covariancePop/$covarianceSamp over the pairs its
// expression gives: an array of exactly two numbers (dates are not);
// other values are left out.
type covarianceWindow struct {
	pair   *expr.Expr
	sample bool
	win    windowBounds
}

func numberOrDate(v bson.RawValue) (float64, bool) {
	if v.Type == bson.TypeDateTime {
		return float64(v.DateTime()), true
	}
	if !values.IsNumber(v.Type) {
		return 0, false
	}
	return values.Float64(v)
}

func (c *covarianceWindow) compute(p *partition, out []bson.RawValue) error {
	pairs := make([][]bson.RawValue, len(out))
	for i := range out {
		d, err := p.doc(i)
		if err != nil {
			return err
		}
		v, err := c.pair.Eval(p.rt.ectx, d)
		if err != nil {
			return err
		}
		if xy := arrayValues(v); v.Type == bson.TypeArray && len(xy) == 2 && values.IsNumber(xy[0].Type) && values.IsNumber(xy[1].Type) {
			pairs[i] = []bson.RawValue{p.own(xy[0]), p.own(xy[1])}
		}
	}
	for i := range out {
		lo, hi, ok, err := p.endpoints(c.win, i)
		if err != nil {
			return err
		}
		var cov covariance
		for j := lo; ok && j <= hi; j++ {
			if err := p.step(); err != nil {
				return err
			}
			if pairs[j] != nil {
				cov.add(pairs[j][0], pairs[j][1])
			}
		}
		out[i] = p.own(cov.result(c.sample))
	}
	return nil
}

// covariance follows MongoDB's window function step by step, so that
// results keep its types and roundings: each finite pair updates the
// means (sums over the count, as $avg) and adds (x - the mean of x before
// it) * (y - the mean of y after it) to the co-moment, summed as $sum
// sums; a pair holding an infinity or NaN changes neither count nor means
// and only adds ±Infinity, or NaN (for a NaN or opposite infinities), to
// the co-moment. The result is the co-moment over the count (less one for
// the sample); 0.0 for a population of one finite pair, null when the
// count is too small.
type covariance struct {
	meanX, meanY avgAcc // their count is the finite pairs'
	comoment     values.Sum
}

func (c *covariance) add(x, y bson.RawValue) {
	if special, ok := nonFinitePair(x, y); ok {
		c.comoment.Add(special)
		return
	}
	meanX := c.meanX.result()
	_ = c.meanX.add(nil, x)
	_ = c.meanY.add(nil, y)
	if c.meanX.n == 1 {
		return // x less the mean of nothing is null, and so is the product
	}
	dx := expr.SubtractNumbers(x, meanX)
	dy := expr.SubtractNumbers(y, c.meanY.result())
	if d, ok := values.Multiply(dx, dy); ok {
		c.comoment.Add(d)
	}
}

func (c *covariance) result(sample bool) bson.RawValue {
	n := c.meanX.n
	if n == 1 && !sample {
		return values.DoubleValue(0)
	}
	d := float64(n)
	if sample {
		d--
	}
	if d <= 0 {
		return null
	}
	m := c.comoment.Result()
	if m.Type == bson.TypeDecimal128 {
		return values.DecimalQuo(m, values.DoubleValue(d))
	}
	f, _ := values.Float64(m)
	return values.DoubleValue(f / d)
}

// nonFinitePair is what a pair holding an infinity or NaN adds to the
// co-moment: NaN for a NaN or for infinities of both signs, else the
// infinity; a decimal when either number is one. ok is false for a finite
// pair.
func nonFinitePair(x, y bson.RawValue) (bson.RawValue, bool) {
	var pos, neg, nan int
	decimal := false
	for _, v := range []bson.RawValue{x, y} {
		f, _ := values.Float64(v)
		if v.Type == bson.TypeDecimal128 {
			decimal = true
			f = float64(v.Decimal128().IsInf()) // a finite decimal may be past a double's range
		}
		switch {
		case values.IsNaN(v):
			nan++
		case math.IsInf(f, 1):
			pos++
		case math.IsInf(f, -1):
			neg++
		}
	}
	if nan+pos+neg == 0 {
		return bson.RawValue{}, false
	}
	f := math.Inf(1)
	switch {
	case nan > 0 || pos > 0 && neg > 0:
		f = math.NaN()
	case neg > 0:
		f = math.Inf(-1)
	}
	if decimal {
		return values.DecimalValue(values.DecimalFromFloat(f)), true
	}
	return values.DoubleValue(f), true
}

// sameRank reports whether two sortBy values tie for a rank, as MongoDB's
// rank accumulators decide: null, missing and undefined all tie, an array
// ties with what has its sort key, anything else with an equal value.
func (p *partition) sameRank(a, b bson.RawValue) bool {
	nullish := func(v bson.RawValue) bool {
		return v.Type == 0 || v.Type == bson.TypeNull || v.Type == bson.TypeUndefined
	}
	if nullish(a) && nullish(b) {
		return true
	}
	if a.Type == bson.TypeArray || b.Type == bson.TypeArray {
		srt := p.stage.sort
		return values.Compare(srt.ValueKey(0, a), srt.ValueKey(0, b)) == 0
	}
	return p.rt.opts.Collator.Compare(a, b) == 0
}

// rankWindow is $rank (ties share a rank, then a gap), $denseRank (no
// gap) and $documentNumber (the position), from 1, as ints.
type rankWindow struct{ op string }

func (r *rankWindow) compute(p *partition, out []bson.RawValue) error {
	vals, err := p.sortValues()
	if err != nil {
		return err
	}
	rank, dense := 0, 0
	for i := range out {
		if err := p.step(); err != nil {
			return err
		}
		if i == 0 || !p.sameRank(vals[i-1], vals[i]) {
			rank, dense = i+1, dense+1
		}
		switch r.op {
		case "$rank":
			out[i] = values.Int32Value(int32(rank))
		case "$denseRank":
			out[i] = values.Int32Value(int32(dense))
		default:
			out[i] = values.Int32Value(int32(i + 1))
		}
	}
	return nil
}

// shiftWindow is $shift: output evaluated on the document by positions
// away in the partition, or default (null) past its ends and where output
// is missing on that document, as MongoDB's endpoint window functions
// ($first, $last, $shift) give their default for a missing value since
// SERVER-82204 (7.0.4).
type shiftWindow struct {
	output *expr.Expr
	by     int
	def    bson.RawValue
}

func (p *parser) parseShift(s *windowStage, arg, win bson.RawValue) (windowFunc, error) {
	if win.Type != 0 {
		return nil, mongoerr.New(mongoerr.FailedToParse, "$shift does not accept a 'window' field")
	}
	args, err := namedArgs(arg, "$shift", "output", "by", "default")
	if err != nil {
		return nil, err
	}
	if s.sort == nil {
		return nil, mongoerr.New(mongoerr.FailedToParse, "'$shift' requires a sortBy")
	}
	w := &shiftWindow{def: null}
	if args["output"].Type == 0 {
		return nil, mongoerr.New(mongoerr.FailedToParse, "$shift requires an 'output' expression.")
	}
	if w.output, err = expr.Compile(args["output"], p.scope); err != nil {
		return nil, err
	}
	by, ok := values.Int64(args["by"])
	if !ok || by < math.MinInt32 || by > math.MaxInt32 {
		return nil, mongoerr.New(mongoerr.FailedToParse, "$shift requires 'by' as an integer value.")
	}
	w.by = int(by)
	if d := args["default"]; d.Type != 0 {
		e, err := expr.Compile(d, p.scope)
		if err != nil {
			return nil, err
		}
		if !e.IsConstant() {
			return nil, mongoerr.New(mongoerr.FailedToParse, "'$shift:default' expression must yield a constant value.")
		}
		w.def = nullIfMissing(e.Constant())
	}
	return w, nil
}

func (w *shiftWindow) compute(p *partition, out []bson.RawValue) error {
	for i := range out {
		j := i + w.by
		if j < 0 || j >= len(out) {
			out[i] = w.def
			continue
		}
		d, err := p.doc(j)
		if err != nil {
			return err
		}
		v, err := w.output.Eval(p.rt.ectx, d)
		if err != nil {
			return err
		}
		if v.Type == 0 {
			out[i] = w.def
			continue
		}
		out[i] = p.own(v)
	}
	return nil
}

// rateWindow is $derivative (the change of input between the window's
// first and last documents per unit of sortBy) and $integral (the
// trapezoidal area under input over the window's sortBy values),
// computed as MongoDB does with $subtract, $add, $multiply and $divide, so
// that decimals give decimals. With a unit the sortBy values are dates,
// whose differences are milliseconds: the derivative is then multiplied
// by the unit's milliseconds and the integral divided by them.
type rateWindow struct {
	integral bool
	input    *expr.Expr
	unit     time.Duration
	win      windowBounds
}

func (r *rateWindow) compute(p *partition, out []bson.RawValue) error {
	xs, err := p.sortValues()
	if err != nil {
		return err
	}
	n := len(out)
	ys := make([]bson.RawValue, n)
	for i := range ys {
		d, err := p.doc(i)
		if err != nil {
			return err
		}
		v, err := r.input.Eval(p.rt.ectx, d)
		if err != nil {
			return err
		}
		ys[i] = p.own(v)
	}
	unitMs := values.Int64Value(int64(r.unit / time.Millisecond))
	for i := range out {
		lo, hi, ok, err := p.endpoints(r.win, i)
		if err != nil {
			return err
		}
		switch {
		case !ok:
			out[i] = null
		case r.integral:
			out[i], err = r.integrate(p, xs, ys, lo, hi, unitMs)
		default:
			out[i], err = r.derive(xs[lo], xs[hi], ys[lo], ys[hi], unitMs)
		}
		if err != nil {
			return err
		}
		out[i] = p.own(out[i])
	}
	return nil
}

// derive is WindowFunctionExecDerivative::getNext over the window's end
// documents: the sortBy values must both be dates with a unit, both
// numbers without (5624900, 5624901, 5624902); input that is null or
// missing is 5624903, another non-number $subtract's error; a zero run is
// null.
func (r *rateWindow) derive(x0, x1, y0, y1, unitMs bson.RawValue) (bson.RawValue, error) {
	if r.unit != 0 {
		if x0.Type != bson.TypeDateTime || x1.Type != bson.TypeDateTime {
			return missing, mongoerr.New(mongoerr.DerivativeUnitNeedsDate, "$derivative with 'unit' expects the sortBy field to be a Date")
		}
	} else {
		if x0.Type == bson.TypeDateTime || x1.Type == bson.TypeDateTime {
			return missing, mongoerr.New(mongoerr.DerivativeDateNeedsUnit, "$derivative where the sortBy is a Date requires an 'unit'")
		}
		if !values.IsNumber(x0.Type) || !values.IsNumber(x1.Type) {
			return missing, mongoerr.New(mongoerr.DerivativeSortByNotNumber, "$derivative (with no 'unit') expects the sortBy field to be numeric")
		}
	}
	run, err := expr.Subtract(x1, x0)
	if err != nil {
		return missing, err
	}
	rise, err := expr.Subtract(y1, y0)
	if err != nil {
		return missing, err
	}
	if rise.Type == 0 || rise.Type == bson.TypeNull {
		return missing, mongoerr.New(mongoerr.DerivativeInputNullish, "$derivative input must not be null or missing")
	}
	d, err := expr.Divide(rise, run)
	if mongoerr.Is(err, mongoerr.BadValue) {
		return null, nil
	}
	if err != nil || r.unit == 0 {
		return d, err
	}
	return expr.Multiply(d, unitMs)
}

// integrate is WindowFunctionIntegral over documents lo to hi: each point
// must be a number over a number or a date (5423900), a date with a unit
// (5423901), a number without (5423902); the areas of neighbouring points
// are summed as MongoDB's removable $sum, a pair with a NaN counting 0
// and making the result NaN.
func (r *rateWindow) integrate(p *partition, xs, ys []bson.RawValue, lo, hi int, unitMs bson.RawValue) (bson.RawValue, error) {
	var sum values.Sum
	nan := false
	for j := lo; j <= hi; j++ {
		if err := p.step(); err != nil {
			return missing, err
		}
		x, y := xs[j], ys[j]
		if !values.IsNumber(y.Type) || !(values.IsNumber(x.Type) || x.Type == bson.TypeDateTime) {
			return missing, mongoerr.New(mongoerr.IntegralInputInvalid, "The input value of $integral window function must be a vector of 2 value, the first value must be numeric or date type and the second must be numeric.")
		}
		if r.unit != 0 && x.Type != bson.TypeDateTime {
			return missing, mongoerr.New(mongoerr.IntegralUnitNeedsDate, "$integral with 'outputUnit' expects the sortBy field to be a Date")
		}
		if r.unit == 0 && !values.IsNumber(x.Type) {
			return missing, mongoerr.New(mongoerr.IntegralDateNeedsUnit, "$integral (with no 'outputUnit') expects the sortBy field to be numeric")
		}
		if values.IsNaN(x) || values.IsNaN(y) {
			nan = true
		}
		if j == lo {
			continue
		}
		x0, y0 := xs[j-1], ys[j-1]
		if values.IsNaN(x0) || values.IsNaN(y0) || values.IsNaN(x) || values.IsNaN(y) {
			sum.Add(values.Int32Value(0))
			continue
		}
		delta, err := expr.Subtract(x, x0)
		if err != nil {
			return missing, err
		}
		sumY, err := expr.Add(y, y0)
		if err != nil {
			return missing, err
		}
		area, err := expr.Multiply(sumY, delta)
		if err != nil {
			return missing, err
		}
		if area, err = expr.Divide(area, values.DoubleValue(2)); err != nil {
			return missing, err
		}
		sum.Add(area)
	}
	if nan {
		return values.DoubleValue(math.NaN()), nil
	}
	total := removableSum(sum.Result())
	if r.unit == 0 {
		return total, nil
	}
	return expr.Divide(total, unitMs)
}

// expMovingAvgWindow is $expMovingAvg as MongoDB's
// AccumulatorExpMovingAvg: in decimal, the first number is its own
// average and each next one weighs alpha (2/(N+1) when given N) against
// the previous average; a document whose input is not a number keeps the
// average so far (null before the first number). The average is a double
// until a decimal has been read.
type expMovingAvgWindow struct {
	input *expr.Expr
	alpha bson.RawValue // a decimal
}

func (p *parser) parseExpMovingAvg(arg bson.RawValue) (windowFunc, error) {
	args, err := namedArgs(arg, "$expMovingAvg", "input", "N", "alpha")
	if err != nil {
		return nil, err
	}
	if args["input"].Type == 0 {
		return nil, mongoerr.New(mongoerr.FailedToParse, "$expMovingAvg must have exactly one of 'N' or 'alpha' and an 'input'")
	}
	w := &expMovingAvgWindow{}
	if w.input, err = expr.Compile(args["input"], p.scope); err != nil {
		return nil, err
	}
	nv, av := args["N"], args["alpha"]
	switch {
	case (nv.Type == 0) == (av.Type == 0):
		return nil, mongoerr.New(mongoerr.FailedToParse, "$expMovingAvg must have exactly one of 'N' or 'alpha' and an 'input'")
	case nv.Type != 0:
		n, ok := values.Int64(nv)
		if !ok || n <= 0 {
			return nil, mongoerr.New(mongoerr.FailedToParse, "'N' field must be an integer greater than zero, but found %s", values.Shell(nv))
		}
		// Decimal128(2).divide(Decimal128(N + 1))
		w.alpha = values.DecimalQuo(values.Int32Value(2), values.Int64Value(n+1))
	default:
		if !values.IsNumber(av.Type) {
			return nil, mongoerr.New(mongoerr.FailedToParse, "'alpha' must be a number")
		}
		// BSONElement::numberDecimal: a double to 15 digits
		a, _ := expr.Add(av, decimalZero)
		if values.Compare(a, values.Int32Value(0)) <= 0 || values.Compare(a, values.Int32Value(1)) >= 0 {
			return nil, mongoerr.New(mongoerr.FailedToParse, "'alpha' must be between 0 and 1 (exclusive), found alpha: %s", values.Shell(av))
		}
		w.alpha = a
	}
	return w, nil
}

// decimalZero is the decimal 0, added to a number to convert it to
// decimal as MongoDB's coerceToDecimal does.
var decimalZero = values.DecimalValue(values.DecimalFromFloat(0))

func (w *expMovingAvgWindow) compute(p *partition, out []bson.RawValue) error {
	oneMinus, err := expr.Subtract(values.Int32Value(1), w.alpha)
	if err != nil {
		return err
	}
	var avg bson.RawValue
	isDecimal := false
	for i := range out {
		d, err := p.doc(i)
		if err != nil {
			return err
		}
		v, err := w.input.Eval(p.rt.ectx, d)
		if err != nil {
			return err
		}
		if values.IsNumber(v.Type) {
			isDecimal = isDecimal || v.Type == bson.TypeDecimal128
			if avg.Type == 0 {
				avg, err = expr.Add(v, decimalZero)
			} else {
				avg, err = emaStep(v, w.alpha, avg, oneMinus)
			}
			if err != nil {
				return err
			}
		}
		switch {
		case avg.Type == 0:
			out[i] = null
		case isDecimal:
			out[i] = p.own(avg)
		default:
			f, _ := values.Float64(avg)
			out[i] = values.DoubleValue(f)
		}
	}
	return nil
}

// emaStep is x*alpha + avg*(1-alpha) in decimal.
func emaStep(x, alpha, avg, oneMinus bson.RawValue) (bson.RawValue, error) {
	a, err := expr.Multiply(x, alpha)
	if err != nil {
		return missing, err
	}
	b, err := expr.Multiply(avg, oneMinus)
	if err != nil {
		return missing, err
	}
	return expr.Add(a, b)
}

// linearFillX is the position of a $linearFill sortBy value: a number,
// or a value MongoDB coerces to a date (Value::coercibleToDate: a date,
// a timestamp's seconds or an ObjectId's), in milliseconds.
func linearFillX(v bson.RawValue) (float64, bool) {
	switch v.Type {
	case bson.TypeTimestamp:
		t, _ := v.Timestamp()
		return float64(t) * 1000, true
	case bson.TypeObjectID:
		return float64(v.ObjectID().Timestamp().Unix()) * 1000, true
	}
	return numberOrDate(v)
}

// interpolate is y1 + (x - x1) * ((y2 - y1) / (x2 - x1)) computed as
// MongoDB's $linearFill computes it, with $add, $subtract, $multiply and
// $divide (dates subtract to milliseconds, decimals stay decimal).
func interpolate(x1, y1, x2, y2, x bson.RawValue) (bson.RawValue, error) {
	dy, err := expr.Subtract(y2, y1)
	if err != nil {
		return missing, err
	}
	dx, err := expr.Subtract(x2, x1)
	if err != nil {
		return missing, err
	}
	slope, err := expr.Divide(dy, dx)
	if err != nil {
		return missing, err
	}
	off, err := expr.Subtract(x, x1)
	if err != nil {
		return missing, err
	}
	if off, err = expr.Multiply(off, slope); err != nil {
		return missing, err
	}
	return expr.Add(y1, off)
}

// fillWindow is $locf (the last non-null value so far, null before any)
// and $linearFill (a null or missing value between two numbers gets the
// value on the line between them at its sortBy position; values before
// the first or after the last number stay null).
type fillWindow struct {
	linear bool
	input  *expr.Expr
}

func (f *fillWindow) compute(p *partition, out []bson.RawValue) error {
	for i := range out {
		d, err := p.doc(i)
		if err != nil {
			return err
		}
		v, err := f.input.Eval(p.rt.ectx, d)
		if err != nil {
			return err
		}
		// Both fill the nullish values: null, missing and undefined.
		if v.Type == bson.TypeUndefined {
			v = null
		}
		out[i] = p.own(nullIfMissing(v))
	}
	if !f.linear {
		last := null
		for i, v := range out {
			if v.Type == bson.TypeNull {
				out[i] = last
			} else {
				last = v
			}
		}
		return nil
	}
	xs, err := p.sortValues()
	if err != nil {
		return err
	}
	// MongoDB checks each document in order
	// (WindowFunctionExecLinearFill::getNext): a numeric or nullish
	// value, a numeric or date sort value, not the previous document's
	// sort value, nor of the other kind.
	var last bson.RawValue
	for i, v := range out {
		if v.Type != bson.TypeNull && !values.IsNumber(v.Type) {
			return mongoerr.New(mongoerr.TypeMismatch, "Value to be filled must be numeric or nullish, but found %s", typeName(v))
		}
		x := xs[i]
		if _, ok := linearFillX(x); !ok {
			return mongoerr.New(mongoerr.TypeMismatch, "Value of the sortBy field must be numeric or a date, but found %s", typeName(x))
		}
		if last.Type != 0 {
			if values.Compare(x, last) == 0 {
				return mongoerr.New(mongoerr.LinearFillRepeatedSortValue, "There can be no repeated values in the sort field in the same partition")
			}
			if values.IsNumber(x.Type) != values.IsNumber(last.Type) {
				return mongoerr.New(mongoerr.TypeMismatch, "Conflicting sort value types, previously received type %s, but found %s", typeName(last), typeName(x))
			}
		}
		last = x
	}
	prev := -1
	for i, v := range out {
		if v.Type == bson.TypeNull {
			continue
		}
		if prev >= 0 && i-prev > 1 {
			for j := prev + 1; j < i; j++ {
				y, err := interpolate(xs[prev], out[prev], xs[i], v, xs[j])
				if err != nil {
					return err
				}
				out[j] = p.own(y)
			}
		}
		prev = i
	}
	return nil
}
