package lifecycle_test

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/lifecycle"
)

// The tests of this file run the shop without the fake's webhooks
// (apptest.WithoutWebhooks): the reconciler is the safety net for the
// events that never arrive, and the webhook handler would otherwise refund
// what they watch the reconciler refund.

// orphan leaves what the reconciler exists for: a succeeded charge whose key
// is finished without an order. The engine never does this (that is what
// the orphan counter asserts); a bug, or a restore that lost the order,
// would. The provider charges and loses its answer, then the test's own SQL
// closes the key with a 402 as if the order had never been written.
func orphan(t *testing.T, h *apptest.Harness, c apptest.Customer, key string) {
	t.Helper()
	h.SetProvider(t, 0, "after_charge")
	if r := h.PlaceOrder(t, c, key, oneMug); r.Status != http.StatusBadGateway {
		t.Fatalf("order %s: got %d %s, want 502", key, r.Status, r.Body)
	}
	h.SetProvider(t, 0, "none")
	_, err := h.DB.Pool.Exec(context.Background(), `UPDATE idem_keys
		SET status = 'finished', response_status = 402, response_body = '{}', finished_at = now()
		WHERE scope = $1::uuid::text AND key = $2`, c.ID, key)
	if err != nil {
		t.Fatalf("finish key %q without an order: %v", key, err)
	}
}

func TestTwoReconcilersRefundAnOrphanOnce(t *testing.T) {
	t.Parallel()
	// Both reconcilers find the orphan and wait for each other before
	// refunding it, so that both refund at once.
	var arrivals atomic.Int32
	both := make(chan struct{})
	hooks := lifecycle.ReconcilerHooks{BeforeRefund: func(context.Context, string) {
		if arrivals.Add(1) == 2 {
			close(both)
		}
		select {
		case <-both:
		case <-time.After(20 * time.Second):
			t.Error("the other reconciler never reached the refund")
		}
	}}
	h := apptest.New(t, apptest.WithoutWebhooks, func(cfg *apptest.Setup) { cfg.ReconcilerHooks = hooks })
	c := h.NewCustomer(t)
	order(t, h, c, "paid")
	orphan(t, h, c, "orphan")
	// Charged, answer lost, still started: its order may still come.
	h.SetProvider(t, 0, "after_charge")
	h.PlaceOrder(t, c, "pending", oneMug)
	h.SetProvider(t, 0, "none")

	second := lifecycle.NewReconciler(h.DB, h.App.Payments, lifecycle.ReconcilerConfig{Hooks: hooks},
		h.App.Metrics, slog.New(slog.DiscardHandler))
	var wg sync.WaitGroup
	var refunded atomic.Int32
	for _, r := range []*lifecycle.Reconciler{h.App.Reconciler, second} {
		wg.Go(func() {
			got, err := r.Pass(context.Background())
			if err != nil {
				t.Errorf("reconcile: %v", err)
			}
			if got.Examined != 3 {
				t.Errorf("got %d charges examined, want 3", got.Examined)
			}
			refunded.Add(int32(got.Refunded))
		})
	}
	wg.Wait()

	if got := refunded.Load(); got != 1 {
		t.Errorf("got %d refunds recorded by the two passes, want 1", got)
	}
	var refunds int
	if err := h.DB.Pool.QueryRow(context.Background(), "SELECT count(*) FROM fakestripe.refunds").Scan(&refunds); err != nil {
		t.Fatal(err)
	}
	if refunds != 1 {
		t.Errorf("got %d refunds at the provider, want 1", refunds)
	}
	if got := h.Metric(t, "exactlyonce_reconciler_refunds_total"); got != 1 {
		t.Errorf("got %v refunds in /metrics, want 1", got)
	}
	events := h.KeyEvents(t, c, "orphan")
	if last := events[len(events)-1]; last.Event != "refunded" || last.Detail["charge_id"] == "" {
		t.Errorf("got last event %+v, want refunded with the charge id", last)
	}
	for _, key := range []string{"paid", "pending"} {
		for _, e := range h.KeyEvents(t, c, key) {
			if e.Event == "refunded" {
				t.Errorf("key %q: got a refund, want none", key)
			}
		}
	}

	// A later pass finds the charge refunded and does nothing.
	if got, err := h.App.Reconciler.Pass(context.Background()); err != nil || got.Refunded != 0 {
		t.Errorf("third pass: got %+v, %v, want nothing refunded", got, err)
	}
	if got := h.Metric(t, "exactlyonce_orphan_charges_total"); got != 0 {
		t.Errorf("got %v orphan charges counted by the engine, want 0", got)
	}
}

