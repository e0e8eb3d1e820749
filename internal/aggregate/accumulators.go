package aggregate

import (
	"bytes"
	"math"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/js"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/values"
)

// accSpec is one computed field of $group, $bucket or $bucketAuto: an
// accumulator operator and its arguments.
type accSpec struct {
	field string
	op    string
	arg   *expr.Expr // the operand (input or output for the N forms)
	n     *expr.Expr // the N accumulators' n
	sort  *query.Sort
	js    *jsAccSpec // $accumulator
	red   *js.Func   // $_internalJsReduce's eval
	q     *expr.Quantiles
}

// accumulator folds the documents of one group.
type accumulator interface {
	// add folds one document; v is the operand evaluated on it.
	add(doc bson.Raw, v bson.RawValue) error
	// result is the accumulated value.
	result() bson.RawValue
	// state is the partial state spilled to disk: a value merge accepts.
	state() bson.RawValue
	// merge folds in the state of an accumulator of the same spec and
	// group that saw later documents (spilled runs are merged in arrival
	// order), as MongoDB merges partial groups after spilling.
	merge(state bson.RawValue) error
}

// parseAccumulationStatement reads name: {op: arg}, a field of $group or
// of the output of $bucket and $bucketAuto, checking it in the order of
// MongoDB's AccumulationStatement::parseAccumulationStatement: an object
// whose first name starts with '$' (40234: {} and {a: 1} are not), a
// name without '.' (40235) nor a leading '$' (40236), one field (40238),
// whose argument is no array, whatever the accumulator (40237).
func (p *parser) parseAccumulationStatement(name string, v bson.RawValue) (*accSpec, error) {
	var fs []field
	if v.Type == bson.TypeEmbeddedDocument {
		fs = fieldsOf(v.Value)
	}
	if len(fs) == 0 || !strings.HasPrefix(fs[0].key, "$") {
		return nil, mongoerr.New(mongoerr.AccumulatorFieldNotObject, "The field '%s' must be an accumulator object", name)
	}
	if strings.Contains(name, ".") {
		return nil, mongoerr.New(mongoerr.AccumulatorFieldDotted, "The field name '%s' cannot contain '.'", name)
	}
	if strings.HasPrefix(name, "$") {
		return nil, mongoerr.New(mongoerr.AccumulatorFieldIsOperator, "The field name '%s' cannot be an operator name", name)
	}
	if len(fs) != 1 {
		return nil, mongoerr.New(mongoerr.AccumulatorFieldMultiple, "The field '%s' must specify one accumulator", name)
	}
	if fs[0].val.Type == bson.TypeArray {
		return nil, mongoerr.New(mongoerr.AccumulatorUnaryArray, "The %s accumulator is a unary operator", fs[0].key)
	}
	return p.parseAccumulator(name, fs[0].key, fs[0].val)
}

// parseAccumulator reads the accumulator op of argument arg, whose result
// is the field name.
func (p *parser) parseAccumulator(name, op string, arg bson.RawValue) (*accSpec, error) {
	a := &accSpec{field: name, op: op}
	if op == "$accumulator" {
		return p.parseJSAccumulator(a, arg)
	}
	var err error
	switch op {
	case "$sum", "$avg", "$min", "$max", "$first", "$last", "$push", "$addToSet", "$mergeObjects",
		"$stdDevPop", "$stdDevSamp":
		// An array is refused in $group (parseAccumulationStatement) but is
		// an expression to the window functions, which parse their argument
		// as an operand (ExpressionRemovable::parse, ExpressionFirstLast::parse).
		a.arg, err = expr.Compile(arg, p.scope)
	case "$count":
		if arg.Type != bson.TypeEmbeddedDocument || len(fieldsOf(arg.Value)) != 0 {
			return nil, mongoerr.New(mongoerr.TypeMismatch, "$count takes no arguments, i.e. $count:{}")
		}
	case "$firstN", "$lastN", "$maxN", "$minN":
		err = p.nArgs(a, arg)
	case "$topN", "$bottomN", "$top", "$bottom":
		err = p.topBottomArgs(a, arg)
	case "$median", "$percentile":
		if a.q, err = expr.CompileQuantiles(op, arg, p.scope, true); err == nil {
			a.arg = a.q.Input
		}
	case "$_internalJsReduce":
		err = p.jsReduceArgs(a, arg)
	default:
		return nil, mongoerr.New(mongoerr.GroupUnknownAccumulator, "unknown group operator '%s'", op)
	}
	if err != nil {
		return nil, err
	}
	return a, nil
}

