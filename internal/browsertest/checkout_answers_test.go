package browsertest_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"exactlyonce/internal/apptest"
)

// withoutJavaScript turns the page's scripts off in the tab, for every
// page it loads from now on, as a shopper who has them off meets the shop.
// The test's own evaluations still run.
func withoutJavaScript(t *testing.T, ctx context.Context) {
	t.Helper()
	do(t, ctx, "turn JavaScript off", chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
		return err
	}))
}

// payWith puts card into the card field and presses Pay (or the retry
// button of an outage page).
func payWith(t *testing.T, ctx context.Context, card string) {
	t.Helper()
	do(t, ctx, "pay with "+card, chromedp.Evaluate[chromedp.Void](`(() => {
		document.querySelector('[data-testid=card]').value = `+strconv.Quote(card)+`;
		document.querySelector('[data-testid=pay], [data-testid=retry]').click();
	})()`))
}

// cardState is the card field as the shopper meets it after an answer.
type cardState struct {
	Value       string `json:"value"`
	Invalid     string `json:"invalid"`
	DescribedBy string `json:"describedBy"`
	Focused     string `json:"focused"`
}

// waitFocused waits until the element with the id has the focus: the
// browser applies autofocus at its next rendering, a moment after the page
// is there.
func waitFocused(t *testing.T, ctx context.Context, what, id string) {
	t.Helper()
	waitFor(t, ctx, what+": focus on #"+id, `document.activeElement && document.activeElement.id === `+strconv.Quote(id))
}

const readCard = `(() => {
	const c = document.querySelector('[data-testid=card]');
	return {value: c.value, invalid: c.getAttribute('aria-invalid') || '',
		describedBy: c.getAttribute('aria-describedby') || '', focused: document.activeElement ? document.activeElement.id : ''};
})()`

// What the server answers with the form shown again keeps the card typed,
// ties its error to the field and puts the focus on it (or on the summary
// of what went wrong), with JavaScript on (the page is swapped in) and off
// (the browser loads the answer), at both sizes: a typo, then a decline,
// said under the card field of a new form with the order summary kept,
// then an outage.
func TestCheckoutAnswersKeepTheCardAndFocus(t *testing.T) {
	for _, js := range []bool{true, false} {
		name := "JavaScript on"
		if !js {
			name = "JavaScript off"
		}
		t.Run(name, func(t *testing.T) {
			h := apptest.New(t)
			ctx := newBrowser(t)
			if !js {
				withoutJavaScript(t, ctx)
			}
			for _, s := range shopScreens {
				atSize(t, ctx, s)
				suffix := s.Name
				if !js {
					suffix += "-nojs"
				}
				key := shopToCheckout(t, ctx, h)

				typo := "4242 4242 4242 4241"
				do(t, ctx, "mark the document", chromedp.Evaluate[chromedp.Void](`window.sameDocument = true`))
				payWith(t, ctx, typo)
				waitFor(t, ctx, "the card's error", `document.querySelector('[data-testid=card-error]')`)
				// The script swaps the answer into this document; without it,
				// the browser loads the answer as a page of its own.
				if swapped := run(t, ctx, "read the mark", chromedp.Evaluate[bool](`window.sameDocument === true`)); swapped != js {
					t.Fatalf("%s: got the answer swapped in %v, want %v", s.Name, swapped, js)
				}
				waitFocused(t, ctx, s.Name+", a typo", "card")
				got := run(t, ctx, "read the card", chromedp.Evaluate[cardState](readCard))
				if got.Value != typo || got.Invalid != "true" || got.DescribedBy != "card-check card-error" || got.Focused != "card" {
					t.Errorf("%s, a typo: got card %+v, want the number kept, invalid, described by its error, and focused", s.Name, got)
				}
				wantFits(t, ctx, "checkout with a typo", s)

				payWith(t, ctx, "4000 0000 0000 0002")
				waitFor(t, ctx, "the decline under the card", `location.pathname === "/checkout" && document.querySelector('[data-testid=declined][role=alert]')`)
				waitFocused(t, ctx, s.Name+", a decline", "card")
				got = run(t, ctx, "read the card", chromedp.Evaluate[cardState](readCard))
				if got.Value != "" || got.Invalid != "true" || got.DescribedBy != "card-check card-error" || got.Focused != "card" {
					t.Errorf("%s, a decline: got card %+v, want an empty field, invalid, described by the decline, and focused", s.Name, got)
				}
				if n := run(t, ctx, "count the summary", chromedp.Evaluate[int](`document.querySelectorAll('[data-testid=summary-line]').length`)); n != 2 {
					t.Errorf("%s, a decline: got %d summary lines, want the order summary kept", s.Name, n)
				}
				if again := run(t, ctx, "read the key", chromedp.Evaluate[string](`document.querySelector('[data-testid=idempotency-key]').value`)); again == key {
					t.Errorf("%s, a decline: the form under it has the declined key %q", s.Name, key)
				}
				wantFits(t, ctx, "checkout with a decline", s)
				screenshot(t, ctx, "checkout-declined-"+suffix+".png", "")

				h.SetProvider(t, 0, "before_charge")
				payWith(t, ctx, "4242 4242 4242 4242")
				waitFor(t, ctx, "the outage page", `document.querySelector('[data-testid=provider-outage]')`)
				h.SetProvider(t, 0, "none")
				waitFocused(t, ctx, s.Name+", an outage", "outage-summary")
				got = run(t, ctx, "read the card", chromedp.Evaluate[cardState](readCard))
				if got.Value != "4242 4242 4242 4242" || got.Focused != "outage-summary" {
					t.Errorf("%s, an outage: got card %+v, want the number kept and the focus on the alert", s.Name, got)
				}
				if role := run(t, ctx, "read the alert", chromedp.Evaluate[string](`document.activeElement.getAttribute('role') || ''`)); role != "alert" {
					t.Errorf("%s, an outage: the focused summary has role %q, want alert", s.Name, role)
				}
				wantFits(t, ctx, "outage", s)
				screenshot(t, ctx, "checkout-outage-"+suffix+".png", "")
			}
		})
	}
}

