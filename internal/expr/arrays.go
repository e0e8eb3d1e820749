package expr

import (
	"slices"
	"sort"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/values"
	"go.mongodb.org/mongo-driver/v2/bson"
)

func init() {
	register(map[string]opCompiler{
		"$size":        unary(evalSize),
		"$arrayElemAt": binary(evalArrayElemAt),
		"$first":       unary(firstLast("$first", true)),
		"$last":        unary(firstLast("$last", false)),
		"$in": collated(func(coll *collation.Collator) opCompiler {
			return binary(func(v, arr bson.RawValue) (bson.RawValue, error) { return evalIn(coll, v, arr) })
		}),
		"$concatArrays":    associativeNary(0, -1, false, evalConcatArrays),
		"$range":           nary(2, 3, evalRange),
		"$reverseArray":    unary(evalReverseArray),
		"$slice":           operands(2, 3, evalSlice),
		"$indexOfArray":    collated(compileIndexOfArray),
		"$isArray":         unary(func(v bson.RawValue) (bson.RawValue, error) { return boolValue(v.Type == bson.TypeArray), nil }),
		"$allElementsTrue": unary(elementsTrue("$allElementsTrue", mongoerr.AllElementsTrueArgumentNotArray, true)),
		"$anyElementTrue":  unary(elementsTrue("$anyElementTrue", mongoerr.AnyElementTrueArgumentNotArray, false)),
		"$setUnion": collated(func(coll *collation.Collator) opCompiler {
			return associativeNary(0, -1, true, func(n int, at func(int) (bson.RawValue, error)) (bson.RawValue, error) {
				return evalSetUnion(coll, n, at)
			})
		}),
		"$setIntersection": collated(func(coll *collation.Collator) opCompiler {
			return associativeNary(0, -1, true, func(n int, at func(int) (bson.RawValue, error)) (bson.RawValue, error) {
				return evalSetIntersection(coll, n, at)
			})
		}),
		"$setDifference": collated(func(coll *collation.Collator) opCompiler {
			return binary(func(a, b bson.RawValue) (bson.RawValue, error) { return evalSetDifference(coll, a, b) })
		}),
		"$setEquals":   collated(compileSetEquals),
		"$setIsSubset": collated(compileSetIsSubset),
		"$filter":      compileFilter,
		"$map":         compileMap,
		"$reduce":      compileReduce,
		"$zip":         compileZip,
		"$sortArray":   compileSortArray,
		"$firstN":      compileN("$firstN", nFirst),
		"$lastN":       compileN("$lastN", nLast),
		"$maxN":        compileN("$maxN", nMax),
		"$minN":        compileN("$minN", nMin),
	})
}

// evalSize is $size: the length of an array; anything else (null included)
// is error 17124.
func evalSize(v bson.RawValue) (bson.RawValue, error) {
	if v.Type != bson.TypeArray {
		return missing, mongoerr.New(mongoerr.SizeArgumentNotArray, "The argument to $size must be an array, but was of type: %s", typeName(v))
	}
	return intValue(int64(rawdoc.Len(v.Value))), nil
}

// evalArrayElemAt is $arrayElemAt: [array, index], a negative index counting
// from the end; out of range gives missing, null operands null.
func evalArrayElemAt(arr, idx bson.RawValue) (bson.RawValue, error) {
	if isNullish(arr) || isNullish(idx) {
		return nullValue, nil
	}
	if arr.Type != bson.TypeArray {
		return missing, mongoerr.New(mongoerr.ArrayElemAtFirstNotArray, "$arrayElemAt's first argument must be an array, but is %s", typeName(arr))
	}
	if !isNumber(idx) {
		return missing, mongoerr.New(mongoerr.ArrayElemAtIndexNotNumber, "$arrayElemAt's second argument must be a numeric value, but is %s", typeName(idx))
	}
	i, ok := int32Arg(idx)
	if !ok {
		return missing, mongoerr.New(mongoerr.ArrayElemAtIndexNotInt32, "$arrayElemAt's second argument must be representable as a 32-bit integer: %s", values.StreamDouble(toFloat(idx)))
	}
	return elemAt(elems(arr), int(i)), nil
}

// elemAt is vals[i], counting from the end for negative i, or missing.
func elemAt(vals []bson.RawValue, i int) bson.RawValue {
	if i < 0 {
		i += len(vals)
	}
	if i < 0 || i >= len(vals) {
		return missing
	}
	return vals[i]
}

// firstLast builds $first and $last: the first or last element of an array
// (missing for an empty array, null for a null operand).
func firstLast(op string, first bool) unaryFn {
	return func(v bson.RawValue) (bson.RawValue, error) {
		if isNullish(v) {
			return nullValue, nil
		}
		if v.Type != bson.TypeArray {
			return missing, mongoerr.New(mongoerr.ArrayElemAtFirstNotArray, "%s's argument must be an array, but is %s", op, typeName(v))
		}
		if first {
			return elemAt(elems(v), 0), nil
		}
		return elemAt(elems(v), -1), nil
	}
}

// evalIn is $in: [value, array], true when an element equals value.
func evalIn(coll *collation.Collator, v, arr bson.RawValue) (bson.RawValue, error) {
	if arr.Type != bson.TypeArray {
		return missing, mongoerr.New(mongoerr.InArgumentNotArray, "$in requires an array as a second argument, found: %s", typeName(arr))
	}
	it := rawdoc.Iterate(arr.Value)
	for {
		_, e, ok := it.Next()
		if !ok {
			return falseVal, nil
		}
		if equal(coll, v, e) {
			return trueValue, nil
		}
	}
}

