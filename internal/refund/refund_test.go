package refund_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"exactlyonce/fakestripe"
	"exactlyonce/idem"
	"exactlyonce/internal/app"
	"exactlyonce/internal/apptest"
	"exactlyonce/internal/payment"
	"exactlyonce/internal/refund"
)

// placed places one order of quantity espresso mugs and returns it.
func placed(t *testing.T, h *apptest.Harness, quantity int) (apptest.Customer, uuid.UUID, int64) {
	t.Helper()
	c := h.NewCustomer(t)
	r := h.PlaceOrder(t, c, uuid.NewString(), `{"items":[{"sku":"mug-espresso","quantity":`+strconv.Itoa(quantity)+`}],"card":"4242 4242 4242 4242"}`)
	if r.Status != http.StatusCreated {
		t.Fatalf("place order: %d %s", r.Status, r.Body)
	}
	var o struct {
		OrderID uuid.UUID `json:"order_id"`
		Amount  int64     `json:"amount"`
	}
	r.JSON(t, &o)
	return c, o.OrderID, o.Amount
}

// operatorRefund runs an operator's refund of amount under key.
func operatorRefund(ctx context.Context, h *apptest.Harness, c apptest.Customer, order uuid.UUID, key string, amount int64) (idem.Outcome, error) {
	return h.App.Refunds.Do(ctx, idem.Request{Scope: refund.OperatorScope, Key: key,
		Fingerprint: idem.Fingerprint([]byte("refund"), order[:], []byte(strconv.FormatInt(amount, 10)))}, 0,
		refund.Ask{CustomerID: c.ID, OrderID: order, Kind: refund.KindRefund, Amount: amount, Channel: app.OperatorChannel})
}

// cancel runs the customer's cancel under key.
func cancel(ctx context.Context, h *apptest.Harness, c apptest.Customer, order uuid.UUID, key string) (idem.Outcome, error) {
	return h.App.Refunds.Do(ctx, idem.Request{Scope: c.ID.String(), Key: key,
		Fingerprint: idem.Fingerprint([]byte("cancel"), order[:])}, 0,
		refund.Ask{CustomerID: c.ID, OrderID: order, Kind: refund.KindCancel, Channel: app.OperatorChannel})
}

// refundedAtProvider is what the provider refunded of every intent.
func refundedAtProvider(t *testing.T, h *apptest.Harness) int64 {
	t.Helper()
	return h.Count(t, `SELECT coalesce(sum(amount), 0)::bigint FROM fakestripe.refunds`)
}

// Two operators refund 60 % of one order at once, under keys of their own.
// The first reserves and is held before it asks the provider; the second
// comes then, sees the first's reservation, and is refused with what is
// left (40 %): it reserved nothing, so its key is free. The first goes on:
// one refund, never more than was charged.
func TestPartialRefundsRacingNeverExceed(t *testing.T) {
	t.Parallel()
	reserved, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	h := apptest.New(t, apptest.WithoutWebhooks, func(s *apptest.Setup) {
		s.RefundHooks.AfterReserve = func(context.Context, refund.Refund) {
			once.Do(func() { close(reserved); <-release })
		}
	})
	c, order, amount := placed(t, h, 2)
	part := amount * 6 / 10
	ctx := context.Background()
	first := make(chan error, 1)
	go func() {
		_, err := operatorRefund(ctx, h, c, order, "op-1", part)
		first <- err
	}()
	<-reserved
	_, err := operatorRefund(ctx, h, c, order, "op-2", part)
	exceeds, ok := errors.AsType[*refund.ExceedsError](err)
	if !ok || exceeds.Left != amount-part {
		t.Fatalf("the second refund: got %v, want ExceedsError with %d left", err, amount-part)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatalf("the first refund: %v", err)
	}
	if got := refundedAtProvider(t, h); got != part {
		t.Errorf("refunded at the provider: %d, want %d", got, part)
	}
	// The second's key reserved nothing and was given up: sent again
	// corrected (what is left), it refunds the rest.
	if _, err := operatorRefund(ctx, h, c, order, "op-2", amount-part); err != nil {
		t.Fatalf("the second, corrected: %v", err)
	}
	if got := refundedAtProvider(t, h); got != amount {
		t.Errorf("refunded at the provider: %d, want all of %d", got, amount)
	}
	if _, err := operatorRefund(ctx, h, c, order, "op-3", 1); !errors.As(err, &exceeds) || exceeds.Left != 0 {
		t.Errorf("a refund of a refunded order: got %v, want ExceedsError with nothing left", err)
	}
}

