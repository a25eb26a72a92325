package apptest

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"exactlyonce/internal/payment"
	"exactlyonce/internal/stripetest"
)

// PaidElsewhere makes a succeeded PaymentIntent at the fake Stripe that the
// shop did not make, with md as its metadata, as a Payment Link, an
// invoice, another app or another shop on the same account would: through
// a fake of its own on the same state as the harness's fake (its schema on
// the test's database), with a client that writes no deployment marker of its own, and
// sending no webhooks (a test posts what it wants the shop to receive).
func (h *Harness) PaidElsewhere(tb testing.TB, md payment.Metadata) payment.Intent {
	tb.Helper()
	ctx := context.Background()
	c := stripetest.StartOn(tb, h.DB.Pool).Client(5 * time.Second)
	key := "elsewhere_" + uuid.NewString()
	in, err := c.CreateIntent(ctx, payment.IntentRequest{IdempotencyKey: key, Amount: 1234, Currency: "eur",
		Description: "paid elsewhere", Metadata: md})
	if err != nil {
		tb.Fatalf("create an intent elsewhere: %v", err)
	}
	pm, _ := payment.PaymentMethod("4242424242424242")
	if in, err = c.ConfirmIntent(ctx, in.ID, key+"/confirm", pm, ""); err != nil || in.Status != payment.StatusSucceeded {
		tb.Fatalf("confirm an intent elsewhere: got %+v, %v, want it succeeded", in, err)
	}
	return in
}

// CancelAtProvider cancels the intent id at the fake Stripe as the
// completer's cancel does (reason abandoned), through a fake of its own on
// the harness's state and sending no webhooks: the state a key is left in
// when the completer canceled its intent and then lost its finish (its
// lease lapsed in a stalled database, say) to the client's retry.
func (h *Harness) CancelAtProvider(tb testing.TB, id string) {
	tb.Helper()
	c := stripetest.StartOn(tb, h.DB.Pool).Client(5 * time.Second)
	if in, err := c.CancelIntent(context.Background(), id, "test-cancel_"+id); err != nil || in.Status != payment.StatusCanceled {
		tb.Fatalf("cancel intent %s: got %+v, %v, want it canceled", id, in, err)
	}
}
