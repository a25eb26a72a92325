package api_test

import (
	"context"
	"exactlyonce/fakestripe"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/problem"
)

// What a client is told at the edges (issue "what the client is told"):
// each test sends real requests and checks the status and headers it gets,
// and what the database holds afterwards.

// setBlip makes the provider answer the next times create-charge calls with
// fault, then heal.
func setBlip(t *testing.T, h *apptest.Harness, fault string, times int) {
	t.Helper()
	f, err := fakestripe.ParseFault(fault)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Provider.SetBehaviour(fakestripe.Behaviour{Fail: f, Times: times}); err != nil {
		t.Fatalf("set provider: %v", err)
	}
}

// retryAfter reads a whole-seconds Retry-After, failing the test when absent.
func retryAfter(t *testing.T, r apptest.Response) time.Duration {
	t.Helper()
	s, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil {
		t.Fatalf("got %d with Retry-After %q, want whole seconds", r.Status, r.Header.Get("Retry-After"))
	}
	return time.Duration(s) * time.Second
}

// A fresh answer is never marked as a replay: only a stored one is (the
// pickup form's side is TestPickupFormMarksOnlyReplays, in the pages).
func TestOnlyAReplayIsMarkedReplayed(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	c := h.NewCustomer(t)
	pickup := func() apptest.Response {
		return h.Do(t, http.MethodPost, "/api/pickups", `{"slot":"sat-am","name":"Ada"}`,
			"Authorization", "Bearer "+c.Token, "Idempotency-Key", `"p-1"`)
	}
	if r := pickup(); r.Status != http.StatusCreated || r.Header.Get("Idempotent-Replayed") != "" {
		t.Errorf("pickup API, first: got %d with Idempotent-Replayed %q, want a fresh 201", r.Status, r.Header.Get("Idempotent-Replayed"))
	}
	if r := pickup(); r.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("pickup API, again: got Idempotent-Replayed %q, want true", r.Header.Get("Idempotent-Replayed"))
	}
}

// A 409 for a key whose holder is alive names a wait of 1 to 5 s, not the
// 30 s lock its holder keeps renewing.
func TestConflictNamesAShortWait(t *testing.T) {
	t.Parallel()
	claimed := make(chan struct{})
	var once sync.Once
	h := apptest.New(t, func(cfg *apptest.Setup) {
		cfg.LockTimeout = 30 * time.Second
		cfg.Hooks.AfterClaim = func(context.Context, checkout.Claimed) { once.Do(func() { close(claimed) }) }
	})
	c := h.NewCustomer(t)
	h.SetProvider(t, 1500*time.Millisecond, "none")
	var wg sync.WaitGroup
	wg.Go(func() { h.PlaceOrder(t, c, "busy", oneMug) })
	<-claimed
	busy := h.PlaceOrder(t, c, "busy", oneMug)
	wg.Wait()
	apptest.WantProblem(t, busy, problem.KeyInUse)
	if d := retryAfter(t, busy); d < time.Second || d > 5*time.Second {
		t.Errorf("got Retry-After %v for a key held under a 30 s lock, want 1 to 5 s", d)
	}
}

// A provider blip costs seconds, not a lock: the shop asks the provider again
// with the same derived key, and when that does not help either, hands the
// key back so that the client's retry, after the Retry-After it was told,
// takes it over at once.
func TestProviderBlipCostsSeconds(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, func(cfg *apptest.Setup) { cfg.LockTimeout = 30 * time.Second })
	c := h.NewCustomer(t)

	t.Run("an answer lost once", func(t *testing.T) {
		setBlip(t, h, "after_charge", 1)
		if r := h.PlaceOrder(t, c, "blip-1", oneMug); r.Status != http.StatusCreated {
			t.Fatalf("got %d %s, want 201 from the shop's own retry", r.Status, r.Body)
		}
	})
	t.Run("answers lost more often than the shop retries", func(t *testing.T) {
		setBlip(t, h, "after_charge", 5)
		began := time.Now()
		first := h.PlaceOrder(t, c, "blip-2", oneMug)
		apptest.WantProblem(t, first, problem.OutcomeUnknown)
		wait := retryAfter(t, first)
		if wait > 2*time.Second {
			t.Errorf("got Retry-After %v, want at most 2 s (the key was handed back)", wait)
		}
		h.SetProvider(t, 0, "none")
		time.Sleep(wait)
		if r := h.PlaceOrder(t, c, "blip-2", oneMug); r.Status != http.StatusCreated {
			t.Fatalf("retry after Retry-After: got %d %s, want 201", r.Status, r.Body)
		}
		if took := time.Since(began); took > 10*time.Second {
			t.Errorf("the order took %v, want within 10 s of a 30 s lock", took)
		}
	})
	// Each charge once, however often the provider was asked.
	h.WantStats(t, 2, 2)
}