// nArgs reads the argument of $firstN, $lastN, $maxN and $minN, {input,
// n}, as their expression forms do (expr.NArgs).
func (p *parser) nArgs(a *accSpec, arg bson.RawValue) error {
	var err error
	a.arg, a.n, err = expr.NArgs(a.op, arg, func(v bson.RawValue) (*expr.Expr, error) { return expr.Compile(v, p.scope) })
	return err
}

// topBottomArgs reads the argument of $topN, $bottomN, $top and $bottom,
// {n, output, sortBy} ($top and $bottom take no n), in the order of
// MongoDB's parser: an object (5788001); as each field is read, sortBy an
// object (10065) and no other field (5788002); then n (5788003), output
// (5788004) and sortBy (5788005) present; then the sort pattern.
func (p *parser) topBottomArgs(a *accSpec, arg bson.RawValue) error {
	if arg.Type != bson.TypeEmbeddedDocument {
		return mongoerr.New(mongoerr.TopBottomSpecNotObject, "specification must be an object; found %s: %s", a.op, arg)
	}
	wantN := a.op == "$topN" || a.op == "$bottomN"
	var sortBy bson.RawValue
	var err error
	for _, f := range fieldsOf(arg.Value) {
		switch {
		case f.key == "n" && wantN:
			a.n, err = expr.Compile(f.val, p.scope)
		case f.key == "output":
			a.arg, err = expr.Compile(f.val, p.scope)
		case f.key == "sortBy":
			if f.val.Type != bson.TypeEmbeddedDocument {
				return mongoerr.New(mongoerr.ExpectedObjectParameter, "invalid parameter: expected an object (sortBy)")
			}
			sortBy = f.val
		default:
			return mongoerr.New(mongoerr.TopBottomUnknownArgument, "Unknown argument to %s '%s'", a.op, f.key)
		}
		if err != nil {
			return err
		}
	}
	switch {
	case wantN && a.n == nil:
		return mongoerr.New(mongoerr.TopBottomMissingN, "Missing value for 'n'")
	case a.arg == nil:
		return mongoerr.New(mongoerr.TopBottomMissingOutput, "Missing value for 'output'")
	case sortBy.Type == 0:
		return mongoerr.New(mongoerr.TopBottomMissingSortBy, "Missing value for 'sortBy'")
	}
	if a.sort, err = query.CompileSortPattern(sortBy.Document()); err != nil {
		return err
	}
	if p.opts.Collator != nil {
		a.sort = a.sort.Collated(p.opts.Collator)
	}
	return nil
}

// initializerRoot is the document an accumulator's initializer (the n of
// the N accumulators, the initArgs of $accumulator) is evaluated against
// when the group whose _id is id starts: as in MongoDB, the group key when
// it is a document (with _id: {st: "$state"}, n may read "$st"), an empty
// document otherwise.
func initializerRoot(id bson.RawValue) bson.Raw {
	if id.Type == bson.TypeEmbeddedDocument {
		return id.Document()
	}
	return emptyDoc
}

// initializer is the expression evaluated once as a group starts: the n
// of the N accumulators or the initArgs of $accumulator; nil for others.
func (a *accSpec) initializer() *expr.Expr {
	if a.js != nil {
		return a.js.initArgs
	}
	return a.n
}

