package handlers_test

import (
	"net/http"
	"strings"
	"testing"

	"exactlyonce/internal/apptest"
)

// A browser order shows its points once the loyalty job has run: on the
// receipt (the order's and the balance) and on /orders (the balance).
// Before, the receipt says they are on their way.
func TestBrowserOrderShowsPoints(t *testing.T) {
	t.Parallel()
	withCatcher, catcher := apptest.WithMailCatcher(t)
	h := apptest.New(t, withSecret, withCatcher)
	s := newShopper(t, h)
	s.addToCart(t, "book-retries") // €34.50: 34 points

	placed := s.post(t, "/checkout", s.checkoutForm(t, goodCard))
	if placed.status != http.StatusSeeOther {
		t.Fatalf("got %d, want 303 to the receipt", placed.status)
	}
	receipt := s.follow(t, placed)
	if got := receipt.text("order-points"); !strings.Contains(got, "being added") {
		t.Errorf("receipt before the job: got points %q, want them on their way", got)
	}

	h.StartJobs(t)
	h.WaitCount(t, 1, `SELECT count(*) FROM loyalty_ledger`)
	receipt = s.get(t, placed.header.Get("Location"))
	if got := receipt.text("order-points"); !strings.Contains(got, "34 earned") {
		t.Errorf("receipt: got order points %q, want 34 earned", got)
	}
	if got := receipt.text("points-balance"); !strings.Contains(got, "34 points") {
		t.Errorf("receipt: got balance %q, want 34 points", got)
	}
	if got := s.get(t, "/orders").text("points-balance"); !strings.Contains(got, "34") {
		t.Errorf("/orders: got balance %q, want 34", got)
	}
	h.WaitCount(t, 1, `SELECT count(*) FROM sent_mails`)
	if msgs := catcher.Messages(); len(msgs) != 1 || !strings.Contains(msgs[0].Body, "Field guide to retries") {
		t.Errorf("got %d mails (%+v), want the order's confirmation", len(msgs), msgs)
	}
}
