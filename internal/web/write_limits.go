package web

import (
	"context"
	"errors"
	"fmt"
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
	// request takes its token when it is admitted, so that requests in
	// flight together cannot share one, and gives it back when it turned
	// out to store nothing (a replay, a key in progress, a refused body).
	PerCustomerPerMinute float64
	PerCustomerBurst     int
	// PerAddress: the same, per client address (per /64 for IPv6), whoever
	// sends them: a flood of anonymous forms, each with a fresh session.
	PerAddressPerMinute float64
	PerAddressBurst     int
	// Declines: declined payments per customer, a velocity limit on card
	// testing. Each new order holds a token while it runs, kept if it was
	// declined: so no more orders reach the provider at once than there
	// are declines left. Past it, the customer's new orders are refused
	// until the bucket refills; a replay of a decline costs nothing.
	DeclinesPerHour float64
	DeclineBurst    int
	// InFlight is how many writes of one customer may run at once, and
	// AddressInFlight how many from one client address (per /64 for
	// IPv6), whoever sends them: fresh sessions are fresh customers.
	InFlight        int
	AddressInFlight int
}

// DefaultWriteLimits are generous for a person and for a well-behaved API
// client (which sends one order at a time and waits for it), and stop a
// script: 60 new orders a minute after a burst of 30 per customer, 300 a
// minute after 100 per address, 10 declines an hour after 5, and 16 writes
// of one customer at once (the lab sends ten at once), 64 from one address.
var DefaultWriteLimits = WriteLimits{
	PerCustomerPerMinute: 60, PerCustomerBurst: 30,
	PerAddressPerMinute: 300, PerAddressBurst: 100,
	DeclinesPerHour: 10, DeclineBurst: 5,
	InFlight: 16, AddressInFlight: 64,
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
		InFlight: pickN(w.InFlight, d.InFlight), AddressInFlight: pickN(w.AddressInFlight, d.AddressInFlight),
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

// WriteKey is the idempotency key a write carries, as its route's key store
// keeps it. A limit on new writes that would refuse the request asks the
// store about it first: a retry of a key that exists stores nothing new,
// or resumes what its first attempt was admitted for, and refusing it
// would leave its operation to the completer while its client is still
// there (issue 33). The zero value is a request without a key.
type WriteKey struct {
	Store      *idem.Store
	Scope, Key string
}

// writeLimiter holds the buckets of WriteLimits, the writes in flight, and
// the admissions that requests of one key share.
type writeLimiter struct {
	customers, addresses, declines *buckets
	inFlight, addressInFlight      int

	mu        sync.Mutex
	running   map[string]int        // writes in flight, per customer and per address
	admitting map[string]*admission // by customer and key, while one of its requests runs
	declining map[string]int        // decline tokens held by orders in flight, per customer
	// returned is closed, and replaced, whenever an order in flight lets
	// its decline token go (kept or given back): what an order waiting
	// for one (DeclineWait) waits on.
	returned chan struct{}
}

// DeclineWait is how long a new order waits for a decline token that an
// order of the same customer in flight holds: that order will most likely
// not be declined and give it back. A customer's orders sent at once
// (more than DECLINE_BURST) are so run a few at a time rather than
// refused, while declines sent at once still reach the provider no more
// than the tokens left.
const DeclineWait = 2 * time.Second

func newWriteLimiter(w WriteLimits) *writeLimiter {
	w = w.withDefaults()
	return &writeLimiter{
		customers: newBuckets(w.PerCustomerPerMinute/60, w.PerCustomerBurst),
		addresses: newBuckets(w.PerAddressPerMinute/60, w.PerAddressBurst),
		declines:  newBuckets(w.DeclinesPerHour/3600, w.DeclineBurst),
		inFlight:  w.InFlight, addressInFlight: w.AddressInFlight,
		running: map[string]int{}, admitting: map[string]*admission{}, declining: map[string]int{},
		returned: make(chan struct{}),
	}
}

// refusal is why a write limit refused a request: the limit's name for the
// metrics, when to retry, and what to tell the client.
type refusal struct {
	limit  string
	wait   time.Duration
	detail string
}

// enter counts one more write of customer and of address in flight, unless
// either has its most already; leave must be called when it ends.
func (l *writeLimiter) enter(customer, address string) (leave func(), no *refusal) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, a := "customer:"+customer, "address:"+address
	switch {
	case l.running[c] >= l.inFlight:
		return nil, &refusal{"in_flight", time.Second, "too many of your requests are running at once; wait for them"}
	case l.running[a] >= l.addressInFlight:
		return nil, &refusal{"address_in_flight", time.Second, "too many requests from your address are running at once; wait for them"}
	}
	l.running[c]++
	l.running[a]++
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		for _, k := range []string{c, a} {
			if l.running[k]--; l.running[k] <= 0 {
				delete(l.running, k)
			}
		}
	}, nil
}

