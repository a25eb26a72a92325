package web

import (
	"container/list"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

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
	return q.buckets.take(quotaAddress(addr), now)
}

// buckets is a token bucket per key (a client address, a customer), at most
// maxQuotaClients of them, the most recently seen first in order.
//
// They are written by hand rather than with golang.org/x/time/rate, which
// the module used before: a write limit takes a token when it admits a
// request and gives it back when the request stored nothing, and rate's
// Reservation.CancelAt gives nothing back once the reservation's time to
// act has passed, which for a request admitted at once is the moment it was
// admitted. Checking for a token without taking it (rate's TokensAt) and
// spending it afterwards is what let every request in flight through on
// one token. A bucket is a count and a time; taking and giving back under
// one mutex is all it needs.
type buckets struct {
	perSecond float64
	burst     float64
	max       int

	mu      sync.Mutex
	clients map[string]*list.Element // of *bucket
	order   *list.List
}

// bucket is one key's tokens as of last.
type bucket struct {
	key    string
	tokens float64
	last   time.Time
}

// newBuckets returns buckets of perSecond tokens a second, burst at most.
func newBuckets(perSecond float64, burst int) *buckets {
	return &buckets{perSecond: perSecond, burst: float64(burst), max: maxQuotaClients,
		clients: map[string]*list.Element{}, order: list.New()}
}

// of returns key's bucket refilled up to now, making it full (and
// forgetting the least recently seen one past max) when there is none. The
// caller holds mu.
func (q *buckets) of(key string, now time.Time) *bucket {
	if e, found := q.clients[key]; found {
		q.order.MoveToFront(e)
		b := e.Value.(*bucket)
		if now.After(b.last) {
			b.tokens = min(q.burst, b.tokens+now.Sub(b.last).Seconds()*q.perSecond)
			b.last = now
		}
		return b
	}
	if q.order.Len() >= q.max {
		oldest := q.order.Back()
		q.order.Remove(oldest)
		delete(q.clients, oldest.Value.(*bucket).key)
	}
	b := &bucket{key: key, tokens: q.burst, last: now}
	q.clients[key] = q.order.PushFront(b)
	return b
}

// take spends one of key's tokens; or, having spent nothing, says how long
// until there is one.
func (q *buckets) take(key string, now time.Time) (bool, time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	b := q.of(key, now)
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration(float64(time.Second) * (1 - b.tokens) / q.perSecond)
}

// giveBack returns a token take spent, for a request that turned out to
// store nothing. A bucket forgotten meanwhile is full again anyway.
func (q *buckets) giveBack(key string, now time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	b := q.of(key, now)
	b.tokens = min(q.burst, b.tokens+1)
}

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
