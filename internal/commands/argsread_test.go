package commands

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// commandReaders are the functions that may read a command document
// directly, and why: everything else reads its parsed fields (cmdArgs).
var commandReaders = map[string]string{
	"collectionArg": "the collection in the first field",
	"parseGeneric":  "the generic arguments",
	"opNamespace":   "the namespace currentOp shows",
	// currentOp and the profiler show an operation's command
	"abbreviatedCommand": "the comment a truncated command keeps",
	"parseArgs":          "the declared fields",
	"eachExtra":          "an open command's undeclared fields",
	"first":              "the first field",
	"Name":               "the command name",
	"withDB":             "whether the command explained names its $db",
	"explainedDB":        "the $db of the command explained",
	// the advisor reads a command as it ran, as the profiler shows it
	"observeForAdvice": "the command's filter, sort, skip and writes",
	"observeLookups":   "an aggregate's $lookup stages",
	"readOf":           "a find's filter, sort, projection and skip, or an aggregate's leading stages",
}

// cmdAccessors are cmdArgs' methods reading one declared field by name.
var cmdAccessors = map[string]bool{
	"has": true, "value": true, "doc": true, "str": true, "bool": true, "long": true, "safeInt": true, "docs": true,
}

// TestHandlersReadDeclaredFields fails on a function that reads a command
// document (r.Cmd, or a variable named cmd or inner) by lookup or
// iteration outside commandReaders, and on a field read by literal name
// that no declaration has as honoured. With cmdArgs' runtime check (a read
// of an undeclared field panics), a handler cannot take a field its
// declaration does not state.
func TestHandlersReadDeclaredFields(t *testing.T) {
	honouredNames := map[string]bool{}
	for spec := range allSpecs() {
		for _, f := range spec.fields {
			if f.use == honoured {
				honouredNames[f.name] = true
			}
		}
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") || file == "authz.go" {
			// Authorization reads the command as sent, as MongoDB's
			// privilege checks do, before any handler sees it.
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			_, mayRead := commandReaders[fn.Name.Name]
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				switch sel.Sel.Name {
				case "Lookup", "LookupErr", "Elements", "Values", "Index", "IndexErr", "Iterate":
					target := sel.X
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == "rawdoc" && len(call.Args) > 0 {
						target = call.Args[0]
					}
					if isCommandDoc(target) && !mayRead {
						t.Errorf("%s: %s reads the command directly (%s); declare the field and read r.args",
							fset.Position(call.Pos()), fn.Name.Name, sel.Sel.Name)
					}
				}
				if cmdAccessors[sel.Sel.Name] && len(call.Args) == 1 {
					if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						name, _ := strconv.Unquote(lit.Value)
						if !honouredNames[name] {
							t.Errorf("%s: %s reads field %q, which no declaration honours", fset.Position(call.Pos()), fn.Name.Name, name)
						}
					}
				}
				return true
			})
		}
	}
}

// isCommandDoc reports whether e names a command document: r.Cmd, or a
// variable cmd or inner.
func isCommandDoc(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.SelectorExpr:
		return e.Sel.Name == "Cmd"
	case *ast.Ident:
		return e.Name == "cmd" || e.Name == "inner"
	}
	return false
}
