package checkout_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/payment"
)

func TestCompleterParksPoisonKey(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, func(cfg *apptest.Setup) {
		cfg.LockTimeout = time.Second
		cfg.MaxSettleAttempts = 2
	})
	c := h.NewCustomer(t)
	strand(t, h, c, "k", oneMug, "after_charge")
	// Poison: the stored request is unreadable (the test's own SQL,
	// standing for a corrupted row), so every settlement fails.
	_, err := h.DB.Pool.Exec(context.Background(), `UPDATE idem_keys
		SET request = '"unreadable"'::jsonb WHERE scope = $1::uuid::text AND key = 'k'`, c.ID)
	if err != nil {
		t.Fatal(err)
	}

	for attempt := 1; attempt <= 2; attempt++ {
		if n := pass(t, h); n != 1 {
			t.Fatalf("attempt %d: got %d keys taken over, want 1", attempt, n)
		}
		h.WaitLockExpired(t, c, "k")
	}
	// Parked: no longer taken over, however often the completer passes.
	if n := pass(t, h); n != 0 {
		t.Errorf("after parking: got %d keys taken over, want 0", n)
	}
	k := h.Key(t, c, "k")
	if k.Status != "started" || k.ParkedAt == nil || k.SettleAttempts != 2 {
		t.Errorf("got key %s parked at %v after %d attempts, want started, parked, 2", k.Status, k.ParkedAt, k.SettleAttempts)
	}
	events := wantEvents(t, h, c, "k", "claimed", "taken_over", "taken_over", "parked")
	if len(events) == 4 && events[3].Detail["error"] == "" {
		t.Errorf("got %+v, want the parked event to say why", events[3])
	}
	if got := h.Metric(t, "exactlyonce_completer_recoveries_total", "outcome", "parked"); got != 1 {
		t.Errorf("got %v parked keys in /metrics, want 1", got)
	}
	if got := h.Metric(t, "exactlyonce_completer_recoveries_total", "outcome", "error"); got != 1 {
		t.Errorf("got %v failed recoveries in /metrics, want 1", got)
	}
	h.WantStats(t, 1, 0)
	wantNoOrphans(t, h)
}

// failingPayments answers every call with err.
type failingPayments struct{ err error }

func (p failingPayments) CreateIntent(context.Context, payment.IntentRequest) (payment.Intent, error) {
	return payment.Intent{}, p.err
}
func (p failingPayments) ConfirmIntent(context.Context, string, string, string, string) (payment.Intent, error) {
	return payment.Intent{}, p.err
}
func (p failingPayments) RetrieveIntent(context.Context, string) (payment.Intent, error) {
	return payment.Intent{}, p.err
}
func (p failingPayments) CancelIntent(context.Context, string, string) (payment.Intent, error) {
	return payment.Intent{}, p.err
}
func (p failingPayments) Refund(context.Context, string, string) (payment.Refund, error) {
	return payment.Refund{}, p.err
}

// downProvider answers every call as an unreachable provider would.
var downProvider = failingPayments{&payment.UnavailableError{Reason: payment.ReasonUnreachable}}

func TestCompleterDoesNotParkForAnOutage(t *testing.T) {
	t.Parallel()
	// The provider is unreachable at every attempt: a passing outage, not a
	// poison key. The key is left for later passes, however many.
	h := apptest.New(t, func(cfg *apptest.Setup) { cfg.LockTimeout = time.Second })
	c := h.NewCustomer(t)
	strand(t, h, c, "k", oneMug, "after_charge")
	completer := checkout.NewCompleter(h.App.Checkout, downProvider, checkout.CompleterConfig{MaxAttempts: 1})
	for attempt := 1; attempt <= 2; attempt++ {
		if n, err := completer.Pass(context.Background()); err != nil || n != 1 {
			t.Fatalf("attempt %d: got %d keys taken over, %v, want 1", attempt, n, err)
		}
		h.WaitLockExpired(t, c, "k")
	}
	if k := h.Key(t, c, "k"); k.ParkedAt != nil || k.Status != "started" {
		t.Errorf("got key %s parked at %v, want it started and not parked", k.Status, k.ParkedAt)
	}
	// Once the provider is back, the key settles.
	if n := pass(t, h); n != 1 {
		t.Errorf("got %d keys taken over, want 1", n)
	}
	h.WantStats(t, 1, 1)
	wantNoOrphans(t, h)
}

// refusingProvider answers every call with a 4xx of the given status.
func refusingProvider(status int) failingPayments {
	return failingPayments{&payment.ProviderError{Status: status, Type: "test", Message: "refused"}}
}

// A refusal that passes by itself (our rate limited, the key in use by a
// concurrent request of ours, credentials being rotated) parks nothing; one
// that answers the request itself (400) is poison.
func TestCompleterParksOnlyLastingRefusals(t *testing.T) {
	t.Parallel()
	for status, wantParked := range map[int]bool{429: false, 409: false, 401: false, 400: true} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			t.Parallel()
			h := apptest.New(t, func(cfg *apptest.Setup) { cfg.LockTimeout = time.Second })
			c := h.NewCustomer(t)
			strand(t, h, c, "k", oneMug, "after_charge")
			completer := checkout.NewCompleter(h.App.Checkout, refusingProvider(status), checkout.CompleterConfig{MaxAttempts: 1})
			if n, err := completer.Pass(context.Background()); err != nil || n != 1 {
				t.Fatalf("got %d keys taken over, %v, want 1", n, err)
			}
			if k := h.Key(t, c, "k"); (k.ParkedAt != nil) != wantParked {
				t.Errorf("got parked at %v after a %d, want parked %v", k.ParkedAt, status, wantParked)
			}
		})
	}
}
