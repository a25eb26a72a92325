package app_test

import (
	"context"
	"net/http"
	"testing"

	"exactlyonce/internal/apptest"
	"exactlyonce/localpg"
)

// The admin listener's order page, where an operator's refund form is
// minted, answers a database outage as the shop does: 503 with a
// Retry-After, not a 500 (the chaos run's operator clients read it while
// PostgreSQL is down). Once the database is back, the page serves again.
func TestAdminOrderPageDuringOutage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pg, opts, pool := ownDatabase(t)
	h := apptest.NewOnPool(t, pool)
	c := h.NewCustomer(t)
	r := h.PlaceOrder(t, c, "order-1", oneMug)
	if r.Status != http.StatusCreated {
		t.Fatalf("place order: %d %s", r.Status, r.Body)
	}
	var o struct {
		OrderID string `json:"order_id"`
	}
	r.JSON(t, &o)
	if err := pg.Crash(ctx); err != nil {
		t.Fatal(err)
	}
	if got := h.Admin(t, "/orders/"+o.OrderID); got.Status != http.StatusServiceUnavailable || got.Header.Get("Retry-After") == "" {
		t.Errorf("the order's admin page during the outage: %d (Retry-After %q) %s, want 503 with a Retry-After",
			got.Status, got.Header.Get("Retry-After"), got.Body)
	}
	if _, err := localpg.Start(ctx, opts); err != nil {
		t.Fatal(err)
	}
	waitReady(t, h)
	if got := h.Admin(t, "/orders/"+o.OrderID); got.Status != http.StatusOK {
		t.Errorf("the order's admin page after the restart: %d, want 200", got.Status)
	}
}
