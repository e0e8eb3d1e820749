package expr

import (
	"errors"
	"strconv"
	"strings"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// compiler carries state across one Compile call.
type compiler struct {
	// slots is the number of variable slots the expression binds.
	slots int
	// readsDoc records a field path, $$ROOT or $$CURRENT: the expression
	// reads the document it is evaluated on.
	readsDoc bool
	// fields are the top-level fields of the document the field paths
	// and $$ROOT or $$CURRENT paths read; wholeDoc records a read of the
	// whole document ($$ROOT, $$CURRENT, $getField's implicit input).
	fields   []string
	wholeDoc bool
	// deferFolds is set while compiling what MongoDB's optimize skips
	// (see compileDeferringFolds).
	deferFolds bool
	// optimizeErr is the first error evaluating a constant subexpression
	// met, which fails the compilation once the whole expression has
	// parsed (optimizeFailed).
	optimizeErr error
}

// OptimizeError is an error MongoDB raises as it optimizes an expression
// it has parsed whole: the evaluation of a constant subexpression failed
// ({$abs: "x"}). Every error of parsing comes first, the expression's and
// the rest of its pipeline's ({$add: [{$abs: "x"}, {$bad: 1}]} is
// InvalidPipelineOperator); a pipeline gives this one its context
// (aggregate.Parse).
type OptimizeError struct{ Err error }

func (e *OptimizeError) Error() string { return e.Err.Error() }
func (e *OptimizeError) Unwrap() error { return e.Err }

// IsOptimizeError reports whether err is an OptimizeError.
func IsOptimizeError(err error) bool {
	_, ok := errors.AsType[*OptimizeError](err)
	return ok
}

// optimizeFailed records err, a check or evaluation of MongoDB's optimize
// that failed, and returns an expression standing for the failed one (fn,
// or one failing with err) while the rest of the expression parses: the
// compilation fails with the first such error unless a parse error comes
// first, and the expression never runs.
func (c *compiler) optimizeFailed(err error, fn evalFn) *Expr {
	if c.optimizeErr == nil {
		c.optimizeErr = err
	}
	if fn == nil {
		fn = func(*state) (bson.RawValue, error) { return missing, err }
	}
	return &Expr{eval: fn}
}

// compileDeferringFolds compiles v, with constant subexpressions that fail
// left to fail when evaluated when deferring is set: MongoDB parses such
// a subexpression but does not optimize it.
func (c *compiler) compileDeferringFolds(v bson.RawValue, s *Scope, deferring bool) (*Expr, error) {
	saved := c.deferFolds
	c.deferFolds = saved || deferring
	defer func() { c.deferFolds = saved }()
	return c.compile(v, s)
}

// opCompiler compiles the arguments of one operator.
type opCompiler func(c *compiler, name string, args bson.RawValue, s *Scope) (*Expr, error)

// operators maps operator names to their compilers; each operator family
// registers its operators from its own file.
var operators = map[string]opCompiler{}

func register(ops map[string]opCompiler) {
	for k, v := range ops {
		operators[k] = v
	}
}

// IsOperator reports whether name ("$add") names an expression operator,
// as MongoDB's Expression::isExpressionName tells an operator document
// from a sub-object of a projection.
func IsOperator(name string) bool {
	_, ok := operators[name]
	return ok
}

// Compile parses an expression: "$a.b" field paths, "$$var.path" variables,
// literals, {$op: args} operator documents, and documents and arrays whose
// values are expressions. A nil scope is the root scope with no user
// variables. Errors are *mongoerr.Error with MongoDB's code for the same
// expression; an OptimizeError comes with the expression parsed, which
// must not run.
func Compile(v bson.RawValue, s *Scope) (*Expr, error) {
	e, _, err := compileRoot(v, s)
	return e, err
}

// ReadFields are the top-level fields of the document that v, compiled
// in s, reads; whole reports that it reads the document as a whole, so
// that any field may matter (MongoDB's dependency analysis,
// Expression::addDependencies, for a $match to move past a stage).
func ReadFields(v bson.RawValue, s *Scope) (fields []string, whole bool, err error) {
	_, c, err := compileRoot(v, s)
	if err != nil {
		return nil, false, err
	}
	return c.fields, c.wholeDoc, nil
}

// readField records a read of the document at path.
func (c *compiler) readField(path string) {
	top, _, _ := strings.Cut(path, ".")
	c.fields = append(c.fields, top)
}

// compileRoot compiles a root expression, returning its compiler's
// findings too.
func compileRoot(v bson.RawValue, s *Scope) (*Expr, *compiler, error) {
	if s == nil {
		s = NewScope()
	}
	// A collection validator is parsed but not optimized (MongoDB's
	// parseValidator), so a constant subexpression that fails, such as
	// {$divide: [10, 0]}, fails each write it checks, not the collMod;
	// an update's pipeline likewise (PipelineExecutor).
	c := &compiler{deferFolds: s.validator || s.unoptimized}
	e, err := c.compile(v, s)
	if err != nil {
		return nil, nil, err
	}
	if c.optimizeErr != nil {
		// the expression too, for the rest of a stage to parse
		return e, c, &OptimizeError{Err: c.optimizeErr}
	}
	if e.slots != c.slots {
		cp := *e
		cp.slots = c.slots
		e = &cp
	}
	return e, c, nil
}

func (c *compiler) compile(v bson.RawValue, s *Scope) (*Expr, error) {
	switch v.Type {
	case bson.TypeString:
		sv, _ := str(v)
		if strings.HasPrefix(sv, "$$") {
			return c.compileVariable(sv[2:], s)
		}
		if strings.HasPrefix(sv, "$") {
			if _, rebound := s.resolve("CURRENT"); rebound && len(sv) > 1 {
				// field paths read $$CURRENT, which $let or an "as" rebound
				return c.compileVariable("CURRENT."+sv[1:], s)
			}
			c.readsDoc = true
			c.readField(sv[1:])
			return compileFieldPath(sv[1:])
		}
	case bson.TypeEmbeddedDocument:
		return c.compileDocument(v.Value, s)
	case bson.TypeArray:
		return c.compileArray(v, s)
	}
	return constExpr(v), nil
}

// compileDocument compiles an operator document ({$op: args}) or an object
// expression whose field values are expressions.
func (c *compiler) compileDocument(doc []byte, s *Scope) (*Expr, error) {
	it := rawdoc.Iterate(doc)
	firstKey, args, ok := it.Next()
	if !ok {
		return constExpr(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}), nil
	}
	if first := string(firstKey); strings.HasPrefix(first, "$") {
		n := 1
		for {
			if _, _, ok := it.Next(); !ok {
				break
			}
			n++
		}
		if n > 1 {
			// Expression::parseExpression. ($addFields refuses such an
			// object earlier, with its own text: aggregate's
			// validateAddFields.)
			return nil, mongoerr.New(mongoerr.ExpressionSpecNotSingleField, "An object representing an expression must have exactly one field: %s", bson.Raw(doc))
		}
		op, ok := operators[first]
		if !ok {
			return nil, mongoerr.New(mongoerr.InvalidPipelineOperator, "Unrecognized expression '%s'", first)
		}
		return op(c, first, args, s)
	}
	var keys []string
	var fields []*Expr
	it = rawdoc.Iterate(doc)
	for {
		kb, v, ok := it.Next()
		if !ok {
			break
		}
		k := string(kb)
		if err := ValidFieldName(k); err != nil {
			return nil, err
		}
		for _, prev := range keys {
			if prev == k {
				return nil, mongoerr.New(mongoerr.ObjectLiteralDuplicateField, "duplicate field name specified in object literal: %s", bson.Raw(doc))
			}
		}
		e, err := c.compile(v, s)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
		fields = append(fields, e)
	}
	return c.fold(fields, func(st *state) (bson.RawValue, error) {
		var d docBuilder
		for i, f := range fields {
			v, err := f.eval(st)
			if err != nil {
				return missing, err
			}
			d.set(keys[i], v)
		}
		return d.value(), nil
	})
}

