package checkout_test

// The scenarios of the design article, each through the real HTTP API of the
// whole application on a real PostgreSQL, each ending with the charge and
// order counts read from the database.

import (
	"bytes"
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/checkout"
)

const oneMug = `{"items": [{"sku": "mug-espresso", "quantity": 1}]}`

func TestSameRequestTwiceIsReplayed(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	c := h.NewCustomer(t)

	first := h.PlaceOrder(t, c, "k-1", oneMug)
	// Same body with other key order and whitespace: the same request.
	second := h.PlaceOrder(t, c, "k-1", `{ "items":[ {"quantity":1, "sku":"mug-espresso"} ] }`)

	if first.Status != http.StatusCreated || second.Status != http.StatusCreated {
		t.Fatalf("got %d then %d, want 201 twice", first.Status, second.Status)
	}
	if got := first.Header.Get("Idempotent-Replayed"); got != "" {
		t.Errorf("first response: got Idempotent-Replayed %q, want none", got)
	}
	if got := second.Header.Get("Idempotent-Replayed"); got != "true" {
		t.Errorf("second response: got Idempotent-Replayed %q, want true", got)
	}
	if !bytes.Equal(first.Body, second.Body) {
		t.Errorf("replayed body differs:\n got %s\nwant %s", second.Body, first.Body)
	}
	if a, b := first.Header.Get("Location"), second.Header.Get("Location"); a == "" || a != b {
		t.Errorf("got Location %q then %q, want the same order twice", a, b)
	}
	h.WantStats(t, 1, 1)
}

func TestTenConcurrentRequestsOneKey(t *testing.T) {
	t.Parallel()
	// The winner waits in AfterClaim until the nine others have been
	// answered, so every one of them meets a held lock, whatever the
	// scheduler does; the 0.3 s provider delay is the article's setting.
	const n = 10
	release := make(chan struct{})
	h := apptest.New(t, func(cfg *apptest.Setup) {
		cfg.Hooks.AfterClaim = func(context.Context, checkout.Claimed) { waitOrTimeout(t, release) }
	})
	c := h.NewCustomer(t)
	h.SetProvider(t, 300*time.Millisecond, "none")

	statuses := make(chan int, n)
	var answered sync.WaitGroup
	answered.Add(n - 1)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			<-start
			r := h.PlaceOrder(t, c, "same-key", oneMug)
			statuses <- r.Status
			if r.Status == http.StatusConflict {
				if r.Header.Get("Retry-After") == "" {
					t.Errorf("409 without Retry-After")
				}
				answered.Done()
			}
		})
	}
	close(start)
	go func() { answered.Wait(); close(release) }()
	wg.Wait()
	close(statuses)

	counts := map[int]int{}
	for s := range statuses {
		counts[s]++
	}
	if counts[http.StatusCreated] != 1 || counts[http.StatusConflict] != n-1 {
		t.Errorf("got statuses %v, want one 201 and %d 409", counts, n-1)
	}
	h.WantStats(t, 1, 1)
}

func TestSameKeyDifferentRequestIsRefused(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	c := h.NewCustomer(t)
	if r := h.PlaceOrder(t, c, "k-1", oneMug); r.Status != http.StatusCreated {
		t.Fatalf("first order: got %d %s", r.Status, r.Body)
	}
	r := h.PlaceOrder(t, c, "k-1", `{"items": [{"sku": "mug-espresso", "quantity": 2}]}`)
	if r.Status != http.StatusUnprocessableEntity {
		t.Errorf("got %d %s, want 422", r.Status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("got Content-Type %q, want application/problem+json", ct)
	}
	h.WantStats(t, 1, 1)
}

func TestProviderFailsAfterCharging(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, func(cfg *apptest.Setup) { cfg.LockTimeout = time.Second })
	c := h.NewCustomer(t)
	h.SetProvider(t, 0, "after_charge")

	first := h.PlaceOrder(t, c, "k-1", oneMug)
	if first.Status != http.StatusBadGateway || first.Header.Get("Retry-After") == "" {
		t.Fatalf("original: got %d (Retry-After %q) %s, want 502 with Retry-After",
			first.Status, first.Header.Get("Retry-After"), first.Body)
	}
	h.SetProvider(t, 0, "none")
	// The original asked again and lost those answers too, then handed the
	// key back: the immediate retry takes it over.
	retry := h.PlaceOrder(t, c, "k-1", oneMug)
	if retry.Status != http.StatusCreated {
		t.Fatalf("immediate retry: got %d %s, want 201 (the key was handed back)", retry.Status, retry.Body)
	}
	var receipt checkout.Receipt
	retry.JSON(t, &receipt)
	charge, err := h.Intent(t, c, "k-1")
	if err != nil {
		t.Fatalf("provider charge: %v", err)
	}
	if receipt.ChargeID != charge.ID {
		t.Errorf("got charge %s, want the original charge %s", receipt.ChargeID, charge.ID)
	}
	final := h.PlaceOrder(t, c, "k-1", oneMug)
	if final.Status != http.StatusCreated || final.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("final retry: got %d replayed=%q, want a 201 replay", final.Status, final.Header.Get("Idempotent-Replayed"))
	}
	h.WantStats(t, 1, 1)
}

