package main

import (
	"bufio"
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// kitModule is the kit's module path, which its import paths start with.
const kitModule = "exactlyonce/idem"

// A glued line of an example.
type gluedLine struct {
	File string
	Line int
	Text string
}

// countGlue returns the lines of the example in dir that exist to wire the
// kit, by this rule, applied to its Go files (not its tests, not generated
// code) and its templ files; blank lines and comments never count:
//
//   - an import of the kit;
//   - a statement, declaration or struct field that names the kit: one of
//     its packages (idem., idemhttp., idemecho., idemecho5.), or a name
//     bound to it, that is a variable, field or parameter declared with one
//     of the kit's types or assigned straight from a call of a kit package
//     or a literal of a kit type (names are matched as names, not by scope);
//   - all the lines of such a statement (an if whose condition names the
//     kit, a call that spans lines), except the bodies of the function
//     literals in it, which are the app's own code and are counted by the
//     same rule;
//   - in a templ file, a line that names a kit package or imports it.
func countGlue(dir string) ([]gluedLine, error) {
	var lines []gluedLine
	goFiles, _ := filepath.Glob(filepath.Join(dir, "*.go")) // the pattern is well formed
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range goFiles {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		if !ast.IsGenerated(f) {
			files = append(files, f)
		}
	}
	g := &glue{fset: fset, names: map[string]bool{}}
	for _, f := range files {
		for _, imp := range f.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); isKit(path) {
				name := filepath.Base(path)
				if imp.Name != nil {
					name = imp.Name.Name
				}
				g.pkgs = append(g.pkgs, name)
				g.names[name] = true
			}
		}
	}
	for g.bind(files) {
	}
	for _, f := range files {
		g.marked = map[int]bool{}
		g.file(f)
		src, err := os.ReadFile(fset.File(f.Pos()).Name())
		if err != nil {
			return nil, err
		}
		text := strings.Split(string(src), "\n")
		for _, n := range slices.Sorted(mapKeys(g.marked)) {
			if t := strings.TrimSpace(text[n-1]); t != "" && !strings.HasPrefix(t, "//") {
				lines = append(lines, gluedLine{filepath.Base(fset.File(f.Pos()).Name()), n, t})
			}
		}
	}
	templFiles, _ := filepath.Glob(filepath.Join(dir, "*.templ"))
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

func mapKeys(m map[int]bool) func(func(int) bool) {
	return func(yield func(int) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

type glue struct {
	fset   *token.FileSet
	pkgs   []string        // the kit's packages, by their names in the files
	names  map[string]bool // the packages and the names bound to the kit
	marked map[int]bool    // the glued lines of the file at hand
}

// unbound are names never bound to the kit: they hold whatever a call
// returns beside its value.
var unbound = map[string]bool{"_": true, "err": true, "ok": true}

// bind adds the names declared with a kit type or assigned from a kit call
// or literal, and reports whether it added any.
func (g *glue) bind(files []*ast.File) bool {
	added := false
	add := func(ids ...*ast.Ident) {
		for _, id := range ids {
			if !unbound[id.Name] && !g.names[id.Name] {
				g.names[id.Name], added = true, true
			}
		}
	}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Field:
				if g.mentions(n.Type) {
					add(n.Names...)
				}
			case *ast.ValueSpec:
				if n.Type != nil && g.mentions(n.Type) || slices.ContainsFunc(n.Values, g.fromKit) {
					add(n.Names...)
				}
			case *ast.AssignStmt:
				for i, lhs := range n.Lhs {
					id, ok := lhs.(*ast.Ident)
					if !ok {
						continue
					}
					rhs := n.Rhs[0]
					if len(n.Rhs) == len(n.Lhs) {
						rhs = n.Rhs[i]
					}
					if g.fromKit(rhs) {
						add(id)
					}
				}
			}
			return true
		})
	}
	return added
}

// fromKit reports whether e is a call of a kit package's function (or a
// method on one of its values: idem.X(…), idemhttp.X(…)) or a literal of a
// kit type, possibly behind &.
func (g *glue) fromKit(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.UnaryExpr:
		return g.fromKit(e.X)
	case *ast.CompositeLit:
		return e.Type != nil && g.namesPkg(e.Type)
	case *ast.CallExpr:
		return g.namesPkg(e.Fun)
	}
	return false
}

// namesPkg reports whether e names one of the kit's packages.
func (g *glue) namesPkg(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && slices.Contains(g.pkgs, id.Name) {
			found = true
		}
		return !found
	})
	return found
}

// mentions reports whether ns name the kit outside the function literals in
// them; nil ones are left out.
func (g *glue) mentions(ns ...ast.Node) bool {
	found := false
	for _, n := range ns {
		if n == nil || found {
			continue
		}
		ast.Inspect(n, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncLit:
				found = found || g.mentions(n.Type)
				return false
			case *ast.Ident:
				found = found || g.names[n.Name]
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
			if d.Recv != nil && g.mentions(d.Recv) || g.mentions(d.Type) {
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
				if g.mentions(f) {
					g.mark(f)
				}
			}
		} else if g.mentions(s) {
			g.mark(s)
		}
	case *ast.ValueSpec:
		if g.mentions(s) {
			g.mark(s)
		} else {
			g.inside(s)
		}
	}
}

func (g *glue) stmts(list []ast.Stmt) {
	for _, s := range list {
		if g.mentions(header(s)...) {
			g.mark(s)
		} else {
			g.inside(s)
		}
	}
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

// inside counts the statements nested in n, whose header does not name the
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
			if g.mentions(exprs(c.List)...) {
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
