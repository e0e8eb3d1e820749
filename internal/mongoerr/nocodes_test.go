package mongoerr

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// rawCodeUses reports every place in src where an error code is written as
// a number rather than a named constant: mongoerr.Code(...) or the code
// argument of mongoerr.New(...) or mongoerr.Is(...) holding an integer literal or arithmetic,
// declarations or composite literals of type mongoerr.Code holding integer
// literals, and numbers passed for a mongoerr.Code parameter of a function in
// params (see codeParams). Names and numbers are facts kept in this package.
func rawCodeUses(fset *token.FileSet, f *ast.File, params map[string][]int) []string {
	var bad []string
	report := func(n ast.Node, what string) {
		bad = append(bad, fset.Position(n.Pos()).String()+": "+what)
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if sel := mongoerrSelector(n.Fun); (sel == "Code" || sel == "New") && len(n.Args) > 0 && hasNumber(n.Args[0]) {
				report(n, "mongoerr."+sel+" with a numeric code")
			}
			if mongoerrSelector(n.Fun) == "Is" && len(n.Args) > 1 && hasNumber(n.Args[1]) {
				report(n, "mongoerr.Is with a numeric code")
			}
			for _, i := range calleeCodeParams(n, params) {
				if i < len(n.Args) && hasNumber(n.Args[i]) {
					report(n.Args[i], "a number passed for a mongoerr.Code parameter")
				}
			}
		case *ast.ValueSpec:
			if n.Type != nil && isCodeType(n.Type) {
				for _, v := range n.Values {
					if hasNumber(v) {
						report(n, "mongoerr.Code declared from a number")
					}
				}
			}
		case *ast.CompositeLit:
			if elemIsCode(n.Type) {
				for _, el := range n.Elts {
					if kv, ok := el.(*ast.KeyValueExpr); ok {
						el = kv.Value
					}
					if hasNumber(el) {
						report(el, "mongoerr.Code table holding a number")
					}
				}
			}
		}
		return true
	})
	return bad
}

// codeParams maps each function ("f:name") and method ("m:name") declared
// in f to the indexes of its mongoerr.Code parameters. Untyped constants
// convert silently, so a call f(28808) compiles; this catches it by name.
func codeParams(f *ast.File, into map[string][]int) {
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		var idx []int
		i := 0
		for _, field := range fd.Type.Params.List {
			n := max(len(field.Names), 1)
			if isCodeType(field.Type) {
				for k := range n {
					idx = append(idx, i+k)
				}
			}
			i += n
		}
		if len(idx) == 0 {
			continue
		}
		key := "f:" + fd.Name.Name
		if fd.Recv != nil {
			key = "m:" + fd.Name.Name
		}
		into[key] = idx
	}
}

// calleeCodeParams is the mongoerr.Code parameter indexes of call's callee,
// matched by name: a plain call against functions, a selector call against
// methods and package functions.
func calleeCodeParams(call *ast.CallExpr, params map[string][]int) []int {
	switch fn := call.Fun.(type) {
	case *ast.Ident:
		return params["f:"+fn.Name]
	case *ast.SelectorExpr:
		if mongoerrSelector(fn) != "" {
			return nil
		}
		if idx, ok := params["m:"+fn.Sel.Name]; ok {
			return idx
		}
		return params["f:"+fn.Sel.Name]
	}
	return nil
}

// mongoerrSelector is X for an expression mongoerr.X, else "".
func mongoerrSelector(e ast.Expr) string {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	if id, ok := sel.X.(*ast.Ident); ok && id.Name == "mongoerr" {
		return sel.Sel.Name
	}
	return ""
}

func isCodeType(e ast.Expr) bool { return mongoerrSelector(e) == "Code" }

// elemIsCode reports whether a composite literal type has mongoerr.Code
// elements (array, slice or map value).
func elemIsCode(t ast.Expr) bool {
	switch t := t.(type) {
	case *ast.ArrayType:
		return isCodeType(t.Elt)
	case *ast.MapType:
		return isCodeType(t.Value)
	}
	return false
}

