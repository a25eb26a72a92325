package browsertest_test

import (
	"context"
	"testing"

	"exactlyonce/internal/browsertest"
)

// The window sizes and the fit check (fit.go, shared with the demo's
// browser tests) in these tests' words.

type screen = browsertest.Screen

var (
	desktop = browsertest.Desktop
	phone   = browsertest.Phone
)

// shopScreens are the sizes every shopper page must fit.
var shopScreens = []screen{desktop, phone}

func atSize(t *testing.T, ctx context.Context, s screen) {
	t.Helper()
	browsertest.AtSize(t, ctx, s)
}

func wantFits(t *testing.T, ctx context.Context, page string, s screen) {
	t.Helper()
	browsertest.WantFits(t, ctx, page, s)
}
