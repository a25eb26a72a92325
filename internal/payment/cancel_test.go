package payment_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"exactlyonce/internal/payment"
)

func TestCancelWithoutChargeClosesTheKey(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	c := p.client(0)
	ctx := context.Background()

	if _, err := c.Cancel(ctx, "k"); !errors.Is(err, payment.ErrCanceled) {
		t.Fatalf("cancel: got %v, want ErrCanceled", err)
	}
	// A create-charge call that reaches the provider after the verdict
	// charges nothing.
	if _, err := c.Charge(ctx, request("k")); !errors.Is(err, payment.ErrCanceled) {
		t.Errorf("charge after cancel: got %v, want ErrCanceled", err)
	}
	if n := p.rows(t, "k"); n != 0 {
		t.Errorf("got %d charges under the canceled key, want 0", n)
	}
	// Cancelling again answers the same.
	if _, err := c.Cancel(ctx, "k"); !errors.Is(err, payment.ErrCanceled) {
		t.Errorf("second cancel: got %v, want ErrCanceled", err)
	}
	// Other keys are untouched.
	if _, err := c.Charge(ctx, request("other")); err != nil {
		t.Errorf("charge under another key: %v", err)
	}
}

func TestCancelAfterChargeReturnsIt(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	c := p.client(0)
	ctx := context.Background()
	charged, err := c.Charge(ctx, request("k"))
	if err != nil {
		t.Fatalf("charge: %v", err)
	}
	got, err := c.Cancel(ctx, "k")
	if err != nil {
		t.Fatalf("cancel: got %v, want the charge", err)
	}
	if got.ID != charged.ID || got.Status != payment.StatusSucceeded || got.Amount != charged.Amount {
		t.Errorf("cancel: got %+v, want charge %+v", got, charged)
	}
	// The charge stands: a retry of the create still replays it.
	again, err := c.Charge(ctx, request("k"))
	if err != nil || again.ID != charged.ID || !again.Replayed {
		t.Errorf("charge after cancel: got %+v, %v, want a replay of %s", again, err, charged.ID)
	}
}

func TestRefundIsIdempotent(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	c := p.client(0)
	ctx := context.Background()
	ch, err := c.Charge(ctx, request("k"))
	if err != nil {
		t.Fatalf("charge: %v", err)
	}
	first, err := c.Refund(ctx, "refund_"+ch.ID, ch.ID)
	if err != nil || first.ChargeID != ch.ID || first.Amount != ch.Amount || first.Replayed {
		t.Fatalf("refund: got %+v, %v, want a new full refund of %s", first, err, ch.ID)
	}
	second, err := c.Refund(ctx, "refund_"+ch.ID, ch.ID)
	if err != nil || second.ID != first.ID || !second.Replayed {
		t.Errorf("retry: got %+v, %v, want a replay of %s", second, err, first.ID)
	}
	// A second refund of the charge under another key is refused.
	var pe *payment.ProviderError
	if _, err := c.Refund(ctx, "another", ch.ID); !errors.As(err, &pe) {
		t.Errorf("refund under another key: got %v, want a ProviderError", err)
	}
}

func TestListChargesPages(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	c := p.client(0)
	ctx := context.Background()
	var made []string
	for _, key := range []string{"a", "b", "c"} {
		ch, err := c.Charge(ctx, request(key))
		if err != nil {
			t.Fatalf("charge: %v", err)
		}
		made = append(made, ch.ID)
	}
	var listed []string
	after := ""
	for pages := 0; ; pages++ {
		if pages > 3 {
			t.Fatal("too many pages")
		}
		page, err := c.ListCharges(ctx, after, 2)
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		for _, ch := range page.Charges {
			listed = append(listed, ch.ID)
			if ch.IdempotencyKey == "" || ch.Created.IsZero() {
				t.Errorf("got listed charge %+v, want its idempotency key and creation time", ch)
			}
			after = ch.ID
		}
		if !page.HasMore {
			break
		}
	}
	if len(listed) != len(made) {
		t.Fatalf("got %v, want %v", listed, made)
	}
	for i := range made {
		if listed[i] != made[i] {
			t.Errorf("got %v, want %v in creation order", listed, made)
			break
		}
	}
}

func TestCancelRacingChargeHasOneOutcome(t *testing.T) {
	t.Parallel()
	// A cancel and a create-charge call with the same key, sent at once:
	// however they interleave at the provider, the key ends with a charge
	// that the cancel returned, or canceled with no charge. Never both.
	p := newProvider(t)
	c := p.client(0)
	ctx := context.Background()
	for i := range 20 {
		key := "race-" + string(rune('a'+i))
		var (
			wg        sync.WaitGroup
			charged   payment.Charge
			chargeErr error
			found     payment.Charge
			cancelErr error
		)
		start := make(chan struct{})
		wg.Go(func() { <-start; charged, chargeErr = c.Charge(ctx, request(key)) })
		wg.Go(func() { <-start; found, cancelErr = c.Cancel(ctx, key) })
		close(start)
		wg.Wait()
		switch {
		case chargeErr == nil && cancelErr == nil:
			if found.ID != charged.ID {
				t.Errorf("%s: cancel returned %s, want the charge %s", key, found.ID, charged.ID)
			}
		case errors.Is(chargeErr, payment.ErrCanceled) && errors.Is(cancelErr, payment.ErrCanceled):
			if n := p.rows(t, key); n != 0 {
				t.Errorf("%s: canceled, but got %d charges", key, n)
			}
		default:
			t.Errorf("%s: got charge %v and cancel %v, want both to agree", key, chargeErr, cancelErr)
		}
	}
}
