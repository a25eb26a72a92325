package browsertest_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"

	"exactlyonce/demo/lab"
	"exactlyonce/internal/apptest"
	"exactlyonce/internal/browsertest"
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
	return browsertest.Run(t, ctx, "read the result of "+id, chromedp.Evaluate[renderedResult](`(() => {
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
	ctx := browsertest.NewBrowser(t)
	browsertest.Do(t, ctx, "open the lab", chromedp.Navigate(h.URL+"/lab"))
	browsertest.WaitFor(t, ctx, "lab page", `document.querySelector('[data-testid=scenario-ten-at-once] [data-testid=run]')`)
	// A page load would clear this: it proves the runs happen in place.
	browsertest.Do(t, ctx, "mark the page", chromedp.Evaluate[chromedp.Void](`window.labMarker = true`))

	var charges, orders int64
	for _, id := range []string{"double-click", "ten-at-once", "baseline"} {
		browsertest.Do(t, ctx, "press Run on "+id, chromedp.Click(chromedp.CSS(`[data-testid=scenario-`+id+`] [data-testid=run]`)))
		browsertest.WaitFor(t, ctx, id+" result", `document.querySelector('#result-`+id+`:not([data-running]) [data-testid=charges-n]')`)
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
	if !browsertest.Run(t, ctx, "page not reloaded", chromedp.Evaluate[bool](`window.labMarker === true && location.pathname === '/lab'`)) {
		t.Error("the page was reloaded: want the runs done in place by the page script")
	}
	browsertest.SavePNG(t, browsertest.Run(t, ctx, "screenshot the top of the lab", chromedp.Screenshot(
		chromedp.CSSAll(`.site-header, .lab-intro, #scenario-double-click, #scenario-ten-at-once`))), "lab.png", "lab.png")
	browsertest.Screenshot(t, ctx, "lab-full.png", "")

	browsertest.Do(t, ctx, "press Run on slow-original", chromedp.Click(chromedp.CSS(`[data-testid=scenario-slow-original] [data-testid=run]`)))
	browsertest.WaitFor(t, ctx, "live timeline and inspector",
		`document.querySelector('#result-slow-original[data-running] [data-testid=attempt]') && document.querySelector('#inspector[data-running] [data-testid=key]')`)
	browsertest.Screenshot(t, ctx, "lab-running.png", "")
	browsertest.WaitFor(t, ctx, "slow-original result", `document.querySelector('#result-slow-original:not([data-running]) [data-testid=charges-n]')`)
	if got := readResult(t, ctx, "slow-original"); got.Charges != "1" || got.Orders != "1" || len(got.Statuses) != 3 {
		t.Errorf("slow-original: page shows %+v, want 1 charge, 1 order, 3 attempts", got)
	}
	browsertest.WaitFor(t, ctx, "audit trail with the takeover",
		`!document.querySelector('#inspector[data-running]') && [...document.querySelectorAll('#inspector .lab-event')].some(e => e.textContent === 'taken over')`)
	browsertest.SavePNG(t, browsertest.Run(t, ctx, "screenshot the inspector", chromedp.Screenshot(chromedp.CSS(`.lab-lower`))), "lab-inspector.png", "")

	browsertest.Do(t, ctx, "phone width", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)))
	browsertest.Screenshot(t, ctx, "lab-phone.png", "")
}

// withLab is an option of apptest.New: the shop with the double-click lab
// mounted, as the demo's binary serves it; labOf is its runner.
func withLab(s *apptest.Setup) { s.Demo = &lab.Demo{} }

func labOf(h *apptest.Harness) *lab.Runner { return h.App.Demo.(*lab.Demo).Runner }