// newAccumulator starts an accumulator for a group whose _id is id (see
// initializerRoot); window functions pass a null id.
func (a *accSpec) newAccumulator(id bson.RawValue, rt *runtime) (accumulator, error) {
	var n int64
	if a.n != nil {
		v, err := a.n.Eval(rt.ectx, initializerRoot(id))
		if err != nil {
			return nil, err
		}
		if n, err = expr.NValue(v); err != nil {
			return nil, err
		}
	}
	if a.js != nil {
		return a.js.start(id, rt)
	}
	coll := rt.opts.Collator
	switch a.op {
	case "$sum":
		return &sumAcc{}, nil
	case "$count":
		return &countAcc{}, nil
	case "$avg":
		return &avgAcc{}, nil
	case "$min":
		return &minMaxAcc{sign: -1, coll: coll}, nil
	case "$max":
		return &minMaxAcc{sign: 1, coll: coll}, nil
	case "$first":
		return &firstAcc{}, nil
	case "$last":
		return &lastAcc{}, nil
	case "$push":
		return &pushAcc{limit: rt.maxPushBytes()}, nil
	case "$addToSet":
		return &addToSetAcc{coll: coll, seen: map[string]bool{}, limit: rt.maxAddToSetBytes()}, nil
	case "$mergeObjects":
		return &mergeObjectsAcc{}, nil
	case "$stdDevPop":
		return &stdDevAcc{}, nil
	case "$stdDevSamp":
		return &stdDevAcc{sample: true}, nil
	case "$firstN":
		return &firstNAcc{n: n, mem: rt.nAccMem(a.op)}, nil
	case "$lastN":
		return &lastNAcc{n: n, mem: rt.nAccMem(a.op)}, nil
	case "$maxN":
		return &extremeNAcc{n: n, sign: 1, coll: coll, mem: rt.nAccMem(a.op)}, nil
	case "$minN":
		return &extremeNAcc{n: n, sign: -1, coll: coll, mem: rt.nAccMem(a.op)}, nil
	case "$top":
		return &sortedNAcc{n: 1, sort: a.sort, single: true, meta: rt.ectx.Meta, mem: rt.nAccMem(a.op)}, nil
	case "$bottom":
		return &sortedNAcc{n: 1, sort: a.sort, single: true, bottom: true, meta: rt.ectx.Meta, mem: rt.nAccMem(a.op)}, nil
	case "$topN":
		return &sortedNAcc{n: n, sort: a.sort, meta: rt.ectx.Meta, mem: rt.nAccMem(a.op)}, nil
	case "$median", "$percentile":
		return &quantileAcc{q: a.q}, nil
	case "$_internalJsReduce":
		op, err := expr.Script(rt.ectx)
		if err != nil {
			return nil, err
		}
		return &jsReduceAcc{f: a.red, op: op}, nil
	}
	return &sortedNAcc{n: n, sort: a.sort, bottom: true, meta: rt.ectx.Meta, mem: rt.nAccMem(a.op)}, nil // $bottomN
}

// sumAcc is $sum: numbers add as MongoDB adds them (values.Sum); other
// values are ignored; no numbers sum to 0.
type sumAcc struct{ sum values.Sum }

func (s *sumAcc) add(_ bson.Raw, v bson.RawValue) error {
	s.sum.Add(v)
	return nil
}

func (s *sumAcc) result() bson.RawValue { return s.sum.Result() }

func (s *sumAcc) state() bson.RawValue {
	if s.sum.Empty() {
		return null
	}
	return s.sum.Result()
}

func (s *sumAcc) merge(st bson.RawValue) error { return s.add(nil, st) }

// countAcc is {$count: {}}: the number of documents.
type countAcc struct{ n int64 }

func (c *countAcc) add(bson.Raw, bson.RawValue) error { c.n++; return nil }

func (c *countAcc) result() bson.RawValue {
	if c.n <= math.MaxInt32 {
		return values.Int32Value(int32(c.n))
	}
	return values.Int64Value(c.n)
}

func (c *countAcc) state() bson.RawValue { return values.Int64Value(c.n) }

func (c *countAcc) merge(st bson.RawValue) error {
	n, _ := values.Int64(st)
	c.n += n
	return nil
}

// avgAcc is $avg: the mean of the numbers, a double (a decimal if any
// operand is a decimal); null when there are none.
type avgAcc struct {
	sum values.Sum
	n   int64
}

func (a *avgAcc) add(_ bson.Raw, v bson.RawValue) error {
	if a.sum.Add(v) {
		a.n++
	}
	return nil
}

func (a *avgAcc) result() bson.RawValue {
	if a.n == 0 {
		return null
	}
	if total := a.sum.Result(); total.Type == bson.TypeDecimal128 {
		return values.DecimalQuo(total, values.Int64Value(a.n))
	}
	return values.DoubleValue(a.sum.Float() / float64(a.n))
}

// state is {s: sum, n: count}; s is absent when no number was seen.
func (a *avgAcc) state() bson.RawValue {
	var total bson.RawValue
	if !a.sum.Empty() {
		total = a.sum.Result()
	}
	return docValue(buildDoc([]field{{"s", total}, {"n", values.Int64Value(a.n)}}))
}

