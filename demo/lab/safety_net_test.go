package lab_test

import (
	"context"
	"net/http"
	"testing"

	"exactlyonce/internal/apptest"
)

func TestLabShowsTheSafetyNet(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withLab)
	c := h.NewCustomer(t)
	// An orphan, as a bug or a restore would leave it: charged, the answer
	// lost, then the key closed without an order by the test's own SQL.
	h.SetProvider(t, 0, "after_charge")
	if r := h.PlaceOrder(t, c, "k", oneMug); r.Status != http.StatusBadGateway {
		t.Fatalf("order: got %d %s, want 502", r.Status, r.Body)
	}
	h.SetProvider(t, 0, "none")
	if _, err := h.DB.Pool.Exec(context.Background(), `UPDATE idem_keys
		SET status = 'finished', response_status = 402, response_body = '{}', finished_at = now()
		WHERE scope = $1::uuid::text`, c.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := h.App.Reconciler.Pass(context.Background()); err != nil {
		t.Fatalf("reconcile: %v", err)
	}

	p := apptest.NewShopper(t, h).Get(t, "/lab")
	if p.Status != http.StatusOK {
		t.Fatalf("lab: got %d, want 200", p.Status)
	}
	net := p.Doc.Find(`[data-testid="safety-net"]`)
	if got := net.Find(`[data-testid="refunds"]`).Text(); got != "1" {
		t.Errorf("got %q refunds on the lab apptest.Page, want 1", got)
	}
	if got := net.Find(`[data-testid="parked"]`).Text(); got != "0" {
		t.Errorf("got %q parked keys on the lab apptest.Page, want 0", got)
	}
}
