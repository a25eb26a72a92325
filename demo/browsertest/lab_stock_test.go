package browsertest_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/browsertest"
)

// TestLabLastMug presses Run on "Two shoppers, one mug left" in presenter
// mode at 1280×720, with the page script on: the card reads "As expected"
// with one charge and one order, counted in the database too; its timeline
// has a lane per shopper, one answered 201 and the other 409 (sold out),
// and marks the reservation and the refusal across the bars; the whole
// card, Run included, fits the window, and axe-core finds nothing serious;
// the page fits a phone too. The shop's catalog then shows the lab's mug
// sold out.
func TestLabLastMug(t *testing.T) {
	h := apptest.New(t, withLab)
	ctx := browsertest.NewBrowser(t)
	browsertest.AtSize(t, ctx, browsertest.Projector)
	browsertest.Do(t, ctx, "open the lab", chromedp.Navigate(h.URL+"/lab"))
	browsertest.WaitFor(t, ctx, "lab page", `document.querySelector('[data-testid=scenario-last-mug] [data-testid=run]')`)
	card := browsertest.Run(t, ctx, "the card's number", chromedp.Evaluate[string](
		`document.querySelector('#scenario-last-mug .lab-num').textContent.trim()`))
	browsertest.Do(t, ctx, "present the card", chromedp.Navigate(h.URL+"/lab?present=1&card="+card))
	browsertest.WaitFor(t, ctx, "the card shown", `document.readyState === "complete" && document.querySelector('#scenario-last-mug[data-current] [data-testid=run]')`)

	browsertest.Do(t, ctx, "press Run", chromedp.Click(chromedp.CSS(`#scenario-last-mug [data-testid=run]`)))
	browsertest.WaitFor(t, ctx, "the result", `document.querySelector('#result-last-mug:not([data-running]) [data-testid=charges-n]')`)
	got := readResult(t, ctx, "last-mug")
	if got.Charges != "1" || got.Orders != "1" || got.Verdict != "✓ As expected" {
		t.Errorf("page shows %+v, want 1 charge, 1 order, as expected", got)
	}
	if statuses := slices.Sorted(slices.Values(got.Statuses)); strings.Join(statuses, " ") != "201 409" {
		t.Errorf("page shows answers %q, want one 201 and one 409", got.Statuses)
	}
	last, ok := labOf(h).Last("last-mug")
	if !ok || !last.AsExpected || last.Charges != 1 || last.Orders != 1 {
		t.Errorf("the runner's run: %+v, want 1 charge, 1 order, as expected", last)
	}
	h.WantStats(t, 1, 1)

	text := browsertest.Run(t, ctx, "read the timeline", chromedp.Evaluate[timelineText](readTimelineText))
	if len(text.Names) != 2 || !strings.HasPrefix(text.Names[0], "Shopper ") || text.Names[0] == text.Names[1] {
		t.Errorf("got lanes %q, want one per shopper", text.Names)
	}
	if !strings.HasPrefix(text.Summary, "2 shoppers, 2 requests") {
		t.Errorf("the summary reads %q, want it to count 2 shoppers", text.Summary)
	}
	for what, size := range text.Sizes {
		if size < 16 {
			t.Errorf("%s text is %.1f px, want 16 px or more", what, size)
		}
	}
	if !slices.ContainsFunc(text.Legend, func(s string) bool { return strings.Contains(s, "refused") }) {
		t.Errorf("got legend %q, want the sold out drawn as a refusal", text.Legend)
	}
	marks := browsertest.Run(t, ctx, "the marks", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('#scenario-last-mug [data-testid=mark]')].map(e => e.textContent.trim())`))
	if strings.Join(marks, ", ") != "mug reserved, sold out" {
		t.Errorf("got marks %q, want the reservation, then the refusal", marks)
	}
	if lines := browsertest.Run(t, ctx, "mark lines", chromedp.Evaluate[int](
		`document.querySelectorAll('#scenario-last-mug [data-testid=attempt] .lab-mark-line').length`)); lines != 4 {
		t.Errorf("got %d mark lines across the bars, want 4 (two marks on two bars)", lines)
	}
	place := browsertest.Run(t, ctx, "measure Run", chromedp.Evaluate[runPlace](readRunPlace("")))
	if !place.OnScreen || !place.CardFits {
		t.Errorf("at 1280×720 the card does not fit or Run is off screen: %+v", place)
	}
	browsertest.WantAccessible(t, ctx, "/lab?present=1 (last mug)")
	browsertest.Screenshot(t, ctx, "lab-present-last-mug.png", "lab-present-last-mug.png")

	browsertest.Do(t, ctx, "open the lab", chromedp.Navigate(h.URL+"/lab"))
	browsertest.WaitFor(t, ctx, "lab page", `document.querySelector('#result-last-mug [data-testid=attempt]')`)
	browsertest.WantFits(t, ctx, "/lab", browsertest.Projector)
	if got := browsertest.Run(t, ctx, "clipped timelines", chromedp.Evaluate[[]string](clipped)); len(got) > 0 {
		t.Errorf("timelines wider than their box: %s", strings.Join(got, ", "))
	}
	if place := browsertest.Run(t, ctx, "measure Run on the page", chromedp.Evaluate[runPlace](readRunPlace("scenario-last-mug"))); !place.OnScreen {
		t.Errorf("on the page at 1280×720, Run of the card is off screen: %+v", place)
	}
	browsertest.WantAccessible(t, ctx, "/lab")
	browsertest.AtSize(t, ctx, browsertest.Phone)
	browsertest.Do(t, ctx, "reload at phone size", chromedp.Reload())
	browsertest.WaitFor(t, ctx, "lab page", `document.querySelector('#result-last-mug [data-testid=attempt]')`)
	browsertest.WantFits(t, ctx, "/lab", browsertest.Phone)
	browsertest.SavePNG(t, browsertest.Run(t, ctx, "screenshot the card on a phone", chromedp.Screenshot(chromedp.CSS("#scenario-last-mug"))), "lab-card-last-mug-phone.png", "")

	browsertest.Do(t, ctx, "open the shop", chromedp.Navigate(h.URL+"/"))
	stock := browsertest.WaitForText(t, ctx, "the lab's mug in the catalog",
		`document.querySelector('[data-sku="lab-last-mug"] [data-testid=product-stock]')`, `[data-sku="lab-last-mug"] [data-testid=product-stock]`)
	if strings.TrimSpace(stock) != "Sold out" {
		t.Errorf("the catalog says %q of the lab's mug, want Sold out", stock)
	}
}