// hasNumber reports whether e contains an integer literal or arithmetic
// (outside nested mongoerr.Code calls, which are checked on their own).
func hasNumber(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BasicLit:
			if n.Kind == token.INT {
				found = true
			}
		case *ast.BinaryExpr:
			switch n.Op {
			case token.ADD, token.SUB, token.MUL, token.QUO, token.REM, token.SHL, token.OR:
				found = true
			}
		case *ast.FuncLit:
			return false // a closure argument's body is not the code
		case *ast.CallExpr:
			if mongoerrSelector(n.Fun) == "Code" {
				return false // reported as a call of its own
			}
		}
		return !found
	})
	return found
}

// TestNoRawCodes: every error code outside this package is a named
// constant; no call site, local constant or table spells a code number.
func TestNoRawCodes(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	self, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path == self || (path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files = append(files, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 50 {
		t.Fatalf("walked only %d files from %s; wrong module root?", len(files), root)
	}
	params := map[string][]int{}
	for _, f := range files {
		codeParams(f, params)
	}
	for _, f := range files {
		for _, b := range rawCodeUses(fset, f, params) {
			t.Errorf("%s (use a named constant from internal/mongoerr)", b)
		}
	}
}

// TestRawCodeUsesDetects: the checker flags each way of spelling a code as a
// number and accepts named constants and code variables.
func TestRawCodeUsesDetects(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want int
	}{
		{`var _ = mongoerr.New(mongoerr.BadValue, "x")`, 0},
		{`func f(c mongoerr.Code) error { return mongoerr.New(c, "x %d", 5) }`, 0},
		{`func f(c int32) mongoerr.Code { return mongoerr.Code(c) }`, 0},
		{`var _ = [2]mongoerr.Code{mongoerr.BadValue, mongoerr.TypeMismatch}`, 0},
		{`var _ = mongoerr.New(mongoerr.Code(28808), "x")`, 1},
		{`var _ = mongoerr.New(28808, "x")`, 1},
		{`func f(i int) error { return mongoerr.New(mongoerr.Code(34443+2*i), "x") }`, 1},
		{`func f(i int) error { return mongoerr.New(mongoerr.BadValue+mongoerr.Code(i), "x") }`, 1},
		{`const c mongoerr.Code = 263`, 1},
		{`var _ = map[string]mongoerr.Code{"a": 1, "b": mongoerr.BadValue}`, 1},
		{`var _ = []mongoerr.Code{1, 2}`, 2},
		{`var _ = mongoerr.Is(nil, 11000)`, 1},
		{`var _ = mongoerr.Is(nil, mongoerr.DuplicateKey)`, 0},
		{`func g(s string, a, b mongoerr.Code) {}; func f() { g("x", mongoerr.BadValue, 16874) }`, 1},
		{`type p struct{}; func (p) fail(c mongoerr.Code, s string) {}; func f(x p) { x.fail(40177, "y"); x.fail(mongoerr.BadValue, "z") }`, 1},
		{`type p struct{}; func (p) fail(c mongoerr.Code) {}; func f() { fail := func(s string) {}; fail("a" + "b") }`, 0},
	} {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "x.go", "package x\n"+tc.src, 0)
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		params := map[string][]int{}
		codeParams(f, params)
		if got := rawCodeUses(fset, f, params); len(got) != tc.want {
			t.Errorf("%s: %d reports %v, want %d", tc.src, len(got), got, tc.want)
		}
	}
}

// TestLocationCodesUnnamed: a location code is one MongoDB leaves unnamed, so
// none is in names (its codeName stays "Location<N>") and no number has two
// location constants.
func TestLocationCodesUnnamed(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "locations.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, id := range vs.Names {
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok {
					t.Errorf("%s: value is not a literal", id.Name)
					continue
				}
				n, err := strconv.ParseInt(lit.Value, 10, 32)
				if err != nil {
					t.Fatal(err)
				}
				if prev, dup := seen[n]; dup {
					t.Errorf("%d named twice: %s and %s", n, prev, id.Name)
				}
				seen[n] = id.Name
				if name, named := names[Code(n)]; named {
					t.Errorf("%s (%d) is named %s in error_codes.yml; use that", id.Name, n, name)
				}
				if got, want := Code(n).Name(), "Location"+lit.Value; got != want {
					t.Errorf("%s: codeName %s, want %s", id.Name, got, want)
				}
			}
		}
	}
	if len(seen) < 100 {
		t.Fatalf("parsed only %d location codes", len(seen))
	}
}
