package checkout_test

// The completer: keys whose attempt died, settled in the background, alone
// and racing a client's retry or another completer. Each test runs passes
// itself (the background schedule is off in tests) and forces the order of
// events with the engine's hooks.

import (
	"context"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/problem"
)

// strand leaves key started with an expired lock, the way a process that
// died mid-request leaves it: the provider applies fault (after_charge
// charges, before_charge does not) and loses the answer, and nobody retries.
func strand(t *testing.T, h *apptest.Harness, c apptest.Customer, key, body, fault string) {
	t.Helper()
	failOnce(t, h, c, key, body, fault)
	h.WaitLockExpired(t, c, key)
}

// failOnce places an order that the provider's fault leaves started.
func failOnce(t *testing.T, h *apptest.Harness, c apptest.Customer, key, body, fault string) {
	t.Helper()
	h.SetProvider(t, 0, fault)
	if r := h.PlaceOrder(t, c, key, body); r.Status != http.StatusBadGateway {
		t.Fatalf("original: got %d %s, want 502", r.Status, r.Body)
	}
	h.SetProvider(t, 0, "none")
}

// pass runs one completer pass and returns how many keys it took over.
func pass(t *testing.T, h *apptest.Harness) int {
	t.Helper()
	n, err := h.App.Completer.Pass(context.Background())
	if err != nil {
		t.Fatalf("completer pass: %v", err)
	}
	return n
}

func wantEvents(t *testing.T, h *apptest.Harness, c apptest.Customer, key string, want ...string) []apptest.KeyEvent {
	t.Helper()
	events := h.KeyEvents(t, c, key)
	if got := apptest.EventNames(events); !slices.Equal(got, want) {
		t.Errorf("key %q: got events %v, want %v", key, got, want)
	}
	return events
}

func wantReplay(t *testing.T, r apptest.Response, status int) {
	t.Helper()
	if r.Status != status || r.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("got %d (replayed %q) %s, want a replayed %d", r.Status, r.Header.Get("Idempotent-Replayed"), r.Body, status)
	}
}

func TestCompleterFinishesChargedOrder(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, func(cfg *apptest.Setup) { cfg.LockTimeout = time.Second })
	c := h.NewCustomer(t)
	strand(t, h, c, "k", oneMug, "after_charge")
	h.WantStats(t, 1, 0) // charged, no order: what the completer is for

	if n := pass(t, h); n != 1 {
		t.Fatalf("got %d keys taken over, want 1", n)
	}
	h.WantStats(t, 1, 1)
	wantJobsPerOrder(t, h, 1) // a recovered order is enqueued by the same FinishOrder
	r := h.PlaceOrder(t, c, "k", oneMug)
	wantReplay(t, r, http.StatusCreated)
	var receipt checkout.Receipt
	r.JSON(t, &receipt)
	charge, err := h.Intent(t, c, "k")
	if err != nil {
		t.Fatalf("provider charge: %v", err)
	}
	if receipt.ChargeID != charge.ID || receipt.Amount != charge.Amount {
		t.Errorf("got receipt %+v, want the original charge %s of %d", receipt, charge.ID, charge.Amount)
	}
	events := wantEvents(t, h, c, "k", "claimed", "taken_over", "recovered")
	if len(events) == 3 && (events[1].Detail["by"] != "completer" || events[2].Detail["outcome"] != "charged") {
		t.Errorf("got events %+v, want a takeover by the completer and a charged recovery", events)
	}
	if got := h.Metric(t, "exactlyonce_completer_recoveries_total", "outcome", "charged"); got != 1 {
		t.Errorf("got %v charged recoveries in /metrics, want 1", got)
	}
	if n := pass(t, h); n != 0 {
		t.Errorf("second pass: got %d keys, want 0", n)
	}
}

