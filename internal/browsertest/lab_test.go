package browsertest_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/lab"
)

// renderedResult is a lab card's result as the browser shows it.
type renderedResult struct {
	Charges  string   `json:"charges"`
	Orders   string   `json:"orders"`
	Verdict  string   `json:"verdict"`
	Statuses []string `json:"statuses"`
}

// readResult reads the result panel of the card of scenario id.
func readResult(t *testing.T, ctx context.Context, id string) renderedResult {
	t.Helper()
	return run(t, ctx, "read the result of "+id, chromedp.Evaluate[renderedResult](`(() => {
		const r = document.querySelector('#result-`+id+`');
		const text = (sel) => (r.querySelector(sel)?.textContent ?? '').trim();
		return {
			charges: text('[data-testid=charges-n]'),
			orders: text('[data-testid=orders-n]'),
			verdict: text('[data-testid=verdict]'),
			statuses: [...r.querySelectorAll('[data-testid=attempt] [data-testid=status]')].map(s => s.textContent.trim()),
		};
	})()`))
}

// TestLabRunButtons presses Run on lab cards in Chromium, with the page
// script on: each run happens in place, and the counts it renders are the
// ones in the database. The slow-original run is watched while in flight,
// to see the live timeline and inspector.
func TestLabRunButtons(t *testing.T) {
	h := apptest.New(t, withLab)
	ctx := newBrowser(t)
	do(t, ctx, "open the lab", chromedp.Navigate(h.URL+"/lab"))
	waitFor(t, ctx, "lab page", `document.querySelector('[data-testid=scenario-ten-at-once] [data-testid=run]')`)
	// A page load would clear this: it proves the runs happen in place.
	do(t, ctx, "mark the page", chromedp.Evaluate[chromedp.Void](`window.labMarker = true`))

	var charges, orders int64
	for _, id := range []string{"double-click", "ten-at-once", "baseline"} {
		do(t, ctx, "press Run on "+id, chromedp.Click(chromedp.CSS(`[data-testid=scenario-`+id+`] [data-testid=run]`)))
		waitFor(t, ctx, id+" result", `document.querySelector('#result-`+id+`:not([data-running]) [data-testid=charges-n]')`)
		got := readResult(t, ctx, id)
		last, ok := labOf(h).Last(id)
		if !ok {
			t.Fatalf("%s: the runner has no run", id)
		}
		sc, _ := lab.ScenarioByID(id)
		if got.Charges != strconv.FormatInt(last.Charges, 10) || got.Orders != strconv.FormatInt(last.Orders, 10) {
			t.Errorf("%s: page shows %s charges and %s orders, the database %d and %d", id, got.Charges, got.Orders, last.Charges, last.Orders)
		}
		if got.Charges != strconv.FormatInt(sc.WantCharges, 10) || got.Orders != strconv.FormatInt(sc.WantOrders, 10) || got.Verdict != "✓ As expected" {
			t.Errorf("%s: page shows %+v, want %d charges, %d orders, as expected", id, got, sc.WantCharges, sc.WantOrders)
		}
		if len(got.Statuses) != len(last.Attempts) {
			t.Errorf("%s: page shows %d attempts, the run made %d", id, len(got.Statuses), len(last.Attempts))
		}
		charges, orders = charges+sc.WantCharges, orders+sc.WantOrders
	}
	h.WantStats(t, charges, orders)
	if !run(t, ctx, "page not reloaded", chromedp.Evaluate[bool](`window.labMarker === true && location.pathname === '/lab'`)) {
		t.Error("the page was reloaded: want the runs done in place by the page script")
	}
	savePNG(t, run(t, ctx, "screenshot the top of the lab", chromedp.Screenshot(
		chromedp.CSSAll(`.site-header, .lab-intro, #scenario-double-click, #scenario-ten-at-once`))), "lab.png", "lab.png")
	screenshot(t, ctx, "lab-full.png", "")

	do(t, ctx, "press Run on slow-original", chromedp.Click(chromedp.CSS(`[data-testid=scenario-slow-original] [data-testid=run]`)))
	waitFor(t, ctx, "live timeline and inspector",
		`document.querySelector('#result-slow-original[data-running] [data-testid=attempt]') && document.querySelector('#inspector[data-running] [data-testid=key]')`)
	screenshot(t, ctx, "lab-running.png", "")
	waitFor(t, ctx, "slow-original result", `document.querySelector('#result-slow-original:not([data-running]) [data-testid=charges-n]')`)
	if got := readResult(t, ctx, "slow-original"); got.Charges != "1" || got.Orders != "1" || len(got.Statuses) != 3 {
		t.Errorf("slow-original: page shows %+v, want 1 charge, 1 order, 3 attempts", got)
	}
	waitFor(t, ctx, "audit trail with the takeover",
		`!document.querySelector('#inspector[data-running]') && [...document.querySelectorAll('#inspector .lab-event')].some(e => e.textContent === 'taken_over')`)

	do(t, ctx, "phone width", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)))
	screenshot(t, ctx, "lab-phone.png", "")
}

// withLab is an option of apptest.New: the shop with the double-click lab
// mounted, as the demo's binary serves it; labOf is its runner.
func withLab(s *apptest.Setup) { s.Demo = &lab.Demo{} }

func labOf(h *apptest.Harness) *lab.Runner { return h.App.Demo.(*lab.Demo).Runner }
