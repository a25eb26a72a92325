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
	"exactlyonce/internal/fakeprovider"
	"exactlyonce/internal/payment"
)

// paymentProvider returns the client the engine charges through and, when
// the provider runs in this process, the provider itself (nil otherwise).
func paymentProvider(d *database.DB, cfg Config) (*fakeprovider.Provider, *payment.Client) {
	if cfg.ProviderURL != "" {
		return nil, payment.NewClient(cfg.ProviderURL, cfg.ProviderSecret, cfg.ProviderTimeout)
	}
	// The provider and its client share a secret made fresh for each
	// process: nothing outside this process needs to know it.
	secret := randomSecret()
	provider := fakeprovider.New(d, secret, append([]fakeprovider.Option{fakeprovider.WithLogger(cfg.Log)}, cfg.ProviderOptions...)...)
	url := cfg.BaseURL + "/provider"
	if cfg.ProviderListener != nil {
		url = "http://" + cfg.ProviderListener.Addr().String() + "/provider"
	}
	return provider, payment.NewClient(url, secret, cfg.ProviderTimeout)
}

// newProviderEcho serves a provider's API under /provider and nothing else.
func newProviderEcho(p *fakeprovider.Provider) *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Use(middleware.Recover())
	p.Register(e.Group("/provider"))
	return e
}

// ProviderConfig is what NewProvider needs beyond the pool.
type ProviderConfig struct {
	// Secret is the bearer secret the shops send (PROVIDER_SECRET).
	Secret string
	// Demo mounts the fault control under /provider/demo.
	Demo bool
	Log  *slog.Logger
}

// NewProvider builds the fake payment provider as a process of its own, for
// `web provider`: its charges API under /provider, as the in-process
// provider serves it, and with Demo its fault control at
// /provider/demo/behaviour (see fakeprovider.RegisterDemo).
func NewProvider(pool *pgxpool.Pool, cfg ProviderConfig) (*echo.Echo, error) {
	if cfg.Secret == "" {
		return nil, errors.New("PROVIDER_SECRET is not set: the provider and the shops that call it need the same secret")
	}
	p := fakeprovider.New(database.New(pool), cfg.Secret, fakeprovider.WithLogger(cfg.Log))
	e := newProviderEcho(p)
	if cfg.Demo {
		p.RegisterDemo(e.Group("/provider/demo"))
	}
	return e, nil
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
