package checkout_test

import (
	"context"
	"testing"
	"time"

	"exactlyonce/internal/app"
	"exactlyonce/internal/apptest"
)

func TestCompleterParksPoisonKey(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, func(cfg *app.Config) {
		cfg.LockTimeout = time.Second
		cfg.MaxSettleAttempts = 2
	})
	c := h.NewCustomer(t)
	strand(t, h, c, "k", oneMug, "after_charge")
	// Poison: the stored order no longer matches the charge (the test's own
	// SQL, standing for a corrupted row), so every settlement fails.
	_, err := h.DB.Pool.Exec(context.Background(), `UPDATE idempotency_keys
		SET request = jsonb_set(request, '{amount}', '1') WHERE customer_id = $1 AND key = 'k'`, c.ID)
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
}
