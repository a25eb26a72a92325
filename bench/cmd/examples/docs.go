package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A document whose code must be the examples' code.
type document struct {
	Path string // from the repository's root
	// Section, when set, is the heading line (## …) of the part checked,
	// which runs to the next heading of its level or above; the whole
	// document otherwise.
	Section string
	// QuotesGlue requires the document to quote each example's glue
	// count (a table row naming `examples/NAME` that ends in "| N lines |").
	// In every document, a glue count that is quoted must be right.
	QuotesGlue bool
}

// documents are the ones checked: the kit's README, the shop's page on the
// kit, and the kit's part of the shop's README.
var documents = []document{
	{Path: "idem/README.md", QuotesGlue: true},
	{Path: "docs/kit.md"},
	{Path: "README.md", Section: "## Add keys to your own form in four steps"},
}

// The markers of a code block, each on the line right before its fence:
// one copied from an example, which must be in that file line for line, or
// one that is not (and says so).
var (
	fromExample    = regexp.MustCompile(`^<!-- from (examples/[^ ]+) -->$`)
	notFromExample = "<!-- not from an example -->"
)

// checkedLanguages are the fences whose blocks must carry a marker.
var checkedLanguages = []string{"go", "templ"}

// A fenced code block of a document.
type codeBlock struct {
	Line   int    // of the opening fence, from 1
	Lang   string // the fence's info string
	Marker string // the line before the fence, trimmed
	Body   string
}

// checkDocuments checks every document of docs under root: each Go or templ
// block is marked, a block marked from an example is in it, and the glue
// counts quoted are the ones counted (glue, by example; an example not
// counted is not checked).
func checkDocuments(root string, docs []document, glue map[string]int) []string {
	var failed []string
	for _, d := range docs {
		b, err := os.ReadFile(filepath.Join(root, d.Path))
		if err != nil {
			failed = append(failed, err.Error())
			continue
		}
		text, first, ok := section(string(b), d.Section)
		if !ok {
			failed = append(failed, fmt.Sprintf("%s has no heading %q, the part whose code is checked", d.Path, d.Section))
			continue
		}
		failed = append(failed, checkCode(root, d.Path, text, first)...)
		for _, name := range slices.Sorted(maps.Keys(glue)) {
			quoted := quotedGlue(text, name)
			if d.QuotesGlue && len(quoted) == 0 {
				failed = append(failed, fmt.Sprintf("%s: %s quotes no glue count for it", name, d.Path))
			}
			for _, n := range quoted {
				if n != glue[name] {
					failed = append(failed, fmt.Sprintf("%s: %s says %d lines of glue, counted %d (bin/examples -glue lists them)", name, d.Path, n, glue[name]))
				}
			}
		}
	}
	return failed
}

// section returns the part of text under heading, to the next heading of
// its level or above, and the number of its first line; all of text when
// heading is empty.
func section(text, heading string) (string, int, bool) {
	if heading == "" {
		return text, 1, true
	}
	lines := strings.SplitAfter(text, "\n")
	level := len(heading) - len(strings.TrimLeft(heading, "#"))
	start := -1
	fenced := false
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "```") {
			fenced = !fenced
		}
		if fenced {
			continue
		}
		if start < 0 {
			if t == heading {
				start = i
			}
			continue
		}
		if n := len(t) - len(strings.TrimLeft(t, "#")); n > 0 && n <= level && strings.HasPrefix(t[n:], " ") {
			return strings.Join(lines[start:i], ""), start + 1, true
		}
	}
	if start < 0 {
		return "", 0, false
	}
	return strings.Join(lines[start:], ""), start + 1, true
}

// codeBlocks returns the fenced blocks of text, whose first line is line
// first of its document. A fence may be indented (a block in a list item).
func codeBlocks(text string, first int) []codeBlock {
	var blocks []codeBlock
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(t, "```") {
			continue
		}
		b := codeBlock{Line: first + i, Lang: strings.TrimSpace(strings.TrimPrefix(t, "```"))}
		if i > 0 {
			b.Marker = strings.TrimSpace(lines[i-1])
		}
		var body []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			body = append(body, lines[i])
		}
		b.Body = strings.Join(body, "\n")
		blocks = append(blocks, b)
	}
	return blocks
}

// checkCode checks the code blocks of text, a part of the document path
// that starts at line first: a Go or templ block is marked as from an
// example or as not, and a block from an example (of any language) has its
// lines, indentation aside, in that file, in a row.
func checkCode(root, path, text string, first int) []string {
	var failed []string
	for _, b := range codeBlocks(text, first) {
		where := fmt.Sprintf("%s:%d", path, b.Line)
		if m := fromExample.FindStringSubmatch(b.Marker); m != nil {
			file := m[1]
			src, err := os.ReadFile(filepath.Join(root, file))
			if err != nil {
				failed = append(failed, fmt.Sprintf("%s quotes %s: %v", where, file, err))
				continue
			}
			if !containsLines(string(src), b.Body) {
				start, _, _ := strings.Cut(strings.TrimSpace(b.Body), "\n")
				failed = append(failed, fmt.Sprintf("%s quotes %s, which does not hold the block that starts %q", where, file, start))
			}
			continue
		}
		if slices.Contains(checkedLanguages, b.Lang) && b.Marker != notFromExample {
			failed = append(failed, fmt.Sprintf("%s: a ```%s block with neither <!-- from examples/NAME/FILE --> nor %s on the line before it: copy it from an example, or say it is not from one", where, b.Lang, notFromExample))
		}
	}
	return failed
}

// quotedGlue reads the glue counts text gives for the example name: on a
// line naming `examples/name`, the first "N lines" after the name.
func quotedGlue(text, name string) []int {
	quote := regexp.MustCompile("examples/" + regexp.QuoteMeta(name) + "(?:[^a-z0-9_/-][^\\n]*?)??\\b(\\d+) lines\\b")
	var counts []int
	for _, m := range quote.FindAllStringSubmatch(text, -1) {
		if n, err := strconv.Atoi(m[1]); err == nil {
			counts = append(counts, n)
		}
	}
	return counts
}

// containsLines reports whether block's lines are lines of src, in a row,
// each with its leading and trailing white space ignored.
func containsLines(src, block string) bool {
	trim := func(s string) []string {
		lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
		for i, l := range lines {
			lines[i] = strings.TrimSpace(l)
		}
		return lines
	}
	have, want := trim(src), trim(block)
	for i := 0; i+len(want) <= len(have); i++ {
		if slices.Equal(have[i:i+len(want)], want) {
			return true
		}
	}
	return false
}
