package stripetest_test

import (
	"encoding/json"
	"testing"
	"time"

	"exactlyonce/fakestripe"
	"exactlyonce/internal/payment"
	"exactlyonce/internal/stripetest"
)

// nextActionType is the type of the intent's next_action as the fake
// shows it, "" when there is none.
func nextActionType(t *testing.T, in fakestripe.Intent) string {
	t.Helper()
	var shown struct {
		NextAction *struct {
			Type string `json:"type"`
		} `json:"next_action"`
	}
	if err := json.Unmarshal(in.JSON(), &shown); err != nil {
		t.Fatal(err)
	}
	if shown.NextAction == nil {
		return ""
	}
	return shown.NextAction.Type
}

// A confirm with Stripe's authentication-required test PaymentMethod is
// answered 200 with the intent requires_action and a next_action, and
// charges nothing; the intent can be canceled.
func TestConfirmThatAsksForAuthentication(t *testing.T) {
	t.Parallel()
	stripetest.EachStore(t, func(t *testing.T, store stripetest.Store) {
		s := store.Start(t)
		c := s.Client(0)
		in, err := c.CreateIntent(t.Context(), intentRequest("k"))
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.ConfirmIntent(t.Context(), in.ID, "k/confirm", fakestripe.ActionPaymentMethod, "")
		if err != nil || got.Status != payment.StatusRequiresAction {
			t.Fatalf("got %s, %v; want requires_action and no error", got.Status, err)
		}
		stored, err := s.Intent(t.Context(), in.ID)
		if err != nil {
			t.Fatal(err)
		}
		if typ := nextActionType(t, stored); typ != "use_stripe_sdk" {
			t.Errorf("got next_action %q, want use_stripe_sdk", typ)
		}
		if stored.LatestCharge != nil {
			t.Errorf("got charge %s, want none before authentication", *stored.LatestCharge)
		}
		canceled, err := c.CancelIntent(t.Context(), in.ID, "k/cancel")
		if err != nil || canceled.Status != payment.StatusCanceled {
			t.Errorf("cancel: got %s, %v; want canceled", canceled.Status, err)
		}
	})
}

// A confirm with the fake's processing PaymentMethod leaves the intent
// processing: a cancel is refused (CancelIntent answers the intent, still
// processing), and it stays so until moved on, by MoveOn or by itself
// after Behaviour.ProcessingFor.
func TestConfirmThatIsProcessing(t *testing.T) {
	t.Parallel()
	stripetest.EachStore(t, func(t *testing.T, store stripetest.Store) {
		s := store.Start(t)
		c := s.Client(0)
		confirm := func(key string) payment.Intent {
			t.Helper()
			in, err := c.CreateIntent(t.Context(), intentRequest(key))
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.ConfirmIntent(t.Context(), in.ID, key+"/confirm", fakestripe.ProcessingPaymentMethod, "")
			if err != nil || got.Status != payment.StatusProcessing {
				t.Fatalf("got %s, %v; want processing and no error", got.Status, err)
			}
			return got
		}

		in := confirm("moved")
		if got, err := c.CancelIntent(t.Context(), in.ID, "moved/cancel"); err != nil || got.Status != payment.StatusProcessing {
			t.Errorf("cancel: got %s, %v; want the intent, still processing", got.Status, err)
		}
		if got, err := c.RetrieveIntent(t.Context(), in.ID); err != nil || got.Status != payment.StatusProcessing {
			t.Errorf("retrieve: got %s, %v; want processing until moved on", got.Status, err)
		}
		if _, err := s.Provider.MoveOn(t.Context(), in.ID, false); err != nil {
			t.Fatal(err)
		}
		if got, err := c.RetrieveIntent(t.Context(), in.ID); err != nil || got.Status != payment.StatusRequiresPaymentMethod || got.Declined == "" {
			t.Errorf("retrieve: got %s (declined %q), %v; want failed", got.Status, got.Declined, err)
		}

		s.SetBehaviour(t, fakestripe.Behaviour{ProcessingFor: 50 * time.Millisecond})
		in = confirm("timed")
		time.Sleep(100 * time.Millisecond)
		if got, err := c.RetrieveIntent(t.Context(), in.ID); err != nil || got.Status != payment.StatusSucceeded {
			t.Errorf("retrieve after ProcessingFor: got %s, %v; want succeeded", got.Status, err)
		}
	})
}

// The rates answer a share of confirms requires_action and processing,
// whatever the card.
func TestActionAndProcessingRates(t *testing.T) {
	t.Parallel()
	stripetest.EachStore(t, func(t *testing.T, store stripetest.Store) {
		draws := []float64{0.1, 0.3, 0.9}
		s := store.Start(t, fakestripe.WithDraw(func() float64 { d := draws[0]; draws = draws[1:]; return d }))
		c := s.Client(0)
		s.SetBehaviour(t, fakestripe.Behaviour{Rates: fakestripe.Rates{RequiresAction: 0.2, Processing: 0.2}})
		for i, want := range []string{payment.StatusRequiresAction, payment.StatusProcessing, payment.StatusSucceeded} {
			key := "r" + string(rune('0'+i))
			in, err := c.CreateIntent(t.Context(), intentRequest(key))
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.ConfirmIntent(t.Context(), in.ID, key+"/confirm", "pm_card_visa", "")
			if err != nil || got.Status != want {
				t.Errorf("call %d: got %s, %v; want %s", i, got.Status, err, want)
			}
		}
	})
}