// evalConcatArrays is $concatArrays: the operands' elements in turn, null at
// the first null or missing operand, 28664 at the first other non-array;
// operands after it are not evaluated.
func evalConcatArrays(n int, at func(int) (bson.RawValue, error)) (bson.RawValue, error) {
	var out []bson.RawValue
	for i := range n {
		a, err := at(i)
		if err != nil {
			return missing, err
		}
		if isNullish(a) {
			return nullValue, nil
		}
		if a.Type != bson.TypeArray {
			return missing, mongoerr.New(mongoerr.ConcatArraysArgumentNotArray, "$concatArrays only supports arrays, not %s", typeName(a))
		}
		out = append(out, elems(a)...)
	}
	return arrayValue(out), nil
}

// $range refuses a result whose estimated size reaches MongoDB's
// internalQueryMaxRangeBytes (100 MiB) with ExceededMemoryLimit, estimating
// as ExpressionRange does: 24 bytes for the array and 16 for each of
// 1 + (end-start)/step elements, or none when that quotient is negative.
const (
	rangeArrayBytes   = 24
	rangeElementBytes = 16
	maxRangeBytes     = 100 << 20
)

// evalRange is $range: [start, end, step] of 32-bit integers, step 1 by
// default and never 0.
func evalRange(args []bson.RawValue) (bson.RawValue, error) {
	names := [3]string{"starting value", "ending value", "step value"}
	article := [3]string{"a", "an", "a"}
	notNumber := [3]mongoerr.Code{mongoerr.RangeStartNotNumber, mongoerr.RangeEndNotNumber, mongoerr.RangeStepNotNumber}
	notInt32 := [3]mongoerr.Code{mongoerr.RangeStartNotInt32, mongoerr.RangeEndNotInt32, mongoerr.RangeStepNotInt32}
	var n [3]int64
	n[2] = 1
	for i, a := range args {
		if !isNumber(a) {
			return missing, mongoerr.New(notNumber[i], "$range requires a numeric %s, found value of type: %s", names[i], typeName(a))
		}
		v, ok := int32Arg(a)
		if !ok {
			return missing, mongoerr.New(notInt32[i], "$range requires %s %s that can be represented as a 32-bit integer, found value: %s", article[i], names[i], values.ValueString(a))
		}
		n[i] = int64(v)
	}
	if n[2] == 0 {
		return missing, mongoerr.New(mongoerr.RangeStepZero, "$range requires a non-zero step value")
	}
	var length int64
	if steps := (n[1] - n[0]) / n[2]; steps >= 0 {
		length = 1 + steps
	}
	if need := rangeArrayBytes + length*rangeElementBytes; need >= maxRangeBytes {
		return missing, mongoerr.New(mongoerr.ExceededMemoryLimit, "$range would use too much memory (%d bytes) and cannot spill to disk. Memory limit: %d bytes", need, maxRangeBytes)
	}
	var out []bson.RawValue
	for x := n[0]; (n[2] > 0 && x < n[1]) || (n[2] < 0 && x > n[1]); x += n[2] {
		out = append(out, values.Int32Value(int32(x)))
	}
	return arrayValue(out), nil
}

// evalReverseArray is $reverseArray.
func evalReverseArray(v bson.RawValue) (bson.RawValue, error) {
	if isNullish(v) {
		return nullValue, nil
	}
	if v.Type != bson.TypeArray {
		return missing, mongoerr.New(mongoerr.ReverseArrayArgumentNotArray, "The argument to $reverseArray must be an array, but was of type: %s", typeName(v))
	}
	vals := elems(v)
	slices.Reverse(vals)
	return arrayValue(vals), nil
}

// evalSlice is $slice: [array, n] (the first n, or the last -n) or [array,
// position, n] (n from position, negative positions counting from the end).
// As MongoDB's ExpressionSlice::evaluate, a null array or second operand
// answers null before either is checked, and n is evaluated, and a null n
// answers null, only once they pass.
func evalSlice(n int, at func(int) (bson.RawValue, error)) (bson.RawValue, error) {
	var args [3]bson.RawValue
	for i := range 2 {
		v, err := at(i)
		if err != nil {
			return missing, err
		}
		args[i] = v
	}
	if isNullish(args[0]) || isNullish(args[1]) {
		return nullValue, nil
	}
	if args[0].Type != bson.TypeArray {
		return missing, mongoerr.New(mongoerr.SliceArrayNotArray, "First argument to $slice must be an array, but is of type: %s", typeName(args[0]))
	}
	if !isNumber(args[1]) {
		return missing, mongoerr.New(mongoerr.SliceSecondNotNumber, "Second argument to $slice must be a numeric value, but is of type: %s", typeName(args[1]))
	}
	second, ok := int32Arg(args[1])
	if !ok {
		return missing, mongoerr.New(mongoerr.SliceSecondNotInt32, "Second argument to $slice can't be represented as a 32-bit integer: %s", values.StreamDouble(toFloat(args[1])))
	}
	vals := elems(args[0])
	size := len(vals)
	var start, end int
	if n == 2 {
		if second >= 0 {
			start, end = 0, min(int(second), size)
		} else {
			start, end = max(size+int(second), 0), size
		}
	} else {
		v, err := at(2)
		if err != nil {
			return missing, err
		}
		if args[2] = v; isNullish(v) {
			return nullValue, nil
		}
		if !isNumber(args[2]) {
			return missing, mongoerr.New(mongoerr.SliceThirdNotNumber, "Third argument to $slice must be numeric, but is of type: %s", typeName(args[2]))
		}
		n, ok := int32Arg(args[2])
		if !ok {
			return missing, mongoerr.New(mongoerr.SliceThirdNotInt32, "Third argument to $slice can't be represented as a 32-bit integer: %s", values.StreamDouble(toFloat(args[2])))
		}
		if n <= 0 {
			return missing, mongoerr.New(mongoerr.SliceThirdNotPositive, "Third argument to $slice must be positive: %d", n)
		}
		start = int(second)
		if start < 0 {
			start = max(size+start, 0)
		}
		start = min(start, size)
		end = min(start+int(n), size)
	}
	return arrayValue(vals[start:end]), nil
}

