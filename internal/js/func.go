package js

import (
	"strings"
	"sync"

	"github.com/dop251/goja"

	"github.com/folio-db/folio/internal/mongoerr"
)

// Func is a compiled script function: MongoDB's source forms are a
// function ("function (a) {...}") or a function body, whose value is that
// of its single expression when it is one ("this.a > 1") and otherwise what
// it returns ("var x = 1; return this.a > x").
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
	t := strings.TrimSpace(src)
	var forms []string
	if strings.HasPrefix(t, "function") || strings.HasPrefix(t, "async function") || strings.Contains(firstLine(t), "=>") {
		forms = append(forms, "("+src+"\n)")
	}
	forms = append(forms, "(function(){return "+src+"\n})", "(function(){"+src+"\n})")
	var first error
	for _, f := range forms {
		p, err := goja.Compile("", f, false)
		if err == nil {
			return p, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, mongoerr.New(mongoerr.JSInterpreterFailure, "%s", syntaxMessage(first))
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
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
