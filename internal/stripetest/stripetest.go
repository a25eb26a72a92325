// Package stripetest starts the fake Stripe for tests: on a database of its
// own (pgtest), migrated by the fake itself, served over real HTTP, with a
// payment client pointed at it through the SDK.
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
	e := echo.New()
	p.Mount(e)
	srv := httptest.NewServer(e)
	tb.Cleanup(func() {
		srv.Close()
		p.Close() // its webhook deliveries, after the server
		own.Close()
	})
	return &Server{Provider: p, Pool: own, DB: database.New(own), URL: srv.URL}
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
