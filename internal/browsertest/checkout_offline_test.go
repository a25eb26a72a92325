package browsertest_test

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"

	"exactlyonce/internal/apptest"
)

// waitForKit waits until the page has imported the kit's module
// (idem/idemjs), which static/app.js does once the page has loaded; before
// it, the form is sent the ordinary way.
func waitForKit(t *testing.T, ctx context.Context) {
	t.Helper()
	waitFor(t, ctx, "the kit's module loaded",
		`document.readyState === "complete" && performance.getEntriesByType("resource").some((e) => e.name.includes("/static/idem/idem.js"))`)
	do(t, ctx, "the module evaluated", chromedp.Evaluate[chromedp.Void](`import(document.querySelector("[data-idem-js]").dataset.idemJs)`))
}

// Pay pressed with the connection gone: the page does not end on the
// browser's error page; it says so, sends the order again with the same
// key through the kit's module, and once the connection is back the order
// is placed, once.
func TestPayOfflineIsSentAgainWhenBackOnline(t *testing.T) {
	h := apptest.New(t)
	ctx := newBrowser(t)
	shopToCheckout(t, ctx, h)
	waitForKit(t, ctx)
	setOffline(t, ctx, true)
	do(t, ctx, "pay", chromedp.Click(chromedp.CSS(`[data-testid=pay]`)))
	waitForText(t, ctx, "the page says it sends again", `document.querySelector('[data-testid=resubmit-status]')`, `[data-testid=resubmit-status]`)
	if n := postCheckouts(t, h); n != 0 {
		t.Fatalf("offline: got %d pay requests at the server, want 0", n)
	}
	setOffline(t, ctx, false)
	waitForReceipt(t, ctx, "")
	if n := postCheckouts(t, h); n != 1 {
		t.Errorf("got %d pay requests at the server, want 1", n)
	}
	h.WantStats(t, 1, 1)
}
