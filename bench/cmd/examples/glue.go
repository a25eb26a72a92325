package main

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"
)

// kitModule is the kit's module path, which its import paths start with.
const kitModule = "exactlyonce/idem"

// A glued line of an example.
type gluedLine struct {
	File string
	Line int
	Text string
}

// countGlue returns the lines of the example in dir that a newcomer writes
// only because of the kit. It reads the example's package with its types
// (from the folder, so through the replaces of its go.mod), counts in its Go
// files but its tests and generated code (which are read for their types
// all the same), and in its templ files; blank lines and comments never
// count. A line is glue when it is in
//
//  1. an import of the kit (exactlyonce/idem or a package under it);
//  2. a statement, declaration, struct field or function signature that
//     uses the kit: an identifier that denotes one of the kit's packages or
//     objects (its functions, types, constants, and the fields and methods
//     of its types: s.form.Submit, lock.Scope), or a variable, field or
//     parameter whose type mentions one of the kit's types (key
//     idem.FormKey, keys *idem.Store, f.Key where that field is an
//     idem.FormKey) — all its lines (an if whose condition uses the kit, a
//     call that spans lines), except the bodies of the function literals
//     in it, which are the app's own code and are counted statement by
//     statement by the same rules; identifiers are told apart by what they
//     denote, not by their names, so that an app's form is not the kit's;
//  3. an if right after such a statement, in the same block, that tests an
//     error the statement assigned and whose body only passes it on (one
//     return that uses it, or one t.Fatal-like call of it, with no else):
//     the check is there only because the kit's call can fail;
//  4. in a templ file, a line that names a kit package or imports it.
func countGlue(dir string) ([]gluedLine, error) {
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles |
			packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo,
		Dir: dir,
		Env: append(os.Environ(), "GOWORK=off"), // the example is a module of its own
	}
	pkgs, err := packages.Load(cfg, ".")
	if err != nil {
		return nil, fmt.Errorf("load the package: %w", err)
	}
	var errs []string
	for _, p := range pkgs {
		for _, e := range p.Errors {
			errs = append(errs, e.Error())
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("load the package: %s", strings.Join(errs, "; "))
	}
	if len(pkgs) != 1 {
		return nil, fmt.Errorf("load the package: %d packages in %s", len(pkgs), dir)
	}
	pkg := pkgs[0]
	files := slices.DeleteFunc(slices.Clone(pkg.Syntax), ast.IsGenerated)
	slices.SortFunc(files, func(a, b *ast.File) int {
		return strings.Compare(pkg.Fset.File(a.Pos()).Name(), pkg.Fset.File(b.Pos()).Name())
	})
	var lines []gluedLine
	g := &glue{fset: pkg.Fset, info: pkg.TypesInfo}
	for _, f := range files {
		g.marked = map[int]bool{}
		g.file(f)
		name := pkg.Fset.File(f.Pos()).Name()
		src, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		text := strings.Split(string(src), "\n")
		for _, n := range slices.Sorted(maps.Keys(g.marked)) {
			if t := strings.TrimSpace(text[n-1]); t != "" && !strings.HasPrefix(t, "//") {
				lines = append(lines, gluedLine{filepath.Base(name), n, t})
			}
		}
	}
	templFiles, _ := filepath.Glob(filepath.Join(dir, "*.templ")) // the pattern is well formed
	for _, name := range templFiles {
		t, err := templGlue(name)
		if err != nil {
			return nil, err
		}
		lines = append(lines, t...)
	}
	return lines, nil
}

func isKit(path string) bool { return path == kitModule || strings.HasPrefix(path, kitModule+"/") }

// inKit reports whether p is one of the kit's packages.
func inKit(p *types.Package) bool { return p != nil && isKit(p.Path()) }

type glue struct {
	fset   *token.FileSet
	info   *types.Info
	marked map[int]bool // the glued lines of the file at hand
}

// kitObject reports whether obj is the kit's: one of its packages, an
// object it declares (a field or method of one of its types among them), or
// a variable, field or parameter whose type mentions one of its types.
func kitObject(obj types.Object) bool {
	switch obj := obj.(type) {
	case nil:
		return false
	case *types.PkgName:
		return inKit(obj.Imported())
	case *types.Var:
		if mentionsKit(obj.Type()) {
			return true
		}
	}
	return inKit(obj.Pkg())
}