// ValidFieldName is MongoDB's check on the field names of an object
// expression (FieldPath::uassertValidFieldName).
func ValidFieldName(k string) error {
	switch {
	case k == "":
		return mongoerr.New(mongoerr.FieldPathEmptyComponent, "FieldPath field names may not be empty strings.")
	case strings.HasPrefix(k, "$"):
		return mongoerr.New(mongoerr.FieldPathDollarPrefixed, "FieldPath field names may not start with '$'. Consider using $getField or $setField.")
	case strings.IndexByte(k, 0) >= 0:
		return errFieldPathNullByte()
	case strings.Contains(k, "."):
		return mongoerr.New(mongoerr.ExpressionFieldPathDotted, "FieldPath field names may not contain '.'. Consider using $getField or $setField.")
	}
	return nil
}

// compileArray compiles an array of expressions; elements that evaluate to
// missing become null.
func (c *compiler) compileArray(v bson.RawValue, s *Scope) (*Expr, error) {
	var items []*Expr
	it := rawdoc.Iterate(v.Value)
	for {
		_, ev, ok := it.Next()
		if !ok {
			break
		}
		e, err := c.compile(ev, s)
		if err != nil {
			return nil, err
		}
		items = append(items, e)
	}
	return c.fold(items, func(st *state) (bson.RawValue, error) {
		vals := make([]bson.RawValue, len(items))
		for i, e := range items {
			r, err := e.eval(st)
			if err != nil {
				return missing, err
			}
			vals[i] = r
		}
		return arrayValue(vals), nil
	})
}

