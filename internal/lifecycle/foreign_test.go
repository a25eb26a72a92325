package lifecycle_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/uuid"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/lifecycle"
	"exactlyonce/internal/payment"
)

// loseKey deletes a key, its order and its order's row, as a failover to
// a standby that had not received them would; the provider's charge stays.
func loseKey(t *testing.T, h *apptest.Harness, c apptest.Customer, key string) {
	t.Helper()
	if _, err := h.DB.Pool.Exec(context.Background(), `
		WITH k AS (DELETE FROM idem_keys WHERE scope = $1::uuid::text AND key = $2 RETURNING scope, key),
		     o AS (DELETE FROM order_keys WHERE scope = $1::uuid::text AND key = $2)
		DELETE FROM orders WHERE customer_id = $1 AND idempotency_key = $2`, c.ID, key); err != nil {
		t.Fatalf("lose the key: %v", err)
	}
}

// ageUnclaimed makes every unclaimed intent the reconciler noted two hours
// old by the database's clock, past any LostAfter the tests set.
func ageUnclaimed(t *testing.T, h *apptest.Harness) {
	t.Helper()
	if _, err := h.DB.Pool.Exec(context.Background(),
		`UPDATE reconciler_unclaimed_charges SET first_seen = first_seen - interval '2 hours'`); err != nil {
		t.Fatal(err)
	}
}