// mentionsKit reports whether t is one of the kit's types or is built of
// one (a pointer to it, a slice or map of it, a function that takes or
// returns it, a type argument). An app's named type is the app's: what it
// is made of is not looked into, or every value holding a kit's field would
// be glue.
func mentionsKit(t types.Type) bool {
	switch t := t.(type) {
	case *types.Alias:
		return inKit(t.Obj().Pkg()) || mentionsKit(t.Rhs())
	case *types.Named:
		if inKit(t.Obj().Pkg()) {
			return true
		}
		for a := range t.TypeArgs().Types() {
			if mentionsKit(a) {
				return true
			}
		}
	case *types.Pointer:
		return mentionsKit(t.Elem())
	case *types.Slice:
		return mentionsKit(t.Elem())
	case *types.Array:
		return mentionsKit(t.Elem())
	case *types.Chan:
		return mentionsKit(t.Elem())
	case *types.Map:
		return mentionsKit(t.Key()) || mentionsKit(t.Elem())
	case *types.Signature:
		return mentionsKit(t.Params()) || mentionsKit(t.Results())
	case *types.Tuple:
		for v := range t.Variables() {
			if mentionsKit(v.Type()) {
				return true
			}
		}
	case *types.Struct:
		for f := range t.Fields() {
			if mentionsKit(f.Type()) {
				return true
			}
		}
	}
	return false
}

// uses reports whether ns use the kit outside the bodies of the function
// literals in them; nil ones are left out.
func (g *glue) uses(ns ...ast.Node) bool {
	found := false
	for _, n := range ns {
		if n == nil || found {
			continue
		}
		ast.Inspect(n, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncLit:
				found = found || g.uses(n.Type)
				return false
			case *ast.Ident:
				found = found || kitObject(g.info.ObjectOf(n))
			}
			return !found
		})
	}
	return found
}

func (g *glue) line(p token.Pos) int { return g.fset.Position(p).Line }

// mark marks the lines of n, but the bodies of the function literals in it,
// which it counts statement by statement.
func (g *glue) mark(n ast.Node) {
	for l := g.line(n.Pos()); l <= g.line(n.End()); l++ {
		g.marked[l] = true
	}
	ast.Inspect(n, func(n ast.Node) bool {
		lit, ok := n.(*ast.FuncLit)
		if !ok {
			return true
		}
		for l := g.line(lit.Body.Lbrace) + 1; l < g.line(lit.Body.Rbrace); l++ {
			delete(g.marked, l)
		}
		g.stmts(lit.Body.List)
		return false
	})
}

func (g *glue) file(f *ast.File) {
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.GenDecl:
			for _, s := range d.Specs {
				g.spec(s)
			}
		case *ast.FuncDecl:
			sig := []ast.Node{d.Type}
			if d.Recv != nil {
				sig = append(sig, d.Recv)
			}
			if d.Body == nil {
				if g.uses(sig...) {
					g.mark(d)
				}
				continue
			}
			if g.uses(sig...) {
				for l := g.line(d.Pos()); l <= g.line(d.Body.Lbrace); l++ {
					g.marked[l] = true
				}
			}
			g.stmts(d.Body.List)
		}
	}
}

func (g *glue) spec(s ast.Spec) {
	switch s := s.(type) {
	case *ast.ImportSpec:
		if path, _ := strconv.Unquote(s.Path.Value); isKit(path) {
			g.mark(s)
		}
	case *ast.TypeSpec:
		if st, ok := s.Type.(*ast.StructType); ok {
			for _, f := range st.Fields.List {
				if g.uses(f) {
					g.mark(f)
				}
			}
		} else if g.uses(s) {
			g.mark(s)
		}
	case *ast.ValueSpec:
		if g.uses(s) {
			g.mark(s)
		} else {
			g.inside(s)
		}
	}
}

// stmts counts the statements of a block (or of a case, or a function's
// body): those whose header uses the kit, and the error checks right after
// them that only pass on the error their call returned.
func (g *glue) stmts(list []ast.Stmt) {
	var errs []types.Object // the errors the glued statement before assigned
	for _, s := range list {
		switch {
		case g.uses(header(s)...):
			g.mark(s)
			errs = g.errorsAssigned(s)
			continue
		case g.passesOn(s, errs):
			g.mark(s)
		default:
			g.inside(s)
		}
		errs = nil
	}
}

// errorsAssigned returns the variables of type error that s assigns (a :=,
// an =, a var).
func (g *glue) errorsAssigned(s ast.Stmt) []types.Object {
	var ids []*ast.Ident
	switch s := s.(type) {
	case *ast.AssignStmt:
		for _, e := range s.Lhs {
			if id, ok := e.(*ast.Ident); ok {
				ids = append(ids, id)
			}
		}
	case *ast.DeclStmt:
		if d, ok := s.Decl.(*ast.GenDecl); ok {
			for _, spec := range d.Specs {
				if v, ok := spec.(*ast.ValueSpec); ok {
					ids = append(ids, v.Names...)
				}
			}
		}
	}
	var errs []types.Object
	for _, id := range ids {
		if obj := g.info.ObjectOf(id); obj != nil && types.Identical(obj.Type(), errorType) {
			errs = append(errs, obj)
		}
	}
	return errs
}

