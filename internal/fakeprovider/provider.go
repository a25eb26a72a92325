// Package fakeprovider is a stand-in for a card payment provider such as
// Stripe, served by the web binary itself so that the demo needs nothing
// outside it. Like a real provider it honours idempotency keys (one charge per
// key, replayed on every retry) and keeps its charges in Postgres, so they
// outlive a crash of the web process. Injected faults (see Behaviour) lose
// responses on purpose, which is what the rest of the application is built to
// survive.
package fakeprovider

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"math/rand/v2"
	"sync"

	"github.com/labstack/echo/v4"

	"exactlyonce/internal/database"
	"exactlyonce/internal/fakeprovider/providerdb"
)

// Provider serves the charges API. Its handlers are safe for concurrent use.
type Provider struct {
	db  *database.DB
	q   *providerdb.Queries // the provider's own queries (provider.sql)
	log *slog.Logger
	// secretSum is the SHA-256 of the bearer secret: comparing fixed-length
	// digests keeps the comparison constant-time even in the secret's length.
	secretSum [sha256.Size]byte
	noSecret  bool

	// beforeRecord, when set, runs just before a create-charge call
	// records its outcome (see WithBeforeRecord).
	beforeRecord func(ctx context.Context, idempotencyKey string)
	// draw returns a uniform number in [0, 1) for the fault rates.
	draw func() float64

	mu        sync.Mutex
	behaviour Behaviour
}

// New returns a provider that keeps its charges in db and accepts requests
// bearing secret. An empty secret refuses every request rather than accepting
// an empty bearer token.
func New(db *database.DB, secret string, opts ...Option) *Provider {
	p := &Provider{
		db:        db,
		log:       slog.Default(),
		secretSum: sha256.Sum256([]byte(secret)),
		noSecret:  secret == "",
		behaviour: Behaviour{Fail: FaultNone},
		draw:      rand.Float64,
	}
	if db != nil { // tests of the behaviour controls need no database
		p.q = providerdb.New(db.Conn())
	}
	for _, opt := range opts {
		opt(p)
	}
	return p
}

// Option configures a Provider.
type Option func(*Provider)

// WithLogger makes the provider log to log instead of slog.Default().
func WithLogger(log *slog.Logger) Option {
	return func(p *Provider) { p.log = log }
}

// WithBeforeRecord makes every create-charge call run hook, with the call's
// idempotency key, after its delay and fault and just before it records the
// charge. Tests block in it to make a call that has reached the provider
// land later, as a provider that processes a request after its client has
// given up does.
func WithBeforeRecord(hook func(ctx context.Context, idempotencyKey string)) Option {
	return func(p *Provider) { p.beforeRecord = hook }
}

// WithDraw makes the provider draw the fault rates' random numbers from draw,
// which must return numbers in [0, 1); tests pass a fixed sequence.
func WithDraw(draw func() float64) Option {
	return func(p *Provider) { p.draw = draw }
}

// Register mounts the API on g, typically e.Group("/provider"). Errors from
// these routes are answered in the provider's own error shape, not by the
// application's error handler.
func (p *Provider) Register(g *echo.Group) {
	g.Use(p.renderErrors, p.authenticate)
	g.POST("/v1/charges", p.createCharge)
	g.GET("/v1/charges", p.listOrFind)
	g.POST("/v1/charges/cancel", p.cancelByKey)
	g.GET("/v1/charges/:id", p.chargeByID)
	g.POST("/v1/refunds", p.createRefund)
}

// ChargeByKey returns the charge made under an idempotency key, for the
// lab and tests that check what the provider recorded.
func (p *Provider) ChargeByKey(ctx context.Context, key string) (providerdb.ProviderCharge, error) {
	return p.q.ProviderChargeByKey(ctx, key)
}
