package commands

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/js"
)

// withScripts gives a command's variables (a fresh empty binding when it
// has none) the operation's script context, so $where, $function and
// $accumulator run under ctx (the command's binding, which getMores
// rebind) and the server's javascriptEnabled setting, in VMs pooled for
// the request's database and user (scriptPool).
func (s *Service) withScripts(let *expr.Let, r *Request, ctx context.Context) *expr.Let {
	if let == nil {
		let, _ = expr.Bind(nil, s.exprClock(r))
	}
	let.SetJS(js.Op{Engine: s.JS, Ctx: ctx, Pool: scriptPool(r), DB: r.DB})
	return let
}

// scriptVars binds a command's let document (nil: none) with the
// operation's script context.
func (s *Service) scriptVars(let bson.Raw, r *Request, ctx context.Context) (*expr.Let, error) {
	l, err := expr.Bind(let, s.exprClock(r))
	if err != nil {
		return nil, err
	}
	return s.withScripts(l, r, ctx), nil
}

// scriptPool names the VMs a request's scripts may share: those of its
// database and authenticated user, as MongoDB pools its script scopes, so
// globals a script leaves behind are seen by no other user or database.
func scriptPool(r *Request) string {
	key := r.DB
	if r.Conn != nil {
		r.Conn.auth.mu.Lock()
		if u := r.Conn.auth.user; u != nil {
			key += "\x00" + u.name.String()
		}
		r.Conn.auth.mu.Unlock()
	}
	return key
}
