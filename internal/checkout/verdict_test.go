package checkout_test

// A final "no charge": an attempt that stalls while its create-charge call is
// in flight, and whose call reaches the provider only after the completer has
// settled the key. Whatever the order, the result is one charge and one
// order, or none of either: never a charge without an order.

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"exactlyonce/fakestripe"
	"exactlyonce/internal/apptest"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/db"
	"exactlyonce/internal/problem"
)

// stalledOriginal reports whether c is the first attempt of a key, the one
// these tests stall.
func stalledOriginal(c checkout.Claimed) bool { return !c.TakenOver && !c.ByCompleter }

func wantNoOrphans(t *testing.T, h *apptest.Harness) {
	t.Helper()
	if got := h.Metric(t, "exactlyonce_orphan_charges_total"); got != 0 {
		t.Errorf("got %v orphan charges in /metrics, want 0", got)
	}
}

func TestCallLandingAfterTheVerdictChargesNothing(t *testing.T) {
	t.Parallel()
	// The original's process is paused while its create-charge call is on
	// its way: its heartbeat and its fence do not run, and the provider
	// receives the call only after the completer has taken the key over and
	// cancelled the operation. (The incident: a lock expired, the
	// completer found no charge "yet", then the paused call charged.)
	arrived, land := make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	h := apptest.New(t, func(cfg *apptest.Setup) {
		cfg.LockTimeout = time.Second
		// Long enough that the client never gives up on the late call.
		cfg.ProviderTimeout = 30 * time.Second
		cfg.ProviderOptions = append(cfg.ProviderOptions, fakestripe.WithBeforeCharge(func(context.Context, string) {
			if first.CompareAndSwap(false, true) {
				close(arrived)
				waitOrTimeout(t, land)
			}
		}))
		cfg.Hooks.BeforeRenew = func(ctx context.Context, c checkout.Claimed) {
			if stalledOriginal(c) {
				<-ctx.Done()
			}
		}
		cfg.Hooks.BeforeFence = cfg.Hooks.BeforeRenew
	})
	c := h.NewCustomer(t)
	replied := make(chan apptest.Response)
	go func() { replied <- h.PlaceOrder(t, c, "k", oneMug) }()
	waitOrTimeout(t, arrived)
	h.WaitLockExpired(t, c, "k")

	if n := pass(t, h); n != 1 {
		t.Fatalf("got %d keys taken over, want 1", n)
	}
	close(land)

	if r := <-replied; r.Status != problem.LockLost.Status {
		t.Errorf("original: got %d %s, want 409 request-superseded", r.Status, r.Body)
	}
	wantReplay(t, h.PlaceOrder(t, c, "k", oneMug), problem.PaymentNotCompleted.Status)
	h.WantStats(t, 0, 0)
	events := wantEvents(t, h, c, "k", "claimed", "taken_over", "recovered")
	if len(events) == 3 && events[2].Detail["outcome"] != "not_completed" {
		t.Errorf("got recovery %+v, want outcome not_completed", events[2])
	}
	wantNoOrphans(t, h)
}

func TestCallLandingBeforeTheVerdictMakesOneOrder(t *testing.T) {
	t.Parallel()
	// The call lands and charges, then the original's process is paused
	// before its finish until its lock has expired and the completer has
	// settled the key: the completer's cancel returns the charge and writes
	// the order, and the original's finish writes nothing.
	charged, completerDone := make(chan struct{}), make(chan struct{})
	h := apptest.New(t, func(cfg *apptest.Setup) {
		cfg.LockTimeout = time.Second
		cfg.Hooks.BeforeFinish = func(_ context.Context, c checkout.Claimed) {
			if stalledOriginal(c) {
				close(charged)
				waitOrTimeout(t, completerDone)
			}
		}
	})
	c := h.NewCustomer(t)
	replied := make(chan apptest.Response)
	go func() { replied <- h.PlaceOrder(t, c, "k", oneMug) }()
	waitOrTimeout(t, charged)
	h.WaitLockExpired(t, c, "k")
	if n := pass(t, h); n != 1 {
		t.Fatalf("got %d keys taken over, want 1", n)
	}
	close(completerDone)

	if r := <-replied; r.Status != problem.LockLost.Status {
		t.Errorf("original: got %d %s, want 409 request-superseded", r.Status, r.Body)
	}
	wantReplay(t, h.PlaceOrder(t, c, "k", oneMug), http.StatusCreated)
	h.WantStats(t, 1, 1)
	events := wantEvents(t, h, c, "k", "claimed", "taken_over", "recovered")
	if len(events) == 3 && events[2].Detail["outcome"] != "charged" {
		t.Errorf("got recovery %+v, want outcome charged", events[2])
	}
	// The original lost its finish holding a succeeded charge, but the
	// completer's order holds that charge: not an orphan.
	wantNoOrphans(t, h)
}

