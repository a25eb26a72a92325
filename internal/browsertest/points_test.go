package browsertest_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"exactlyonce/internal/apptest"
)

// An order placed in the browser earns its loyalty points, shown on the
// receipt once the outbox's job has run, and its confirmation mail reaches
// the mail catcher once.
func TestOrderInTheBrowserEarnsPointsAndAMail(t *testing.T) {
	withCatcher, catcher := apptest.WithMailCatcher(t)
	h := apptest.New(t, withCatcher)
	ctx := newBrowser(t)
	shopToCheckout(t, ctx, h)
	do(t, ctx, "pay", chromedp.Click(chromedp.CSS(`[data-testid=pay]`)))
	waitForReceipt(t, ctx, "")

	h.StartJobs(t)
	h.WaitCount(t, 1, `SELECT count(*) FROM loyalty_ledger`)
	h.WaitCount(t, 1, `SELECT count(*) FROM sent_mails`)
	do(t, ctx, "reload the receipt", chromedp.Reload())
	balance := waitForText(t, ctx, "points on the receipt",
		`(document.querySelector('[data-testid=order-points]') || {textContent: ''}).textContent.includes('earned')`,
		`[data-testid=points-balance]`)
	if !strings.Contains(balance, "points") || strings.HasPrefix(strings.TrimSpace(balance), "0 ") {
		t.Errorf("receipt: got balance %q, want the order's points", balance)
	}
	if msgs := catcher.Messages(); len(msgs) != 1 {
		t.Errorf("got %d mails in the catcher, want the order's one confirmation", len(msgs))
	}
	screenshot(t, ctx, "receipt-points.png", "")
}
