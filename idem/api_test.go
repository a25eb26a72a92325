package idem_test

import (
	"flag"
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var updateAPI = flag.Bool("update-api", false, "rewrite testdata/api.txt with the kit's exported API as it is")

// The kit's packages, the core's and its adapters' modules alike: their
// exported API is the golden list testdata/api.txt.
var apiPackages = []string{".", "idemhttp", "idemjs", "idemtest", "idemecho", "idemecho5"}

// The exported API of the kit's packages is the list in testdata/api.txt:
// every name an app or an adapter can reach (functions, types, their
// methods and fields, constants, variables). A name added or removed fails
// this test until the list is rewritten (go test -run TestExportedAPI
// -update-api), so that growing the API, or breaking it, is a decision seen
// in review rather than a side effect.
func TestExportedAPI(t *testing.T) {
	var got []string
	for _, dir := range apiPackages {
		got = append(got, exportedAPI(t, dir)...)
	}
	text := strings.Join(got, "\n") + "\n"
	const golden = "testdata/api.txt"
	if *updateAPI {
		if err := os.WriteFile(golden, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	for _, name := range got {
		if !slices.Contains(want, name) {
			t.Errorf("exported but not in %s: %s", golden, name)
		}
	}
	for _, name := range want {
		if !slices.Contains(got, name) {
			t.Errorf("in %s but not exported: %s", golden, name)
		}
	}
	if t.Failed() {
		t.Log("if the change is meant, rewrite the list: go test -run TestExportedAPI -update-api")
	}
}

// exportedAPI lists the exported names of the package in dir, one a line,
// sorted, each prefixed with the package's name.
func exportedAPI(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, "exactlyonce/idem/"+dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	add := func(kind, name string) { names = append(names, p.Name+": "+kind+" "+name) }
	values := func(vs []*doc.Value, kind string) {
		for _, v := range vs {
			for _, n := range v.Names {
				if token.IsExported(n) {
					add(kind, n)
				}
			}
		}
	}
	funcs := func(fs []*doc.Func) {
		for _, f := range fs {
			if f.Recv != "" {
				add("method", f.Recv+"."+f.Name)
			} else {
				add("func", f.Name)
			}
		}
	}
	values(p.Consts, "const")
	values(p.Vars, "var")
	funcs(p.Funcs)
	for _, ty := range p.Types {
		add("type", ty.Name)
		values(ty.Consts, "const")
		values(ty.Vars, "var")
		funcs(ty.Funcs)
		funcs(ty.Methods)
		for _, spec := range ty.Decl.Specs {
			ts, ok := spec.(*ast.TypeSpec)
			if !ok || ts.Name.Name != ty.Name {
				continue
			}
			var fields *ast.FieldList
			switch x := ts.Type.(type) {
			case *ast.StructType:
				fields = x.Fields
			case *ast.InterfaceType:
				fields = x.Methods
			}
			if fields == nil {
				continue
			}
			for _, f := range fields.List {
				if len(f.Names) == 0 { // embedded
					add("field", ty.Name+"."+fmt.Sprint(typeName(f.Type)))
				}
				for _, n := range f.Names {
					if token.IsExported(n.Name) {
						add("field", ty.Name+"."+n.Name)
					}
				}
			}
		}
	}
	slices.Sort(names)
	return names
}

// typeName names an embedded field's type: idem.FormOptions, *Lock.
func typeName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.StarExpr:
		return "*" + typeName(x.X)
	case *ast.SelectorExpr:
		return typeName(x.X) + "." + x.Sel.Name
	}
	return fmt.Sprintf("%T", e)
}
