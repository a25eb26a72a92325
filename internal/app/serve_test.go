package app_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"exactlyonce/internal/app"
	"exactlyonce/internal/apptest"
	"exactlyonce/internal/catalog"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/database"
	"exactlyonce/internal/pgtest"
	"exactlyonce/internal/problem"
	"exactlyonce/internal/stripetest"
)

const oneMug = `{"items": [{"sku": "mug-espresso", "quantity": 1}]}`

// server is an App run by Serve, as cmd/web runs it, paying through the
// fake Stripe on a server of its own.
type server struct {
	*apptest.Harness
	stop   context.CancelFunc
	served chan error
	// charging is closed when the first attempt is about to call the
	// provider: from then on the order is in flight.
	charging chan struct{}
}

// serve runs an App. When hold is not nil, the attempt about to call the
// provider waits for it to be closed.
func serve(t *testing.T, pool *pgxpool.Pool, grace time.Duration, hold chan struct{}) *server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// The fake Stripe is a server of its own, as in production, so that
	// it outlives the shop's listener at shutdown.
	fake := stripetest.StartOn(t, pool)
	charging := make(chan struct{})
	var once sync.Once
	a := app.New(pool, app.Config{
		// A lock renewed every 2 s is never missed on a loaded machine, so
		// the completer below cannot take the order over while it runs.
		BaseURL: "http://" + ln.Addr().String(), LockTimeout: 6 * time.Second, ProviderTimeout: 30 * time.Second,
		Log: slog.New(slog.DiscardHandler),
		// Running, so that Serve has workers to stop; a pass finds nothing
		// to do while the key is locked, nor, within the grace, once an
		// abandoned attempt handed its key back for the client's retry.
		CompleterInterval: 10 * time.Millisecond, SweepInterval: 10 * time.Millisecond, CompleterGrace: time.Hour,
		StripeAPIBase: fake.URL, StripeSecretKey: stripetest.Secret,
		Hooks: checkout.Hooks{BeforeCharge: func(context.Context, checkout.Claimed) {
			once.Do(func() { close(charging) })
			if hold != nil {
				<-hold
			}
		}},
	})
	s := &server{
		Harness: &apptest.Harness{URL: "http://" + ln.Addr().String(), App: a, DB: database.New(pool), Provider: fake.Provider},
		served:  make(chan error, 1), charging: charging,
	}
	ctx, stop := context.WithCancel(context.Background())
	s.stop = stop
	go func() { s.served <- a.Serve(ctx, ln, grace) }()
	t.Cleanup(func() {
		stop()
		if err := <-s.served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return s
}

func newPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	pool := pgtest.NewPool(t)
	if err := catalog.Seed(context.Background(), database.New(pool).Queries); err != nil {
		t.Fatal(err)
	}
	return pool
}

// shutDown stops s as SIGTERM does and waits for Serve to return.
func (s *server) shutDown(t *testing.T) {
	t.Helper()
	s.stop()
	select {
	case err := <-s.served:
		if err != nil {
			t.Errorf("serve: %v", err)
		}
		s.served <- nil // for the cleanup
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return after shutdown")
	}
}

func TestShutdownLetsRequestInFlightFinish(t *testing.T) {
	t.Parallel()
	s := serve(t, newPool(t), 20*time.Second, nil)
	c := s.NewCustomer(t)
	s.SetProvider(t, 500*time.Millisecond, "none")

	replied := make(chan apptest.Response)
	go func() { replied <- s.PlaceOrder(t, c, "k", oneMug) }()
	<-s.charging
	s.shutDown(t)

	if r := <-replied; r.Status != http.StatusCreated {
		t.Errorf("in-flight order: got %d %s, want 201", r.Status, r.Body)
	}
	if resp, err := http.Get(s.URL + "/healthz"); err == nil {
		resp.Body.Close()
		t.Error("the server still accepts connections after shutdown")
	}
	s.WantStats(t, 1, 1)
}

func TestShutdownCutsOffRequestAfterGrace(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	s := serve(t, pool, 200*time.Millisecond, nil)
	c := s.NewCustomer(t)
	s.SetProvider(t, 50*time.Second, "none")

	replied := make(chan apptest.Response)
	go func() { replied <- s.PlaceOrder(t, c, "k", oneMug) }()
	<-s.charging
	s.shutDown(t)

	// Cut off where it was: told to retry, nothing charged, key started.
	r := <-replied
	if r.Status != problem.ShuttingDown.Status || r.Header.Get("Retry-After") == "" {
		t.Errorf("cut-off order: got %d (Retry-After %q) %s, want 503 with Retry-After", r.Status, r.Header.Get("Retry-After"), r.Body)
	}
	if k := s.Key(t, c, "k"); k.Status != "started" {
		t.Errorf("got key status %s, want started", k.Status)
	}
	s.WantStats(t, 0, 0)

	// The next process resolves it: here a retry, at once, since the
	// abandoned attempt handed its key back.
	restarted := apptest.NewOnPool(t, pool, func(cfg *apptest.Setup) { cfg.LockTimeout = time.Second })
	restarted.WaitLockExpired(t, c, "k")
	if r := restarted.PlaceOrder(t, c, "k", oneMug); r.Status != http.StatusCreated {
		t.Errorf("retry after restart: got %d %s, want 201", r.Status, r.Body)
	}
	restarted.WantStats(t, 1, 1)
}

// TestShutdownKeepsProviderForOrdersInFlight holds an order just before its
// provider call until the shop's listener is closed by the shutdown, then
// lets it call: the provider, a server of its own as in production, still
// answers, and the order is placed.
func TestShutdownKeepsProviderForOrdersInFlight(t *testing.T) {
	t.Parallel()
	hold := make(chan struct{})
	s := serve(t, newPool(t), 20*time.Second, hold)
	c := s.NewCustomer(t)

	replied := make(chan apptest.Response)
	go func() { replied <- s.PlaceOrder(t, c, "k", oneMug) }()
	<-s.charging
	s.stop()
	waitRefused(t, s.URL)
	close(hold)

	if r := <-replied; r.Status != http.StatusCreated {
		t.Errorf("order in flight at shutdown: got %d %s, want 201", r.Status, r.Body)
	}
	s.shutDown(t)
	s.WantStats(t, 1, 1)
}

// waitRefused waits until the server at base accepts no more connections.
func waitRefused(t *testing.T, base string) {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := net.Dial("tcp", u.Host)
		if err != nil {
			return
		}
		conn.Close()
		if time.Now().After(deadline) {
			t.Fatal("the shop still accepts connections 10 s after shutdown began")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
