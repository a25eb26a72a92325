package app_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"

	"exactlyonce/internal/app"
	"exactlyonce/internal/apptest"
	"exactlyonce/internal/catalog"
	"exactlyonce/internal/database"
	"exactlyonce/internal/pgtest"
	"exactlyonce/internal/problem"
)

const oneMug = `{"items": [{"sku": "mug-espresso", "quantity": 1}]}`

// server is an App run by Serve, as cmd/web runs it.
type server struct {
	*apptest.Harness
	stop   context.CancelFunc
	served chan error
	// charging is closed when the fake provider receives a charge: from
	// then on the order is in flight at the provider.
	charging chan struct{}
}

func serve(t *testing.T, pool *pgxpool.Pool, grace time.Duration) *server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := app.New(pool, app.Config{
		// A lock renewed every 2 s is never missed on a loaded machine, so
		// the completer below cannot take the order over while it runs.
		BaseURL: "http://" + ln.Addr().String(), LockTimeout: 6 * time.Second, ProviderTimeout: 30 * time.Second,
		Demo: true, Log: slog.New(slog.DiscardHandler),
		// Running, so that Serve has workers to stop; a pass finds nothing
		// to do while the key is locked.
		CompleterInterval: 10 * time.Millisecond, SweepInterval: 10 * time.Millisecond,
	})
	s := &server{
		Harness: &apptest.Harness{URL: "http://" + ln.Addr().String(), App: a, DB: database.New(pool)},
		served:  make(chan error, 1), charging: make(chan struct{}),
	}
	a.Echo.Pre(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if c.Request().Method == http.MethodPost && c.Request().URL.Path == "/provider/v1/charges" {
				close(s.charging)
			}
			return next(c)
		}
	})
	ctx, stop := context.WithCancel(context.Background())
	s.stop = stop
	go func() { s.served <- a.Serve(ctx, ln, grace) }()
	t.Cleanup(func() {
		stop()
		<-s.served
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
	s := serve(t, newPool(t), 20*time.Second)
	c := s.NewCustomer(t)
	s.SetProvider(t, 500*time.Millisecond, "none")

	replied := make(chan apptest.Response)
	go func() { replied <- s.PlaceOrder(t, c, "k", oneMug) }()
	<-s.charging
	s.shutDown(t)

	if r := <-replied; r.Status != http.StatusCreated {
		t.Errorf("in-flight order: got %d %s, want 201", r.Status, r.Body)
	}
	if _, err := http.Get(s.URL + "/healthz"); err == nil {
		t.Error("the server still accepts connections after shutdown")
	}
	s.WantStats(t, 1, 1)
}

func TestShutdownCutsOffRequestAfterGrace(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	s := serve(t, pool, 200*time.Millisecond)
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

	// The next process resolves it: here a retry, after the lock expired.
	restarted := apptest.NewOnPool(t, pool, func(cfg *app.Config) { cfg.LockTimeout = time.Second })
	restarted.WaitLockExpired(t, c, "k")
	if r := restarted.PlaceOrder(t, c, "k", oneMug); r.Status != http.StatusCreated {
		t.Errorf("retry after restart: got %d %s, want 201", r.Status, r.Body)
	}
	restarted.WantStats(t, 1, 1)
}