// compileFieldPath compiles "$a.b" (given without the "$").
func compileFieldPath(p string) (*Expr, error) {
	if p == "" {
		return nil, mongoerr.New(mongoerr.FieldPathDollarOnly, "'$' by itself is not a valid FieldPath")
	}
	parts, err := SplitPath(p)
	if err != nil {
		return nil, err
	}
	return &Expr{
		eval: func(st *state) (bson.RawValue, error) {
			return WalkPath(st.cur, parts), nil
		},
		path:   p,
		isPath: true,
		parts:  parts,
	}, nil
}

// maxPathDepth is the most components a field path may have: MongoDB's
// BSON depth limit (maxBSONDepth).
const maxPathDepth = 200

// CheckFieldPath applies the rules of MongoDB's FieldPath constructor to
// a dotted path, in its order: not empty (40352), not ending with a dot
// (40353), then each component as SplitPath checks it.
func CheckFieldPath(p string) error {
	switch {
	case p == "":
		return mongoerr.New(mongoerr.FieldPathEmpty, "FieldPath cannot be constructed with empty string")
	case strings.HasSuffix(p, "."):
		return mongoerr.New(mongoerr.FieldPathTrailingDot, "FieldPath must not end with a '.'.")
	}
	_, err := SplitPath(p)
	return err
}

// SplitPath splits a dotted path, refusing more than maxPathDepth
// components, then empty, $-prefixed (but DBRef's $id, $ref and $db, and
// $sortKey) and NUL-holding ones, as MongoDB's FieldPath does.
func SplitPath(p string) ([]string, error) {
	parts := strings.Split(p, ".")
	if len(parts) > maxPathDepth {
		return nil, mongoerr.New(mongoerr.Overflow, "FieldPath is too long")
	}
	for _, f := range parts {
		if f == "" {
			return nil, mongoerr.New(mongoerr.FieldPathEmptyComponent, "FieldPath field names may not be empty strings.")
		}
		if strings.HasPrefix(f, "$") && !dollarFieldAllowed[f] {
			return nil, mongoerr.New(mongoerr.FieldPathDollarPrefixed, "FieldPath field names may not start with '$'. Consider using $getField or $setField.")
		}
		if strings.IndexByte(f, 0) >= 0 {
			return nil, errFieldPathNullByte()
		}
	}
	return parts, nil
}

// dollarFieldAllowed are the $-prefixed names a field path may hold
// (FieldPath's kAllowedDollarPrefixedFields): DBRef's fields, and the sort
// key a sharded find projects.
var dollarFieldAllowed = map[string]bool{"$id": true, "$ref": true, "$db": true, "$sortKey": true}

