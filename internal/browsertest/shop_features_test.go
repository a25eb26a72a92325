package browsertest_test

import (
	"context"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"exactlyonce/internal/apptest"
)

// What the shop's script adds, in a real browser: the cart's note after
// "Add to cart" (said once: the address loses its ?done=), the test cards
// that fill the card field, the hint of a mistyped card number, and the
// receipt's points line, which changes by itself once the loyalty job has
// run.
func TestShopPagesHelpTheShopper(t *testing.T) {
	withCatcher, _ := apptest.WithMailCatcher(t)
	h := apptest.New(t, withCatcher)
	ctx := newBrowser(t)
	do(t, ctx, "open the shop", chromedp.Navigate(h.URL+"/"))
	do(t, ctx, "add a mug", chromedp.Click(chromedp.CSS(`[data-testid=product][data-sku="`+mug+`"] button`)))
	note := waitForText(t, ctx, "the cart's note", `location.pathname === "/cart" && document.querySelector('[data-testid=cart-flash]')`,
		`[data-testid=cart-flash]`)
	if note != "Added Espresso mug to your cart." {
		t.Errorf("got note %q, want the product added", note)
	}
	waitFor(t, ctx, "the address without ?done=", `location.search === ""`)
	if got := run(t, ctx, "read the count", chromedp.Evaluate[string](`document.querySelector('[data-testid=cart-count]').textContent`)); got != "1" {
		t.Errorf("got cart count %q, want 1", got)
	}

	do(t, ctx, "go to checkout", chromedp.Click(chromedp.CSS(`[data-testid=go-to-checkout]`)))
	waitFor(t, ctx, "checkout page", `location.pathname === "/checkout" && document.querySelector('[data-testid=pay]')`)
	do(t, ctx, "type a mistyped card", chromedp.SendKeys(chromedp.CSS(`[data-testid=card]`), "4242 4242 4242 4241"))
	waitFor(t, ctx, "the typo hint", `document.querySelector('[data-testid=card-check]').textContent.includes('typo')`)
	do(t, ctx, "pick the succeeding test card", chromedp.Click(chromedp.CSS(`[data-testid=test-card][data-fill-card="4242 4242 4242 4242"]`)))
	if got := run(t, ctx, "read the card", chromedp.Evaluate[string](`document.querySelector('[data-testid=card]').value`)); got != "4242 4242 4242 4242" {
		t.Errorf("after a click on the test card: got card %q, want its number", got)
	}
	waitFor(t, ctx, "no typo hint", `document.querySelector('[data-testid=card-check]').textContent === ""`)

	do(t, ctx, "pay", chromedp.Click(chromedp.CSS(`[data-testid=pay]`)))
	waitForReceipt(t, ctx, `document.querySelector('[data-points-pending]')`)
	h.StartJobs(t)
	points := waitForText(t, ctx, "the points line, without a reload",
		`!document.querySelector('[data-points-pending]') && document.querySelector('[data-testid=order-points]').textContent.includes('earned')`,
		`[data-testid=points-balance]`)
	if points == "0 points" {
		t.Errorf("got balance %q, want the order's points", points)
	}
	if n := run(t, ctx, "count navigations", chromedp.Evaluate[int](`performance.getEntriesByType("navigation").length`)); n != 1 {
		t.Errorf("got %d navigations, want the receipt loaded once", n)
	}
}

// With the system set to dark, the pages are dark, and they still fit.
func TestShopPagesFollowDarkMode(t *testing.T) {
	h := apptest.New(t)
	ctx := newBrowser(t)
	do(t, ctx, "prefer dark", chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}},
		})
		return err
	}))
	do(t, ctx, "open the shop", chromedp.Navigate(h.URL+"/"))
	waitFor(t, ctx, "catalog", `document.readyState === "complete" && document.querySelector('[data-testid=products]')`)
	if bg := run(t, ctx, "read the background", chromedp.Evaluate[string](`getComputedStyle(document.body).backgroundColor`)); bg != "rgb(15, 18, 23)" {
		t.Errorf("dark mode: got body background %s, want the dark canvas", bg)
	}
	wantFits(t, ctx, "catalog in dark mode", desktop)
	screenshot(t, ctx, "catalog-dark.png", "catalog-dark.png")
}
