package checkout_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/problem"
)

func TestLeaseRenewalKeepsSlowCallsKey(t *testing.T) {
	t.Parallel()
	// The original waits inside its provider call until its lock has been
	// renewed well beyond the 3 s it claimed: without the heartbeat a retry
	// would take over now. (A lock this long leaves the heartbeat, every
	// second, room for a loaded machine's delays.)
	const lock = 3 * time.Second
	charging, release := make(chan struct{}), make(chan struct{})
	h := apptest.New(t, func(cfg *apptest.Setup) {
		cfg.LockTimeout = lock
		cfg.Hooks.BeforeCharge = func(_ context.Context, c checkout.Claimed) {
			if !c.TakenOver {
				close(charging)
				waitOrTimeout(t, release)
			}
		}
	})
	c := h.NewCustomer(t)
	replied := make(chan apptest.Response)
	go func() { replied <- h.PlaceOrder(t, c, "slow", oneMug) }()
	waitOrTimeout(t, charging)

	deadline := time.Now().Add(20 * time.Second)
	for k := h.Key(t, c, "slow"); !k.LockedUntil.After(k.CreatedAt.Add(lock + lock/2)); k = h.Key(t, c, "slow") {
		if time.Now().After(deadline) {
			t.Fatalf("lock not renewed: locked until %v, created %v", k.LockedUntil, k.CreatedAt)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if r := h.PlaceOrder(t, c, "slow", oneMug); r.Status != problem.KeyInUse.Status || r.Header.Get("Retry-After") == "" {
		t.Errorf("retry during the call: got %d %s, want 409 request-in-progress", r.Status, r.Body)
	}
	close(release)
	if r := <-replied; r.Status != http.StatusCreated {
		t.Errorf("original: got %d %s, want 201", r.Status, r.Body)
	}
	h.WantStats(t, 1, 1)
	if got := h.Metric(t, "exactlyonce_lease_renewals_total", "result", "renewed"); got < 1 {
		t.Errorf("got %v renewals in /metrics, want at least 1", got)
	}
}

func TestRenewalStopsAfterTakeover(t *testing.T) {
	t.Parallel()
	// The original's heartbeat stalls (a paused process) until a retry has
	// taken the key over; its next renewal finds the token gone, which must
	// cancel the original's provider call and end it with 409.
	originalCharging, retryClaimed := make(chan struct{}), make(chan struct{})
	cause := make(chan error, 1)
	h := apptest.New(t, func(cfg *apptest.Setup) {
		cfg.LockTimeout = time.Second
		cfg.Hooks.AfterClaim = func(_ context.Context, c checkout.Claimed) {
			if c.TakenOver {
				close(retryClaimed)
			}
		}
		cfg.Hooks.BeforeRenew = func(_ context.Context, c checkout.Claimed) {
			if !c.TakenOver {
				waitOrTimeout(t, retryClaimed)
			}
		}
		// The whole process is paused, its fence too: the fence would
		// otherwise stop the call before the lock runs out (see
		// TestLeaseFencesItself). It waits until the call has ended.
		cfg.Hooks.BeforeFence = func(ctx context.Context, c checkout.Claimed) {
			if !c.TakenOver {
				<-ctx.Done()
			}
		}
		cfg.Hooks.BeforeCharge = func(ctx context.Context, c checkout.Claimed) {
			if c.TakenOver {
				return
			}
			close(originalCharging)
			select {
			case <-ctx.Done():
				cause <- context.Cause(ctx)
			case <-time.After(20 * time.Second):
				cause <- errors.New("the provider call was not cancelled")
			}
		}
	})
	c := h.NewCustomer(t)
	replied := make(chan apptest.Response)
	go func() { replied <- h.PlaceOrder(t, c, "k", oneMug) }()
	waitOrTimeout(t, originalCharging)
	h.WaitLockExpired(t, c, "k")

	retry := h.PlaceOrder(t, c, "k", oneMug)
	if retry.Status != http.StatusCreated {
		t.Errorf("retry: got %d %s, want 201", retry.Status, retry.Body)
	}
	if err := <-cause; !errors.Is(err, checkout.ErrLockLost) {
		t.Errorf("original's call: got cause %v, want ErrLockLost", err)
	}
	if r := <-replied; r.Status != problem.LockLost.Status {
		t.Errorf("original: got %d %s, want 409 request-superseded", r.Status, r.Body)
	}
	// The original stopped before it reached the provider.
	h.WantStats(t, 1, 1)
	if got := h.Metric(t, "exactlyonce_lease_renewals_total", "result", "lost"); got != 1 {
		t.Errorf("got %v lost renewals in /metrics, want 1", got)
	}
}

// TestStalledPastItsLeaseConfirmsNothing: an attempt whose process stalls
// with the create's answer in hand (its heartbeat and its fence stalled
// with it) until its lease has run out stores nothing when it wakes, and
// so confirms nothing: the store is fenced by the lease as well as by the
// token (StoreIntent: locked_until > now()), so no confirm is sent where a
// retry may already own the key. The model found it: without that guard,
// the request resumes, its token still matches (nobody took over yet), and
// it confirms outside its lease (lease_covers_calls). The client's retry
// then takes the key over and pays once.
func TestStalledPastItsLeaseConfirmsNothing(t *testing.T) {
	t.Parallel()
	stalled, wake := make(chan struct{}), make(chan struct{})
	h := apptest.New(t, func(cfg *apptest.Setup) {
		cfg.LockTimeout = time.Second
		// The heartbeat and the fence stay stalled until the call ends,
		// so that what stops the store is the statement's guard, not the
		// fence racing it.
		stalledTimers := func(ctx context.Context, c checkout.Claimed) {
			if !c.TakenOver {
				<-ctx.Done()
			}
		}
		cfg.Hooks.BeforeRenew, cfg.Hooks.BeforeFence = stalledTimers, stalledTimers
		cfg.Hooks.BeforeStore = func(_ context.Context, c checkout.Claimed) {
			if !c.TakenOver {
				close(stalled)
				waitOrTimeout(t, wake)
			}
		}
	})
	c := h.NewCustomer(t)
	replied := make(chan apptest.Response)
	go func() { replied <- h.PlaceOrder(t, c, "k", oneMug) }()
	waitOrTimeout(t, stalled)
	h.WaitLockExpired(t, c, "k")
	close(wake)
	if r := <-replied; r.Status != problem.LockLost.Status {
		t.Errorf("original: got %d %s, want 409 request-superseded", r.Status, r.Body)
	}
	in, err := h.Intent(t, c, "k")
	if err != nil {
		t.Fatal(err)
	}
	if in.Status != "requires_payment_method" || h.Key(t, c, "k").Status != "started" {
		t.Fatalf("after the stalled attempt: intent %s, key %s; want the intent never confirmed and the key started", in.Status, h.Key(t, c, "k").Status)
	}
	if r := h.PlaceOrder(t, c, "k", oneMug); r.Status != http.StatusCreated {
		t.Errorf("retry: got %d %s, want 201", r.Status, r.Body)
	}
	h.WantStats(t, 1, 1)
}
