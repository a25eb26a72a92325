package checkout_test

import (
	"net/http"
	"testing"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/outbox"
)

// wantJobsPerOrder checks the outbox against the orders: every order has
// one job of each kind of the "order placed" event, and no job exists
// without its order.
func wantJobsPerOrder(t *testing.T, h *apptest.Harness, orders int64) {
	t.Helper()
	kinds := int64(len(outbox.OrderPlacedKinds))
	if got := h.Count(t, `SELECT count(*) FROM river_job`); got != orders*kinds {
		t.Errorf("got %d jobs, want %d (%d orders × %d kinds)", got, orders*kinds, orders, kinds)
	}
	if got := h.Count(t, `SELECT count(*) FROM river_job j WHERE NOT EXISTS (
		SELECT FROM orders o WHERE o.id = (j.args->>'order_id')::uuid AND o.customer_id = (j.args->>'customer_id')::uuid)`); got != 0 {
		t.Errorf("got %d jobs whose order does not exist, want 0", got)
	}
}

// A finish whose statement fails rolls back everything in it: no order, no
// stored answer, and no job. The enqueue cannot outlive the order.
func TestFailedFinishEnqueuesNothing(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	checkout.UseFinishThatFails(h.App.Checkout)
	c := h.NewCustomer(t)
	if r := h.PlaceOrder(t, c, "k", oneMug); r.Status != http.StatusInternalServerError {
		t.Fatalf("got %d %s, want 500 from a failing finish", r.Status, r.Body)
	}
	wantJobsPerOrder(t, h, 0)
	if got := h.Count(t, `SELECT count(*) FROM idem_keys WHERE status = 'finished'`); got != 0 {
		t.Errorf("got %d finished keys, want 0: the stored answer rolled back with the rest", got)
	}
}

// The original's finish loses its key to the retry (its lock token is
// stale): it writes no order, so it enqueues nothing, and the one order,
// the retry's, has its jobs.
func TestLostFinishEnqueuesNothing(t *testing.T) {
	t.Parallel()
	h, original, retry := slowOriginal(t, nil)
	if retry.Status != http.StatusCreated || original.Status != http.StatusConflict {
		t.Fatalf("got original %d, retry %d; want 409, 201", original.Status, retry.Status)
	}
	wantJobsPerOrder(t, h, 1)
}

// Mutation: the finish with no guard (UseFinishWithoutGuard) writes two
// orders for one charge, and each has its jobs: the outbox follows the
// orders exactly, so the finish's guards are what keep its events single.
func TestWithoutAnyGuardEachOrderEnqueues(t *testing.T) {
	t.Parallel()
	h, _, _ := slowOriginal(t, checkout.UseFinishWithoutGuard)
	h.WantStats(t, 1, 2)
	wantJobsPerOrder(t, h, 2)
}
