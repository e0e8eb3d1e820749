package query

import (
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// exprMatch is a compiled {$expr: <expression>} clause. $$NOW is fixed when
// the filter is compiled, so it is the same for every document of one
// query, as in MongoDB.
type exprMatch struct {
	e   *expr.Expr
	ctx *expr.Context
}

// parseExpr compiles the operand of $expr as an aggregation expression in
// the scope of the command's let variables (the root scope when there are
// none), its comparisons following the filter's collation, in a
// validator's scope for a validator.
func parseExpr(v bson.RawValue, env *parseEnv) (*Node, error) {
	scope, ctx := expr.NewScope(), &expr.Context{Clock: expr.Clock{Now: time.Now()}}
	if env.let != nil {
		scope, ctx = env.let.Scope, env.let.Ctx
	}
	if env.coll != nil {
		scope = scope.Collated(env.coll)
	}
	if env.validator {
		scope = scope.InValidator()
	}
	e, err := expr.Compile(v, scope)
	if err != nil {
		return nil, err
	}
	return &Node{Kind: KindExpr, Value: v, expr: &exprMatch{e: e, ctx: ctx}}, nil
}

// parseSampleRate is {$sampleRate: rate}: each document matches with
// probability rate, as MongoDB rewrites it, {$expr: {$lt: [{$rand: {}},
// rate]}}, a constant false at 0 and true at 1.
func parseSampleRate(v bson.RawValue, env *parseEnv) (*Node, error) {
	if !values.IsNumber(v.Type) {
		return nil, mongoerr.New(mongoerr.BadValue, "argument to $sampleRate must be a numeric type")
	}
	rate, _ := values.Float64(v)
	var e bson.RawValue
	switch {
	case !(rate >= 0 && rate <= 1):
		return nil, mongoerr.New(mongoerr.BadValue, "numeric argument to $sampleRate must be in [0, 1]")
	case rate == 0 || rate == 1:
		e = bson.RawValue{Type: bson.TypeBoolean, Value: bsoncore.AppendBoolean(nil, rate == 1)}
	default:
		doc, err := bson.Marshal(bson.D{{Key: "$lt", Value: bson.A{bson.D{{Key: "$rand", Value: bson.D{}}}, rate}}})
		if err != nil {
			return nil, err
		}
		e = bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}
	}
	return parseExpr(e, env)
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
