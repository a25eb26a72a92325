package stripehook_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"exactlyonce/internal/lifecycle"
)

// TestRefundKeyInUseIsA503: a delivery whose refund meets another refund
// of the same intent still running (the same event delivered twice, to
// two shops at once, or the reconciler's pass) finds the provider's refund
// key in use. Stripe answers that 409 with Stripe-Should-Retry: true, a
// refusal that passes; the delivery is answered as an outage, 503 with
// Retry-After, and stores nothing, so Stripe delivers it again and it
// refunds once. The failover chaos run, whose lost keys make refunds,
// once met this race and answered it 500.
func TestRefundKeyInUseIsA503(t *testing.T) {
	t.Parallel()
	h := newShop(t)
	c := h.NewCustomer(t)
	in := orphan(t, h, c, "k")

	release, err := h.Provider.HoldKey(context.Background(), lifecycle.RefundKey(in.ID))
	if err != nil {
		t.Fatal(err)
	}
	r := post(t, h, "evt_busy", "payment_intent.succeeded", in.JSON(), time.Now(), secret)
	release()
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
		t.Fatalf("while the refund key is in use: got %d with Retry-After %q (%s), want 503 with a Retry-After",
			r.Status, r.Header.Get("Retry-After"), r.Body)
	}
	if n := count(t, h, `SELECT count(*) FROM stripe_events WHERE event_id = 'evt_busy'`); n != 0 {
		t.Errorf("got the refused delivery stored %d times, want 0", n)
	}
	if n := count(t, h, `SELECT count(*) FROM fakestripe.refunds WHERE payment_intent_id = $1`, in.ID); n != 0 {
		t.Errorf("got %d refunds at the provider while the key was held, want 0", n)
	}

	r = post(t, h, "evt_busy", "payment_intent.succeeded", in.JSON(), time.Now(), secret)
	if r.Status != http.StatusOK || strings.TrimSpace(string(r.Body)) != "refunded" {
		t.Fatalf("delivered again: got %d %s, want 200 refunded", r.Status, r.Body)
	}
	if n := count(t, h, `SELECT count(*) FROM fakestripe.refunds WHERE payment_intent_id = $1`, in.ID); n != 1 {
		t.Errorf("got %d refunds at the provider, want 1", n)
	}
}
