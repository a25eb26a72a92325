package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"exactlyonce/bench/chaos/history"
	"exactlyonce/client"
)

// fakeShop answers the policy and orders as handle says, and counts the
// requests it got.
func fakeShop(t *testing.T, handle func(w http.ResponseWriter)) (*process, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path == "/api/idempotency-policy" {
			fmt.Fprint(w, `{"retention_seconds":86400}`)
			return
		}
		handle(w)
	}))
	t.Cleanup(srv.Close)
	return &process{addr: strings.TrimPrefix(srv.URL, "http://")}, &hits
}

// TestSpreadDoublesAndRecordsEveryAnswer: the harness's transport sends
// the Go client's requests to both shops, fires an order attempt twice,
// gives the client the final answer of the two, and holds every answer
// against the key's others: a 500 is reported, and a replay with another
// order id kept as a contradiction.
func TestSpreadDoublesAndRecordsEveryAnswer(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	answers := []string{"409", "201 a", "201 b", "500"} // one per order request, in order
	handle := func(w http.ResponseWriter) {
		mu.Lock()
		a := answers[0]
		answers = answers[1:]
		mu.Unlock()
		switch a {
		case "409":
			w.Header().Set("Retry-After", "1")
			http.Error(w, `{"status":409,"type":"/problems/key-in-use"}`, http.StatusConflict)
		case "201 a":
			w.WriteHeader(http.StatusCreated)
			fmt.Fprint(w, `{"order_id":"00000000-0000-4000-8000-00000000000a"}`)
		case "201 b":
			w.WriteHeader(http.StatusCreated)
			fmt.Fprint(w, `{"order_id":"00000000-0000-4000-8000-00000000000b"}`)
		default:
			http.Error(w, `{"status":500,"type":"about:blank"}`, http.StatusInternalServerError)
		}
	}
	shopA, hitsA := fakeShop(t, handle)
	shopB, hitsB := fakeShop(t, handle)
	d := &driver{
		cl: &cluster{shops: []*process{shopA, shopB}, targets: []string{shopA.addr, shopB.addr}}, base: http.DefaultTransport,
		res: newClients(), seen: map[string]outcome{}, logf: t.Logf,
	}
	c := client.New(anyShop, "tok", client.NewFileStore(filepath.Join(t.TempDir(), "keys.json")))
	tr := &spread{d: d, rng: rand.New(rand.NewPCG(1, 2)), double: 1}
	c.HTTP = &http.Client{Transport: tr}

	// Both shots of the first attempt: a 409 and a 201, in either order.
	o, err := c.PlaceOrder(context.Background(), "op", client.OrderRequest{})
	if err != nil || !strings.HasSuffix(o.OrderID, "a") {
		t.Fatalf("got order %+v, error %v; want order …a from the doubled first attempt", o, err)
	}
	if d.res.Attempts != 2 || d.res.Doubled != 1 || d.res.Statuses["409"] != 1 || d.res.Statuses["201"] != 1 {
		t.Errorf("got %d attempts, %d doubled, statuses %v; want 2, 1, one 409 and one 201", d.res.Attempts, d.res.Doubled, d.res.Statuses)
	}
	if len(d.res.violations) != 0 {
		t.Fatalf("got violations %v, want none yet", d.res.violations)
	}

	// The replay, doubled too: another order id and a 500.
	_, err = c.PlaceOrder(context.Background(), "op", client.OrderRequest{})
	var p *client.Problem
	if err != nil && !errors.As(err, &p) {
		t.Fatalf("replay: %v", err)
	}
	// The 500 is reported at once; the contradiction is kept for check,
	// which judges it against the database.
	if len(d.res.violations) != 1 || d.res.violations[0].kind != violServerError {
		t.Errorf("got violations %v, want one 500", d.res.violations)
	}
	if c := d.res.contradictions; len(c) != 1 || !strings.HasSuffix(c[0].first.orderID.String(), "a") || !strings.HasSuffix(c[0].then.orderID.String(), "b") {
		t.Errorf("got contradictions %+v, want order …a, then …b", c)
	}
	// The history has all four answers, and its checker finds the replay
	// with another order id.
	if ops := d.res.hist.Ops(); len(ops) != 4 {
		t.Errorf("got %d ops in the history, want the 4 answers", len(ops))
	}
	if r := history.Check(history.History{Ops: d.res.hist.Ops()}, ""); !r.Found(history.TwoSuccesses) {
		t.Errorf("got %s, want %q", r.Summary(), history.TwoSuccesses)
	}
	if hitsA.Load() == 0 || hitsB.Load() == 0 {
		t.Errorf("got %d requests at one shop and %d at the other, want both used", hitsA.Load(), hitsB.Load())
	}
}