// admission is what requests admitted together under one key hold: the
// tokens taken for the first of them, given back by the last to end unless
// one of them stored something. At most one request of a key can store
// anything (the key's claim decides which), so the requests of one key in
// flight together share one token rather than each taking one: a double
// click costs what a click costs.
type admission struct {
	shared            string // the key in writeLimiter.admitting; "" for a request without one
	customer, address string
	tokens, decline   bool // holds a token of the customer's and the address's buckets; of the declines'
	requests          int
	stored, declined  bool
}

// admit takes, for a new write, a decline token (orders only) and a token
// of the address's and of the customer's bucket, giving back what it took
// when one refuses; or joins the admission of a request of the same key in
// flight.
func (l *writeLimiter) admit(customer, address, key string, orders bool, now time.Time) (*admission, *refusal) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if a, ok := l.admitting[key]; ok && key != "" {
		a.requests++
		return a, nil
	}
	a := &admission{shared: key, customer: customer, address: address, requests: 1}
	if orders {
		ok, wait := l.declines.take(customer, now)
		if !ok {
			return nil, &refusal{"declines", wait, "too many of your payments were declined in a short time; try again later"}
		}
		a.decline = true
		l.declining[customer]++
	}
	if ok, wait := l.addresses.take(address, now); !ok {
		l.giveBack(a, now)
		return nil, &refusal{"address_writes", wait, "too many requests from your address; retry after the seconds in Retry-After"}
	}
	if ok, wait := l.customers.take(customer, now); !ok {
		l.addresses.giveBack(address, now)
		l.giveBack(a, now)
		return nil, &refusal{"customer_writes", wait, "too many new requests of yours in a short time; retry after the seconds in Retry-After"}
	}
	a.tokens = true
	if key != "" {
		l.admitting[key] = a
	}
	return a, nil
}

// admitRetry admits a retry of a key that exists without a token: it
// stores nothing new, or resumes an operation whose first attempt took
// one. Requests of the key in flight meanwhile share its admission.
func (l *writeLimiter) admitRetry(customer, address, key string) *admission {
	l.mu.Lock()
	defer l.mu.Unlock()
	if a, ok := l.admitting[key]; ok {
		a.requests++
		return a
	}
	a := &admission{shared: key, customer: customer, address: address, requests: 1}
	l.admitting[key] = a
	return a
}

// done ends one request of a: the last to end gives back the tokens when
// none of them stored anything, and the decline token when none was
// declined. A fresh decline of a retry admitted without one still counts.
func (l *writeLimiter) done(a *admission, stored, declined bool, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a.stored, a.declined = a.stored || stored, a.declined || declined
	if a.requests--; a.requests > 0 {
		return
	}
	if a.shared != "" {
		delete(l.admitting, a.shared)
	}
	if a.tokens && !a.stored {
		l.addresses.giveBack(a.address, now)
		l.customers.giveBack(a.customer, now)
	}
	switch {
	case a.declined && !a.decline:
		l.declines.take(a.customer, now)
	case a.declined:
		l.letGo(a) // kept: the decline is counted
	default:
		l.giveBack(a, now)
	}
}

// giveBack returns a's decline token, if it holds one. The caller holds mu.
func (l *writeLimiter) giveBack(a *admission, now time.Time) {
	if a.decline {
		l.declines.giveBack(a.customer, now)
		l.letGo(a)
	}
}

