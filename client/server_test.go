package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"exactlyonce/client"
	"exactlyonce/internal/apptest"
	"exactlyonce/internal/db"
)

var mugs = client.OrderRequest{Items: []client.Item{{SKU: "mug-espresso", Quantity: 2}}}

// recorder keeps the events a client observed.
type recorder struct {
	mu     sync.Mutex
	events []client.Event
}

func (r *recorder) observe(e client.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

// statuses lists the status of each attempt, in order.
func (r *recorder) statuses() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	var s []int
	for _, e := range r.events {
		if e.Attempt > 0 {
			s = append(s, e.Status)
		}
	}
	return s
}

// newClient is a client of a new customer of h with a file key store in
// dir and short delays, so tests wait on the server's Retry-After only.
func newClient(tb testing.TB, h *apptest.Harness, token, dir string) (*client.Client, *recorder) {
	tb.Helper()
	c := client.New(h.URL, token, client.NewFileStore(filepath.Join(dir, "keys.json")))
	c.BaseDelay, c.MaxDelay = 10*time.Millisecond, 200*time.Millisecond
	rec := &recorder{}
	c.Observe = rec.observe
	return c, rec
}

func shortLock(c *apptest.Setup) { c.LockTimeout = time.Second }

// TestPlaceOrderRetriesThroughAProviderFault: the provider charges but its
// answers are lost (502, after the shop asked it again itself and handed
// the key back); the client retries the same key after Retry-After, takes
// the operation over and gets the original charge: one charge, one order.
func TestPlaceOrderRetriesThroughAProviderFault(t *testing.T) {
	h := apptest.New(t, shortLock)
	cust := h.NewCustomer(t)
	c, rec := newClient(t, h, cust.Token, t.TempDir())
	h.SetProvider(t, 0, "after_charge")
	c.Observe = func(e client.Event) {
		rec.observe(e)
		if e.Attempt == 1 {
			h.SetProvider(t, 0, "none") // the fault passes after the first attempt
		}
	}

	o, err := c.PlaceOrder(context.Background(), "cart-1", mugs)
	if err != nil {
		t.Fatalf("place order: %v (attempts %v)", err, rec.statuses())
	}
	got := rec.statuses()
	if len(got) < 2 || got[0] != 502 || got[len(got)-1] != 201 {
		t.Errorf("got attempts %v, want a 502, retries, and a 201", got)
	}
	if o.OrderID == "" || o.Amount != 2400 {
		t.Errorf("got order %+v, want one of 2400", o)
	}
	h.WantStats(t, 1, 1)
}

// TestA500IsRetriedWithTheSameKey: a 500 says nothing about the outcome
// (Stripe's conventions call it indeterminate), so the client sends the same
// key again. Here the order was placed and its answer replaced by a 500 on
// the way back: the retry gets the stored order, and nothing is charged twice.
func TestA500IsRetriedWithTheSameKey(t *testing.T) {
	h := apptest.New(t)
	cust := h.NewCustomer(t)
	target, err := url.Parse(h.URL)
	if err != nil {
		t.Fatal(err)
	}
	var lost sync.Once
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) }}
	proxy.ModifyResponse = func(r *http.Response) error {
		if r.Request.Method == http.MethodPost && r.StatusCode == http.StatusCreated {
			lost.Do(func() {
				r.StatusCode = http.StatusInternalServerError
				r.Body = io.NopCloser(strings.NewReader(`{"type":"/problems/internal","status":500}`))
				r.Header.Del("Content-Length")
			})
		}
		return nil
	}
	front := httptest.NewServer(proxy)
	t.Cleanup(front.Close)
	c, rec := newClient(t, h, cust.Token, t.TempDir())
	c.BaseURL = front.URL
	o, err := c.PlaceOrder(context.Background(), "cart-1", mugs)
	if err != nil {
		t.Fatalf("place order: %v (attempts %v)", err, rec.statuses())
	}
	if got := rec.statuses(); !slices.Equal(got, []int{500, 201}) || !o.Replayed {
		t.Errorf("got attempts %v (replayed %v), want a 500, then the stored 201 replayed", got, o.Replayed)
	}
	h.WantStats(t, 1, 1)
}

