package handlers_test

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/problem"
	"exactlyonce/internal/web"
)

// withLimits sets the write limits of a test's server: the given fields,
// and the rest out of reach, so that each test meets one limit only.
func withLimits(w web.WriteLimits) apptest.Option {
	return func(c *apptest.Setup) {
		l := apptest.Unlimited
		if w.PerCustomerBurst > 0 {
			l.PerCustomerPerMinute, l.PerCustomerBurst = w.PerCustomerPerMinute, w.PerCustomerBurst
		}
		if w.PerAddressBurst > 0 {
			l.PerAddressPerMinute, l.PerAddressBurst = w.PerAddressPerMinute, w.PerAddressBurst
		}
		if w.DeclineBurst > 0 {
			l.DeclinesPerHour, l.DeclineBurst = w.DeclinesPerHour, w.DeclineBurst
		}
		if w.InFlight > 0 {
			l.InFlight = w.InFlight
		}
		if w.AddressInFlight > 0 {
			l.AddressInFlight = w.AddressInFlight
		}
		c.WriteLimits = l
	}
}

// flood sends n requests from threads goroutines and counts their statuses.
func flood(threads, n int, send func(i int) apptest.Response) map[int]int {
	var (
		mu     sync.Mutex
		counts = map[int]int{}
		next   atomic.Int64
		wg     sync.WaitGroup
	)
	for range threads {
		wg.Go(func() {
			for i := int(next.Add(1)); i <= n; i = int(next.Add(1)) {
				r := send(i)
				mu.Lock()
				counts[r.Status]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return counts
}

// One token, four threads, a fresh key each and the declining test card:
// the card-testing pattern. Past the decline limit, new orders are refused
// with 429 and store nothing; the declines stored stay within the burst.
func TestDeclineVelocityLimit(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withLimits(web.WriteLimits{DeclinesPerHour: 10, DeclineBurst: 5}))
	c := h.NewCustomer(t)
	declined := `{"items":[{"sku":"mug-espresso","quantity":1}],"card":"4000000000000002"}`
	counts := flood(4, 40, func(int) apptest.Response { return h.PlaceOrder(t, c, uuid.NewString(), declined) })
	keys := h.Count(t, `SELECT count(*) FROM idem_keys WHERE scope = $1::uuid::text`, c.ID)
	// Each new order holds a decline token while it runs, so the threads
	// in flight when the fifth decline lands cannot add a sixth.
	if counts[http.StatusPaymentRequired] != 5 || keys != 5 || counts[http.StatusTooManyRequests] != 35 {
		t.Errorf("got answers %v and %d keys stored, want 5 declines and the rest 429", counts, keys)
	}
	r := h.PlaceOrder(t, c, uuid.NewString(), oneMug)
	apptest.WantProblem(t, r, problem.TooManyRequests)
	if r.Header.Get("Retry-After") == "" {
		t.Error("got no Retry-After on the refusal")
	}
}

// New writes per customer are limited, replays are not: a client retrying
// the one key it has is never throttled by its own retries.
func TestNewOrdersPerCustomerLimit(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withLimits(web.WriteLimits{PerCustomerPerMinute: 1, PerCustomerBurst: 10}))
	c := h.NewCustomer(t)
	counts := flood(4, 30, func(int) apptest.Response { return h.PlaceOrder(t, c, uuid.NewString(), oneMug) })
	// Tokens are taken at admission, so the four threads cannot
	// overshoot the burst (the bucket refills one a minute meanwhile).
	if s := h.Stats(t); counts[http.StatusCreated] < 10 || counts[http.StatusCreated] > 11 ||
		counts[http.StatusCreated]+counts[http.StatusTooManyRequests] != 30 || s.Orders != int64(counts[http.StatusCreated]) {
		t.Errorf("got answers %v and %d orders stored, want the burst of 10 orders and the rest refused", counts, s.Orders)
	}
	other := h.NewCustomer(t)
	if r := h.PlaceOrder(t, other, "first", oneMug); r.Status != http.StatusCreated {
		t.Errorf("another customer: got %d, want its own bucket", r.Status)
	}
	// The other customer's one order, replayed fifty times.
	for i := range 50 {
		if r := h.PlaceOrder(t, other, "first", oneMug); r.Status != http.StatusCreated {
			t.Fatalf("replay %d: got %d %s, want the stored 201", i, r.Status, r.Body)
		}
	}
}

// Without any token: a script posting the pickup form with a fresh session
// each time (a new visitor each time) is stopped by the limit per address.
func TestAnonymousPickupFloodIsLimitedByAddress(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withLimits(web.WriteLimits{PerAddressPerMinute: 1, PerAddressBurst: 10}))
	counts := flood(4, 30, func(int) apptest.Response {
		s := newShopper(t, h) // a fresh browser: new cookies, new visitor
		p := s.post(t, "/pickup", s.pickupForm(t, "sat-am", "Ada"))
		return apptest.Response{Status: p.status}
	})
	if n := countPickups(t, h); n < 10 || n > 11 || n+counts[http.StatusTooManyRequests] != 30 {
		t.Errorf("got %d reservations and answers %v, want the burst of 10 and the rest refused", n, counts)
	}
}

// Writes of one customer at once are bounded.
func TestWritesInFlightLimit(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withLimits(web.WriteLimits{InFlight: 2}))
	c := h.NewCustomer(t)
	h.SetProvider(t, 500*time.Millisecond, "none")
	counts := flood(6, 6, func(int) apptest.Response { return h.PlaceOrder(t, c, uuid.NewString(), oneMug) })
	if counts[http.StatusCreated] < 2 || counts[http.StatusTooManyRequests] < 3 {
		t.Errorf("got answers %v, want at most about 2 at once, the rest 429", counts)
	}
}

