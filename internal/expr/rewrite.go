package expr

import "go.mongodb.org/mongo-driver/v2/bson"

// form is the shape of an expression Rewrite translates: a comparison,
// $and or $or (op and its operands args), or a reference to the caller's
// variable named variable, read at path.
type form struct {
	op       string
	args     []*Expr
	variable string
	path     []string
}

// Cond is a condition of the match language that every document for which
// an expression is true meets (MongoDB's RewriteExpr): Op is "$and" or
// "$or" over Conds, or one of "$eq", "$gt", "$gte", "$lt", "$lte"
// comparing the field at Path with Value in the expression language's
// order (no type bracketing). The expression stays the judge: a Cond
// only narrows the documents it reads, through an index.
type Cond struct {
	Op    string
	Path  string
	Value bson.RawValue
	Conds []Cond
}

// Rewrite returns the condition e implies, as MongoDB's RewriteExpr
// derives it: a comparison of a field path of the current document with
// a value known before any document is read (a constant, or a variable
// ctx supplies; nil ctx: constants only) that is not an array, missing or
// undefined; an $and of the operands that rewrite (the others dropped);
// an $or whose operands all rewrite. ok is false when nothing rewrites.
func (e *Expr) Rewrite(ctx *Context) (c Cond, ok bool) {
	f := e.form
	if f == nil {
		return Cond{}, false
	}
	switch f.op {
	case "$and", "$or":
		for _, a := range f.args {
			ac, ok := a.Rewrite(ctx)
			if ok {
				c.Conds = append(c.Conds, ac)
			} else if f.op == "$or" {
				return Cond{}, false
			}
		}
		c.Op = f.op
		return c, len(c.Conds) > 0
	case "$eq", "$gt", "$gte", "$lt", "$lte":
	default:
		return Cond{}, false
	}
	op := f.op
	field, other := f.args[0], f.args[1]
	if !field.isPath {
		field, other = other, field
		op = mirrored[op]
	}
	if !field.isPath {
		return Cond{}, false
	}
	v, known := other.known(ctx)
	switch {
	case !known:
		return Cond{}, false
	case v.Type == 0, v.Type == bson.TypeArray, v.Type == bson.TypeUndefined:
		return Cond{}, false
	}
	return Cond{Op: op, Path: field.path, Value: v}, true
}

// mirrored is the comparison with its operands swapped: {$gt: [1, "$x"]}
// is {x: {$lt: 1}}.
var mirrored = map[string]string{"$eq": "$eq", "$gt": "$lt", "$gte": "$lte", "$lt": "$gt", "$lte": "$gte"}

// known is e's value when it does not depend on the document: a constant,
// or a variable ctx supplies.
func (e *Expr) known(ctx *Context) (bson.RawValue, bool) {
	switch {
	case e.constant:
		return e.value, true
	case e.form == nil || e.form.variable == "" || ctx == nil:
		return bson.RawValue{}, false
	}
	v, ok := ctx.Vars[e.form.variable]
	if !ok {
		return bson.RawValue{}, false
	}
	return WalkPath(v, e.form.path), true
}
