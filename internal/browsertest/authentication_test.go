package browsertest_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"exactlyonce/internal/apptest"
)

// A card whose bank asks for 3-D Secure, in Chromium: pay with
// 4000 0027 6000 3184, land on the bank's page (the fake Stripe's), double
// click Complete, come back to the receipt, refresh it: one order, one
// charge; the bank's page opened again leads back to the same receipt.
// The webhook is off, so it is the return that settles the order.
func TestThreeDSecureInTheBrowser(t *testing.T) {
	h := apptest.New(t, apptest.WithoutWebhooks)
	ctx := newBrowser(t)
	shopToCheckout(t, ctx, h)
	do(t, ctx, "type the 3-D Secure card", chromedp.Evaluate[chromedp.Void](
		`document.querySelector('[data-testid=card]').value = '4000 0027 6000 3184'`))
	do(t, ctx, "pay", chromedp.Click(chromedp.CSS(`[data-testid=pay]`)))
	waitFor(t, ctx, "the bank's page", `location.pathname.startsWith("/3ds/authenticate/") && document.querySelector('[data-testid=complete]')`)
	bank := run(t, ctx, "the bank's address", chromedp.Evaluate[string](`location.href`))
	screenshot(t, ctx, "bank.png", "")
	h.WantStats(t, 0, 0)

	// A double click on Complete, from page script as doubleClickPay does:
	// the second click's request replaces the first in the browser.
	do(t, ctx, "double-click Complete", chromedp.Evaluate[chromedp.Void](`(() => {
		const complete = document.querySelector('[data-testid=complete]');
		complete.click();
		setTimeout(() => complete.click(), 100);
	})()`))
	orderID := waitForReceipt(t, ctx, "")
	h.WantStats(t, 1, 1)

	do(t, ctx, "refresh the receipt", chromedp.Reload())
	if again := waitForReceipt(t, ctx, ""); again != orderID {
		t.Errorf("refreshed: got order %s, want %s", again, orderID)
	}
	// The bank's page again (Back, or its tab left open): it has nothing
	// left to authenticate, and its way back to the shop lands on the
	// same receipt.
	do(t, ctx, "open the bank's page again", chromedp.Navigate(bank))
	waitFor(t, ctx, "the bank's page, decided", `document.querySelector('[data-testid=decided]') && document.querySelector('[data-testid=back]')`)
	do(t, ctx, "back to the shop", chromedp.Click(chromedp.CSS(`[data-testid=back]`)))
	if again := waitForReceipt(t, ctx, ""); again != orderID {
		t.Errorf("the return again: got order %s, want %s", again, orderID)
	}
	h.WantStats(t, 1, 1)
}