// compileIndexOfArray builds $indexOfArray as MongoDB's
// ExpressionIndexOfArray::optimize leaves it: all operands constant, it
// folds; a constant array operand with others that are not is checked once,
// when compiled: nullish, the expression is null whatever the others hold,
// and not an array, it is refused (50809) whatever the documents. Where
// folds are deferred (a validator) MongoDB does not optimize, and the array
// is checked when evaluated (40090).
func compileIndexOfArray(coll *collation.Collator) opCompiler {
	return func(c *compiler, name string, v bson.RawValue, s *Scope) (*Expr, error) {
		args, err := c.operandList(name, v, s, 2, 4)
		if err != nil {
			return nil, err
		}
		if arr := args[0]; arr.constant && !c.deferFolds {
			switch {
			case isNullish(arr.value):
				return constExpr(nullValue), nil
			case arr.value.Type != bson.TypeArray:
				for _, a := range args[1:] {
					if !a.constant {
						return c.optimizeFailed(mongoerr.New(mongoerr.IndexOfArrayConstFirstNotArray, "First operand of $indexOfArray must be an array. First argument is of type: %s", typeName(arr.value)), nil), nil
					}
				}
			}
		}
		return c.foldOperands(args, func(n int, at func(int) (bson.RawValue, error)) (bson.RawValue, error) {
			return evalIndexOfArray(coll, n, at)
		})
	}
}

// evalIndexOfArray is $indexOfArray: [array, value, start, end] → the first
// index of an element equal to value, or -1.
func evalIndexOfArray(coll *collation.Collator, n int, at func(int) (bson.RawValue, error)) (bson.RawValue, error) {
	var args [4]bson.RawValue
	for i := range n {
		v, err := at(i)
		if err != nil {
			return missing, err
		}
		args[i] = v
		if i > 0 {
			continue
		}
		// The array is checked before the other operands are evaluated.
		if isNullish(v) {
			return nullValue, nil
		}
		if v.Type != bson.TypeArray {
			return missing, mongoerr.New(mongoerr.IndexOfArrayFirstNotArray, "$indexOfArray requires an array as a first argument, found: %s", typeName(v))
		}
	}
	vals := elems(args[0])
	start, end, err := indexBounds("$indexOfArray", args[:n], len(vals))
	if err != nil || start < 0 {
		return values.Int32Value(-1), err
	}
	for i := start; i < end; i++ {
		if equal(coll, vals[i], args[1]) {
			return intValue(int64(i)), nil
		}
	}
	return values.Int32Value(-1), nil
}

// elementsTrue builds $allElementsTrue and $anyElementTrue over the elements
// of an array operand.
func elementsTrue(op string, code mongoerr.Code, all bool) unaryFn {
	return func(v bson.RawValue) (bson.RawValue, error) {
		if v.Type != bson.TypeArray {
			return missing, mongoerr.New(code, "%s's argument must be an array, but is %s", op, typeName(v))
		}
		for _, e := range elems(v) {
			if values.Truthy(e) != all {
				return boolValue(!all), nil
			}
		}
		return boolValue(all), nil
	}
}

// valueSet is a set of values under MongoDB's equality (1 and 1.0 are the
// same element; strings equal under the collation coll are too).
type valueSet struct {
	coll *collation.Collator
	m    map[string]bson.RawValue
}

func newSet(coll *collation.Collator) valueSet {
	return valueSet{coll: coll, m: map[string]bson.RawValue{}}
}

func (s valueSet) key(v bson.RawValue) string {
	return string(s.coll.ValueKey(v))
}

// add inserts v unless an equal value is present (the first one is kept).
func (s valueSet) add(v bson.RawValue) {
	k := s.key(v)
	if _, ok := s.m[k]; !ok {
		s.m[k] = v
	}
}

func (s valueSet) has(v bson.RawValue) bool {
	_, ok := s.m[s.key(v)]
	return ok
}

func setOf(coll *collation.Collator, arr bson.RawValue) valueSet {
	s := newSet(coll)
	for _, e := range elems(arr) {
		s.add(e)
	}
	return s
}

// sorted returns the set's elements in MongoDB's order, the order in which
// MongoDB's ordered value sets return them.
func (s valueSet) sorted() bson.RawValue {
	out := make([]bson.RawValue, 0, len(s.m))
	for _, v := range s.m {
		out = append(out, v)
	}
	slices.SortFunc(out, s.coll.Compare)
	return arrayValue(out)
}

// evalSetUnion is $setUnion: the distinct elements of all operand arrays;
// null at the first null or missing operand, 17043 at the first other
// non-array; operands after it are not evaluated.
func evalSetUnion(coll *collation.Collator, n int, at func(int) (bson.RawValue, error)) (bson.RawValue, error) {
	s := newSet(coll)
	for i := range n {
		a, err := at(i)
		if err != nil {
			return missing, err
		}
		if isNullish(a) {
			return nullValue, nil
		}
		if a.Type != bson.TypeArray {
			return missing, mongoerr.New(mongoerr.SetUnionArgumentNotArray, "All operands of $setUnion must be arrays. One argument is of type: %s", typeName(a))
		}
		for _, e := range elems(a) {
			s.add(e)
		}
	}
	return s.sorted(), nil
}

