package refund_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"exactlyonce/idem"
	"exactlyonce/internal/apptest"
	"exactlyonce/internal/refund"
)

// An attempt stalled after the provider answered (a paused process) while
// its lease ran out: the client's retry takes the key over, asks the
// provider again under the refund's own key (the same refund) and
// finishes. When the stalled attempt wakes, its finish finds the refund no
// longer pending: it was superseded, and says so (idem.ErrLockLost, a 409
// with Retry-After), not a 500. Found by the chaos run (a shop SIGSTOPped
// for 16 s: "mark refunded: not found").
func TestStaleRefundFinishIsSuperseded(t *testing.T) {
	t.Parallel()
	stalled, wake := make(chan struct{}), make(chan struct{})
	// Not a sync.Once: its Do would hold the retry's hook until the
	// stalled attempt's returned.
	var first atomic.Bool
	h := apptest.New(t, apptest.WithoutWebhooks, func(s *apptest.Setup) {
		s.LockTimeout = time.Second
		s.RefundHooks.BeforeFinish = func(context.Context, refund.Refund) {
			if first.CompareAndSwap(false, true) {
				close(stalled)
				<-wake
			}
		}
	})
	c, order, amount := placed(t, h, 1)
	ctx := context.Background()
	stale := make(chan error, 1)
	go func() {
		_, err := cancel(ctx, h, c, order, "cancel-1")
		stale <- err
	}()
	<-stalled
	var o idem.Outcome
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if o, err = cancel(ctx, h, c, order, "cancel-1"); !errors.Is(err, idem.ErrInProgress) {
			break
		}
	}
	if err != nil || o.Status != http.StatusSeeOther || o.Replayed {
		t.Fatalf("the retry that took the key over: %v %+v, want the refund", err, o)
	}
	close(wake)
	if err := <-stale; !errors.Is(err, idem.ErrLockLost) {
		t.Fatalf("the stalled attempt's finish: %v, want it superseded (idem.ErrLockLost)", err)
	}
	if n := h.Count(t, `SELECT count(*) FROM fakestripe.refunds`); n != 1 {
		t.Errorf("refunds at the provider: %d, want 1", n)
	}
	if got := refundedAtProvider(t, h); got != amount {
		t.Errorf("refunded: %d, want %d", got, amount)
	}
}

// An attempt whose lease lapses while it reserves (it waits on the order's
// row lock, held here by another transaction, and its heartbeat waits
// behind its own share lock on the key) is stopped by the kit's fence: it
// answers superseded (idem.ErrLockLost, a 409 with Retry-After), not a 500
// "context canceled", and reserves nothing; the retry once the order is
// free refunds it. Found by the chaos run ("begin: context canceled").
func TestRefundLeaseLapsingWhileReservingIsSuperseded(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, apptest.WithoutWebhooks, func(s *apptest.Setup) { s.LockTimeout = time.Second })
	c, order, amount := placed(t, h, 1)
	ctx := context.Background()
	tx, err := h.DB.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT 1 FROM orders WHERE id = $1 FOR UPDATE`, order); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(2500 * time.Millisecond)
		tx.Rollback(ctx) //nolint:errcheck // the order's row lock released
	}()
	if _, err := cancel(ctx, h, c, order, "cancel-1"); !errors.Is(err, idem.ErrLockLost) {
		t.Fatalf("the attempt whose lease lapsed: %v, want it superseded (idem.ErrLockLost)", err)
	}
	if n := h.Count(t, `SELECT count(*) FROM order_refunds`); n != 0 {
		t.Errorf("refunds reserved: %d, want none", n)
	}
	var o idem.Outcome
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		// A client retries what it is told to retry with the same key: a
		// key in progress, one taken over, and a refund whose outcome is
		// not known yet (a lease of a second can lapse again under load,
		// during the provider's call: the CI's race leg met it).
		o, err = cancel(ctx, h, c, order, "cancel-1")
		_, pending := errors.AsType[*refund.OutcomeUnknownError](err)
		if !pending && !errors.Is(err, idem.ErrInProgress) && !errors.Is(err, idem.ErrLockLost) {
			break
		}
	}
	if err != nil || o.Status != http.StatusSeeOther {
		t.Fatalf("the retry: %v %+v, want the refund", err, o)
	}
	if got := refundedAtProvider(t, h); got != amount {
		t.Errorf("refunded: %d, want %d", got, amount)
	}
}