func TestReconcilerCursorWaitsForPendingCharges(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, apptest.WithoutWebhooks, func(cfg *apptest.Setup) { cfg.LockTimeout = time.Second })
	c := h.NewCustomer(t)
	paid := order(t, h, c, "paid")
	h.SetProvider(t, 0, "after_charge")
	h.PlaceOrder(t, c, "pending", oneMug)
	h.SetProvider(t, 0, "none")
	// Lag off: every charge is old enough to pass.
	r := lifecycle.NewReconciler(h.DB, h.App.Payments, lifecycle.ReconcilerConfig{Lag: time.Nanosecond},
		h.App.Metrics, slog.New(slog.DiscardHandler))

	_ = paid
	paidIntent, err := h.Intent(t, c, "paid")
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Pass(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// The pending key's intent holds the cursor: its order may still come.
	if got.Examined != 2 || got.Cursor != paidIntent.Created {
		t.Errorf("got %+v, want 2 examined and the cursor at the paid order's intent, created %d", got, paidIntent.Created)
	}

	// Once the completer has written the pending key's order, the cursor
	// passes it.
	h.WaitLockExpired(t, c, "pending")
	if n, err := h.App.Completer.Pass(context.Background()); err != nil || n != 1 {
		t.Fatalf("completer: got %d, %v, want 1 key", n, err)
	}
	ch, err := h.Intent(t, c, "pending")
	if err != nil {
		t.Fatal(err)
	}
	got, err = r.Pass(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Intents of the cursor's second are read again: harmless.
	if got.Examined < 1 || got.Cursor != ch.Created || got.Refunded != 0 {
		t.Errorf("got %+v, want nothing refunded and the cursor at %d", got, ch.Created)
	}
	if cursor, err := h.DB.ReconcilerCursor(context.Background()); err != nil || cursor != ch.Created {
		t.Errorf("got stored cursor %d, %v, want %d", cursor, err, ch.Created)
	}
}

// A key the completer parked will not settle by itself: its charge must not
// hold the cursor, or every later charge would be read again on every pass.
func TestReconcilerCursorPassesAParkedKey(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, apptest.WithoutWebhooks)
	c := h.NewCustomer(t)
	h.SetProvider(t, 0, "after_charge")
	h.PlaceOrder(t, c, "stuck", oneMug)
	h.SetProvider(t, 0, "none")
	if _, err := h.DB.Pool.Exec(context.Background(),
		`UPDATE idem_keys SET parked_at = now() WHERE scope = $1::uuid::text AND key = 'stuck'`, c.ID); err != nil {
		t.Fatal(err)
	}
	order(t, h, c, "paid")
	paidIntent, err := h.Intent(t, c, "paid")
	if err != nil {
		t.Fatal(err)
	}
	r := lifecycle.NewReconciler(h.DB, h.App.Payments, lifecycle.ReconcilerConfig{Lag: time.Nanosecond},
		h.App.Metrics, slog.New(slog.DiscardHandler))
	got, err := r.Pass(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got.Examined != 2 || got.Cursor != paidIntent.Created || got.Refunded != 0 {
		t.Errorf("got %+v, want 2 examined, nothing refunded and the cursor past the parked key's intent, at %d", got, paidIntent.Created)
	}
	if n := h.Metric(t, "exactlyonce_reconciler_charges_total", "result", "parked"); n != 1 {
		t.Errorf("got %v parked charges in /metrics, want 1", n)
	}
}

func TestRefundMadeButNotRecordedIsRecordedByTheNextPass(t *testing.T) {
	t.Parallel()
	// The first pass refunds the orphan at the provider and stops before
	// recording it, as a reconciler killed between the two would.
	crashCtx, crash := context.WithCancel(context.Background())
	defer crash()
	var crashed atomic.Bool
	hooks := lifecycle.ReconcilerHooks{AfterRefund: func(context.Context, string) {
		if crashed.CompareAndSwap(false, true) {
			crash()
		}
	}}
	h := apptest.New(t, apptest.WithoutWebhooks, func(cfg *apptest.Setup) { cfg.ReconcilerHooks = hooks })
	c := h.NewCustomer(t)
	orphan(t, h, c, "orphan")
	if _, err := h.App.Reconciler.Pass(crashCtx); err == nil {
		t.Fatal("first pass: got no error, want it cut off before the record")
	}

	got, err := h.App.Reconciler.Pass(context.Background())
	if err != nil || got.Refunded != 1 {
		t.Errorf("second pass: got %+v, %v, want the refund recorded", got, err)
	}
	var recorded, refunds int
	err = h.DB.Pool.QueryRow(context.Background(),
		`SELECT (SELECT count(*) FROM reconciled_refunds), (SELECT count(*) FROM fakestripe.refunds)`).Scan(&recorded, &refunds)
	if err != nil {
		t.Fatal(err)
	}
	if recorded != 1 || refunds != 1 {
		t.Errorf("got %d refunds recorded and %d at the provider, want 1 and 1", recorded, refunds)
	}
	if got := h.Metric(t, "exactlyonce_reconciler_refunds_total"); got != 1 {
		t.Errorf("got %v refunds in /metrics, want 1", got)
	}
	events := h.KeyEvents(t, c, "orphan")
	if last := events[len(events)-1]; last.Event != "refunded" {
		t.Errorf("got last event %+v, want refunded", last)
	}
	// And only once: a third pass finds the refund recorded.
	if got, err := h.App.Reconciler.Pass(context.Background()); err != nil || got.Refunded != 0 {
		t.Errorf("third pass: got %+v, %v, want nothing refunded", got, err)
	}
}

// A succeeded charge whose key row was lost (a failover to a standby that
// had not received it, a restore) has no order and no key claiming it; the
// client's retry became a new operation with a charge of its own. The
// reconciler notes it, holds its cursor before it, and refunds it when a
// later pass finds it still unclaimed LostAfter after the first: once,
// counted as lost_key, recorded on the key's trail from the intent's
// metadata.
func TestReconcilerRefundsTheChargeOfALostKey(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, apptest.WithoutWebhooks)
	c := h.NewCustomer(t)
	order(t, h, c, "lost")
	ctx := context.Background()
	// The key and its order are lost; the provider's charge is not.
	if _, err := h.DB.Pool.Exec(ctx, `
		WITH k AS (DELETE FROM idem_keys WHERE scope = $1::uuid::text AND key = 'lost' RETURNING scope, key),
		     o AS (DELETE FROM order_keys WHERE scope = $1::uuid::text AND key = 'lost')
		DELETE FROM orders WHERE customer_id = $1 AND idempotency_key = 'lost'`, c.ID); err != nil {
		t.Fatalf("lose the key: %v", err)
	}
	r := lifecycle.NewReconciler(h.DB, h.App.Payments, lifecycle.ReconcilerConfig{Lag: time.Nanosecond, LostAfter: time.Hour},
		h.App.Metrics, slog.New(slog.DiscardHandler))
	got, err := r.Pass(ctx)
	if err != nil || got.Refunded != 0 || got.Cursor != 0 {
		t.Fatalf("first sight: got %+v, %v, want nothing refunded and the cursor held before the charge", got, err)
	}
	// An hour later by the database's clock (aged in SQL), it is still
	// unclaimed: a lost key's.
	if _, err := h.DB.Pool.Exec(ctx, `UPDATE reconciler_unclaimed_charges SET first_seen = first_seen - interval '2 hours'`); err != nil {
		t.Fatal(err)
	}
	got, err = r.Pass(ctx)
	if err != nil || got.Refunded != 1 || got.Cursor == 0 {
		t.Fatalf("second sight: got %+v, %v, want the charge refunded and the cursor past it", got, err)
	}
	var refunds int
	if err := h.DB.Pool.QueryRow(ctx, "SELECT count(*) FROM fakestripe.refunds").Scan(&refunds); err != nil || refunds != 1 {
		t.Errorf("got %d refunds at the provider (%v), want 1", refunds, err)
	}
	if got := h.Metric(t, "exactlyonce_reconciler_charges_total", "result", "lost_key"); got != 1 {
		t.Errorf("got %v lost_key charges in /metrics, want 1", got)
	}
	if got, err := r.Pass(ctx); err != nil || got.Refunded != 0 {
		t.Errorf("third pass: got %+v, %v, want nothing refunded again", got, err)
	}
	// The intent's metadata named the customer and key: the refund is on
	// that key's trail, as a lost operation's (issue 28).
	events := h.KeyEvents(t, c, "lost")
	if last := events[len(events)-1]; last.Event != "refunded" || last.Detail["lost_operation"] != true {
		t.Errorf("got last event %+v, want refunded, of a lost operation", last)
	}
}

