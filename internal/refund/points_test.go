package refund_test

import (
	"context"
	"testing"

	"exactlyonce/internal/apptest"
)

// A refund takes back the whole points of what was refunded so far, never
// more: refunds of 1.50 and then 1.50 more take back 1 point, then 2 (3 in
// all, for 3.00), as the award is the amount / 100 rounded down. Found by
// the chaos run's points invariant: the reversal divided a numeric sum,
// which PostgreSQL rounds to the nearest on insert, so a cancel of an order
// of 91.50 took back 92 points of an award of 91.
func TestReversalsTakeBackWholePointsOnly(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, apptest.WithoutWebhooks)
	h.StartJobs(t)
	c, order, _ := placed(t, h, 2)
	ctx := context.Background()
	if _, err := operatorRefund(ctx, h, c, order, "op-1", 150); err != nil {
		t.Fatal(err)
	}
	h.WaitCount(t, 1, `SELECT count(*) FROM loyalty_reversals`)
	if got := h.Count(t, `SELECT sum(points)::bigint FROM loyalty_reversals`); got != 1 {
		t.Errorf("after refunding 1.50: %d points taken back, want 1", got)
	}
	if _, err := operatorRefund(ctx, h, c, order, "op-2", 150); err != nil {
		t.Fatal(err)
	}
	h.WaitCount(t, 2, `SELECT count(*) FROM loyalty_reversals`)
	if got := h.Count(t, `SELECT sum(points)::bigint FROM loyalty_reversals`); got != 3 {
		t.Errorf("after refunding 3.00: %d points taken back, want 3", got)
	}
}
