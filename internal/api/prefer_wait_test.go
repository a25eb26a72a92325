package api_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/problem"
)

// An order sent with Prefer: wait while another request holds its key
// waits for that request, as the browser's second submit does, and gets its
// order replayed in one round trip instead of a 409; without the preference
// the same request is answered 409 at once (TestConflictNamesAShortWait).
func TestPreferWaitGetsTheOrderOfTheHeldKey(t *testing.T) {
	t.Parallel()
	claimed, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	h := apptest.New(t, func(cfg *apptest.Setup) {
		cfg.Hooks.AfterClaim = func(context.Context, checkout.Claimed) {
			once.Do(func() { close(claimed); <-release })
		}
	})
	c := h.NewCustomer(t)
	var wg sync.WaitGroup
	wg.Go(func() { h.PlaceOrder(t, c, "held", oneMug) })
	<-claimed
	// The first is let go only once the second waits for it.
	wg.Go(func() {
		defer close(release)
		deadline := time.Now().Add(10 * time.Second)
		for h.Metric(t, "exactlyonce_checkout_waiting_submits") < 1 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	})
	r := h.Do(t, http.MethodPost, "/api/orders", oneMug,
		"Authorization", "Bearer "+c.Token, "Idempotency-Key", "held", "Prefer", "wait=3")
	wg.Wait()
	if r.Status != http.StatusCreated || r.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("got %d %s, want the held key's 201, replayed", r.Status, r.Body)
	}
	if got := r.Header.Get("Preference-Applied"); got != "wait=3" {
		t.Errorf("got Preference-Applied %q, want wait=3", got)
	}
	h.WantStats(t, 1, 1)
}

// A wait longer than the engine keeps anyone is cut to it, and a wait the
// server cannot read is no wait: the request is answered 409 at once, never
// refused for its preference.
func TestPreferWaitIsBounded(t *testing.T) {
	t.Parallel()
	claimed, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	h := apptest.New(t, func(cfg *apptest.Setup) {
		cfg.Hooks.AfterClaim = func(context.Context, checkout.Claimed) {
			once.Do(func() { close(claimed); <-release })
		}
	})
	c := h.NewCustomer(t)
	var wg sync.WaitGroup
	wg.Go(func() { h.PlaceOrder(t, c, "held", oneMug) })
	<-claimed
	defer func() { close(release); wg.Wait() }()
	order := func(prefer string) (apptest.Response, time.Duration) {
		began := time.Now()
		r := h.Do(t, http.MethodPost, "/api/orders", oneMug,
			"Authorization", "Bearer "+c.Token, "Idempotency-Key", "held", "Prefer", prefer)
		return r, time.Since(began)
	}
	r, took := order("respond-async, wait=600")
	apptest.WantProblem(t, r, problem.KeyInUse)
	if got := r.Header.Get("Preference-Applied"); got != "wait=3" {
		t.Errorf("wait=600: got Preference-Applied %q, want wait=3", got)
	}
	if took < checkout.MaxWait || took > checkout.MaxWait+5*time.Second {
		t.Errorf("wait=600: answered after %v, want about checkout.MaxWait (%v)", took, checkout.MaxWait)
	}
	r, took = order("wait=soon")
	apptest.WantProblem(t, r, problem.KeyInUse)
	if r.Header.Get("Preference-Applied") != "" || took > time.Second {
		t.Errorf("wait=soon: got Preference-Applied %q after %v, want none, at once", r.Header.Get("Preference-Applied"), took)
	}
}