// evalSetIntersection is $setIntersection: the distinct elements present in
// every operand array, null at the first null or missing operand, as
// MongoDB's ExpressionSetIntersection::evaluate checks them in turn. Of
// equal elements the result holds the smaller set's: each step keeps the
// elements of the smaller of the intersection so far and the next operand's
// set (the former when they are as large).
func evalSetIntersection(coll *collation.Collator, n int, at func(int) (bson.RawValue, error)) (bson.RawValue, error) {
	acc := newSet(coll)
	for i := range n {
		a, err := at(i)
		if err != nil {
			return missing, err
		}
		if isNullish(a) {
			return nullValue, nil
		}
		if a.Type != bson.TypeArray {
			return missing, mongoerr.New(mongoerr.SetIntersectionArgumentNotArray, "All operands of $setIntersection must be arrays. One argument is of type: %s", typeName(a))
		}
		switch {
		case i == 0:
			acc = setOf(coll, a)
		case len(acc.m) > 0:
			next := setOf(coll, a)
			if len(acc.m) > len(next.m) {
				acc, next = next, acc
			}
			for k := range acc.m {
				if _, ok := next.m[k]; !ok {
					delete(acc.m, k)
				}
			}
		}
	}
	return acc.sorted(), nil
}

// evalSetDifference is $setDifference: the distinct elements of the first
// array not in the second, in first-array order.
func evalSetDifference(coll *collation.Collator, a, b bson.RawValue) (bson.RawValue, error) {
	if isNullish(a) || isNullish(b) {
		return nullValue, nil
	}
	if a.Type != bson.TypeArray {
		return missing, mongoerr.New(mongoerr.SetDifferenceFirstNotArray, "both operands of $setDifference must be arrays. First argument is of type: %s", typeName(a))
	}
	if b.Type != bson.TypeArray {
		return missing, mongoerr.New(mongoerr.SetDifferenceSecondNotArray, "both operands of $setDifference must be arrays. Second argument is of type: %s", typeName(b))
	}
	exclude, seen := setOf(coll, b), newSet(coll)
	var out []bson.RawValue
	for _, e := range elems(a) {
		if !exclude.has(e) && !seen.has(e) {
			seen.add(e)
			out = append(out, e)
		}
	}
	return arrayValue(out), nil
}

// compileSetEquals builds $setEquals, which needs at least two operands
// and says so with a code of its own (17045), as MongoDB's
// ExpressionSetEquals::validateArguments.
func compileSetEquals(coll *collation.Collator) opCompiler {
	return func(c *compiler, _ string, v bson.RawValue, s *Scope) (*Expr, error) {
		args, err := c.argList(v, s)
		if err != nil {
			return nil, err
		}
		if len(args) < 2 {
			return nil, mongoerr.New(mongoerr.SetEqualsTooFewArguments, "$setEquals needs at least two arguments had: %d", len(args))
		}
		return c.foldOperands(args, func(n int, at func(int) (bson.RawValue, error)) (bson.RawValue, error) {
			return evalSetEquals(coll, n, at)
		})
	}
}

// evalSetEquals is $setEquals: whether all operand arrays hold the same
// distinct elements. As MongoDB's ExpressionSetEquals::evaluate, each
// operand is evaluated and checked (17044) in turn, and the answer is false
// as soon as one differs from the first, the rest not evaluated.
func evalSetEquals(coll *collation.Collator, n int, at func(int) (bson.RawValue, error)) (bson.RawValue, error) {
	var first valueSet
	for i := range n {
		a, err := at(i)
		if err != nil {
			return missing, err
		}
		if a.Type != bson.TypeArray {
			return missing, mongoerr.New(mongoerr.SetEqualsArgumentNotArray, "All operands of $setEquals must be arrays. One argument is of type: %s", typeName(a))
		}
		s := setOf(coll, a)
		if i == 0 {
			first = s
			continue
		}
		if len(s.m) != len(first.m) {
			return falseVal, nil
		}
		for k := range s.m {
			if _, ok := first.m[k]; !ok {
				return falseVal, nil
			}
		}
	}
	return trueValue, nil
}

// compileSetIsSubset builds $setIsSubset as MongoDB's
// ExpressionSetIsSubset::optimize leaves it. Constant operands fold, and a
// first or second operand that is not an array is 17046 or 17042, as each
// evaluation of a second operand that is not constant reports it. A
// constant second operand with a first that is not is made a set once, when
// compiled: not an array, it is refused then (17311), whatever the
// documents; an array, each evaluation checks only the first operand
// (17310). Where folds are deferred (a validator) MongoDB does not
// optimize, and every operand is checked when evaluated.
func compileSetIsSubset(coll *collation.Collator) opCompiler {
	return func(c *compiler, name string, v bson.RawValue, s *Scope) (*Expr, error) {
		args, err := c.operandList(name, v, s, 2, 2)
		if err != nil {
			return nil, err
		}
		a, b := args[0], args[1]
		if b.constant && !a.constant && !c.deferFolds {
			if b.value.Type != bson.TypeArray {
				return c.optimizeFailed(mongoerr.New(mongoerr.SetIsSubsetConstSecondNotArray, "both operands of $setIsSubset must be arrays. Second argument is of type: %s", typeName(b.value)), nil), nil
			}
			super := setOf(coll, b.value)
			return &Expr{eval: func(st *state) (bson.RawValue, error) {
				x, err := a.eval(st)
				if err != nil {
					return missing, err
				}
				if x.Type != bson.TypeArray {
					return missing, mongoerr.New(mongoerr.SetIsSubsetConstFirstNotArray, "both operands of $setIsSubset must be arrays. First argument is of type: %s", typeName(x))
				}
				return isSubset(x, super), nil
			}}, nil
		}
		return c.foldBinary(args, func(x, y bson.RawValue) (bson.RawValue, error) {
			if x.Type != bson.TypeArray {
				return missing, mongoerr.New(mongoerr.SetIsSubsetFirstNotArray, "both operands of $setIsSubset must be arrays. First argument is of type: %s", typeName(x))
			}
			if y.Type != bson.TypeArray {
				return missing, mongoerr.New(mongoerr.SetIsSubsetSecondNotArray, "both operands of $setIsSubset must be arrays. Second argument is of type: %s", typeName(y))
			}
			return isSubset(x, setOf(coll, y)), nil
		})
	}
}

