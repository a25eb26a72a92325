package browsertest_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/browsertest"
)

// The two SKUs the tests buy.
const (
	mug  = "mug-espresso"
	book = "book-retries"
)

// shopToCheckout puts a mug and a book in the cart through the catalog,
// opens the checkout page from the cart, types the succeeding test card
// and returns the key the form was rendered with.
func shopToCheckout(t *testing.T, ctx context.Context, h *apptest.Harness) string {
	t.Helper()
	for _, sku := range []string{mug, book} {
		addFromCatalog(t, ctx, h, sku)
	}
	do(t, ctx, "open the cart", chromedp.Click(chromedp.CSS(`[data-testid=nav-cart]`)))
	waitFor(t, ctx, "cart shows "+book, `location.pathname === "/cart" && document.querySelector('[data-testid=cart-line][data-sku="`+book+`"]')`)
	do(t, ctx, "go to checkout", chromedp.Click(chromedp.CSS(`[data-testid=go-to-checkout]`)))
	waitFor(t, ctx, "checkout page", `location.pathname === "/checkout" && document.querySelector('[data-testid=pay]')`)
	do(t, ctx, "type the card", chromedp.SendKeys(chromedp.CSS(`[data-testid=card]`), "4242 4242 4242 4242"))
	return run(t, ctx, "read the key", chromedp.Evaluate[string](`document.querySelector('[data-testid=idempotency-key]').value`))
}

// doubleClickPay clicks the pay button twice, 150 ms apart (a quick
// double-click), from page script: two clicks from the driver across a
// navigation are flaky, and these reach the browser's form submission the
// way a person's do. The gap lets the first request leave the browser
// before the second submission cancels it. With busyState false the form loses its data-busy attribute first,
// so the page script leaves the button enabled and both clicks submit.
func doubleClickPay(t *testing.T, ctx context.Context, busyState bool) {
	t.Helper()
	script := `(() => {
		const form = document.querySelector('[data-testid=checkout-form]');
		if (!` + strconv.FormatBool(busyState) + `) form.removeAttribute('data-busy');
		const pay = form.querySelector('[data-testid=pay]');
		pay.click();
		setTimeout(() => pay.click(), 150);
	})()`
	do(t, ctx, "double-click pay", chromedp.Evaluate[chromedp.Void](script))
}

// waitForReceipt waits for a receipt page and returns its order id.
func waitForReceipt(t *testing.T, ctx context.Context, extra string) string {
	t.Helper()
	cond := `location.pathname.startsWith("/orders/") && document.querySelector('[data-testid=receipt]')`
	if extra != "" {
		cond += " && " + extra
	}
	return waitForText(t, ctx, "receipt", cond, `[data-testid=order-id]`)
}

func TestDoubleClickPayChargesOnce(t *testing.T) {
	for _, tc := range []struct {
		name      string
		busyState bool
		// posts is how many pay requests must reach the server.
		wantPosts func(int) bool
	}{
		{"with the busy state", true, func(n int) bool { return n == 1 }},
		{"button left enabled", false, func(n int) bool { return n >= 2 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := apptest.New(t)
			ctx := newBrowser(t)
			key := shopToCheckout(t, ctx, h)
			if tc.busyState {
				screenshot(t, ctx, "checkout.png", "checkout.png")
			}
			// The first attempt is still at the provider when the second
			// click's request arrives.
			h.SetProvider(t, time.Second, "none")
			doubleClickPay(t, ctx, tc.busyState)

			orderID := waitForReceipt(t, ctx, "")
			if tc.busyState {
				screenshot(t, ctx, "receipt.png", "receipt.png")
			}
			if n := waitForPosts(t, h, tc.wantPosts); !tc.wantPosts(n) {
				t.Errorf("got %d pay requests at the server", n)
			}
			h.WantStats(t, 1, 1)

			// Back to the checkout page: the browser shows the same form,
			// with the same key, and the page says it was paid, with its
			// receipt, instead of a Pay button that works
			// (TestBackAfterPayingSaysAlreadyPaid). Sent anyway (the form
			// submitted without its button), the order is replayed.
			do(t, ctx, "go back", chromedp.Evaluate[chromedp.Void](`history.back()`))
			waitFor(t, ctx, "checkout page again, already paid", `location.pathname === "/checkout" && !document.querySelector('[data-testid=already-paid]').hidden && document.querySelector('[data-testid=pay]').disabled`)
			if again := run(t, ctx, "read the key", chromedp.Evaluate[string](`document.querySelector('[data-testid=idempotency-key]').value`)); again != key {
				t.Fatalf("back on the checkout page: got key %q, want the form's key %q", again, key)
			}
			do(t, ctx, "pay again", chromedp.Evaluate[chromedp.Void](`(() => {
				document.querySelector('[data-testid=card]').value = '4242424242424242';
				document.querySelector('[data-testid=checkout-form]').submit();
			})()`))
			again := waitForReceipt(t, ctx, `location.search.includes("replayed=1") && document.querySelector('[data-testid=already-placed]')`)
			if again != orderID {
				t.Errorf("back and pay again: got order %s, want the same order %s", again, orderID)
			}
			screenshot(t, ctx, "receipt-"+strings.ReplaceAll(tc.name, " ", "-")+"-replayed.png", "")
			h.WantStats(t, 1, 1)
		})
	}
}

