package browsertest_test

import (
	"context"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"exactlyonce/internal/apptest"
)

// What the shop's script adds, in a real browser: the cart's note after
// a quantity is updated (said once: the address loses its ?done=), the
// test cards that fill the card field, the hint of a mistyped card number,
// and the receipt's points line, which changes by itself once the loyalty
// job has run. (Add to cart in place: catalog_test.go.)
func TestShopPagesHelpTheShopper(t *testing.T) {
	withCatcher, _ := apptest.WithMailCatcher(t)
	h := apptest.New(t, withCatcher)
	ctx := newBrowser(t)
	addFromCatalog(t, ctx, h, mug)
	do(t, ctx, "open the cart", chromedp.Navigate(h.URL+"/cart"))
	do(t, ctx, "update the quantity", chromedp.Click(chromedp.CSS(`[data-testid=cart-line][data-sku="`+mug+`"] [data-testid=set-quantity] button`)))
	note := waitForText(t, ctx, "the cart's note", `location.pathname === "/cart" && document.querySelector('[data-testid=cart-flash]')`,
		`[data-testid=cart-flash]`)
	if note != "Updated the quantity of Espresso mug." {
		t.Errorf("got note %q, want the quantity updated", note)
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

// The pickup form's refusals lead back to the form, not to a dead end: a
// blank name comes back with the slot picked and the error next to the
// name; after Back, the form sent again unchanged lands on the reservation
// already made, saying so, and sent changed gets a fresh form keeping the
// change, which then reserves once more.
func TestPickupFormKeepsWhatWasTyped(t *testing.T) {
	h := apptest.New(t)
	ctx := newBrowser(t)
	do(t, ctx, "open the pickup form", chromedp.Navigate(h.URL+"/pickup"))
	waitFor(t, ctx, "pickup form", `document.querySelector('[data-testid=pickup-form]')`)
	do(t, ctx, "pick Saturday and a blank name", chromedp.Evaluate[chromedp.Void](`(() => {
		document.querySelector('[data-testid=slot-sat-am]').click();
		document.querySelector('[data-testid=pickup-name]').value = '   ';
		document.querySelector('[data-testid=reserve]').click();
	})()`))
	waitFor(t, ctx, "the form again with the name's error", `document.querySelector('[data-testid=name-error]')`)
	if !run(t, ctx, "read the slot", chromedp.Evaluate[bool](`document.querySelector('[data-testid=slot-sat-am]').checked`)) {
		t.Error("the form shown again lost the slot picked")
	}
	wantFits(t, ctx, "pickup with an error", phone)

	do(t, ctx, "type a name and reserve", chromedp.Evaluate[chromedp.Void](`(() => {
		document.querySelector('[data-testid=pickup-name]').value = 'Ada';
		document.querySelector('[data-testid=reserve]').click();
	})()`))
	waitFor(t, ctx, "reservation", `location.pathname.startsWith("/pickup/") && document.querySelector('[data-testid=pickup-reserved]')`)
	back := func() {
		t.Helper()
		do(t, ctx, "go back", chromedp.Evaluate[chromedp.Void](`history.back()`))
		waitFor(t, ctx, "pickup form again", `location.pathname === "/pickup" && document.querySelector('[data-testid=reserve]') && !document.querySelector('[data-testid=reserve]').disabled`)
	}
	// The page is kept in the browser's cache, as the checkout is: Back
	// shows the form that was sent, with its key.
	back()
	do(t, ctx, "send it again unchanged", chromedp.Evaluate[chromedp.Void](`(() => {
		document.querySelector('[data-testid=slot-sat-am]').click();
		document.querySelector('[data-testid=pickup-name]').value = 'Ada';
		document.querySelector('[data-testid=reserve]').click();
	})()`))
	waitFor(t, ctx, "the reservation, already made", `location.pathname.startsWith("/pickup/") && document.querySelector('[data-testid=already-reserved]')`)

	back()
	do(t, ctx, "fix the name and send again", chromedp.Evaluate[chromedp.Void](`(() => {
		document.querySelector('[data-testid=slot-sat-am]').click();
		document.querySelector('[data-testid=pickup-name]').value = 'Ada L.';
		document.querySelector('[data-testid=reserve]').click();
	})()`))
	waitFor(t, ctx, "a fresh form keeping the change", `document.querySelector('[data-testid=pickup-note]')`)
	if got := run(t, ctx, "read the name", chromedp.Evaluate[string](`document.querySelector('[data-testid=pickup-name]').value`)); got != "Ada L." {
		t.Errorf("fresh form: got name %q, want the change kept", got)
	}
	wantFits(t, ctx, "pickup with a note", phone)
	do(t, ctx, "send the fresh form", chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid=reserve]').click()`))
	waitFor(t, ctx, "second reservation", `location.pathname.startsWith("/pickup/") && document.querySelector('[data-testid=pickup-reserved]') && !document.querySelector('[data-testid=already-reserved]')`)
	if n := h.Count(t, `SELECT count(*) FROM pickup_reservations WHERE name = 'Ada L.'`); n != 1 {
		t.Errorf("got %d reservations for the changed name, want 1", n)
	}
	if n := h.Count(t, `SELECT count(*) FROM pickup_reservations`); n != 2 {
		t.Errorf("got %d reservations, want 2", n)
	}
}
