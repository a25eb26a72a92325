package handlers

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

// addressQuota is a token bucket per client address (per /64 for IPv6),
// at most max of them, the most recently seen first in order.
type addressQuota struct {
	limit rate.Limit
	burst int
	max   int

	mu      sync.Mutex
	clients map[string]*list.Element // of *addressBucket
	order   *list.List
}

type addressBucket struct {
	addr string
	lim  *rate.Limiter
}

func newAddressQuota(q CustomerQuota) *addressQuota {
	if q.PerMinute <= 0 {
		q.PerMinute = DefaultCustomerQuota.PerMinute
	}
	if q.Burst <= 0 {
		q.Burst = DefaultCustomerQuota.Burst
	}
	return &addressQuota{limit: rate.Limit(q.PerMinute / 60), burst: q.Burst, max: maxQuotaClients,
		clients: map[string]*list.Element{}, order: list.New()}
}

// take spends one token of addr's bucket, or says how long until there is
// one. Nothing is spent when the answer is no.
func (q *addressQuota) take(addr string, now time.Time) (ok bool, retryAfter time.Duration) {
	addr = quotaAddress(addr)
	q.mu.Lock()
	defer q.mu.Unlock()
	var b *addressBucket
	if e, found := q.clients[addr]; found {
		q.order.MoveToFront(e)
		b = e.Value.(*addressBucket)
	} else {
		if q.order.Len() >= q.max {
			oldest := q.order.Back()
			q.order.Remove(oldest)
			delete(q.clients, oldest.Value.(*addressBucket).addr)
		}
		b = &addressBucket{addr: addr, lim: rate.NewLimiter(q.limit, q.burst)}
		q.clients[addr] = q.order.PushFront(b)
	}
	r := b.lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
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

// allowNewCustomer spends one of the client address's new-customer tokens,
// or refuses with 429 and when to retry. Called just before a customer or
// shopper row is written, so a refused request stores nothing.
func (h *Handler) allowNewCustomer(c echo.Context) error {
	ok, wait := h.newCustomers.take(clientAddress(c.Request().RemoteAddr), time.Now())
	if ok {
		return nil
	}
	h.metrics.Throttled.WithLabelValues("new_customer").Inc()
	return &failure{kind: problem.TooManyRequests, retryAfter: wait,
		detail: "too many new customers from your address; retry after the seconds in Retry-After"}
}

// clientAddress is the address of the connection's peer. Headers such as
// X-Forwarded-For are not trusted: any client can send them, and a quota
// keyed on them is a quota per made-up address. Behind a reverse proxy,
// every client shares the proxy's address, so size the quota for it.
func clientAddress(remoteAddr string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		return remoteAddr
	}
	return host
}
