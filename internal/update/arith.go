package update

import (
	"bytes"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// arithOp is $inc (mul false) or $mul: numeric arithmetic with MongoDB's type
// promotion. A missing field is created with the operand ($inc) or with a
// zero of the operand's type ($mul).
type arithOp struct {
	val bson.RawValue
	mul bool
}

func (o arithOp) name() string {
	if o.mul {
		return "$mul"
	}
	return "$inc"
}

func parseArith(path string, v bson.RawValue, mul bool) (leaf, error) {
	if !values.IsNumber(v.Type) {
		verb := "increment"
		if mul {
			verb = "multiply"
		}
		return nil, mongoerr.New(mongoerr.TypeMismatch, "Cannot %s with non-numeric argument: {%s}",
			verb, values.ShellElement(path, v))
	}
	return arithOp{val: v, mul: mul}, nil
}

func (o arithOp) apply(c *applyCtx, s *slot) error {
	if s.n == nil {
		v := o.val
		if o.mul {
			v, _ = values.Multiply(values.Int32Value(0), o.val)
		}
		return c.set(s, rawNode(v), false)
	}
	if !values.IsNumber(s.n.t) {
		return mongoerr.New(mongoerr.TypeMismatch,
			"Cannot apply %s to a value of non-numeric type. {%s} has the field '%s' of non-numeric type %s",
			o.name(), c.idString(), s.name, values.TypeName(s.n.t))
	}
	cur := s.n.value()
	var v bson.RawValue
	var ok bool
	if o.mul {
		v, ok = values.Multiply(cur, o.val)
	} else {
		v, ok = values.Add(cur, o.val)
	}
	if !ok {
		return mongoerr.New(mongoerr.BadValue,
			"Failed to apply %s operations to current value (%s) for document {%s}",
			o.name(), safeNumString(cur), c.idString())
	}
	if identicalNumbers(cur, v) {
		return nil
	}
	if cur.Type == v.Type && bytes.Equal(cur.Value, v.Value) {
		// A NaN stays NaN: not identical, so MongoDB counts and logs
		// a change of the same bytes.
		c.forced = true
		return c.modified(s, 0)
	}
	return c.set(s, rawNode(v), false)
}

// identicalNumbers reports whether a $inc or $mul result equals the value it
// replaces in type and number, which makes the update a no-op that keeps
// the value's form (SafeNum::isIdentical): -0.0 incremented by 0 stays
// -0.0, and a decimal keeps its trailing zeros. NaN is identical to nothing.
func identicalNumbers(cur, next bson.RawValue) bool {
	return cur.Type == next.Type && !values.IsNaN(cur) && !values.IsNaN(next) && values.Compare(cur, next) == 0
}

// idString is the document's _id as MongoDB prints it in messages.
func (c *applyCtx) idString() string {
	if id := c.root.lookup("_id"); id != nil {
		return values.ShellElement("_id", id.value())
	}
	return ""
}

// safeNumString prints a number as MongoDB's SafeNum::debugString.
func safeNumString(v bson.RawValue) string {
	names := map[bson.Type]string{bson.TypeInt32: "NumberInt", bson.TypeInt64: "NumberLong",
		bson.TypeDouble: "NumberDouble", bson.TypeDecimal128: "NumberDecimal"}
	return "(" + names[v.Type] + ")" + values.Shell(v)
}

// bitOp is $bit: a sequence of and/or/xor operations on an int32 or int64.
// A missing field starts from int32 0.
type bitOp struct {
	ops []bitStep
}

type bitStep struct {
	kind    string
	operand bson.RawValue
}

func parseBit(path string, v bson.RawValue) (leaf, error) {
	if v.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.BadValue,
			"The $bit modifier is not compatible with a %s. You must pass in an embedded document: {$bit: {field: {and/or/xor: #}}",
			values.TypeName(v.Type))
	}
	elems, _ := v.Document().Elements()
	var op bitOp
	for _, e := range elems {
		k := e.Key()
		if k != "and" && k != "or" && k != "xor" {
			return nil, mongoerr.New(mongoerr.BadValue,
				"The $bit modifier only supports 'and', 'or', and 'xor', not '%s' which is an unknown operator: {%s}",
				k, values.ShellElement(k, e.Value()))
		}
		if t := e.Value().Type; t != bson.TypeInt32 && t != bson.TypeInt64 {
			return nil, mongoerr.New(mongoerr.BadValue,
				"The $bit modifier field must be an Integer(32/64 bit); a '%s' is not supported here: {%s}",
				values.TypeName(t), values.ShellElement(k, e.Value()))
		}
		op.ops = append(op.ops, bitStep{kind: k, operand: e.Value()})
	}
	if len(op.ops) == 0 {
		return nil, mongoerr.New(mongoerr.BadValue,
			"You must pass in at least one bitwise operation. The format is: {$bit: {field: {and/or/xor: #}}")
	}
	return op, nil
}

func (o bitOp) apply(c *applyCtx, s *slot) error {
	cur := values.Int32Value(0)
	if s.n != nil {
		if s.n.t != bson.TypeInt32 && s.n.t != bson.TypeInt64 {
			return mongoerr.New(mongoerr.BadValue,
				"Cannot apply $bit to a value of non-integral type.%s has the field %s of non-integer type %s",
				c.idString(), s.name, values.TypeName(s.n.t))
		}
		cur = s.n.value()
	}
	for _, st := range o.ops {
		cur = bitwise(st.kind, cur, st.operand)
	}
	return c.set(s, rawNode(cur), false)
}

// bitwise applies one operation; int32 with int32 stays int32, anything
// involving an int64 gives an int64.
func bitwise(kind string, a, b bson.RawValue) bson.RawValue {
	x, y := intOf(a), intOf(b)
	var r int64
	switch kind {
	case "and":
		r = x & y
	case "or":
		r = x | y
	default:
		r = x ^ y
	}
	if a.Type == bson.TypeInt32 && b.Type == bson.TypeInt32 {
		return values.Int32Value(int32(r))
	}
	return values.Int64Value(r)
}

func intOf(v bson.RawValue) int64 {
	if v.Type == bson.TypeInt32 {
		return int64(v.Int32())
	}
	return v.Int64()
}
