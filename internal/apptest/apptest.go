// Package apptest starts the whole application on a fresh database behind a
// real HTTP server, for tests that exercise it the way clients do.
package apptest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"exactlyonce/fakestripe"
	"exactlyonce/internal/app"
	"exactlyonce/internal/catalog"
	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
	"exactlyonce/internal/pgtest"
	"exactlyonce/internal/problem"
	"exactlyonce/internal/stripetest"
	"exactlyonce/internal/tracing"
	"exactlyonce/internal/web"
)

// Harness is one running application.
type Harness struct {
	URL string
	App *app.App
	DB  *database.DB
	// Provider is the fake Stripe the shop pays through, served over HTTP
	// as Stripe is; tests set its faults and read its charges directly.
	// ProviderURL is its base URL (STRIPE_API_BASE).
	Provider    *fakestripe.Provider
	ProviderURL string
}

// Setup is what an Option may change before the application starts: its
// configuration, and the fake provider's options.
type Setup struct {
	app.Config
	// ProviderOptions are passed to the fake Stripe the harness starts.
	ProviderOptions []fakestripe.Option
}

// Option changes the application's configuration before it starts.
type Option func(*Setup)

// New starts the application on a database of its own and stops it when the
// test ends. Demo mode is on; logs go to stderr only when TEST_LOG is set.
//
// TEST_DB_QUERY_MODE, when set, is the pool's query exec mode
// (DB_QUERY_MODE's values), so that the whole suite can run in a mode the
// shop offers: make test/querymodes.
func New(tb testing.TB, opts ...Option) *Harness {
	tb.Helper()
	if mode := os.Getenv("TEST_DB_QUERY_MODE"); mode != "" {
		return NewInQueryMode(tb, mode, opts...)
	}
	return NewOnPool(tb, pgtest.NewPool(tb), opts...)
}

// NewInQueryMode is New with its pool in pgx's query exec mode named mode
// (DB_QUERY_MODE's values: exec and simple_protocol send every parameter
// as text, typed from its Go type, as PgBouncer setups may).
func NewInQueryMode(tb testing.TB, mode string, opts ...Option) *Harness {
	tb.Helper()
	pool, err := database.OpenWith(tb.Context(), pgtest.NewDatabase(tb), database.PoolOptions{QueryMode: mode})
	if err != nil {
		tb.Fatalf("open pool in query mode %q: %v", mode, err)
	}
	tb.Cleanup(pool.Close)
	return NewOnPool(tb, pool, opts...)
}

// DefaultTracing is the tracing `web` runs with by default: every trace
// sampled, kept in memory, exported nowhere. A Harness has it unless an
// option sets another.
func DefaultTracing() tracing.Config {
	return tracing.Config{SampleRatio: 1, RecentBytes: tracing.DefaultRecentBytes}
}

// NewTraced is New traced as `web` is: the tracing made from cfg (such as
// DefaultTracing, with a test's span recorder among its Processors) both
// for the application and for a pool of its own database whose statements
// are spans too, so that a trace shows them under the phases that sent
// them. The pool is closed when the test ends.
func NewTraced(tb testing.TB, cfg tracing.Config, opts ...Option) *Harness {
	tb.Helper()
	tr, err := tracing.New(tb.Context(), cfg)
	if err != nil {
		tb.Fatalf("tracing: %v", err)
	}
	pool, err := database.OpenWith(tb.Context(), pgtest.NewDatabase(tb), database.PoolOptions{Tracing: tr.Provider})
	if err != nil {
		tb.Fatalf("open traced pool: %v", err)
	}
	tb.Cleanup(pool.Close)
	opts = append(opts[:len(opts):len(opts)], func(c *Setup) { c.Tracing = tr })
	return NewOnPool(tb, pool, opts...)
}