func TestCompleterFindsNoCharge(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, func(cfg *apptest.Setup) { cfg.LockTimeout = time.Second })
	c := h.NewCustomer(t)
	strand(t, h, c, "k", oneMug, "before_charge")

	if n := pass(t, h); n != 1 {
		t.Fatalf("got %d keys taken over, want 1", n)
	}
	// The key is closed for good: a retry replays the answer rather than
	// charging, so a charge can no longer appear under it.
	r := h.PlaceOrder(t, c, "k", oneMug)
	wantReplay(t, r, problem.PaymentNotCompleted.Status)
	var p problem.Problem
	r.JSON(t, &p)
	if p.Type != "/problems/"+problem.PaymentNotCompleted.Slug {
		t.Errorf("got problem %+v, want %s", p, problem.PaymentNotCompleted.Slug)
	}
	if s := h.Stats(t); s.Charges != 0 || s.Orders != 0 || s.KeysFinished != 1 {
		t.Errorf("got %+v, want no charge, no order, one finished key", s)
	}
	wantEvents(t, h, c, "k", "claimed", "taken_over", "recovered")
	if got := h.Metric(t, "exactlyonce_completer_recoveries_total", "outcome", "not_completed"); got != 1 {
		t.Errorf("got %v not_completed recoveries in /metrics, want 1", got)
	}
}

func TestCompleterFindsDeclinedCharge(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, func(cfg *apptest.Setup) { cfg.LockTimeout = time.Second })
	c := h.NewCustomer(t)
	body := `{"items": [{"sku": "mug-espresso", "quantity": 1}], "card": "4000000000000002"}`
	strand(t, h, c, "k", body, "after_charge")

	if n := pass(t, h); n != 1 {
		t.Fatalf("got %d keys taken over, want 1", n)
	}
	r := h.PlaceOrder(t, c, "k", body)
	wantReplay(t, r, http.StatusPaymentRequired)
	var p problem.Problem
	r.JSON(t, &p)
	if p.Type != "/problems/"+problem.PaymentDeclined.Slug || p.ChargeID == "" {
		t.Errorf("got problem %+v, want payment-declined naming the charge", p)
	}
	h.WantStats(t, 0, 0)
}

func TestCompleterLeavesKeysAlone(t *testing.T) {
	t.Parallel()
	t.Run("still locked", func(t *testing.T) {
		t.Parallel()
		// An attempt that holds its key (30 s lock) and is still at work.
		claimed, release := make(chan struct{}), make(chan struct{})
		h := apptest.New(t, func(cfg *apptest.Setup) {
			cfg.CompleterGrace = 0
			cfg.Hooks.AfterClaim = func(context.Context, checkout.Claimed) { close(claimed); <-release }
		})
		c := h.NewCustomer(t)
		done := make(chan struct{})
		go func() { h.PlaceOrder(t, c, "k", oneMug); close(done) }()
		<-claimed
		if n := pass(t, h); n != 0 {
			t.Errorf("got %d keys taken over, want 0 while the lock holds", n)
		}
		close(release)
		<-done
	})
	t.Run("within the grace period", func(t *testing.T) {
		t.Parallel()
		h := apptest.New(t, func(cfg *apptest.Setup) {
			cfg.LockTimeout = time.Second
			cfg.CompleterGrace = time.Hour
		})
		c := h.NewCustomer(t)
		strand(t, h, c, "k", oneMug, "before_charge")
		if n := pass(t, h); n != 0 {
			t.Errorf("got %d keys taken over, want 0 within the grace period", n)
		}
		// The client's retry still resumes the operation and charges.
		if r := h.PlaceOrder(t, c, "k", oneMug); r.Status != http.StatusCreated {
			t.Errorf("retry: got %d %s, want 201", r.Status, r.Body)
		}
		h.WantStats(t, 1, 1)
	})
	t.Run("finished", func(t *testing.T) {
		t.Parallel()
		h := apptest.New(t)
		c := h.NewCustomer(t)
		h.PlaceOrder(t, c, "k", oneMug)
		if n := pass(t, h); n != 0 {
			t.Errorf("got %d keys taken over, want 0", n)
		}
	})
}