// isSubset is $setIsSubset's answer: whether every element of arr is in
// super.
func isSubset(arr bson.RawValue, super valueSet) bson.RawValue {
	for _, e := range elems(arr) {
		if !super.has(e) {
			return falseVal
		}
	}
	return trueValue
}

// iterArgs compiles the named arguments of $filter and $map: input, the
// variable name ("as", default "this") and the per-element expression
// (compiled with the variable bound).
type iterArgs struct {
	input, body, limit *Expr
	slot               int
}

func (c *compiler) iterSpec(name string, v bson.RawValue, s *Scope, objCode, unknownCode, inputCode, bodyCode mongoerr.Code, bodyName string, allowed ...string) (*iterArgs, error) {
	if v.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(objCode, "%s only supports an object as its argument", name)
	}
	args, err := namedArgs(name, v, objCode, unknownCode, allowed...)
	if err != nil {
		return nil, err
	}
	in, ok := args["input"]
	if !ok {
		return nil, mongoerr.New(inputCode, "Missing 'input' parameter to %s", name)
	}
	body, ok := args[bodyName]
	if !ok {
		return nil, mongoerr.New(bodyCode, "Missing '%s' parameter to %s", bodyName, name)
	}
	as := "this"
	if a, ok := args["as"]; ok {
		if as, ok = str(a); !ok {
			return nil, mongoerr.New(unknownCode, "'as' parameter to %s must be a string", name)
		}
		if err := validateBindName(as); err != nil {
			return nil, err
		}
	}
	out := &iterArgs{}
	if out.input, err = c.compile(in, s); err != nil {
		return nil, err
	}
	if l, ok := args["limit"]; ok {
		if out.limit, err = c.compile(l, s); err != nil {
			return nil, err
		}
	}
	inner := s.bind(c, as)
	out.slot = inner.slot(as)
	if out.body, err = c.compile(body, inner); err != nil {
		return nil, err
	}
	return out, nil
}

// compileFilter is $filter: {input, as, cond, limit}: the elements for which
// cond is truthy, at most limit of them.
func compileFilter(c *compiler, name string, v bson.RawValue, s *Scope) (*Expr, error) {
	a, err := c.iterSpec(name, v, s, mongoerr.FilterSpecNotObject, mongoerr.FilterUnknownArgument, mongoerr.FilterMissingInput, mongoerr.FilterMissingCond, "cond", "input", "as", "cond", "limit")
	if err != nil {
		return nil, err
	}
	return &Expr{eval: func(st *state) (bson.RawValue, error) {
		in, err := a.input.eval(st)
		if err != nil || isNullish(in) {
			return nullValue, err
		}
		if in.Type != bson.TypeArray {
			return missing, mongoerr.New(mongoerr.FilterInputNotArray, "input to $filter must be an array not %s", typeName(in))
		}
		// An empty input is the answer before the limit is evaluated
		// (MongoDB's ExpressionFilter::evaluate): its limit is not checked.
		if len(in.Value) <= 5 {
			return in, nil
		}
		limit := int64(-1)
		if a.limit != nil {
			lv, err := a.limit.eval(st)
			if err != nil {
				return missing, err
			}
			if !isNullish(lv) {
				n, ok := int32Arg(lv)
				if !ok {
					return missing, mongoerr.New(mongoerr.FilterLimitNotInt32, "$filter: limit must be represented as a 32-bit integral value: %s", values.ValueString(lv))
				}
				if n < 1 {
					return missing, mongoerr.New(mongoerr.FilterLimitNotPositive, "$filter: limit must be greater than 0: %s", values.ValueString(lv))
				}
				limit = int64(n)
			}
		}
		var out []bson.RawValue
		it := rawdoc.Iterate(in.Value)
		for limit != 0 {
			_, e, ok := it.Next()
			if !ok {
				break
			}
			st.vars[a.slot] = e
			keep, err := a.body.eval(st)
			if err != nil {
				return missing, err
			}
			if values.Truthy(keep) {
				out = append(out, e)
				limit--
			}
		}
		return arrayValue(out), nil
	}}, nil
}