// errFieldPathNullByte is FieldPath's refusal of a NUL byte in a field
// name, which no BSON key can hold.
func errFieldPathNullByte() error {
	return mongoerr.New(mongoerr.FieldPathNullByte, "FieldPath field names may not contain '\\0'.")
}

// WalkPath follows path from v (ExpressionFieldPath::evaluatePath): through
// documents by name and, at an array, over every element with the rest of
// the path: documents contribute their non-missing results, other values
// (nested arrays too) nothing. A path through a scalar is missing.
func WalkPath(v bson.RawValue, path []string) bson.RawValue {
	for i, name := range path {
		switch v.Type {
		case bson.TypeEmbeddedDocument:
			v = rawdoc.Lookup(v.Value, name)
		case bson.TypeArray:
			return walkArray(v.Value, path[i:])
		default:
			return missing
		}
	}
	return v
}

// walkArray is WalkPath at the array arr, path not empty; the result is
// always an array.
func walkArray(arr []byte, path []string) bson.RawValue {
	start, dst := bsoncore.AppendArrayStart(nil)
	var key [20]byte
	n := 0
	it := rawdoc.Iterate(arr)
	for {
		_, e, ok := it.Next()
		if !ok {
			break
		}
		if e.Type != bson.TypeEmbeddedDocument {
			continue
		}
		if r := WalkPath(e, path); r.Type != 0 {
			dst = bsoncore.AppendHeader(dst, bsoncore.Type(r.Type), string(strconv.AppendInt(key[:0], int64(n), 10)))
			dst = append(dst, r.Value...)
			n++
		}
	}
	dst, _ = bsoncore.AppendArrayEnd(dst, start)
	return bson.RawValue{Type: bson.TypeArray, Value: dst}
}

// fold wraps fn as an expression over args. When every argument is constant
// the expression is evaluated once now and becomes a constant, and an
// evaluation error is the compilation's (optimizeFailed), unless
// deferFolds: MongoDB's optimize evaluates constant subexpressions before
// it runs, so {$cond: [false, {$divide: [1, 0]}, 1]} fails before any
// document is read.
func (c *compiler) fold(args []*Expr, fn evalFn) (*Expr, error) {
	for _, a := range args {
		if !a.constant {
			return &Expr{eval: fn}, nil
		}
	}
	v, err := fn(&state{ctx: &Context{}})
	switch {
	case err != nil && c.deferFolds:
		return &Expr{eval: fn}, nil
	case err != nil:
		return c.optimizeFailed(err, fn), nil
	}
	return constExpr(v), nil
}

// operandList compiles the operand list of operator name (argList) and
// checks it holds between min and max operands (max < 0: no limit).
func (c *compiler) operandList(name string, v bson.RawValue, s *Scope, min, max int) ([]*Expr, error) {
	args, err := c.argList(v, s)
	if err != nil {
		return nil, err
	}
	return args, arity(name, len(args), min, max)
}