// A byte-identical retry of a cart order whose outcome was lost is never
// refused because the cart was edited meanwhile: it is the same request, and
// gets the order its key paid for.
func TestCartOrderRetriedAfterTheCartChanged(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, func(cfg *apptest.Setup) { cfg.LockTimeout = 30 * time.Second })
	cc := newCartClient(t, h)
	wantCart(t, cc.do(t, http.MethodPut, "", twoMugs), http.StatusOK)
	order := func() apptest.Response {
		return cc.do(t, http.MethodPost, "/order", `{"card":"4242424242424242"}`, "Idempotency-Key", `"k-edit"`, "If-Match", `"1"`)
	}
	setBlip(t, h, "after_charge", 5)
	apptest.WantProblem(t, order(), problem.OutcomeUnknown)
	h.SetProvider(t, 0, "none")
	// The shopper edits the cart in another tab, then the client retries.
	wantCart(t, cc.do(t, http.MethodPut, "/items/mug-espresso", `{"quantity":5}`), http.StatusOK)
	r := order()
	if r.Status != http.StatusCreated {
		t.Fatalf("retry after the cart changed: got %d %s, want 201 (the order the key paid for)", r.Status, r.Body)
	}
	var receipt checkout.Receipt
	r.JSON(t, &receipt)
	mugs := 0
	for _, it := range receipt.Items {
		if it.SKU == "mug-espresso" {
			mugs = int(it.Quantity)
		}
	}
	if len(receipt.Items) != 2 || mugs != 2 {
		t.Errorf("got items %+v, want the version the key was claimed for (2 mugs and a book)", receipt.Items)
	}
	if again := order(); again.Status != http.StatusCreated || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("again: got %d, want the order replayed", again.Status)
	}
	h.WantStats(t, 1, 1)
}

// A finish that outlives FinishTimeout, waiting on a row lock a stalled
// session holds, has an unknown outcome: the client is told 503 with
// Retry-After, never 500, and its retry gets the one order.
func TestFinishPastItsTimeoutIsAnOutage(t *testing.T) {
	t.Parallel()
	var once sync.Once
	release := make(chan struct{})
	var h *apptest.Harness
	h = apptest.New(t, func(cfg *apptest.Setup) {
		cfg.LockTimeout, cfg.FinishTimeout = 3*time.Second, 500*time.Millisecond
		cfg.Hooks.BeforeFinish = func(ctx context.Context, cl checkout.Claimed) {
			once.Do(func() {
				// A session that locked the key's row and stalled.
				tx, err := h.DB.Pool.Begin(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := tx.Exec(ctx, `SELECT FROM idem_keys WHERE key = $1 FOR UPDATE`, cl.Key); err != nil {
					t.Error(err)
				}
				go func() { <-release; _ = tx.Rollback(context.Background()) }()
			})
		}
	})
	c := h.NewCustomer(t)
	r := h.PlaceOrder(t, c, "stuck-finish", oneMug)
	close(release)
	apptest.WantProblem(t, r, problem.Unavailable)
	retryAfter(t, r)
	h.WaitLockExpired(t, c, "stuck-finish")
	if r := h.PlaceOrder(t, c, "stuck-finish", oneMug); r.Status != http.StatusCreated {
		t.Fatalf("retry: got %d %s, want 201", r.Status, r.Body)
	}
	h.WantStats(t, 1, 1)
}
