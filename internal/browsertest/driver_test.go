package browsertest_test

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"

	"exactlyonce/internal/browsertest"
)

// The driver (browser.go, shared with the demo's browser tests) in these
// tests' words.

func newBrowser(t *testing.T) context.Context {
	t.Helper()
	return browsertest.NewBrowser(t)
}

func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	browsertest.Do(t, ctx, what, steps...)
}

func run[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	return browsertest.Run(t, ctx, what, a)
}

func waitFor(t *testing.T, ctx context.Context, what, condition string) {
	t.Helper()
	browsertest.WaitFor(t, ctx, what, condition)
}

func waitForText(t *testing.T, ctx context.Context, what, condition, selector string) string {
	t.Helper()
	return browsertest.WaitForText(t, ctx, what, condition, selector)
}

func screenshot(t *testing.T, ctx context.Context, name, docName string) {
	t.Helper()
	browsertest.Screenshot(t, ctx, name, docName)
}
