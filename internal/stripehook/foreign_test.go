package stripehook_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"exactlyonce/internal/payment"
)

// TestForgedMetadataDoesNotRefundAPaidOrder: the handler finds an intent's
// order and key by the intent's id, never by the event's metadata (issue
// 33). A validly signed payment_intent.succeeded for a paid order's
// intent whose metadata was emptied, or names another customer, is
// matched, not refunded. Before the fix both were answered "refunded" and
// the provider refunded the paid order's charge.
func TestForgedMetadataDoesNotRefundAPaidOrder(t *testing.T) {
	t.Parallel()
	h := newShop(t)
	c := h.NewCustomer(t)
	if r := h.PlaceOrder(t, c, "k", oneMug); r.Status != http.StatusCreated {
		t.Fatalf("order: got %d %s", r.Status, r.Body)
	}
	in, err := h.Intent(t, c, "k")
	if err != nil {
		t.Fatal(err)
	}
	other := h.NewCustomer(t)
	for name, md := range map[string]map[string]string{
		"emptied":          {},
		"another customer": {"customer_id": other.ID.String(), "idempotency_key": "k", "operation_id": uuid.NewString()},
	} {
		forged := in
		forged.Metadata = md
		r := post(t, h, "evt_"+strings.ReplaceAll(name, " ", "_"), "payment_intent.succeeded", forged.JSON(), time.Now(), secret)
		if r.Status != http.StatusOK || strings.TrimSpace(string(r.Body)) != "matched" {
			t.Errorf("%s: got %d %s, want 200 matched", name, r.Status, r.Body)
		}
	}
	if n := count(t, h, `SELECT count(*) FROM fakestripe.refunds WHERE payment_intent_id = $1`, in.ID); n != 0 {
		t.Errorf("got %d refunds of the paid order's intent, want 0", n)
	}
}

// TestWebhookLeavesIntentsItDidNotMake: a payment_intent.succeeded for an
// intent this database did not make (no order or key of its own holds it,
// its metadata carries no marker of this deployment) is recorded once,
// counted and left alone (issue 33). Before the fix it was refunded at
// once.
func TestWebhookLeavesIntentsItDidNotMake(t *testing.T) {
	t.Parallel()
	h := newShop(t)
	c := h.NewCustomer(t)
	for i, md := range []payment.Metadata{
		{},
		{CustomerID: c.ID.String(), Key: "k", OperationID: uuid.NewString(), Deployment: uuid.NewString()},
	} {
		paid := h.PaidElsewhere(t, md)
		in, err := h.Provider.Intent(context.Background(), paid.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"a", "b"} { // two events of one intent: recorded and counted once
			r := post(t, h, "evt_foreign_"+id+paid.ID, "payment_intent.succeeded", in.JSON(), time.Now(), secret)
			if r.Status != http.StatusOK || strings.TrimSpace(string(r.Body)) != "foreign" {
				t.Errorf("intent %d: got %d %s, want 200 foreign", i, r.Status, r.Body)
			}
		}
		if n := count(t, h, `SELECT count(*) FROM fakestripe.refunds WHERE payment_intent_id = $1`, paid.ID); n != 0 {
			t.Errorf("intent %d: got %d refunds, want 0", i, n)
		}
		if n := count(t, h, `SELECT count(*) FROM foreign_intents WHERE payment_intent_id = $1 AND source = 'webhook'`, paid.ID); n != 1 {
			t.Errorf("intent %d: got %d records, want 1", i, n)
		}
	}
	if n := h.Metric(t, "exactlyonce_foreign_intents_total", "source", "webhook"); n != 2 {
		t.Errorf("got %v foreign intents counted, want 2", n)
	}
	// The reconciler, reading them too, leaves them alone.
	if got, err := h.App.Reconciler.Pass(context.Background()); err != nil || got.Refunded != 0 {
		t.Errorf("reconciler: got %+v, %v, want nothing refunded", got, err)
	}
}
