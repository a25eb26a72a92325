package browsertest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// StepTimeout bounds one step of a test (a navigation, a wait); the browser
// itself lives as long as the test.
const StepTimeout = 30 * time.Second

// chromium returns the browser to run, or "" when none is installed.
func chromium() string {
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// NewBrowser starts a headless Chromium with a profile of its own for the
// test and returns the context of its first tab. The browser belongs to
// this context, which has no deadline; steps take their timeouts from
// child contexts (see Do). Extra options are added to the browser's own
// (a flag a test needs, such as one that turns off the back/forward cache).
func NewBrowser(t *testing.T, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	path := chromium()
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is not installed; under CI the browser tests must run (`make deps` installs it)")
		}
		t.Skip("chromium is not installed: skipping the browser tests (install it with `make deps`, or apt-get install chromium)")
	}
	profile, err := os.MkdirTemp("", "browsertest-profile-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeProfile(profile) })

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.UserDataDir(profile),
		chromedp.Headless,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.WindowSize(1280, 900),
		// This machine's network refuses connections the browser would
		// make in the background; asking for none keeps it quiet and fast.
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-default-apps", true),
	}
	if os.Geteuid() == 0 {
		// Chromium refuses to run as root with its sandbox on.
		opts = append(opts, chromedp.NoSandbox)
	}
	opts = append(opts, extra...)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() {
		cancelCtx()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// removeProfile deletes a browser profile. The browser's child processes
// can still write to it for a moment after it stops, so try a few times.
func removeProfile(dir string) {
	for range 50 {
		if err := os.RemoveAll(dir); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Do runs steps with the step timeout, failing the test on error.
func Do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, StepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// Run runs one action with the step timeout and returns its value.
func Run[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, StepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// WaitFor evaluates a JavaScript condition until it holds.
func WaitFor(t *testing.T, ctx context.Context, what, condition string) {
	t.Helper()
	Poll(t, ctx, what, `!!(`+condition+`)`, func(ok bool) bool { return ok })
}

// WaitForText waits, as waitFor does, until a condition holds, and returns
// the text of the element selector finds, read in the same evaluation. A
// read of its own after the wait could meet a page being replaced (chromedp:
// "No node with given id found"), which failed a CI run.
func WaitForText(t *testing.T, ctx context.Context, what, condition, selector string) string {
	t.Helper()
	type found struct {
		OK   bool   `json:"ok"`
		Text string `json:"text"`
	}
	expr := `(() => {
		const e = (` + condition + `) && document.querySelector(` + strconv.Quote(selector) + `);
		return e ? {ok: true, text: e.textContent} : {ok: false, text: ""};
	})()`
	return strings.TrimSpace(Poll(t, ctx, what, expr, func(f found) bool { return f.OK }).Text)
}

// Poll evaluates a JavaScript expression until done accepts its value, and
// returns that value. It tolerates the errors of an evaluation cut short by
// a navigation, which is what this waits through.
func Poll[T any](t *testing.T, ctx context.Context, what, expr string, done func(T) bool) T {
	t.Helper()
	deadline := time.Now().Add(StepTimeout)
	var last error
	for time.Now().Before(deadline) {
		stepCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
		v, err := chromedp.Run(stepCtx, chromedp.Evaluate[T](expr))
		cancel()
		if err == nil && done(v) {
			return v
		}
		if err != nil {
			last = err
		}
		if errors.Is(ctx.Err(), context.Canceled) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: still not there after %s (last error: %v)", what, StepTimeout, last)
	var zero T
	return zero
}

// repoRoot is the shop's module root (the folder whose go.mod is module
// exactlyonce), found upward from the test's package: the demo's browser
// tests (demo/...) save their screenshots beside the shop's.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.HasPrefix(string(b), "module exactlyonce\n") {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod of module exactlyonce above the test's folder")
		}
		dir = parent
	}
}

// Screenshot saves a PNG of the whole page under artifacts/screenshots (git
// ignored). When docName is set it also becomes docs/screenshots/docName,
// the picture docs/browser-checkout.md shows, but only if that file is missing or
// UPDATE_SCREENSHOTS=1: a test run should not dirty the work tree.
func Screenshot(t *testing.T, ctx context.Context, name, docName string) {
	t.Helper()
	// A page the browser is still replacing (the second click of a
	// double-click lands after the first's receipt) has no layout for a
	// moment, and Chromium refuses to capture it ("Cannot take screenshot
	// with 0 width"): wait for a laid-out page, and try again a few times.
	var err error
	for range 5 {
		WaitFor(t, ctx, "a laid-out page for "+name,
			`document.readyState === "complete" && document.documentElement.getBoundingClientRect().width > 0`)
		stepCtx, cancel := context.WithTimeout(ctx, StepTimeout)
		var png []byte
		png, err = chromedp.Run(stepCtx, chromedp.FullScreenshot(100))
		cancel()
		if err == nil {
			SavePNG(t, png, name, docName)
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("screenshot %s: %v", name, err)
}

// SavePNG stores a screenshot as Screenshot describes.
func SavePNG(t *testing.T, png []byte, name, docName string) {
	t.Helper()
	dir := filepath.Join(repoRoot(t), "artifacts", "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
	if docName == "" {
		return
	}
	doc := filepath.Join(repoRoot(t), "docs", "screenshots", docName)
	if _, err := os.Stat(doc); err == nil && os.Getenv("UPDATE_SCREENSHOTS") != "1" {
		return
	}
	if err := os.MkdirAll(filepath.Dir(doc), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(doc, png, 0o644); err != nil {
		t.Fatal(err)
	}
}
