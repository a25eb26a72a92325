package browsertest_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/chromedp/chromedp"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/browsertest"
)

// Every page a shopper or an operator meets passes axe-core's rules with
// no serious or critical violation: the catalog (and after an add), the cart, the checkout,
// the receipt and the orders, the pickup form, a declined payment, the
// shop's 404, a problem type's page, and the admin listener's pages.
func TestPagesAreAccessible(t *testing.T) {
	h := apptest.New(t)
	h.StartJobs(t)
	admin := serveAdmin(t, h)
	ctx := newBrowser(t)

	shopToCheckout(t, ctx, h)
	browsertest.WantAccessible(t, ctx, "the checkout")
	do(t, ctx, "pay", chromedp.Click(chromedp.CSS(`[data-testid=pay]`)))
	waitForReceipt(t, ctx, "")
	browsertest.WantAccessible(t, ctx, "the receipt")
	receipt := run(t, ctx, "receipt path", chromedp.Evaluate[string](`location.pathname`))

	pages := []struct{ name, url, ready string }{
		{"the catalog", h.URL + "/", `document.querySelector('[data-testid=product]')`},
		{"the orders", h.URL + "/orders", `document.querySelector('main')`},
		{"the empty cart", h.URL + "/cart", `document.querySelector('main')`},
		{"the pickup form", h.URL + "/pickup", `document.querySelector('form')`},
		{"the shop's 404", h.URL + "/no-such-page", `document.querySelector('main')`},
		{"a problem type", h.URL + "/problems/request-in-progress", `document.querySelector('[data-testid=problem-do]')`},
		{"the admin index", admin + "/", `document.querySelector('[data-testid=admin-links]')`},
		{"find an order", admin + "/orders", `document.querySelector('[data-testid=attention]')`},
		{"an order, as an operator sees it", admin + receipt, `document.querySelector('[data-testid=order-trail]')`},
		{"payments", admin + "/payments", `document.querySelector('main')`},
		{"traces", admin + "/traces", `document.querySelector('main')`},
	}
	for _, p := range pages {
		do(t, ctx, "open "+p.name, chromedp.Navigate(p.url))
		waitFor(t, ctx, p.name, p.ready)
		browsertest.WantAccessible(t, ctx, p.name)
	}

	// The catalog after an add in place: the card's note, the live region.
	addFromCatalog(t, ctx, h, mug)
	browsertest.WantAccessible(t, ctx, "the catalog after Add to cart")

	// A declined card: the answer the shopper reads.
	shopToCheckout(t, ctx, h)
	run(t, ctx, "clear the card", chromedp.Evaluate[bool](`(document.querySelector('[data-testid=card]').value = "") === ""`))
	do(t, ctx, "type a declined card", chromedp.SendKeys(chromedp.CSS(`[data-testid=card]`), "4000 0000 0000 0002"))
	do(t, ctx, "pay", chromedp.Click(chromedp.CSS(`[data-testid=pay]`)))
	waitFor(t, ctx, "the decline", `document.querySelector('[data-testid=declined]')`)
	browsertest.WantAccessible(t, ctx, "a declined payment")
}

// The check above can fail: on a page with an image without a text
// alternative and a field without a label, axe-core reports both.
func TestAxeFindsViolations(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!DOCTYPE html><html lang="en"><head><title>Bad</title></head><body><main>
			<img src="/x.png"><form><input type="text" name="card"></form></main></body></html>`)
	}))
	defer srv.Close()
	ctx := newBrowser(t)
	do(t, ctx, "open the bad page", chromedp.Navigate(srv.URL))
	found := map[string]bool{}
	for _, v := range browsertest.Axe(t, ctx, "the bad page") {
		found[v.ID] = true
	}
	for _, id := range []string{"image-alt", "label"} {
		if !found[id] {
			t.Errorf("axe-core did not report %s; got %v", id, found)
		}
	}
}
