// Package haproxy runs HAProxy (Debian's haproxy 2.6) in front of several
// shop instances: the front door of a highly available shop, used by
// `make ha` and by the chaos harness's failover runs (`make chaos/ha`).
//
// The configuration is the point, and Config renders it: instances are
// health-checked on /readyz, so one whose database is away or that is
// shutting down leaves the rotation within a second; a connection refused
// by a dead instance is retried on another one; and a request whose answer
// never came (the instance died mid-request) is sent again to another
// instance only when sending it twice is safe: a GET or HEAD, or a request
// that carries an Idempotency-Key, which the shop turns into one operation
// however often it arrives. Without that header a POST is never re-sent.
package haproxy

import (
	"fmt"
	"strings"
	"time"
)

// Config is one HAProxy in front of a set of instances.
type Config struct {
	// Listen is the front door's address (host:port).
	Listen string
	// Servers are the instances' addresses (host:port).
	Servers []string
	// Host is the Host header of the health checks: a name every
	// instance answers for (its ALLOWED_HOSTS), such as Listen.
	Host string
	// CheckEvery spaces the health checks (default 500 ms); an instance
	// leaves the rotation after two failed checks and comes back after
	// two passed ones.
	CheckEvery time.Duration
	// ServerTimeout bounds the wait for an instance's answer (default
	// 60 s): longer than the longest the shop takes to answer (its
	// provider timeout, its finish timeout), so that HAProxy never cuts
	// off an answer the shop would have given.
	ServerTimeout time.Duration
	// StatsAddr, if set, serves HAProxy's statistics page (/stats).
	StatsAddr string
}

// Render returns the configuration file's text.
func Render(c Config) string {
	if c.CheckEvery <= 0 {
		c.CheckEvery = 500 * time.Millisecond
	}
	if c.ServerTimeout <= 0 {
		c.ServerTimeout = time.Minute
	}
	if c.Host == "" {
		c.Host = c.Listen
	}
	var b strings.Builder
	fmt.Fprintf(&b, `# Rendered by bench/haproxy: HAProxy in front of the shop's instances.
global
    maxconn 4096

defaults
    mode http
    timeout connect 1s
    timeout client 2m
    timeout server %s
    timeout http-request 10s
    # A connection refused by a dead instance is tried again, on another
    # instance (redispatch), up to twice.
    retries 2
    option redispatch 1
    # A request sent whose answer never came (the instance died, or closed
    # the connection) is sent again too, but only when that is safe: see
    # the frontend.
    retry-on conn-failure empty-response
    # When no instance is in rotation (the database is away for all of
    # them, as during a failover), HAProxy answers itself, as the shop
    # would: 503 with Retry-After and the shop's problem type, so that a
    # client retries, with the same key, in a moment.
    http-error status 503 content-type application/problem+json hdr Retry-After 2 string "%s"

frontend shop
    bind %s
    # Sending a request twice is safe for GET and HEAD, and for a request
    # with an Idempotency-Key: the shop runs one operation per key. Any
    # other request is re-sent only when it never reached an instance.
    http-request disable-l7-retry if !METH_GET !{ req.hdr(idempotency-key) -m found }
    default_backend shops
`, ms(c.ServerTimeout), unavailable, c.Listen)
	if c.StatsAddr != "" {
		fmt.Fprintf(&b, `
frontend stats
    bind %s
    stats enable
    stats uri /stats
    stats refresh 2s
`, c.StatsAddr)
	}
	fmt.Fprintf(&b, `
backend shops
    balance roundrobin
    # In rotation while /readyz answers 200 (ready or degraded): an instance
    # whose database is away, or that is shutting down, answers 503.
    option httpchk
    http-check send meth GET uri /readyz ver HTTP/1.1 hdr Host %s
    http-check expect status 200
    default-server check inter %s fall 2 rise 2
`, c.Host, ms(c.CheckEvery))
	for i, s := range c.Servers {
		fmt.Fprintf(&b, "    server web-%d %s\n", i, s)
	}
	return b.String()
}

// unavailable is the body of HAProxy's own 503, the shop's problem type
// service-unavailable (internal/problem), escaped for a quoted string in
// HAProxy's configuration.
var unavailable = strings.ReplaceAll(`{"type":"/problems/service-unavailable","title":"Service unavailable","status":503,`+
	`"detail":"No instance of the shop can serve this request now (their database is away, or they are restarting). `+
	`Retry after Retry-After seconds, with the same Idempotency-Key for an order."}`, `"`, `\"`)

// ms spells d in milliseconds, which every HAProxy timeout accepts.
func ms(d time.Duration) string { return fmt.Sprintf("%dms", d.Milliseconds()) }
