package handlers_test

import (
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"exactlyonce/internal/apptest"
)

// When an order was placed is written in UTC and says so (what a shopper
// without JavaScript reads), in <time> elements whose datetime the page's
// script turns into the shopper's own zone (browsertest's
// TestReceiptShowsLocalTime): on the receipt and in the orders list.
func TestOrderTimesAreUTCAndMachineReadable(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withSecret)
	s := newShopper(t, h)
	s.addToCart(t, "mug-espresso")
	before := time.Now().Add(-time.Minute)
	receipt := s.follow(t, s.post(t, "/checkout", s.checkoutForm(t, goodCard)))
	wantReceipt(t, receipt)
	orders := s.get(t, "/orders")
	for name, el := range map[string]*goquery.Selection{
		"receipt": receipt.testid("placed-at"), "orders": orders.testid("order-row").First(),
	} {
		times := el.Find("time[data-local][datetime]")
		if times.Length() != 2 {
			t.Fatalf("%s: got %d <time data-local datetime> elements, want the date and the clock", name, times.Length())
		}
		times.Each(func(_ int, tm *goquery.Selection) {
			at, err := time.Parse(time.RFC3339, tm.AttrOr("datetime", ""))
			if err != nil || at.Location() != time.UTC || at.Before(before) || at.After(time.Now().Add(time.Minute)) {
				t.Errorf("%s: got datetime %q (%v), want the order's time, RFC 3339 in UTC", name, tm.AttrOr("datetime", ""), err)
			}
		})
		clock := times.Filter(`[data-local=clock]`).Text()
		if !strings.HasSuffix(clock, " UTC") {
			t.Errorf("%s: got clock %q, want it to say UTC", name, clock)
		}
	}
}