// compileMap is $map: {input, as, in}: in evaluated for each element.
func compileMap(c *compiler, name string, v bson.RawValue, s *Scope) (*Expr, error) {
	a, err := c.iterSpec(name, v, s, mongoerr.MapSpecNotObject, mongoerr.MapUnknownArgument, mongoerr.MapMissingInput, mongoerr.MapMissingIn, "in", "input", "as", "in")
	if err != nil {
		return nil, err
	}
	return &Expr{eval: func(st *state) (bson.RawValue, error) {
		in, err := a.input.eval(st)
		if err != nil || isNullish(in) {
			return nullValue, err
		}
		if in.Type != bson.TypeArray {
			return missing, mongoerr.New(mongoerr.MapInputNotArray, "input to $map must be an array not %s", typeName(in))
		}
		var out []bson.RawValue
		it := rawdoc.Iterate(in.Value)
		for {
			_, e, ok := it.Next()
			if !ok {
				break
			}
			st.vars[a.slot] = e
			r, err := a.body.eval(st)
			if err != nil {
				return missing, err
			}
			out = append(out, r)
		}
		return arrayValue(out), nil
	}}, nil
}

// compileReduce is $reduce: {input, initialValue, in}: in evaluated for each
// element with $$this the element and $$value the accumulated value.
func compileReduce(c *compiler, name string, v bson.RawValue, s *Scope) (*Expr, error) {
	if v.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.ReduceSpecNotObject, "$reduce requires an object as an argument, found: %s", typeName(v))
	}
	args, err := namedArgs(name, v, mongoerr.ReduceSpecNotObject, mongoerr.ReduceUnknownArgument, "input", "initialValue", "in")
	if err != nil {
		return nil, err
	}
	var parts [3]*Expr
	inner := s.bind(c, "value", "this")
	missingCodes := [3]mongoerr.Code{mongoerr.ReduceMissingInput, mongoerr.ReduceMissingInitialValue, mongoerr.ReduceMissingIn}
	for i, k := range []string{"input", "initialValue", "in"} {
		a, ok := args[k]
		if !ok {
			return nil, mongoerr.New(missingCodes[i], "$reduce requires '%s' to be specified", k)
		}
		scope := s
		if k == "in" {
			scope = inner
		}
		if parts[i], err = c.compile(a, scope); err != nil {
			return nil, err
		}
	}
	valueSlot, thisSlot := inner.slot("value"), inner.slot("this")
	return &Expr{eval: func(st *state) (bson.RawValue, error) {
		in, err := parts[0].eval(st)
		if err != nil || isNullish(in) {
			return nullValue, err
		}
		if in.Type != bson.TypeArray {
			return missing, mongoerr.New(mongoerr.ReduceInputNotArray, "$reduce requires that 'input' be an array, found: %s", values.ValueString(in))
		}
		acc, err := parts[1].eval(st)
		if err != nil {
			return missing, err
		}
		it := rawdoc.Iterate(in.Value)
		for {
			_, e, ok := it.Next()
			if !ok {
				return acc, nil
			}
			st.vars[valueSlot], st.vars[thisSlot] = acc, e
			if acc, err = parts[2].eval(st); err != nil {
				return missing, err
			}
		}
	}}, nil
}

// compileZip is $zip: {inputs, useLongestLength, defaults}: arrays of the
// i-th elements of each input; null if an input is null or missing. It does
// not fold: ExpressionZip::optimize optimizes its operands only, so an input
// that is a constant non-array fails each evaluation, not the optimization.
func compileZip(c *compiler, name string, v bson.RawValue, s *Scope) (*Expr, error) {
	if v.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.ZipSpecNotObject, "$zip only supports an object as an argument, found %s", typeName(v))
	}
	args, err := namedArgs(name, v, mongoerr.ZipSpecNotObject, mongoerr.ZipUnknownArgument, "inputs", "useLongestLength", "defaults")
	if err != nil {
		return nil, err
	}
	inputs, ok := args["inputs"]
	if !ok {
		return nil, mongoerr.New(mongoerr.ZipMissingInputs, "$zip requires at least one input array")
	}
	if inputs.Type != bson.TypeArray {
		return nil, mongoerr.New(mongoerr.ZipInputsNotArray, "inputs must be an array of expressions, found %s", typeName(inputs))
	}
	longest := false
	if l, ok := args["useLongestLength"]; ok {
		if l.Type != bson.TypeBoolean {
			return nil, mongoerr.New(mongoerr.ZipUseLongestLengthNotBool, "useLongestLength must be a bool, found %s", typeName(l))
		}
		longest = l.Boolean()
	}
	var ins, defs []*Expr
	for _, e := range elems(inputs) {
		x, err := c.compile(e, s)
		if err != nil {
			return nil, err
		}
		ins = append(ins, x)
	}
	if len(ins) == 0 {
		return nil, mongoerr.New(mongoerr.ZipMissingInputs, "$zip requires at least one input array")
	}
	if d, ok := args["defaults"]; ok {
		if d.Type != bson.TypeArray {
			return nil, mongoerr.New(mongoerr.ZipDefaultsNotArray, "defaults must be an array of expressions, found %s", typeName(d))
		}
		if !longest {
			return nil, mongoerr.New(mongoerr.ZipDefaultsWithoutUseLongestLength, "cannot specify defaults unless useLongestLength is true")
		}
		for _, e := range elems(d) {
			x, err := c.compile(e, s)
			if err != nil {
				return nil, err
			}
			defs = append(defs, x)
		}
		if len(defs) != len(ins) {
			return nil, mongoerr.New(mongoerr.ZipDefaultsLengthMismatch, "defaults and inputs must have the same length")
		}
	}
	return &Expr{eval: func(st *state) (bson.RawValue, error) {
		arrays := make([][]bson.RawValue, len(ins))
		shortest, longestLen := -1, -1
		for i, x := range ins {
			a, err := x.eval(st)
			if err != nil {
				return missing, err
			}
			if isNullish(a) {
				return nullValue, nil
			}
			if a.Type != bson.TypeArray {
				return missing, mongoerr.New(mongoerr.ZipInputNotArray, "$zip found a non-array expression in input: %s", values.ValueString(a))
			}
			arrays[i] = elems(a)
			if l := len(arrays[i]); shortest < 0 {
				shortest, longestLen = l, l
			} else {
				shortest, longestLen = min(shortest, l), max(longestLen, l)
			}
		}
		n := shortest
		if longest {
			n = longestLen
		}
		// MongoDB's ExpressionZip::evaluate evaluates the defaults only
		// when the inputs differ in length, so a failing default fails
		// nothing otherwise.
		fill := make([]bson.RawValue, len(ins))
		for i := range fill {
			fill[i] = nullValue
			if defs != nil && shortest != longestLen {
				d, err := defs[i].eval(st)
				if err != nil {
					return missing, err
				}
				fill[i] = d
			}
		}
		out := make([]bson.RawValue, n)
		for j := range out {
			row := make([]bson.RawValue, len(ins))
			for i, a := range arrays {
				if j < len(a) {
					row[i] = a[j]
				} else {
					row[i] = fill[i]
				}
			}
			out[j] = arrayValue(row)
		}
		return arrayValue(out), nil
	}}, nil
}