// argList compiles an operator's operand list: an array of expressions, or a
// single expression standing for a one-element list.
func (c *compiler) argList(v bson.RawValue, s *Scope) ([]*Expr, error) {
	if v.Type != bson.TypeArray {
		e, err := c.compile(v, s)
		if err != nil {
			return nil, err
		}
		return []*Expr{e}, nil
	}
	var out []*Expr
	it := rawdoc.Iterate(v.Value)
	for {
		_, ev, ok := it.Next()
		if !ok {
			return out, nil
		}
		e, err := c.compile(ev, s)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
}

// arity checks the operand count: max < 0 means no upper bound.
func arity(name string, n, min, max int) error {
	switch {
	case min == max && n != min:
		return mongoerr.New(mongoerr.ExpressionArgCountExact, "Expression %s takes exactly %d arguments. %d were passed in.", name, min, n)
	case n < min && max < 0:
		return mongoerr.New(mongoerr.ExpressionArgCountAtLeast, "Expression %s takes at least %d arguments. %d were passed in.", name, min, n)
	case n < min || (max >= 0 && n > max):
		return mongoerr.New(mongoerr.ExpressionArgCountRange, "Expression %s takes at least %d arguments, and at most %d, but %d were passed in.", name, min, max, n)
	}
	return nil
}

// evalArgs evaluates every argument.
func evalArgs(st *state, args []*Expr) ([]bson.RawValue, error) {
	vals := make([]bson.RawValue, len(args))
	for i, a := range args {
		v, err := a.eval(st)
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	return vals, nil
}

// unaryFn, binaryFn and naryFn compute an operator's result from its
// evaluated operands.
type (
	unaryFn  func(a bson.RawValue) (bson.RawValue, error)
	binaryFn func(a, b bson.RawValue) (bson.RawValue, error)
	naryFn   func(args []bson.RawValue) (bson.RawValue, error)
)

// unary registers an operator taking exactly one operand.
func unary(fn unaryFn) opCompiler {
	return func(c *compiler, name string, v bson.RawValue, s *Scope) (*Expr, error) {
		args, err := c.operandList(name, v, s, 1, 1)
		if err != nil {
			return nil, err
		}
		a := args[0]
		return c.fold(args, func(st *state) (bson.RawValue, error) {
			x, err := a.eval(st)
			if err != nil {
				return missing, err
			}
			return fn(x)
		})
	}
}

// binary registers an operator taking exactly two operands.
func binary(fn binaryFn) opCompiler {
	return func(c *compiler, name string, v bson.RawValue, s *Scope) (*Expr, error) {
		args, err := c.operandList(name, v, s, 2, 2)
		if err != nil {
			return nil, err
		}
		return c.foldBinary(args, fn)
	}
}

// foldBinary builds the expression computing fn over the values of the
// two operands args, the first evaluated first.
func (c *compiler) foldBinary(args []*Expr, fn binaryFn) (*Expr, error) {
	a, b := args[0], args[1]
	return c.fold(args, func(st *state) (bson.RawValue, error) {
		x, err := a.eval(st)
		if err != nil {
			return missing, err
		}
		y, err := b.eval(st)
		if err != nil {
			return missing, err
		}
		return fn(x, y)
	})
}

// nary registers an operator taking between min and max operands (max < 0:
// no limit).
func nary(min, max int, fn naryFn) opCompiler {
	return func(c *compiler, name string, v bson.RawValue, s *Scope) (*Expr, error) {
		args, err := c.operandList(name, v, s, min, max)
		if err != nil {
			return nil, err
		}
		return c.foldNary(args, fn)
	}
}

// associativeNary registers an operator taking between min and max
// operands (max < 0: no limit) that MongoDB declares associative
// (Expression::isAssociative), and commutative when commutative is set,
// whose constant operands it folds as foldAssociative says.
func associativeNary(min, max int, commutative bool, fn operandFn) opCompiler {
	return func(c *compiler, name string, v bson.RawValue, s *Scope) (*Expr, error) {
		args, err := c.operandList(name, v, s, min, max)
		if err != nil {
			return nil, err
		}
		return c.foldAssociative(name, args, commutative, fn)
	}
}

// foldAssociative builds an associative operator over args as MongoDB's
// ExpressionNary::optimize rewrites it when some operand is not constant:
// each run of consecutive constant operands is evaluated into one
// constant, and for a commutative operator every constant operand moves
// after the others, keeping their order, before they are evaluated
// together. A constant run that fails fails the compilation, whatever the
// other operands hold; and the order in which an evaluation meets the
// operands decides whether a null operand or one of the wrong type
// answers. All constant, the operator folds as any other; where folds are
// deferred MongoDB does not optimize, and the operands stay as written.
// An operand that is the same operator, not constant, gives its own
// operands in its place first (A, op(B, C) is A, B, C), as optimize
// flattens it; the result records its operator and operands for that.
func (c *compiler) foldAssociative(name string, args []*Expr, commutative bool, fn operandFn) (*Expr, error) {
	if c.deferFolds {
		return c.foldOperands(args, fn)
	}
	var flat []*Expr
	for i, a := range args {
		if a.op == name && !a.constant {
			if flat == nil {
				flat = append(flat, args[:i]...)
			}
			flat = append(flat, a.operands...)
		} else if flat != nil {
			flat = append(flat, a)
		}
	}
	if flat != nil {
		args = flat
	}
	var out, run []*Expr
	flush := func() error {
		if len(run) > 1 {
			k, err := c.foldOperands(run, fn)
			if err != nil {
				return err
			}
			run = []*Expr{k}
		}
		out = append(out, run...)
		run = nil
		return nil
	}
	for _, a := range args {
		if a.constant {
			run = append(run, a)
			continue
		}
		if !commutative {
			if err := flush(); err != nil {
				return nil, err
			}
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return c.foldOperands(args, fn)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	e, err := c.foldOperands(out, fn)
	if err != nil {
		return nil, err
	}
	e.op, e.operands = name, out
	return e, nil
}

// operandFn computes an operator's result from its n operands, evaluating
// operand i only when it calls at(i): as MongoDB's evaluate of such an
// operator meets them in turn, an operand after the one that decides the
// result (a null one, one of the wrong type) is never evaluated, and its
// own errors do not happen.
type operandFn func(n int, at func(i int) (bson.RawValue, error)) (bson.RawValue, error)

// foldOperands builds the expression computing fn over args, each
// evaluated when fn asks for it.
func (c *compiler) foldOperands(args []*Expr, fn operandFn) (*Expr, error) {
	return c.fold(args, func(st *state) (bson.RawValue, error) {
		return fn(len(args), func(i int) (bson.RawValue, error) { return args[i].eval(st) })
	})
}

// operands registers an operator taking between min and max operands (max
// < 0: no limit) that reads them as fn asks for them (see operandFn).
func operands(min, max int, fn operandFn) opCompiler {
	return func(c *compiler, name string, v bson.RawValue, s *Scope) (*Expr, error) {
		args, err := c.operandList(name, v, s, min, max)
		if err != nil {
			return nil, err
		}
		return c.foldOperands(args, fn)
	}
}

// foldNary builds the expression computing fn over the values of args.
func (c *compiler) foldNary(args []*Expr, fn naryFn) (*Expr, error) {
	return c.fold(args, func(st *state) (bson.RawValue, error) {
		vals, err := evalArgs(st, args)
		if err != nil {
			return missing, err
		}
		return fn(vals)
	})
}

// unknownArgWording is the message format (the operator's name, then the
// field's) in which MongoDB's parser of an operator with named arguments
// refuses one it does not take; each parser words it its own way.
func unknownArgWording(op string) string {
	switch op {
	case "$reduce", "$zip", "$sortArray", "$convert", "$getField", "$setField", "$unsetField",
		"$trim", "$ltrim", "$rtrim", "$regexFind", "$regexFindAll", "$regexMatch", "$replaceOne", "$replaceAll":
		return "%s found an unknown argument: %s"
	case "$dateFromParts", "$dateToParts", "$dateFromString", "$dateToString", "$dateDiff":
		return "Unrecognized argument to %s: %s"
	case "$year", "$month", "$dayOfMonth", "$hour", "$minute", "$second", "$millisecond", "$dayOfYear",
		"$dayOfWeek", "$week", "$isoWeekYear", "$isoWeek", "$isoDayOfWeek":
		return "unrecognized option to %s: \"%s\""
	}
	return "Unrecognized parameter to %s: %s" // $cond, $filter, $map, $let
}

// namedArgs reads the argument document of an operator with named
// parameters, refusing names not in allowed with unknownCode.
func namedArgs(name string, v bson.RawValue, notObjectCode, unknownCode mongoerr.Code, allowed ...string) (map[string]bson.RawValue, error) {
	if v.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(notObjectCode, "%s only supports an object as its argument", name)
	}
	out := map[string]bson.RawValue{}
	it := rawdoc.Iterate(v.Value)
	for {
		kb, ev, ok := it.Next()
		if !ok {
			return out, nil
		}
		k := string(kb)
		known := false
		for _, a := range allowed {
			if a == k {
				known = true
			}
		}
		if !known {
			return nil, mongoerr.New(unknownCode, unknownArgWording(name), name, k)
		}
		out[k] = ev
	}
}