// waitForPosts reads how many POST /checkout requests the server has
// answered, from its request metrics, until want accepts the count or two
// seconds pass: the request the browser dropped for the second click ends
// on the server a moment after the receipt shows.
func waitForPosts(t *testing.T, h *apptest.Harness, want func(int) bool) int {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		n := postCheckouts(t, h)
		if want(n) || time.Now().After(deadline) {
			return n
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func postCheckouts(t *testing.T, h *apptest.Harness) int {
	t.Helper()
	return int(h.Metric(t, "exactlyonce_http_request_duration_seconds_count", "method", "POST", "route", "/checkout"))
}

// Back from the receipt shows the checkout page as it was before paying
// (from the browser's cache; it is not asked of the server again): the
// page asks the status of its key, and says the order is paid, with a link
// to its receipt, in place of a working Pay button, and drops the cart's
// count. At both sizes, from the back/forward cache and, with it turned
// off, from the server, which Chromium then asks again (the page is
// private, no-cache) and which says so itself.
func TestBackAfterPayingSaysAlreadyPaid(t *testing.T) {
	for _, bfcache := range []bool{true, false} {
		t.Run("back/forward cache "+map[bool]string{true: "on", false: "off"}[bfcache], func(t *testing.T) {
			h := apptest.New(t)
			var ctx context.Context
			if bfcache {
				ctx = newBrowser(t)
			} else {
				ctx = browsertest.NewBrowser(t, chromedp.Flag("disable-back-forward-cache", true))
			}
			backAfterPaying(t, ctx, h, bfcache)
		})
	}
}

func backAfterPaying(t *testing.T, ctx context.Context, h *apptest.Harness, bfcache bool) {
	t.Helper()
	for _, s := range shopScreens {
		atSize(t, ctx, s)
		shopToCheckout(t, ctx, h)
		do(t, ctx, "mark the page", chromedp.Evaluate[chromedp.Void](`window.beforePaying = true`))
		do(t, ctx, "pay", chromedp.Click(chromedp.CSS(`[data-testid=pay]`)))
		waitForReceipt(t, ctx, "")
		receipt := run(t, ctx, "read the receipt's address", chromedp.Evaluate[string](`location.pathname`))
		do(t, ctx, "go back", chromedp.Evaluate[chromedp.Void](`history.back()`))
		// From the back/forward cache, the page's script swaps the note in;
		// from the server, asked again, the page is the note.
		waitFor(t, ctx, s.Name+": the already-paid note", `location.pathname === "/checkout" && document.querySelector('[data-testid=already-paid]') && !document.querySelector('[data-testid=already-paid]').hidden`)
		waitFor(t, ctx, s.Name+": focus on the note", `document.activeElement && document.activeElement.id === 'already-paid'`)
		type state struct {
			Receipt  string `json:"receipt"`
			PayWorks bool   `json:"payWorks"`
			Count    bool   `json:"count"`
		}
		got := run(t, ctx, "read the page", chromedp.Evaluate[state](`(() => {
			const pay = document.querySelector('[data-testid=pay]');
			return {
				receipt: document.querySelector('[data-testid=already-paid-receipt]').getAttribute('href'),
				payWorks: !!pay && !pay.disabled,
				count: !!document.querySelector('[data-testid=cart-count]'),
			};
		})()`))
		want := state{Receipt: receipt}
		if got != want {
			t.Errorf("%s, back after paying: got %+v, want %+v", s.Name, got, want)
		}
		// Which cache it came from: the back/forward cache keeps the page
		// alive, mark included; the HTTP cache only has its HTML.
		if kept := run(t, ctx, "read the mark", chromedp.Evaluate[bool](`window.beforePaying === true`)); kept != bfcache {
			t.Errorf("%s: got the page from the back/forward cache %v, want %v", s.Name, kept, bfcache)
		}
		wantFits(t, ctx, "checkout already paid", s)
		if bfcache {
			screenshot(t, ctx, "checkout-already-paid-"+s.Name+".png", "")
		}
	}
	h.WantStats(t, 2, 2)
}