func TestLeaseFencesItself(t *testing.T) {
	t.Parallel()
	// The original's heartbeat stalls (renewals cannot get through) while
	// its provider call runs; its timers still run. It must stop its own
	// call while its lock still holds, rather than let the lock expire with
	// the call in flight.
	// Long enough that the fence (at three quarters) leaves a loaded
	// machine ample time to read the key before the lock runs out.
	const lock = 6 * time.Second
	type stopped struct {
		cause     error
		remaining time.Duration
	}
	fenced := make(chan stopped, 1)
	var h *apptest.Harness
	h = apptest.New(t, func(cfg *apptest.Setup) {
		cfg.LockTimeout = lock
		cfg.Hooks.BeforeRenew = func(ctx context.Context, c checkout.Claimed) {
			if stalledOriginal(c) {
				<-ctx.Done()
			}
		}
		cfg.Hooks.BeforeCharge = func(ctx context.Context, c checkout.Claimed) {
			if !stalledOriginal(c) {
				return
			}
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Second):
				fenced <- stopped{cause: errors.New("the provider call was not stopped")}
				return
			}
			k, err := h.DB.GetKey(context.Background(), db.GetKeyParams{CustomerID: c.CustomerID, Key: c.Key})
			if err != nil {
				t.Errorf("get key: %v", err)
			}
			fenced <- stopped{cause: context.Cause(ctx), remaining: k.LockRemaining}
		}
	})
	c := h.NewCustomer(t)
	r := h.PlaceOrder(t, c, "k", oneMug)
	got := <-fenced
	if !errors.Is(got.cause, checkout.ErrLeaseLapsing) {
		t.Fatalf("original's call: got cause %v, want ErrLeaseLapsing", got.cause)
	}
	if got.remaining <= 0 {
		t.Errorf("call stopped with %v of the lock left, want it stopped before the lock ran out", got.remaining)
	}
	// The outcome is unknown to the client, as after a timeout; nothing is
	// stored and the key stays started.
	if r.Status != problem.ProviderTimeout.Status || r.Header.Get("Retry-After") == "" {
		t.Errorf("original: got %d %s, want 504 with Retry-After", r.Status, r.Body)
	}
	if k := h.Key(t, c, "k"); k.Status != "started" {
		t.Errorf("got key status %s, want started", k.Status)
	}
	if got := h.Metric(t, "exactlyonce_lease_renewals_total", "result", "fenced"); got != 1 {
		t.Errorf("got %v fenced leases in /metrics, want 1", got)
	}
	// A retry after the lock expired resumes the operation.
	h.WaitLockExpired(t, c, "k")
	if r := h.PlaceOrder(t, c, "k", oneMug); r.Status != http.StatusCreated {
		t.Errorf("retry: got %d %s, want 201", r.Status, r.Body)
	}
	h.WantStats(t, 1, 1)
	wantNoOrphans(t, h)
}

func TestKeyOlderThanProviderWindowIsNotResent(t *testing.T) {
	t.Parallel()
	// A real provider forgets an idempotency key after its window; resending
	// the create after that would make a second PaymentIntent. So a retry
	// does not resume such a key: the completer, which only retrieves and
	// cancels, settles it.
	h := apptest.New(t, func(cfg *apptest.Setup) {
		cfg.LockTimeout = time.Second
		cfg.ProviderKeyWindow = time.Hour
	})
	c := h.NewCustomer(t)
	strand(t, h, c, "k", oneMug, "after_charge")
	h.Backdate(t, c, "k", 2*time.Hour)
	const calls = "exactlyonce_provider_call_duration_seconds_count"
	sent := func() float64 {
		return h.Metric(t, calls, "call", "create") + h.Metric(t, calls, "call", "confirm", "result", "unavailable") +
			h.Metric(t, calls, "call", "confirm", "result", "succeeded")
	}
	before := sent()

	if r := h.PlaceOrder(t, c, "k", oneMug); r.Status != problem.KeyInUse.Status || r.Header.Get("Retry-After") == "" {
		t.Errorf("retry: got %d %s, want 409 request-in-progress with Retry-After", r.Status, r.Body)
	}
	// The original's confirm lost its answer; the retry sends nothing.
	if got := sent(); got != before || before == 0 {
		t.Errorf("got %v creates and confirms after the retry, %v before: the retry must not resend", got, before)
	}
	if n := pass(t, h); n != 1 {
		t.Fatalf("got %d keys taken over, want 1", n)
	}
	wantReplay(t, h.PlaceOrder(t, c, "k", oneMug), http.StatusCreated)
	h.WantStats(t, 1, 1)
	wantNoOrphans(t, h)
}