// letGo ends a's hold on its decline token, given back or kept, and wakes
// the orders waiting for one. The caller holds mu.
func (l *writeLimiter) letGo(a *admission) {
	if !a.decline {
		return
	}
	a.decline = false
	if l.declining[a.customer]--; l.declining[a.customer] <= 0 {
		delete(l.declining, a.customer)
	}
	close(l.returned)
	l.returned = make(chan struct{})
}

// awaitDecline waits, for no longer than until, for an order of customer
// in flight to let its decline token go, and reports whether one may have:
// false when none holds one (the tokens were spent by declines, and only
// time refills them) or the time is up.
func (l *writeLimiter) awaitDecline(ctx context.Context, customer string, until time.Time) bool {
	l.mu.Lock()
	held, returned := l.declining[customer] > 0, l.returned
	l.mu.Unlock()
	left := time.Until(until)
	if !held || left <= 0 {
		return false
	}
	t := time.NewTimer(left)
	defer t.Stop()
	select {
	case <-returned:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// Writes guards a route that stores what a customer asks for, with who
// naming the customer (the key's scope). orders says that the route charges,
// so that declines count and a customer past the decline limit is refused.
// key, when set, names the request's idempotency key: a request the limits
// on new writes would refuse is admitted when its key exists (a retry),
// and a request refused while its key is started has its ask recorded, so
// that the completer leaves the key to its client for another grace, as
// after a claim told the key is in progress.
func (lim *Limits) Writes(who func(c echo.Context) string, orders bool, key func(c echo.Context) WriteKey) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			l := lim.writes
			customer, address := who(c), quotaAddress(ClientAddress(c.Request().RemoteAddr))
			var k WriteKey
			if key != nil {
				k = key(c)
			}
			shared := ""
			if k.Key != "" {
				shared = customer + "\x00" + k.Scope + "\x00" + k.Key
			}
			leave, no := l.enter(customer, address)
			if no != nil {
				// Too many at once: a retry waits its turn too, but it has
				// asked about its key.
				return lim.refuse(c, k, no)
			}
			defer leave()
			a, no := l.admit(customer, address, shared, orders, time.Now())
			for until := time.Now().Add(DeclineWait); no != nil && no.limit == "declines" &&
				l.awaitDecline(c.Request().Context(), customer, until); {
				a, no = l.admit(customer, address, shared, orders, time.Now())
			}
			if no != nil {
				known, err := exists(c.Request().Context(), k)
				if !known || err != nil {
					return lim.refuse(c, k, no)
				}
				a = l.admitRetry(customer, address, shared)
			}
			// Deferred, so that a handler's panic still ends the
			// admission: a shared one left behind would admit every later
			// request of its key without a token.
			var err error
			defer func() { l.done(a, !storedNothing(c, err), orders && freshDecline(c), time.Now()) }()
			err = next(c)
			return err
		}
	}
}

// exists reports whether k names a key its store holds, started or
// finished. It is asked only of a request a limit would refuse, so the
// round trip is paid by refusals, never by an admitted request.
func exists(ctx context.Context, k WriteKey) (bool, error) {
	if k.Store == nil || k.Key == "" {
		return false, nil
	}
	_, err := k.Store.Get(ctx, k.Scope, k.Key)
	switch {
	case err == nil, errors.Is(err, idem.ErrInProgress):
		return true, nil
	case errors.Is(err, idem.ErrNotFound):
		return false, nil
	}
	return false, fmt.Errorf("read key: %w", err)
}

// refuse answers a refused write 429 with Retry-After. A 429 tells the
// client to retry, so when the request carries a key, the refusal is
// recorded as its client's ask (idem.Store.Ask: nothing for a key that is
// not started), as a claim told the key is in progress would be.
func (lim *Limits) refuse(c echo.Context, k WriteKey, no *refusal) error {
	if k.Store != nil && k.Key != "" {
		_ = k.Store.Ask(c.Request().Context(), k.Scope, k.Key) // what it could not write, the store keeps for its next flush
	}
	return lim.throttled(no.limit, no.wait, no.detail)
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
