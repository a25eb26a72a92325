package browsertest_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"exactlyonce/internal/apptest"
)

// Every shopper page fits a desktop and a phone: nothing wider than the
// screen, and no control under 24×24 px. The pages are filled as a shopper
// meets them: a placed order (its receipt, the orders list) and a cart
// with two lines (the cart, the checkout).
func TestShopPagesFit(t *testing.T) {
	h := apptest.New(t)
	ctx := newBrowser(t)
	shopToCheckout(t, ctx, h)
	do(t, ctx, "pay", chromedp.Click(chromedp.CSS(`[data-testid=pay]`)))
	waitForReceipt(t, ctx, "")
	receipt := run(t, ctx, "read the receipt's address", chromedp.Evaluate[string](`location.pathname`))
	for _, sku := range []string{mug, book} {
		addFromCatalog(t, ctx, h, sku)
	}

	pages := []struct {
		name, path, ready string
	}{
		{"catalog", "/", `[data-testid=products]`},
		{"cart", "/cart", `[data-testid=cart-lines]`},
		{"checkout", "/checkout", `[data-testid=checkout-form]`},
		{"receipt", receipt, `[data-testid=receipt]`},
		{"orders", "/orders", `[data-testid=orders]`},
		{"pickup", "/pickup", `[data-testid=pickup-form]`},
	}
	for _, s := range shopScreens {
		atSize(t, ctx, s)
		for _, p := range pages {
			do(t, ctx, "open "+p.name, chromedp.Navigate(h.URL+p.path))
			waitFor(t, ctx, p.name+" page", `document.readyState === "complete" && document.querySelector('`+p.ready+`')`)
			wantFits(t, ctx, p.name, s)
			doc := "" // the desktop pictures are the checkout tests'
			if s == phone {
				doc = p.name + "-phone.png"
			}
			screenshot(t, ctx, p.name+"-"+s.Name+".png", doc)
		}
	}

	// A declined card's page, and a 404, at both sizes too.
	do(t, ctx, "open the checkout", chromedp.Navigate(h.URL+"/checkout"))
	waitFor(t, ctx, "checkout page", `document.querySelector('[data-testid=pay]')`)
	do(t, ctx, "pay with the declined card", chromedp.Evaluate[chromedp.Void](`(() => {
		document.querySelector('[data-testid=test-card][data-fill-card="4000 0000 0000 0002"]').click();
		document.querySelector('[data-testid=pay]').click();
	})()`))
	waitFor(t, ctx, "declined page", `document.querySelector('[data-testid=declined]')`)
	for _, s := range shopScreens {
		atSize(t, ctx, s)
		wantFits(t, ctx, "declined", s)
	}
	do(t, ctx, "open a missing page", chromedp.Navigate(h.URL+"/no-such-page"))
	waitFor(t, ctx, "error page", `document.querySelector('[data-testid=error-page]')`)
	for _, s := range shopScreens {
		atSize(t, ctx, s)
		wantFits(t, ctx, "not found", s)
	}
}