func providerRefunds(t *testing.T, h *apptest.Harness, intentID string) int {
	t.Helper()
	var n int
	if err := h.DB.Pool.QueryRow(context.Background(),
		`SELECT count(*) FROM fakestripe.refunds WHERE payment_intent_id = $1`, intentID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// adminRows lists the intent ids of the rows of a table of the admin
// listener's /payments.
func adminRows(t *testing.T, h *apptest.Harness, table string) []string {
	t.Helper()
	r := h.Admin(t, "/payments")
	if r.Status != http.StatusOK {
		t.Fatalf("/payments: got %d %s, want 200", r.Status, r.Body)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(string(r.Body)))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	doc.Find(`[data-testid="` + table + `"] [data-testid="intent-id"]`).Each(func(_ int, s *goquery.Selection) {
		ids = append(ids, s.Text())
	})
	return ids
}

// TestReconcilerLeavesIntentsItDidNotMake: one Stripe account holds
// intents of Payment Links, invoices, the dashboard, another app, another
// shop (issue 33). A succeeded intent no order or key of this database
// holds is refunded as a lost key's only when its metadata carries this
// deployment's marker and names a customer of this database; the others
// are recorded once each, counted, listed for an operator, and never
// refunded. Before the fix every one of them was refunded as a lost key's.
func TestReconcilerLeavesIntentsItDidNotMake(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := apptest.New(t, apptest.WithoutWebhooks)
	c := h.NewCustomer(t)
	ours, err := h.DB.DeploymentID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Ours, lost to a failover: still refunded.
	order(t, h, c, "lost")
	lost, err := h.Intent(t, c, "lost")
	if err != nil {
		t.Fatal(err)
	}
	if lost.Metadata["deployment_id"] != ours {
		t.Errorf("got the shop's intent marked %q, want this deployment's %q", lost.Metadata["deployment_id"], ours)
	}
	loseKey(t, h, c, "lost")
	foreign := map[string]payment.Intent{
		"no metadata": h.PaidElsewhere(t, payment.Metadata{}),
		"another deployment, our customer": h.PaidElsewhere(t, payment.Metadata{
			CustomerID: c.ID.String(), Key: "k", OperationID: uuid.NewString(), Deployment: uuid.NewString()}),
		"our deployment, no customer of ours": h.PaidElsewhere(t, payment.Metadata{
			CustomerID: uuid.NewString(), Key: "k", OperationID: uuid.NewString(), Deployment: ours}),
		"our customer, no marker": h.PaidElsewhere(t, payment.Metadata{
			CustomerID: c.ID.String(), Key: "k", OperationID: uuid.NewString()}),
	}

	r := lifecycle.NewReconciler(h.DB, h.App.Payments, lifecycle.ReconcilerConfig{Lag: time.Nanosecond, LostAfter: time.Hour},
		h.App.Metrics, slog.New(slog.DiscardHandler))
	for pass := range 3 {
		if _, err := r.Pass(ctx); err != nil {
			t.Fatalf("pass %d: %v", pass, err)
		}
		ageUnclaimed(t, h)
	}

	if n := providerRefunds(t, h, lost.ID); n != 1 {
		t.Errorf("our lost key's intent: got %d refunds, want 1", n)
	}
	listed := adminRows(t, h, "foreign-intents")
	for name, in := range foreign {
		if n := providerRefunds(t, h, in.ID); n != 0 {
			t.Errorf("%s: got %d refunds, want 0", name, n)
		}
		found := false
		for _, id := range listed {
			found = found || id == in.ID
		}
		if !found {
			t.Errorf("%s: %s not listed on /payments (got %v)", name, in.ID, listed)
		}
	}
	if len(listed) != len(foreign) {
		t.Errorf("got %d foreign intents listed, want %d: %v", len(listed), len(foreign), listed)
	}
	// Counted once each, though three passes read them.
	if n := h.Metric(t, "exactlyonce_foreign_intents_total", "source", "reconciler"); n != float64(len(foreign)) {
		t.Errorf("got %v foreign intents counted, want %d", n, len(foreign))
	}
}

// refusingRefunds is the provider, but it refuses every refund for good,
// as Stripe does a disputed charge's, and counts the refunds asked.
type refusingRefunds struct {
	lifecycle.Provider
	asked *int
}

func (p refusingRefunds) Refund(context.Context, string, string) (payment.Refund, error) {
	*p.asked++
	return payment.Refund{}, &payment.ProviderError{Status: http.StatusBadRequest, Type: "invalid_request_error",
		Code: "charge_disputed", Message: "This charge is disputed."}
}

// TestRefusedRefundIsParkedAndTheCursorMovesOn: a refund the provider
// refuses for good is parked for an operator (recorded once, counted,
// listed on /payments) and the cursor moves past it, instead of staying
// before it and reading it, and every intent after it, on every pass
// (issue 33). Before the fix the cursor stayed at 0.
func TestRefusedRefundIsParkedAndTheCursorMovesOn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := apptest.New(t, apptest.WithoutWebhooks)
	c := h.NewCustomer(t)
	orphan(t, h, c, "orphan")
	in, err := h.Intent(t, c, "orphan")
	if err != nil {
		t.Fatal(err)
	}
	order(t, h, c, "later")
	later, err := h.Intent(t, c, "later")
	if err != nil {
		t.Fatal(err)
	}
	asked := 0
	r := lifecycle.NewReconciler(h.DB, refusingRefunds{Provider: h.App.Payments, asked: &asked},
		lifecycle.ReconcilerConfig{Lag: time.Nanosecond}, h.App.Metrics, slog.New(slog.DiscardHandler))
	got, err := r.Pass(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.Refunded != 0 || got.Cursor != later.Created {
		t.Errorf("got %+v, want nothing refunded and the cursor past the refused intent, at %d", got, later.Created)
	}
	if _, err := r.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if asked != 1 {
		t.Errorf("got %d refunds asked, want 1: a parked refund is not asked again", asked)
	}
	if n := h.Metric(t, "exactlyonce_refused_refunds_total"); n != 1 {
		t.Errorf("got %v refused refunds counted, want 1", n)
	}
	if ids := adminRows(t, h, "refused-refunds"); len(ids) != 1 || ids[0] != in.ID {
		t.Errorf("got %v parked on /payments, want [%s]", ids, in.ID)
	}
}

// TestReconcilerRefundsALateSuccessOfALostKey: an intent whose first
// confirm failed (its key handed back, still started) is not succeeded
// when a pass reads it, and the cursor passes it; its retry then confirms
// it, and the key is lost (an asynchronous failover). Before the fix no
// pass ever read it again and the charge was never refunded (issue 33);
// now the pass puts it on the watch list and a later pass refunds it.
func TestReconcilerRefundsALateSuccessOfALostKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := apptest.New(t, apptest.WithoutWebhooks, func(cfg *apptest.Setup) { cfg.LockTimeout = time.Second })
	c := h.NewCustomer(t)
	h.SetProvider(t, 0, "before_charge")
	if r := h.PlaceOrder(t, c, "late", oneMug); r.Status != http.StatusBadGateway {
		t.Fatalf("first attempt: got %d %s, want 502", r.Status, r.Body)
	}
	h.SetProvider(t, 0, "none")
	in, err := h.Intent(t, c, "late")
	if err != nil {
		t.Fatal(err)
	}
	if in.Status != payment.StatusRequiresPaymentMethod {
		t.Fatalf("got the intent %s, want requires_payment_method", in.Status)
	}
	r := lifecycle.NewReconciler(h.DB, h.App.Payments, lifecycle.ReconcilerConfig{Lag: time.Nanosecond, LostAfter: time.Hour},
		h.App.Metrics, slog.New(slog.DiscardHandler))
	got, err := r.Pass(ctx)
	if err != nil || got.Cursor != in.Created {
		t.Fatalf("first pass: got %+v, %v, want the cursor at the intent, which cannot hold it", got, err)
	}
	// Later intents settled would move the cursor past the intent's
	// second; so does this.
	if err := h.DB.AdvanceReconcilerCursor(ctx, in.Created+1); err != nil {
		t.Fatal(err)
	}

	h.WaitLockExpired(t, c, "late")
	if r := h.PlaceOrder(t, c, "late", oneMug); r.Status != http.StatusCreated {
		t.Fatalf("retry: got %d %s, want 201", r.Status, r.Body)
	}
	loseKey(t, h, c, "late")
	for pass := range 2 {
		if _, err := r.Pass(ctx); err != nil {
			t.Fatalf("pass %d: %v", pass, err)
		}
		ageUnclaimed(t, h)
	}
	if n := providerRefunds(t, h, in.ID); n != 1 {
		t.Errorf("got %d refunds of the late success, want 1", n)
	}
	if n := h.Count(t, `SELECT count(*) FROM reconciler_watched_intents`); n != 0 {
		t.Errorf("got %d intents still watched, want 0 once refunded", n)
	}
}
