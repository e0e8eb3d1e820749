package expr

import (
	"github.com/folio-db/folio/internal/js"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
	"go.mongodb.org/mongo-driver/v2/bson"
)

func init() {
	register(map[string]opCompiler{"$function": compileFunction})
}

// compileFunction compiles {$function: {body, args, lang: "js"}}: body a
// constant string or code, args an expression evaluating to the array of
// arguments. The function runs with this bound to an empty object, in
// the operation's script context; without one, or with JavaScript
// disabled, it fails when evaluated, as MongoDB's does.
func compileFunction(c *compiler, name string, v bson.RawValue, s *Scope) (*Expr, error) {
	if s != nil && s.validator {
		return nil, mongoerr.New(mongoerr.FunctionInValidator, "$function cannot be used inside a validator.")
	}
	if v.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.FunctionNotObject, "$function requires an object as an argument, found: %s", typeName(v))
	}
	doc := v.Value
	body := rawdoc.Lookup(doc, "body")
	if body.Type == 0 {
		return nil, mongoerr.New(mongoerr.FunctionNoBody, "The body function must be specified.")
	}
	be, err := c.compile(body, s)
	if err != nil {
		return nil, err
	}
	if !be.constant {
		return nil, mongoerr.New(mongoerr.FunctionBodyNotConstant, "The body function must be a constant expression")
	}
	var src string
	switch bv := be.value; bv.Type {
	case bson.TypeString:
		src = bv.StringValue()
	case bson.TypeJavaScript:
		src = bv.JavaScript()
	default:
		return nil, mongoerr.New(mongoerr.FunctionBodyType, "The body function must evaluate to type string or code")
	}
	argsV := rawdoc.Lookup(doc, "args")
	if argsV.Type == 0 {
		return nil, mongoerr.New(mongoerr.FunctionNoArgs, "The args field must be specified.")
	}
	args, err := c.compile(argsV, s)
	if err != nil {
		return nil, err
	}
	lang := rawdoc.Lookup(doc, "lang")
	if lang.Type == 0 {
		return nil, mongoerr.New(mongoerr.FunctionNoLang, "The lang field must be specified.")
	}
	if l, isStr := str(lang); !isStr || l != "js" {
		return nil, mongoerr.New(mongoerr.FunctionLangNotJS, "Currently the only supported language specifier is 'js'.")
	}
	f, err := js.Compile(src)
	if err != nil {
		return nil, err
	}
	return &Expr{eval: func(st *state) (bson.RawValue, error) {
		op, err := Script(st.ctx)
		if err != nil {
			return missing, err
		}
		av, err := args.eval(st)
		if err != nil {
			return missing, err
		}
		if av.Type != bson.TypeArray {
			return missing, mongoerr.New(mongoerr.FunctionArgsNotArray, "The args field must be of type array")
		}
		return op.Call(f, nil, elems(av)...)
	}}, nil
}

// Script is ctx's script context, or MongoDB's error for JavaScript that
// cannot run ($function, $accumulator).
func Script(ctx *Context) (*js.Op, error) {
	if ctx == nil || !ctx.JS.Enabled() {
		return nil, mongoerr.New(mongoerr.FunctionNoScriptEngine, "Cannot run server-side javascript without the javascript engine enabled")
	}
	return ctx.JS, nil
}