func (a *avgAcc) merge(st bson.RawValue) error {
	d := st.Document()
	a.sum.Add(d.Lookup("s"))
	n, _ := values.Int64(d.Lookup("n"))
	a.n += n
	return nil
}

// minMaxAcc is $min (sign -1) or $max (sign 1) in MongoDB's comparison
// order; null, undefined and missing are ignored (null when nothing else).
type minMaxAcc struct {
	sign int
	coll *collation.Collator // strings compare by it (nil: simple)
	best bson.RawValue
	// lastOfEqual keeps the last of equal extremes rather than the first,
	// as MongoDB's removable window state for $max reads the end of its
	// ordered multiset (see forRemovableWindow).
	lastOfEqual bool
}

func (m *minMaxAcc) add(_ bson.Raw, v bson.RawValue) error {
	if v.Type == 0 || v.Type == bson.TypeNull || v.Type == bson.TypeUndefined {
		return nil
	}
	if m.best.Type == 0 {
		m.best = v
		return nil
	}
	if c := m.coll.Compare(v, m.best) * m.sign; c > 0 || c == 0 && m.lastOfEqual {
		m.best = v
	}
	return nil
}

func (m *minMaxAcc) result() bson.RawValue { return nullIfMissing(m.best) }

func (m *minMaxAcc) state() bson.RawValue { return nullIfMissing(m.best) }

func (m *minMaxAcc) merge(st bson.RawValue) error { return m.add(nil, st) }

// firstAcc is $first: the value of the first document (null if missing).
type firstAcc struct {
	v    bson.RawValue
	seen bool
}

func (f *firstAcc) add(_ bson.Raw, v bson.RawValue) error {
	if !f.seen {
		f.v, f.seen = v, true
	}
	return nil
}

func (f *firstAcc) result() bson.RawValue { return nullIfMissing(f.v) }

// state is the first value: a spilled group has seen a document.
func (f *firstAcc) state() bson.RawValue { return nullIfMissing(f.v) }

func (f *firstAcc) merge(st bson.RawValue) error { return f.add(nil, st) }

// lastAcc is $last: the value of the last document (null if missing).
type lastAcc struct{ v bson.RawValue }

func (l *lastAcc) add(_ bson.Raw, v bson.RawValue) error { l.v = v; return nil }

func (l *lastAcc) result() bson.RawValue { return nullIfMissing(l.v) }

func (l *lastAcc) state() bson.RawValue { return nullIfMissing(l.v) }

func (l *lastAcc) merge(st bson.RawValue) error { return l.add(nil, st) }

// DefaultMaxAccumulatorBytes is the memory one $push, $addToSet or N
// accumulator ($firstN, $topN...) may hold: MongoDB's
// internalQueryMaxPushBytes, internalQueryMaxAddToSetBytes and
// internalQueryTopNAccumulatorBytes, 100 MiB. These accumulators cannot
// spill.
const DefaultMaxAccumulatorBytes = 100 * 1024 * 1024

// approxValueBytes is the memory a value held by an accumulator counts
// for, as MongoDB's Value::getApproximateSize: the value's own 16 bytes
// and its BSON.
func approxValueBytes(v bson.RawValue) int64 { return 16 + int64(len(v.Value)) }

// pushAcc is $push: every value, missing ones left out. Past limit bytes
// (approxValueBytes of the values) it fails with ExceededMemoryLimit, as
// MongoDB's AccumulatorPush does.
type pushAcc struct {
	vals       []bson.RawValue
	mem, limit int64
}

func (p *pushAcc) add(_ bson.Raw, v bson.RawValue) error {
	if v.Type == 0 {
		return nil
	}
	p.vals = append(p.vals, v)
	if p.mem += approxValueBytes(v); p.mem > p.limit {
		return mongoerr.New(mongoerr.ExceededMemoryLimit, "$push used too much memory and cannot spill to disk. Memory limit: %d bytes", p.limit)
	}
	return nil
}

func (p *pushAcc) result() bson.RawValue { return buildArray(p.vals) }

func (p *pushAcc) state() bson.RawValue { return p.result() }

func (p *pushAcc) merge(st bson.RawValue) error { return addEach(p, st) }

// addToSetAcc is $addToSet: the distinct values (by MongoDB equality),
// missing ones left out. Past limit bytes of distinct values
// (approxValueBytes) it fails with ExceededMemoryLimit, as MongoDB's
// AccumulatorAddToSet does.
type addToSetAcc struct {
	coll       *collation.Collator // values equal under it are one element
	vals       []bson.RawValue
	seen       map[string]bool
	mem, limit int64
}

