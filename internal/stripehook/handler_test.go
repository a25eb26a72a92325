package stripehook_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v85"
	"github.com/stripe/stripe-go/v85/webhook"

	"exactlyonce/fakestripe"
	"exactlyonce/internal/apptest"
	"exactlyonce/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const secret = "whsec_test_0123456789"

const oneMug = `{"items": [{"sku": "mug-espresso", "quantity": 1}]}`

func newShop(t *testing.T) *apptest.Harness {
	t.Helper()
	return apptest.New(t, func(cfg *apptest.Setup) { cfg.StripeWebhookSecret = secret })
}

// post delivers a Stripe event of typ carrying object, of the SDK's API
// version, signed at signedAt with key.
func post(t *testing.T, h *apptest.Harness, id, typ string, object json.RawMessage, signedAt time.Time, key string) apptest.Response {
	t.Helper()
	return postVersion(t, h, stripe.APIVersion, id, typ, object, signedAt, key)
}

// postVersion is post with the event's api_version.
func postVersion(t *testing.T, h *apptest.Harness, apiVersion, id, typ string, object json.RawMessage, signedAt time.Time, key string) apptest.Response {
	t.Helper()
	payload, _ := json.Marshal(map[string]any{
		"id": id, "object": "event", "api_version": apiVersion, "created": time.Now().Unix(),
		"data": map[string]any{"object": object}, "livemode": false, "pending_webhooks": 1, "type": typ,
	})
	sig := hex.EncodeToString(webhook.ComputeSignature(signedAt, payload, key))
	return h.Do(t, http.MethodPost, "/webhooks/stripe", string(payload),
		"Stripe-Signature", fmt.Sprintf("t=%d,v1=%s", signedAt.Unix(), sig), "Content-Type", "application/json")
}

