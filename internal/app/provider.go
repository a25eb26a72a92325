package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"exactlyonce/internal/database"
	"exactlyonce/internal/fakestripe"
	"exactlyonce/internal/payment"
	"exactlyonce/internal/tracing"
)

// paymentProvider returns the client the engine pays through and, when the
// fake Stripe runs in this process, the fake itself (nil otherwise), with
// the webhook secret the shop verifies. The in-process fake keeps its state
// in its own schema of the shop's database (fakestripe.Migrate, applied
// before New), and sends its webhooks to this server. The client writes
// deployment, this database's marker, on every intent it creates.
func paymentProvider(d *database.DB, cfg Config, deployment string) (*fakestripe.Provider, *payment.Client, string) {
	tp := cfg.Tracing.Provider
	if cfg.StripeAPIBase != "" {
		return nil, payment.NewClient(payment.Config{SecretKey: cfg.StripeSecretKey, APIBase: cfg.StripeAPIBase,
			Timeout: cfg.ProviderTimeout, MaxNetworkRetries: payment.NetworkRetries, Deployment: deployment,
			Tracing: tp}), cfg.StripeWebhookSecret
	}
	// The fake and its client share a secret key made fresh for each
	// process, and so the webhook secret unless one is given: nothing
	// outside this process needs to know them.
	secret := randomSecret()
	hookSecret := cfg.StripeWebhookSecret
	if hookSecret == "" {
		hookSecret = "whsec_" + randomSecret()
	}
	opts := []fakestripe.Option{fakestripe.WithLogger(cfg.Log), fakestripe.WithWebhooks(cfg.BaseURL+"/webhooks/stripe", hookSecret)}
	provider := fakestripe.New(d, secret, append(opts, cfg.ProviderOptions...)...)
	base := cfg.BaseURL
	if cfg.ProviderListener != nil {
		base = "http://" + cfg.ProviderListener.Addr().String()
	}
	return provider, payment.NewClient(payment.Config{SecretKey: secret, APIBase: base, Timeout: cfg.ProviderTimeout,
		MaxNetworkRetries: payment.NetworkRetries, Deployment: deployment, Tracing: tp}), hookSecret
}

// newProviderEcho serves a fake's API under /v1, at the root as the SDK
// wants it, and nothing else. Each call joins the caller's trace (the
// shop's client span, by its traceparent header), as a server span named
// for its route.
func newProviderEcho(p *fakestripe.Provider) *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Use(tracing.Route(nil), middleware.Recover())
	p.Register(e.Group("/v1"))
	return e
}

// ProviderConfig is what NewProvider needs beyond the pool.
type ProviderConfig struct {
	// Secret is the secret key the shops send (STRIPE_SECRET_KEY).
	Secret string
	// WebhookURL and WebhookSecret are where the fake sends its signed
	// webhooks (STRIPE_WEBHOOK_URL, STRIPE_WEBHOOK_SECRET); none without a
	// URL.
	WebhookURL, WebhookSecret string
	// Demo mounts the fault control under /provider/demo.
	Demo bool
	Log  *slog.Logger
	// Tracing makes the provider's calls spans of its callers' traces, and
	// its statements spans of those; nil makes none.
	Tracing *tracing.Tracing
}

// NewProvider builds the fake Stripe as a process of its own, for `web
// provider`: its API under /v1, and with Demo its fault control at
// /provider/demo/behaviour (see fakestripe.RegisterDemo). It applies the
// fake's migrations to the database of pool. Close the provider when done.
func NewProvider(ctx context.Context, pool *pgxpool.Pool, cfg ProviderConfig) (http.Handler, *fakestripe.Provider, error) {
	if cfg.Tracing == nil {
		cfg.Tracing = tracing.Off()
	}
	if cfg.Secret == "" {
		return nil, nil, errors.New("STRIPE_SECRET_KEY is not set: the fake and the shops that call it need the same key")
	}
	if err := fakestripe.Migrate(ctx, pool); err != nil {
		return nil, nil, err
	}
	opts := []fakestripe.Option{fakestripe.WithLogger(cfg.Log)}
	if cfg.WebhookURL != "" {
		opts = append(opts, fakestripe.WithWebhooks(cfg.WebhookURL, cfg.WebhookSecret))
	}
	p := fakestripe.New(database.New(pool), cfg.Secret, opts...)
	e := newProviderEcho(p)
	if cfg.Demo {
		p.RegisterDemo(e.Group("/provider/demo"))
	}
	return tracing.Server(e, cfg.Tracing.Provider, nil), p, nil
}

// ServeProvider serves a provider built by NewProvider on ln until ctx ends,
// then lets the calls in flight finish for up to grace.
func ServeProvider(ctx context.Context, h http.Handler, ln net.Listener, grace time.Duration) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: readHeaderTimeout}
	if err := serveUntil(ctx, srv, ln, grace); err != nil {
		return fmt.Errorf("provider server: %w", err)
	}
	return nil
}
