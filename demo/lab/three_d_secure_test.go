package lab_test

import (
	"strings"
	"testing"
	"time"

	"exactlyonce/demo/lab"
	"exactlyonce/internal/apptest"
)

// The 3-D Secure scenarios run against the real shop, its pages and the
// fake Stripe's bank page; run checks their counts (one charge, one order)
// against the scenario's and against the whole database.

// pageOutcome is an attempt of a browser's step as the assertions spell it: its
// first answer, where the browser ended, and the lock role read from them.
func pageOutcome(a lab.Attempt) string {
	s := outcome(a)
	if a.Page != "" {
		s += " → " + a.Page
	}
	return s
}

func wantPages(t *testing.T, r lab.Run, want ...string) {
	t.Helper()
	got := make([]string, len(r.Attempts))
	for i, a := range r.Attempts {
		got[i] = pageOutcome(a)
	}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("got attempts\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func wantFact(t *testing.T, r lab.Run, label, value string) {
	t.Helper()
	for _, f := range r.Facts {
		if f.Label == label {
			if f.Value != value {
				t.Errorf("fact %q: got %q, want %q", label, f.Value, value)
			}
			return
		}
	}
	t.Errorf("got facts %+v, want %q: %q", r.Facts, label, value)
}

// wantNoWebhook fails unless the shop heard of no charge from a webhook:
// the scenarios that say the return settled the order lose it.
func wantNoWebhook(t *testing.T, h *apptest.Harness) {
	t.Helper()
	if got := h.Count(t, `SELECT count(*) FROM stripe_events WHERE type = 'payment_intent.succeeded'`); got != 0 {
		t.Errorf("got %d payment_intent.succeeded events in the inbox, want none (the webhook lost)", got)
	}
}

func TestThreeDSecureBankDoubleClick(t *testing.T) {
	t.Parallel()
	h, r := run(t, "bank-double-click")
	wantNoWebhook(t, h)
	wantPages(t, r,
		"200 held → sent to the bank",
		"303 → back to the shop",
		"303 → back to the shop",
		"303 → the receipt") // the return that settled the order: its answer is new
	if gap := r.Attempts[2].Start - r.Attempts[1].Start; gap < 50*time.Millisecond {
		t.Errorf("got the second click %v after the first, want 50ms or more", gap)
	}
	// The bank is slow (300 ms): the second click came while the first
	// was being decided.
	if r.Attempts[2].Start > r.Attempts[1].End {
		t.Errorf("the second click was sent at %v, after the first was answered at %v", r.Attempts[2].Start, r.Attempts[1].End)
	}
	wantFact(t, r, "settled by", "the return")
}

func TestThreeDSecureReturnRefresh(t *testing.T) {
	t.Parallel()
	h, r := run(t, "return-refresh")
	wantNoWebhook(t, h)
	if len(r.Attempts) != 5 {
		t.Fatalf("got %d attempts, want 5", len(r.Attempts))
	}
	wantPages(t, r,
		"200 held → sent to the bank",
		"303 → back to the shop",
		"303 → the receipt", // the first return settled the order
		"303 replayed → the receipt",
		"303 replayed → the receipt")
	wantFact(t, r, "settled by", "the first return")
	if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "showed one order") {
		t.Errorf("got notes %q, want the three visits on one order", r.Notes)
	}
}

func TestThreeDSecureWebhookBeforeReturn(t *testing.T) {
	t.Parallel()
	h, r := run(t, "webhook-before-return")
	wantPages(t, r,
		"200 held → sent to the bank",
		"303 → back to the shop",
		"303 replayed → the receipt")
	wantFact(t, r, "settled by", "the webhook")
	if got := h.Count(t, `SELECT count(*) FROM stripe_events WHERE type = 'payment_intent.succeeded' AND effect = 'pending'`); got != 1 {
		t.Errorf("got %d payment_intent.succeeded events that found the key waiting, want 1", got)
	}
}

func TestThreeDSecureAbandonAndPayAgain(t *testing.T) {
	t.Parallel()
	h, r := run(t, "abandon-pay-again")
	wantPages(t, r,
		"200 held → sent to the bank",
		"402 took over → payment not completed",
		"303 → payment not completed",
		"303 → the receipt")
	wantFact(t, r, "first payment", "canceled")
	if r.Attempts[3].Key == r.Attempts[0].Key {
		t.Error("the new checkout sent the abandoned key")
	}
	if got := h.Count(t, `SELECT count(*) FROM orders`); got != 1 {
		t.Errorf("got %d orders, want 1", got)
	}
}