// settleByCompleter runs the completer, as the shop does in the background,
// until it has settled one key (once the failed attempt's lock is gone).
func settleByCompleter(t *testing.T, h *apptest.Harness) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, err := h.App.Completer.Pass(context.Background())
		if err != nil {
			t.Fatalf("completer pass: %v", err)
		}
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the completer settled nothing in 30s")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// The page after a provider failure follows the order by itself and links
// its status page. With JavaScript, its countdown counts down, and once the
// order is settled (here by the completer, charged) the page goes to the
// receipt, no click needed; without, it says "in a few seconds" and
// refreshes to the status page. At both sizes.
func TestOutagePageFollowsTheOrder(t *testing.T) {
	for _, js := range []bool{true, false} {
		name := "JavaScript on"
		if !js {
			name = "JavaScript off"
		}
		t.Run(name, func(t *testing.T) {
			h := apptest.New(t, func(cfg *apptest.Setup) { cfg.LockTimeout = time.Second })
			ctx := newBrowser(t)
			if !js {
				withoutJavaScript(t, ctx)
			}
			for _, s := range shopScreens {
				atSize(t, ctx, s)
				key := shopToCheckout(t, ctx, h)
				h.SetProvider(t, 0, "after_charge")
				payWith(t, ctx, "4242 4242 4242 4242")
				waitFor(t, ctx, "the outage page", `document.querySelector('[data-testid=provider-outage]')`)
				h.SetProvider(t, 0, "none")
				status := run(t, ctx, "read the status link", chromedp.Evaluate[string](`document.querySelector('[data-testid=check-status]').getAttribute('href')`))
				if want := "/checkout/status?key=" + key; status != want {
					t.Errorf("%s: got status link %q, want %q", s.Name, status, want)
				}
				wantFits(t, ctx, "outage", s)
				if !js {
					text := run(t, ctx, "read the wait", chromedp.Evaluate[string](`document.querySelector('[data-testid=retry-after]').textContent`))
					if !strings.Contains(text, "a few seconds") {
						t.Errorf("%s: got %q, want it to say a few seconds", s.Name, text)
					}
					waitFor(t, ctx, s.Name+": refreshed to the status page", `location.pathname === "/checkout/status"`)
					continue
				}
				first := waitForText(t, ctx, "the countdown", `/in \d+ seconds?/.test(document.querySelector('[data-testid=retry-after]').textContent)`, `[data-testid=retry-after]`)
				waitFor(t, ctx, s.Name+": the countdown counting down", `document.querySelector('[data-testid=retry-after]').textContent !== `+strconv.Quote(first))
				settleByCompleter(t, h)
				waitForReceipt(t, ctx, "")
			}
		})
	}
}

// With JavaScript off, at both sizes: the 404 and the answers to the pay
// form show the cart's count, and the receipt's pending points say to
// reload (nothing updates them by itself).
func TestPagesWithoutJavaScriptSayWhatTheyDo(t *testing.T) {
	h := apptest.New(t)
	ctx := newBrowser(t)
	withoutJavaScript(t, ctx)
	shopToCheckout(t, ctx, h)
	payWith(t, ctx, "4242 4242 4242 4241")
	waitFor(t, ctx, "the card's error", `document.querySelector('[data-testid=card-error]')`)
	if got := run(t, ctx, "read the count", chromedp.Evaluate[string](`(document.querySelector('[data-testid=cart-count]') || {}).textContent || ''`)); got != "2" {
		t.Errorf("answer to a typo: got cart count %q, want 2", got)
	}
	for _, s := range shopScreens {
		atSize(t, ctx, s)
		do(t, ctx, "open a missing page", chromedp.Navigate(h.URL+"/no-such-page"))
		waitFor(t, ctx, "error page", `document.querySelector('[data-testid=error-page]')`)
		if got := run(t, ctx, "read the count", chromedp.Evaluate[string](`(document.querySelector('[data-testid=cart-count]') || {}).textContent || ''`)); got != "2" {
			t.Errorf("%s, 404: got cart count %q, want 2", s.Name, got)
		}
		wantFits(t, ctx, "not found", s)
	}
	do(t, ctx, "open the checkout", chromedp.Navigate(h.URL+"/checkout"))
	waitFor(t, ctx, "checkout page", `document.querySelector('[data-testid=pay]')`)
	payWith(t, ctx, "4242 4242 4242 4242")
	waitForReceipt(t, ctx, "")
	for _, s := range shopScreens {
		atSize(t, ctx, s)
		if got := run(t, ctx, "read the points", chromedp.Evaluate[string](`document.querySelector('[data-testid=order-points]').textContent`)); !strings.Contains(got, "reload") {
			t.Errorf("%s, receipt: got points %q, want them to say to reload", s.Name, got)
		}
		wantFits(t, ctx, "receipt without JavaScript", s)
	}
}
