package query

import (
	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/js"
	"github.com/folio-db/folio/internal/mongoerr"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// whereMatch is a compiled {$where: <JavaScript>} clause, run with this
// and obj bound to the document in the operation's script context.
type whereMatch struct {
	f  *js.Func
	op *js.Op
}

// parseWhere compiles $where's operand: a string or JavaScript code
// (code with scope is refused, as MongoDB 4.4+ does). It needs the
// operation's script context from the command's let: a filter compiled
// without one ($match, validators, partial indexes) refuses $where as
// MongoDB does there; a server with JavaScript disabled answers MongoDB's
// "no globalScriptEngine".
func parseWhere(v bson.RawValue, let *expr.Let) (*Node, error) {
	var op *js.Op
	if let != nil && let.Ctx != nil {
		op = let.Ctx.JS
	}
	if op == nil {
		return nil, mongoerr.New(mongoerr.BadValue, "$where is not allowed in this context")
	}
	if !op.Enabled() {
		return nil, mongoerr.New(mongoerr.WhereNoScriptEngine, "no globalScriptEngine in $where parsing")
	}
	var src string
	switch v.Type {
	case bson.TypeString:
		src = v.StringValue()
	case bson.TypeJavaScript:
		src = v.JavaScript()
	case bson.TypeCodeWithScope:
		return nil, mongoerr.New(mongoerr.BadValue, "$where no longer supports deprecated BSON type CodeWScope")
	default:
		return nil, mongoerr.New(mongoerr.BadValue, "$where got bad type")
	}
	f, err := js.Compile(src)
	if err != nil {
		return nil, err
	}
	// $where's scope holds the database's stored functions (system.js).
	if err := op.LoadStored(); err != nil {
		return nil, err
	}
	return &Node{Kind: KindWhere, Value: v, where: &whereMatch{f: f, op: op}}, nil
}

// matches runs the function on doc; a script failure fails the query.
func (m *whereMatch) matches(doc []byte) bool {
	ok, err := m.op.Test(m.f, doc)
	if err != nil {
		panic(exprFailure{err})
	}
	return ok
}