// An operator's partial refund is held after its reservation while the
// customer cancels: the cancel takes what is left (not the whole amount),
// both go through, the provider refunds exactly the order's amount, the
// order is cancelled, and the loyalty reversals take back exactly the
// award.
func TestCancelRacingPartialRefund(t *testing.T) {
	t.Parallel()
	reserved, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	mail, catcher := apptest.WithMailCatcher(t)
	h := apptest.New(t, apptest.WithoutWebhooks, mail, func(s *apptest.Setup) {
		s.RefundHooks.AfterReserve = func(_ context.Context, r refund.Refund) {
			if r.Kind == refund.KindRefund {
				once.Do(func() { close(reserved); <-release })
			}
		}
	})
	h.StartJobs(t)
	c, order, amount := placed(t, h, 3)
	ctx := context.Background()
	part := int64(1234)
	first := make(chan error, 1)
	go func() {
		_, err := operatorRefund(ctx, h, c, order, "op-1", part)
		first <- err
	}()
	<-reserved
	o, err := cancel(ctx, h, c, order, "cancel-1")
	if err != nil || o.Status != http.StatusSeeOther {
		t.Fatalf("the cancel: %v %+v", err, o)
	}
	if got := h.Count(t, `SELECT amount FROM order_refunds WHERE kind = 'cancel'`); got != amount-part {
		t.Errorf("the cancel refunded %d, want what was left: %d", got, amount-part)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if got := refundedAtProvider(t, h); got != amount {
		t.Errorf("refunded at the provider: %d, want the order's %d", got, amount)
	}
	if n := h.Count(t, `SELECT count(*) FROM orders WHERE cancelled_at IS NOT NULL`); n != 1 {
		t.Errorf("cancelled orders: %d, want 1", n)
	}
	h.WaitCount(t, 2, `SELECT count(*) FROM loyalty_reversals`)
	h.WaitCount(t, amount/100, `SELECT sum(points)::bigint FROM loyalty_reversals`)
	h.WaitCount(t, 0, `SELECT (SELECT coalesce(sum(points), 0) FROM loyalty_ledger) - (SELECT coalesce(sum(points), 0) FROM loyalty_reversals)`)
	h.WaitCount(t, 2, `SELECT count(*) FROM sent_refund_mails`)
	refundMails := 0
	for _, m := range catcher.Messages() {
		if strings.HasPrefix(m.MessageID, "<order-refunded.") {
			refundMails++
		}
	}
	if refundMails != 2 {
		t.Errorf("refund mails caught: %d, want 2 (one per refund)", refundMails)
	}
}

// The provider refunds and its answer is lost (a 500 after the refund, then
// a timeout): the attempt reports the outcome unknown and leaves the key
// to its retry, which asks again under the same provider key and gets the
// one refund; the answer is then stored and replayed. One refund at the
// provider.
func TestRefundAnswerLostThenRetried(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, apptest.WithoutWebhooks, func(s *apptest.Setup) { s.ProviderTimeout = 500 * time.Millisecond })
	c, order, amount := placed(t, h, 1)
	ctx := context.Background()
	for _, fault := range []fakestripe.Fault{fakestripe.FaultAfterCharge, fakestripe.FaultTimeout} {
		if err := h.Provider.SetBehaviour(fakestripe.Behaviour{Refunds: fakestripe.RefundFaults{Fail: fault, Times: 1}}); err != nil {
			t.Fatal(err)
		}
		_, err := cancel(ctx, h, c, order, "cancel-1")
		if _, ok := errors.AsType[*refund.OutcomeUnknownError](err); !ok {
			t.Fatalf("with %s: got %v, want the outcome unknown", fault, err)
		}
	}
	o, err := cancel(ctx, h, c, order, "cancel-1")
	if err != nil || o.Replayed {
		t.Fatalf("the retry: %v %+v, want the refund, not replayed", err, o)
	}
	again, err := cancel(ctx, h, c, order, "cancel-1")
	if err != nil || !again.Replayed || string(again.Body) != string(o.Body) || again.Header["Location"] != o.Header["Location"] {
		t.Fatalf("the retry again: %v %+v, want the stored answer replayed", err, again)
	}
	if n := h.Count(t, `SELECT count(*) FROM fakestripe.refunds`); n != 1 {
		t.Errorf("refunds at the provider: %d, want 1", n)
	}
	if got := refundedAtProvider(t, h); got != amount {
		t.Errorf("refunded: %d, want %d", got, amount)
	}
}

