package web

import (
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"exactlyonce/idem"
	"exactlyonce/internal/metrics"
	"exactlyonce/internal/problem"
)

// WriteLimits bound what one customer (a bearer token, a browser shopper, a
// pickup visitor) and one client address may make the shop store: new
// orders, pickups and carts. Each is a token bucket of PerMinute a minute,
// Burst at once. A request refused by one is answered 429 with Retry-After,
// as problem+json or a page, and stores nothing. The zero value of a field
// means its default (DefaultWriteLimits); the load test and the chaos
// harness raise them for their own clients.
//
// They are kept in each process, not in the database: they cost no round
// trip, and they guard against abuse, not against a second charge (which
// the keys alone prevent). With N instances a client gets up to N times
// each limit.
type WriteLimits struct {
	// PerCustomer: writes that store something new, per customer. A
	// request that turned out to store nothing (a replay, a key in
	// progress, a refused body) gives its token back.
	PerCustomerPerMinute float64
	PerCustomerBurst     int
	// PerAddress: the same, per client address (per /64 for IPv6), whoever
	// sends them: a flood of anonymous forms, each with a fresh session.
	PerAddressPerMinute float64
	PerAddressBurst     int
	// Declines: declined payments per customer, a velocity limit on card
	// testing. Past it, the customer's new orders are refused until the
	// bucket refills; a replay of a decline costs nothing.
	DeclinesPerHour float64
	DeclineBurst    int
	// InFlight is how many writes of one customer may run at once.
	InFlight int
}

// DefaultWriteLimits are generous for a person and for a well-behaved API
// client (which sends one order at a time and waits for it), and stop a
// script: 60 new orders a minute after a burst of 30 per customer, 300 a
// minute after 100 per address, 10 declines an hour after 5, and 16 writes
// of one customer at once (the lab sends ten at once).
var DefaultWriteLimits = WriteLimits{
	PerCustomerPerMinute: 60, PerCustomerBurst: 30,
	PerAddressPerMinute: 300, PerAddressBurst: 100,
	DeclinesPerHour: 10, DeclineBurst: 5,
	InFlight: 16,
}

// withDefaults fills the zero fields of w from DefaultWriteLimits.
func (w WriteLimits) withDefaults() WriteLimits {
	d := DefaultWriteLimits
	pick := func(v, def float64) float64 {
		if v > 0 {
			return v
		}
		return def
	}
	pickN := func(v, def int) int {
		if v > 0 {
			return v
		}
		return def
	}
	return WriteLimits{
		PerCustomerPerMinute: pick(w.PerCustomerPerMinute, d.PerCustomerPerMinute), PerCustomerBurst: pickN(w.PerCustomerBurst, d.PerCustomerBurst),
		PerAddressPerMinute: pick(w.PerAddressPerMinute, d.PerAddressPerMinute), PerAddressBurst: pickN(w.PerAddressBurst, d.PerAddressBurst),
		DeclinesPerHour: pick(w.DeclinesPerHour, d.DeclinesPerHour), DeclineBurst: pickN(w.DeclineBurst, d.DeclineBurst),
		InFlight: pickN(w.InFlight, d.InFlight),
	}
}

// Limits are the quotas and write limits of both faces of the server, one
// set of buckets per process.
type Limits struct {
	newCustomers *addressQuota
	writes       *writeLimiter
	metrics      *metrics.Metrics
}

// NewLimits returns the quota on new customers and the write limits, which
// count their refusals into m.
func NewLimits(customers CustomerQuota, writes WriteLimits, m *metrics.Metrics) *Limits {
	return &Limits{newCustomers: newAddressQuota(customers), writes: newWriteLimiter(writes), metrics: m}
}

// writeLimiter holds the buckets of WriteLimits.
type writeLimiter struct {
	customers, addresses, declines *buckets
	inFlight                       int

	mu      sync.Mutex
	running map[string]int // writes in flight, per customer
}

func newWriteLimiter(w WriteLimits) *writeLimiter {
	w = w.withDefaults()
	return &writeLimiter{
		customers: newBuckets(w.PerCustomerPerMinute/60, w.PerCustomerBurst),
		addresses: newBuckets(w.PerAddressPerMinute/60, w.PerAddressBurst),
		declines:  newBuckets(w.DeclinesPerHour/3600, w.DeclineBurst),
		inFlight:  w.InFlight, running: map[string]int{},
	}
}

// enter counts one more write of who in flight, unless it has inFlight
// already; leave must be called when it ends.
func (l *writeLimiter) enter(who string) (leave func(), ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.running[who] >= l.inFlight {
		return nil, false
	}
	l.running[who]++
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.running[who]--; l.running[who] <= 0 {
			delete(l.running, who)
		}
	}, true
}

// Writes guards a route that stores what a customer asks for, with who
// naming the customer (the key's scope). orders says that the route charges,
// so that declines count and a customer past the decline limit is refused.
func (lim *Limits) Writes(who func(c echo.Context) string, orders bool) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			l, now, h := lim.writes, time.Now(), lim
			customer := who(c)
			leave, ok := l.enter(customer)
			if !ok {
				return h.throttled("in_flight", time.Second, "too many of your requests are running at once; wait for them")
			}
			defer leave()
			address := quotaAddress(ClientAddress(c.Request().RemoteAddr))
			if orders {
				if ok, wait := l.declines.admits(customer, now); !ok {
					return h.throttled("declines", wait, "too many of your payments were declined in a short time; try again later")
				}
			}
			if ok, wait := l.addresses.admits(address, now); !ok {
				return h.throttled("address_writes", wait, "too many requests from your address; retry after the seconds in Retry-After")
			}
			if ok, wait := l.customers.admits(customer, now); !ok {
				return h.throttled("customer_writes", wait, "too many new requests of yours in a short time; retry after the seconds in Retry-After")
			}
			err := next(c)
			// Tokens are spent after the fact, by what the request
			// stored: a replay, a key in progress or a refused request
			// spends none, so that retrying is never throttled by the
			// retries themselves. Requests admitted together may overshoot
			// a bucket by as many as run at once (InFlight per customer).
			if !storedNothing(c, err) {
				end := time.Now()
				l.addresses.spend(address, end)
				l.customers.spend(customer, end)
			}
			if orders && freshDecline(c) {
				l.declines.spend(customer, time.Now())
			}
			return err
		}
	}
}

// freshDecline reports whether a charging request's answer is a payment
// declined now: a 402 that is not the replay of one (which the API and the
// pages both mark Idempotent-Replayed). Only those count against the
// customer.
func freshDecline(c echo.Context) bool {
	return c.Response().Status == http.StatusPaymentRequired && c.Response().Header().Get(idem.HeaderReplayed) != "true"
}

// storedNothing reports whether a request's answer shows that nothing new
// was stored: a replay, a key in progress or reused, or a request refused
// before anything was written.
func storedNothing(c echo.Context, err error) bool {
	if c.Response().Header().Get(idem.HeaderReplayed) == "true" {
		return true
	}
	status := c.Response().Status
	if err != nil {
		status = Classify(err).Kind.Status
	}
	switch status {
	case http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotFound, http.StatusConflict,
		http.StatusPreconditionFailed, http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity, http.StatusTooManyRequests:
		return true
	}
	return false
}

// throttled is the answer of a write limit: 429 with Retry-After, counted by
// limit in the metrics.
func (lim *Limits) throttled(limit string, wait time.Duration, detail string) error {
	lim.metrics.Throttled.WithLabelValues(limit).Inc()
	return &Failure{Kind: problem.TooManyRequests, RetryAfter: max(wait, time.Second), Detail: detail}
}
