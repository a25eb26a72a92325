package browsertest_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"exactlyonce/internal/apptest"
)

// TestTwoTabsPayOneCart opens the checkout of one cart in two tabs (two
// targets of one browser, sharing its cookies), pays in the first, and then
// in the second: one charge, one order. With JavaScript on, the second tab
// learns that its cart was ordered before anyone clicks; sending its form
// anyway lands on the first tab's receipt with the already-placed note.
func TestTwoTabsPayOneCart(t *testing.T) {
	h := apptest.New(t)
	tab1 := newBrowser(t)
	key := shopToCheckout(t, tab1, h)

	tab2, cancel := chromedp.NewContext(tab1)
	t.Cleanup(cancel)
	if err := chromedp.Do(tab2); err != nil { // opens the second tab
		t.Fatalf("open a second tab: %v", err)
	}
	do(t, tab2, "open checkout in the second tab", chromedp.Navigate(h.URL+"/checkout"))
	waitFor(t, tab2, "checkout page in the second tab", `document.querySelector('[data-testid=pay]')`)
	if got := run(t, tab2, "read the second tab's key", chromedp.Evaluate[string](`document.querySelector('[data-testid=idempotency-key]').value`)); got != key {
		t.Fatalf("second tab: got key %q, want the cart version's key %q", got, key)
	}

	do(t, tab1, "pay in the first tab", chromedp.Click(chromedp.CSS(`[data-testid=pay]`)))
	orderID := waitForReceipt(t, tab1, "")
	h.WantStats(t, 1, 1)

	waitFor(t, tab2, "the second tab is told the cart was ordered",
		`!document.querySelector('[data-testid=cart-ordered-elsewhere]').hidden && document.querySelector('[data-testid=pay]').disabled`)
	screenshot(t, tab2, "checkout-ordered-in-another-tab.png", "")

	// The server's guarantee does not depend on the script: send the
	// second tab's form as a browser without JavaScript would.
	do(t, tab2, "pay in the second tab", chromedp.Evaluate[chromedp.Void](`(() => {
		const form = document.querySelector('[data-testid=checkout-form]');
		form.querySelector('[data-testid=card]').value = '4242424242424242';
		form.submit();
	})()`))
	again := waitForReceipt(t, tab2, `location.search.includes("replayed=1") && document.querySelector('[data-testid=already-placed]')`)
	if again != orderID {
		t.Errorf("second tab: got order %s, want the first tab's %s", again, orderID)
	}
	h.WantStats(t, 1, 1)
}