// TestRefundKeyInUseIsAskedAgain: a pass whose refund finds the refund's
// key in use at the provider (the webhook handler, or another reconciler,
// refunding the same intent that moment; Stripe answers 409 with
// Stripe-Should-Retry: true) neither fails nor calls for an operator: it
// counts refund_later, not refund_failed, and the next pass refunds it.
func TestRefundKeyInUseIsAskedAgain(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, apptest.WithoutWebhooks)
	c := h.NewCustomer(t)
	orphan(t, h, c, "orphan")
	in, err := h.Intent(t, c, "orphan")
	if err != nil {
		t.Fatal(err)
	}

	release, err := h.Provider.HoldKey(context.Background(), lifecycle.RefundKey(in.ID))
	if err != nil {
		t.Fatal(err)
	}
	got, err := h.App.Reconciler.Pass(context.Background())
	release()
	if err != nil || got.Refunded != 0 {
		t.Fatalf("while the refund key is in use: got %+v, %v, want nothing refunded and no error", got, err)
	}
	if n := h.Metric(t, "exactlyonce_reconciler_charges_total", "result", "refund_later"); n != 1 {
		t.Errorf("got %v refund_later, want 1", n)
	}
	if n := h.Metric(t, "exactlyonce_reconciler_charges_total", "result", "refund_failed"); n != 0 {
		t.Errorf("got %v refund_failed (a refusal for an operator), want 0", n)
	}

	if got, err := h.App.Reconciler.Pass(context.Background()); err != nil || got.Refunded != 1 {
		t.Errorf("next pass: got %+v, %v, want the intent refunded", got, err)
	}
}
