// Package stripetest starts the fake Stripe for tests: on a database of its
// own (pgtest), migrated by the fake itself, or in memory, served over real
// HTTP, with a payment client pointed at it through the SDK.
package stripetest

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"

	"exactlyonce/fakestripe"
	"exactlyonce/internal/database"
	"exactlyonce/internal/payment"
	"exactlyonce/internal/pgtest"
)

// Secret is the fake's secret key in tests.
const Secret = "sk_test_fake_0123456789"

// Server is a fake Stripe served for one test.
type Server struct {
	*fakestripe.Provider
	// Pool and DB are the fake's database; nil with the memory store.
	Pool *pgxpool.Pool
	DB   *database.DB
	// URL is the API base, STRIPE_API_BASE.
	URL string
}

// Start serves a fake Stripe until the test ends. Its state lives in a new
// database (the shop's schema is there too, unused), unless pool is given.
func Start(tb testing.TB, opts ...fakestripe.Option) *Server {
	tb.Helper()
	return StartOn(tb, pgtest.NewPool(tb), opts...)
}

// StartOn is Start on the database of pool, through a pool of its own: the
// fake keeps its state in a schema of its own there, so that the shops of
// a test on one database (two processes, or one restarted) see one
// provider, and the shop reaches it only over HTTP, as it reaches Stripe.
func StartOn(tb testing.TB, pool *pgxpool.Pool, opts ...fakestripe.Option) *Server {
	tb.Helper()
	own, err := pgxpool.New(context.Background(), pool.Config().ConnString())
	if err != nil {
		tb.Fatalf("open the fake's pool: %v", err)
	}
	if err := fakestripe.Migrate(context.Background(), own); err != nil {
		own.Close()
		tb.Fatalf("migrate the fake: %v", err)
	}
	p := fakestripe.New(own, Secret, append([]fakestripe.Option{fakestripe.WithLogger(slog.New(slog.DiscardHandler))}, opts...)...)
	srv := serve(tb, p, own.Close)
	srv.Pool, srv.DB = own, database.New(own)
	return srv
}

// serve serves p over HTTP until the test ends, then stops it and runs
// closeStore.
func serve(tb testing.TB, p *fakestripe.Provider, closeStore func()) *Server {
	e := echo.New()
	p.Mount(e)
	srv := httptest.NewServer(e)
	tb.Cleanup(func() {
		srv.Close()
		p.Close() // its webhook deliveries, after the server
		closeStore()
	})
	return &Server{Provider: p, URL: srv.URL}
}

// Store is one of the fake's stores (FAKE_PROVIDER_STORE).
type Store string

// The fake's stores.
const (
	Postgres Store = "postgres"
	Memory   Store = "memory"
)

// Stores are the fake's stores, which must answer alike.
var Stores = []Store{Postgres, Memory}

// EachStore runs test as a parallel subtest, named for the store, against
// each of the fake's stores: what the shop relies on holds in both.
func EachStore(t *testing.T, test func(t *testing.T, store Store)) {
	t.Helper()
	for _, st := range Stores {
		t.Run(string(st), func(t *testing.T) {
			t.Parallel()
			test(t, st)
		})
	}
}

// Start serves a fake Stripe with this store until the test ends: Postgres
// is the package's Start; Memory needs no database.
func (st Store) Start(tb testing.TB, opts ...fakestripe.Option) *Server {
	tb.Helper()
	if st == Postgres {
		return Start(tb, opts...)
	}
	p := fakestripe.NewInMemory(Secret, append([]fakestripe.Option{fakestripe.WithLogger(slog.New(slog.DiscardHandler))}, opts...)...)
	return serve(tb, p, func() {})
}

// Client returns a payment client of the fake whose requests time out
// after timeout (none if zero).
func (s *Server) Client(timeout time.Duration) *payment.Client {
	return payment.NewClient(payment.Config{SecretKey: Secret, APIBase: s.URL, Timeout: timeout})
}

// SetBehaviour sets the fake's behaviour or fails the test.
func (s *Server) SetBehaviour(tb testing.TB, b fakestripe.Behaviour) {
	tb.Helper()
	if err := s.Provider.SetBehaviour(b); err != nil {
		tb.Fatalf("SetBehaviour(%+v): %v", b, err)
	}
}
