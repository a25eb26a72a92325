package model

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// mappingDoc holds the one table that maps the model to the code, between
// the markers below: each row names a step of the model (a proctype, inline
// or claim, in backticks; empty for the step of the row above), one Go
// declaration or SQL query it stands for, and the file that holds it.
const (
	mappingDoc   = "../../docs/model.md"
	mappingBegin = "<!-- mapping -->"
	mappingEnd   = "<!-- /mapping -->"
	repoRoot     = "../.."
)

type mapping struct {
	line       int
	step, code string
	file       string
}

// TestMappingNamesExist fails when a Go function, method, type or constant,
// an SQL query or an SQL function that docs/model.md maps the model to is
// no longer where the table says, or when a step the table names is not in
// the model: the mapping must be kept true as the code moves.
func TestMappingNamesExist(t *testing.T) {
	rows := readMapping(t)
	if len(rows) < 20 {
		t.Fatalf("%s: found %d mapping rows between %s and %s; the table is missing or unreadable", mappingDoc, len(rows), mappingBegin, mappingEnd)
	}
	src, err := os.ReadFile(modelFile)
	if err != nil {
		t.Fatal(err)
	}
	model := string(src)
	for _, r := range rows {
		if !inModel(model, r.step) {
			t.Errorf("%s:%d: the model has no proctype, inline or ltl claim %q", mappingDoc, r.line, r.step)
		}
		path := filepath.Join(repoRoot, r.file)
		var found bool
		switch filepath.Ext(r.file) {
		case ".go":
			found = goDeclares(t, path, r.code)
		case ".sql":
			found = sqlDefines(t, path, r.code)
		default:
			t.Errorf("%s:%d: %s is neither a Go nor an SQL file", mappingDoc, r.line, r.file)
			continue
		}
		if !found {
			t.Errorf("%s:%d: %s no longer declares %s (the model's step %s stands for it): update the mapping, or the model", mappingDoc, r.line, r.file, r.code, r.step)
		}
	}
}

var backticked = regexp.MustCompile("`([^`]+)`")

// readMapping reads the rows of the mapping table.
func readMapping(t *testing.T) []mapping {
	t.Helper()
	f, err := os.Open(mappingDoc)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		rows          []mapping
		inside        bool
		step          string
		line          int
		before, after bool
	)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		switch {
		case text == mappingBegin:
			inside, before = true, true
			continue
		case text == mappingEnd:
			inside, after = false, true
			continue
		case !inside || !strings.HasPrefix(text, "|") || strings.HasPrefix(text, "|--") || strings.HasPrefix(text, "| step"):
			continue
		}
		cells := strings.Split(strings.Trim(text, "|"), "|")
		if len(cells) != 3 {
			t.Fatalf("%s:%d: a mapping row has three cells (step | code | file), this one %d", mappingDoc, line, len(cells))
		}
		if m := backticked.FindStringSubmatch(cells[0]); m != nil {
			step = m[1]
		}
		code := backticked.FindStringSubmatch(cells[1])
		file := backticked.FindStringSubmatch(cells[2])
		if step == "" || code == nil || file == nil {
			t.Fatalf("%s:%d: a mapping row names a step, a code name and a file, each in backticks: %s", mappingDoc, line, text)
		}
		rows = append(rows, mapping{line: line, step: step, code: code[1], file: file[1]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if !before || !after {
		t.Fatalf("%s: the markers %s and %s are missing", mappingDoc, mappingBegin, mappingEnd)
	}
	return rows
}

// inModel reports whether the model declares a proctype, an inline or an
// LTL claim named step (the part before a colon, as in "Request: claim").
func inModel(model, step string) bool {
	name, _, _ := strings.Cut(step, ":")
	name = strings.TrimSpace(name)
	return strings.Contains(model, "proctype "+name+"(") || strings.Contains(model, "inline "+name+"(") ||
		strings.Contains(model, "ltl "+name+" ") || name == "init" && strings.Contains(model, "\ninit {")
}

// goDeclares reports whether the Go file declares name: a function, a
// method written Type.Method (value or pointer receiver), a type, or a
// constant or variable.
func goDeclares(t *testing.T, path, name string) bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Errorf("parse %s: %v", path, err)
		return false
	}
	recv, fn, isMethod := strings.Cut(name, ".")
	if !isMethod {
		fn = name
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Name.Name != fn {
				continue
			}
			if !isMethod && d.Recv == nil {
				return true
			}
			if isMethod && d.Recv != nil && len(d.Recv.List) == 1 && receiverType(d.Recv.List[0].Type) == recv {
				return true
			}
		case *ast.GenDecl:
			if isMethod {
				continue
			}
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.Name == name {
						return true
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.Name == name {
							return true
						}
					}
				}
			}
		}
	}
	return false
}

// receiverType is the name of a method's receiver type, without its
// pointer or type parameters.
func receiverType(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// sqlDefines reports whether the SQL file has the sqlc query name
// ("-- name: X :one") or creates the SQL function name.
func sqlDefines(t *testing.T, path, name string) bool {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Error(err)
		return false
	}
	for line := range strings.Lines(string(src)) {
		fields := strings.Fields(line)
		if len(fields) >= 3 && fields[0] == "--" && fields[1] == "name:" && fields[2] == name {
			return true
		}
		if len(fields) >= 3 && strings.EqualFold(fields[0], "CREATE") && strings.EqualFold(fields[1], "FUNCTION") &&
			strings.HasPrefix(fields[2], name+"(") {
			return true
		}
	}
	return false
}