func count(t *testing.T, h *apptest.Harness, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := h.DB.Pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// orphan leaves a succeeded intent whose key finished without an order
// (the test's own SQL closes the key with a 402, as a bug would), and
// returns the intent.
func orphan(t *testing.T, h *apptest.Harness, c apptest.Customer, key string) fakestripe.Intent {
	t.Helper()
	h.SetProvider(t, 0, "after_charge")
	if r := h.PlaceOrder(t, c, key, oneMug); r.Status != http.StatusBadGateway {
		t.Fatalf("order: got %d %s, want 502", r.Status, r.Body)
	}
	h.SetProvider(t, 0, "none")
	in, err := h.Intent(t, c, key)
	if err != nil {
		t.Fatal(err)
	}
	// The fake delivers its own payment_intent.succeeded for the charge;
	// it is handled while the key is started (pending), and only then is
	// the key closed, so that what the test posts next meets the orphan
	// first.
	for deadline := time.Now().Add(10 * time.Second); count(t, h, `SELECT count(*) FROM stripe_events
		WHERE payment_intent_id = $1 AND type = 'payment_intent.succeeded' AND effect = 'pending'`, in.ID) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the fake's own webhook for the charge never reached the inbox")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := h.DB.Pool.Exec(context.Background(), `UPDATE idem_keys
		SET status = 'finished', response_status = 402, response_body = '{}', finished_at = now()
		WHERE scope = $1::uuid::text AND key = $2`, c.ID, key); err != nil {
		t.Fatal(err)
	}
	return in
}

func TestBadOrStaleSignatureStoresNothing(t *testing.T) {
	t.Parallel()
	h := newShop(t)
	c := h.NewCustomer(t)
	in := orphan(t, h, c, "k")
	before := count(t, h, `SELECT count(*) FROM stripe_events`)
	for name, r := range map[string]apptest.Response{
		"wrong secret": post(t, h, "evt_bad", "payment_intent.succeeded", in.JSON(), time.Now(), "whsec_wrong"),
		"stale":        post(t, h, "evt_stale", "payment_intent.succeeded", in.JSON(), time.Now().Add(-6*time.Minute), secret),
	} {
		if r.Status != http.StatusBadRequest {
			t.Errorf("%s: got %d %s, want 400", name, r.Status, r.Body)
		}
	}
	if n := count(t, h, `SELECT count(*) FROM stripe_events WHERE event_id IN ('evt_bad', 'evt_stale')`); n != 0 {
		t.Errorf("got %d of the refused events stored, want 0", n)
	}
	if n := count(t, h, `SELECT count(*) FROM stripe_events`); n != before {
		t.Errorf("got %d events stored, want %d", n, before)
	}
}

func TestDuplicateEventRefundsOnce(t *testing.T) {
	t.Parallel()
	h := newShop(t)
	c := h.NewCustomer(t)
	in := orphan(t, h, c, "k")
	var effects []string
	for range 3 {
		r := post(t, h, "evt_dup", "payment_intent.succeeded", in.JSON(), time.Now(), secret)
		if r.Status != http.StatusOK {
			t.Fatalf("got %d %s, want 200", r.Status, r.Body)
		}
		effects = append(effects, strings.TrimSpace(string(r.Body)))
	}
	if effects[0] != "refunded" || effects[1] != "duplicate" || effects[2] != "duplicate" {
		t.Errorf("got effects %v, want refunded, then duplicates", effects)
	}
	if n := count(t, h, `SELECT count(*) FROM fakestripe.refunds WHERE payment_intent_id = $1`, in.ID); n != 1 {
		t.Errorf("got %d refunds at the provider, want 1", n)
	}
	if n := count(t, h, `SELECT count(*) FROM reconciled_refunds WHERE charge_id = $1`, in.ID); n != 1 {
		t.Errorf("got %d refunds recorded, want 1", n)
	}
	// The reconciler, the safety net, finds it refunded.
	if got, err := h.App.Reconciler.Pass(context.Background()); err != nil || got.Refunded != 0 {
		t.Errorf("reconciler: got %+v, %v, want nothing more refunded", got, err)
	}
}

func TestReorderedEventsHaveOneEffect(t *testing.T) {
	t.Parallel()
	h := newShop(t)
	c := h.NewCustomer(t)
	in := orphan(t, h, c, "k")
	// canceled (as if) before succeeded, and refunded before succeeded.
	for _, ev := range []struct{ id, typ string }{
		{"evt_1", "payment_intent.canceled"}, {"evt_2", "charge.refunded"}, {"evt_3", "payment_intent.succeeded"},
		{"evt_4", "payment_intent.succeeded"},
	} {
		if r := post(t, h, ev.id, ev.typ, in.JSON(), time.Now(), secret); r.Status != http.StatusOK {
			t.Fatalf("%s: got %d %s, want 200", ev.typ, r.Status, r.Body)
		}
	}
	if n := count(t, h, `SELECT count(*) FROM fakestripe.refunds WHERE payment_intent_id = $1`, in.ID); n != 1 {
		t.Errorf("got %d refunds at the provider, want 1", n)
	}
	if n := count(t, h, `SELECT count(*) FROM reconciled_refunds WHERE charge_id = $1`, in.ID); n != 1 {
		t.Errorf("got %d refunds recorded, want 1", n)
	}
	events := h.KeyEvents(t, c, "k")
	refunded := 0
	for _, e := range events {
		if e.Event == "refunded" {
			refunded++
		}
	}
	if refunded != 1 {
		t.Errorf("got %d refunded events on the key's trail, want 1", refunded)
	}
}

func TestSucceededEventOfAPlacedOrderChangesNothing(t *testing.T) {
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
	r := post(t, h, "evt_ok", "payment_intent.succeeded", in.JSON(), time.Now(), secret)
	if r.Status != http.StatusOK || strings.TrimSpace(string(r.Body)) != "matched" {
		t.Errorf("got %d %s, want 200 matched", r.Status, r.Body)
	}
	if n := count(t, h, `SELECT count(*) FROM fakestripe.refunds`); n != 0 {
		t.Errorf("got %d refunds, want 0", n)
	}
}
