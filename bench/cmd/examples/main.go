// Command examples builds and tests each of the kit's examples (examples/*)
// as a newcomer would: from a fresh copy in a temporary folder outside the
// tree, whose go.mod requires the kit's modules (the core, an adapter) by
// their module paths through replaces rewritten to their folders, with nothing but its committed go.mod and
// go.sum (GOWORK off, -mod=readonly: a missing go.sum line fails the
// build). In each copy it checks that templ generate changes nothing, then
// runs go vet, go build and go test, the tests on TEST_DATABASE_URL (which
// make test provides; without it the kit's idemtest fails and says what to
// set). Before that it counts each example's glue (see countGlue) and
// checks the documents that show the kit's code (documents: idem/README.md,
// docs/kit.md and the kit's part of README.md): it fails when one quotes
// another glue count than the one counted, when a code block it marks as
// from an example (<!-- from examples/NAME/FILE --> on the line before the
// fence) is not in that file line for line, or when a Go or templ block is
// marked neither so nor as <!-- not from an example -->.
//
//	bin/examples             # all of them, from the repository's root
//	bin/examples sendmoney   # one
//	bin/examples -glue       # count the glue only, and list its lines
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

func main() {
	glueOnly := flag.Bool("glue", false, "only count the examples' glue, and list its lines")
	keep := flag.Bool("keep", false, "keep the copies")
	flag.Parse()
	if err := run(*glueOnly, *keep, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "examples:", err)
		os.Exit(1)
	}
}

func run(glueOnly, keep bool, names []string) error {
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	if len(names) == 0 {
		dirs, _ := filepath.Glob(filepath.Join(root, "examples", "*", "go.mod")) // the pattern is well formed
		for _, d := range dirs {
			names = append(names, filepath.Base(filepath.Dir(d)))
		}
		if len(names) == 0 {
			return errors.New("no examples/*/go.mod: run from the repository's root")
		}
	}
	glue := map[string]int{}
	for _, name := range names {
		lines, err := countGlue(filepath.Join(root, "examples", name))
		if err != nil {
			return fmt.Errorf("%s: count glue: %w", name, err)
		}
		fmt.Printf("examples/%s: %d lines of glue\n", name, len(lines))
		glue[name] = len(lines)
		if glueOnly {
			for _, l := range lines {
				fmt.Printf("\t%s:%d\t%s\n", l.File, l.Line, l.Text)
			}
		}
	}
	if glueOnly {
		return nil
	}
	failed := checkDocuments(root, documents, glue)
	for _, name := range names {
		if err := check(root, name, keep); err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", name, err))
		}
	}
	if len(failed) > 0 {
		return errors.New(strings.Join(failed, "\n"))
	}
	return nil
}

// check copies the example outside the tree and builds and tests the copy.
func check(root, name string, keep bool) error {
	tmp, err := os.MkdirTemp("", "idem-example-")
	if err != nil {
		return err
	}
	if rel, err := filepath.Rel(root, tmp); err == nil && !strings.HasPrefix(rel, "..") {
		return fmt.Errorf("the temporary folder %s is inside the tree: set TMPDIR elsewhere", tmp)
	}
	if keep {
		fmt.Printf("examples/%s: copy kept in %s\n", name, tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	dir := filepath.Join(tmp, name)
	if err := copyExample(root, name, dir); err != nil {
		return err
	}
	replace, err := kitReplaces(root, dir)
	if err != nil {
		return err
	}
	if err := step(dir, replace...); err != nil {
		return err
	}
	if templs, _ := filepath.Glob(filepath.Join(dir, "*.templ")); len(templs) > 0 {
		if err := generatesNothing(dir); err != nil {
			return err
		}
	}
	for _, args := range [][]string{
		{"go", "vet", "./..."},
		{"go", "build", "./..."},
		{"go", "test", "-count=1", "./..."},
	} {
		if err := step(dir, args...); err != nil {
			return err
		}
	}
	return nil
}

// kitReplaces is the go mod edit that points the copy's replaces of the
// kit's modules at the tree: the core's (exactlyonce/idem) and an
// adapter's, a module of its own (exactlyonce/idem/idemecho), each at the
// folder its path names under the root. The example's own replaces are
// relative to examples/NAME and lead nowhere from the copy.
func kitReplaces(root, dir string) ([]string, error) {
	cmd := exec.Command("go", "mod", "edit", "-json")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go mod edit -json: %w", err)
	}
	var mod struct {
		Replace []struct{ Old struct{ Path string } }
	}
	if err := json.Unmarshal(out, &mod); err != nil {
		return nil, fmt.Errorf("read go.mod: %w", err)
	}
	edit := []string{"go", "mod", "edit"}
	for _, r := range mod.Replace {
		if isKit(r.Old.Path) {
			folder := filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(r.Old.Path, "exactlyonce/")))
			edit = append(edit, "-replace", r.Old.Path+"="+folder)
		}
	}
	if len(edit) == 3 {
		return nil, fmt.Errorf("go.mod replaces no module of the kit (%s)", kitModule)
	}
	return edit, nil
}

func step(dir string, args ...string) error {
	fmt.Printf("examples/%s: %s\n", filepath.Base(dir), strings.Join(args, " "))
	if err := command(dir, args...).Run(); err != nil {
		return fmt.Errorf("%s: %w", strings.Join(args, " "), err)
	}
	return nil
}

// copyExample copies what git holds of the example, or would hold after git
// add (nothing it ignores), so that a file left out of a commit fails here.
func copyExample(root, name, dir string) error {
	cmd := exec.Command("git", "ls-files", "--cached", "--others", "--exclude-standard", "-z", "--", filepath.Join("examples", name))
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("git ls-files: %w", err)
	}
	prefix := filepath.Join("examples", name) + string(filepath.Separator)
	for _, rel := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		src := filepath.Join(root, rel)
		fi, err := os.Stat(src)
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted, not yet committed
		}
		if err != nil {
			return err
		}
		b, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, strings.TrimPrefix(rel, prefix))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, b, fi.Mode().Perm()); err != nil {
			return err
		}
	}
	return nil
}

// generatesNothing runs templ generate, the version the example's go.mod
// pins as a tool, and fails if that changed a file.
func generatesNothing(dir string) error {
	before, err := snapshot(dir)
	if err != nil {
		return err
	}
	if err := step(dir, "go", "tool", "templ", "generate", "-log-level", "error"); err != nil {
		return err
	}
	after, err := snapshot(dir)
	if err != nil {
		return err
	}
	for name, b := range after {
		if !bytes.Equal(before[name], b) {
			return fmt.Errorf("templ generate changed %s: run go generate in the example and commit the result", name)
		}
	}
	return nil
}

func snapshot(dir string) (map[string][]byte, error) {
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files[path], err = os.ReadFile(path)
		return err
	})
	return files, err
}

// command runs in dir with the example's go.mod alone: no workspace, and
// go.sum read only.
func command(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -mod=readonly"))
	return cmd
}
