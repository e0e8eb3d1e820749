package js

import (
	"sync"

	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"

	"github.com/folio-db/folio/internal/mongoerr"
)

// Func is a compiled script function: MongoDB's source forms are a
// function ("function (a) {...}") or a function body, whose value is that
// of its last statement when it is an expression ("this.a > 1", "x =
// this.a; x > 1") and otherwise what it returns ("var x = 1; return
// this.a > x"); functionSource says which is which.
type Func struct {
	src  string
	prog *goja.Program
}

// Source is the script as given.
func (f *Func) Source() string { return f.src }

// maxCachedPrograms bounds the process-wide cache of compiled programs.
const maxCachedPrograms = 1024

var programs struct {
	sync.Mutex
	m map[string]*goja.Program
}

// Compile compiles src; a syntax error is JSInterpreterFailure with the
// message shape of MongoDB's ("SyntaxError: ... :\n@:line:col").
func Compile(src string) (*Func, error) {
	programs.Lock()
	p, ok := programs.m[src]
	programs.Unlock()
	if ok {
		return &Func{src: src, prog: p}, nil
	}
	p, err := compileFunction(src)
	if err != nil {
		return nil, err
	}
	programs.Lock()
	if programs.m == nil || len(programs.m) >= maxCachedPrograms {
		programs.m = map[string]*goja.Program{}
	}
	programs.m[src] = p
	programs.Unlock()
	return &Func{src: src, prog: p}, nil
}

func compileFunction(src string) (*goja.Program, error) {
	fn, perr := functionSource(src)
	p, err := goja.Compile("", "("+fn+"\n)", false)
	if err == nil {
		return p, nil
	}
	if perr == nil {
		perr = err
	}
	return nil, mongoerr.New(mongoerr.JSInterpreterFailure, "%s", syntaxMessage(perr))
}

// functionSource is src as a function expression, by MongoDB's rule
// (mongohelpers.js functionExpressionParser): src parsed as a program
// whose last statement is an expression is that program with the
// expression returned ("x = this.a; x == 5" returns x == 5, whatever
// comes before it on its line or the lines above); a named function
// declaration alone is the function; any other program is a function's
// body. A source that is not a program is the function it is ("function
// () {...}", whatever comments precede it) or, when it returns outside a
// function, a body. An arrow function alone is that function (Folio's:
// MongoDB would return it). The error is the program's syntax error,
// when it is not one of these.
func functionSource(src string) (string, error) {
	body := func() string { return "function() {" + src + "\n}" }
	prog, err := parser.ParseFile(nil, "", src, 0)
	if err != nil {
		if isFunctionExpression("(" + src + "\n)") {
			return src, nil
		}
		return body(), err
	}
	n := len(prog.Body)
	if n == 0 {
		return body(), nil
	}
	switch last := prog.Body[n-1].(type) {
	case *ast.FunctionDeclaration:
		if n == 1 {
			return src, nil
		}
	case *ast.ExpressionStatement:
		if _, ok := last.Expression.(*ast.ArrowFunctionLiteral); ok && n == 1 {
			return src, nil
		}
		floor := 0
		if n > 1 {
			floor = int(prog.Body[n-2].Idx1()) - 1
		}
		// The expression's first offset may fall inside its opening
		// parentheses, which the AST does not keep: step back to where
		// "return " makes a function body.
		for at := int(last.Idx0()) - 1; at >= floor && at <= len(src); at-- {
			cand := src[:at] + "return " + src[at:]
			if _, err := parser.ParseFile(nil, "", "function f() {"+cand+"\n}", 0); err == nil {
				return "function() {" + cand + "\n}", nil
			}
		}
	}
	return body(), nil
}

// isFunctionExpression reports whether src is one function expression.
func isFunctionExpression(src string) bool {
	prog, err := parser.ParseFile(nil, "", src, 0)
	if err != nil || len(prog.Body) != 1 {
		return false
	}
	st, ok := prog.Body[0].(*ast.ExpressionStatement)
	if !ok {
		return false
	}
	switch st.Expression.(type) {
	case *ast.FunctionLiteral, *ast.ArrowFunctionLiteral:
		return true
	}
	return false
}

func syntaxMessage(err error) string {
	if se, ok := err.(*goja.CompilerSyntaxError); ok {
		return "SyntaxError: " + se.Message
	}
	return "SyntaxError: " + err.Error()
}

// function is f's function value in v, compiled there once.
func (v *vm) function(f *Func) (goja.Callable, error) {
	if c, ok := v.funcs[f.src]; ok {
		return c, nil
	}
	val, err := v.rt.RunProgram(f.prog)
	if err != nil {
		return nil, err
	}
	c, ok := goja.AssertFunction(val)
	if !ok {
		return nil, mongoerr.New(mongoerr.JSInterpreterFailure, "SyntaxError: the script is not a function")
	}
	if len(v.funcs) >= maxCachedFuncs {
		v.funcs = map[string]goja.Callable{}
	}
	v.funcs[f.src] = c
	return c, nil
}
