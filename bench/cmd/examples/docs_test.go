package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The rule on documents of every shape it meets: blocks copied from an
// example (in a list item too), blocks that are not and say so, blocks that
// say neither, blocks of other languages, a section, and glue counts.
func TestCheckDocuments(t *testing.T) {
	root := t.TempDir()
	write := func(name, src string) {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("examples/app/main.go", "package main\n\nfunc main() {\n\tkeys := idem.NewStore(pool, idem.Options{})\n\tgo idem.Maintain(ctx, idem.Maintenance{Store: keys})\n}\n")
	write("examples/app/views.templ", "templ form(k idem.FormKey) {\n\t<form>\n\t\t@idemhttp.HiddenFields(k)\n\t</form>\n}\n")
	fence := "```"
	write("kit.md", strings.Join([]string{
		"# The kit", // 1
		"",
		"| [`examples/app`](examples/app) | an app | 3 lines |",
		"",
		"<!-- from examples/app/main.go -->", // 5
		fence + "go",
		"keys := idem.NewStore(pool, idem.Options{})",
		"go idem.Maintain(ctx, idem.Maintenance{Store: keys})",
		fence,
		"", // 10
		"1. **A step.** In a list item:",
		"",
		"   <!-- from examples/app/views.templ -->",
		"   " + fence + "templ",
		"   <form>", // 15
		"       @idemhttp.HiddenFields(k)",
		"   " + fence,
		"",
		"<!-- from examples/app/main.go -->",
		fence + "go", // 20
		"keys := idem.NewStore(pool, idem.Options{Lease: time.Minute})",
		fence,
		"",
		fence + "go",
		"idem.Middleware(keys)", // 25
		fence,
		"",
		"<!-- not from an example -->",
		fence + "go",
		"p, err := goose.NewProvider(\"\", db, idem.Migrations)", // 30
		fence,
		"",
		fence + "sql",
		"SELECT idem_finish(…);",
		fence, // 35
		"",
		"<!-- from examples/app/gone.go -->",
		fence,
		"gone",
		fence, // 40
		"",
		"Its glue: `examples/app` is 4 lines; see `examples/app/main.go`, 3 lines of which are the kit's.",
	}, "\n")+"\n")
	write("README.md", strings.Join([]string{
		"# The shop", // 1
		"",
		fence + "go",
		"outside the kit's section: not checked",
		fence, // 5
		"",
		"## The kit",
		"",
		fence + "templ",
		"@idem.HiddenFields(key)", // 10
		fence,
		"",
		"### A step, still the kit's",
		"",
		fence + "go", // 15
		"idem.FormFlow{}",
		fence,
		"",
		"## Documentation",
		"", // 20
		fence + "go",
		"after the section: not checked",
		fence,
	}, "\n")+"\n")
	write("other.md", "# Other\n\nNo glue count here, nor any code.\n")

	docs := []document{
		{Path: "kit.md"},
		{Path: "README.md", Section: "## The kit"},
		{Path: "other.md", QuotesGlue: true},
		{Path: "README.md", Section: "## Gone"},
	}
	got := checkDocuments(root, docs, map[string]int{"app": 3})
	want := []string{
		"kit.md:20 quotes examples/app/main.go, which does not hold the block that starts \"keys := idem.NewStore(pool, idem.Options{Lease: time.Minute})\"",
		"kit.md:24: a ```go block with neither <!-- from examples/NAME/FILE --> nor <!-- not from an example --> on the line before it: copy it from an example, or say it is not from one",
		"kit.md:38 quotes examples/app/gone.go: open " + filepath.Join(root, "examples/app/gone.go") + ": no such file or directory",
		"app: kit.md says 4 lines of glue, counted 3 (bin/examples -glue lists them)",
		"README.md:9: a ```templ block with neither <!-- from examples/NAME/FILE --> nor <!-- not from an example --> on the line before it: copy it from an example, or say it is not from one",
		"README.md:15: a ```go block with neither <!-- from examples/NAME/FILE --> nor <!-- not from an example --> on the line before it: copy it from an example, or say it is not from one",
		"app: other.md quotes no glue count for it",
		"README.md has no heading \"## Gone\", the part whose code is checked",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestQuotedGlue(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []int
	}{
		{"| [`examples/app`](../examples/app) | a form | 42 lines |\n", []int{42}},
		{"`examples/app` (42 lines of glue) and `examples/apps` (19 lines)\n", []int{42}},
		{"<!-- from examples/app/main.go -->, 3 lines\n", nil},
		{"`examples/app`, its glue\n\n12 lines on another line\n", nil},
		{"examples/app: 7 lines; again examples/app: 8 lines\n", []int{7, 8}},
	} {
		if got := quotedGlue(tc.text, "app"); !slices.Equal(got, tc.want) {
			t.Errorf("quotedGlue(%q): got %v, want %v", tc.text, got, tc.want)
		}
	}
}

// The repository's own documents quote the examples' code and glue as
// they are (what bin/examples checks before it builds them).
func TestTheDocumentsQuoteTheExamples(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	glue := map[string]int{}
	dirs, _ := filepath.Glob(filepath.Join(root, "examples", "*", "go.mod")) // the pattern is well formed
	for _, d := range dirs {
		lines, err := countGlue(filepath.Dir(d))
		if err != nil {
			t.Fatal(err)
		}
		glue[filepath.Base(filepath.Dir(d))] = len(lines)
	}
	if len(glue) == 0 {
		t.Fatal("no examples/*/go.mod")
	}
	for _, f := range checkDocuments(root, documents, glue) {
		t.Error(f)
	}
}
