package handlers_test

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/problem"
	"exactlyonce/internal/web"
)

func countCustomers(t *testing.T, h *apptest.Harness) int {
	t.Helper()
	var n int
	if err := h.DB.Pool.QueryRow(context.Background(), "SELECT count(*) FROM customers").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Anonymous customers, made through the API or by a first cart write, are
// limited per client address: past the burst, 429 with Retry-After, and no
// row is written.
func TestNewCustomersAreLimitedPerAddress(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, func(cfg *apptest.Setup) {
		withSecret(cfg)
		cfg.CustomerQuota = web.CustomerQuota{PerMinute: 1, Burst: 2}
	})
	h.NewCustomer(t)
	h.NewCustomer(t)
	r := h.Do(t, http.MethodPost, "/api/customers", `{"name": "third"}`)
	apptest.WantProblem(t, r, problem.TooManyRequests)
	if s, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || s < 1 {
		t.Errorf("got Retry-After %q, want a number of seconds", r.Header.Get("Retry-After"))
	}
	// The browser's first cart write makes a shopper: the same quota.
	s := newShopper(t, h)
	catalog := s.get(t, "/")
	add := formValues(catalog.doc.Find(`[data-testid=product][data-sku="mug-espresso"] form[data-testid=add-to-cart]`))
	p := s.post(t, "/cart", add)
	wantErrorPage(t, p, http.StatusTooManyRequests)
	if p.header.Get("Retry-After") == "" {
		t.Error("cart write: got no Retry-After")
	}
	if n := countCustomers(t, h); n != 2 {
		t.Errorf("got %d customers, want the 2 within the quota", n)
	}
}

// A flood of one form cannot pile up waiting requests: past a few submits
// waiting for the key's running attempt, the next answers at once with the
// processing page (which waits by refreshing).
func TestWaitingSubmitsPerKeyAreCapped(t *testing.T) {
	t.Parallel()
	const waiting = 4 // checkout.maxWaiters
	claimed, release := make(chan struct{}), make(chan struct{})
	h := apptest.New(t, holdFirst(claimed, release))
	s := newShopper(t, h)
	s.addToCart(t, "mug-espresso")
	form := s.checkoutForm(t, goodCard)

	var wg sync.WaitGroup
	wg.Go(func() { s.post(t, "/checkout", form) })
	<-claimed
	for range waiting {
		wg.Go(func() { s.post(t, "/checkout", form) })
	}
	deadline := time.Now().Add(30 * time.Second)
	for h.Metric(t, "exactlyonce_checkout_waiting_submits") < waiting {
		if time.Now().After(deadline) {
			t.Fatal("the waiting submits never all waited")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if p := s.post(t, "/checkout", form); p.status != http.StatusAccepted || p.testid("processing").Length() != 1 {
		t.Errorf("one more submit: got %d, want the 202 processing page", p.status)
	}
	if got := h.Metric(t, "exactlyonce_throttled_total", "quota", "waiting_submit"); got != 1 {
		t.Errorf("got %v submits turned away from waiting, want 1", got)
	}
	close(release)
	wg.Wait()
	h.WantStats(t, 1, 1)
}
