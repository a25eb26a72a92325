package handlers_test

import (
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/web"
)

// together sends n requests at once: each goroutine prepares its request
// (prepare, which may be nil), then all wait at one barrier and send
// together, so that every request is in flight before any is answered.
// It counts the answers by status.
func together(n int, prepare func(i int), send func(i int) int) map[int]int {
	var (
		mu      sync.Mutex
		counts  = map[int]int{}
		ready   sync.WaitGroup
		done    sync.WaitGroup
		barrier = make(chan struct{})
	)
	ready.Add(n)
	for i := range n {
		done.Go(func() {
			if prepare != nil {
				prepare(i)
			}
			ready.Done()
			<-barrier
			status := send(i)
			mu.Lock()
			counts[status]++
			mu.Unlock()
		})
	}
	ready.Wait()
	close(barrier)
	done.Wait()
	return counts
}

// A customer with one token sends 16 orders at once, each under a fresh
// key, while the provider is slow enough that all are in flight together.
// The token is taken at admission, so one order is stored and the others
// are refused; checking for a token without taking it let all 16 through.
func TestOneTokenAdmitsOneOrderAtOnce(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withLimits(web.WriteLimits{PerCustomerPerMinute: 1, PerCustomerBurst: 1}))
	c := h.NewCustomer(t)
	h.SetProvider(t, 300*time.Millisecond, "none")
	counts := together(16, nil, func(int) int { return h.PlaceOrder(t, c, uuid.NewString(), oneMug).Status })
	if s := h.Stats(t); s.Orders != 1 || counts[http.StatusCreated] != 1 || counts[http.StatusTooManyRequests] != 15 {
		t.Errorf("got answers %v and %d orders stored, want one order and 15 refusals", counts, s.Orders)
	}
}

// Card testing at once: 16 declining orders sent together, under fresh
// keys, against a burst of 5 declines. Each new order holds a decline
// token while it runs, so at most 5 reach the provider, counted there.
func TestParallelDeclinesReachTheProviderAtMostTheBurst(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withLimits(web.WriteLimits{DeclinesPerHour: 1, DeclineBurst: 5}))
	c := h.NewCustomer(t)
	h.SetProvider(t, 300*time.Millisecond, "none")
	declined := `{"items":[{"sku":"mug-espresso","quantity":1}],"card":"4000000000000002"}`
	counts := together(16, nil, func(int) int { return h.PlaceOrder(t, c, uuid.NewString(), declined).Status })
	atProvider := h.Count(t, `SELECT count(*) FROM fakestripe.payment_intents`)
	if atProvider > 5 || counts[http.StatusPaymentRequired] > 5 || counts[http.StatusTooManyRequests] < 11 {
		t.Errorf("got answers %v and %d payment intents at the provider, want at most 5 and the rest refused", counts, atProvider)
	}
}

// 48 fresh browser sessions from one address post the pickup form at
// once, against a burst of 5 per address: each session is a new visitor,
// so only the address's bucket (and its cap on requests in flight) stands
// between them and the table.
func TestFreshSessionsFromOneAddressAreBoundedAtOnce(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withLimits(web.WriteLimits{PerAddressPerMinute: 1, PerAddressBurst: 5}))
	shoppers := make([]*shopper, 48)
	forms := make([]url.Values, 48)
	counts := together(48, func(i int) {
		shoppers[i] = newShopper(t, h)
		forms[i] = shoppers[i].pickupForm(t, "sat-am", "Ada")
	}, func(i int) int { return shoppers[i].post(t, "/pickup", forms[i]).status })
	if n := countPickups(t, h); n > 5 || n+counts[http.StatusTooManyRequests] != 48 {
		t.Errorf("got %d reservations and answers %v, want at most 5 and the rest refused", n, counts)
	}
}

// The lab's baseline: ten good orders at once, each under a fresh key,
// against a burst of 5 declines. Each holds a decline token while it runs,
// so five run and five wait (web.DeclineWait) for the tokens the first
// five give back when they are not declined: all ten are placed.
func TestOrdersAtOnceBeyondTheDeclineBurstWaitTheirTurn(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withLimits(web.WriteLimits{DeclinesPerHour: 1, DeclineBurst: 5}))
	c := h.NewCustomer(t)
	h.SetProvider(t, 300*time.Millisecond, "none")
	counts := together(10, nil, func(int) int { return h.PlaceOrder(t, c, uuid.NewString(), oneMug).Status })
	if counts[http.StatusCreated] != 10 {
		t.Errorf("got answers %v, want ten orders", counts)
	}
}
