package aggregate

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/js"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// jsAccSpec is {$accumulator: {init, initArgs, accumulate, accumulateArgs,
// merge, finalize, lang: "js"}}: a group's state starts as
// init(...initArgs) (initArgs evaluated as initializerRoot says), each
// document folds in as accumulate(state, ...accumulateArgs), partial
// states combine with merge(state1, state2), and the result is
// finalize(state) (the state itself without finalize).
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/accumulator/
type jsAccSpec struct {
	init, accumulate, merge, finalize *js.Func
	initArgs                          *expr.Expr
}

// parseJSAccumulator reads $accumulator's operand into a (its
// accumulateArgs become a's operand).
func (p *parser) parseJSAccumulator(a *accSpec, arg bson.RawValue) (*accSpec, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.AccumulatorNotObject, "$accumulator expects an object as an argument; found: %s", typeName(arg))
	}
	s := &jsAccSpec{}
	fn := func(name string, v bson.RawValue) (*js.Func, error) {
		e, err := expr.Compile(v, p.scope)
		if err != nil {
			return nil, err
		}
		if !e.IsConstant() {
			return nil, mongoerr.New(mongoerr.AccumulatorFunctionNotConstant, "$accumulator '%s' must be a constant expression", name)
		}
		var src string
		switch c := e.Constant(); c.Type {
		case bson.TypeString:
			src = c.StringValue()
		case bson.TypeJavaScript:
			src = c.JavaScript()
		default:
			return nil, mongoerr.New(mongoerr.AccumulatorFunctionType, "$accumulator '%s' must be a String or Code", name)
		}
		return js.Compile(src)
	}
	var err error
	for _, f := range fieldsOf(arg.Value) {
		switch f.key {
		case "init":
			s.init, err = fn(f.key, f.val)
		case "accumulate":
			s.accumulate, err = fn(f.key, f.val)
		case "merge":
			s.merge, err = fn(f.key, f.val)
		case "finalize":
			s.finalize, err = fn(f.key, f.val)
		case "initArgs":
			s.initArgs, err = expr.Compile(f.val, p.scope)
		case "accumulateArgs":
			a.arg, err = expr.Compile(f.val, p.scope)
		case "lang":
			if f.val.Type != bson.TypeString {
				return nil, mongoerr.New(mongoerr.AccumulatorLangNotString, "$accumulator lang must be a string; found: %s", typeName(f.val))
			}
			if f.val.StringValue() != "js" {
				return nil, mongoerr.New(mongoerr.AccumulatorLangNotJS, "$accumulator only supports lang: 'js'")
			}
		default:
			return nil, mongoerr.New(mongoerr.AccumulatorUnknownField, "$accumulator got an unexpected field: %s", f.key)
		}
		if err != nil {
			return nil, err
		}
	}
	switch {
	case s.init == nil:
		return nil, mongoerr.New(mongoerr.AccumulatorNoInit, "$accumulator missing required argument 'init'")
	case s.accumulate == nil:
		return nil, mongoerr.New(mongoerr.AccumulatorNoAccumulate, "$accumulator missing required argument 'accumulate'")
	case s.merge == nil:
		return nil, mongoerr.New(mongoerr.AccumulatorNoMerge, "$accumulator missing required argument 'merge'")
	case a.arg == nil:
		return nil, mongoerr.New(mongoerr.AccumulatorNoAccumulateArgs, "$accumulator missing required argument 'accumulateArgs'")
	}
	a.js = s
	return a, nil
}

// start begins a group's accumulator: init(...initArgs).
func (s *jsAccSpec) start(id bson.RawValue, rt *runtime) (accumulator, error) {
	op, err := expr.Script(rt.ectx)
	if err != nil {
		return nil, err
	}
	var args []bson.RawValue
	if s.initArgs != nil {
		v, err := s.initArgs.Eval(rt.ectx, initializerRoot(id))
		if err != nil {
			return nil, err
		}
		if v.Type != bson.TypeArray {
			return nil, mongoerr.New(mongoerr.AccumulatorInitArgsNotArray, "$accumulator initArgs must evaluate to an array: %s", values.ValueString(v))
		}
		args = arrayValues(v)
	}
	state, err := op.Call(s.init, nil, args...)
	if err != nil {
		return nil, err
	}
	return &jsAcc{spec: s, op: op, st: state}, nil
}

// jsAcc is one group's $accumulator state.
type jsAcc struct {
	spec *jsAccSpec
	op   *js.Op
	st   bson.RawValue
}

// size is the memory the state holds: its BSON bytes.
func (a *jsAcc) size() int64 { return int64(len(a.st.Value)) }

// add calls accumulate(state, ...accumulateArgs). MongoDB passes the
// state and the arguments of its pending calls in one BSON array of at
// most a user document's size, and fails with 4545000 when the state and
// one call's arguments do not fit (AccumulatorJs::reduceMemoryConsumptionIfAble).
func (a *jsAcc) add(_ bson.Raw, v bson.RawValue) error {
	if v.Type != bson.TypeArray {
		return mongoerr.New(mongoerr.AccumulatorArgsNotArray, "$accumulator accumulateArgs must evaluate to an array: %s", values.ValueString(v))
	}
	if n := len(a.st.Value) + len(v.Value); n > maxDocumentSize {
		return mongoerr.New(mongoerr.AccumulatorArgsTooLarge, "$accumulator arguments exceed max BSON size: %d", n)
	}
	st, err := a.op.Call(a.spec.accumulate, nil, append([]bson.RawValue{a.st}, arrayValues(v)...)...)
	if err != nil {
		return err
	}
	a.st = st
	return nil
}