func (a *addToSetAcc) add(_ bson.Raw, v bson.RawValue) error {
	if v.Type == 0 {
		return nil
	}
	k := string(a.coll.ValueKey(v))
	if a.seen[k] {
		return nil
	}
	a.seen[k] = true
	a.vals = append(a.vals, v)
	if a.mem += approxValueBytes(v); a.mem > a.limit {
		return mongoerr.New(mongoerr.ExceededMemoryLimit, "$addToSet used too much memory and cannot spill to disk. Used: %d bytes. Memory limit: %d bytes", a.mem, a.limit)
	}
	return nil
}

func (a *addToSetAcc) result() bson.RawValue { return buildArray(a.vals) }

// sortedResult is the distinct values in ascending order under the
// collation, as a removable window's $addToSet gives them: MongoDB's
// WindowFunctionAddToSet keeps its values in an ordered multiset and reads
// them out in order, the first of equal values standing for them.
func (a *addToSetAcc) sortedResult() bson.RawValue {
	vals := slices.Clone(a.vals)
	slices.SortFunc(vals, a.coll.Compare)
	return buildArray(vals)
}

func (a *addToSetAcc) state() bson.RawValue { return a.result() }

func (a *addToSetAcc) merge(st bson.RawValue) error { return addEach(a, st) }

// addEach adds the elements of the array st to acc.
func addEach(acc accumulator, st bson.RawValue) error {
	for _, v := range arrayValues(st) {
		if err := acc.add(nil, v); err != nil {
			return err
		}
	}
	return nil
}

// mergeObjectsAcc is $mergeObjects: the fields of all documents, later
// values winning; null and missing are ignored, other values fail.
type mergeObjectsAcc struct{ fs []field }

func (m *mergeObjectsAcc) add(_ bson.Raw, v bson.RawValue) error {
	switch v.Type {
	case 0, bson.TypeNull, bson.TypeUndefined:
		return nil
	case bson.TypeEmbeddedDocument:
		for _, f := range fieldsOf(v.Value) {
			m.fs = setField(m.fs, f.key, f.val)
		}
		return nil
	}
	return mongoerr.New(mongoerr.MergeObjectsInputNotObject, "$mergeObjects requires object inputs, but input %s is of type %s", values.ValueString(v), typeName(v))
}

func (m *mergeObjectsAcc) result() bson.RawValue { return docValue(buildDoc(m.fs)) }

func (m *mergeObjectsAcc) state() bson.RawValue { return m.result() }

// merge applies the later partial document: each field keeps the position
// of its first appearance and the value of its last, as in one pass.
func (m *mergeObjectsAcc) merge(st bson.RawValue) error { return m.add(nil, st) }

// stdDevAcc is $stdDevPop/$stdDevSamp over the numbers (Welford's method);
// null without enough numbers.
type stdDevAcc struct {
	sample   bool
	n        int64
	mean, m2 float64
	// nonFinite counts the NaNs and infinities among the numbers.
	nonFinite int64
}

func (s *stdDevAcc) add(_ bson.Raw, v bson.RawValue) error {
	if !values.IsNumber(v.Type) {
		return nil
	}
	x, _ := values.Float64(v)
	if math.IsNaN(x) || math.IsInf(x, 0) {
		s.nonFinite++
	}
	s.n++
	d := x - s.mean
	s.mean += d / float64(s.n)
	s.m2 += d * (x - s.mean)
	return nil
}

func (s *stdDevAcc) result() bson.RawValue {
	n := s.n
	if s.sample {
		n--
	}
	if n <= 0 {
		return null
	}
	return values.DoubleValue(math.Sqrt(s.m2 / float64(n)))
}

// windowResult is the result of MongoDB's removable $stdDevPop and
// $stdDevSamp window functions (a window that does not only grow): null
// when a NaN or an infinity is in the window, and for one number the int
// 0 ($stdDevPop) or null ($stdDevSamp).
func (s *stdDevAcc) windowResult() bson.RawValue {
	switch {
	case s.nonFinite > 0:
		return null
	case s.n == 1 && !s.sample:
		return values.Int32Value(0)
	}
	return s.result()
}

