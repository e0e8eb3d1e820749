package expr

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/js"
	"github.com/folio-db/folio/internal/mongoerr"
)

// Let is a command's let variables, bound: the scope its expressions
// compile in and the context they evaluate in.
type Let struct {
	Scope *Scope
	Ctx   *Context
	// scope, ctx and js are where Scope, Ctx and Ctx.JS point: a command
	// binds its variables in one allocation.
	scope Scope
	ctx   Context
	js    js.Op
}

// SetJS makes op the operation's script context (Ctx.JS).
func (l *Let) SetJS(op js.Op) {
	l.js = op
	l.Ctx.JS = &l.js
}

// emptyDocument is {}, what a let expression evaluates against.
var emptyDocument = bson.Raw{5, 0, 0, 0, 0}

// systemVariables are the system variables a command's let may set, but
// only from an internal client (MongoDB's kSystemVarValidators).
var systemVariables = map[string]bool{"NOW": true, "CLUSTER_TIME": true, "JS_SCOPE": true, "IS_MR": true, "USER_ROLES": true}

// validateLetName checks the name of a command's let variable before its
// expression is parsed, as MongoDB's Variables::seedVariablesWithLetParameters
// does: a name refused by ValidateVarName fails with the context "Invalid
// 'let' parameter", unless it names a system variable, which a client
// may not set (4738901).
func validateLetName(name string) error {
	err := ValidateVarName(name)
	switch {
	case err == nil:
		return nil
	case systemVariables[name]:
		return mongoerr.New(mongoerr.LetSetsInternalConstant, "Attempt to set internal constant: %s", name)
	}
	return mongoerr.AddContext(err, "Invalid 'let' parameter")
}

// Bind evaluates a command's let document ({name: expression, ...}) once,
// in order, each expression seeing the variables bound before it, as
// MongoDB seeds a command's variables, under the operation's clock; the
// variables are constants of the expressions compiled in Scope. An
// expression that reads a document (a field path, $$ROOT, $$CURRENT) is
// refused, as no document is there yet. A nil let binds nothing.
func Bind(let bson.Raw, clock Clock) (*Let, error) {
	l := &Let{ctx: Context{Clock: clock}}
	l.Ctx = &l.ctx
	ctx := l.Ctx
	var names []string
	if len(let) > 0 {
		elems, err := let.Elements()
		if err != nil {
			return nil, mongoerr.New(mongoerr.InvalidBSON, "invalid let document: %v", err)
		}
		for _, el := range elems {
			if err := validateLetName(el.Key()); err != nil {
				return nil, err
			}
			e, c, err := compileRoot(el.Value(), NewScope(names...))
			if err != nil {
				return nil, err
			}
			if c.readsDoc {
				return nil, mongoerr.New(mongoerr.LetReadsDocument, "Command let Expression tried to access a field, but this is not allowed because command let expressions run before the query examines any documents.")
			}
			v, err := e.Eval(ctx, emptyDocument)
			if err != nil {
				return nil, err
			}
			if ctx.Vars == nil {
				ctx.Vars = make(map[string]bson.RawValue, len(elems))
			}
			ctx.Vars[el.Key()] = v
			names = append(names, el.Key())
		}
	}
	l.scope.init(nil, names)
	l.scope.consts = ctx.Vars
	l.Scope = &l.scope
	return l, nil
}