// sortSpec is a $sortArray sortBy: a direction for whole elements, or
// dotted field paths with directions.
type sortSpec struct {
	dir    int
	fields []string
	dirs   []int
	coll   *collation.Collator
}

// compare orders two elements as MongoDB's PatternValueCmp: by whole value,
// or by the key extractElementsBasedOnTemplate makes of each element, the
// value at each path as extractElementAtPath finds it (arrays are not
// traversed; a position part indexes one), null when there is none or the
// element is not a document.
func (p *sortSpec) compare(a, b bson.RawValue) int {
	if p.fields == nil {
		return p.dir * p.coll.Compare(a, b)
	}
	for i, f := range p.fields {
		if c := p.coll.Compare(sortArrayKey(a, f), sortArrayKey(b, f)); c != 0 {
			return p.dirs[i] * c
		}
	}
	return 0
}

func sortArrayKey(v bson.RawValue, path string) bson.RawValue {
	if v.Type == bson.TypeEmbeddedDocument {
		if k := rawdoc.ElementAtPath(v.Value, path); k.Type != 0 {
			return k
		}
	}
	return nullValue
}

// sortDirection reads 1 or -1.
func sortDirection(v bson.RawValue) (int, bool) {
	n, ok := values.Int64(v)
	if !isNumber(v) || !ok || (n != 1 && n != -1) {
		return 0, false
	}
	return int(n), true
}

// compileSortArray is $sortArray: {input, sortBy}, a stable sort of the
// input array by value (sortBy 1 or -1) or by document fields.
func compileSortArray(c *compiler, name string, v bson.RawValue, s *Scope) (*Expr, error) {
	if v.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.SortArraySpecNotObject, "$sortArray requires an object as an argument, found: %s", typeName(v))
	}
	args, err := namedArgs(name, v, mongoerr.SortArraySpecNotObject, mongoerr.SortArrayUnknownArgument, "input", "sortBy")
	if err != nil {
		return nil, err
	}
	in, ok := args["input"]
	if !ok {
		return nil, mongoerr.New(mongoerr.SortArrayMissingInput, "$sortArray requires 'input' to be specified")
	}
	by, ok := args["sortBy"]
	if !ok {
		return nil, mongoerr.New(mongoerr.SortArrayMissingSortBy, "$sortArray requires 'sortBy' to be specified")
	}
	spec := &sortSpec{coll: s.Collator()}
	if by.Type == bson.TypeEmbeddedDocument {
		it := rawdoc.Iterate(by.Value)
		for {
			k, dv, ok := it.Next()
			if !ok {
				break
			}
			d, ok := sortDirection(dv)
			_, err := SplitPath(string(k))
			if !ok || err != nil {
				return nil, mongoerr.New(mongoerr.SortKeyOrderInvalid, "$sort key ordering must be 1 (for ascending) or -1 (for descending)")
			}
			spec.fields = append(spec.fields, string(k))
			spec.dirs = append(spec.dirs, d)
		}
		if spec.fields == nil {
			return nil, mongoerr.New(mongoerr.SortSpecEmpty, "$sortArray sortBy must not be empty")
		}
	} else if spec.dir, ok = sortDirection(by); !ok {
		return nil, mongoerr.New(mongoerr.SortArraySortByInvalid, "$sortArray sortBy must be 1, -1 or a sort specification document")
	}
	input, err := c.compile(in, s)
	if err != nil {
		return nil, err
	}
	return c.fold([]*Expr{input}, func(st *state) (bson.RawValue, error) {
		a, err := input.eval(st)
		if err != nil || isNullish(a) {
			return nullValue, err
		}
		if a.Type != bson.TypeArray {
			return missing, mongoerr.New(mongoerr.SortArrayInputNotArray, "The input argument to $sortArray must be an array, but was of type: %s", typeName(a))
		}
		vals := elems(a)
		slices.SortStableFunc(vals, spec.compare)
		return arrayValue(vals), nil
	})
}

