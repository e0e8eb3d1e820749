package query

import (
	"time"

	"github.com/folio-db/folio/internal/expr"
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
// the root scope.
func parseExpr(v bson.RawValue) (*Node, error) {
	e, err := expr.Compile(v, expr.NewScope())
	if err != nil {
		return nil, err
	}
	return &Node{Kind: KindExpr, Value: v, expr: &exprMatch{e: e, ctx: &expr.Context{Now: time.Now()}}}, nil
}

// matches reports whether the expression is truthy for doc: false, null,
// missing, undefined and numeric zero (of any type, decimal zeros with any
// exponent included) are false, everything else is true.
// An evaluation error (a $divide by zero, a type error) does not match.
func (m *exprMatch) matches(doc []byte) bool {
	v, err := m.e.Eval(m.ctx, doc)
	return err == nil && expr.Truthy(v)
}
