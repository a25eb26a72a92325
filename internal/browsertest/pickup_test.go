package browsertest_test

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"

	"exactlyonce/internal/apptest"
)

// The pickup slot form, the kit's worked example, in a real browser: a
// double click and a back-and-resubmit both end on one reservation.
func TestPickupFormReservesOnce(t *testing.T) {
	h := apptest.New(t)
	ctx := newBrowser(t)
	do(t, ctx, "open the pickup form", chromedp.Navigate(h.URL+"/pickup"))
	waitFor(t, ctx, "pickup form", `document.querySelector('[data-testid=pickup-form]')`)
	do(t, ctx, "type a name", chromedp.SendKeys(chromedp.CSS(`[data-testid=pickup-name]`), "Ada"))
	do(t, ctx, "double-click reserve", chromedp.Evaluate[chromedp.Void](`(() => {
		const b = document.querySelector('[data-testid=reserve]');
		b.click();
		setTimeout(() => b.click(), 100);
	})()`))
	first := waitForText(t, ctx, "reservation", `location.pathname.startsWith("/pickup/") && document.querySelector('[data-testid=pickup-reserved]')`,
		`[data-testid=pickup-id]`)

	do(t, ctx, "go back", chromedp.Evaluate[chromedp.Void](`history.back()`))
	waitFor(t, ctx, "pickup form again", `location.pathname === "/pickup" && document.querySelector('[data-testid=reserve]')`)
	do(t, ctx, "reserve again", chromedp.Evaluate[chromedp.Void](`(() => {
		document.querySelector('[data-testid=pickup-name]').value = 'Ada';
		document.querySelector('[data-testid=reserve]').click();
	})()`))
	again := waitForText(t, ctx, "reservation again", `location.pathname.startsWith("/pickup/") && document.querySelector('[data-testid=pickup-reserved]')`,
		`[data-testid=pickup-id]`)

	var n int
	if err := h.DB.Pool.QueryRow(context.Background(), `SELECT count(*) FROM pickup_reservations`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	// Back shows the form from the browser's cache, with the same key, or
	// renders a new one: either way the reservation already made stands and
	// a new form makes at most one more.
	if first == again && n != 1 {
		t.Fatalf("got %d reservations for one reservation shown, want 1", n)
	}
	if first != again && n != 2 {
		t.Fatalf("got %d reservations, want 2 (a fresh form after Back)", n)
	}
}
