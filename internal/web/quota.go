package web

import (
	"container/list"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"

	"exactlyonce/internal/problem"
)

// maxQuotaClients bounds the addresses a quota remembers. Past it, the
// address seen least recently is forgotten (in constant time), so a spray of
// addresses can neither grow the map nor make each new address cost a scan.
const maxQuotaClients = 10_000

// CustomerQuota is how many anonymous customers one client address may
// create: Burst at once, then PerMinute. The zero value means the defaults.
type CustomerQuota struct {
	PerMinute float64
	Burst     int
}

// DefaultCustomerQuota is generous: a person makes one customer, and a test
// suite or the lab a few dozen; a script making thousands is stopped.
var DefaultCustomerQuota = CustomerQuota{PerMinute: 60, Burst: 100}

// addressQuota is a token bucket per client address (per /64 for IPv6).
type addressQuota struct{ buckets *buckets }

func newAddressQuota(q CustomerQuota) *addressQuota {
	if q.PerMinute <= 0 {
		q.PerMinute = DefaultCustomerQuota.PerMinute
	}
	if q.Burst <= 0 {
		q.Burst = DefaultCustomerQuota.Burst
	}
	return &addressQuota{buckets: newBuckets(q.PerMinute/60, q.Burst)}
}

// take spends one token of addr's bucket, or says how long until there is
// one. Nothing is spent when the answer is no.
func (q *addressQuota) take(addr string, now time.Time) (ok bool, retryAfter time.Duration) {
	r, wait := q.buckets.reserve(quotaAddress(addr), now)
	return r != nil, wait
}

// buckets is a token bucket per key (a client address, a customer), at most
// maxQuotaClients of them, the most recently seen first in order.
type buckets struct {
	limit rate.Limit
	burst int
	max   int

	mu      sync.Mutex
	clients map[string]*list.Element // of *bucket
	order   *list.List
}

type bucket struct {
	key string
	lim *rate.Limiter
}

// newBuckets returns buckets of perSecond tokens a second, burst at most.
func newBuckets(perSecond float64, burst int) *buckets {
	return &buckets{limit: rate.Limit(perSecond), burst: burst, max: maxQuotaClients,
		clients: map[string]*list.Element{}, order: list.New()}
}

// of returns key's bucket, making it (and forgetting the least recently
// seen one past max) when there is none.
func (q *buckets) of(key string) *rate.Limiter {
	q.mu.Lock()
	defer q.mu.Unlock()
	if e, found := q.clients[key]; found {
		q.order.MoveToFront(e)
		return e.Value.(*bucket).lim
	}
	if q.order.Len() >= q.max {
		oldest := q.order.Back()
		q.order.Remove(oldest)
		delete(q.clients, oldest.Value.(*bucket).key)
	}
	b := &bucket{key: key, lim: rate.NewLimiter(q.limit, q.burst)}
	q.clients[key] = q.order.PushFront(b)
	return b.lim
}

// reserve spends one of key's tokens and returns the reservation; or nil
// and how long until there is one, having spent nothing.
func (q *buckets) reserve(key string, now time.Time) (*rate.Reservation, time.Duration) {
	r := q.of(key).ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return nil, d
	}
	return r, 0
}

// admits reports whether key's bucket has a token now, spending nothing,
// or how long until it will.
func (q *buckets) admits(key string, now time.Time) (bool, time.Duration) {
	lim := q.of(key)
	tokens := lim.TokensAt(now)
	if tokens >= 1 {
		return true, 0
	}
	return false, time.Duration(float64(time.Second) * (1 - tokens) / float64(lim.Limit()))
}

// spend takes one of key's tokens, if it has one.
func (q *buckets) spend(key string, now time.Time) { q.of(key).AllowN(now, 1) }

// quotaAddress is the bucket of a client address: an IPv6 address stands
// for its /64, which one host or customer line usually holds whole, so that
// a client cannot get a fresh bucket per address of its own prefix.
func quotaAddress(addr string) string {
	ip, err := netip.ParseAddr(addr)
	if err != nil || !ip.Is6() || ip.Is4In6() {
		return addr
	}
	p, err := ip.WithZone("").Prefix(64)
	if err != nil {
		return addr
	}
	return p.String()
}

// AllowNewCustomer spends one of the client address's new-customer tokens,
// or refuses with 429 and when to retry. Called just before a customer or
// shopper row is written, so a refused request stores nothing.
func (l *Limits) AllowNewCustomer(c echo.Context) error {
	ok, wait := l.newCustomers.take(ClientAddress(c.Request().RemoteAddr), time.Now())
	if ok {
		return nil
	}
	l.metrics.Throttled.WithLabelValues("new_customer").Inc()
	return &Failure{Kind: problem.TooManyRequests, RetryAfter: wait,
		Detail: "too many new customers from your address; retry after the seconds in Retry-After"}
}

// ClientAddress is the address of the connection's peer. Headers such as
// X-Forwarded-For are not trusted: any client can send them, and a quota
// keyed on them is a quota per made-up address. Behind a reverse proxy,
// every client shares the proxy's address, so size the quota for it.
func ClientAddress(remoteAddr string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		return remoteAddr
	}
	return host
}
