// Package expr implements MongoDB's aggregation expression language over raw
// BSON documents: field paths ("$a.b"), variables ("$$var.path"), literals,
// operator documents ({$op: args}) and documents and arrays of expressions.
// An expression is compiled once (Compile) and evaluated many times (Eval);
// a compiled *Expr is immutable and safe for concurrent use.
package expr

import (
	"time"

	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/js"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Context carries evaluation-time state: the operation's clock ($$NOW,
// $$CLUSTER_TIME) and the values of user variables (the names given to
// NewScope or Scope.With by the caller).
type Context struct {
	Clock
	Vars map[string]bson.RawValue
	// JS runs the operation's server-side JavaScript ($function,
	// $accumulator, $where); nil where scripts are not available.
	JS *js.Op
	// Meta is the metadata of the document being evaluated ($meta), set
	// by the pipeline stage evaluating it; nil: none.
	Meta *docsrc.Meta
}

// Clock is what an operation's expressions read as its runtime constants,
// fixed when the operation starts so that every document sees the same
// values: Now is $$NOW (the zero time: the time of evaluation) and
// ClusterTime $$CLUSTER_TIME, a timestamp, which a deployment without a
// cluster clock (a standalone) does not have (zero). UserRoles is
// $$USER_ROLES, the roles of the operation's user as {_id: "db.role",
// role, db} documents (zero: none, the empty array).
type Clock struct {
	Now         time.Time
	ClusterTime bson.RawValue
	UserRoles   bson.RawValue
}

// state is the per-evaluation environment: the document bound to $$ROOT and
// $$CURRENT and the slots of variables bound inside the expression ($let,
// $map, $filter, $reduce, ...).
type state struct {
	ctx *Context
	// root is $$ROOT; cur is $$CURRENT, which field paths read: the same
	// document except under $redact (EvalAt).
	root, cur bson.RawValue
	vars      []bson.RawValue
}

// evalFn evaluates one compiled node.
type evalFn func(st *state) (bson.RawValue, error)

// Expr is a compiled expression.
type Expr struct {
	eval evalFn
	// constant marks an expression whose value does not depend on the
	// document, the variables or the clock; value is that value.
	constant bool
	value    bson.RawValue
	// path is set for a bare field path "$a.b" (without the "$").
	path   string
	isPath bool
	// parts is the split path of a field path from $$CURRENT, evaluated
	// without building an evaluation state.
	parts []string
	// slots is the number of variable slots an evaluation needs (root
	// expressions only).
	slots int
	// op and operands are set on an associative operator that is not
	// constant (foldAssociative): an operand of the same operator is
	// replaced by these operands.
	op       string
	operands []*Expr
	// form is what Rewrite reads: set on a comparison, $and and $or that
	// did not fold, and on a reference to a variable the caller supplies
	// (Context.Vars).
	form *form
}

// Eval evaluates e with $$ROOT = $$CURRENT = doc. A missing result is the
// zero bson.RawValue (Type 0); $$REMOVE evaluates to missing. A nil ctx
// evaluates with no user variables and the zero $$NOW.
func (e *Expr) Eval(ctx *Context, doc bson.Raw) (bson.RawValue, error) {
	if e.constant {
		return e.value, nil
	}
	root := bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}
	if e.parts != nil {
		return WalkPath(root, e.parts), nil
	}
	if ctx == nil {
		ctx = &Context{}
	}
	st := state{ctx: ctx, root: root, cur: root}
	if e.slots > 0 {
		st.vars = make([]bson.RawValue, e.slots)
	}
	return e.eval(&st)
}

// EvalAt evaluates e with $$ROOT = root and $$CURRENT = cur (field paths
// read cur), as $redact evaluates at each level of a document.
func (e *Expr) EvalAt(ctx *Context, root, cur bson.Raw) (bson.RawValue, error) {
	if e.constant {
		return e.value, nil
	}
	c := bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: cur}
	if e.parts != nil {
		return WalkPath(c, e.parts), nil
	}
	if ctx == nil {
		ctx = &Context{}
	}
	st := state{ctx: ctx, root: bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: root}, cur: c}
	if e.slots > 0 {
		st.vars = make([]bson.RawValue, e.slots)
	}
	return e.eval(&st)
}

// IsConstant reports whether e evaluates to the same value for every
// document and context.
func (e *Expr) IsConstant() bool { return e.constant }

// Constant is the value of a constant expression (see IsConstant).
func (e *Expr) Constant() bson.RawValue { return e.value }

// FieldPath reports whether e is a bare field path such as "$a.b", and the
// dotted path without the leading "$".
func (e *Expr) FieldPath() (string, bool) { return e.path, e.isPath }

// constExpr is an expression that always yields v.
func constExpr(v bson.RawValue) *Expr {
	return &Expr{
		eval:     func(*state) (bson.RawValue, error) { return v, nil },
		constant: true,
		value:    v,
	}
}