// NewOnPool is New on a database the test already has, such as one another
// Harness used: a second process, or the same one restarted.
func NewOnPool(tb testing.TB, pool *pgxpool.Pool, opts ...Option) *Harness {
	tb.Helper()
	d := database.New(pool)
	if err := catalog.Seed(context.Background(), d.Queries); err != nil {
		tb.Fatalf("seed catalog: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("listen: %v", err)
	}
	setup := Setup{Config: app.Config{
		BaseURL:         "http://" + ln.Addr().String(),
		LockTimeout:     30 * time.Second,
		ProviderTimeout: 5 * time.Second,
		Log:             testLogger(),
		// Tests send far more than a person would, from one address:
		// the write limits are lifted, but for the tests of the limits
		// themselves (which set their own).
		WriteLimits: Unlimited,
	}}
	for _, opt := range opts {
		opt(&setup)
	}
	cfg := setup.Config
	// The fake Stripe keeps its state in a schema of its own on the test's
	// database, through a pool of its own, so that two shops on one
	// database (two processes, or one restarted) see one provider; the shop
	// reaches it only over HTTP, as it reaches Stripe.
	var fake *stripetest.Server
	if cfg.StripeAPIBase == "" {
		// It sends its webhooks to this shop, signed with the shop's
		// secret (an option's, or one made here), unless an option says
		// otherwise (WithoutWebhooks comes after this).
		if cfg.StripeWebhookSecret == "" {
			cfg.StripeWebhookSecret = "whsec_test_" + rand.Text()
		}
		hooks := fakestripe.WithWebhooks(cfg.BaseURL+"/webhooks/stripe", cfg.StripeWebhookSecret)
		fake = stripetest.StartOn(tb, pool, append([]fakestripe.Option{hooks}, setup.ProviderOptions...)...)
		cfg.StripeAPIBase, cfg.StripeSecretKey = fake.URL, stripetest.Secret
	}
	if cfg.Tracing == nil {
		tr, err := tracing.New(context.Background(), DefaultTracing())
		if err != nil {
			tb.Fatalf("tracing: %v", err)
		}
		cfg.Tracing = tr
	}
	a := app.New(pool, cfg)
	srv := httptest.NewUnstartedServer(a.Handler())
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	tb.Cleanup(srv.Close)
	h := &Harness{URL: srv.URL, App: a, DB: d, ProviderURL: cfg.StripeAPIBase}
	if fake != nil {
		h.Provider = fake.Provider
	}
	// Every test, whatever it does, must end with no charge that a lost
	// finish left without an order. (Cleanups run last first: the server
	// is still up.)
	tb.Cleanup(func() {
		if n := h.Metric(tb, "exactlyonce_orphan_charges_total"); n != 0 {
			tb.Errorf("got %v orphan charges at the end of the test, want 0: a charge was left without an order", n)
		}
	})
	return h
}

// WithoutWebhooks is an option of New: the fake Stripe sends no
// webhooks, as when they never arrive. The reconciler's tests use it: the
// webhook handler would otherwise do what they watch the reconciler do, at
// a moment of the delivery's own choosing.
func WithoutWebhooks(s *Setup) {
	s.ProviderOptions = append(s.ProviderOptions, fakestripe.WithWebhooks("", ""))
}

// WithProvider is an option of New: the fake Stripe gets opts too (such as
// fakestripe.WithBeforeCharge).
func WithProvider(opts ...fakestripe.Option) Option {
	return func(s *Setup) { s.ProviderOptions = append(s.ProviderOptions, opts...) }
}

func testLogger() *slog.Logger {
	if os.Getenv("TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.DiscardHandler)
}

// Unlimited are write limits no test reaches (web.WriteLimits).
var Unlimited = web.WriteLimits{
	PerCustomerPerMinute: 1e6, PerCustomerBurst: 1e6, PerAddressPerMinute: 1e6, PerAddressBurst: 1e6,
	DeclinesPerHour: 1e6, DeclineBurst: 1e6, InFlight: 1e6, AddressInFlight: 1e6,
}

// Response is an HTTP response read whole.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v, failing the test if it is not JSON.
func (r Response) JSON(tb testing.TB, v any) {
	tb.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		tb.Fatalf("decode %d response %q: %v", r.Status, r.Body, err)
	}
}

// Do sends a request and reads the response. headers alternate name, value.
func (h *Harness) Do(tb testing.TB, method, path, body string, headers ...string) Response {
	tb.Helper()
	var rd io.Reader
	if body != "" {
		rd = bytes.NewBufferString(body)
	}
	req, err := http.NewRequest(method, h.URL+path, rd)
	if err != nil {
		tb.Fatalf("new request: %v", err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		// Not Fatalf: Do is called from goroutines in concurrency tests.
		tb.Errorf("%s %s: %v", method, path, err)
		return Response{}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Errorf("read %s %s: %v", method, path, err)
	}
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// Customer is a registered API customer.
type Customer struct {
	ID    uuid.UUID
	Token string
}

// NewCustomer registers a customer through the API.
func (h *Harness) NewCustomer(tb testing.TB) Customer {
	tb.Helper()
	r := h.Do(tb, http.MethodPost, "/api/customers", `{"name":"test"}`)
	if r.Status != http.StatusCreated {
		tb.Fatalf("create customer: got %d %s, want 201", r.Status, r.Body)
	}
	var out struct {
		ID    uuid.UUID `json:"id"`
		Token string    `json:"token"`
	}
	r.JSON(tb, &out)
	return Customer{ID: out.ID, Token: out.Token}
}

// PlaceOrder posts an order body with an Idempotency-Key (omitted when key is "").
func (h *Harness) PlaceOrder(tb testing.TB, c Customer, key, body string) Response {
	tb.Helper()
	headers := []string{"Authorization", "Bearer " + c.Token}
	if key != "" {
		headers = append(headers, "Idempotency-Key", key)
	}
	return h.Do(tb, http.MethodPost, "/api/orders", body, headers...)
}

// SetProvider sets the fake provider's fault for the following charges.
func (h *Harness) SetProvider(tb testing.TB, delay time.Duration, fail string) {
	tb.Helper()
	f, err := fakestripe.ParseFault(fail)
	if err != nil {
		tb.Fatal(err)
	}
	if err := h.Provider.SetBehaviour(fakestripe.Behaviour{Delay: delay, Fail: f}); err != nil {
		tb.Fatalf("set provider: %v", err)
	}
}

// WithDemo is an option of New: the shop with d mounted (the double-click
// lab, as demo/cmd/demo serves it).
func WithDemo(d app.Demo) Option {
	return func(s *Setup) { s.Demo = d }
}

// Stats are the shop's totals from its database, and the charges
// (succeeded PaymentIntents) from the fake's.
type Stats struct {
	db.TotalsRow
	Charges int64
}

// Stats reads the totals straight from the databases.
func (h *Harness) Stats(tb testing.TB) Stats {
	tb.Helper()
	s, err := h.DB.Totals(context.Background())
	if err != nil {
		tb.Fatalf("stats: %v", err)
	}
	charges, err := h.Provider.Succeeded(context.Background())
	if err != nil {
		tb.Fatalf("stats: %v", err)
	}
	return Stats{TotalsRow: s, Charges: charges}
}

// WantStats fails the test unless there are exactly charges and orders.
func (h *Harness) WantStats(tb testing.TB, charges, orders int64) {
	tb.Helper()
	s := h.Stats(tb)
	if s.Charges != charges || s.Orders != orders {
		tb.Errorf("got %d charges and %d orders, want %d and %d", s.Charges, s.Orders, charges, orders)
	}
}

// WaitLockExpired waits until the database clock says the key's lock has
// expired. It polls the condition itself rather than sleeping a guess.
func (h *Harness) WaitLockExpired(tb testing.TB, c Customer, key string) {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		k, err := h.DB.GetKey(context.Background(), db.GetKeyParams{CustomerID: c.ID, Key: key})
		if err != nil {
			tb.Fatalf("get key: %v", err)
		}
		if k.LockRemaining <= 0 {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("lock of key %q still held after 30s", key)
		}
		time.Sleep(min(k.LockRemaining, 50*time.Millisecond))
	}
}

// WantProblem fails unless r is a problem+json body of kind's status and
// type, and returns the problem.
func WantProblem(tb testing.TB, r Response, kind problem.Kind) problem.Problem {
	tb.Helper()
	if r.Status != kind.Status {
		tb.Fatalf("got status %d %s, want %d", r.Status, r.Body, kind.Status)
	}
	if ct := r.Header.Get("Content-Type"); ct != problem.ContentType {
		tb.Errorf("got Content-Type %q, want %q", ct, problem.ContentType)
	}
	var p problem.Problem
	r.JSON(tb, &p)
	if want := "/problems/" + kind.Slug; p.Type != want || p.Status != kind.Status || p.Title == "" {
		tb.Errorf("got problem %+v, want type %s and status %d", p, want, kind.Status)
	}
	return p
}

// WantNothingStored fails unless no key, charge or order is stored.
func (h *Harness) WantNothingStored(tb testing.TB) {
	tb.Helper()
	if s := h.Stats(tb); s.KeysStarted+s.KeysFinished+s.Charges+s.Orders != 0 {
		tb.Errorf("got %+v, want nothing stored", s)
	}
}
