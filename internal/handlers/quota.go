package handlers

import (
	"net"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"

	"exactlyonce/internal/problem"
)

// maxQuotaClients bounds the addresses a quota remembers. Past it, the
// addresses whose buckets have refilled (which a fresh bucket would treat
// the same) are forgotten, so a spray of addresses cannot grow the map
// without bound.
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

// addressQuota is a token bucket per client address.
type addressQuota struct {
	limit rate.Limit
	burst int

	mu      sync.Mutex
	clients map[string]*addressBucket
}

type addressBucket struct {
	lim      *rate.Limiter
	lastSeen time.Time
}

func newAddressQuota(q CustomerQuota) *addressQuota {
	if q.PerMinute <= 0 {
		q.PerMinute = DefaultCustomerQuota.PerMinute
	}
	if q.Burst <= 0 {
		q.Burst = DefaultCustomerQuota.Burst
	}
	return &addressQuota{limit: rate.Limit(q.PerMinute / 60), burst: q.Burst, clients: map[string]*addressBucket{}}
}

// take spends one token of addr's bucket, or says how long until there is
// one. Nothing is spent when the answer is no.
func (q *addressQuota) take(addr string, now time.Time) (ok bool, retryAfter time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	b, found := q.clients[addr]
	if !found {
		if len(q.clients) >= maxQuotaClients {
			q.forgetRefilled(now)
		}
		b = &addressBucket{lim: rate.NewLimiter(q.limit, q.burst)}
		q.clients[addr] = b
	}
	b.lastSeen = now
	r := b.lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// forgetRefilled drops the buckets that are full again.
func (q *addressQuota) forgetRefilled(now time.Time) {
	refill := time.Duration(float64(q.burst) / float64(q.limit) * float64(time.Second))
	for addr, b := range q.clients {
		if now.Sub(b.lastSeen) > refill {
			delete(q.clients, addr)
		}
	}
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
	return &apiError{kind: problem.TooManyRequests, retryAfter: wait,
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
