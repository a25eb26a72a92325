package browsertest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"exactlyonce/internal/apptest"
)

// placedTimes is a page's first "placed" date and clock, as shown, with
// the datetime they were written from.
type placedTimes struct {
	Datetime string `json:"datetime"`
	Date     string `json:"date"`
	Clock    string `json:"clock"`
}

const readPlaced = `(() => {
	const d = document.querySelector('time[data-local=date]'), c = document.querySelector('time[data-local=clock]');
	return {datetime: c.getAttribute('datetime'), date: d.textContent, clock: c.textContent};
})()`

// The receipt and the orders list say when an order was placed in the
// shopper's own time: in a browser set to India (UTC+05:30, no summer
// time, and half an hour off so that a wrong zone cannot pass by luck)
// with British English, at both sizes. Without JavaScript they say the
// time in UTC, and say it is UTC.
func TestReceiptShowsLocalTime(t *testing.T) {
	india := time.FixedZone("IST", 5*3600+30*60)
	h := apptest.New(t)
	ctx := newBrowser(t)
	do(t, ctx, "set the zone and the language", chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		if _, err := chromedp.Call(ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "Asia/Kolkata"}); err != nil {
			return err
		}
		_, err := chromedp.Call(ctx, emulation.SetLocaleOverride, emulation.SetLocaleOverrideParams{Locale: "en-GB"})
		return err
	}))
	shopToCheckout(t, ctx, h)
	do(t, ctx, "pay", chromedp.Click(chromedp.CSS(`[data-testid=pay]`)))
	waitForReceipt(t, ctx, "")
	receipt := run(t, ctx, "read the receipt's address", chromedp.Evaluate[string](`location.pathname`))

	check := func(page string, s screen, js bool) {
		t.Helper()
		got := run(t, ctx, "read "+page, chromedp.Evaluate[placedTimes](readPlaced))
		t.Logf("%s at %s, JavaScript %v: %s reads %q %q", page, s.Name, js, got.Datetime, got.Date, got.Clock)
		at, err := time.Parse(time.RFC3339, got.Datetime)
		if err != nil {
			t.Fatalf("%s: datetime %q: %v", page, got.Datetime, err)
		}
		zone, clockWant := india, at.In(india).Format("15:04")
		if !js {
			zone, clockWant = time.UTC, at.UTC().Format("15:04")+" UTC"
		}
		if dateWant := at.In(zone).Format("2 Jan 2006"); got.Date != dateWant {
			t.Errorf("%s at %s (JavaScript %v): got date %q, want %q", page, s.Name, js, got.Date, dateWant)
		}
		if js && (!strings.HasPrefix(got.Clock, clockWant+" ") || strings.Contains(got.Clock, "UTC")) {
			t.Errorf("%s at %s: got clock %q, want %s in India's time with its zone named", page, s.Name, got.Clock, clockWant)
		}
		if !js && got.Clock != clockWant {
			t.Errorf("%s at %s without JavaScript: got clock %q, want %q", page, s.Name, got.Clock, clockWant)
		}
		wantFits(t, ctx, page, s)
	}
	for _, js := range []bool{true, false} {
		if !js {
			withoutJavaScript(t, ctx)
		}
		for _, s := range shopScreens {
			atSize(t, ctx, s)
			do(t, ctx, "open the receipt", chromedp.Navigate(h.URL+receipt))
			waitFor(t, ctx, "the receipt", `document.readyState === "complete" && document.querySelector('[data-testid=receipt]')`)
			check("receipt", s, js)
			do(t, ctx, "open the orders", chromedp.Navigate(h.URL+"/orders"))
			waitFor(t, ctx, "the orders", `document.readyState === "complete" && document.querySelector('[data-testid=orders]')`)
			check("orders", s, js)
		}
	}
}
