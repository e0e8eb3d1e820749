package query

import (
	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// projExpr is a computed projection value (MongoDB 4.4+): any aggregation
// expression — a literal, a field path "$a.b", $$ROOT/$$CURRENT/$$REMOVE,
// {$literal: v}, an operator expression or an array of them — evaluated
// against the whole document.
type projExpr struct {
	e   *expr.Expr
	ctx *expr.Context // the command's let variables, or nil
	// metaCtx is ctx with the metadata of the document being projected,
	// for $meta.
	metaCtx expr.Context
}

// parseProjExpr compiles a computed field, in the scope of the command's
// let variables when let is not nil, comparing under coll.
func parseProjExpr(v bson.RawValue, let *expr.Let, coll *collation.Collator) (*projExpr, error) {
	if s, ok := v.StringValueOK(); ok && s == "$" {
		return nil, mongoerr.New(mongoerr.FieldPathDollarOnly, "'$' by itself is not a valid FieldPath")
	}
	var scope *expr.Scope
	var ctx *expr.Context
	if let != nil {
		scope, ctx = let.Scope, let.Ctx
	}
	if coll != nil {
		if scope == nil {
			scope = expr.NewScope()
		}
		scope = scope.Collated(coll)
	}
	e, err := expr.Compile(v, scope)
	if err != nil {
		return nil, err
	}
	p := &projExpr{e: e, ctx: ctx}
	if ctx != nil {
		p.metaCtx = *ctx
	}
	return p, nil
}

// eval computes the expression against the root document, whose metadata
// is meta (nil: none); ok is false when the result is missing (the field
// is then left out). An evaluation error fails the query, as in MongoDB.
func (p *projExpr) eval(root []byte, meta *docsrc.Meta) (bson.RawValue, bool, error) {
	ctx := p.ctx
	if meta != nil {
		p.metaCtx.Meta = meta
		ctx = &p.metaCtx
	}
	v, err := p.e.Eval(ctx, root)
	return v, err == nil && v.Type != 0, err
}