// result is finalize(state), or the state. A failing finalize leaves the
// state (result has no error path; the failure already surfaced in add
// or merge for every other script).
func (a *jsAcc) result() bson.RawValue {
	if a.spec.finalize == nil {
		return a.st
	}
	v, err := a.op.Call(a.spec.finalize, nil, a.st)
	if err != nil {
		panic(jsAccFailure{err})
	}
	return v
}

func (a *jsAcc) state() bson.RawValue { return a.st }

// merge calls merge(state, other), which MongoDB batches as it batches
// accumulate calls (add): the two states must fit in a user document.
func (a *jsAcc) merge(other bson.RawValue) error {
	if n := len(a.st.Value) + len(other.Value); n > maxDocumentSize {
		return mongoerr.New(mongoerr.AccumulatorArgsTooLarge, "$accumulator arguments exceed max BSON size: %d", n)
	}
	st, err := a.op.Call(a.spec.merge, nil, a.st, other)
	if err != nil {
		return err
	}
	a.st = st
	return nil
}

// jsAccFailure carries a failed finalize out of result to the group stage.
type jsAccFailure struct{ err error }

// scriptFailures turns a finalize failure raised while a stage built a
// document into the error of the pipeline's Next.
type scriptFailures struct{ Source }

// Meta is the metadata of the document returned last.
func (s scriptFailures) Meta() docsrc.Meta { return docsrc.MetaOf(s.Source) }

func (s scriptFailures) Next() (doc bson.Raw, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(jsAccFailure)
			if !ok {
				panic(r)
			}
			doc, err = nil, f.err
		}
	}()
	return s.Source.Next()
}

// jsReduceArgs reads {$_internalJsReduce: {data, eval}}, the accumulator
// of mapReduce's reduce, as AccumulatorInternalJsReduce::parse: a
// document (31326) of eval, a string or code (31244), and data, an
// expression (others: 31243), both required (31245, 31349).
func (p *parser) jsReduceArgs(a *accSpec, arg bson.RawValue) error {
	if arg.Type != bson.TypeEmbeddedDocument {
		return mongoerr.New(mongoerr.JsReduceNotObject, "$_internalJsReduce requires a document argument, but found %s", typeName(arg))
	}
	for _, f := range fieldsOf(arg.Value) {
		var err error
		switch f.key {
		case "eval":
			var src string
			switch f.val.Type {
			case bson.TypeString:
				src = f.val.StringValue()
			case bson.TypeJavaScript:
				src = f.val.JavaScript()
			default:
				return mongoerr.New(mongoerr.JsReduceEvalType, "$_internalJsReduce requires the 'eval' argument to be of type string, or code but found %s", typeName(f.val))
			}
			a.red, err = js.Compile(src)
		case "data":
			a.arg, err = expr.Compile(f.val, p.scope)
		default:
			return mongoerr.New(mongoerr.JsReduceUnknownField, "Invalid argument specified to $_internalJsReduce: %s", values.ShellElement(f.key, f.val))
		}
		if err != nil {
			return err
		}
	}
	if a.red == nil {
		return mongoerr.New(mongoerr.JsReduceNoEval, "$_internalJsReduce requires 'eval' argument, recieved input: %s", values.Shell(arg))
	}
	if a.arg == nil {
		return mongoerr.New(mongoerr.JsReduceNoData, "$_internalJsReduce requires 'data' argument, recieved input: %s", values.Shell(arg))
	}
	return nil
}

// jsReduceAcc is one group's $_internalJsReduce: each document's data,
// {k, v}, gives the key and one more value (missing data is skipped,
// anything else but a document of exactly k and v fails: 31242, 31251);
// the result is the key's values reduced (js.Session.Reduce), missing
// without values.
type jsReduceAcc struct {
	f    *js.Func
	op   *js.Op
	key  bson.RawValue
	vals []bson.RawValue
}

func (a *jsReduceAcc) add(_ bson.Raw, v bson.RawValue) error {
	if v.Type == 0 {
		return nil
	}
	if v.Type != bson.TypeEmbeddedDocument {
		return mongoerr.New(mongoerr.JsReduceDataNotObject, "$_internalJsReduce requires a document argument, but found %s", typeName(v))
	}
	fs := fieldsOf(v.Value)
	k, val := getField(fs, "k"), getField(fs, "v")
	if len(fs) != 2 || k.Type == 0 || val.Type == 0 {
		return mongoerr.New(mongoerr.JsReduceDataNotKV, "$_internalJsReduce requires the 'data' argument to have a 'k' and 'v' field. Instead found%s", values.Shell(v))
	}
	a.key = k
	a.vals = append(a.vals, val)
	return nil
}

// reduce is the values reduced to one; a failing reduce is carried out
// as a finalize failure is (jsAccFailure).
func (a *jsReduceAcc) reduce() bson.RawValue {
	sess := a.op.Session()
	defer sess.Close()
	v, err := sess.Reduce(a.f, a.key, a.vals)
	if err != nil {
		panic(jsAccFailure{err})
	}
	return v
}

func (a *jsReduceAcc) result() bson.RawValue {
	if len(a.vals) == 0 {
		return missing
	}
	return a.reduce()
}

// state is {k, v} with the values reduced, which merge folds in as one
// more value (getValue(toBeMerged)).
func (a *jsReduceAcc) state() bson.RawValue {
	if len(a.vals) == 0 {
		return missing
	}
	v := a.reduce()
	a.vals = []bson.RawValue{v}
	return docValue(buildDoc([]field{{"k", a.key}, {"v", v}}))
}

func (a *jsReduceAcc) merge(st bson.RawValue) error { return a.add(nil, st) }