// TestRestartResumesTheSameKey kills a client mid-operation (its context
// ends as soon as the first attempt's answer is lost) and starts a new one
// on the same key store: it sends the same key, and the shop charges once.
func TestRestartResumesTheSameKey(t *testing.T) {
	h := apptest.New(t, shortLock)
	cust := h.NewCustomer(t)
	dir := t.TempDir()
	h.SetProvider(t, 0, "after_charge")

	ctx, kill := context.WithCancel(context.Background())
	first, firstRec := newClient(t, h, cust.Token, dir)
	first.Observe = func(e client.Event) {
		firstRec.observe(e)
		kill()
	}
	if _, err := first.PlaceOrder(ctx, "cart-1", mugs); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v from the killed client, want context.Canceled", err)
	}
	keyBefore := firstRec.events[0].Key
	h.SetProvider(t, 0, "none")

	restarted, rec := newClient(t, h, cust.Token, dir)
	o, err := restarted.PlaceOrder(context.Background(), "cart-1", mugs)
	if err != nil {
		t.Fatalf("place order after restart: %v (attempts %v)", err, rec.statuses())
	}
	if o.Key != keyBefore {
		t.Errorf("got key %q after the restart, want %q", o.Key, keyBefore)
	}
	h.WantStats(t, 1, 1)
	names := apptest.EventNames(h.KeyEvents(t, cust, o.Key))
	if !slices.Contains(names, "taken_over") || names[len(names)-1] != "finished" {
		t.Errorf("got key trail %v, want a takeover and a finish", names)
	}
}

// TestFinalAnswersAreNotRetried: a 400, 401, 402 or 422 is the same on
// every retry, so the client sends once and returns the problem.
func TestFinalAnswersAreNotRetried(t *testing.T) {
	h := apptest.New(t)
	cust := h.NewCustomer(t)
	for _, tc := range []struct {
		name, token string
		order       client.OrderRequest
		want        int
	}{
		{"invalid body", cust.Token, client.OrderRequest{}, 400},
		{"bad token", "tok_nonsense", mugs, 401},
		{"declined card", cust.Token, client.OrderRequest{Items: mugs.Items, Card: "4000000000000002"}, 402},
		{"key reused for another body", cust.Token, client.OrderRequest{Items: []client.Item{{SKU: "mug-espresso", Quantity: 3}}}, 422},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, rec := newClient(t, h, tc.token, t.TempDir())
			if tc.want == 422 {
				if _, err := c.PlaceOrder(context.Background(), "op", mugs); err != nil {
					t.Fatal(err)
				}
				rec.events = nil
			}
			_, err := c.PlaceOrder(context.Background(), "op", tc.order)
			var p *client.Problem
			if !errors.As(err, &p) || p.Status != tc.want {
				t.Fatalf("got %v, want a %d problem", err, tc.want)
			}
			if got := rec.statuses(); len(got) != 1 {
				t.Errorf("got attempts %v, want exactly one", got)
			}
		})
	}
}

// TestSoldOutIsNotRetried: a 409 sold-out is the server's final word on
// this attempt (nothing was claimed; only stock coming in changes it), not
// a request in progress: the client returns it at once instead of asking
// again with the same key until its retry budget is spent.
func TestSoldOutIsNotRetried(t *testing.T) {
	h := apptest.New(t)
	if _, err := h.DB.ReceiveStock(context.Background(), db.ReceiveStockParams{Sku: "mug-espresso", Quantity: 1}); err != nil {
		t.Fatal(err)
	}
	cust := h.NewCustomer(t)
	c, rec := newClient(t, h, cust.Token, t.TempDir())
	c.MaxElapsed = 3 * time.Second
	_, err := c.PlaceOrder(context.Background(), "op", mugs) // two mugs, one on hand
	var p *client.Problem
	if !errors.As(err, &p) || p.Status != http.StatusConflict || !strings.HasSuffix(p.Type, "/sold-out") {
		t.Fatalf("got %v, want a 409 sold-out problem", err)
	}
	if got := rec.statuses(); len(got) != 1 {
		t.Errorf("got attempts %v, want exactly one", got)
	}
}