// A refund whose answer was lost and whose client never comes back: the
// refund completer takes the key over, asks the provider again under the
// same key, and finishes it; the client's late retry gets that answer.
func TestStuckRefundSettledByTheCompleter(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, apptest.WithoutWebhooks)
	c, order, _ := placed(t, h, 1)
	ctx := context.Background()
	if err := h.Provider.SetBehaviour(fakestripe.Behaviour{Refunds: fakestripe.RefundFaults{Fail: fakestripe.FaultAfterCharge, Times: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cancel(ctx, h, c, order, "cancel-1"); err == nil {
		t.Fatal("the cancel: want the outcome unknown")
	}
	done, err := (&idem.Completer{Store: h.App.Refunds.Keys(), Settler: h.App.Refunds.Settler(), Grace: time.Nanosecond, AsksFor: time.Nanosecond}).Pass(ctx)
	if err != nil || done != 1 {
		t.Fatalf("the completer's pass: settled %d, %v; want 1", done, err)
	}
	if n := h.Count(t, `SELECT count(*) FROM order_refunds WHERE state = 'refunded'`); n != 1 {
		t.Errorf("refunds recorded: %d, want 1", n)
	}
	o, err := cancel(ctx, h, c, order, "cancel-1")
	if err != nil || !o.Replayed {
		t.Fatalf("the late retry: %v %+v, want the completer's answer replayed", err, o)
	}
	if n := h.Count(t, `SELECT count(*) FROM fakestripe.refunds`); n != 1 {
		t.Errorf("refunds at the provider: %d, want 1", n)
	}
}

// The charge of an order was refunded in full by another refund than the
// shop's (the reconciler's lost-key refund, under its own key, or the
// dashboard): an operator's refund of the order then meets the provider's
// refusal, which is final: stored as the key's answer (replayed), the
// amount no longer reserved, nothing more refunded at the provider.
func TestRefundOfAChargeRefundedElsewhere(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, apptest.WithoutWebhooks)
	c, order, amount := placed(t, h, 1)
	ctx := context.Background()
	var intent string
	if err := h.DB.Pool.QueryRow(ctx, `SELECT charge_id FROM orders WHERE id = $1`, order).Scan(&intent); err != nil {
		t.Fatal(err)
	}
	if _, err := h.App.Payments.Refund(ctx, payment.RefundKey(intent), intent); err != nil {
		t.Fatal(err)
	}
	o, err := operatorRefund(ctx, h, c, order, "op-1", 100)
	if err != nil || o.Header["Location"] != "/orders/"+order.String()+"?refund=failed" {
		t.Fatalf("the refund: %v %+v, want the provider's refusal as the stored answer", err, o)
	}
	again, err := operatorRefund(ctx, h, c, order, "op-1", 100)
	if err != nil || !again.Replayed || again.Header["Location"] != o.Header["Location"] {
		t.Errorf("the refund again: %v %+v, want the refusal replayed", err, again)
	}
	if got := refundedAtProvider(t, h); got != amount {
		t.Errorf("refunded at the provider: %d, want the one full refund of %d", got, amount)
	}
	if n := h.Count(t, `SELECT count(*) FROM order_refunds WHERE state = 'failed' AND failure <> ''`); n != 1 {
		t.Errorf("failed refunds recorded: %d, want 1", n)
	}
	// Nothing is reserved by a failed refund: an operator may still ask
	// for the whole amount (and meets the same refusal, under a new key).
	if _, err := operatorRefund(ctx, h, c, order, "op-2", amount); err != nil {
		t.Errorf("a refund of the whole amount after the failed one: %v, want it asked (and refused by the provider)", err)
	}
}