// KeepExtremeN adds v to kept, the at most n values $minN (largest false)
// or $maxN (largest true) holds, in its output order, as MongoDB's
// AccumulatorMinMaxN holds them in a multiset under the collation: equal
// values in arrival order, read ascending for $minN and descending (so the
// later of equal values first) for $maxN. When n are held, v replaces the
// last one only if it strictly precedes it; otherwise v is dropped. It
// returns the held values, the one evicted (Type 0 if none) and whether v
// was added.
func KeepExtremeN(kept []bson.RawValue, v bson.RawValue, n int64, largest bool, coll *collation.Collator) ([]bson.RawValue, bson.RawValue, bool) {
	order := func(a, b bson.RawValue) int {
		if largest {
			return coll.Compare(b, a)
		}
		return coll.Compare(a, b)
	}
	// after is the number of held values v does not precede.
	after := sort.Search(len(kept), func(i int) bool { return order(kept[i], v) > 0 })
	if int64(len(kept)) >= n && int64(after) >= n {
		return kept, bson.RawValue{}, false
	}
	at := after
	if largest {
		at = sort.Search(len(kept), func(i int) bool { return order(kept[i], v) >= 0 })
	}
	var evicted bson.RawValue
	if int64(len(kept)) >= n {
		evicted = kept[len(kept)-1]
		kept = kept[:len(kept)-1]
	}
	return slices.Insert(kept, at, v), evicted, true
}

// nKind selects which n elements $firstN, $lastN, $maxN and $minN keep.
type nKind int

const (
	nFirst nKind = iota
	nLast
	nMax
	nMin
)

// NValue checks the n of the N accumulators, window functions and
// expressions ($firstN, $minN, $topN...) as MongoDB's AccumulatorN::validateN:
// a number (5787902), converted by Value::coerceToLong (a double with no
// 64-bit integer, such as NaN or 1e300, fails there with 31109), whose
// integer equals the number as a double (5787903), greater than 0
// (5787908); 5787902 and 5787903 show n as Value::toString does.
func NValue(v bson.RawValue) (int64, error) {
	if !isNumber(v) {
		return 0, mongoerr.New(mongoerr.AccumulatorNNotNumeric, "Value for 'n' must be of integral type, but found %s", values.ValueString(v))
	}
	n, err := coerceToLong(v)
	if err != nil {
		return 0, err
	}
	if f, _ := values.Float64(v); float64(n) != f {
		return 0, mongoerr.New(mongoerr.AccumulatorNNotIntegral, "Value for 'n' must be of integral type, but found %s", values.ValueString(v))
	}
	if n <= 0 {
		return 0, mongoerr.New(mongoerr.AccumulatorNNotPositive, "'n' must be greater than 0, found %d", n)
	}
	return n, nil
}

// NArgs reads {input, n}, the argument of $firstN, $lastN, $maxN and $minN
// both as accumulators and as expressions, as MongoDB's
// AccumulatorN::parseArgs does: an object (5787900 for $minN and $maxN,
// 5787801 for $firstN and $lastN, the message naming the operator and its
// argument as "<op>: <value>"), each field compiled in order and any
// other failing (5787901), then n (5787906) and input (5787907) present.
func NArgs(op string, v bson.RawValue, compile func(bson.RawValue) (*Expr, error)) (input, n *Expr, err error) {
	if v.Type != bson.TypeEmbeddedDocument {
		code := mongoerr.FirstLastNSpecNotObject
		if op == "$minN" || op == "$maxN" {
			code = mongoerr.MinMaxNSpecNotObject
		}
		return nil, nil, mongoerr.New(code, "specification must be an object; found %s: %s", op, v)
	}
	it := rawdoc.Iterate(v.Value)
	for {
		k, fv, ok := it.Next()
		if !ok {
			break
		}
		switch string(k) {
		case "input":
			input, err = compile(fv)
		case "n":
			n, err = compile(fv)
		default:
			return nil, nil, mongoerr.New(mongoerr.AccumulatorNUnknownArgument, "Unknown argument for 'n' operator: %s", k)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	if n == nil {
		return nil, nil, mongoerr.New(mongoerr.AccumulatorNMissingN, "Missing value for 'n'")
	}
	if input == nil {
		return nil, nil, mongoerr.New(mongoerr.AccumulatorNMissingInput, "Missing value for 'input'")
	}
	return input, n, nil
}

// compileN builds the array forms of $firstN, $lastN, $maxN and $minN:
// {input, n}. $maxN and $minN skip null and missing elements. n must be a
// positive integer (see NValue). As MongoDB's parser, a missing n is
// reported before a missing input. The input must be an array: null and
// missing are refused like any other non-array (5788200), not passed as null.
func compileN(op string, kind nKind) opCompiler {
	return func(c *compiler, name string, v bson.RawValue, s *Scope) (*Expr, error) {
		input, nExpr, err := NArgs(op, v, func(v bson.RawValue) (*Expr, error) { return c.compile(v, s) })
		if err != nil {
			return nil, err
		}
		return c.fold([]*Expr{input, nExpr}, func(st *state) (bson.RawValue, error) {
			nv, err := nExpr.eval(st)
			if err != nil {
				return missing, err
			}
			n, err := NValue(nv)
			if err != nil {
				return missing, err
			}
			a, err := input.eval(st)
			if err != nil {
				return missing, err
			}
			if a.Type != bson.TypeArray {
				return missing, mongoerr.New(mongoerr.NExpressionInputNotArray, "Input must be an array")
			}
			vals := elems(a)
			switch kind {
			case nLast:
				vals = vals[max(len(vals)-int(min(n, int64(len(vals)))), 0):]
			case nMax, nMin:
				var kept []bson.RawValue
				for _, e := range vals {
					if !isNullish(e) {
						kept, _, _ = KeepExtremeN(kept, e, n, kind == nMax, s.Collator())
					}
				}
				return arrayValue(kept), nil
			}
			return arrayValue(vals[:min(int64(len(vals)), n)]), nil
		})
	}
}
