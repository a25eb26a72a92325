package checkout_test

// A confirm that returns without an error has not always charged: Stripe
// answers 200 with the intent requires_action (3-D Secure) or processing.
// Only an intent that succeeded, for the order's amount and currency, is
// an order. Each test goes through the real HTTP API, the real fake Stripe
// and PostgreSQL.

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"exactlyonce/fakestripe"
	"exactlyonce/internal/apptest"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/database"
	"exactlyonce/internal/problem"
)

// mugWith is an order of one mug paid with card.
func mugWith(card string) string {
	return `{"items": [{"sku": "mug-espresso", "quantity": 1}], "card": "` + card + `"}`
}

// fakeOf is the harness's fake Stripe, whose intents the tests read and
// move.
func fakeOf(h *apptest.Harness) *fakestripe.Provider { return h.Provider }

// wantIntentStatus fails unless the intent of the key's operation is in
// status at the fake, and returns it.
func wantIntentStatus(t *testing.T, h *apptest.Harness, c apptest.Customer, key, status string) fakestripe.Intent {
	t.Helper()
	in, err := h.Intent(t, c, key)
	if err != nil {
		t.Fatal(err)
	}
	if in.Status != status {
		t.Errorf("got intent %s %s, want %s", in.ID, in.Status, status)
	}
	return in
}

func TestAConfirmThatAsksForAuthenticationIsNotAnOrder(t *testing.T) {
	t.Parallel()
	for name, setup := range map[string]struct{ card, fault string }{
		"3-D Secure card number":     {"4000 0027 6000 3184", "none"},
		"3-D Secure PaymentMethod":   {"pm_card_authenticationRequired", "none"},
		"on-setup card number":       {"4000002500003155", "none"},
		"the fake's requires_action": {"4242424242424242", "requires_action"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := apptest.New(t)
			c := h.NewCustomer(t)
			h.SetProvider(t, 0, setup.fault)

			r := h.PlaceOrder(t, c, "k", mugWith(setup.card))
			p := apptest.WantProblem(t, r, problem.PaymentNotCompleted)
			if k := h.Key(t, c, "k"); k.Status != "finished" {
				t.Errorf("got key %s, want finished (settled as not charged)", k.Status)
			}
			// Canceled at the provider: no later confirm can charge it.
			in := wantIntentStatus(t, h, c, "k", fakestripe.StatusCanceled)
			if p.ChargeID != in.ID {
				t.Errorf("got charge_id %q, want the canceled intent %s", p.ChargeID, in.ID)
			}
			wantReplay(t, h.PlaceOrder(t, c, "k", mugWith(setup.card)), http.StatusPaymentRequired)
			h.WantStats(t, 0, 0)
		})
	}
}

func TestAProcessingConfirmIsNotAPaidOrder(t *testing.T) {
	t.Parallel()
	for name, succeed := range map[string]bool{"then succeeds": true, "then fails": false} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := apptest.New(t)
			c := h.NewCustomer(t)

			// Processing: nobody knows yet whether money moves. The client
			// is told the outcome is unknown, and nothing is stored.
			r := h.PlaceOrder(t, c, "k", mugWith(fakestripe.ProcessingPaymentMethod))
			apptest.WantProblem(t, r, problem.OutcomeUnknown)
			if r.Header.Get("Retry-After") == "" {
				t.Errorf("got no Retry-After, want one")
			}
			if k := h.Key(t, c, "k"); k.Status != "started" {
				t.Errorf("got key %s, want started (outcome unknown)", k.Status)
			}
			in := wantIntentStatus(t, h, c, "k", fakestripe.StatusProcessing)
			h.WantStats(t, 0, 0)

			// Still processing: a retry is told the same, and stores nothing.
			r = h.PlaceOrder(t, c, "k", mugWith(fakestripe.ProcessingPaymentMethod))
			apptest.WantProblem(t, r, problem.OutcomeUnknown)
			h.WantStats(t, 0, 0)

			// The bank settles it; the retry learns the final status.
			if _, err := fakeOf(h).MoveOn(context.Background(), in.ID, succeed); err != nil {
				t.Fatal(err)
			}
			r = h.PlaceOrder(t, c, "k", mugWith(fakestripe.ProcessingPaymentMethod))
			if succeed {
				if r.Status != http.StatusCreated {
					t.Fatalf("got %d %s, want 201", r.Status, r.Body)
				}
				h.WantStats(t, 1, 1)
				return
			}
			apptest.WantProblem(t, r, problem.PaymentDeclined)
			h.WantStats(t, 0, 0)
		})
	}
}

// The completer settles a processing intent by its final status, and
// never writes an order while it is processing.
func TestCompleterWaitsForAProcessingIntent(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, func(cfg *apptest.Setup) { cfg.LockTimeout = time.Second })
	c := h.NewCustomer(t)
	r := h.PlaceOrder(t, c, "k", mugWith(fakestripe.ProcessingPaymentMethod))
	apptest.WantProblem(t, r, problem.OutcomeUnknown)
	h.WaitLockExpired(t, c, "k")

	if n := pass(t, h); n != 1 {
		t.Fatalf("got %d keys taken over, want 1", n)
	}
	if k := h.Key(t, c, "k"); k.Status != "started" {
		t.Errorf("got key %s, want started while the intent is processing", k.Status)
	}
	in := wantIntentStatus(t, h, c, "k", fakestripe.StatusProcessing)
	h.WantStats(t, 0, 0)

	if _, err := fakeOf(h).MoveOn(context.Background(), in.ID, true); err != nil {
		t.Fatal(err)
	}
	h.WaitLockExpired(t, c, "k")
	if n := pass(t, h); n != 1 {
		t.Fatalf("got %d keys taken over, want 1", n)
	}
	h.WantStats(t, 1, 1)
	wantNoOrphans(t, h)
}

