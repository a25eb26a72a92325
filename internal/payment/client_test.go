package payment_test

import (
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"exactlyonce/fakestripe"
	"exactlyonce/internal/payment"
	"exactlyonce/internal/pgtest"
	"exactlyonce/internal/stripetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func request(key string) payment.IntentRequest {
	return payment.IntentRequest{
		IdempotencyKey: key, Amount: 4900, Currency: "eur", Description: "order 1",
		Metadata: payment.Metadata{CustomerID: "c1", Key: "k", OperationID: "op1"},
	}
}

func TestCreateThenConfirm(t *testing.T) {
	t.Parallel()
	stripetest.EachStore(t, func(t *testing.T, store stripetest.Store) {
		s := store.Start(t)
		c := s.Client(5 * time.Second)
		in, err := c.CreateIntent(t.Context(), request("pk"))
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		if in.Status != payment.StatusRequiresPaymentMethod || in.Replayed || in.Metadata.OperationID != "op1" {
			t.Errorf("got %+v, want a new intent requiring a payment method, with its metadata", in)
		}
		again, err := c.CreateIntent(t.Context(), request("pk"))
		if err != nil || again.ID != in.ID || !again.Replayed {
			t.Errorf("create again: got %+v, %v, want a replay of %s", again, err, in.ID)
		}
		paid, err := c.ConfirmIntent(t.Context(), in.ID, "pk/confirm", "pm_card_visa", "")
		if err != nil || paid.Status != payment.StatusSucceeded || paid.Amount != 4900 {
			t.Fatalf("confirm: got %+v, %v, want it succeeded", paid, err)
		}
		replay, err := c.ConfirmIntent(t.Context(), in.ID, "pk/confirm", "pm_card_visa", "")
		if err != nil || !replay.Replayed || replay.Status != payment.StatusSucceeded {
			t.Errorf("confirm again: got %+v, %v, want a replay", replay, err)
		}
	})
}

func TestKeyReusedWithOtherParams(t *testing.T) {
	t.Parallel()
	stripetest.EachStore(t, func(t *testing.T, store stripetest.Store) {
		s := store.Start(t)
		c := s.Client(5 * time.Second)
		if _, err := c.CreateIntent(t.Context(), request("pk")); err != nil {
			t.Fatal(err)
		}
		other := request("pk")
		other.Amount = 5000
		_, err := c.CreateIntent(t.Context(), other)
		var pe *payment.ProviderError
		if !errors.As(err, &pe) || pe.Status != http.StatusBadRequest || pe.Type != "idempotency_error" || pe.Transient() {
			t.Errorf("got %v, want a final 400 idempotency_error", err)
		}
	})
}

func TestDeclineIsFinalAndReplayed(t *testing.T) {
	t.Parallel()
	stripetest.EachStore(t, func(t *testing.T, store stripetest.Store) {
		s := store.Start(t)
		c := s.Client(5 * time.Second)
		in, err := c.CreateIntent(t.Context(), request("pk"))
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			_, err := c.ConfirmIntent(t.Context(), in.ID, "pk/confirm", fakestripe.DeclinedPaymentMethod, "")
			var de *payment.DeclinedError
			if !errors.As(err, &de) || de.IntentID != in.ID || de.Message == "" {
				t.Fatalf("got %v, want a decline of %s", err, in.ID)
			}
		}
		got, err := c.RetrieveIntent(t.Context(), in.ID)
		if err != nil || got.Status != payment.StatusRequiresPaymentMethod || got.Declined == "" {
			t.Errorf("got %+v, %v, want requires_payment_method with the decline", got, err)
		}
	})
}

