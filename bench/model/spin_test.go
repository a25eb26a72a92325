package model

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// modelFile is the Promela model, next to the tests.
const modelFile = "exactlyonce.pml"

// needSpin skips the test when SPIN or a C compiler is missing, except
// under CI, where the model must be checked (`make deps` installs spin).
func needSpin(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"spin", "gcc"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not installed; under CI the model must be checked (`make deps` installs it)", tool)
			}
			t.Skipf("%s is not installed: skipping the model checks (install it with `make deps`, or apt-get install spin gcc)", tool)
		}
	}
}

// verifier is pan, SPIN's verifier, compiled for one configuration of the
// model in a directory of its own.
type verifier struct {
	dir     string
	defines []string // the model's macros, -DNAME, as spin and the replay take them
}

// build generates and compiles the verifier. search holds pan's own
// compile-time options (-DBFS, -DNOCLAIM). -O0 compiles in a few seconds;
// the search is bound by memory, and runs barely slower than at -O2.
func build(t *testing.T, defines []string, search ...string) verifier {
	t.Helper()
	src, err := os.ReadFile(modelFile)
	if err != nil {
		t.Fatal(err)
	}
	v := verifier{dir: t.TempDir(), defines: defines}
	if err := os.WriteFile(filepath.Join(v.dir, modelFile), src, 0o644); err != nil {
		t.Fatal(err)
	}
	v.run(t, "spin", append(append([]string{}, defines...), "-a", modelFile)...)
	v.run(t, "gcc", append([]string{"-O0", "-DSAFETY", "-o", "pan"}, append(search, "pan.c")...)...)
	return v
}

func (v verifier) run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := v.output(t, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

func (v verifier) output(t *testing.T, name string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), name, args...)
	cmd.Dir = v.dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// search runs pan, with the LTL claim named (none for "") and reports what
// it found. pan exits 0 whether or not it found an error; the count is in
// its report.
func (v verifier) search(t *testing.T, claim string) report {
	t.Helper()
	args := []string{"-m100000"}
	if claim != "" {
		args = append(args, "-N", claim)
	}
	began := time.Now()
	out := v.run(t, "./pan", args...)
	r := parseReport(t, out)
	r.wall = time.Since(began)
	return r
}

// replay runs the trail pan wrote through spin, which prints the model's
// narration (its "MODEL:" lines) and the violation.
func (v verifier) replay(t *testing.T) string {
	t.Helper()
	return v.run(t, "spin", append(append([]string{"-t"}, v.defines...), modelFile)...)
}

// report is pan's account of one search.
type report struct {
	out         string
	errors      int
	stored      int
	transitions int
	depth       int
	memoryMB    float64
	elapsed     float64 // seconds, by pan
	wall        time.Duration
}

var (
	reErrors      = regexp.MustCompile(`depth reached (\d+), errors: (\d+)`)
	reStored      = regexp.MustCompile(`(?m)^\s*(\d+) states, stored`)
	reTransitions = regexp.MustCompile(`(?m)^\s*([\d.e+]+) transitions \(= stored\+matched\)`)
	reMemory      = regexp.MustCompile(`(?m)^\s*([\d.]+)\s+total actual memory usage`)
	reElapsed     = regexp.MustCompile(`pan: elapsed time ([\d.e+]+) seconds`)
)

func parseReport(t *testing.T, out string) report {
	t.Helper()
	r := report{out: out}
	m := reErrors.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("pan printed no search report:\n%s", out)
	}
	r.depth, _ = strconv.Atoi(m[1])
	r.errors, _ = strconv.Atoi(m[2])
	if m := reStored.FindStringSubmatch(out); m != nil {
		r.stored, _ = strconv.Atoi(m[1])
	}
	if m := reTransitions.FindStringSubmatch(out); m != nil {
		f, _ := strconv.ParseFloat(m[1], 64) // pan writes big counts as 1.2e+08
		r.transitions = int(f)
	}
	if m := reMemory.FindStringSubmatch(out); m != nil {
		r.memoryMB, _ = strconv.ParseFloat(m[1], 64)
	}
	if m := reElapsed.FindStringSubmatch(out); m != nil {
		r.elapsed, _ = strconv.ParseFloat(m[1], 64)
	}
	return r
}

// exhaustive fails unless pan searched the whole state space: a search cut
// short by its depth bound or its memory would prove nothing.
func (r report) exhaustive(t *testing.T) {
	t.Helper()
	for _, cut := range []string{"max search depth too small", "Search not completed", "out of memory", "reached -DMEMLIM"} {
		if strings.Contains(r.out, cut) {
			t.Fatalf("pan's search was not exhaustive (%q):\n%s", cut, r.out)
		}
	}
}

func (r report) String() string {
	return fmt.Sprintf("%s states stored, %s transitions, depth %d, %.0f MB, %.1f s (pan), %.1f s (wall)",
		thousands(r.stored), thousands(r.transitions), r.depth, r.memoryMB, r.elapsed, r.wall.Seconds())
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// narration is the model's account of a trail: its "MODEL:" lines.
func narration(replay string) string {
	var b strings.Builder
	for line := range strings.Lines(replay) {
		if _, text, ok := strings.Cut(line, "MODEL: "); ok {
			b.WriteString("    " + text)
		}
	}
	return b.String()
}