// state is {n, mean, m2}, the figures of Welford's method.
func (s *stdDevAcc) state() bson.RawValue {
	return docValue(buildDoc([]field{
		{"n", values.Int64Value(s.n)}, {"mean", values.DoubleValue(s.mean)}, {"m2", values.DoubleValue(s.m2)},
	}))
}

// merge combines two partial states with Chan et al.'s parallel formula.
func (s *stdDevAcc) merge(st bson.RawValue) error {
	d := st.Document()
	n, _ := values.Int64(d.Lookup("n"))
	mean, _ := values.Float64(d.Lookup("mean"))
	m2, _ := values.Float64(d.Lookup("m2"))
	if n == 0 {
		return nil
	}
	total := s.n + n
	delta := mean - s.mean
	s.m2 += m2 + delta*delta*float64(s.n)*float64(n)/float64(total)
	s.mean += delta * float64(n) / float64(total)
	s.n = total
	return nil
}

// firstNAcc is $firstN: the first n values, missing ones as null.
type firstNAcc struct {
	n    int64
	vals []bson.RawValue
	mem  nAccMem
}

// nAccMem is the memory the values kept by an N accumulator ($firstN,
// $lastN, $minN, $maxN, $top, $bottom, $topN, $bottomN) count for
// (approxValueBytes); at limit it fails ExceededMemoryLimit, as MongoDB's
// AccumulatorN::updateAndCheckMemUsage against
// internalQueryTopNAccumulatorBytes.
type nAccMem struct {
	op          string
	used, limit int64
}

// add counts b more bytes.
func (m *nAccMem) add(b int64) error {
	if m.used += b; m.used >= m.limit {
		return mongoerr.New(mongoerr.ExceededMemoryLimit, "%s used too much memory and spilling to disk cannot reduce memory consumption any further. Memory limit: %d bytes", m.op, m.limit)
	}
	return nil
}

func (f *firstNAcc) add(_ bson.Raw, v bson.RawValue) error {
	if int64(len(f.vals)) < f.n {
		v = nullIfMissing(v)
		if err := f.mem.add(approxValueBytes(v)); err != nil {
			return err
		}
		f.vals = append(f.vals, v)
	}
	return nil
}

func (f *firstNAcc) result() bson.RawValue { return buildArray(f.vals) }

func (f *firstNAcc) state() bson.RawValue { return f.result() }

func (f *firstNAcc) merge(st bson.RawValue) error { return addEach(f, st) }

// lastNAcc is $lastN: the last n values, missing ones as null.
type lastNAcc struct {
	n    int64
	vals []bson.RawValue
	mem  nAccMem
}

func (l *lastNAcc) add(_ bson.Raw, v bson.RawValue) error {
	v = nullIfMissing(v)
	if int64(len(l.vals)) == l.n {
		l.mem.used -= approxValueBytes(l.vals[0])
		l.vals = l.vals[1:]
	}
	if err := l.mem.add(approxValueBytes(v)); err != nil {
		return err
	}
	l.vals = append(l.vals, v)
	return nil
}

func (l *lastNAcc) result() bson.RawValue { return buildArray(l.vals) }

func (l *lastNAcc) state() bson.RawValue { return l.result() }

func (l *lastNAcc) merge(st bson.RawValue) error { return addEach(l, st) }

// extremeNAcc is $maxN (sign 1, largest first) or $minN (sign -1, smallest
// first); null and missing values are ignored.
type extremeNAcc struct {
	n    int64
	sign int
	coll *collation.Collator
	vals []bson.RawValue
	mem  nAccMem
	// all holds every value and reads the first n at the end, as
	// MongoDB's removable window state does (see forRemovableWindow).
	all bool
}

func (e *extremeNAcc) add(_ bson.Raw, v bson.RawValue) error {
	if v.Type == 0 || v.Type == bson.TypeNull || v.Type == bson.TypeUndefined {
		return nil
	}
	if e.all {
		e.vals, _, _ = expr.KeepExtremeN(e.vals, v, math.MaxInt64, e.sign > 0, e.coll)
		return nil
	}
	vals, evicted, added := expr.KeepExtremeN(e.vals, v, e.n, e.sign > 0, e.coll)
	if !added {
		return nil
	}
	e.vals = vals
	if evicted.Type != 0 {
		e.mem.used -= approxValueBytes(evicted)
	}
	return e.mem.add(approxValueBytes(v))
}

func (e *extremeNAcc) result() bson.RawValue {
	return buildArray(e.vals[:min(int64(len(e.vals)), e.n)])
}