// TestReconcilesAfterTheRetryWindow: a key whose retry window has ended is
// not sent again; the client finds the order it made through its trail.
func TestReconcilesAfterTheRetryWindow(t *testing.T) {
	h := apptest.New(t)
	cust := h.NewCustomer(t)
	dir := t.TempDir()
	c, _ := newClient(t, h, cust.Token, dir)
	placed, err := c.PlaceOrder(context.Background(), "cart-1", mugs)
	if err != nil {
		t.Fatal(err)
	}
	policy, err := c.Policy(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	old := client.Entry{Key: placed.Key, Created: time.Now().Add(-policy.Retention() * 3 / 4)}
	if err := c.Keys.Put("cart-1", old); err != nil {
		t.Fatal(err)
	}

	later, rec := newClient(t, h, cust.Token, dir)
	o, err := later.PlaceOrder(context.Background(), "cart-1", mugs)
	if err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	if !o.Reconciled || o.OrderID != placed.OrderID {
		t.Errorf("got order %s reconciled %v, want %s reconciled", o.OrderID, o.Reconciled, placed.OrderID)
	}
	if got := rec.statuses(); len(got) != 0 {
		t.Errorf("got attempts %v, want none past the window", got)
	}
	h.WantStats(t, 1, 1)
}

// TestStopsAtTheRetryWindowWithoutGuessing: the operation is stuck (the
// provider lost its answer and the lock outlasts the window), so the client
// stops at the window's end, reads the trail, and says the outcome is open.
func TestStopsAtTheRetryWindowWithoutGuessing(t *testing.T) {
	h := apptest.New(t, func(c *apptest.Setup) { c.KeyRetention = 4 * time.Second })
	cust := h.NewCustomer(t)
	c, rec := newClient(t, h, cust.Token, t.TempDir())
	h.SetProvider(t, 0, "after_charge")

	_, err := c.PlaceOrder(context.Background(), "cart-1", mugs)
	if !errors.Is(err, client.ErrUnsettled) {
		t.Fatalf("got %v, want ErrUnsettled", err)
	}
	if got := rec.statuses(); len(got) == 0 || got[0] != 502 {
		t.Errorf("got attempts %v, want a 502 first", got)
	}
	if s := h.Stats(t); s.Orders != 0 {
		t.Errorf("got %d orders, want none", s.Orders)
	}
}

// TestNetworkErrorsAreRetried: a server that is not up yet when the client
// starts is retried (here for the policy read and the order), with the key
// saved before the first try; once it listens, the order goes through.
func TestNetworkErrorsAreRetried(t *testing.T) {
	h := apptest.New(t)
	cust := h.NewCustomer(t)
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close() // its address now refuses connections
	c, rec := newClient(t, h, cust.Token, t.TempDir())
	c.BaseURL = down.URL

	var once sync.Once
	c.Observe = func(e client.Event) {
		rec.observe(e)
		if e.Err != nil {
			once.Do(func() { c.BaseURL = h.URL }) // the server comes up
		}
	}
	o, err := c.PlaceOrder(context.Background(), "cart-1", mugs)
	if err != nil {
		t.Fatalf("place order: %v", err)
	}
	if rec.events[0].Err == nil {
		t.Errorf("got first event %+v, want a network error", rec.events[0])
	}
	if o.OrderID == "" {
		t.Errorf("got order %+v, want one", o)
	}
	h.WantStats(t, 1, 1)
}

// A card whose bank asks for 3-D Secure, with a ReturnURL: PlaceOrder says
// what the card holder must do (ActionRequiredError, the bank's page) and
// stores nothing final; once they have authenticated, PlaceOrder of the
// same operation sends the same key and gets the order. One charge.
func TestPlaceOrderThroughAuthentication(t *testing.T) {
	h := apptest.New(t, apptest.WithoutWebhooks)
	cust := h.NewCustomer(t)
	c, _ := newClient(t, h, cust.Token, t.TempDir())
	order := client.OrderRequest{Items: mugs.Items, Card: "4000002760003184", ReturnURL: "https://app.example/paid"}

	_, err := c.PlaceOrder(t.Context(), "3ds", order)
	var action *client.ActionRequiredError
	if !errors.As(err, &action) || !strings.HasPrefix(action.URL, h.ProviderURL+"/3ds/authenticate/") {
		t.Fatalf("got %v, want the bank's page to send the card holder to", err)
	}
	if _, err := c.PlaceOrder(t.Context(), "3ds", order); !errors.As(err, &action) {
		t.Fatalf("before the card holder authenticated: got %v, want the same action", err)
	}
	noRedirects := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirects.PostForm(action.URL, url.Values{"outcome": {"complete"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	placed, err := c.PlaceOrder(t.Context(), "3ds", order)
	if err != nil || placed.OrderID == "" {
		t.Fatalf("once authenticated: got %+v, %v, want the order", placed, err)
	}
	h.WantStats(t, 1, 1)
}