func TestCompleterStallsAndRetryWins(t *testing.T) {
	t.Parallel()
	// The completer finds the charge, then stalls before its finish until
	// its lock has expired and a retry has taken over and finished.
	completerFound, retryDone := make(chan struct{}), make(chan struct{})
	h := apptest.New(t, func(cfg *apptest.Setup) {
		cfg.LockTimeout = time.Second
		cfg.Hooks.BeforeFinish = func(_ context.Context, c checkout.Claimed) {
			if c.ByCompleter {
				close(completerFound)
				waitOrTimeout(t, retryDone)
			}
		}
	})
	c := h.NewCustomer(t)
	strand(t, h, c, "k", oneMug, "after_charge")

	passed := make(chan int)
	go func() { passed <- pass(t, h) }()
	waitOrTimeout(t, completerFound)
	h.WaitLockExpired(t, c, "k")
	retry := h.PlaceOrder(t, c, "k", oneMug)
	close(retryDone)
	if n := <-passed; n != 1 {
		t.Errorf("got %d keys taken over, want 1", n)
	}

	if retry.Status != http.StatusCreated || retry.Header.Get("Idempotent-Replayed") != "" {
		t.Errorf("retry: got %d %s, want a new 201", retry.Status, retry.Body)
	}
	h.WantStats(t, 1, 1)
	// The takeovers' events are written in their own transactions (the
	// kit's TookOver hook), which tells the completer's from the retry's.
	events := wantEvents(t, h, c, "k", "claimed", "taken_over", "taken_over", "finished")
	if len(events) == 4 {
		if by, attempt := events[1].Detail["by"], events[1].Detail["attempt"]; by != "completer" || attempt != 1.0 {
			t.Errorf("first takeover: got by %v, attempt %v, want the completer's first attempt", by, attempt)
		}
		if by, attempt := events[2].Detail["by"], events[2].Detail["attempt"]; by != "request" || attempt != nil {
			t.Errorf("second takeover: got by %v, attempt %v, want the retry's, with no attempt", by, attempt)
		}
		if events[1].Detail["locked_until"] == nil || events[2].Detail["locked_until"] == nil {
			t.Errorf("got takeovers %+v, want each with its new locked_until", events[1:3])
		}
	}
	if got := h.Metric(t, "exactlyonce_finishes_lost_total", "holder", "completer"); got != 1 {
		t.Errorf("got %v finishes lost by the completer in /metrics, want 1", got)
	}
	if got := h.Metric(t, "exactlyonce_completer_recoveries_total", "outcome", "lost"); got != 1 {
		t.Errorf("got %v lost recoveries in /metrics, want 1", got)
	}
	wantNoOrphans(t, h)
}

func TestRetryStallsAndCompleterWins(t *testing.T) {
	t.Parallel()
	// The retry takes over and charges, then stalls before its finish until
	// its lock has expired and the completer has settled the key.
	retryCharged, completerDone := make(chan struct{}), make(chan struct{})
	h := apptest.New(t, func(cfg *apptest.Setup) {
		cfg.LockTimeout = time.Second
		cfg.Hooks.BeforeFinish = func(_ context.Context, c checkout.Claimed) {
			if c.TakenOver && !c.ByCompleter {
				close(retryCharged)
				waitOrTimeout(t, completerDone)
			}
		}
	})
	c := h.NewCustomer(t)
	strand(t, h, c, "k", oneMug, "after_charge")

	replied := make(chan apptest.Response)
	go func() { replied <- h.PlaceOrder(t, c, "k", oneMug) }()
	waitOrTimeout(t, retryCharged)
	h.WaitLockExpired(t, c, "k")
	if n := pass(t, h); n != 1 {
		t.Errorf("got %d keys taken over, want 1", n)
	}
	close(completerDone)

	if r := <-replied; r.Status != problem.LockLost.Status {
		t.Errorf("stalled retry: got %d %s, want 409 request-superseded", r.Status, r.Body)
	}
	wantReplay(t, h.PlaceOrder(t, c, "k", oneMug), http.StatusCreated)
	h.WantStats(t, 1, 1)
	wantEvents(t, h, c, "k", "claimed", "taken_over", "taken_over", "recovered")
	// The retry lost its finish holding the charge the completer's order
	// holds: not an orphan.
	wantNoOrphans(t, h)
}

