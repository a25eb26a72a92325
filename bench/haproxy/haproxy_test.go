package haproxy_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"exactlyonce/bench/haproxy"
)

// instance is a stand-in for a shop instance: /readyz answers ready while
// ready is set, and /order answers who served it, or hangs up without an
// answer while drop is set, as an instance killed mid-request would.
type instance struct {
	name        string
	ready, drop atomic.Bool
	orders      atomic.Int32 // requests that reached /order
	srv         *httptest.Server
}

func newInstance(t *testing.T, name string) *instance {
	t.Helper()
	in := &instance{name: name}
	in.ready.Store(true)
	in.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/readyz":
			if !in.ready.Load() {
				w.WriteHeader(http.StatusServiceUnavailable)
			}
		case "/order":
			io.Copy(io.Discard, r.Body) //nolint:errcheck // drained: the body does not matter
			in.orders.Add(1)
			if in.drop.Load() {
				conn, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					conn.Close()
				}
				return
			}
			io.WriteString(w, in.name) //nolint:errcheck // the client hung up: nothing to do
		}
	}))
	t.Cleanup(in.srv.Close)
	return in
}

func (in *instance) addr() string { return in.srv.Listener.Addr().String() }

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func start(t *testing.T, servers ...string) *haproxy.Proxy {
	t.Helper()
	p, err := haproxy.Start(t.Context(), haproxy.Config{Listen: freeAddr(t), Servers: servers,
		CheckEvery: 100 * time.Millisecond}, t.TempDir())
	if err != nil {
		t.Fatalf("start haproxy (make deps installs it): %v", err)
	}
	t.Cleanup(p.Stop)
	return p
}

// send posts to /order through p, with an Idempotency-Key when key is set,
// and returns the status and body.
func send(t *testing.T, p *haproxy.Proxy, key string) (int, string, http.Header) {
	t.Helper()
	status, body, h, err := trySend(p, key)
	if err != nil {
		t.Fatalf("post through haproxy: %v", err)
	}
	return status, body, h
}

// trySend is send that returns a failure to get an answer.
func trySend(p *haproxy.Proxy, key string) (int, string, http.Header, error) {
	req, _ := http.NewRequest(http.MethodPost, "http://"+p.Addr()+"/order", bytes.NewBufferString(`{"items":[]}`))
	if key != "" {
		req.Header.Set("Idempotency-Key", `"`+key+`"`)
	}
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header, nil
}

// eventually waits for cond, as health checks take a few intervals.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not within 5 s: %s", what)
		}
	}
}

// An instance whose /readyz fails leaves the rotation, and comes back when
// it passes again.
func TestInstancesFollowReadiness(t *testing.T) {
	a, b := newInstance(t, "a"), newInstance(t, "b")
	p := start(t, a.addr(), b.addr())
	b.ready.Store(false)
	eventually(t, "b out of rotation", func() bool {
		for range 4 {
			if _, who, _ := send(t, p, ""); who != "a" {
				return false
			}
		}
		return true
	})
	b.ready.Store(true)
	eventually(t, "b back in rotation", func() bool {
		_, who, _ := send(t, p, "")
		return who == "b"
	})
}

// With no instance in rotation (their database is away), HAProxy answers
// as the shop would: 503, Retry-After, the shop's problem type.
func TestNoInstanceAnswersUnavailable(t *testing.T) {
	a := newInstance(t, "a")
	a.ready.Store(false)
	p := start(t, a.addr())
	eventually(t, "a out of rotation", func() bool { s, _, _ := send(t, p, "k"); return s == http.StatusServiceUnavailable })
	status, body, h := send(t, p, "k")
	var prob struct {
		Type   string `json:"type"`
		Status int    `json:"status"`
	}
	if err := json.Unmarshal([]byte(body), &prob); err != nil || status != http.StatusServiceUnavailable ||
		h.Get("Retry-After") != "2" || h.Get("Content-Type") != "application/problem+json" ||
		prob.Type != "/problems/service-unavailable" || prob.Status != 503 {
		t.Errorf("got %d, Retry-After %q, %s %q (%v); want 503, Retry-After 2, the service-unavailable problem",
			status, h.Get("Retry-After"), h.Get("Content-Type"), body, err)
	}
}

// A request whose answer never came is sent again to another instance only
// when that is safe: it carries an Idempotency-Key. A POST without one is
// never sent twice: the client gets 502, or, on a connection it had used
// before, no answer (HAProxy closes it, as the instance did), and decides.
func TestOnlyKeyedRequestsAreSentAgain(t *testing.T) {
	a, b := newInstance(t, "a"), newInstance(t, "b")
	a.drop.Store(true)
	p := start(t, a.addr(), b.addr())
	for range 4 { // round robin: at least one lands on a first
		before := a.orders.Load()
		status, who, _ := send(t, p, "key-1")
		if status != http.StatusOK || who != "b" {
			t.Fatalf("keyed POST: got %d from %q, want 200 from b", status, who)
		}
		if a.orders.Load() > before {
			break
		}
	}
	for range 4 {
		before, beforeB := a.orders.Load(), b.orders.Load()
		status, _, _, err := trySend(p, "")
		if a.orders.Load() == before {
			continue // served by b at once
		}
		if (status != http.StatusBadGateway && err == nil) || b.orders.Load() != beforeB {
			t.Fatalf("unkeyed POST dropped by a: got %d (%v) and %d sends to b, want 502 or no answer, and none",
				status, err, b.orders.Load()-beforeB)
		}
		return
	}
	t.Fatal("no unkeyed POST reached a in 4 tries")
}

// A dead instance (nothing listening) costs no answer: the connection is
// refused and the request goes to another instance, keyed or not.
func TestDeadInstanceIsSkipped(t *testing.T) {
	b := newInstance(t, "b")
	p := start(t, freeAddr(t), b.addr())
	for range 4 {
		if status, who, _ := send(t, p, ""); status != http.StatusOK || who != "b" {
			t.Fatalf("got %d from %q, want 200 from b", status, who)
		}
	}
}