func (e *extremeNAcc) state() bson.RawValue { return e.result() }

func (e *extremeNAcc) merge(st bson.RawValue) error { return addEach(e, st) }

// sortedNAcc is $top/$topN ($bottom/$bottomN): the output values of the
// first (last) n documents in sortBy order, missing outputs as null. $top
// and $bottom return one value rather than an array.
type sortedNAcc struct {
	n              int64
	sort           *query.Sort
	single, bottom bool
	items          []sortedItem
	// meta is the metadata of the document being added (the stage reads
	// its input through a guard that sets it), for a sortBy on
	// {$meta: "textScore"}.
	meta *docsrc.Meta
	mem  nAccMem
	// all holds every item and reads the first or last n at the end, as
	// MongoDB's removable AccumulatorTopBottomN does (see
	// forRemovableWindow).
	all bool
}

type sortedItem struct {
	keys []bson.RawValue
	v    bson.RawValue
}

func (s *sortedNAcc) add(doc bson.Raw, v bson.RawValue) error {
	keys, err := s.sort.KeysMeta(doc, *s.meta)
	if err != nil {
		return err
	}
	return s.insert(sortedItem{keys: keys, v: nullIfMissing(v)})
}

// bytes is what an item counts for against the memory limit: its sort
// key values and output.
func (it sortedItem) bytes() int64 {
	n := approxValueBytes(it.v)
	for _, k := range it.keys {
		n += approxValueBytes(k)
	}
	return n
}

// insert places it among the kept items, after those with equal keys
// (ties keep arrival order, so among equal keys the later one is further
// toward the bottom); when n are kept, it displaces the last ($top) or
// first ($bottom) only if strictly before or after it, as MongoDB's
// AccumulatorTopBottomN keeps the first of tied values.
func (s *sortedNAcc) insert(it sortedItem) error {
	cmp := func(a, b sortedItem) int { return s.sort.CompareKeys(a.keys, b.keys) }
	i := upperBound(s.items, it, cmp)
	if int64(len(s.items)) == s.n && !s.all {
		switch {
		case s.bottom && cmp(it, s.items[0]) <= 0, !s.bottom && int64(i) == s.n:
			return nil
		case s.bottom:
			s.mem.used -= s.items[0].bytes()
			s.items = s.items[1:]
			i--
		default:
			s.mem.used -= s.items[s.n-1].bytes()
			s.items = s.items[:s.n-1]
		}
	}
	if err := s.mem.add(it.bytes()); err != nil {
		return err
	}
	ownKeys(it.keys)
	s.items = slices.Insert(s.items, i, it)
	return nil
}

// ownKeys copies sort keys out of the document they were read from, so a
// kept item does not hold on to the whole document.
func ownKeys(keys []bson.RawValue) {
	for i := range keys {
		keys[i].Value = bytes.Clone(keys[i].Value)
	}
}

// upperBound is the index after the last element not greater than x.
func upperBound[T any](s []T, x T, cmp func(a, b T) int) int {
	lo, hi := 0, len(s)
	for lo < hi {
		m := (lo + hi) / 2
		if cmp(s[m], x) <= 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

func (s *sortedNAcc) result() bson.RawValue {
	items := s.items
	if int64(len(items)) > s.n {
		if s.bottom {
			items = items[int64(len(items))-s.n:]
		} else {
			items = items[:s.n]
		}
	}
	if s.single {
		if len(items) == 0 {
			return null
		}
		return items[0].v
	}
	vals := make([]bson.RawValue, len(items))
	for i, it := range items {
		vals[i] = it.v
	}
	return buildArray(vals)
}

// state is the kept items in order, each [sort key values, output].
func (s *sortedNAcc) state() bson.RawValue {
	items := make([]bson.RawValue, len(s.items))
	for i, it := range s.items {
		items[i] = buildArray([]bson.RawValue{buildArray(it.keys), it.v})
	}
	return buildArray(items)
}

func (s *sortedNAcc) merge(st bson.RawValue) error {
	for _, item := range arrayValues(st) {
		kv := arrayValues(item)
		if len(kv) != 2 {
			return mongoerr.New(mongoerr.InternalError, "corrupt $group spill file")
		}
		if err := s.insert(sortedItem{keys: arrayValues(kv[0]), v: kv[1]}); err != nil {
			return err
		}
	}
	return nil
}
