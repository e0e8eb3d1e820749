package commands

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/js"
)

// withScripts gives a command's variables (a fresh empty binding when it
// has none) the operation's script context, so $where, $function and
// $accumulator run under ctx (the command's binding, which getMores
// rebind) and the server's javascriptEnabled setting.
func (s *Service) withScripts(let *expr.Let, ctx context.Context) *expr.Let {
	if let == nil {
		let, _ = expr.Bind(nil, time.Now())
	}
	let.Ctx.JS = &js.Op{Engine: s.JS, Ctx: ctx}
	return let
}

// scriptVars binds a command's let document (nil: none) with the
// operation's script context.
func (s *Service) scriptVars(let bson.Raw, ctx context.Context) (*expr.Let, error) {
	l, err := expr.Bind(let, time.Now())
	if err != nil {
		return nil, err
	}
	return s.withScripts(l, ctx), nil
}
