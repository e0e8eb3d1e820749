package expr

import (
	"github.com/folio-db/folio/internal/js"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

func init() {
	register(map[string]opCompiler{"$function": compileFunction, "$_internalJsEmit": compileJsEmit})
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

// maxJsEmitBytes is MongoDB's internalQueryMaxJsEmitBytes: the most the
// values one $_internalJsEmit call emits may take.
const maxJsEmitBytes = 100 << 20

// compileJsEmit compiles {$_internalJsEmit: {eval, this}}, the expression
// MongoDB's mapReduce runs its map function with
// (ExpressionInternalJsEmit): eval, a string or code, is called with this
// bound to the document the expression this evaluates to, and the value
// is the array of the {k, v} documents it emitted, in order. It is not
// allowed in a validator (4660801). The emitted size is counted in BSON
// bytes of the {k, v} documents, where MongoDB counts its Documents'
// approximate sizes.
func compileJsEmit(c *compiler, name string, v bson.RawValue, s *Scope) (*Expr, error) {
	if s != nil && s.validator {
		return nil, mongoerr.New(mongoerr.JsEmitInValidator, "$_internalJsEmit cannot be used inside a validator.")
	}
	if v.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.JsEmitNotObject, "$_internalJsEmit requires an object as an argument, found: %s", typeName(v))
	}
	var src string
	switch ev := rawdoc.Lookup(v.Value, "eval"); ev.Type {
	case 0:
		return nil, mongoerr.New(mongoerr.JsEmitNoEval, "The map function must be specified.")
	case bson.TypeString:
		src = ev.StringValue()
	case bson.TypeJavaScript:
		src = ev.JavaScript()
	default:
		return nil, mongoerr.New(mongoerr.JsEmitEvalType, "The map function must be of type string or code")
	}
	thisV := rawdoc.Lookup(v.Value, "this")
	if thisV.Type == 0 {
		return nil, mongoerr.New(mongoerr.JsEmitNoThis, "$_internalJsEmit requires 'this' to be specified")
	}
	this, err := c.compile(thisV, s)
	if err != nil {
		return nil, err
	}
	f, err := js.Compile(src)
	if err != nil {
		return nil, err
	}
	return &Expr{eval: func(st *state) (bson.RawValue, error) {
		tv, err := this.eval(st)
		if err != nil {
			return missing, err
		}
		if tv.Type != bson.TypeEmbeddedDocument {
			return missing, mongoerr.New(mongoerr.JsEmitThisNotObject, "'this' must be an object.")
		}
		op, err := Script(st.ctx)
		if err != nil {
			return missing, err
		}
		sess := op.Session()
		defer sess.Close()
		var emitted []bson.RawValue
		size := 0
		err = sess.Map(f, tv.Document(), func(k, v bson.RawValue) error {
			idx, d := bsoncore.AppendDocumentStart(nil)
			d = bsoncore.AppendValueElement(d, "k", bsoncore.Value{Type: bsoncore.Type(k.Type), Data: k.Value})
			d = bsoncore.AppendValueElement(d, "v", bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value})
			d, _ = bsoncore.AppendDocumentEnd(d, idx)
			if size += len(d); size >= maxJsEmitBytes {
				return mongoerr.New(mongoerr.JsEmitTooLarge, "Size of emitted values exceeds the set size limit of %d bytes", maxJsEmitBytes)
			}
			emitted = append(emitted, bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: d})
			return nil
		})
		if err != nil {
			return missing, err
		}
		return arrayValue(emitted), nil
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