func TestCancelMakesALateConfirmFail(t *testing.T) {
	t.Parallel()
	stripetest.EachStore(t, func(t *testing.T, store stripetest.Store) {
		s := store.Start(t)
		c := s.Client(5 * time.Second)
		in, err := c.CreateIntent(t.Context(), request("pk"))
		if err != nil {
			t.Fatal(err)
		}
		for range 2 { // canceling twice answers the same
			got, err := c.CancelIntent(t.Context(), in.ID, "pk/cancel")
			if err != nil || got.Status != payment.StatusCanceled {
				t.Fatalf("cancel: got %+v, %v, want canceled", got, err)
			}
		}
		if got, err := c.CancelIntent(t.Context(), in.ID, "another"); err != nil || got.Status != payment.StatusCanceled {
			t.Errorf("cancel under another key: got %+v, %v, want the canceled intent", got, err)
		}
		if _, err := c.ConfirmIntent(t.Context(), in.ID, "pk/confirm", "pm_card_visa", ""); !errors.Is(err, payment.ErrCanceled) {
			t.Errorf("late confirm: got %v, want ErrCanceled", err)
		}
	})
}

func TestCancelAfterSuccessReturnsIt(t *testing.T) {
	t.Parallel()
	stripetest.EachStore(t, func(t *testing.T, store stripetest.Store) {
		s := store.Start(t)
		c := s.Client(5 * time.Second)
		in, _ := c.CreateIntent(t.Context(), request("pk"))
		if _, err := c.ConfirmIntent(t.Context(), in.ID, "pk/confirm", "pm_card_visa", ""); err != nil {
			t.Fatal(err)
		}
		got, err := c.CancelIntent(t.Context(), in.ID, "pk/cancel")
		if err != nil || got.Status != payment.StatusSucceeded {
			t.Errorf("got %+v, %v, want the succeeded intent", got, err)
		}
	})
}

func TestConcurrentConfirmsChargeOnce(t *testing.T) {
	t.Parallel()
	stripetest.EachStore(t, func(t *testing.T, store stripetest.Store) {
		s := store.Start(t)
		c := s.Client(10 * time.Second)
		in, _ := c.CreateIntent(t.Context(), request("pk"))
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Go(func() { _, errs[i] = c.ConfirmIntent(t.Context(), in.ID, "pk/confirm", "pm_card_visa", "") })
		}
		wg.Wait()
		for i, err := range errs {
			var pe *payment.ProviderError
			// A key in use by a concurrent request is a 409 the caller may
			// retry (Stripe-Should-Retry: true).
			if err != nil && !(errors.As(err, &pe) && pe.Status == http.StatusConflict && pe.Transient()) {
				t.Errorf("call %d: got %v, want the intent or a transient 409", i, err)
			}
		}
		ledger, err := s.Ledger(t.Context())
		if err != nil || len(ledger) != 1 || ledger[0].Status != fakestripe.StatusSucceeded {
			t.Errorf("got ledger %+v, %v, want one succeeded intent", ledger, err)
		}
	})
}

func TestRefundOnce(t *testing.T) {
	t.Parallel()
	stripetest.EachStore(t, func(t *testing.T, store stripetest.Store) {
		s := store.Start(t)
		c := s.Client(5 * time.Second)
		in, _ := c.CreateIntent(t.Context(), request("pk"))
		if _, err := c.ConfirmIntent(t.Context(), in.ID, "pk/confirm", "pm_card_visa", ""); err != nil {
			t.Fatal(err)
		}
		first, err := c.Refund(t.Context(), "refund_"+in.ID, in.ID)
		if err != nil || first.IntentID != in.ID || first.Amount != 4900 || first.Replayed {
			t.Fatalf("refund: got %+v, %v", first, err)
		}
		second, err := c.Refund(t.Context(), "refund_"+in.ID, in.ID)
		if err != nil || second.ID != first.ID || !second.Replayed {
			t.Errorf("retry: got %+v, %v, want a replay of %s", second, err, first.ID)
		}
		if _, err := c.Refund(t.Context(), "another", in.ID); !errors.Is(err, payment.ErrAlreadyRefunded) {
			t.Errorf("refund under another key: got %v, want ErrAlreadyRefunded", err)
		}
	})
}