// slowOriginal runs the article's stalled-request scenario: a 2 s provider, a
// 1 s lock, the original taken over by a retry. Hooks fix the order of
// events: the original stalls after its charge (its lease is renewed only
// while the provider call is in flight, so its lock then expires), the retry
// takes over and charges, the original finishes, and the retry finishes
// last. It returns the two responses.
func slowOriginal(t *testing.T, mutate func(*checkout.Engine)) (h *apptest.Harness, original, retry apptest.Response) {
	t.Helper()
	var (
		originalCharged = make(chan struct{})
		retryCharged    = make(chan struct{})
		originalReplied = make(chan struct{})
	)
	h = apptest.New(t, func(cfg *apptest.Setup) {
		cfg.LockTimeout = time.Second
		cfg.Hooks.BeforeFinish = func(_ context.Context, c checkout.Claimed) {
			if c.TakenOver {
				close(retryCharged)
				waitOrTimeout(t, originalReplied) // the retry finishes last...
			} else {
				close(originalCharged)
				waitOrTimeout(t, retryCharged) // ...the original after the takeover
			}
		}
	})
	if mutate != nil {
		mutate(h.App.Checkout)
	}
	c := h.NewCustomer(t)
	h.SetProvider(t, 2*time.Second, "none")

	done := make(chan struct{})
	go func() {
		defer close(done)
		original = h.PlaceOrder(t, c, "slow", oneMug)
		close(originalReplied)
	}()
	// Only once the original's provider call is over: until then its
	// heartbeat renews the lock, even one that lapsed under load.
	waitOrTimeout(t, originalCharged)
	h.WaitLockExpired(t, c, "slow")
	retry = h.PlaceOrder(t, c, "slow", oneMug)
	<-done
	return h, original, retry
}

func TestSlowOriginalLosesToRetry(t *testing.T) {
	t.Parallel()
	h, original, retry := slowOriginal(t, nil)
	if retry.Status != http.StatusCreated {
		t.Errorf("retry: got %d %s, want 201", retry.Status, retry.Body)
	}
	if original.Status != http.StatusConflict {
		t.Errorf("original: got %d %s, want 409 (its finish lost the lock)", original.Status, original.Body)
	}
	h.WantStats(t, 1, 1)
	// The original lost its finish holding the charge the retry's order
	// holds: not an orphan.
	wantNoOrphans(t, h)
}

// Mutation: the finish without "AND lock_token = @lock_token", the status
// guard kept. No second order: the status = 'started' guard, re-checked by
// READ COMMITTED on the row the first finish changed, stops the second
// finish. What breaks is who wins: the stale original, finishing first,
// writes the order and the current holder (the retry) is told it lost.
func TestWithoutLockTokenStaleOriginalWins(t *testing.T) {
	t.Parallel()
	h, original, retry := slowOriginal(t, checkout.UseFinishWithoutToken)
	if original.Status != http.StatusCreated {
		t.Errorf("original: got %d %s, want 201 (the stale holder wins)", original.Status, original.Body)
	}
	if retry.Status != http.StatusConflict {
		t.Errorf("retry: got %d %s, want 409 (the current holder loses)", retry.Status, retry.Body)
	}
	h.WantStats(t, 1, 1)
}

// Mutation: the finish with no guard at all, neither status nor token. Both
// attempts write an order: one charge thanks to the provider key, two
// orders for it.
func TestWithoutAnyGuardSlowOriginalWritesSecondOrder(t *testing.T) {
	t.Parallel()
	h, original, retry := slowOriginal(t, checkout.UseFinishWithoutGuard)
	if original.Status != http.StatusCreated || retry.Status != http.StatusCreated {
		t.Errorf("got %d and %d, want both 201 without any guard", original.Status, retry.Status)
	}
	h.WantStats(t, 1, 2)
}

func TestBaselineWithoutIdempotencyChargesEveryTime(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	c := h.NewCustomer(t)
	h.SetProvider(t, 300*time.Millisecond, "none")
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			// A fresh key per attempt is what a client that regenerates its
			// key on every retry does: each looks like a new operation.
			if r := h.PlaceOrder(t, c, uuid.NewString(), oneMug); r.Status != http.StatusCreated {
				t.Errorf("got %d %s, want 201", r.Status, r.Body)
			}
		})
	}
	wg.Wait()
	h.WantStats(t, 10, 10)
}

// waitOrTimeout receives from ch, failing the test rather than hanging it.
func waitOrTimeout[T any](t *testing.T, ch <-chan T) {
	select {
	case <-ch:
	case <-time.After(20 * time.Second):
		t.Error("timed out waiting for another request")
	}
}