// tamperAmount changes the amount of the key's intent at the fake, standing
// for a provider (or a bug of ours) that charges another amount than the
// order's: the test's own SQL, as no call of the API does this.
func tamperAmount(ctx context.Context, d *database.DB, key string) error {
	_, err := d.Pool.Exec(ctx, `UPDATE fakestripe.payment_intents SET amount = amount + 100
		WHERE metadata->>'idempotency_key' = $1`, key)
	return err
}

func TestASucceededChargeOfAnotherAmountIsNotAPaidOrder(t *testing.T) {
	t.Parallel()
	var h *apptest.Harness
	h = apptest.New(t, func(cfg *apptest.Setup) {
		cfg.Hooks.BeforeConfirm = func(ctx context.Context, c checkout.Claimed) {
			if err := tamperAmount(ctx, h.DB, c.Key); err != nil {
				t.Error(err)
			}
		}
	})
	c := h.NewCustomer(t)

	r := h.PlaceOrder(t, c, "k", oneMug)
	apptest.WantProblem(t, r, problem.PaymentNotCompleted)
	if k := h.Key(t, c, "k"); k.Status != "finished" {
		t.Errorf("got key %s, want finished", k.Status)
	}
	// Charged, but for another amount: refunded, and no order holds it.
	// The request refunds it after its finish, and so does the webhook
	// handler, which finds the intent succeeded for a key finished without
	// an order; both refund under one provider key, so whichever asks
	// second is told the refund is in progress (and logs it) while the
	// first completes it. The refund is read once either is done: in CI's
	// PgBouncer leg (6 December) the test once found neither done when it
	// looked at once; 60 runs here later did not fail, so the reading that
	// the request lost the race to a webhook not done yet is likely, not
	// shown.
	in := waitRefunded(t, h, c, "k")
	if in.Status != fakestripe.StatusSucceeded {
		t.Errorf("got intent %s %s, want succeeded", in.ID, in.Status)
	}
	h.WantStats(t, 1, 0)
	wantEvents(t, h, c, "k", "claimed", "finished", "refunded")
}

// waitRefunded waits up to 10 s for key's intent to be refunded and the
// refund on the key's trail, and returns the intent.
func waitRefunded(t *testing.T, h *apptest.Harness, c apptest.Customer, key string) fakestripe.Intent {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		in, err := h.Intent(t, c, key)
		if err != nil {
			t.Fatal(err)
		}
		if in.Refunded && slices.Contains(apptest.EventNames(h.KeyEvents(t, c, key)), "refunded") {
			return in
		}
		if time.Now().After(deadline) {
			t.Fatalf("intent %s: refunded %v, events %v after 10 s; want refunded, with the event", in.ID, in.Refunded,
				apptest.EventNames(h.KeyEvents(t, c, key)))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestCompleterRefundsASucceededChargeOfAnotherAmount(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, func(cfg *apptest.Setup) { cfg.LockTimeout = time.Second })
	c := h.NewCustomer(t)
	strand(t, h, c, "k", oneMug, "after_charge")
	if err := tamperAmount(context.Background(), h.DB, "k"); err != nil {
		t.Fatal(err)
	}
	h.SetProvider(t, 0, "none")

	if n := pass(t, h); n != 1 {
		t.Fatalf("got %d keys taken over, want 1", n)
	}
	k := h.Key(t, c, "k")
	if k.Status != "finished" || k.ResponseStatus == nil || *k.ResponseStatus != http.StatusPaymentRequired {
		t.Errorf("got key %s with answer %v, want finished with 402", k.Status, k.ResponseStatus)
	}
	if in := wantIntentStatus(t, h, c, "k", fakestripe.StatusSucceeded); !in.Refunded {
		t.Errorf("got intent %s not refunded, want refunded", in.ID)
	}
	h.WantStats(t, 1, 0)
}

// Only the PaymentMethods the shop lists are sent: any other pm_card_… is
// refused as an unknown card is, before the key is claimed.
func TestAnUnlistedPaymentMethodIsRefusedBeforeTheClaim(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	c := h.NewCustomer(t)
	for _, pm := range []string{"pm_card_madeUpName", "pm_card_visa_chargeDeclinedFraudulent"} {
		r := h.PlaceOrder(t, c, "k", mugWith(pm))
		p := apptest.WantProblem(t, r, problem.InvalidRequest)
		if p.Detail == "" {
			t.Errorf("%s: got no detail, want the reason", pm)
		}
		h.WantNothingStored(t)
	}
	if r := h.PlaceOrder(t, c, "k", mugWith("pm_card_visa")); r.Status != http.StatusCreated {
		t.Fatalf("the same key with a listed PaymentMethod: got %d %s, want 201", r.Status, r.Body)
	}
	h.WantStats(t, 1, 1)
}
