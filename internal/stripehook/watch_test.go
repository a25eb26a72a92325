package stripehook_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/stripetest"
)

// TestPendingIsWatchedUntilSettled: the handler's "pending" (the intent
// succeeded while its key was started) is not the end of it (issue 33).
// Should the key be lost before its order is written (an asynchronous
// failover), the reconciler, which watches the intent by id, refunds it,
// even with its cursor past the intent. Before the fix nothing looked at
// the intent again.
func TestPendingIsWatchedUntilSettled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newShop(t)
	c := h.NewCustomer(t)
	h.SetProvider(t, 0, "after_charge")
	if r := h.PlaceOrder(t, c, "k", oneMug); r.Status != http.StatusBadGateway {
		t.Fatalf("order: got %d %s, want 502", r.Status, r.Body)
	}
	h.SetProvider(t, 0, "none")
	in, err := h.Intent(t, c, "k")
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); count(t, h, `SELECT count(*) FROM stripe_events
		WHERE payment_intent_id = $1 AND effect = 'pending'`, in.ID) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the fake's own webhook for the charge never reached the inbox")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The key is lost; the cursor is past the intent (later intents
	// settled), so the provider's list will not show it again.
	if _, err := h.DB.Pool.Exec(ctx, `DELETE FROM idem_keys WHERE scope = $1::uuid::text AND key = 'k'`, c.ID); err != nil {
		t.Fatal(err)
	}
	if err := h.DB.AdvanceReconcilerCursor(ctx, in.Created+1); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := h.App.Reconciler.Pass(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := h.DB.Pool.Exec(ctx, `UPDATE reconciler_unclaimed_charges SET first_seen = first_seen - interval '2 hours'`); err != nil {
			t.Fatal(err)
		}
	}
	if n := count(t, h, `SELECT count(*) FROM fakestripe.refunds WHERE payment_intent_id = $1`, in.ID); n != 1 {
		t.Errorf("got %d refunds of the lost key's charge, want 1", n)
	}
}

// TestEmptySecretRefusesEveryDelivery: a shop built with no webhook secret
// (the configuration refuses to start so; this is the handler's own line)
// does not verify deliveries against the empty key, which anyone can sign
// with (issue 33). Before the fix a delivery signed with "" was handled.
func TestEmptySecretRefusesEveryDelivery(t *testing.T) {
	t.Parallel()
	provider := stripetest.Start(t)
	h := apptest.New(t, func(cfg *apptest.Setup) {
		cfg.StripeAPIBase, cfg.StripeSecretKey, cfg.StripeWebhookSecret = provider.URL, stripetest.Secret, ""
	})
	object := []byte(`{"id": "pi_forged", "object": "payment_intent", "status": "canceled", "metadata": {}}`)
	r := post(t, h, "evt_forged", "payment_intent.canceled", object, time.Now(), "")
	if r.Status == http.StatusOK {
		t.Errorf("got %d %s, want the delivery refused", r.Status, strings.TrimSpace(string(r.Body)))
	}
	if n := count(t, h, `SELECT count(*) FROM stripe_events`); n != 0 {
		t.Errorf("got %d events stored, want 0", n)
	}
}
