package stripetest_test

import (
	"errors"
	"sync"
	"testing"

	"exactlyonce/fakestripe"
	"exactlyonce/internal/payment"
	"exactlyonce/internal/stripetest"
)

func TestFaultRates(t *testing.T) {
	t.Parallel()
	stripetest.EachStore(t, func(t *testing.T, store stripetest.Store) {
		// The draws are fixed, so which call meets which fault is known: the
		// rates are laid end to end over [0, 1) in the order before_charge,
		// after_charge, decline, timeout.
		var mu sync.Mutex
		draws := []float64{0.1, 0.3, 0.55, 0.9, 0.3}
		draw := func() float64 {
			mu.Lock()
			defer mu.Unlock()
			d := draws[0]
			draws = draws[1:]
			return d
		}
		s := store.Start(t, fakestripe.WithDraw(draw))
		c := s.Client(0)
		s.SetBehaviour(t, fakestripe.Behaviour{Rates: fakestripe.Rates{BeforeCharge: 0.2, AfterCharge: 0.2, Decline: 0.2}})
		for i, want := range []struct {
			unavailable, declined bool
			status                string
		}{
			{true, false, fakestripe.StatusRequiresPaymentMethod}, // 0.1: before_charge
			{true, false, fakestripe.StatusSucceeded},             // 0.3: after_charge
			{false, true, fakestripe.StatusRequiresPaymentMethod}, // 0.55: decline
			{false, false, fakestripe.StatusSucceeded},            // 0.9: past every rate
		} {
			key := "k" + string(rune('0'+i))
			in, err := c.CreateIntent(t.Context(), intentRequest(key))
			if err != nil {
				t.Fatalf("create %d: %v", i, err)
			}
			_, err = c.ConfirmIntent(t.Context(), in.ID, key+"/confirm", "pm_card_visa", "")
			var ue *payment.UnavailableError
			var de *payment.DeclinedError
			if got := errors.As(err, &ue); got != want.unavailable {
				t.Errorf("call %d: got %v, want unavailable %v", i, err, want.unavailable)
			}
			if got := errors.As(err, &de); got != want.declined {
				t.Errorf("call %d: got %v, want declined %v", i, err, want.declined)
			}
			stored, err := s.Intent(t.Context(), in.ID)
			if err != nil {
				t.Fatal(err)
			}
			if stored.Status != want.status {
				t.Errorf("call %d: got status %s, want %s", i, stored.Status, want.status)
			}
		}

		// A fault set for every call wins over the rates.
		s.SetBehaviour(t, fakestripe.Behaviour{Fail: fakestripe.FaultBeforeCharge, Rates: fakestripe.Rates{AfterCharge: 1}})
		in, err := c.CreateIntent(t.Context(), intentRequest("fixed"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.ConfirmIntent(t.Context(), in.ID, "fixed/confirm", "pm_card_visa", "")
		if stored, _ := s.Intent(t.Context(), in.ID); err == nil || stored.Status != fakestripe.StatusRequiresPaymentMethod {
			t.Errorf("got %v and status %s, want the before_charge fault", err, stored.Status)
		}
	})
}

func intentRequest(key string) payment.IntentRequest {
	return payment.IntentRequest{
		IdempotencyKey: key, Amount: 4900, Currency: "eur", Description: "order 1",
		Metadata: payment.Metadata{CustomerID: "c1", Key: key, OperationID: "op-" + key},
	}
}
