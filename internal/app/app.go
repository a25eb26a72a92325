// Package app assembles the shop from its parts: the database, the catalog,
// the fake payment provider and the client that calls it over HTTP, the
// checkout engine, and the HTTP handlers. cmd/web and the tests build the
// application through New, so the tests run exactly what production runs.
package app

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"

	"exactlyonce/internal/catalog"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/database"
	"exactlyonce/internal/fakeprovider"
	"exactlyonce/internal/handlers"
	"exactlyonce/internal/payment"
)

// Config is what New needs beyond the pool.
type Config struct {
	// BaseURL is where this server is reached over loopback, such as
	// http://127.0.0.1:8080. The payment client calls the fake provider,
	// served by this same server under /provider, through it.
	BaseURL         string
	LockTimeout     time.Duration
	ProviderTimeout time.Duration
	// Demo turns on the demo controls.
	Demo bool
	// Hooks are passed to the checkout engine; tests use them.
	Hooks checkout.Hooks
	Log   *slog.Logger
}

// App is the assembled application.
type App struct {
	Echo     *echo.Echo
	DB       *database.DB
	Checkout *checkout.Engine
	Provider *fakeprovider.Provider
}

// catalogMaxAge is how stale the in-memory catalog may get.
const catalogMaxAge = 5 * time.Second

// New builds the application on a migrated database.
func New(pool *pgxpool.Pool, cfg Config) *App {
	d := database.New(pool)
	cat := catalog.New(d.Queries, catalogMaxAge)

	// The provider and its client share a secret made fresh for each
	// process: nothing outside this process needs to know it.
	secret := randomSecret()
	provider := fakeprovider.New(d, secret, fakeprovider.WithLogger(cfg.Log))
	payments := payment.NewClient(cfg.BaseURL+"/provider", secret, cfg.ProviderTimeout)
	engine := checkout.New(d, cat, payments, checkout.Config{LockTimeout: cfg.LockTimeout, Hooks: cfg.Hooks})

	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	useMiddleware(e, cfg.Log)

	deps := handlers.Deps{DB: d, Catalog: cat, Checkout: engine, Log: cfg.Log}
	if cfg.Demo {
		deps.Provider = provider
	}
	handlers.New(deps).Register(e)
	provider.Register(e.Group("/provider"))

	return &App{Echo: e, DB: d, Checkout: engine, Provider: provider}
}

func randomSecret() string {
	b := make([]byte, 24)
	rand.Read(b)
	return "sk_test_" + hex.EncodeToString(b)
}