func TestListIntentsOldestFirst(t *testing.T) {
	t.Parallel()
	stripetest.EachStore(t, func(t *testing.T, store stripetest.Store) {
		s := store.Start(t)
		c := s.Client(5 * time.Second)
		var made []string
		for _, key := range []string{"a", "b", "c", "d", "e"} {
			in, err := c.CreateIntent(t.Context(), request(key))
			if err != nil {
				t.Fatal(err)
			}
			made = append(made, in.ID)
		}
		listed, err := c.ListIntents(t.Context(), 0, 2) // three pages
		if err != nil {
			t.Fatal(err)
		}
		if len(listed) != len(made) {
			t.Fatalf("got %d intents, want %d", len(listed), len(made))
		}
		for i := range made {
			if listed[i].ID != made[i] {
				t.Errorf("got %s at %d, want %s (oldest first)", listed[i].ID, i, made[i])
			}
		}
	})
}

func TestUnavailable(t *testing.T) {
	t.Parallel()
	s := stripetest.Start(t)
	in, _ := s.Client(0).CreateIntent(t.Context(), request("pk"))
	s.SetBehaviour(t, fakestripe.Behaviour{Delay: 2 * time.Second})
	_, err := s.Client(200*time.Millisecond).ConfirmIntent(t.Context(), in.ID, "pk/confirm", "pm_card_visa", "")
	var ue *payment.UnavailableError
	if !errors.As(err, &ue) || ue.Reason != payment.ReasonTimeout {
		t.Errorf("slow provider: got %v, want a timeout", err)
	}
	closed := payment.NewClient(payment.Config{SecretKey: stripetest.Secret, APIBase: "http://127.0.0.1:1", Timeout: time.Second})
	_, err = closed.RetrieveIntent(t.Context(), in.ID)
	if !errors.As(err, &ue) || ue.Reason != payment.ReasonUnreachable {
		t.Errorf("no provider: got %v, want unreachable", err)
	}
}

// TestPingAnswersOnlyWhenTheProviderDoes: the readiness report's ping (one
// list page, read when stripe-go v85's List is called) is nil with the
// provider up and the key right, and the classified error otherwise.
func TestPingAnswersOnlyWhenTheProviderDoes(t *testing.T) {
	t.Parallel()
	stripetest.EachStore(t, func(t *testing.T, store stripetest.Store) {
		s := store.Start(t)
		if err := s.Client(5 * time.Second).Ping(t.Context()); err != nil {
			t.Errorf("provider up: got %v, want nil", err)
		}
		wrongKey := payment.NewClient(payment.Config{SecretKey: "sk_test_wrong", APIBase: s.URL, Timeout: 5 * time.Second})
		var pe *payment.ProviderError
		if err := wrongKey.Ping(t.Context()); !errors.As(err, &pe) || pe.Status != http.StatusUnauthorized {
			t.Errorf("wrong secret key: got %v, want a 401 ProviderError", err)
		}
		closed := payment.NewClient(payment.Config{SecretKey: stripetest.Secret, APIBase: "http://127.0.0.1:1", Timeout: time.Second})
		var ue *payment.UnavailableError
		if err := closed.Ping(t.Context()); !errors.As(err, &ue) || ue.Reason != payment.ReasonUnreachable {
			t.Errorf("no provider: got %v, want unreachable", err)
		}
	})
}

func TestPaymentMethodOfCards(t *testing.T) {
	for card, want := range map[string]string{
		"4242424242424242": "pm_card_visa", "4000000000000002": "pm_card_chargeDeclined", "pm_card_mastercard": "pm_card_mastercard",
	} {
		if got, ok := payment.PaymentMethod(card); !ok || got != want {
			t.Errorf("PaymentMethod(%s): got %q, %v, want %q", card, got, ok, want)
		}
	}
	if _, ok := payment.PaymentMethod("4111111111111111"); ok {
		t.Error("a card that is not a Stripe test card: got a PaymentMethod, want none")
	}
}