// A client whose order's outcome was lost retries its key after it has
// used up its new orders: the retry is of a key that exists, so no limit
// on new writes refuses it, and it gets its order (issue 33: it was told
// 429 until the completer settled its key "not completed").
func TestRetryOfAStartedKeyPassesTheLimitOnNewKeys(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withLimits(web.WriteLimits{PerCustomerPerMinute: 1, PerCustomerBurst: 2}))
	c := h.NewCustomer(t)
	h.SetProvider(t, 0, "after_charge")
	if r := h.PlaceOrder(t, c, "lost-answer", oneMug); r.Status < 500 {
		t.Fatalf("order whose answer was lost: got %d %s, want a 5xx", r.Status, r.Body)
	}
	h.SetProvider(t, 0, "none")
	if r := h.PlaceOrder(t, c, uuid.NewString(), oneMug); r.Status != http.StatusCreated {
		t.Fatalf("second order: got %d %s, want 201", r.Status, r.Body)
	}
	apptest.WantProblem(t, h.PlaceOrder(t, c, uuid.NewString(), oneMug), problem.TooManyRequests)
	if r := h.PlaceOrder(t, c, "lost-answer", oneMug); r.Status != http.StatusCreated {
		t.Fatalf("retry of the started key past the limit: got %d %s, want its order (201)", r.Status, r.Body)
	}
	h.WantStats(t, 2, 2)
}

// A retry refused by a limit is told to retry (429), so its client is
// still there: the refusal is recorded as its ask (asked_at), and the
// completer leaves the key to the client for another grace.
func TestRefusedRetryIsRecordedAsAnAsk(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withLimits(web.WriteLimits{InFlight: 1}))
	c := h.NewCustomer(t)
	h.SetProvider(t, 0, "after_charge")
	if r := h.PlaceOrder(t, c, "asked", oneMug); r.Status < 500 {
		t.Fatalf("order whose answer was lost: got %d %s, want a 5xx", r.Status, r.Body)
	}
	asked := `SELECT count(*) FROM idem_keys WHERE scope = $1::uuid::text AND key = 'asked' AND asked_at IS NOT NULL`
	if n := h.Count(t, asked, c.ID); n != 0 {
		t.Fatalf("got the key asked about before any retry, want never")
	}
	// Another order holds the customer's one write in flight.
	h.SetProvider(t, time.Second, "none")
	done := make(chan apptest.Response)
	go func() { done <- h.PlaceOrder(t, c, "slow", oneMug) }()
	h.WaitCount(t, 1, `SELECT count(*) FROM idem_keys WHERE scope = $1::uuid::text AND key = 'slow'`, c.ID)
	apptest.WantProblem(t, h.PlaceOrder(t, c, "asked", oneMug), problem.TooManyRequests)
	if n := h.Count(t, asked, c.ID); n != 1 {
		t.Errorf("got the refused retry not recorded as an ask, want asked_at set")
	}
	<-done
}

// The same for a browser: the pay form sent again (the outage page's retry
// form, with the same key) after the shopper's tokens for new writes are
// spent is a retry of its key, and gets its order rather than 429 (issue 33:
// pages were limited like new writes, retries included).
func TestPageRetryOfAStartedKeyPassesTheLimitOnNewKeys(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withSecret, withLimits(web.WriteLimits{PerCustomerPerMinute: 1, PerCustomerBurst: 1}),
		func(cfg *apptest.Setup) { cfg.LockTimeout = time.Second })
	s := newShopper(t, h)
	s.addToCart(t, "book-retries") // sent before the shopper has a session: a visitor's
	form := s.checkoutForm(t, goodCard)
	h.SetProvider(t, 0, "after_charge")
	// The provider's error after the charge is a 502; on a loaded machine
	// (CI through PgBouncer) the 1 s lock's provider timeout can fire
	// first, a 504: either is the outage page that keeps the key started.
	if p := s.post(t, "/checkout", form); p.status != http.StatusBadGateway && p.status != http.StatusGatewayTimeout {
		t.Fatalf("order whose answer was lost: got %d, want the 502 or 504 outage page", p.status)
	}
	h.SetProvider(t, 0, "none")
	// The shopper's one token went to the key; a new write is refused now.
	add := formValues(s.get(t, "/").doc.Find(`form[data-testid=add-to-cart]`).First())
	if p := s.post(t, "/cart", add); p.status != http.StatusTooManyRequests {
		t.Fatalf("a new write past the limit: got %d, want 429", p.status)
	}
	h.WaitLockExpired(t, apptest.Customer{ID: s.id(t)}, form.Get("idempotency_key"))
	wantReceipt(t, s.follow(t, s.post(t, "/checkout", form)))
	h.WantStats(t, 1, 1)
}

// A pickup form sent again after the visitor's one token went to it is a
// retry of its key: it is shown its reservation (a replay), not 429.
func TestPickupFormSentAgainPassesTheLimitOnNewKeys(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withLimits(web.WriteLimits{PerCustomerPerMinute: 1, PerCustomerBurst: 1}))
	s := newShopper(t, h)
	form := s.pickupForm(t, "sat-am", "Ada")
	first := s.post(t, "/pickup", form)
	if first.status != http.StatusSeeOther {
		t.Fatalf("first submit: got %d, want 303", first.status)
	}
	if p := s.post(t, "/pickup", s.pickupForm(t, "sat-pm", "Ada")); p.status != http.StatusTooManyRequests {
		t.Fatalf("a new reservation past the limit: got %d, want 429", p.status)
	}
	if again := s.post(t, "/pickup", form); again.header.Get("Location") != first.header.Get("Location")+"?replayed=1" {
		t.Fatalf("the form sent again: got %d to %q, want its reservation replayed", again.status, again.header.Get("Location"))
	}
}