var errorType = types.Universe.Lookup("error").Type()

// passesOn reports whether s is an if, with neither init nor else, that
// tests one of errs and whose body only passes it on: one return that uses
// it, or one call of panic or of a Fatal, Fatalf or Fatalln (t.Fatal,
// log.Fatalf) with it.
func (g *glue) passesOn(s ast.Stmt, errs []types.Object) bool {
	is, ok := s.(*ast.IfStmt)
	if !ok || len(errs) == 0 || is.Init != nil || is.Else != nil || len(is.Body.List) != 1 || !g.usesAny(is.Cond, errs) {
		return false
	}
	switch b := is.Body.List[0].(type) {
	case *ast.ReturnStmt:
		return slices.ContainsFunc(b.Results, func(e ast.Expr) bool { return g.usesAny(e, errs) })
	case *ast.ExprStmt:
		call, ok := b.X.(*ast.CallExpr)
		if !ok || !slices.ContainsFunc(call.Args, func(e ast.Expr) bool { return g.usesAny(e, errs) }) {
			return false
		}
		switch fun := ast.Unparen(call.Fun).(type) {
		case *ast.Ident:
			_, builtin := g.info.Uses[fun].(*types.Builtin)
			return builtin && fun.Name == "panic"
		case *ast.SelectorExpr:
			return slices.Contains([]string{"Fatal", "Fatalf", "Fatalln"}, fun.Sel.Name)
		}
	}
	return false
}

// usesAny reports whether n refers to one of objs.
func (g *glue) usesAny(n ast.Node, objs []types.Object) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && slices.Contains(objs, g.info.Uses[id]) {
			found = true
		}
		return !found
	})
	return found
}

// header is the part of s that decides whether all of s is glue: all of a
// simple statement, the clauses of a compound one (its bodies are counted
// statement by statement).
func header(s ast.Stmt) []ast.Node {
	switch s := s.(type) {
	case *ast.BlockStmt, *ast.SelectStmt:
		return nil
	case *ast.IfStmt:
		return []ast.Node{s.Init, s.Cond}
	case *ast.ForStmt:
		return []ast.Node{s.Init, s.Cond, s.Post}
	case *ast.RangeStmt:
		return []ast.Node{s.Key, s.Value, s.X}
	case *ast.SwitchStmt:
		return []ast.Node{s.Init, s.Tag}
	case *ast.TypeSwitchStmt:
		return []ast.Node{s.Init, s.Assign}
	case *ast.LabeledStmt:
		return header(s.Stmt)
	}
	return []ast.Node{s}
}

// inside counts the statements nested in n, whose header does not use the
// kit.
func (g *glue) inside(n ast.Node) {
	if b, ok := n.(*ast.BlockStmt); ok {
		g.stmts(b.List)
		return
	}
	ast.Inspect(n, func(c ast.Node) bool {
		switch c := c.(type) {
		case *ast.BlockStmt:
			g.stmts(c.List)
			return false
		case *ast.IfStmt: // an else if
			if c != n {
				g.stmts([]ast.Stmt{c})
				return false
			}
		case *ast.FuncLit:
			g.stmts(c.Body.List)
			return false
		case *ast.CaseClause:
			if g.uses(exprs(c.List)...) {
				g.mark(c)
			} else {
				g.stmts(c.Body)
			}
			return false
		case *ast.CommClause:
			g.stmts(c.Body)
			return false
		}
		return true
	})
}

func exprs(list []ast.Expr) []ast.Node {
	out := make([]ast.Node, len(list))
	for i, e := range list {
		out[i] = e
	}
	return out
}

// templKit matches a templ line that names a kit package or imports it.
var templKit = regexp.MustCompile(`\bidem(http|echo5?)?\.|"` + regexp.QuoteMeta(kitModule) + `(/[a-z0-9]+)?"`)

func templGlue(name string) ([]gluedLine, error) {
	src, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var lines []gluedLine
	sc := bufio.NewScanner(bytes.NewReader(src))
	for n := 1; sc.Scan(); n++ {
		t := strings.TrimSpace(sc.Text())
		if t != "" && !strings.HasPrefix(t, "//") && templKit.MatchString(t) {
			lines = append(lines, gluedLine{filepath.Base(name), n, t})
		}
	}
	return lines, sc.Err()
}