func TestTwoCompletersAtOnce(t *testing.T) {
	t.Parallel()
	// The first completer to claim a key holds it inside its lease (so its
	// lock is renewed, every second) until a second completer has run a
	// whole pass.
	var claimed atomic.Bool
	firstHolds, release := make(chan string, 1), make(chan struct{})
	h := apptest.New(t, func(cfg *apptest.Setup) {
		cfg.LockTimeout = 3 * time.Second
		cfg.Hooks.BeforeCharge = func(_ context.Context, c checkout.Claimed) {
			if !c.ByCompleter {
				return
			}
			if claimed.CompareAndSwap(false, true) {
				firstHolds <- c.Key
				waitOrTimeout(t, release)
			}
		}
	})
	c := h.NewCustomer(t)
	failOnce(t, h, c, "k1", oneMug, "after_charge")
	failOnce(t, h, c, "k2", oneMug, "after_charge")
	h.WaitLockExpired(t, c, "k1")
	h.WaitLockExpired(t, c, "k2")

	first := make(chan int)
	go func() { first <- pass(t, h) }()
	held := <-firstHolds
	if n := pass(t, h); n != 1 {
		t.Errorf("second completer: got %d keys, want 1 (the key the first one does not hold)", n)
	}
	if k := h.Key(t, c, held); k.Status != "started" {
		t.Errorf("key %s held by the first completer: got status %s, want started", held, k.Status)
	}
	close(release)
	if n := <-first; n != 1 {
		t.Errorf("first completer: got %d keys, want 1", n)
	}
	h.WantStats(t, 2, 2)
	wantJobsPerOrder(t, h, 2)
	for _, key := range []string{"k1", "k2"} {
		wantEvents(t, h, c, key, "claimed", "taken_over", "recovered")
	}
	wantNoOrphans(t, h)
}

func TestRetryOfChargedKeyResumesAfterProductLeftCatalog(t *testing.T) {
	t.Parallel()
	// The original charged and died; the product then left the catalog.
	// The retry cannot be priced, but its key is this very request and may
	// have charged: it must resume with the stored order, not answer 400
	// "nothing was charged".
	h := apptest.New(t, func(cfg *apptest.Setup) { cfg.CatalogMaxAge = time.Nanosecond; cfg.LockTimeout = 2 * time.Second })
	c := h.NewCustomer(t)
	strand(t, h, c, "k", oneMug, "after_charge")
	if _, err := h.DB.Pool.Exec(context.Background(), `DELETE FROM products WHERE sku = 'mug-espresso'`); err != nil {
		t.Fatal(err)
	}

	if r := h.PlaceOrder(t, c, "k", oneMug); r.Status != http.StatusCreated {
		t.Errorf("retry: got %d %s, want 201", r.Status, r.Body)
	}
	if n := pass(t, h); n != 0 {
		t.Errorf("got %d keys taken over by the completer, want 0", n)
	}
	if k := h.Key(t, c, "k"); k.Status != "finished" {
		t.Errorf("got key %s, want finished", k.Status)
	}
	h.WantStats(t, 1, 1)
	// A new key for the same order is refused: nothing is claimed.
	if r := h.PlaceOrder(t, c, "k2", oneMug); r.Status != http.StatusBadRequest {
		t.Errorf("new key: got %d %s, want 400", r.Status, r.Body)
	}
}
