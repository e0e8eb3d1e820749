package query

import (
	"time"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/values"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// exprMatch is a compiled {$expr: <expression>} clause. $$NOW is fixed when
// the filter is compiled, so it is the same for every document of one
// query, as in MongoDB.
type exprMatch struct {
	e   *expr.Expr
	ctx *expr.Context
}

// parseExpr compiles the operand of $expr as an aggregation expression in
// the scope of the command's let variables (the root scope when let is
// nil), its comparisons following the filter's collation.
func parseExpr(v bson.RawValue, let *expr.Let, coll *collation.Collator) (*Node, error) {
	scope, ctx := expr.NewScope(), &expr.Context{Clock: expr.Clock{Now: time.Now()}}
	if let != nil {
		scope, ctx = let.Scope, let.Ctx
	}
	if coll != nil {
		scope = scope.Collated(coll)
	}
	e, err := expr.Compile(v, scope)
	if err != nil {
		return nil, err
	}
	return &Node{Kind: KindExpr, Value: v, expr: &exprMatch{e: e, ctx: ctx}}, nil
}

// exprFailure carries an evaluation error out of a match: MongoDB fails the
// whole query when $expr fails on a document (a $divide by zero, a type
// error), so the error unwinds to MatchErr.
type exprFailure struct{ err error }

// matches reports whether the expression is truthy for doc: false, null,
// missing, undefined and numeric zero (of any type, decimal zeros with any
// exponent included) are false, everything else is true.
func (m *exprMatch) matches(doc []byte) bool {
	v, err := m.e.Eval(m.ctx, doc)
	if err != nil {
		panic(exprFailure{err})
	}
	return values.Truthy(v)
}
