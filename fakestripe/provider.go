// Package fakestripe is a stand-in for the part of Stripe's API the shop
// uses, served as a program of its own (cmd/fakestripe) on a database of
// its own, so that the demo, the tests and the bench need no account at
// Stripe, and spoken to by Stripe's own Go SDK exactly as
// Stripe is: form-encoded requests, Stripe's error objects and Request-Id,
// Idempotency-Key with Stripe's semantics (a replay answers the first
// answer with Idempotent-Replayed; the same key with other parameters is a
// 400 idempotency_error; a key in use by a concurrent request is a 409 with
// Stripe-Should-Retry), PaymentIntents (create, confirm, retrieve, cancel by
// id, list with starting_after and has_more), refunds (partial or of what
// is left, any number per intent, never more than it charged; retrieve and
// list), the test payment
// methods (pm_card_visa, pm_card_chargeDeclined, pm_card_authenticationRequired,
// which leaves the intent requires_action, and the fake's own
// pm_card_processing, which leaves it processing; cards.go) and signed webhooks
// (webhooks.go). It keeps its state in PostgreSQL, in a schema of its own
// with migrations of its own (Migrate), so it outlives a crash of the shop
// (New); for load tests it can keep it in memory instead (NewInMemory,
// store.go), answering the same.
//
// Injected faults and delays (Behaviour) lose answers on purpose, which is
// what the shop is built to survive. They apply to the calls that charge:
// a confirm, or a create with confirm=true; refunds meet faults of their
// own, only when Behaviour.Refunds asks for them. A fault stands for an answer
// lost on the way back (a proxy's 500, a timeout), not for Stripe's own
// 500, which Stripe would replay to every retry of the key.
package fakestripe

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"math/rand/v2"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"
)

// Provider serves the API. Its handlers are safe for concurrent use.
type Provider struct {
	store store
	log   *slog.Logger
	// secretSum is the SHA-256 of the secret key: comparing fixed-length
	// digests keeps the comparison constant-time even in the key's length.
	secretSum [sha256.Size]byte
	noSecret  bool
	// beforeCharge, when set, runs just before a confirm decides its
	// outcome (see WithBeforeCharge).
	beforeCharge func(ctx context.Context, intentID string)
	// draw returns a uniform number in [0, 1) for the fault rates.
	draw func() float64

	hooks *webhooks

	mu        sync.Mutex
	behaviour Behaviour
}

// New returns a provider that keeps its state in db, whose fake schema
// Migrate has applied, and accepts requests bearing secret (Stripe's secret
// key, sent as a bearer token by the SDK). An empty secret refuses every
// request rather than accepting an empty key. Close stops its webhook
// deliveries.
func New(pool *pgxpool.Pool, secret string, opts ...Option) *Provider {
	return newProvider(postgresStore{pool}, secret, opts)
}

// NewInMemory returns a provider as New does, that keeps its state in
// memory instead: for load tests (FAKE_PROVIDER_STORE=memory), where the
// fake's own database work would be counted as the shop's. It answers as
// the database-backed provider does, but loses everything when its
// process ends, and never frees what it holds: never for a fake that must
// survive a restart (the chaos runs, `make run`).
func NewInMemory(secret string, opts ...Option) *Provider {
	return newProvider(newMemoryStore(), secret, opts)
}

func newProvider(st store, secret string, opts []Option) *Provider {
	p := &Provider{
		store:     st,
		log:       slog.Default(),
		secretSum: sha256.Sum256([]byte(secret)),
		noSecret:  secret == "",
		behaviour: Behaviour{Fail: FaultNone},
		draw:      rand.Float64,
	}
	p.hooks = newWebhooks(p)
	for _, opt := range opts {
		opt(p)
	}
	return p
}

// Close stops the webhook deliveries in flight and waits for them.
func (p *Provider) Close() { p.hooks.close() }

// Option configures a Provider.
type Option func(*Provider)

// WithLogger makes the provider log to log instead of slog.Default().
func WithLogger(log *slog.Logger) Option {
	return func(p *Provider) { p.log = log }
}

// WithBeforeCharge makes every confirm run hook, with the PaymentIntent's
// id, after its delay and fault and just before it decides the outcome.
// Tests block in it to make a confirm that has reached the provider land
// later, as a provider that processes a request after its client has given
// up does.
func WithBeforeCharge(hook func(ctx context.Context, intentID string)) Option {
	return func(p *Provider) { p.beforeCharge = hook }
}

// WithDraw makes the provider draw the fault rates' random numbers from draw,
// which must return numbers in [0, 1); tests pass a fixed sequence.
func WithDraw(draw func() float64) Option {
	return func(p *Provider) { p.draw = draw }
}

// WithWebhooks makes the provider send its events to url, signed with
// secret as Stripe signs them (Stripe-Signature: t=…,v1=HMAC-SHA256).
func WithWebhooks(url, secret string) Option {
	return func(p *Provider) { p.hooks.url, p.hooks.secret = url, secret }
}

// Register mounts the API on g, which must be e.Group("/v1") at the root
// of a server: the SDK sends every path from /v1 on its backend URL
// (STRIPE_API_BASE), and accepts no prefix before it. Errors from these
// routes are answered as Stripe answers them, not by the shop's error
// handler.
func (p *Provider) Register(g *echo.Group) {
	g.Use(p.renderErrors, p.authenticate)
	g.POST("/payment_intents", p.createIntent)
	g.GET("/payment_intents", p.listIntents)
	g.GET("/payment_intents/:id", p.retrieveIntent)
	g.POST("/payment_intents/:id/confirm", p.confirmIntent)
	g.POST("/payment_intents/:id/cancel", p.cancelIntent)
	g.POST("/refunds", p.createRefund)
	g.GET("/refunds", p.listRefunds)
	g.GET("/refunds/:id", p.retrieveRefund)
}
